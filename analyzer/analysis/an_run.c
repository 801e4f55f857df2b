/* an_run.c: the analysis of one store: the passes in order, and the small
 * helpers they share. */
#include "config.h"
#include "analyzer/analysis/analysis.h"
#include "common/stats.h"
#include "analyzer/analysis/par.h"
#include "analyzer/analysis/whatif.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the analysis ---- */

/* COLLSCOPE_AN_TIMES=1: each pass's wall and CPU time on stderr (benches;
 * on a shared machine the CPU time is the figure to compare). */
typedef struct cs_an_timer {
    struct timespec wall, cpu;
} cs_an_timer;

static void cs_an_timer_start(cs_an_timer *c)
{
    clock_gettime(CLOCK_MONOTONIC, &c->wall);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c->cpu);
}

double cs__an_seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void cs_an_timer_print(FILE *log, const char *name, const cs_an_timer *c0)
{
    cs_an_timer c1;
    cs_an_timer_start(&c1);
    fprintf(log, "collscope: pass %-8s %.3f s (cpu %.3f s)\n", name, cs__an_seconds(&c0->wall, &c1.wall),
            cs__an_seconds(&c0->cpu, &c1.cpu));
}

/* One analysis: the shared context and each pass's results. */
typedef struct cs_an {
    const cs_an_share *share; /* NULL, or this process's part of a parallel analysis */
    int done;                 /* a process other than the root: its part is done */
    int stage;                /* the exchanges of a parallel analysis done: CS_AN_X_* */
    cs_an_ctx ctx;
    cs_an_msgs msgs;
    cs_an_clocks clocks;
    cs_an_steps steps;
    cs_an_coll coll;
    cs_an_links links;
} cs_an;

/* A process of a parallel analysis other than the root: it takes the
 * root's clocks and steps, and matches its share. */
static int cs_an_worker(const cs_an *a)
{
    return a->share && a->share->par->size > 1 && a->share->par->rank != 0;
}

/* The passes in order, each with what it reads and what it fills. */
static int cs_an_pair_par(cs_an *a, char *err, size_t errlen);
static int cs_an_pass_pair(cs_an *a, char *err, size_t errlen)
{
    if (a->share)
        return cs_an_pair_par(a, err, errlen);
    return cs__an_p2p_collect(&a->ctx, &a->msgs, &a->steps, err, errlen);
}
static int cs_an_pass_align(cs_an *a, char *err, size_t errlen)
{
    return cs_an_worker(a) ? 0 : cs__an_align(&a->ctx, &a->msgs, &a->clocks, err, errlen);
}
static int cs_an_pass_steps(cs_an *a, char *err, size_t errlen)
{
    return cs_an_worker(a) ? 0 : cs__an_match_steps(&a->ctx, &a->clocks, &a->steps, err, errlen);
}
static int cs_an_match_par(cs_an *a, char *err, size_t errlen);
static int cs_an_pass_match(cs_an *a, char *err, size_t errlen)
{
    if (a->share)
        return cs_an_match_par(a, err, errlen);
    if (cs__an_match(&a->ctx, &a->clocks, &a->steps, &a->coll, NULL, 0, err, errlen) != 0)
        return -1;
    cs__an_match_finish(&a->ctx, &a->steps, &a->coll);
    return 0;
}
static int cs_an_pass_p2p(cs_an *a, char *err, size_t errlen)
{
    return cs__an_p2p(&a->ctx, &a->clocks, &a->steps, &a->msgs, &a->links, err, errlen);
}
static int cs_an_pass_verdicts(cs_an *a, char *err, size_t errlen)
{
    return cs__an_verdict(&a->ctx, &a->clocks, &a->steps, &a->coll, &a->msgs, &a->links, err, errlen);
}
static int cs_an_pass_tail(cs_an *a, char *err, size_t errlen)
{
    return cs__an_tail(&a->ctx, &a->clocks, err, errlen);
}
static int cs_an_pass_kernels(cs_an *a, char *err, size_t errlen)
{
    return cs__an_kernels(&a->ctx, err, errlen);
}

static int cs_an_pass_figures(cs_an *a, char *err, size_t errlen)
{
    return cs__an_figures(&a->ctx, err, errlen);
}

static int cs_an_pass_gpu(cs_an *a, char *err, size_t errlen)
{
    return cs__an_gpu(&a->ctx, &a->clocks, &a->steps, err, errlen);
}
static int cs_an_pass_layout(cs_an *a, char *err, size_t errlen)
{
    return cs__an_layout(&a->ctx, &a->msgs, err, errlen);
}
static int cs_an_pass_whatif(cs_an *a, char *err, size_t errlen)
{
    return cs__an_whatif(&a->ctx, &a->steps, &a->msgs, cs__an_slowdown, err, errlen);
}

/* ---- the pairing, by the processes of a parallel analysis ---- */

/* Every process says whether it did well (ok), and learns whether all
 * did (*all_ok): a barrier. 0, or -1 when a process stopped. */
static int cs_an_barrier(cs_par *par, int ok, int *all_ok)
{
    int32_t mine = ok, v = 1;
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    int rc = lens ? par->gather(par, &mine, sizeof mine, &all, lens) : -1;
    for (int r = 0; rc == 0 && par->rank == 0 && r < par->size; r++)
        if (lens[r] != sizeof mine || !((const int32_t *)all)[r])
            v = 0;
    free(all);
    free(lens);
    void *b = &v;
    size_t n = sizeof v;
    if (rc == 0 && par->bcast(par, &b, &n) != 0)
        rc = -1;
    if (rc == 0 && par->rank != 0) {
        if (n == sizeof v)
            memcpy(&v, b, sizeof v);
        else
            rc = -1;
        free(b);
    }
    *all_ok = rc == 0 && v;
    return rc;
}

/* Each process that made a part routes the ends of the messages in it to
 * the processes that pair them, by their destination's run of the ranks
 * (SCRATCH/ends-P.bin), and writes its step markers (marks-P.bin); after
 * a barrier, each process pairs its run's messages and writes them, in
 * order, into msgs-P.bin; the root learns how many each wrote, reads the
 * step markers, and its passes read the messages merged (an_msgs.c). No
 * process reads more than its part, or holds more than its run's ends. */
static int cs_an_pair_par(cs_an *a, char *err, size_t errlen)
{
    cs_par *par = a->share->par;
    const char *scratch = a->share->scratch;
    int nparts = a->share->nparts;
    char ends[4200], marks[4200], path[4200];
    cs__an_ctx_scratch_file(ends, sizeof ends, scratch, "ends.bin", par->rank);
    cs__an_ctx_scratch_file(marks, sizeof marks, scratch, "marks.bin", par->rank);
    cs__an_ctx_scratch_file(path, sizeof path, scratch, "msgs.bin", par->rank);
    if (par->size == 1) {
        /* one process: no routing; the messages in its file all the same,
         * so that it does not hold them through the later passes */
        int rc = cs__an_p2p_collect(&a->ctx, &a->msgs, &a->steps, err, errlen);
        if (rc == 0 && cs__an_msgs_save(&a->msgs, path) != 0) {
            snprintf(err, errlen, "%s: cannot write the paired messages: %s", path, strerror(errno));
            rc = -1;
        }
        if (rc == 0 && !(a->msgs.files = cs__an_ctx_scratch_files(scratch, "msgs.bin", 1))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        a->msgs.nfiles = a->msgs.files ? 1 : 0;
        a->stage = CS_AN_X_PAIR;
        return rc;
    }
    int rc = par->rank < nparts ? cs__an_p2p_route(&a->ctx, par->rank, par->size, ends, marks, err, errlen) : 0;
    int all_ok;
    a->stage = CS_AN_X_ROUTE;
    if (cs_an_barrier(par, rc == 0, &all_ok) != 0) {
        if (rc == 0)
            snprintf(err, errlen, "an analysis process stopped while routing the messages");
        return -1;
    }
    if (rc == 0 && !all_ok) {
        /* another failed: the root's verdict names it, with its message
         * (a worker's empty one is not taken for the cause) */
        if (par->rank == 0)
            snprintf(err, errlen, "an analysis process could not route its messages");
        else
            err[0] = '\0';
        rc = -1;
    }
    char **files = rc == 0 ? cs__an_ctx_scratch_files(scratch, "ends.bin", nparts) : NULL;
    if (rc == 0 && !files) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = cs__an_p2p_pair_routed(files, nparts, par->rank, &a->msgs, err, errlen);
    cs__an_ctx_scratch_files_free(files, nparts);
    if (rc == 0 && cs__an_msgs_save(&a->msgs, path) != 0) {
        snprintf(err, errlen, "%s: cannot write the paired messages: %s", path, strerror(errno));
        rc = -1;
    }
    /* every process sends, even one that failed: its empty share says so */
    int64_t mine[2] = { (int64_t)a->msgs.nmsgs, a->msgs.p2p_unmatched };
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    a->stage = CS_AN_X_PAIR;
    if (!lens || par->gather(par, rc == 0 ? mine : NULL, rc == 0 ? sizeof mine : 0, &all, lens) != 0) {
        free(lens);
        free(all);
        if (rc == 0)
            snprintf(err, errlen, "an analysis process stopped while pairing the messages");
        return -1;
    }
    a->msgs.nmsgs = 0;
    a->msgs.p2p_unmatched = 0;
    if (par->rank == 0 && rc == 0) {
        const int64_t *v = all;
        for (int r = 0; r < par->size && rc == 0; r++, v += 2)
            if (lens[r] != sizeof mine) {
                snprintf(err, errlen, "analysis process %d could not pair its share of the messages", r);
                rc = -1;
            } else {
                a->msgs.nmsgs += (size_t)v[0];
                a->msgs.p2p_unmatched += v[1];
            }
        if (rc == 0 && !(a->msgs.files = cs__an_ctx_scratch_files(scratch, "msgs.bin", par->size))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        a->msgs.nfiles = a->msgs.files ? par->size : 0;
        files = rc == 0 ? cs__an_ctx_scratch_files(scratch, "marks.bin", nparts) : NULL;
        if (rc == 0)
            rc = files ? cs__an_p2p_marks_read(&a->ctx, files, nparts, &a->steps, err, errlen) : -1;
        if (rc != 0 && !err[0])
            snprintf(err, errlen, "out of memory");
        cs__an_ctx_scratch_files_free(files, nparts);
    }
    free(all);
    free(lens);
    return rc;
}

/* ---- the match, by the processes of a parallel analysis ---- */

/* This process's pieces of the collective instances: all of them in
 * (comm, seq) order cut into par->size runs of about as many instances. */
static int cs_an_pieces(cs_an *a, cs_an_piece **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    cs_coll_range *cr;
    int ncr;
    if (cs_store_coll_ranges(a->ctx.st, &cr, &ncr) != 0) {
        snprintf(err, errlen, "%s: cannot read the communicators of the collectives", cs_store_path(a->ctx.st));
        return -1;
    }
    int64_t total = 0;
    for (int i = 0; i < ncr; i++)
        total += cr[i].seq_hi - cr[i].seq_lo + 1;
    const cs_par *par = a->share->par;
    int64_t lo = total / par->size * par->rank + total % par->size * par->rank / par->size;
    int64_t hi = total / par->size * (par->rank + 1) + total % par->size * (par->rank + 1) / par->size;
    size_t cap = 0;
    int rc = 0;
    for (int64_t i = 0, at = 0; i < ncr && rc == 0; at += cr[i].seq_hi - cr[i].seq_lo + 1, i++) {
        int64_t len = cr[i].seq_hi - cr[i].seq_lo + 1;
        int64_t b = at > lo ? at : lo, e = at + len < hi ? at + len : hi;
        if (b >= e)
            continue;
        if (CS_VEC_RESERVE(*out, cap, *n + 1) != 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        (*out)[(*n)++] = (cs_an_piece){ cr[i].comm, cr[i].seq_lo + (b - at), e - b, cr[i].seq_lo };
    }
    free(cr);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* What a process's match adds up to, as int64 values: its counts, its
 * per-rank figures, its per-rank-and-step sums and its communicators. */
static int cs_an_match_pack(const cs_an *a, cs_vec *v)
{
    const cs_an_coll *c = &a->coll;
    const cs_an_steps *st = &a->steps;
    int64_t nsr = st->nsteps * (int64_t)(a->ctx.ndense + 1);
    int rc = cs_vec_push(v, c->instances) | cs_vec_push(v, c->incomplete) | cs_vec_push(v, c->coll_spans) |
             cs_vec_push(v, c->uncompleted) | cs_vec_push(v, c->exit_before_entry);
    for (int d = 0; d < a->ctx.ndense && rc == 0; d++) {
        rc |= cs_vec_push(v, c->times_last[d]) | cs_vec_push(v, c->imposed[d]) |
              cs_vec_push(v, (int64_t)c->lateness[d].n);
        for (size_t i = 0; i < c->lateness[d].n && rc == 0; i++)
            rc |= cs_vec_push(v, c->lateness[d].a[i]);
    }
    /* the per-rank-and-step sums, sparse: a rank has them only in the
     * steps where it came last */
    size_t at = v->n;
    rc |= cs_vec_push(v, 0);
    int64_t nz = 0;
    for (int64_t k = 0; k < nsr && rc == 0; k++)
        if (st->late[k] || st->late2[k] || st->nblate[k] || st->xgap[k]) {
            rc |= cs_vec_push(v, k) | cs_vec_push(v, st->late[k]) | cs_vec_push(v, st->late2[k] - st->nblate[k]) |
                  cs_vec_push(v, st->nblate[k]) | cs_vec_push(v, st->xgap[k]);
            nz++;
        }
    if (rc == 0)
        v->a[at] = nz;
    for (int64_t k = 0; k < st->nsteps && rc == 0; k++)
        rc |= cs_vec_push(v, st->step_last_exit[k]);
    rc |= cs_vec_push(v, c->ncomms);
    for (int i = 0; i < c->ncomms && rc == 0; i++) {
        rc |= cs_vec_push(v, c->comm_ids[i]) | cs_vec_push(v, c->comm_seq[i]) | cs_vec_push(v, c->cstep_op[i]);
        for (int64_t k = 0; k < st->nsteps && rc == 0; k++)
            rc |= cs_vec_push(v, c->cstep_xfer[(size_t)i * (size_t)st->nsteps + (size_t)k]) |
                  cs_vec_push(v, c->cstep_skew[(size_t)i * (size_t)st->nsteps + (size_t)k]);
    }
    return rc ? -1 : 0;
}

/* A communicator's figures from one process, while the root adds them. */
typedef struct cs_an_pcomm {
    int64_t comm, seq;
    int op;
    const int64_t *xs; /* nsteps pairs: transfer, skew */
} cs_an_pcomm;

static int cs_an_pcomm_order(const void *x, const void *y)
{
    const cs_an_pcomm *p = x, *q = y;
    if (p->comm != q->comm)
        return p->comm < q->comm ? -1 : 1;
    return (p->seq > q->seq) - (p->seq < q->seq);
}

/* The root: every process's match (the root's own first) added into a,
 * as one process matching all of them would have left it. */
static int cs_an_match_add(cs_an *a, const int64_t *all, const size_t *lens, int size, char *err, size_t errlen)
{
    cs_an_coll *c = &a->coll;
    cs_an_steps *st = &a->steps;
    int64_t nsr = st->nsteps * (int64_t)(a->ctx.ndense + 1);
    cs_an_pcomm *pc = NULL;
    size_t npc = 0, cap = 0;
    int rc = 0;
    for (int d = 0; d < a->ctx.ndense; d++)
        c->lateness[d].n = 0;
    c->instances = c->incomplete = c->coll_spans = c->uncompleted = c->exit_before_entry = 0;
    if (nsr > 0) {
        memset(st->late, 0, (size_t)nsr * sizeof *st->late);
        memset(st->late2, 0, (size_t)nsr * sizeof *st->late2);
        memset(st->nblate, 0, (size_t)nsr * sizeof *st->nblate);
        memset(st->xgap, 0, (size_t)nsr * sizeof *st->xgap);
    }
    const int64_t *p = all;
    for (int r = 0; r < size && rc == 0; r++) {
        const int64_t *end = p + lens[r] / sizeof *p, *q = p;
#define CS_AN_TAKE(n)             \
    if (end - q < (int64_t)(n)) { \
        rc = -1;                  \
        break;                    \
    }
        CS_AN_TAKE(5);
        c->instances += q[0];
        c->incomplete += q[1];
        c->coll_spans += q[2];
        c->uncompleted += q[3];
        c->exit_before_entry += q[4];
        q += 5;
        for (int d = 0; d < a->ctx.ndense; d++) {
            CS_AN_TAKE(3);
            c->times_last[d] = (r ? c->times_last[d] : 0) + q[0];
            c->imposed[d] = (r ? c->imposed[d] : 0) + q[1];
            int64_t nl = q[2];
            q += 3;
            CS_AN_TAKE(nl);
            for (int64_t i = 0; i < nl && rc == 0; i++)
                rc = cs_vec_push(&c->lateness[d], q[i]);
            q += nl;
        }
        if (rc != 0)
            break;
        CS_AN_TAKE(1);
        int64_t nz = *q++;
        CS_AN_TAKE(5 * nz);
        for (int64_t i = 0; i < nz; i++, q += 5) {
            int64_t k = q[0];
            if (k < 0 || k >= nsr) {
                rc = -1;
                break;
            }
            st->late[k] += q[1];
            st->late2[k] += q[2];
            if (q[3] > st->nblate[k])
                st->nblate[k] = q[3];
            st->xgap[k] += q[4];
        }
        if (rc != 0)
            break;
        CS_AN_TAKE(st->nsteps);
        for (int64_t k = 0; k < st->nsteps; k++, q++)
            if (r == 0 || *q > st->step_last_exit[k])
                st->step_last_exit[k] = *q;
        CS_AN_TAKE(1);
        int64_t nc = *q++;
        for (int64_t i = 0; i < nc; i++) {
            CS_AN_TAKE(3 + 2 * st->nsteps);
            if (CS_VEC_RESERVE(pc, cap, npc + 1) != 0) {
                rc = -1;
                break;
            }
            pc[npc++] = (cs_an_pcomm){ q[0], q[1], (int)q[2], q + 3 };
            q += 3 + 2 * st->nsteps;
        }
#undef CS_AN_TAKE
        p = end;
    }
    if (rc != 0) {
        free(pc);
        snprintf(err, errlen, "the processes' matches do not add up (out of memory, or a process of another build)");
        return -1;
    }
    /* late2 holds each process's blocking part: the nonblocking part is the
     * largest of all (see cs_an_steps) */
    for (int64_t k = 0; k < nsr; k++)
        st->late2[k] += st->nblate[k];
    /* the communicators in id order, each with the op of its first
     * instance: the first CS_AN_MAX_COMMS, as one process numbers them */
    qsort(pc, npc, sizeof *pc, cs_an_pcomm_order);
    cs_map_free(&c->comm_idx);
    memset(&c->comm_idx, 0, sizeof c->comm_idx);
    c->ncomms = 0;
    if (st->nsteps > 0)
        memset(c->cstep_xfer, 0, (size_t)st->nsteps * CS_AN_MAX_COMMS * sizeof *c->cstep_xfer),
            memset(c->cstep_skew, 0, (size_t)st->nsteps * CS_AN_MAX_COMMS * sizeof *c->cstep_skew);
    for (size_t i = 0; i < npc && rc == 0; i++) {
        int64_t ci;
        if (!cs_map_get(&c->comm_idx, (uint64_t)pc[i].comm, &ci)) {
            if (c->ncomms >= CS_AN_MAX_COMMS)
                break;
            ci = c->ncomms++;
            if (cs_map_put(&c->comm_idx, (uint64_t)pc[i].comm, ci) != 0) {
                rc = -1;
                break;
            }
            c->comm_ids[ci] = pc[i].comm;
            c->comm_seq[ci] = pc[i].seq;
            c->cstep_op[ci] = pc[i].op;
        }
        for (int64_t k = 0; k < st->nsteps; k++) {
            c->cstep_xfer[(size_t)ci * (size_t)st->nsteps + (size_t)k] += pc[i].xs[2 * k];
            c->cstep_skew[(size_t)ci * (size_t)st->nsteps + (size_t)k] += pc[i].xs[2 * k + 1];
        }
    }
    free(pc);
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    return rc;
}

/* The root's alignment and steps to every process: the others run
 * neither the pairing nor the alignment nor the step search, and take the
 * root's clocks (into their store, where the span reads apply them) and
 * step marks. The first value says whether the root got that far. */
static int cs_an_share_steps(cs_an *a, char *err, size_t errlen)
{
    cs_par *par = a->share->par;
    cs_vec v = { NULL, 0, 0 };
    int rc = 0;
    a->stage = CS_AN_X_STEPS;
    if (par->rank == 0) {
        cs_clock_row *rows = NULL;
        int n = 0;
        if (cs_store_alignment_get(a->ctx.st, &rows, &n) != 0) {
            snprintf(err, errlen, "%s: cannot read the clocks", cs_store_path(a->ctx.st));
            rc = -1;
        }
        if (rc == 0 && (cs_vec_push(&v, 1) != 0 || cs_vec_push(&v, n) != 0))
            rc = -1;
        for (int i = 0; rc == 0 && i < n; i++) {
            int64_t drift;
            memcpy(&drift, &rows[i].drift_ppm, sizeof drift);
            rc = cs_vec_push(&v, rows[i].rank) | cs_vec_push(&v, rows[i].residual_null) |
                 cs_vec_push(&v, rows[i].offset_ns) | cs_vec_push(&v, rows[i].residual_ns) |
                 cs_vec_push(&v, rows[i].ref_ns) | cs_vec_push(&v, drift);
        }
        free(rows);
        if (rc == 0 && cs_vec_push(&v, a->steps.nsteps) != 0)
            rc = -1;
        for (int d = 0; rc == 0 && d < a->ctx.ndense; d++) {
            rc = cs_vec_push(&v, (int64_t)a->steps.marks[d].n);
            for (size_t i = 0; rc == 0 && i < a->steps.marks[d].n; i++)
                rc = cs_vec_push(&v, a->steps.marks[d].a[i]);
        }
        if (rc != 0) {
            if (!err[0])
                snprintf(err, errlen, "out of memory");
            v.n = 0;
            cs_vec_push(&v, 0); /* the others are told */
        }
    }
    void *b = v.a;
    size_t len = v.n * sizeof *v.a;
    if (par->bcast(par, &b, &len) != 0) {
        cs_vec_free(&v);
        snprintf(err, errlen, "an analysis process stopped before the match");
        return -1;
    }
    if (par->rank == 0) {
        cs_vec_free(&v);
        return rc;
    }
    const int64_t *q = b, *end = q + len / sizeof *q;
    rc = -1;
    if (end - q >= 2 && q[0] == 1) {
        int64_t n = q[1];
        q += 2;
        cs_clock_row *rows = n > 0 && end - q >= 6 * n ? calloc((size_t)n, sizeof *rows) : NULL;
        for (int64_t i = 0; rows && i < n; i++, q += 6) {
            rows[i] = (cs_clock_row){ (int)q[0], (int)q[1], q[2], q[3], q[4], 0 };
            memcpy(&rows[i].drift_ppm, &q[5], sizeof rows[i].drift_ppm);
        }
        if ((rows || n == 0) && cs_store_alignment_put(a->ctx.st, rows, (int)n) == 0 && end - q >= 1) {
            int64_t nsteps = *q++;
            rc = cs__an_steps_alloc(&a->ctx, &a->steps, nsteps, err, errlen);
            for (int d = 0; rc == 0 && d < a->ctx.ndense; d++) {
                int64_t m = end - q >= 1 ? *q++ : -1;
                rc = m < 0 || end - q < m ? -1 : 0;
                for (int64_t i = 0; rc == 0 && i < m; i++)
                    rc = cs_vec_push(&a->steps.marks[d], q[i]);
                q += m > 0 ? m : 0;
            }
        }
        free(rows);
    }
    free(b);
    if (rc != 0 && !err[0])
        snprintf(err, errlen, "the root's clocks and steps did not arrive whole (the root failed before the match?)");
    return rc;
}

/* Each process matches its pieces into a store of its own
 * (SCRATCH/match-P.db) and sends what they add up to; the root adds them
 * all and copies every process's instances and waits into its results. */
static int cs_an_match_par(cs_an *a, char *err, size_t errlen)
{
    cs_par *par = a->share->par;
    char path[4200];
    cs__an_ctx_scratch_file(path, sizeof path, a->share->scratch, "match", par->rank);
    cs_an_piece *pieces = NULL;
    size_t npieces = 0;
    cs_store *ms = NULL;
    cs_awriter *mw = NULL, *w = a->ctx.w;
    cs_vec v = { NULL, 0, 0 };
    int times = getenv("COLLSCOPE_AN_TIMES") != NULL;
    cs_an_timer t0;
    cs_an_timer_start(&t0);
    int rc = cs_an_share_steps(a, err, errlen);
    if (rc == 0)
        rc = cs_an_pieces(a, &pieces, &npieces, err, errlen);
    if (times)
        cs_an_timer_print(stderr, "pieces", &t0);
    if (rc == 0)
        rc = cs_store_create(path, &ms, err, errlen);
    if (rc == 0 && !(mw = cs_store_analysis_begin(ms, err, errlen)))
        rc = -1;
    if (rc == 0) {
        a->ctx.w = mw;
        rc = cs__an_match(&a->ctx, &a->clocks, &a->steps, &a->coll, pieces, npieces, err, errlen);
        a->ctx.w = w;
    }
    if (times)
        cs_an_timer_print(stderr, "mymatch", &t0);
    if (mw) {
        if (cs_store_analysis_end(mw, rc == 0, -1, rc == 0 ? err : NULL, errlen) != 0)
            rc = -1;
    }
    cs_store_close(ms);
    free(pieces);
    /* every process sends, even one that failed: its empty share says so */
    if (rc == 0 && cs_an_match_pack(a, &v) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    a->stage = CS_AN_X_MATCH;
    if (!lens || par->gather(par, rc == 0 ? v.a : NULL, rc == 0 ? v.n * sizeof *v.a : 0, &all, lens) != 0) {
        cs_vec_free(&v);
        free(lens);
        free(all);
        if (rc == 0)
            snprintf(err, errlen, "an analysis process stopped during the match");
        return -1;
    }
    cs_vec_free(&v);
    if (times)
        cs_an_timer_print(stderr, "gathered", &t0);
    /* every match store is closed now: the root says whether all are whole
     * (process 1 then copies their waits while the root goes on) */
    int64_t whole = par->rank == 0;
    for (int r = 0; par->rank == 0 && r < par->size; r++)
        if (lens[r] == 0)
            whole = 0;
    void *wb = &whole;
    size_t wn = sizeof whole;
    a->stage = CS_AN_X_MATCHED;
    if (par->bcast(par, &wb, &wn) != 0) {
        free(lens);
        free(all);
        if (rc == 0)
            snprintf(err, errlen, "an analysis process stopped after the match");
        return -1;
    }
    if (par->rank != 0) {
        if (wn == sizeof whole)
            memcpy(&whole, wb, sizeof whole);
        free(wb);
    }
    if (a->share->matched)
        *a->share->matched = whole == 1;
    if (par->rank != 0) {
        free(lens);
        a->done = 1;
        return rc;
    }
    for (int r = 0; r < par->size && rc == 0; r++)
        if (lens[r] == 0) {
            snprintf(err, errlen, "analysis process %d could not match its share of the collectives", r);
            rc = -1;
        }
    if (rc == 0)
        rc = cs_an_match_add(a, all, lens, par->size, err, errlen);
    free(all);
    free(lens);
    char **files = rc == 0 ? cs__an_ctx_scratch_files(a->share->scratch, "match", par->size) : NULL;
    if (rc == 0 && !files) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = cs_awriter_copy_instances(a->ctx.w, files, par->size, err, errlen);
    cs__an_ctx_scratch_files_free(files, par->size);
    if (rc == 0)
        cs__an_match_finish(&a->ctx, &a->steps, &a->coll);
    return rc;
}

static void cs_an_free(cs_an *a)
{
    free(a->ctx.ops);
    free(a->ctx.op_n2n);
    free(a->clocks.clk);
    if (a->steps.marks)
        for (int d = 0; d < a->ctx.ndense; d++)
            cs_vec_free(&a->steps.marks[d]);
    free(a->steps.marks);
    if (a->coll.lateness)
        for (int d = 0; d < a->ctx.ndense; d++)
            cs_vec_free(&a->coll.lateness[d]);
    free(a->coll.lateness);
    cs__an_msgs_free(&a->msgs);
    cs__an_links_free(&a->links);
    free(a->ctx.byid);
    free(a->ctx.rank_of);
    free(a->steps.late);
    free(a->steps.late2);
    free(a->steps.nblate);
    free(a->steps.xgap);
    free(a->steps.step_last_exit);
    free(a->steps.step_begin);
    free(a->steps.step_end);
    free(a->steps.step_time);
    free(a->coll.times_last);
    free(a->coll.imposed);
    cs_map_free(&a->coll.comm_idx);
    free(a->coll.comm_ids);
    free(a->coll.comm_seq);
    free(a->coll.cstep_op);
    free(a->coll.cstep_xfer);
    free(a->coll.cstep_skew);
}

int cs_an_run(cs_store *st, FILE *log, char *err, size_t errlen)
{
    return cs__an_run(st, NULL, log, err, errlen);
}

int cs__an_run(cs_store *st, const cs_an_share *share, FILE *log, char *err, size_t errlen)
{
    cs_an a;
    memset(&a, 0, sizeof a);
    a.share = share;
    a.ctx.st = st;
    err[0] = '\0';
    int rc = -1;
    cs_proc *procs = NULL;
    int nproc = 0;
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &a.ctx.ops, &a.ctx.nops) != 0) {
        snprintf(err, errlen, "%s: cannot read the processes (corrupt trace?)", cs_store_path(st));
        goto out;
    }
    a.ctx.op_n2n = malloc(a.ctx.nops > 0 ? (size_t)a.ctx.nops : 1);
    if (!a.ctx.op_n2n) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < a.ctx.nops; i++)
        a.ctx.op_n2n[i] = (unsigned char)cs__an_ctx_op_is_n2n(&a.ctx, i);
    a.ctx.nproc = nproc;
    char backend[32] = "";
    cs_store_meta_get(st, "import_backend", backend, sizeof backend);
    a.ctx.c10d_async = strcmp(backend, "nccl") == 0;
    int world = cs_store_world_size(st);
    {
        /* the ranks present, indexed densely: memory follows their number,
         * not the largest rank id */
        int *ids = malloc((size_t)(nproc > 0 ? nproc : 1) * sizeof *ids);
        if (!ids) {
            snprintf(err, errlen, "out of memory (%d processes)", nproc);
            goto out;
        }
        for (int i = 0; i < nproc; i++)
            ids[i] = procs[i].rank;
        int irc = cs__an_ctx_index(&a.ctx, ids, nproc);
        free(ids);
        if (irc != 0) {
            snprintf(err, errlen, "out of memory (%d processes)", nproc);
            goto out;
        }
    }
    int n = a.ctx.ndense > 0 ? a.ctx.ndense : 1;
    a.clocks.ctx = &a.ctx;
    a.clocks.clk = calloc((size_t)n, sizeof *a.clocks.clk);
    a.steps.marks = calloc((size_t)n, sizeof *a.steps.marks);
    a.coll.lateness = calloc((size_t)n, sizeof *a.coll.lateness);
    a.coll.times_last = calloc((size_t)n, sizeof *a.coll.times_last);
    a.coll.imposed = calloc((size_t)n, sizeof *a.coll.imposed);
    if (!a.clocks.clk || !a.steps.marks || !a.coll.lateness || !a.coll.times_last || !a.coll.imposed) {
        snprintf(err, errlen, "out of memory (%d ranks)", a.ctx.ndense);
        goto out;
    }
    int negative = 0, neg_first = 0;
    for (int i = 0; i < nproc; i++) {
        int d = cs__an_ctx_ix(&a.ctx, procs[i].rank);
        if (d < 0) {
            if (!negative++)
                neg_first = procs[i].rank;
            continue;
        }
        snprintf(a.clocks.clk[d].clock, sizeof a.clocks.clk[d].clock, "%s", procs[i].clock);
        a.clocks.clk[d].start_ns = procs[i].start_ns;
    }
    a.ctx.ref_rank = a.ctx.ndense > 0 ? a.ctx.rank_of[0] : 0;
    a.ctx.world_size = world > 0 ? world : nproc;
    if (nproc == 0)
        cs__an_ctx_note(&a.ctx, "the trace holds no process and no span: nothing to analyse");
    if (negative)
        cs__an_ctx_note(&a.ctx, "processes with a negative rank are left out of the analysis: %d (rank %d%s)", negative,
                        neg_first, negative > 1 ? ", ..." : "");
    if (nproc > 0 && world > a.ctx.ndense) {
        /* how many are missing, and the first few ids of 0..world-1 that
         * are not present (never a table by id) */
        int missing = world - a.ctx.ndense, listed = 0, d = 0;
        char miss[128] = "";
        for (int r = 0; r < world && listed < missing && listed < 8; r++) {
            while (d < a.ctx.ndense && a.ctx.rank_of[d] < r)
                d++;
            if (d < a.ctx.ndense && a.ctx.rank_of[d] == r)
                continue;
            size_t l = strlen(miss);
            snprintf(miss + l, sizeof miss - l, "%s%d", l ? "," : "", r);
            listed++;
        }
        cs__an_ctx_note(&a.ctx,
                        "ranks missing from the trace (%d of %d): %s%s; instances they belong to are incomplete",
                        missing, world, miss, missing > listed ? ",..." : "");
    }
    for (int i = 0; i < nproc; i++)
        if (strcmp(procs[i].status, "crashed") == 0)
            cs__an_ctx_note(&a.ctx, "rank %d crashed; its last operations may be unmatched", procs[i].rank);
    if (nproc == 1)
        cs__an_ctx_note(&a.ctx, "a single rank: no cross-rank wait states");

    a.ctx.w = cs_store_analysis_begin(st, err, errlen);
    if (!a.ctx.w)
        goto out;
    {
        /* COLLSCOPE_AN_TIMES=1: the time of each pass on stderr (bench) */
        int (*const first[])(cs_an *, char *, size_t) = { cs_an_pass_pair, cs_an_pass_align };
        const char *const first_name[] = { "pair", "align" };
        for (size_t i = 0; i < 2; i++) {
            cs_an_timer t0;
            cs_an_timer_start(&t0);
            if (first[i](&a, err, errlen) != 0)
                goto fail;
            if (log && getenv("COLLSCOPE_AN_TIMES"))
                cs_an_timer_print(log, first_name[i], &t0);
        }
    }
    a.clocks.t_first = INT64_MAX;
    a.clocks.t_last = INT64_MIN;
    for (int i = 0; i < nproc; i++) {
        int d = cs__an_ctx_ix(&a.ctx, procs[i].rank);
        int64_t off = d >= 0 ? a.clocks.clk[d].offset_ns : 0;
        if (procs[i].start_ns + off < a.clocks.t_first)
            a.clocks.t_first = procs[i].start_ns + off;
        if (procs[i].end_ns + off > a.clocks.t_last)
            a.clocks.t_last = procs[i].end_ns + off;
    }
    if (a.clocks.t_first == INT64_MAX)
        a.clocks.t_first = a.clocks.t_last = 0;
    {
        /* COLLSCOPE_AN_TIMES=1: the time of each pass on stderr (bench) */
        static const struct {
            const char *name;
            int (*fn)(cs_an *, char *, size_t);
        } passes[] = { { "steps", cs_an_pass_steps },       { "match", cs_an_pass_match },
                       { "p2p", cs_an_pass_p2p },           { "layout", cs_an_pass_layout },
                       { "verdicts", cs_an_pass_verdicts }, { "tail", cs_an_pass_tail },
                       { "gpu", cs_an_pass_gpu },           { "kernels", cs_an_pass_kernels },
                       { "figures", cs_an_pass_figures },   { "whatif", cs_an_pass_whatif } };
        int times = log && getenv("COLLSCOPE_AN_TIMES") != NULL;
        for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
            cs_an_timer t0;
            cs_an_timer_start(&t0);
            if (passes[i].fn(&a, err, errlen) != 0)
                goto fail;
            if (times)
                cs_an_timer_print(log, passes[i].name, &t0);
            if (a.done)
                goto fail; /* nothing of its own to keep */
        }
    }
    if (a.coll.exit_before_entry)
        cs__an_ctx_note(&a.ctx, "%lld N-to-N spans still exit before the last entry after alignment",
                        (long long)a.coll.exit_before_entry);
    char buf[64];
    cs_store_meta_set(st, "analysis_notes", a.ctx.notes);
    cs_store_meta_set(st, "analysis_steps_from",
                      a.steps.step_source == 1   ? "markers"
                      : a.steps.step_source == 2 ? "period"
                                                 : "none");
    snprintf(buf, sizeof buf, "%d", a.steps.step_source == 2 ? a.steps.step_period : 0);
    cs_store_meta_set(st, "analysis_steps_period", buf);
    snprintf(buf, sizeof buf, "%.4f", a.steps.step_source == 2 ? a.steps.step_confidence : 0.0);
    cs_store_meta_set(st, "analysis_steps_confidence", buf);
    snprintf(buf, sizeof buf, "%d", a.steps.step_ranks_agreeing);
    cs_store_meta_set(st, "analysis_steps_ranks_agreeing", buf);
    snprintf(buf, sizeof buf, "%d", a.steps.step_ranks_checked);
    cs_store_meta_set(st, "analysis_steps_ranks_searched", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)(a.steps.nsteps > 0 ? a.steps.step_comm_ns : -1));
    cs_store_meta_set(st, "analysis_steps_comm_ns", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.coll.instances);
    cs_store_meta_set(st, "analysis_instances", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.coll.incomplete);
    cs_store_meta_set(st, "analysis_incomplete", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.links.p2p_pairs);
    cs_store_meta_set(st, "analysis_p2p", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.clocks.align_instances);
    cs_store_meta_set(st, "analysis_align_instances", buf);
    if (cs_store_analysis_end(a.ctx.w, 1, cs_store_count_spans(st), err, errlen) != 0) {
        a.ctx.w = NULL;
        goto out;
    }
    a.ctx.w = NULL;
    rc = 0;
    goto out;
fail:
    cs_store_analysis_end(a.ctx.w, 0, 0, NULL, 0);
    a.ctx.w = NULL;
    if (a.done)
        rc = 0;
out:
    if (rc != 0 && share)
        cs__an_par_finish(share, a.stage);
    free(procs);
    cs_an_free(&a);
    return rc;
}

/* A failed process's turn in a gather: an empty share. */
static void cs_an_gather_nothing(cs_par *par)
{
    void *all = NULL;
    size_t *lens = calloc((size_t)par->size, sizeof *lens);
    if (lens)
        par->gather(par, NULL, 0, &all, lens);
    free(all);
    free(lens);
}

/* A failed process's turn in a broadcast: the root sends a zero, which
 * says "failed" to the others; elsewhere what came is dropped. */
static void cs_an_bcast_zero(cs_par *par)
{
    int64_t zero = 0;
    void *b = &zero;
    size_t n = sizeof zero;
    if (par->bcast(par, &b, &n) == 0 && par->rank != 0)
        free(b);
}

void cs__an_par_finish(const cs_an_share *share, int stage)
{
    cs_par *par = share->par;
    if (par->size < 2)
        return;
    if (stage < CS_AN_X_ROUTE) {
        int all_ok;
        cs_an_barrier(par, 0, &all_ok);
    }
    if (stage < CS_AN_X_PAIR)
        cs_an_gather_nothing(par);
    if (stage < CS_AN_X_STEPS)
        cs_an_bcast_zero(par);
    if (stage < CS_AN_X_MATCH)
        cs_an_gather_nothing(par);
    if (stage < CS_AN_X_MATCHED)
        cs_an_bcast_zero(par);
}
