/* gen_trace: write a synthetic job trace of any size through the store's
 * bulk writer (libtrace/store_bulk.h), in one of two layouts.
 *
 * --layout analysis (the default of gen_trace): for the analysis benchmark
 * (bench/analysis_bench.sh) and the analysis tests of known answers
 * (tests/analysis/synthetic.sh, costmodel.sh). Every rank runs steps of: a
 * step marker (MPI_Pcontrol), compute, two allreduces, a ring exchange
 * (send right, receive from the left) and a barrier, with a small random
 * jitter; effects can be injected:
 *
 *   gen_trace OUT.db [--ranks N] [--spans M] [--steps S] [--jitter US] [--seed X]
 *                    [--persistent R:US] [--transient R:A-B:US] [--recurring R:K:US]
 *                    [--slow-link SRC:DST:US] [--slow-coll A-B:US] [--cost ALPHA_NS:BETA_PS]
 *
 * --spans sets the steps (spans / (ranks x 6)) unless --steps is given.
 * --persistent: rank R computes US longer before the first allreduce of
 * every step; --transient: the same in steps A-B only; --recurring: in
 * every K-th step (steps K-1, 2K-1, ...), or for K < 0 in the steps
 * whose hash (gen_hash) mod -K is 0 (irregular); --slow-link: every
 * message SRC -> DST arrives US late; --slow-coll: the first allreduce of
 * steps A-B transfers US longer while every rank is on time. --cost: the
 * allreduces transfer in exactly ALPHA_NS + bytes x BETA_PS / 1000 ns (plus
 * the jitter, 0 with --jitter 0, and each rank's exit spread of 0-2 us),
 * and the first one of step k carries 1 KiB << (k % 11) bytes, so a cost
 * model fitted to the trace should give back alpha and beta.
 *
 * --layout tui (the default of tui_gen, the same program built with
 * GEN_TUI): for the TUI benchmark and tests. RANKS ranks (4) run steps of
 * compute, six allreduces, a send/receive pair with a neighbour, a barrier
 * and a step marker; rank --straggler (2) is late in one step out of ten;
 * every span has a call site with one frame.
 *
 *   tui_gen OUT.db [--spans N] [--ranks R] [--straggler RANK]
 *
 * --rank-stores (either layout): OUT is a folder, and the job is written
 * as a traced job too large to merge is kept (docs/schema.md): one store
 * per rank, OUT/ranks/rank-NNNNNN-PID.db, and the job index OUT/index.db,
 * with no merged file; the same spans, ids and times as OUT.db would hold.
 * OUT.db itself is made the way a traced job's trace is: rank stores
 * (written beside it as OUT.db.parts/, then removed) merged rank by rank,
 * each rank's span ids in a range of its own, so its rows lie as a real
 * job's do (rank by rank, not in time order).
 *
 * Exit status 0, 1 when the file cannot be written, 2 on bad usage. */
#include "config.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"
#include "libtrace/dirlock.h"
#include "libtrace/store.h"
#include "libtrace/store_bulk.h"
#include "libtrace/store_sql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#ifdef GEN_TUI
#define GEN_NAME "tui_gen"
#else
#define GEN_NAME "gen_trace"
#endif

static uint64_t gen_rng = 88172645463325252ull;
static int64_t gen_rand(int64_t n)
{
    gen_rng ^= gen_rng << 13;
    gen_rng ^= gen_rng >> 7;
    gen_rng ^= gen_rng << 17;
    return n > 0 ? (int64_t)(gen_rng % (uint64_t)n) : 0;
}

static const char gen_usage[] =
    "usage: " GEN_NAME " OUT.db [--layout analysis|tui] [--ranks N] [--spans M] [--steps S] [--seed X]\n"
    "       analysis layout: [--jitter US] [--persistent R:US] [--transient R:A-B:US] [--recurring R:K:US]\n"
    "                        [--slow-link SRC:DST:US] [--slow-coll A-B:US] [--cost ALPHA_NS:BETA_PS]\n"
    "       tui layout:      [--straggler RANK]\n"
    "       " GEN_NAME " OUTDIR --rank-stores [...]: per-rank stores and the job index, no merged file\n";

/* What the command line asked for. */
typedef struct gen_opts {
    const char *out;
    int tui;      /* the tui layout */
    int per_rank; /* out is a folder of rank stores and an index */
    int64_t nspans, steps, jitter;
    int nranks, late;
    int p_rank, t_rank, l_src, l_dst, r_rank;
    long long p_us, t_a, t_b, t_us, l_us, c_a, c_b, c_us, r_k, r_us;
    long long cost_alpha, cost_beta_ps;
} gen_opts;

/* The trace being written: the writer, the spans written and collective
 * sequence number, each rank's time, and a span to fill. */
typedef struct gen_state {
    cs_store_bulk **aB; /* per rank */
    int64_t id, seq;
    int64_t *tr, *entry, *sb;
    int64_t *rid; /* [nranks]: spans written per rank */
    cs_span s;
} gen_state;

static int gen_emit(gen_state *g, int rank, int op, int64_t b, int64_t e, int64_t comm, int64_t seq, int64_t bytes,
                    uint32_t flags)
{
    cs_span *s = &g->s;
    /* Each rank's ids in a range of its own, as an import numbers them
     * (rank x 2^36 on): a rank store merged into the job appends. */
    s->id = ((int64_t)rank << 36) + ++g->rid[rank];
    g->id++;
    s->rank = rank;
    s->op = op;
    s->begin_ns = b;
    s->end_ns = e;
    s->comm = comm;
    s->seq = seq;
    s->bytes = bytes;
    s->flags = flags;
    return cs_store_bulk_span(g->aB[rank], s);
}

static const uint32_t collf = CS_F_HAS_SEQ | CS_F_HAS_COMM, p2pf = CS_F_HAS_PEER | CS_F_HAS_COMM;

/* A hash of a step number, for steps drawn without a pattern (a test
 * computes the same: h = k x 2654435761, h ^= h >> 15, h x= 2246822519,
 * h ^= h >> 13, all mod 2^32). */
static uint64_t gen_hash(uint64_t k)
{
    uint64_t h = k * 2654435761u & 0xffffffffu;
    h ^= h >> 15;
    h = h * 2246822519u & 0xffffffffu;
    h ^= h >> 13;
    return h;
}

/* One step of the analysis layout. */
static int gen_step_analysis(gen_state *g, const gen_opts *o, int64_t k)
{
    int nranks = o->nranks;
    int64_t *tr = g->tr, *entry = g->entry, *sb = g->sb, jitter = o->jitter;
    for (int r = 0; r < nranks; r++) {
        if (gen_emit(g, r, CS_OP_MPI_Pcontrol, tr[r], tr[r] + 300, 0, -1, 0, 0))
            return -1;
        tr[r] += 300;
    }
    for (int b = 0; b < 2; b++) {
        int64_t last = 0;
        for (int r = 0; r < nranks; r++) {
            int64_t comp = (b == 0 ? 1000000 : 50000) + gen_rand(jitter + 1);
            if (b == 0 && r == o->p_rank)
                comp += o->p_us * 1000;
            if (b == 0 && r == o->t_rank && k >= o->t_a && k <= o->t_b)
                comp += o->t_us * 1000;
            if (b == 0 && r == o->r_rank &&
                (o->r_k > 0 ? k % o->r_k == o->r_k - 1 : gen_hash((uint64_t)k) % (uint64_t)-o->r_k == 0))
                comp += o->r_us * 1000;
            entry[r] = tr[r] + comp;
            if (entry[r] > last)
                last = entry[r];
        }
        int64_t bytes = b == 0 ? 4 << 20 : 4096;
        if (o->cost_alpha >= 0 && b == 0)
            bytes = (int64_t)1024 << (k % 11);
        int64_t xfer = o->cost_alpha >= 0 ? o->cost_alpha + bytes * o->cost_beta_ps / 1000 + gen_rand(jitter / 4 + 1)
                                          : 30000 + gen_rand(jitter / 4 + 1);
        if (b == 0 && k >= o->c_a && k <= o->c_b)
            xfer += o->c_us * 1000;
        g->seq++;
        for (int r = 0; r < nranks; r++) {
            int64_t e = last + xfer + gen_rand(2000);
            if (gen_emit(g, r, CS_OP_MPI_Allreduce, entry[r], e, 1, g->seq, bytes, collf))
                return -1;
            tr[r] = e;
        }
    }
    /* ring: send right, then receive from the left */
    for (int r = 0; r < nranks; r++)
        sb[r] = tr[r] + 5000 + gen_rand(jitter / 4 + 1);
    for (int r = 0; r < nranks; r++) {
        int right = (r + 1) % nranks, left = (r + nranks - 1) % nranks;
        g->s.tag = 7;
        g->s.peer = right;
        if (gen_emit(g, r, CS_OP_MPI_Send, sb[r], sb[r] + 8000, 1, -1, 65536, p2pf))
            return -1;
        int64_t rb = sb[r] + 8000, re = (sb[left] + 10000 > rb ? sb[left] + 10000 : rb) + 12000;
        if (left == o->l_src && r == o->l_dst)
            re += o->l_us * 1000;
        g->s.peer = left;
        if (gen_emit(g, r, CS_OP_MPI_Recv, rb, re, 1, -1, 65536, p2pf))
            return -1;
        g->s.peer = g->s.tag = -1;
        tr[r] = re;
    }
    int64_t last = 0;
    for (int r = 0; r < nranks; r++) {
        entry[r] = tr[r] + 20000 + gen_rand(jitter / 4 + 1);
        if (entry[r] > last)
            last = entry[r];
    }
    g->seq++;
    for (int r = 0; r < nranks; r++) {
        if (gen_emit(g, r, CS_OP_MPI_Barrier, entry[r], last + 5000, 1, g->seq, 0, collf))
            return -1;
        tr[r] = last + 5000;
    }
    return 0;
}

/* One step of the tui layout. */
static int gen_step_tui(gen_state *g, const gen_opts *o, int64_t st)
{
    int nranks = o->nranks;
    int64_t *tr = g->tr, *entry = g->entry;
    for (int r = 0; r < nranks; r++) {
        if (gen_emit(g, r, CS_OP_MPI_Pcontrol, tr[r], tr[r] + 300, 0, -1, 0, 0))
            return -1;
        tr[r] += 300;
    }
    for (int k = 0; k < 6; k++) {
        int64_t last = 0;
        for (int r = 0; r < nranks; r++) {
            int64_t comp = 100000 + gen_rand(20000);
            if (r == o->late && st % 10 == 3 && k == 0)
                comp += 2000000;
            entry[r] = tr[r] + comp;
            if (entry[r] > last)
                last = entry[r];
        }
        int64_t xfer = 20000 + gen_rand(5000);
        g->seq++;
        for (int r = 0; r < nranks; r++) {
            if (gen_emit(g, r, CS_OP_MPI_Allreduce, entry[r], last + xfer, 1, g->seq, 4 << 20, collf))
                return -1;
            tr[r] = last + xfer;
        }
    }
    for (int r = 0; r < nranks; r++) {
        int64_t c = tr[r] + 30000;
        g->s.peer = (r ^ 1) < nranks ? (r ^ 1) : r;
        g->s.tag = 7;
        if (gen_emit(g, r, CS_OP_MPI_Send, c, c + 15000, 1, -1, 65536, p2pf) ||
            gen_emit(g, r, CS_OP_MPI_Recv, c + 15000, c + 40000, 1, -1, 65536, p2pf))
            return -1;
        g->s.peer = g->s.tag = -1;
        tr[r] = c + 40000;
    }
    int64_t last = 0;
    for (int r = 0; r < nranks; r++) {
        entry[r] = tr[r] + 20000 + gen_rand(5000);
        if (entry[r] > last)
            last = entry[r];
    }
    g->seq++;
    for (int r = 0; r < nranks; r++) {
        if (gen_emit(g, r, CS_OP_MPI_Barrier, entry[r], last + 5000, 1, g->seq, 0, collf))
            return -1;
        tr[r] = last + 5000;
    }
    return 0;
}

/* 0, or 2 after printing the usage. */
static int gen_parse(int argc, char **argv, gen_opts *o)
{
    memset(o, 0, sizeof *o);
#ifdef GEN_TUI
    o->tui = 1;
#endif
    o->nspans = 1000000;
    o->jitter = 20000;
    o->late = 2;
    o->p_rank = o->t_rank = o->l_src = o->l_dst = o->r_rank = -1;
    o->t_b = o->c_b = -1;
    o->cost_alpha = -1;
    int nranks = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(argv[i], "--rank-stores")) {
            o->per_rank = 1;
            continue;
        }
        if (!strcmp(argv[i], "--layout") && v && (!strcmp(v, "tui") || !strcmp(v, "analysis")))
            o->tui = !strcmp(v, "tui");
        else if (!strcmp(argv[i], "--spans") && v)
            o->nspans = strtoll(v, NULL, 10);
        else if (!strcmp(argv[i], "--steps") && v)
            o->steps = strtoll(v, NULL, 10);
        else if (!strcmp(argv[i], "--ranks") && v)
            nranks = atoi(v);
        else if (!strcmp(argv[i], "--straggler") && v)
            o->late = atoi(v);
        else if (!strcmp(argv[i], "--jitter") && v)
            o->jitter = strtoll(v, NULL, 10) * 1000;
        else if (!strcmp(argv[i], "--seed") && v)
            gen_rng ^= (uint64_t)strtoull(v, NULL, 10) * 0x9e3779b97f4a7c15ull;
        else if (!strcmp(argv[i], "--persistent") && v)
            ok = sscanf(v, "%d:%lld", &o->p_rank, &o->p_us) == 2;
        else if (!strcmp(argv[i], "--transient") && v)
            ok = sscanf(v, "%d:%lld-%lld:%lld", &o->t_rank, &o->t_a, &o->t_b, &o->t_us) == 4;
        else if (!strcmp(argv[i], "--recurring") && v)
            ok = sscanf(v, "%d:%lld:%lld", &o->r_rank, &o->r_k, &o->r_us) == 3 && o->r_k != 0 && o->r_k > -1000000;
        else if (!strcmp(argv[i], "--slow-link") && v)
            ok = sscanf(v, "%d:%d:%lld", &o->l_src, &o->l_dst, &o->l_us) == 3;
        else if (!strcmp(argv[i], "--slow-coll") && v)
            ok = sscanf(v, "%lld-%lld:%lld", &o->c_a, &o->c_b, &o->c_us) == 3;
        else if (!strcmp(argv[i], "--cost") && v)
            ok = sscanf(v, "%lld:%lld", &o->cost_alpha, &o->cost_beta_ps) == 2 && o->cost_alpha >= 0 &&
                 o->cost_beta_ps >= 0;
        else if (argv[i][0] != '-' && !o->out) {
            o->out = argv[i];
            continue;
        } else
            ok = 0;
        if (!ok) {
            fprintf(stderr, GEN_NAME ": bad option %s %s\n%s", argv[i], v ? v : "", gen_usage);
            return 2;
        }
        i++;
    }
    o->nranks = nranks ? nranks : o->tui ? 4 : 64;
    if (!o->out || o->nranks < (o->tui ? 1 : 2) || o->nspans < 1 || o->jitter < 0) {
        fputs(gen_usage, stderr);
        return 2;
    }
    int per_step = o->tui ? 10 : 6;
    if (o->steps <= 0)
        o->steps = o->nspans / ((int64_t)o->nranks * per_step);
    if (o->steps < 1)
        o->steps = 1;
    return 0;
}

/* Each rank's communicator, process row and (tui layout) call site. */
static int gen_ranks(gen_state *g, const gen_opts *o, int64_t t0, int before_spans)
{
    int64_t spans = o->steps * (o->tui ? 10 : 6);
    for (int r = 0; r < o->nranks; r++) {
        cs_store_bulk *b = g->aB[r];
        if (!o->tui) {
            if (before_spans) {
                if (cs_store_bulk_comm(b, 1, r, r, o->nranks, 0) != 0)
                    return -1;
                continue;
            }
            cs_store_bulk_proc p = {
                r, 1000 + r, o->nranks, "synthetic", "gen_trace", "synthetic", "gen_trace", t0, g->tr[r], spans, 0
            };
            if (cs_store_bulk_process(b, &p) != 0)
                return -1;
            continue;
        }
        if (before_spans)
            continue;
        cs_store_bulk_proc p = { r, 1000 + r, o->nranks, "gen", "tui_gen", "none", NULL, t0, g->tr[r], spans, 1 };
        cs_store_bulk_site c = {
            r, 1, "tui_gen.c:42 train_step", 4096, 4096, "tui_gen", "train_step", "tui_gen.c", 42
        };
        if (cs_store_bulk_process(b, &p) != 0 || cs_store_bulk_comm(b, 1, r, r, o->nranks, t0) != 0 ||
            cs_store_bulk_callsite(b, &c) != 0)
            return -1;
    }
    return 0;
}

/* A store and a bulk writer per rank in OUT/ranks. */
static int gen_open_ranks(gen_state *g, const gen_opts *o, cs_store **aSt, char *err, size_t errlen)
{
    char path[4200];
    /* a file per rank, and SQLite's side files */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    snprintf(path, sizeof path, "%s/ranks", o->out);
    if ((mkdir(o->out, 0755) != 0 && errno != EEXIST) || (mkdir(path, 0755) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "cannot make %s: %s", path, strerror(errno));
        return -1;
    }
    g->aB = calloc((size_t)o->nranks, sizeof *g->aB);
    if (!g->aB) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < o->nranks; r++) {
        snprintf(path, sizeof path, "%s/ranks/rank-%06d-%d.db", o->out, r, 1000 + r);
        /* a rank's spans (o->steps is settled by now), ~100 bytes each */
        if (cs_store_create_sized(path, (long long)o->steps * (o->tui ? 10 : 6) * 100, &aSt[r], err, errlen) != 0)
            return -1;
        /* Many writers at once: page caches of 256 MiB together, from
         * 512 KiB to 8 MiB each. */
        char pragma[64];
        int kb = 262144 / o->nranks;
        snprintf(pragma, sizeof pragma, "PRAGMA cache_size=-%d", kb < 512 ? 512 : kb > 8192 ? 8192 : kb);
        sqlite3_exec(cs_store_sql_db(aSt[r]), pragma, NULL, NULL, NULL);
        if (!(g->aB[r] = cs_store_bulk_begin(aSt[r], err, errlen)))
            return -1;
    }
    return 0;
}

/* Commit each rank's store and write the index over them. */
static int gen_close_ranks(gen_state *g, const gen_opts *o, cs_store **aSt, const char *command, char *err,
                           size_t errlen)
{
    char **files = calloc((size_t)o->nranks, sizeof *files);
    int rc = files ? 0 : -1;
    /* one run id for the job's rank stores, as a traced run's carry */
    char run[64];
    snprintf(run, sizeof run, "gen_trace-%ld-%d", (long)time(NULL), (int)getpid());
    for (int r = 0; r < o->nranks; r++) {
        if (rc == 0 &&
            (cs_store_bulk_end(g->aB[r], 1, err, errlen) != 0 || cs_store_finish(aSt[r], command, err, errlen) != 0 ||
             cs_store_meta_set(aSt[r], "kind", "rank") != 0 || cs_store_meta_set(aSt[r], "run_id", run) != 0 ||
             sqlite3_exec(cs_store_sql_db(aSt[r]), "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK))
            rc = -1;
        else if (rc != 0)
            cs_store_bulk_end(g->aB[r], 0, NULL, 0);
        if (files && !(files[r] = strdup(cs_store_path(aSt[r]))))
            rc = -1;
        cs_store_close(aSt[r]);
    }
    if (rc == 0 && cs_store_index_write(o->out, files, (size_t)o->nranks, command, NULL, err, errlen) != 0)
        rc = -1;
    for (int r = 0; files && r < o->nranks; r++)
        free(files[r]);
    free(files);
    return rc;
}

/* Remove the rank stores and index a merged OUT.db was made from. */
static void gen_remove_parts(const char *dir, int nranks)
{
    char path[4300];
    for (int r = 0; r < nranks; r++) {
        snprintf(path, sizeof path, "%s/ranks/rank-%06d-%d.db", dir, r, 1000 + r);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/ranks", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/" CS_STORE_INDEX_FILE, dir);
    unlink(path);
    /* the merge locked the folder (dirlock.h): this scratch folder is
     * ours, its lock file goes with it */
    cs_dirlock_release(dir);
    snprintf(path, sizeof path, "%s/" CS_DIRLOCK_FILE, dir);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    gen_opts o;
    int rc = gen_parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    /* The layout's trace names its generator (meta command). */
    const char *name = GEN_NAME, *command = o.tui ? "tui_gen" : "gen_trace";
    char err[1024];
    cs_store **aSt = NULL;
    gen_state g;
    memset(&g, 0, sizeof g);
    /* OUT.db is made as a traced job's trace is: rank stores (each rank's
     * span ids in a range of its own), merged rank by rank, so its rows lie
     * as a real job's do; the stores are written beside it, then removed. */
    const char *final = o.per_rank ? NULL : o.out;
    char parts[4200];
    if (final) {
        snprintf(parts, sizeof parts, "%s.parts", final);
        o.out = parts;
    }
    aSt = calloc((size_t)o.nranks, sizeof *aSt);
    if (!aSt || gen_open_ranks(&g, &o, aSt, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, aSt ? err : "out of memory");
        return 1;
    }
    g.tr = calloc((size_t)o.nranks, sizeof *g.tr);
    g.entry = calloc((size_t)o.nranks, sizeof *g.entry);
    g.sb = calloc((size_t)o.nranks, sizeof *g.sb);
    g.rid = calloc((size_t)o.nranks, sizeof *g.rid);
    if (!g.tr || !g.entry || !g.sb || !g.rid) {
        fprintf(stderr, "%s: out of memory\n", name);
        return 1;
    }
    g.id = 1;
    int64_t t0 = o.tui ? 1000000 : 1000000000;
    for (int r = 0; r < o.nranks; r++)
        g.tr[r] = t0;
    g.s.peer = g.s.peer2 = g.s.tag = -1;
    g.s.callsite = o.tui ? 1 : 0;
    rc = gen_ranks(&g, &o, t0, 1);
    for (int64_t k = 0; rc == 0 && k < o.steps; k++)
        rc = o.tui ? gen_step_tui(&g, &o, k) : gen_step_analysis(&g, &o, k);
    if (rc == 0)
        rc = gen_ranks(&g, &o, t0, 0);
    if (rc != 0)
        snprintf(err, sizeof err, "cannot write %s", o.out);
    if (gen_close_ranks(&g, &o, aSt, command, err, sizeof err) != 0 || rc != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    free(aSt);
    free(g.aB);
    if (final) {
        int nfaults = 0;
        rc = cs_store_job_merge(parts, final, &nfaults, NULL, 0, err, sizeof err);
        gen_remove_parts(parts, o.nranks);
        if (rc != 0 || nfaults) {
            fprintf(stderr, "%s: %s\n", name, rc != 0 ? err : "a rank store could not be merged");
            return 1;
        }
    }
    printf("%s: %lld spans, %d ranks, %lld steps -> %s%s\n", name, (long long)(g.id - 1), o.nranks, (long long)o.steps,
           final ? final : o.out, final ? "" : " (rank stores and index.db)");
    free(g.tr);
    free(g.entry);
    free(g.sb);
    free(g.rid);
    return 0;
}
