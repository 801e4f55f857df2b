/* log_gen.c: synthetic process logs for timing `collscope ingest`, and a
 * reader that prints how many log bytes each span takes.
 *
 *   log_gen -o DIR [-r RANKS] [-n SPANS]   write DIR/logs/HOST-PID.cslog: RANKS
 *       process logs (default 4) of SPANS spans each (default 1000000),
 *       one child process per rank, through libtrace's log writer, as
 *       the preload (cs_log_open, cs_log_slot, cs_log_commdef, cs_log_callsite,
 *       cs_log_reqdone, cs_log_close)
 *   log_gen --stat LOG...                  per log and in all: record size,
 *       chunks claimed, records by kind, and bytes of log per span
 *   log_gen --break HOW LOG                damage LOG in place for the reader's
 *       tests (lg_break)
 *
 * A rank's log looks like the preload's: COMMDEF records for MPI_COMM_WORLD,
 * MPI_COMM_SELF and a split, CALLSITE records (two parts, ten frames) the
 * first time each of 16 call sites is seen, then steps of a data-parallel
 * code: Allreduce (world), Bcast (split), Sendrecv, 2 Irecv + 2 Isend, 4
 * REQDONE and a Waitall, Barrier. Times are read from the process clock. */
#include "config.h"
#include "libtrace/clock.h"
#include "libtrace/dtypes.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LG_SITES 16
#define LG_DEPTH 10
#define LG_WORLD_ID 0x1000000000001ull
#define LG_SELF_BASE 0x2000000000000ull
#define LG_SPLIT_ID 0x3000000000007ull

typedef struct lg_rank {
    int rank, size;
    uint32_t world_seq, split_seq, next_req;
    int site_seen[LG_SITES + 1];
} lg_rank;

static double lg_tick_rate(void)
{
    if (cs_clock_kind_in_use != CS_CLOCK_TSC)
        return 1.0;
    uint64_t t0, t1;
    int64_t m0, m1, r;
    cs_clock_sample(&t0, &m0, &r);
    do
        cs_clock_sample(&t1, &m1, &r);
    while (m1 - m0 < 2000000);
    return (double)(t1 - t0) / (double)(m1 - m0);
}

/* The call site's id, writing its CALLSITE records the first time. */
static uint32_t lg_site(lg_rank *g, uint32_t id)
{
    if (g->site_seen[id])
        return id;
    g->site_seen[id] = 1;
    uint64_t pc[LG_DEPTH];
    for (unsigned i = 0; i < LG_DEPTH; i++)
        pc[i] = 0x401000u + id * 0x100u + i * 0x1000u;
    cs_log_callsite(id, pc, LG_DEPTH);
    return id;
}

/* One span of op `op`; returns the slot's end time. */
static uint64_t lg_span(lg_rank *g, int op, uint32_t site, uint16_t comm, uint32_t flags, uint32_t *seq, int32_t peer,
                        int32_t tag, uint32_t count, int dtype, uint32_t esize, uint32_t req, uint64_t dur)
{
    uint32_t cs = lg_site(g, site);
    cs_rec *r = cs_log_slot();
    uint64_t t0 = cs_clock_ticks();
    if (!r)
        return t0;
    r->op = (uint16_t)op;
    r->tid = cs__log_tls.tid;
    r->t0 = t0;
    r->t1 = t0 + dur;
    r->bytes = (uint64_t)count * esize;
    r->comm = comm;
    r->dtype = (uint16_t)dtype;
    r->seq = 0;
    if (seq) {
        r->seq = (*seq)++;
        flags |= CS_F_HAS_SEQ;
    }
    r->peer = peer;
    r->tag = tag;
    r->rc = 0;
    r->count = count;
    r->callsite = cs;
    r->req = req;
    cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, flags | CS_F_HAS_COMM));
    return r->t1;
}

/* Write one rank's log into DIR/logs; runs in its own process. */
/* -u: spans rank 0 adds with an op id past this build's, as a
 * newer preload would write them. */
static long lg_unknown;

static int lg_write_rank(const char *dir, int rank, int size, long nspans)
{
    cs_clock_init();
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.rank = rank;
    proto.pid = (int32_t)getpid();
    proto.world_size = size;
    proto.ticks_per_ns = lg_tick_rate();
    proto.overhead_ns = 40;
    proto.callsites = 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    proto.start_real_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    snprintf(proto.host, sizeof proto.host, "benchhost");
    snprintf(proto.exe, sizeof proto.exe, "/opt/bench/synthetic_app");
    snprintf(proto.mpi, sizeof proto.mpi, "openmpi");
    snprintf(proto.tool_version, sizeof proto.tool_version, "%s", PACKAGE_VERSION);
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof path, "%s/logs/%s-%d.cslog", dir, proto.host, (int)proto.pid);
    if (cs_log_open(path, &proto, err, sizeof err) != 0) {
        fprintf(stderr, "log_gen: %s\n", err);
        return 1;
    }
    lg_rank g;
    memset(&g, 0, sizeof g);
    g.rank = rank;
    g.size = size;
    g.next_req = 1;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int half = size / 2 ? size / 2 : 1;
    cs_log_commdef(CS_COMM_WORLD, LG_WORLD_ID, 0, 0, (uint32_t)size, rank, rank, 0, 0, 0);
    cs_log_commdef(CS_COMM_SELF, LG_SELF_BASE + (uint64_t)rank, 0, 1, 1, 0, rank, 0, 0, 0);
    cs_log_commdef(CS_COMM_SPLIT, LG_SPLIT_ID + (uint64_t)(rank % 2), LG_WORLD_ID, 2, (uint32_t)half, rank / 2, rank,
                   CS_COMM_ARG_COLOR | CS_COMM_ARG_KEY, rank % 2, rank);

    long done = 0;
    while (done < nspans) {
        /* One step: 9 spans and 4 completions. */
        lg_span(&g, CS_OP_MPI_Allreduce, 1, 0, CS_F_INPLACE, &g.world_seq, 0, 0, 65536, CS_DT_MPI_FLOAT, 4, 0, 9000);
        lg_span(&g, CS_OP_MPI_Bcast, 2, 2, CS_F_HAS_PEER, &g.split_seq, 0, 0, 256, CS_DT_MPI_DOUBLE, 8, 0, 2500);
        lg_span(&g, CS_OP_MPI_Sendrecv, 3, 0, CS_F_HAS_PEER, NULL, right, 7, 512, CS_DT_MPI_DOUBLE, 8, (uint32_t)left,
                1800);
        uint32_t req[4];
        for (int i = 0; i < 4; i++) {
            req[i] = g.next_req++;
            int recv = i < 2;
            lg_span(&g, recv ? CS_OP_MPI_Irecv : CS_OP_MPI_Isend, (uint32_t)(4 + i), 0,
                    CS_F_NONBLOCKING | CS_F_HAS_PEER, NULL, i % 2 ? right : left, 100 + i % 2, 1024, CS_DT_MPI_DOUBLE,
                    8, req[i], 150);
        }
        for (int i = 0; i < 4; i++) {
            uint64_t t0 = cs_clock_ticks();
            cs_log_reqdone(CS_OP_MPI_Waitall, t0, t0 + 300, req[i], i < 2 ? (i % 2 ? right : left) : -1, 100 + i % 2,
                           i < 2 ? 8192 : 0, 0);
        }
        lg_span(&g, CS_OP_MPI_Waitall, 8, 0, 0, NULL, 0, 0, 4, 0, 0, 0, 4000);
        lg_span(&g, CS_OP_MPI_Barrier, 9 + (uint32_t)(done / 9 % 8), 0, 0, &g.world_seq, 0, 0, 0, 0, 0, 0, 1200);
        done += 9;
    }
    for (long i = 0; rank == 0 && i < lg_unknown; i++)
        lg_span(&g, CS_OP_COUNT + 3, 10, 0, 0, NULL, 0, 0, 1, 0, 0, 0, 300);
    cs_log_close();
    return 0;
}

static int lg_mkdir(const char *p)
{
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "log_gen: cannot create %s: %s\n", p, strerror(errno));
        return -1;
    }
    return 0;
}

static int lg_generate(const char *dir, int ranks, long nspans)
{
    char logs[PATH_MAX];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    if (lg_mkdir(dir) != 0 || lg_mkdir(logs) != 0)
        return 1;
    int failed = 0;
    for (int r = 0; r < ranks; r++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "log_gen: fork: %s\n", strerror(errno));
            return 1;
        }
        if (p == 0)
            _exit(lg_write_rank(dir, r, ranks, nspans));
    }
    int st;
    while (wait(&st) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
    if (failed)
        fprintf(stderr, "log_gen: %d rank logs failed\n", failed);
    return failed ? 1 : 0;
}

static int lg_stat(int n, char **paths)
{
    uint64_t all_bytes = 0, all_spans = 0;
    for (int i = 0; i < n; i++) {
        char err[512];
        cs_logr *lr = cs_logr_open(paths[i], err, sizeof err);
        if (!lr) {
            fprintf(stderr, "log_gen: %s\n", err);
            return 1;
        }
        const cs_log_header *h = cs_logr_header(lr);
        uint64_t kinds[CS_REC_KIND_MAX] = { 0 };
        const cs_rec *r;
        while ((r = cs_logr_next(lr)) != NULL)
            kinds[CS_REC_KIND(r->hdr)]++;
        uint64_t bytes = h->next_chunk * (uint64_t)h->chunk_recs * h->rec_size;
        printf("log: %s rank=%d rec_size=%u chunk_bytes=%u chunks=%llu spans=%llu calib=%llu comm=%llu"
               " callsite=%llu reqdone=%llu bytes_per_span=%.2f\n",
               paths[i], h->rank, h->rec_size, h->chunk_recs * h->rec_size, (unsigned long long)h->next_chunk,
               (unsigned long long)kinds[CS_REC_SPAN], (unsigned long long)kinds[CS_REC_CALIB],
               (unsigned long long)kinds[CS_REC_COMMDEF], (unsigned long long)kinds[CS_REC_CALLSITE],
               (unsigned long long)kinds[CS_REC_REQDONE],
               kinds[CS_REC_SPAN] ? (double)bytes / (double)kinds[CS_REC_SPAN] : 0.0);
        all_bytes += bytes;
        all_spans += kinds[CS_REC_SPAN];
        cs_logr_close(lr);
    }
    printf("rec_size: %d\n", CS_REC_SIZE);
    printf("log_bytes: %llu\n", (unsigned long long)all_bytes);
    printf("spans: %llu\n", (unsigned long long)all_spans);
    printf("bytes_per_span: %.2f\n", all_spans ? (double)all_bytes / (double)all_spans : 0.0);
    return 0;
}

/* Damage a log in place, as a test of the reader needs it:
 *   comm-local  every COMMDEF record's local index near 2^32
 *   strings     every header string filled to its end, with no NUL
 *   slots       every 7th written slot's kind made unknown
 *   times       clock points and span times at the ends of their types */
static int lg_break(const char *how, const char *path)
{
    FILE *f = fopen(path, "r+b");
    if (!f) {
        fprintf(stderr, "log_gen: %s: %s\n", path, strerror(errno));
        return 1;
    }
    cs_log_header h;
    if (fread(&h, sizeof h, 1, f) != 1) {
        fprintf(stderr, "log_gen: %s: no log header\n", path);
        fclose(f);
        return 1;
    }
    int changed = 0;
    if (strcmp(how, "strings") == 0) {
        memset(h.host, 'h', sizeof h.host);
        memset(h.exe, 'e', sizeof h.exe);
        memset(h.mpi, 'm', sizeof h.mpi);
        memset(h.tool_version, 'v', sizeof h.tool_version);
        memset(h.papi_events, 'p', sizeof h.papi_events);
        memset(h.note, 'n', sizeof h.note);
        memset(h.run_id, 'r', sizeof h.run_id);
        rewind(f);
        changed = fwrite(&h, sizeof h, 1, f) == 1;
    } else if (strcmp(how, "comm-local") == 0 || strcmp(how, "slots") == 0 || strcmp(how, "times") == 0) {
        int comm = how[0] == 'c', times = how[0] == 't';
        cs_rec r;
        long off = CS_LOG_HEADER_BYTES;
        uint32_t k = 0;
        while (fseek(f, off, SEEK_SET) == 0 && fread(&r, sizeof r, 1, f) == 1) {
            if (times && CS_REC_KIND(r.hdr) == CS_REC_CALIB) {
                cs_rec_calib *c = (cs_rec_calib *)&r;
                c->mono_ns = k % 2 ? INT64_MIN + k : INT64_MAX - k;
                c->real_ns = k % 2 ? INT64_MAX - k : INT64_MIN + k;
                c->ticks = k++ % 3 ? UINT64_MAX - k : k;
            } else if (times && CS_REC_KIND(r.hdr) == CS_REC_SPAN) {
                r.t0 = k % 2 ? UINT64_MAX - k : k;
                r.t1 = k++ % 3 ? 0 : UINT64_MAX;
            } else if (comm && CS_REC_KIND(r.hdr) == CS_REC_COMMDEF) {
                cs_rec_comm *c = (cs_rec_comm *)&r;
                c->local = 0xffffffc0u + (k++ % 64);
            } else if (!comm && !times && r.hdr != 0 && k++ % 7 == 3) {
                r.hdr = (r.hdr & ~0xffu) | 0xee;
            } else {
                off += (long)sizeof r;
                continue;
            }
            fseek(f, off, SEEK_SET);
            changed += fwrite(&r, sizeof r, 1, f) == 1;
            off += (long)sizeof r;
        }
    } else {
        fprintf(stderr, "log_gen: --break %s: expected comm-local, strings, slots or times\n", how);
        fclose(f);
        return 2;
    }
    if (fclose(f) != 0 || !changed) {
        fprintf(stderr, "log_gen: %s: nothing to break (%s)\n", path, how);
        return 1;
    }
    printf("%s: %d changed (%s)\n", path, changed, how);
    return 0;
}

static long lg_count(const char *opt, const char *v)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 1) {
        fprintf(stderr, "log_gen: %s %s: expected a positive count\n", opt, v);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *usage = "usage: log_gen -o DIR [-r RANKS] [-n SPANS_PER_RANK] [-u UNKNOWN_OP_SPANS]\n"
                        "       log_gen --stat LOG...\n"
                        "       log_gen --break comm-local|strings|slots|times LOG\n";
    if (argc >= 3 && strcmp(argv[1], "--stat") == 0)
        return lg_stat(argc - 2, argv + 2);
    if (argc == 4 && strcmp(argv[1], "--break") == 0)
        return lg_break(argv[2], argv[3]);
    const char *dir = NULL;
    long ranks = 4, nspans = 1000000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "-o") == 0)
            dir = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "-r") == 0)
            ranks = lg_count("-r", argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-n") == 0)
            nspans = lg_count("-n", argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-u") == 0)
            lg_unknown = lg_count("-u", argv[++i]);
        else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!dir || ranks > 4096) {
        fputs(usage, stderr);
        return 2;
    }
    return lg_generate(dir, (int)ranks, nspans);
}
