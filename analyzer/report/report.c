/* report.c: the report model: the stored analysis read back from a
 * trace (cs_report_data) and the trace's own summary (cs_report_trace),
 * what every report writer, the gates, diff and check-estimate read. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/stats.h"
#include "common/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- apply mode's guard (fuse_guard table) ---- */

typedef struct cs_guard_sum {
    cs_report_data *d;
    size_t len;
    int64_t comm;
    int64_t windows, fused;
    int started, nccl;
} cs_guard_sum;

static void cs_guard_put(cs_guard_sum *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cs_guard_put(cs_guard_sum *g, const char *fmt, ...)
{
    size_t cap = sizeof g->d->guard;
    if (g->len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->d->guard + g->len, cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len = g->len + (size_t)n < cap ? g->len + (size_t)n : cap - 1;
}

static void cs_guard_close_comm(cs_guard_sum *g)
{
    if (!g->started)
        return;
    char name[200];
    cs_store_comms_label(&g->d->comms, g->comm, name, sizeof name);
    cs_guard_put(g, "%s: %lld windows measured%s, %lld run fused (the trial's and the checks' included)\n", name,
                 (long long)g->windows, g->nccl ? " (NCCL: time in NCCL and CUDA calls)" : "", (long long)g->fused);
    g->windows = g->fused = 0;
    g->started = 0;
}

static int cs_guard_row_cb(const cs_guard_row *r, void *arg)
{
    cs_guard_sum *g = arg;
    if (g->started && r->comm != g->comm)
        cs_guard_close_comm(g);
    g->comm = r->comm;
    g->started = 1;
    g->nccl = strcmp(r->family, "nccl") == 0;
    if (strcmp(r->what, "window") == 0) {
        g->windows++;
        g->fused += r->setting != 0;
        return 0;
    }
    char b1[32], b2[32], b3[32], name[200];
    cs_store_comms_label(&g->d->comms, r->comm, name, sizeof name);
    /* one unit for both times of a sentence */
    const int64_t v[2] = { (int64_t)r->chosen_ns, (int64_t)r->unfused_ns };
    cs_tunit u = cs__report_tunit_of(v, 2);
    if (r->buffer > 0)
        cs_guard_put(
            g, "%s, from window %lld: fused, buffers of %s (%s: %.2fx the unfused time per call, %s against %s)\n",
            name, (long long)r->window, cs_fmt_bytes(r->buffer, b1, sizeof b1), r->why, r->ratio,
            cs__report_tstr(&u, v[0], b2, sizeof b2), cs__report_tstr(&u, v[1], b3, sizeof b3));
    else if (r->ratio > 0)
        cs_guard_put(
            g, "%s, from window %lld: unfused (%s: the best fused setting took %.2fx the unfused time per call)\n",
            name, (long long)r->window, r->why, r->ratio);
    else
        cs_guard_put(g, "%s, from window %lld: unfused (%s)\n", name, (long long)r->window, r->why);
    return 0;
}

/* What apply mode's guard ran and chose, as lines for every report. */
static void cs_report_guard(cs_store *st, cs_report_data *d)
{
    cs_guard_sum g = { .d = d };
    d->guard[0] = 0;
    if (cs_store_fuse_guard(st, cs_guard_row_cb, &g) == 0)
        cs_guard_close_comm(&g);
}

/* ---- the stored analysis ---- */

/* The arrays of cs_report_data being filled, with their capacities. */
typedef struct cs_loader {
    cs_report_data *d;
    size_t capStrag, capSteps, capRstats, capTails, capModels, capProps;
} cs_loader;

static int cs_ld_model(const cs_model_row *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->models, l->capModels, (size_t)l->d->nmodels + 1) != 0)
        return -1;
    l->d->models[l->d->nmodels++] = *g;
    return 0;
}

static int cs_ld_prop(const cs_proposal *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->props, l->capProps, (size_t)l->d->nprops + 1) != 0)
        return -1;
    l->d->props[l->d->nprops++] = *g;
    return 0;
}

static int cs_ld_strag(const cs_straggler *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->strag, l->capStrag, (size_t)l->d->nstrag + 1) != 0)
        return -1;
    l->d->strag[l->d->nstrag++] = *g;
    return 0;
}

static int cs_ld_step(const cs_step_row *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->steps, l->capSteps, (size_t)l->d->nsteps + 1) != 0)
        return -1;
    l->d->steps[l->d->nsteps++] = *g;
    return 0;
}

static int cs_ld_rank(const cs_rank_stat *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->rstats, l->capRstats, (size_t)l->d->nrstats + 1) != 0)
        return -1;
    l->d->rstats[l->d->nrstats++] = *g;
    return 0;
}

static int cs_ld_tail(const cs_tail_row *g, void *arg)
{
    cs_loader *l = arg;
    if (CS_VEC_RESERVE(l->d->tails, l->capTails, (size_t)l->d->ntails + 1) != 0)
        return -1;
    l->d->tails[l->d->ntails++] = *g;
    return 0;
}

static int cs_ld_layout(const cs_layout_row *g, void *arg)
{
    cs_loader *l = arg;
    cs_layout_row *a = realloc(l->d->lay, ((size_t)l->d->nlay + 1) * sizeof *a);
    if (!a)
        return -1;
    l->d->lay = a;
    a[l->d->nlay++] = *g;
    return 0;
}

static int cs_ld_slowdown(const cs_slowdown_row *g, void *arg)
{
    cs_loader *l = arg;
    cs_slowdown_row *a = realloc(l->d->sd, ((size_t)l->d->nsd + 1) * sizeof *a);
    if (!a)
        return -1;
    l->d->sd = a;
    a[l->d->nsd++] = *g;
    return 0;
}

static int cs_ld_live(const cs_store_alarm_row *g, void *arg)
{
    cs_loader *l = arg;
    cs_store_alarm_row *a = realloc(l->d->live, ((size_t)l->d->nlive + 1) * sizeof *a);
    if (!a)
        return -1;
    l->d->live = a;
    a[l->d->nlive++] = *g;
    return 0;
}

static int cs_ld_gpu(const cs_gpu_time_row *g, void *arg)
{
    cs_loader *l = arg;
    if (g->step != -1)
        return 0; /* the steps' rows stay in the table */
    cs_gpu_time_row *a = realloc(l->d->gpu, ((size_t)l->d->ngpu + 1) * sizeof *a);
    if (!a)
        return -1;
    l->d->gpu = a;
    a[l->d->ngpu++] = *g;
    return 0;
}

static int cs_ld_kernel(const cs_kernel_row *k, void *arg)
{
    cs_loader *l = arg;
    cs_kernel_row *a = realloc(l->d->kern, ((size_t)l->d->nkern + 1) * sizeof *a);
    if (!a)
        return -1;
    l->d->kern = a;
    a[l->d->nkern++] = *k;
    return 0;
}

static int64_t cs_meta_i64(cs_store *st, const char *key, int64_t dflt)
{
    char buf[64];
    if (cs_store_meta_get(st, key, buf, sizeof buf) != 0 || !buf[0])
        return dflt;
    return strtoll(buf, NULL, 10);
}

static double cs_meta_dbl(cs_store *st, const char *key, double dflt)
{
    char buf[64];
    if (cs_store_meta_get(st, key, buf, sizeof buf) != 0 || !buf[0])
        return dflt;
    return strtod(buf, NULL);
}

int cs_report_load(cs_store *st, cs_report_data *d)
{
    memset(d, 0, sizeof *d);
    cs_loader l = { d, 0, 0, 0, 0, 0, 0 };
    if (cs_store_procs(st, &d->procs, &d->nproc) != 0 || cs_store_ops(st, &d->ops, &d->nops) != 0 ||
        cs_store_stragglers(st, cs_ld_strag, &l) != 0 || cs_store_steps_list(st, cs_ld_step, &l) != 0 ||
        cs_store_rank_stats(st, cs_ld_rank, &l) != 0 || cs_store_tails(st, cs_ld_tail, &l) != 0 ||
        cs_store_models(st, cs_ld_model, &l) != 0 || cs_store_proposals(st, cs_ld_prop, &l) != 0)
        return -1;
    /* Without the names (a damaged comms table), ids are shown as comm:HEX. */
    cs_store_comms_load(st, &d->comms);
    d->wf_measured_ns = cs_meta_i64(st, "whatif_measured_ns", -1);
    d->wf_replay_ns = cs_meta_i64(st, "whatif_replay_ns", -1);
    /* a replay that deadlocked has a measured step and no replayed one:
     * it did not run (whatif_note says why), and its figures are none */
    d->has_whatif = d->wf_measured_ns >= 0 && d->wf_replay_ns >= 0;
    d->wf_model_ns = cs_meta_i64(st, "whatif_model_ns", -1);
    d->wf_ontime_ns = cs_meta_i64(st, "whatif_ontime_ns", -1);
    d->wf_ontime_gain_ns = cs_meta_i64(st, "whatif_ontime_gain_ns", 0);
    d->wf_comm_step_ns = cs_meta_i64(st, "whatif_comm_step_ns", -1);
    d->wf_replay_error = cs_meta_dbl(st, "whatif_replay_error", -1);
    d->wf_model_error = cs_meta_dbl(st, "whatif_model_error", -1);
    d->wf_ar_calls_per_step = cs_meta_dbl(st, "whatif_allreduce_calls_per_step", -1);
    d->wf_memcpy_gbps = cs_meta_dbl(st, "whatif_memcpy_gbps", 0);
    d->fuse_members = cs_meta_i64(st, "whatif_fuse_members", 0);
    d->fused_calls = cs_meta_i64(st, "whatif_fused_calls", 0);
    cs_store_meta_get(st, "whatif_note", d->wf_note, sizeof d->wf_note);
    {
        char fmt[24] = "", be[24] = "";
        if (cs_store_meta_get(st, "import_format", fmt, sizeof fmt) == 0 && fmt[0]) {
            cs_store_meta_get(st, "import_backend", be, sizeof be);
            snprintf(d->source, sizeof d->source, "import %s%s%s%s", fmt, be[0] ? " (" : "", be, be[0] ? ")" : "");
        } else
            snprintf(d->source, sizeof d->source, "collscope run");
    }
    cs_store_meta_get(st, "whatif_declined", d->wf_declined, sizeof d->wf_declined);
    cs_report_guard(st, d);
    char buf[64];
    d->spans = cs_store_count_spans(st);
    if (cs_store_meta_get(st, "analysis_instances", buf, sizeof buf) == 0)
        d->instances = strtoll(buf, NULL, 10);
    if (cs_store_meta_get(st, "analysis_incomplete", buf, sizeof buf) == 0)
        d->incomplete = strtoll(buf, NULL, 10);
    if (cs_store_meta_get(st, "analysis_p2p", buf, sizeof buf) == 0)
        d->p2p = strtoll(buf, NULL, 10);
    cs_store_meta_get(st, "analysis_notes", d->notes, sizeof d->notes);
    if (cs_store_meta_get(st, "analysis_steps_from", d->step_source, sizeof d->step_source) != 0)
        snprintf(d->step_source, sizeof d->step_source, "none");
    d->step_period = (int)cs_meta_i64(st, "analysis_steps_period", 0);
    d->step_confidence = cs_meta_dbl(st, "analysis_steps_confidence", 0);
    d->step_ranks_agreeing = (int)cs_meta_i64(st, "analysis_steps_ranks_agreeing", 0);
    d->step_ranks_searched = (int)cs_meta_i64(st, "analysis_steps_ranks_searched", 0);
    d->step_comm_ns = cs_meta_i64(st, "analysis_steps_comm_ns", -1);
    if (cs_store_meta_get(st, "analysis_layout", d->layout, sizeof d->layout) != 0 ||
        sscanf(d->layout, "dp %d x pp %d, tp %d", &d->lay_dp, &d->lay_pp, &d->lay_tp) != 3)
        d->layout[0] = '\0';
    if (d->layout[0]) {
        cs_store_meta_get(st, "analysis_layout_source", d->layout_source, sizeof d->layout_source);
        if (cs_store_layout(st, cs_ld_layout, &l) != 0)
            return -1;
    }
    if (cs_store_meta_get(st, "slowdown_verdict", d->sd_verdict, sizeof d->sd_verdict) == 0 && d->sd_verdict[0]) {
        d->has_slowdown = 1;
        d->sd_S = cs_meta_dbl(st, "slowdown_S", 0);
        d->sd_replay_error = cs_meta_dbl(st, "slowdown_replay_error", 0);
        d->sd_actual_ns = cs_meta_i64(st, "slowdown_actual_ns", 0);
        d->sd_ideal_ns = cs_meta_i64(st, "slowdown_ideal_ns", 0);
        cs_store_meta_get(st, "slowdown_culprit", d->sd_culprit, sizeof d->sd_culprit);
        cs_store_meta_get(st, "slowdown_graph", d->sd_graph, sizeof d->sd_graph);
        cs_store_meta_get(st, "slowdown_text", d->sd_text, sizeof d->sd_text);
        if (cs_store_slowdown(st, cs_ld_slowdown, &l) != 0)
            return -1;
    }
    if (cs_store_gpu_time(st, cs_ld_gpu, &l) != 0 || cs_store_kernel_stats(st, cs_ld_kernel, &l) != 0 ||
        cs_store_live_alarms(st, cs_ld_live, &l) != 0)
        return -1;
    /* the same diagnosis as `collscope status` post mortem */
    cs_failure_model fm;
    char ferr[512];
    if (cs_failure_from_store(st, &fm, ferr, sizeof ferr) == 0)
        cs_failure_diagnose(&fm, CS_FAILURE_POST_AFTER_S, &d->failures);
    else
        d->failures_unread = 1;
    cs_failure_model_free(&fm);
    if (d->nsteps > 0) {
        int64_t *t = malloc((size_t)d->nsteps * sizeof *t), *w = malloc((size_t)d->nsteps * sizeof *w);
        if (!t || !w) {
            free(t);
            free(w);
            return -1;
        }
        for (int i = 0; i < d->nsteps; i++)
            t[i] = d->steps[i].time_ns, w[i] = d->steps[i].whatif_ns;
        qsort(t, (size_t)d->nsteps, sizeof *t, cs_stats_cmp_i64);
        qsort(w, (size_t)d->nsteps, sizeof *w, cs_stats_cmp_i64);
        d->step_median_ns = t[d->nsteps / 2];
        d->step_p90_ns = cs_stats_quantile(t, (size_t)d->nsteps, 0.9);
        d->whatif_median_ns = w[d->nsteps / 2];
        free(t);
        free(w);
    }
    return 0;
}

void cs_report_free(cs_report_data *d)
{
    free(d->procs);
    free(d->strag);
    free(d->steps);
    free(d->rstats);
    free(d->tails);
    free(d->ops);
    free(d->models);
    free(d->props);
    free(d->lay);
    free(d->sd);
    free(d->gpu);
    free(d->live);
    free(d->kern);
    cs_store_comms_free(&d->comms);
    cs_failure_list_free(&d->failures);
    memset(d, 0, sizeof *d);
}

const char *cs_report_opname(const cs_report_data *d, int op)
{
    return op >= 0 && op < d->nops && d->ops[op].name[0] ? d->ops[op].name : "?";
}

const char *cs_report_commname(const cs_report_data *d, int64_t comm, char *buf, size_t len)
{
    return cs_store_comms_name(&d->comms, comm, buf, len);
}

/* The same collective group (op name, size bucket, call site) in another
 * run, or NULL. */
const cs_tail_row *cs__report_find_tail(const cs_report_data *d, const cs_report_data *in, const cs_tail_row *t)
{
    const char *name = cs_report_opname(d, t->op);
    char cn[CS_COMMS_DISPLAY_MAX], xn[CS_COMMS_DISPLAY_MAX];
    cs_report_commname(d, t->comm, cn, sizeof cn);
    const cs_tail_row *only = NULL;
    int nalike = 0;
    for (int i = 0; i < in->ntails; i++) {
        const cs_tail_row *x = &in->tails[i];
        if (x->bucket != t->bucket || strcmp(x->callsite, t->callsite) != 0 ||
            strcmp(cs_report_opname(in, x->op), name) != 0)
            continue;
        if (strcmp(cs_report_commname(in, x->comm, xn, sizeof xn), cn) == 0)
            return x; /* the same communicator, by name */
        only = x;
        nalike++;
    }
    /* a group on a communicator named otherwise in the other run: the one
     * group of that op, size and call site there, never one of several */
    return nalike == 1 ? only : NULL;
}

const char *cs__report_tail_site(const cs_report_data *d, int i, int n, char *buf, size_t len)
{
    const cs_tail_row *t = &d->tails[i];
    int alike = 0;
    for (int j = 0; j < n && j < d->ntails && !alike; j++)
        alike = j != i && d->tails[j].op == t->op && d->tails[j].bucket == t->bucket &&
                strcmp(d->tails[j].callsite, t->callsite) == 0 && d->tails[j].comm != t->comm;
    if (!alike) {
        snprintf(buf, len, "%s", t->callsite);
        return buf;
    }
    char cn[CS_COMMS_DISPLAY_MAX];
    snprintf(buf, len, "%s%son %s", t->callsite, t->callsite[0] ? " " : "",
             cs_report_commname(d, t->comm, cn, sizeof cn));
    return buf;
}

void cs__report_model_name(char *buf, size_t len, const cs_report_data *d, const cs_model_row *m)
{
    char name[CS_COMMS_DISPLAY_MAX];
    snprintf(buf, len, "%s%s%s on %s", cs_report_opname(d, m->op), m->algo[0] ? " " : "", m->algo,
             cs_report_commname(d, m->comm, name, sizeof name));
}

/* ---- the trace itself ---- */

static int cs_report_group_by_total(const void *x, const void *y)
{
    const cs_group_stat *a = x, *b = y;
    return a->total < b->total ? 1 : a->total > b->total ? -1 : strcmp(a->key, b->key);
}

/* The groups of one kind, the costliest first: as the analysis kept them,
 * else from the spans. */
static int cs_report_groups(cs_store *st, const char *by, cs_group_stat **out, size_t *n)
{
    int rc = cs_store_group_stats_stored(st, by, out, n);
    if (rc < 0 || (rc == 0 && cs_store_group_stats(st, by, out, n) != 0))
        return -1;
    if (*n)
        qsort(*out, *n, sizeof **out, cs_report_group_by_total);
    return 0;
}

static int cs_report_rank_row(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    cs_report_trace *t = arg;
    if (CS_VEC_RESERVE(t->ranks, t->capRanks, t->nranks + 1) != 0)
        return -1;
    t->ranks[t->nranks++] = (cs_report_rank){ rank, busy, wall, spans };
    return 0;
}

static int cs_report_overlap_row(int rank, int64_t comm_ns, int64_t exposed_ns, void *arg)
{
    cs_report_trace *t = arg;
    if (CS_VEC_RESERVE(t->overlap, t->capOverlap, t->noverlap + 1) != 0)
        return -1;
    t->overlap[t->noverlap++] = (cs_report_overlap){ rank, comm_ns, exposed_ns };
    return 0;
}

/* The time in calls of each rank: as the analysis kept it, else from the
 * spans. */
static int cs_report_busy(cs_store *st, cs_report_trace *t)
{
    int rc = cs_store_rank_busy_stored(st, cs_report_rank_row, t);
    if (rc == 0)
        rc = cs_store_rank_busy(st, cs_report_rank_row, t);
    return rc < 0 ? -1 : 0;
}

int cs_report_trace_load(cs_store *st, cs_report_trace *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", cs_store_path(st));
    if (cs_store_procs(st, &t->procs, &t->nproc) != 0 || cs_report_groups(st, "op", &t->by_op, &t->nby_op) != 0 ||
        cs_report_groups(st, "comm", &t->by_comm, &t->nby_comm) != 0 ||
        cs_report_groups(st, "callsite", &t->by_site, &t->nby_site) != 0 || cs_report_busy(st, t) != 0)
        return -1;
    cs_store_comms_load(st, &t->comms);
    /* GPU overlap (CUPTI activity): printed only when the trace has it */
    if (cs_store_gpu_overlap(st, cs_report_overlap_row, t) <= 0)
        t->noverlap = 0;
    return 0;
}

void cs_report_trace_free(cs_report_trace *t)
{
    free(t->procs);
    free(t->by_op);
    free(t->by_comm);
    free(t->by_site);
    free(t->ranks);
    free(t->overlap);
    cs_store_comms_free(&t->comms);
    memset(t, 0, sizeof *t);
}

int cs_report_open(const cs_source *src, cs_report_data *d, FILE *log, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    cs_store *st = cs_analysis_open(src, 0, 0, log, err, errlen);
    if (!st)
        return -1;
    int rc = cs_report_load(st, d);
    char from[8], note[8];
    if (rc != 0)
        snprintf(err, errlen, "%s: cannot read the stored analysis", cs_store_path(st));
    else if (cs_store_recovered(st, from, sizeof from, note, sizeof note))
        rc = 1; /* what could be read: a damaged trace, a rank store left out (log said which) */
    cs_store_close(st);
    return rc;
}

const char *cs__report_gpu_unit(const cs_report_data *d, double *ns_per)
{
    int64_t m = 0;
    for (int i = 0; i < d->ngpu; i++)
        if (d->gpu[i].window_ns > m)
            m = d->gpu[i].window_ns;
    static const struct {
        double ns;
        const char *name;
    } units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" } };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if ((double)m >= 10 * units[i].ns) {
            *ns_per = units[i].ns;
            return units[i].name;
        }
    *ns_per = 1;
    return "ns";
}

double cs__report_gpu_share(const cs_gpu_time_row *r, int64_t part)
{
    return r->window_ns > 0 ? (double)part / (double)r->window_ns : 0.0;
}

double cs__report_gpu_median_compute(const cs_report_data *d)
{
    if (d->ngpu <= 0)
        return 0.0;
    double *v = malloc((size_t)d->ngpu * sizeof *v);
    if (!v)
        return 0.0;
    for (int i = 0; i < d->ngpu; i++)
        v[i] = cs__report_gpu_share(&d->gpu[i], d->gpu[i].compute_ns);
    double m = cs_stats_median_dbl(v, (size_t)d->ngpu);
    free(v);
    return m;
}
