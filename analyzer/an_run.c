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

/* ---- containers ---- */

int64_t cs_vec_median(cs_vec *v)
{
    return cs_stats_median_i64(v->a, v->n);
}

int64_t cs_vec_mad(const cs_vec *v, int64_t m)
{
    return cs_stats_mad_i64(v->a, v->n, m);
}

void cs_an_note(cs_an *a, const char *fmt, ...)
{
    size_t l = strlen(a->notes);
    if (l + 4 >= sizeof a->notes)
        return;
    if (l)
        a->notes[l++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->notes + l, sizeof a->notes - l, fmt, ap);
    va_end(ap);
}

int cs_an_kind_is(const cs_an *a, int op, const char *kind)
{
    return op >= 0 && op < a->nops && strcmp(a->ops[op].kind, kind) == 0;
}

/* N-to-N: every member depends on every other (not scans, not rooted). */
static int cs_an_op_is_n2n(const cs_an *a, int op)
{
    if (!cs_an_kind_is(a, op, "coll") || a->ops[op].nonblocking)
        return 0;
    const char *nm = a->ops[op].name;
    return strstr(nm, "scan") == NULL && strstr(nm, "Scan") == NULL;
}

int cs_an_is_n2n(const cs_an *a, int op)
{
    if (op < 0 || op >= a->nops)
        return 0;
    return a->op_n2n ? a->op_n2n[op] : cs_an_op_is_n2n(a, op);
}

/* ---- the analysis ---- */

static void cs_an_free(cs_an *a)
{
    free(a->ops);
    free(a->op_n2n);
    free(a->present);
    free(a->clk);
    if (a->marks)
        for (int r = 0; r < a->nranks; r++)
            cs_vec_free(&a->marks[r]);
    free(a->marks);
    if (a->lateness)
        for (int r = 0; r < a->nranks; r++)
            cs_vec_free(&a->lateness[r]);
    free(a->lateness);
    if (a->pair_xfer)
        for (size_t i = 0; i < (size_t)a->nranks * (size_t)a->nranks; i++) {
            cs_vec_free(&a->pair_xfer[i]);
            cs_vec_free(&a->pair_late[i]);
        }
    free(a->msgs);
    free(a->pair_xfer);
    free(a->pair_late);
    free(a->pair_t0);
    free(a->pair_t1);
    free(a->late);
    free(a->late2);
    free(a->nblate);
    free(a->xgap);
    free(a->step_last_exit);
    free(a->step_begin);
    free(a->step_end);
    free(a->step_time);
    free(a->times_last);
    free(a->imposed);
    cs_map_free(&a->comm_idx);
    free(a->comm_ids);
    free(a->cstep_op);
    free(a->cstep_xfer);
    free(a->cstep_skew);
}

int cs_an_run(cs_store *st, FILE *log, char *err, size_t errlen)
{
    cs_an a;
    memset(&a, 0, sizeof a);
    a.st = st;
    err[0] = '\0';
    int rc = -1;
    cs_proc *procs = NULL;
    int nproc = 0;
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &a.ops, &a.nops) != 0) {
        snprintf(err, errlen, "%s: cannot read the processes (corrupt trace?)", cs_store_path(st));
        goto out;
    }
    a.op_n2n = malloc(a.nops > 0 ? (size_t)a.nops : 1);
    if (!a.op_n2n) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < a.nops; i++)
        a.op_n2n[i] = (unsigned char)cs_an_op_is_n2n(&a, i);
    int maxr = -1;
    for (int i = 0; i < nproc; i++)
        if (procs[i].rank > maxr && procs[i].rank < (1 << 20))
            maxr = procs[i].rank;
    int world = cs_store_world_size(st);
    if (world > maxr + 1 && world < (1 << 20))
        maxr = world - 1; /* ranks at the end that left no file */
    a.nranks = maxr + 1 > 0 ? maxr + 1 : 1;
    a.nproc = nproc;
    int n = a.nranks;
    a.present = calloc((size_t)n, sizeof *a.present);
    a.clk = calloc((size_t)n, sizeof *a.clk);
    a.marks = calloc((size_t)n, sizeof *a.marks);
    a.lateness = calloc((size_t)n, sizeof *a.lateness);
    a.times_last = calloc((size_t)n, sizeof *a.times_last);
    a.imposed = calloc((size_t)n, sizeof *a.imposed);
    size_t np = (size_t)n * (size_t)n;
    a.pair_xfer = calloc(np, sizeof *a.pair_xfer);
    a.pair_late = calloc(np, sizeof *a.pair_late);
    a.pair_t0 = calloc(np, sizeof *a.pair_t0);
    a.pair_t1 = calloc(np, sizeof *a.pair_t1);
    if (!a.present || !a.clk || !a.marks || !a.lateness || !a.times_last || !a.imposed || !a.pair_xfer ||
        !a.pair_late || !a.pair_t0 || !a.pair_t1) {
        snprintf(err, errlen, "out of memory (%d ranks)", n);
        goto out;
    }
    a.ref_rank = -1;
    for (int i = 0; i < nproc; i++) {
        int r = procs[i].rank;
        if (r < 0 || r >= n)
            continue;
        a.present[r] = 1;
        snprintf(a.clk[r].clock, sizeof a.clk[r].clock, "%s", procs[i].clock);
        a.clk[r].start_ns = procs[i].start_ns;
        if (a.ref_rank < 0 || r < a.ref_rank)
            a.ref_rank = r;
    }
    if (a.ref_rank < 0)
        a.ref_rank = 0;
    a.world_size = world > 0 ? world : nproc;
    if (nproc == 0)
        cs_an_note(&a, "the trace holds no process and no span: nothing to analyse");
    int missing = 0;
    char miss[256] = "";
    for (int r = 0; r < n; r++)
        if (!a.present[r]) {
            missing++;
            size_t l = strlen(miss);
            if (l < sizeof miss - 16)
                snprintf(miss + l, sizeof miss - l, "%s%d", l ? "," : "", r);
        }
    if (missing && nproc > 0)
        cs_an_note(&a, "ranks missing from the trace (of %d): %s; instances they belong to are incomplete", n, miss);
    for (int i = 0; i < nproc; i++)
        if (strcmp(procs[i].status, "crashed") == 0)
            cs_an_note(&a, "rank %d crashed; its last operations may be unmatched", procs[i].rank);
    if (nproc == 1)
        cs_an_note(&a, "a single rank: no cross-rank wait states");

    a.w = cs_store_analysis_begin(st, err, errlen);
    if (!a.w)
        goto out;
    {
        /* COLLSCOPE_AN_TIMES=1: the time of each pass on stderr (bench) */
        int (*const first[])(cs_an *, char *, size_t) = { cs_an_p2p_collect, cs_an_align };
        const char *const first_name[] = { "pair", "align" };
        for (size_t i = 0; i < 2; i++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (first[i](&a, err, errlen) != 0)
                goto fail;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (log && getenv("COLLSCOPE_AN_TIMES"))
                fprintf(log, "collscope: pass %-8s %.3f s\n", first_name[i],
                        (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        }
    }
    a.t_first = INT64_MAX;
    a.t_last = INT64_MIN;
    for (int i = 0; i < nproc; i++) {
        int r = procs[i].rank;
        int64_t off = r >= 0 && r < n ? a.clk[r].offset_ns : 0;
        if (procs[i].start_ns + off < a.t_first)
            a.t_first = procs[i].start_ns + off;
        if (procs[i].end_ns + off > a.t_last)
            a.t_last = procs[i].end_ns + off;
    }
    if (a.t_first == INT64_MAX)
        a.t_first = a.t_last = 0;
    {
        /* COLLSCOPE_AN_TIMES=1: the time of each pass on stderr (bench) */
        static const struct {
            const char *name;
            int (*fn)(cs_an *, char *, size_t);
        } passes[] = { { "steps", cs_an_steps_prepare }, { "match", cs_an_match }, { "p2p", cs_an_p2p },
                       { "verdicts", cs_an_verdicts },   { "tail", cs_an_tail },   { "whatif", cs_an_whatif } };
        int times = log && getenv("COLLSCOPE_AN_TIMES") != NULL;
        for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (passes[i].fn(&a, err, errlen) != 0)
                goto fail;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (times)
                fprintf(log, "collscope: pass %-8s %.3f s\n", passes[i].name,
                        (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        }
    }
    if (a.exit_before_entry)
        cs_an_note(&a, "%lld N-to-N spans still exit before the last entry after alignment",
                   (long long)a.exit_before_entry);
    char buf[64];
    cs_store_meta_set(st, "analysis_notes", a.notes);
    cs_store_meta_set(st, "analysis_steps_from",
                      a.step_source == 1   ? "markers"
                      : a.step_source == 2 ? "period"
                                           : "none");
    snprintf(buf, sizeof buf, "%lld", (long long)a.instances);
    cs_store_meta_set(st, "analysis_instances", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.incomplete);
    cs_store_meta_set(st, "analysis_incomplete", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.p2p_pairs);
    cs_store_meta_set(st, "analysis_p2p", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)a.align_instances);
    cs_store_meta_set(st, "analysis_align_instances", buf);
    if (cs_store_analysis_end(a.w, 1, cs_store_count_spans(st), err, errlen) != 0) {
        a.w = NULL;
        goto out;
    }
    a.w = NULL;
    rc = 0;
    goto out;
fail:
    cs_store_analysis_end(a.w, 0, 0, NULL, 0);
    a.w = NULL;
out:
    free(procs);
    cs_an_free(&a);
    return rc;
}
