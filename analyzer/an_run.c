/* an_run.c: the analysis of one store: the passes in order, and the small
 * helpers they share. */
#include "config.h"
#include "analyzer/analysis.h"
#include "common/stats.h"
#include "analyzer/whatif.h"

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

static double cs_an_timer_diff(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void cs_an_timer_print(FILE *log, const char *name, const cs_an_timer *c0)
{
    cs_an_timer c1;
    cs_an_timer_start(&c1);
    fprintf(log, "collscope: pass %-8s %.3f s (cpu %.3f s)\n", name, cs_an_timer_diff(&c0->wall, &c1.wall),
            cs_an_timer_diff(&c0->cpu, &c1.cpu));
}

/* One analysis: the shared context and each pass's results. */
typedef struct cs_an {
    cs_an_ctx ctx;
    cs_an_msgs msgs;
    cs_an_clocks clocks;
    cs_an_steps steps;
    cs_an_coll coll;
    cs_an_links links;
} cs_an;

/* The passes in order, each with what it reads and what it fills. */
static int cs_an_pass_pair(cs_an *a, char *err, size_t errlen)
{
    return cs__an_p2p_collect(&a->ctx, &a->msgs, &a->steps, err, errlen);
}
static int cs_an_pass_align(cs_an *a, char *err, size_t errlen)
{
    return cs__an_align(&a->ctx, &a->msgs, &a->clocks, err, errlen);
}
static int cs_an_pass_steps(cs_an *a, char *err, size_t errlen)
{
    return cs__an_match_steps(&a->ctx, &a->clocks, &a->steps, err, errlen);
}
static int cs_an_pass_match(cs_an *a, char *err, size_t errlen)
{
    return cs__an_match(&a->ctx, &a->clocks, &a->steps, &a->coll, err, errlen);
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
static int cs_an_pass_layout(cs_an *a, char *err, size_t errlen)
{
    return cs__an_layout(&a->ctx, &a->msgs, err, errlen);
}
static int cs_an_pass_whatif(cs_an *a, char *err, size_t errlen)
{
    return cs__an_whatif(&a->ctx, &a->steps, &a->msgs, err, errlen);
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
    free(a->msgs.msgs);
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
    free(a->coll.cstep_op);
    free(a->coll.cstep_xfer);
    free(a->coll.cstep_skew);
}

int cs_an_run(cs_store *st, FILE *log, char *err, size_t errlen)
{
    cs_an a;
    memset(&a, 0, sizeof a);
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
                       { "whatif", cs_an_pass_whatif } };
        int times = log && getenv("COLLSCOPE_AN_TIMES") != NULL;
        for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
            cs_an_timer t0;
            cs_an_timer_start(&t0);
            if (passes[i].fn(&a, err, errlen) != 0)
                goto fail;
            if (times)
                cs_an_timer_print(log, passes[i].name, &t0);
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
out:
    free(procs);
    cs_an_free(&a);
    return rc;
}
