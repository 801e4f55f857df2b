/* status.c: `collscope status`: who is not where the others are, read from
 * the per-process logs of a running, hung or dead job (status.h).
 *
 * Every log is mapped read-only and walked once: its communicators
 * (COMMDEF, COMMNAME), its clock (the latest CALIB), its call sites, its
 * last completed call and the calls still in flight (CS_REC_INFLIGHT: the
 * preload commits a call's slot as in flight when it starts, as a span
 * when it returns). Per communicator, the highest collective sequence
 * number each rank entered and completed. That fills the model of
 * failure.h (times in real nanoseconds, call sites as text, whether each
 * process of this host still runs), whose diagnosis (failure.c) is
 * printed: deadlock, mismatch, missing rank, dead rank, compute. A call
 * counts as stuck once in flight for the limit (--after, 5 s). */
#include "config.h"
#include "analyzer/status/status.h"
#include "analyzer/status/failure.h"
#include "analyzer/status/status_gpu.h"
#include "analyzer/status/status_hang.h"
#include "common/fmt.h"
#include "common/json.h"
#include "common/msg.h"
#include "common/vec.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ST_MAX_LOCAL 4096 /* communicators of one process */
#define ST_MAX_SITES 4096 /* call sites of one process kept */

typedef struct st_site {
    uint32_t id;
    uint64_t pc[CS_CALLSITE_FRAMES_PER_REC];
    int n;
} st_site;

/* What reading one log needs beyond the model. */
typedef struct st_log {
    char log[1024];
    cs_log_clock clock;
    uint64_t local_id[ST_MAX_LOCAL];
    st_site *site;
    size_t nsite, capSite;
} st_log;

static int64_t st_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t st_real(const st_log *r, uint64_t ticks)
{
    return cs_log_clock_real(&r->clock, ticks);
}

/* Call sites resolved so far: (module, offset) -> text. */
#define ST_MAX_KNOWN 256
typedef struct st_known {
    unsigned long long off;
    char mod[1100];
    char text[256];
} st_known;
static st_known st_sites_known[ST_MAX_KNOWN];
static int st_nsites_known;

/* "file:line (function)" of rank r's call site id, from its modules file
 * and addr2line; "" when unknown. */
static void st_site_text(const st_log *r, uint32_t id, char *buf, size_t len)
{
    buf[0] = '\0';
    const st_site *s = NULL;
    for (size_t i = 0; i < r->nsite && !s; i++)
        if (r->site[i].id == id)
            s = &r->site[i];
    if (!s || !s->n)
        return;
    char mpath[1200];
    snprintf(mpath, sizeof mpath, "%s", r->log);
    char *dot = strrchr(mpath, '.');
    if (dot && strcmp(dot, ".cslog") == 0)
        *dot = '\0';
    strncat(mpath, ".modules", sizeof mpath - strlen(mpath) - 1);
    for (int k = 0; k < s->n; k++) {
        FILE *f = fopen(mpath, "r");
        if (!f)
            return;
        char line[1400], mod[1100] = "";
        unsigned long long lo, hi, bias, off = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "%llx %llx %llx %1099[^\n]", &lo, &hi, &bias, mod) == 4 && s->pc[k] >= lo &&
                s->pc[k] < hi) {
                off = s->pc[k] - bias;
                break;
            } else {
                mod[0] = '\0';
            }
        fclose(f);
        if (!mod[0] || strstr(mod, "libmpi") || strstr(mod, "libcollscope") || strstr(mod, "libc.so"))
            continue;
        /* the ranks of a job share their call sites: each is resolved once */
        unsigned long long key = off ? off - 1 : off;
        for (int c = 0; c < st_nsites_known; c++)
            if (st_sites_known[c].off == key && strcmp(st_sites_known[c].mod, mod) == 0) {
                snprintf(buf, len, "%s", st_sites_known[c].text);
                return;
            }
        /* the return address points after the call: look up the byte before */
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "addr2line -f -s -e '%s' 0x%llx 2>/dev/null", mod, off ? off - 1 : off);
        if (strchr(mod, '\''))
            return;
        FILE *p = popen(cmd, "r");
        if (!p)
            return;
        char fn[256] = "", fl[256] = "";
        if (fgets(fn, sizeof fn, p) && fgets(fl, sizeof fl, p)) {
            fn[strcspn(fn, "\n")] = '\0';
            fl[strcspn(fl, "\n ")] = '\0';
            if (strncmp(fl, "??", 2) != 0)
                snprintf(buf, len, "%s (%s)", fl, fn);
            else if (strncmp(fn, "??", 2) != 0)
                snprintf(buf, len, "%s", fn);
        }
        pclose(p);
        if (st_nsites_known < ST_MAX_KNOWN) {
            st_known *k = &st_sites_known[st_nsites_known++];
            k->off = key;
            snprintf(k->mod, sizeof k->mod, "%s", mod);
            snprintf(k->text, sizeof k->text, "%s", buf);
        }
        return;
    }
}

/* A log's record as a call of the model (its site resolved later). */
static void st_call(const st_log *lg, const cs_rec *x, uint64_t comm, cs_failure_call *c)
{
    uint32_t fl = x->hdr >> 8;
    memset(c, 0, sizeof *c);
    c->op = x->op < CS_OP_COUNT ? x->op : 0;
    c->comm = comm;
    c->seq = (fl & CS_F_HAS_SEQ) ? (int64_t)x->seq : -1;
    c->peer = (fl & CS_F_HAS_PEER) ? x->peer : -1;
    c->tag = x->tag;
    c->tid = x->tid;
    c->bytes = x->bytes;
    c->t0 = st_real(lg, x->t0);
    c->t1 = st_real(lg, x->t1);
}

/* Read one log into a new rank of m; *last_real is raised to the latest
 * time the log recorded (a call's end, a call in flight's begin, the
 * watchdog's or a GPU operation's latest note, as the ingest takes it).
 * 0, or -1 with err (the log is then skipped by the caller with a note). */
static int st_read_log(cs_failure_model *m, const char *path, int64_t *last_real, char *err, size_t errlen)
{
    cs_logr *lr = cs_logr_open(path, err, errlen);
    if (!lr)
        return -1;
    const cs_log_header *h = cs_logr_header(lr);
    st_log *lg = calloc(1, sizeof *lg);
    cs_failure_rank *r = lg ? cs_failure_rank_add(m) : NULL;
    if (!r) {
        free(lg);
        cs_logr_close(lr);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->rank = h->rank;
    r->pid = h->pid;
    r->world = h->world_size;
    r->closed = h->state == CS_LOG_CLOSED;
    lg->clock.ticks_per_ns = h->ticks_per_ns;
    snprintf(r->host, sizeof r->host, "%.*s", (int)strnlen(h->host, sizeof h->host), h->host);
    snprintf(lg->log, sizeof lg->log, "%s", path);
    int64_t toff = h->test_offset_ns;
    cs_rec fly, last;
    uint64_t fly_comm = 0, last_comm = 0, last_tick = 0;
    const cs_rec *x;
    while ((x = cs_logr_next(lr)) != NULL) {
        uint32_t kind = CS_REC_KIND(x->hdr);
        if (kind == CS_REC_SPAN && x->t1 > last_tick)
            last_tick = x->t1;
        else if (kind == CS_REC_INFLIGHT && x->t0 > last_tick)
            last_tick = x->t0;
        else if (kind == CS_REC_HANG && ((const cs_rec_hang *)x)->detected > last_tick)
            last_tick = ((const cs_rec_hang *)x)->detected;
        else if (kind == CS_REC_GPUPEND && ((const cs_rec_gpupend *)x)->at > last_tick)
            last_tick = ((const cs_rec_gpupend *)x)->at;
        if (kind == CS_REC_CALIB) {
            cs_log_clock_note(&lg->clock, (const cs_rec_calib *)x, toff);
        } else if (kind == CS_REC_COMMDEF) {
            const cs_rec_comm *c = (const cs_rec_comm *)x;
            if (c->local < ST_MAX_LOCAL)
                lg->local_id[c->local] = c->id;
            cs_failure_comm_def(m, c->id, (int)c->size, c->how, c->rank, c->world_rank >= 0 ? c->world_rank : h->rank);
        } else if (kind == CS_REC_COMMNAME) {
            const cs_rec_commname *c = (const cs_rec_commname *)x;
            if (c->part == 0)
                cs_failure_comm_named(m, c->id, c->text, sizeof c->text);
        } else if (kind == CS_REC_CALLSITE) {
            const cs_rec_callsite *c = (const cs_rec_callsite *)x;
            if (c->part == 0 && lg->nsite < ST_MAX_SITES && CS_VEC_RESERVE(lg->site, lg->capSite, lg->nsite + 1) == 0) {
                st_site *s = &lg->site[lg->nsite++];
                s->id = c->id;
                s->n = c->nhere < CS_CALLSITE_FRAMES_PER_REC ? (int)c->nhere : CS_CALLSITE_FRAMES_PER_REC;
                memcpy(s->pc, c->pc, sizeof s->pc);
            }
        } else if (kind == CS_REC_SPAN || kind == CS_REC_INFLIGHT) {
            int isfly = kind == CS_REC_INFLIGHT;
            uint64_t comm = (x->hdr >> 8) & CS_F_HAS_COMM && x->comm < ST_MAX_LOCAL ? lg->local_id[x->comm] : 0;
            if (x->op > 0 && x->op < CS_OP_COUNT && cs_ops[x->op].kind == CS_KIND_FINALIZE)
                r->finalized = 1;
            if (comm && ((x->hdr >> 8) & CS_F_HAS_SEQ) && x->op > 0 && x->op < CS_OP_COUNT &&
                (cs_ops[x->op].kind == CS_KIND_COLL || cs_ops[x->op].kind == CS_KIND_ROOTED)) {
                cs_failure_seq *q = cs_failure_seq_get(r, comm);
                if (q) {
                    if ((int64_t)x->seq > q->entered)
                        q->entered = x->seq;
                    if (!isfly && (int64_t)x->seq > q->completed)
                        q->completed = x->seq;
                }
            }
            if (isfly) {
                /* the main thread's (the lowest thread index) call */
                if (!r->has_fly || x->tid < fly.tid) {
                    fly = *x;
                    fly_comm = comm;
                    r->has_fly = 1;
                }
            } else if (!r->has_last || x->t1 >= last.t1) {
                last = *x;
                last_comm = comm;
                r->has_last = 1;
            }
        }
    }
    cs_logr_close(lr);
    if (last_tick && st_real(lg, last_tick) > *last_real)
        *last_real = st_real(lg, last_tick);
    if (r->has_fly) {
        st_call(lg, &fly, fly_comm, &r->fly);
        st_site_text(lg, fly.callsite, r->fly.site, sizeof r->fly.site);
    }
    if (r->has_last) {
        st_call(lg, &last, last_comm, &r->last);
        /* where a rank is in a call, its last call's site goes unprinted */
        if (!r->has_fly)
            st_site_text(lg, last.callsite, r->last.site, sizeof r->last.site);
    }
    /* where the watchdog's stack sample found a rank outside any traced
     * call (status_hang.c) */
    cs_status_hang hs;
    if (!r->has_fly && cs_status_hang_read(path, &hs) && hs.reason == CS_HANG_IDLE && hs.where[0])
        snprintf(r->sampled, sizeof r->sampled, "%s", hs.where);
    /* alive: a process of this host that still exists */
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    if (strcmp(me, r->host) == 0)
        r->alive = cs_failure_pid_alive(r->pid);
    else
        r->alive = -1;
    free(lg->site);
    free(lg);
    return 0;
}

int cs_status_run(const char *dir, const cs_status_opts *opt, FILE *f, char *err, size_t errlen)
{
    cs_failure_model j;
    memset(&j, 0, sizeof j);
    char logs[1200];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    DIR *d = opendir(logs);
    if (!d) {
        snprintf(err, errlen, "%s: no logs folder (%s): not the output folder of collscope run", dir, strerror(errno));
        return 1;
    }
    struct dirent *e;
    int bad = 0;
    int64_t last_real = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".cslog") != 0)
            continue;
        char path[2400], why[512];
        snprintf(path, sizeof path, "%s/%s", logs, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue; /* never a link, a FIFO or a folder */
        if (st_read_log(&j, path, &last_real, why, sizeof why) != 0) {
            cs_note("status: %s: %s (left out)", path, why);
            bad++;
        }
    }
    closedir(d);
    if (j.n == 0) {
        snprintf(err, errlen, "%s: no readable process log%s", logs, bad ? "s" : " (has the job started?)");
        cs_failure_model_free(&j);
        return 1;
    }
    cs_failure_sort(&j);
    j.now = st_now_real();
    /* A job whose processes are all gone (of this host, none of them
     * running) ended at its last record: its calls in flight and its waits
     * end there too, as in the trace the ingest makes of it, and do not
     * grow with every later look. */
    int gone = 1;
    for (size_t i = 0; i < j.n; i++)
        gone &= j.r[i].alive == 0;
    if (gone && last_real > 0 && last_real < j.now)
        j.now = last_real;
    else
        gone = 0;
    /* post mortem, as the report of its trace: every call that never
     * returned is stuck (its process ended in it) */
    double after_s = gone ? CS_FAILURE_POST_AFTER_S : opt->after_s;
    cs_failure_list o = { 0 };
    cs_failure_diagnose(&j, after_s, &o);
    /* ---- NCCL: collectives whose GPU work is in flight (status_gpu.c) ---- */
    cs_status_gpu gpu;
    if (cs_status_gpu_read(dir, after_s, j.now, &gpu) < 0)
        cs_note("status: %s: out of memory reading the GPU work in flight", dir);
    for (int i = 0; i < gpu.ndiag; i++)
        cs_failure_add(&o, "nccl_stall", "%s", gpu.diag[i]);
    /* ---- end NCCL ---- */
    int world = j.r[0].world, finished = 1, running = 0;
    for (size_t i = 0; i < j.n; i++) {
        finished &= j.r[i].closed && j.r[i].finalized;
        running += !j.r[i].closed && j.r[i].alive != 0;
    }
    if (world > 0 && (int)j.n < world && running)
        cs_failure_add(&o, "missing_log",
                       "%d of %d ranks have a log (the others never started tracing, or their logs are "
                       "on another file system)",
                       (int)j.n, world);
    const char *verdict = o.n ? "hang or failure" : finished ? "finished" : "healthy";
    if (opt->json) {
        fprintf(f, "{\"dir\": ");
        cs_json_str(f, dir);
        fprintf(f, ", \"state\": ");
        cs_json_str(f, verdict);
        fprintf(f, ", \"after_s\": %g, \"processes_gone\": %s, \"ended_s_ago\": ", after_s, gone ? "true" : "false");
        if (gone)
            fprintf(f, "%.3f", (double)(st_now_real() - j.now) / 1e9);
        else
            fprintf(f, "null");
        fprintf(f, ", \"ranks\": [");
        for (size_t i = 0; i < j.n; i++) {
            char b[700];
            cs_failure_doing(&j, &j.r[i], b, sizeof b);
            const cs_failure_rank *r = &j.r[i];
            int coll = r->has_fly && r->fly.op > 0 && r->fly.op < CS_OP_COUNT &&
                       (cs_ops[r->fly.op].kind == CS_KIND_COLL || cs_ops[r->fly.op].kind == CS_KIND_ROOTED);
            fprintf(f, "%s\n  {\"rank\": %d, \"pid\": %d, \"host\": ", i ? "," : "", r->rank, r->pid);
            cs_json_str(f, r->host);
            fprintf(f, ", \"in_call\": %s, \"op\": ", r->has_fly ? "true" : "false");
            cs_json_str(f, r->has_fly && r->fly.op > 0 && r->fly.op < CS_OP_COUNT ? cs_ops[r->fly.op].name : "");
            fprintf(f, ", \"seq\": %lld, \"since_s\": %.3f, \"doing\": ", coll ? (long long)r->fly.seq : -1LL,
                    r->has_fly    ? (double)(j.now - r->fly.t0) / 1e9
                    : r->has_last ? (double)(j.now - r->last.t1) / 1e9
                                  : -1.0);
            cs_json_str(f, b);
            fprintf(f, "}");
        }
        fprintf(f, "],\n \"gpu_in_flight\": ["); /* NCCL (status_gpu.c) */
        for (int i = 0; i < gpu.nline; i++) {
            fprintf(f, "%s", i ? ", " : "");
            cs_json_str(f, gpu.line[i]);
        }
        fprintf(f, "],\n \"diagnosis\": [");
        for (size_t i = 0; i < o.n; i++) {
            fprintf(f, "%s\n  {\"kind\": ", i ? "," : "");
            cs_json_str(f, o.v[i].kind);
            fprintf(f, ", \"text\": ");
            cs_json_str(f, o.v[i].text);
            fprintf(f, "}");
        }
        fprintf(f, "],\n \"failures\": ");
        cs_failure_json(f, &o);
        fprintf(f, "}\n");
    } else {
        cs_msg_line(f, "collscope status %s: %zu process log(s)%s, %s", dir, j.n,
                    world > 0 ? "" : " (world size unknown)", verdict);
        if (gone) {
            char when[64] = "?";
            time_t t = (time_t)(j.now / 1000000000);
            struct tm tm;
            if (gmtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
            fprintf(f,
                    "  its processes are gone: the job ended at its last record, %s (%.1f s ago); the times "
                    "below end there\n",
                    when, (double)(st_now_real() - j.now) / 1e9);
        }
        cs_failure_print_ranks(&j, f);
        for (int i = 0; i < gpu.nline; i++) /* NCCL (status_gpu.c) */
            fprintf(f, "  %s\n", gpu.line[i]);
        for (size_t i = 0; i < o.n; i++)
            fprintf(f, "%s: %s\n", o.v[i].kind, o.v[i].text);
        /* per communicator: the highest seq each rank entered and completed */
        if (opt->verbose) {
            for (size_t c = 0; c < j.nc; c++) {
                char cn[96];
                fprintf(f, "  %s:", cs_failure_comm_name(&j, j.c[c].id, cn, sizeof cn));
                for (int q = 0; q < j.c[c].size; q++) {
                    const cs_failure_rank *mr = NULL;
                    for (size_t z = 0; z < j.n; z++)
                        if (j.r[z].rank == j.c[c].world[q])
                            mr = &j.r[z];
                    int64_t ent = -1, dn = -1;
                    for (size_t z = 0; mr && z < mr->nseq; z++)
                        if (mr->seq[z].comm == j.c[c].id)
                            ent = mr->seq[z].entered, dn = mr->seq[z].completed;
                    fprintf(f, " %d:%lld/%lld", j.c[c].world[q], (long long)ent, (long long)dn);
                }
                fprintf(f, " (rank:entered/completed)\n");
            }
        }
    }
    int rc = o.n ? 3 : 0;
    cs_status_gpu_free(&gpu);
    cs_failure_list_free(&o);
    cs_failure_model_free(&j);
    return rc;
}
