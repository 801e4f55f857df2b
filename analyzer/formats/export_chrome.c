/* export_chrome.c: the trace as Chrome trace-event JSON (the "Trace Event
 * Format" that ui.perfetto.dev and chrome://tracing load; docs/interop.md).
 *
 * A process per rank (pid = the rank), a track per traced thread (tid = the
 * thread's id) and one per GPU stream; every span one complete event ("X")
 * with its op, communicator, seq, bytes, peer, call site and flags in args;
 * flow arrows ("s"/"f", bound to the enclosing slices) from each send to
 * the receive the analysis matched it with, and from the last rank to
 * enter each collective instance to every other member; the stored
 * analysis on a process of its own (steps, one track per straggler
 * verdict, each rank's cumulative imposed wait as a counter) and each
 * rank's own wait in each collective as a counter on its process.
 *
 * Times are on the aligned time line, in microseconds with three decimals
 * (exact nanoseconds), relative to the earliest aligned process start
 * (otherData.origin_ns), so that a reader's doubles keep the nanoseconds.
 * The spans come from the export pass (export_io.h) in the store's order,
 * each with the flow ends and the wait that belong to it; the steps and
 * verdicts from queries of their own. */
#include "config.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/formats/export.h"
#include "analyzer/formats/export_io.h"
#include "common/json.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/span.h"
#include "libtrace/store_sql.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The analysis process sits above the ranks (ranks are below this). */
#define CS_CHROME_ANALYSIS_PID 1000000000
/* Track ids of GPU streams within a rank's process, and of the analysis. */
#define CS_CHROME_STREAM_TID 2000000000
#define CS_CHROME_STEPS_TID 1
#define CS_CHROME_VERDICT_TID 100

typedef struct cs_chrome {
    cs_export_out *f;
    cs_store *st;
    int64_t origin;
    int64_t events;
    cs_export_stats *stats;
    cs_op_row *ops;
    int nops;
    char **op_name, **op_kind; /* per op id: as JSON strings, escaped once */
    cs_comms comms;
    cs_map comm_idx; /* communicator -> index in strs: its name as a JSON string */
    cs_map site_idx; /* (rank, call site) -> index in strs: its label as a JSON string */
    char **strs;
    size_t nstrs, capStrs;
    int nverdicts;
    int analysed; /* the stored analysis is current: its waits are written */
    cs_map tids;  /* (rank, thread) named so far */
    struct cs_chrome_rank *ranks;
    size_t nranks;
    int imposed_rank; /* the rank whose imposed wait is being summed */
    int64_t imposed_sum;
} cs_chrome;

/* A rare line of output through printf (headers, the analysis). */
static void chrome_printf(cs_export_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void chrome_printf(cs_export_out *o, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        cs_export_out_put(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* key (with its quotes, comma and colon) and an integer. */
static void chrome_kv(cs_export_out *o, const char *key, int64_t v)
{
    cs_export_out_puts(o, key);
    cs_export_out_i64(o, v);
}

static void chrome_ev(cs_chrome *c)
{
    cs_export_out_puts(c->f, c->events ? ",\n" : "\n");
    c->events++;
}

/* s as a JSON string (quotes and escapes: common/json.h), malloc'ed; NULL
 * when out of memory. The names of ops, communicators and call sites are
 * escaped once, not once a span. */
static char *chrome_escape(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    cs_json_str(m, s);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Keep an escaped string; its index, or -1 when out of memory. */
static int64_t chrome_keep(cs_chrome *c, const char *s)
{
    char *e = chrome_escape(s);
    if (!e || CS_VEC_RESERVE(c->strs, c->capStrs, c->nstrs + 1) != 0) {
        free(e);
        return -1;
    }
    c->strs[c->nstrs] = e;
    return (int64_t)c->nstrs++;
}

static uint64_t chrome_site_key(int rank, int64_t site)
{
    return ((uint64_t)(uint32_t)rank << 40) ^ ((uint64_t)site & 0xffffffffffull);
}

static int chrome_site_cb(int rank, int64_t id, const char *label, void *arg)
{
    cs_chrome *c = arg;
    if (!label)
        return 0;
    int64_t i = chrome_keep(c, label);
    return i < 0 || cs_map_put(&c->site_idx, chrome_site_key(rank, id), i) != 0 ? -1 : 0;
}

static const char *chrome_site(const cs_chrome *c, int rank, int64_t site)
{
    int64_t i;
    if (site == 0 || !cs_map_get(&c->site_idx, chrome_site_key(rank, site), &i))
        return NULL;
    return c->strs[i];
}

/* The communicator's display name as a JSON string (cached); NULL when
 * out of memory. */
static const char *chrome_comm(cs_chrome *c, int64_t comm)
{
    int64_t i;
    if (!cs_map_get(&c->comm_idx, (uint64_t)comm, &i)) {
        char buf[CS_COMMS_DISPLAY_MAX];
        if ((i = chrome_keep(c, cs_store_comms_name(&c->comms, comm, buf, sizeof buf))) < 0 ||
            cs_map_put(&c->comm_idx, (uint64_t)comm, i) != 0)
            return NULL;
    }
    return c->strs[i];
}

/* The op's name and kind as JSON strings. */
static const char *chrome_op_str(const cs_chrome *c, int op, int kind)
{
    if (op >= 0 && op < c->nops && c->ops[op].name[0])
        return kind ? c->op_kind[op] : c->op_name[op];
    return "\"unknown\"";
}

static const cs_op_row *chrome_op(const cs_chrome *c, int op)
{
    return op >= 0 && op < c->nops && c->ops[op].name[0] ? &c->ops[op] : NULL;
}

/* A metadata event: name (process_name, thread_name, process_sort_index...)
 * with either a string or an integer argument. */
static void chrome_meta(cs_chrome *c, const char *name, int pid, int64_t tid, const char *key, const char *s, int64_t v)
{
    chrome_ev(c);
    chrome_printf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%" PRId64 ",\"args\":{\"%s\":", name, pid,
                  tid, key);
    if (s)
        cs_export_out_json_str(c->f, s);
    else
        chrome_printf(c->f, "%" PRId64, v);
    cs_export_out_puts(c->f, "}}");
}

/* The head of a complete event, its name and category already JSON strings. */
static void chrome_x_head_json(cs_chrome *c, const char *name, const char *cat, int pid, int64_t tid, int64_t b,
                               int64_t e)
{
    chrome_ev(c);
    cs_export_out_puts(c->f, "{\"ph\":\"X\",\"name\":");
    cs_export_out_puts(c->f, name);
    cs_export_out_puts(c->f, ",\"cat\":");
    cs_export_out_puts(c->f, cat);
    chrome_kv(c->f, ",\"pid\":", pid);
    chrome_kv(c->f, ",\"tid\":", tid);
    cs_export_out_puts(c->f, ",\"ts\":");
    cs_export_out_us(c->f, b - c->origin);
    cs_export_out_puts(c->f, ",\"dur\":");
    cs_export_out_us(c->f, e > b ? e - b : 0);
}

static void chrome_x_head(cs_chrome *c, const char *name, const char *cat, int pid, int64_t tid, int64_t b, int64_t e)
{
    char *n = chrome_escape(name), *k = chrome_escape(cat);
    chrome_x_head_json(c, n ? n : "\"\"", k ? k : "\"\"", pid, tid, b, e);
    free(n);
    free(k);
}

/* The args every span event carries (without the braces). */
static int chrome_span_args(cs_chrome *c, const cs_span *sp, const cs_op_row *op)
{
    cs_export_out *f = c->f;
    cs_export_out_puts(f, "\"op\":");
    cs_export_out_puts(f, chrome_op_str(c, sp->op, 0));
    chrome_kv(f, ",\"span\":", sp->id);
    if (sp->comm != 0) {
        const char *name = chrome_comm(c, sp->comm);
        if (!name)
            return -1;
        cs_export_out_puts(f, ",\"comm\":");
        cs_export_out_puts(f, name);
    }
    if (sp->seq >= 0 && (sp->flags & CS_F_HAS_SEQ))
        chrome_kv(f, ",\"seq\":", sp->seq);
    if (sp->bytes > 0)
        chrome_kv(f, ",\"bytes\":", sp->bytes);
    if (sp->peer >= 0 && (sp->flags & CS_F_HAS_PEER))
        chrome_kv(f, ",\"peer\":", sp->peer);
    if (sp->peer2 >= 0)
        chrome_kv(f, ",\"peer2\":", sp->peer2);
    if (sp->tag >= 0)
        chrome_kv(f, ",\"tag\":", sp->tag);
    const char *site = chrome_site(c, sp->rank, sp->callsite);
    if (site) {
        cs_export_out_puts(f, ",\"callsite\":");
        cs_export_out_puts(f, site);
    }
    if ((sp->flags & CS_F_NONBLOCKING) || (op && op->nonblocking))
        cs_export_out_puts(f, ",\"nonblocking\":true");
    if (sp->flags & CS_F_ERROR)
        chrome_printf(f, ",\"failed\":true,\"rc\":%d", sp->rc);
    if (sp->flags & CS_F_FUSED)
        cs_export_out_puts(f, ",\"fused\":true");
    if (sp->flags & CS_F_FUSE_MEMBER)
        cs_export_out_puts(f, ",\"fuse_member\":true");
    return 0;
}

/* ---- the spans and their flows ---- */

/* One end of a flow, bound to the slice that encloses its time. */
static void chrome_flow_end(cs_chrome *c, const char *ph, const char *cat, uint64_t id, int pid, int64_t tid,
                            int64_t ts)
{
    chrome_ev(c);
    cs_export_out_puts(c->f, ph[0] == 's' ? "{\"ph\":\"s\",\"name\":\"" : "{\"ph\":\"f\",\"name\":\"");
    cs_export_out_puts(c->f, cat);
    cs_export_out_puts(c->f, "\",\"cat\":\"");
    cs_export_out_puts(c->f, cat);
    cs_export_out_c(c->f, '"');
    chrome_kv(c->f, ",\"id\":", (int64_t)id);
    chrome_kv(c->f, ",\"pid\":", pid);
    chrome_kv(c->f, ",\"tid\":", tid);
    cs_export_out_c(c->f, ',');
    if (ph[0] == 'f')
        cs_export_out_puts(c->f, "\"bp\":\"e\",");
    cs_export_out_puts(c->f, "\"ts\":");
    cs_export_out_us(c->f, ts - c->origin);
    cs_export_out_c(c->f, '}');
}

/* Within a slice whatever its length: the middle of [b, e]. */
static int64_t chrome_mid(int64_t b, int64_t e)
{
    return e > b ? b + (e - b) / 2 : b;
}

/* A counter sample: one series `key` of counter `name` on a process. */
static void chrome_counter(cs_chrome *c, int pid, const char *name, int64_t ts, const char *key, int64_t ns)
{
    chrome_ev(c);
    cs_export_out_puts(c->f, "{\"ph\":\"C\",\"name\":");
    cs_export_out_json_str(c->f, name);
    chrome_kv(c->f, ",\"pid\":", pid);
    cs_export_out_puts(c->f, ",\"tid\":0,\"ts\":");
    cs_export_out_us(c->f, ts - c->origin);
    cs_export_out_puts(c->f, ",\"args\":{");
    cs_export_out_json_str(c->f, key);
    cs_export_out_c(c->f, ':');
    cs_export_out_us(c->f, ns);
    cs_export_out_puts(c->f, "}}");
    c->stats->analysis++;
}

/* The GPU streams of a rank met so far. */
typedef struct cs_chrome_rank {
    cs_map streams; /* stream -> its track's index */
    int64_t nstreams;
} cs_chrome_rank;

/* The state of rank r; NULL when out of memory. */
static cs_chrome_rank *chrome_rank(cs_chrome *c, int r)
{
    if (r < 0)
        r = 0;
    if ((size_t)r >= c->nranks) {
        size_t n = (size_t)r + 1;
        cs_chrome_rank *a = realloc(c->ranks, n * sizeof *a);
        if (!a)
            return NULL;
        memset(a + c->nranks, 0, (n - c->nranks) * sizeof *a);
        c->ranks = a;
        c->nranks = n;
    }
    return &c->ranks[r];
}

/* A span, its GPU times, the flow ends in it and its wait. */
static int chrome_span_cb(const cs_span *sp, const cs_export_links *ln, void *arg)
{
    cs_chrome *c = arg;
    int64_t seen;
    uint64_t tkey = (uint64_t)(uint32_t)sp->rank << 32 | (uint32_t)sp->tid;
    if (!cs_map_get(&c->tids, tkey, &seen)) {
        char name[64];
        snprintf(name, sizeof name, "thread %d", sp->tid);
        chrome_meta(c, "thread_name", sp->rank, sp->tid, "name", name, 0);
        if (cs_map_put(&c->tids, tkey, 1) != 0)
            return -1;
    }
    const cs_op_row *op = chrome_op(c, sp->op);
    chrome_x_head_json(c, chrome_op_str(c, sp->op, 0), chrome_op_str(c, sp->op, 1), sp->rank, sp->tid, sp->begin_ns,
                       sp->end_ns);
    cs_export_out_puts(c->f, ",\"args\":{");
    if (chrome_span_args(c, sp, op) != 0)
        return -1;
    cs_export_out_puts(c->f, "}}");
    c->stats->spans++;
    if (sp->gpu_begin_ns != 0 && sp->gpu_end_ns != 0) {
        cs_chrome_rank *r = chrome_rank(c, sp->rank);
        int64_t stream = sp->stream < 0 ? 0 : sp->stream, idx;
        if (!r)
            return -1;
        if (!cs_map_get(&r->streams, (uint64_t)stream, &idx)) {
            idx = r->nstreams++;
            if (cs_map_put(&r->streams, (uint64_t)stream, idx) != 0)
                return -1;
            char name[64];
            if (stream == 0)
                snprintf(name, sizeof name, "GPU default stream");
            else
                snprintf(name, sizeof name, "GPU stream 0x%" PRIx64, (uint64_t)stream);
            chrome_meta(c, "thread_name", sp->rank, CS_CHROME_STREAM_TID + idx, "name", name, 0);
            chrome_meta(c, "thread_sort_index", sp->rank, CS_CHROME_STREAM_TID + idx, "sort_index", NULL, 1000 + idx);
        }
        chrome_x_head_json(c, chrome_op_str(c, sp->op, 0), "\"gpu\"", sp->rank, CS_CHROME_STREAM_TID + idx,
                           sp->gpu_begin_ns, sp->gpu_end_ns);
        cs_export_out_puts(c->f, ",\"args\":{");
        chrome_span_args(c, sp, op);
        cs_export_out_puts(c->f, ",\"gpu\":true}}");
    }
    int64_t mid = chrome_mid(sp->begin_ns, sp->end_ns);
    if (ln->p2p_out) {
        chrome_flow_end(c, "s", "p2p", ln->p2p_out, sp->rank, sp->tid, mid);
        c->stats->flows++;
    }
    if (ln->p2p_in)
        chrome_flow_end(c, "f", "p2p", ln->p2p_in, sp->rank, sp->tid, mid);
    /* A collective instance: an arrow from the last rank to enter it to
     * every other member. */
    if (ln->coll && ln->coll_last)
        for (size_t i = 0; i < ln->npeers; i++) {
            chrome_flow_end(c, "s", "collective", CS_EXPORT_COLL_FLOW(ln->coll_inst, ln->peers[i]), sp->rank, sp->tid,
                            mid);
            c->stats->flows++;
        }
    else if (ln->coll)
        chrome_flow_end(c, "f", "collective", CS_EXPORT_COLL_FLOW(ln->coll_inst, sp->rank), sp->rank, sp->tid, mid);
    /* Its wait in its collective as a counter on its process: the wait from
     * its entry, 0 when the last one came. */
    if (ln->wait_ns > 0 && c->analysed) {
        chrome_counter(c, sp->rank, "wait for the last rank (us)", sp->begin_ns, "wait_us", ln->wait_ns);
        chrome_counter(c, sp->rank, "wait for the last rank (us)", sp->begin_ns + ln->wait_ns, "wait_us", 0);
    }
    return 0;
}

/* Each rank's cumulative imposed wait (the others' waits in the instances
 * it entered last) as a counter on the analysis process. */
static int chrome_imposed_cb(int rank, int64_t t, int64_t w, void *arg)
{
    cs_chrome *c = arg;
    if (!c->analysed)
        return 0;
    if (rank != c->imposed_rank) {
        c->imposed_rank = rank;
        c->imposed_sum = 0;
    }
    c->imposed_sum += w;
    char name[64], key[32];
    snprintf(name, sizeof name, "imposed wait, rank %d (us, cumulative)", rank);
    snprintf(key, sizeof key, "rank %d", rank);
    chrome_counter(c, CS_CHROME_ANALYSIS_PID, name, t, key, c->imposed_sum);
    return 0;
}

/* ---- the analysis ---- */

static int chrome_step_cb(const cs_step_row *x, void *arg)
{
    cs_chrome *c = arg;
    char name[64];
    snprintf(name, sizeof name, "step %" PRId64, x->step);
    chrome_x_head(c, name, "step", CS_CHROME_ANALYSIS_PID, CS_CHROME_STEPS_TID, x->begin_ns, x->end_ns);
    chrome_printf(c->f, ",\"args\":{\"step\":%" PRId64 ",\"time_us\":", x->step);
    cs_export_out_us(c->f, x->time_ns);
    if (x->slowest_rank >= 0) {
        chrome_printf(c->f, ",\"slowest_rank\":%d,\"whatif_us\":", x->slowest_rank);
        cs_export_out_us(c->f, x->whatif_ns);
    }
    cs_export_out_puts(c->f, "}}");
    c->stats->analysis++;
    return 0;
}

static int chrome_verdict_cb(const cs_straggler *x, void *arg)
{
    cs_chrome *c = arg;
    char name[160], track[200], buf[CS_COMMS_DISPLAY_MAX];
    int64_t tid = CS_CHROME_VERDICT_TID + c->nverdicts++;
    if (x->src >= 0 && x->dst >= 0)
        snprintf(name, sizeof name, "%s: rank %d -> rank %d", x->kind, x->src, x->dst);
    else if (x->rank >= 0)
        snprintf(name, sizeof name, "%s straggler: rank %d", x->kind, x->rank);
    else if (x->comm != 0)
        snprintf(name, sizeof name, "%s: %s", x->kind, cs_store_comms_name(&c->comms, x->comm, buf, sizeof buf));
    else
        snprintf(name, sizeof name, "%s", x->kind);
    snprintf(track, sizeof track, "verdict %d: %s", c->nverdicts, name);
    chrome_meta(c, "thread_name", CS_CHROME_ANALYSIS_PID, tid, "name", track, 0);
    chrome_meta(c, "thread_sort_index", CS_CHROME_ANALYSIS_PID, tid, "sort_index", NULL, tid);
    chrome_x_head(c, name, "verdict", CS_CHROME_ANALYSIS_PID, tid, x->begin_ns, x->end_ns);
    cs_export_out_puts(c->f, ",\"args\":{\"kind\":");
    cs_export_out_json_str(c->f, x->kind);
    if (x->rank >= 0)
        chrome_printf(c->f, ",\"rank\":%d", x->rank);
    if (x->src >= 0 && x->dst >= 0)
        chrome_printf(c->f, ",\"src\":%d,\"dst\":%d", x->src, x->dst);
    if (x->comm != 0) {
        cs_export_out_puts(c->f, ",\"comm\":");
        cs_export_out_json_str(c->f, cs_store_comms_name(&c->comms, x->comm, buf, sizeof buf));
    }
    chrome_printf(c->f, ",\"first_step\":%" PRId64 ",\"last_step\":%" PRId64 ",\"lateness_us\":", x->first_step,
                  x->last_step);
    cs_export_out_us(c->f, x->lateness_ns);
    cs_export_out_puts(c->f, ",\"cost_us\":");
    cs_export_out_us(c->f, x->cost_ns);
    cs_export_out_puts(c->f, ",\"evidence\":");
    cs_export_out_json_str(c->f, x->evidence);
    cs_export_out_puts(c->f, "}}");
    c->stats->analysis++;
    return 0;
}

static int chrome_analysis(cs_chrome *c, char *err, size_t errlen)
{
    if (cs_store_analysis_exists(c->st) != 1)
        return 0;
    chrome_meta(c, "process_name", CS_CHROME_ANALYSIS_PID, 0, "name", "analysis", 0);
    chrome_meta(c, "process_sort_index", CS_CHROME_ANALYSIS_PID, 0, "sort_index", NULL, -1);
    chrome_meta(c, "thread_name", CS_CHROME_ANALYSIS_PID, CS_CHROME_STEPS_TID, "name", "steps", 0);
    chrome_meta(c, "thread_sort_index", CS_CHROME_ANALYSIS_PID, CS_CHROME_STEPS_TID, "sort_index", NULL, 0);
    c->analysed = 1;
    if (cs_store_steps_list(c->st, chrome_step_cb, c) < 0 || cs_store_stragglers(c->st, chrome_verdict_cb, c) < 0)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the stored analysis (damaged?)", cs_store_path(c->st));
    return 0;
}

/* ---- the file ---- */

int cs_export_chrome(FILE *file, cs_store *st, cs_export_stats *stats, char *err, size_t errlen)
{
    cs_export_out out;
    cs_chrome c = { .f = &out, .st = st, .stats = stats };
    cs_export_out *f = &out;
    cs_proc *procs = NULL;
    int nproc = 0, rc = -1;
    memset(stats, 0, sizeof *stats);
    if (cs_export_out_init(&out, file) != 0) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        return -1;
    }
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &c.ops, &c.nops) != 0 ||
        cs_store_comms_load(st, &c.comms) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the processes, ops or communicators (damaged?)",
                          cs_store_path(st));
        goto out;
    }
    if (c.nops > 0 && (!(c.op_name = calloc((size_t)c.nops, sizeof *c.op_name)) ||
                       !(c.op_kind = calloc((size_t)c.nops, sizeof *c.op_kind)))) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    for (int i = 0; i < c.nops; i++)
        if (c.ops[i].name[0] && (!(c.op_name[i] = chrome_escape(c.ops[i].name)) ||
                                 !(c.op_kind[i] = chrome_escape(c.ops[i].kind[0] ? c.ops[i].kind : "unknown")))) {
            cs_store_sql_fail(err, errlen, "export: out of memory");
            goto out;
        }
    if (cs_store_callsite_labels(st, chrome_site_cb, &c) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the call sites (damaged?)", cs_store_path(st));
        goto out;
    }
    for (int i = 0; i < nproc; i++) {
        int64_t t = procs[i].start_ns + procs[i].clock_offset_ns;
        if (i == 0 || t < c.origin)
            c.origin = t;
    }
    cs_export_out_puts(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"collscope " PACKAGE_VERSION
                          "\",\"trace\":");
    cs_export_out_json_str(f, cs_store_path(st));
    chrome_printf(f, ",\"origin_ns\":%" PRId64 ",\"time\":\"aligned, microseconds from origin_ns\"},\"traceEvents\":[",
                  c.origin);
    for (int i = 0; i < nproc; i++) {
        if (i > 0 && procs[i].rank == procs[i - 1].rank)
            continue;
        char name[128];
        snprintf(name, sizeof name, "rank %d (%s)", procs[i].rank, procs[i].host[0] ? procs[i].host : "unknown host");
        chrome_meta(&c, "process_name", procs[i].rank, 0, "name", name, 0);
        chrome_meta(&c, "process_sort_index", procs[i].rank, 0, "sort_index", NULL, procs[i].rank);
    }
    c.imposed_rank = -1;
    if (chrome_analysis(&c, err, errlen) != 0 ||
        cs_export_pass(st, chrome_span_cb, chrome_imposed_cb, &c, err, errlen) != 0)
        goto out;
    cs_export_out_puts(f, "\n]}\n");
    rc = 0;
out:
    /* A write error is the caller's to find, through ferror. */
    if (cs_export_out_done(&out) != 0 && rc == 0 && !ferror(file)) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        rc = -1;
    }
    stats->events = c.events;
    free(procs);
    free(c.ops);
    cs_store_comms_free(&c.comms);
    for (int i = 0; c.op_name && i < c.nops; i++)
        free(c.op_name[i]);
    for (int i = 0; c.op_kind && i < c.nops; i++)
        free(c.op_kind[i]);
    free(c.op_name);
    free(c.op_kind);
    for (size_t i = 0; i < c.nstrs; i++)
        free(c.strs[i]);
    free(c.strs);
    cs_map_free(&c.site_idx);
    cs_map_free(&c.comm_idx);
    cs_map_free(&c.tids);
    for (size_t i = 0; i < c.nranks; i++)
        cs_map_free(&c.ranks[i].streams);
    free(c.ranks);
    return rc;
}
