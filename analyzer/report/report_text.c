/* report_text.c: `collscope report --format text`: the trace (per op,
 * communicator, call site and rank), then the stored analysis (clocks,
 * stragglers, steps, wait states, tail latency, cost models, what-if
 * replay, proposals, what is missing, gates), then the GPU overlap. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/msg.h"

#include <stdlib.h>
#include <string.h>

/* One table of groups. With `comms`, the keys are communicator ids, shown
 * by name and size; else with show_op, each key is followed by its op. */
static void cs_report_text_groups(FILE *f, const char *title, const char *keyname, const cs_group_stat *a, size_t n,
                                  int show_op, const cs_comms *comms)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    /* communicator names get the room they need, up to a point */
    int w = 40;
    for (size_t i = 0; comms && i < n; i++) {
        char key[300];
        int l = (int)strlen(cs_store_comms_label(comms, strtoll(a[i].key, NULL, 10), key, sizeof key));
        w = l > w ? (l < 120 ? l : 120) : w;
    }
    fprintf(f, "\n%s\n", title);
    fprintf(f, "  %-*s %9s %11s %11s %10s %10s %10s %10s\n", w, keyname, "calls", "bytes", "total", "p50", "p90", "p99",
            "max");
    for (size_t i = 0; i < n; i++) {
        const cs_group_stat *x = &a[i];
        char key[300];
        if (comms)
            cs_store_comms_label(comms, strtoll(x->key, NULL, 10), key, sizeof key);
        else if (show_op)
            snprintf(key, sizeof key, "%s [%s]", x->key, x->op);
        else
            snprintf(key, sizeof key, "%s", x->key);
        fprintf(f, "  %-*.*s %9lld %11s %11s %10s %10s %10s %10s\n", w, w, key, (long long)x->count,
                cs_fmt_bytes(x->bytes, b1, sizeof b1), cs_fmt_ns(x->total, b2, sizeof b2),
                cs_fmt_ns(x->p50, b3, sizeof b3), cs_fmt_ns(x->p90, b4, sizeof b4), cs_fmt_ns(x->p99, b5, sizeof b5),
                cs_fmt_ns(x->max, b6, sizeof b6));
    }
    if (n == 0)
        fprintf(f, "  (none)\n");
}

static void cs_report_text_overlap(FILE *f, const cs_report_trace *t)
{
    char b1[32], b2[32];
    if (!t->noverlap)
        return;
    fprintf(f,
            "\nGPU overlap: NCCL time on the GPU not overlapped by compute (kernels of other streams)\n"
            "  %6s %12s %12s %8s\n",
            "rank", "comm (GPU)", "not overlap", "share");
    for (size_t i = 0; i < t->noverlap; i++) {
        const cs_report_overlap *o = &t->overlap[i];
        fprintf(f, "  %6d %12s %12s %7.1f%%\n", o->rank, cs_fmt_ns(o->comm_ns, b1, sizeof b1),
                cs_fmt_ns(o->exposed_ns, b2, sizeof b2),
                o->comm_ns > 0 ? 100.0 * (double)o->exposed_ns / (double)o->comm_ns : 0.0);
    }
}

/* The GPU time of each rank (HTA's temporal breakdown), in one unit, and
 * the ranks whose compute share stands out. */
static void cs_report_text_gpu(FILE *f, const cs_report_data *d)
{
    if (!d->ngpu) {
        fprintf(f, "\nGPU time per rank: no GPU activity in this trace\n");
        return;
    }
    double per;
    const char *unit = cs__report_gpu_unit(d, &per);
    fprintf(f,
            "\nGPU time per rank (%s, and %% of the rank's GPU window: first kernel start to last kernel end;\n"
            " compute + comm exposed + memory + idle = window; comm overlapped runs beside compute)\n"
            "  %6s %10s %18s %18s %18s %18s %18s\n",
            unit, "rank", "window", "compute", "comm exposed", "comm overlapped", "memory", "idle");
    for (int i = 0; i < d->ngpu; i++) {
        const cs_gpu_time_row *r = &d->gpu[i];
        const int64_t part[] = { r->compute_ns, r->comm_exposed_ns, r->comm_overlapped_ns, r->memory_ns, r->idle_ns };
        fprintf(f, "  %6d %10.3f", r->rank, (double)r->window_ns / per);
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++)
            fprintf(f, " %10.3f %6.1f%%", (double)part[k] / per, 100 * cs__report_gpu_share(r, part[k]));
        fprintf(f, "\n");
    }
    double med = cs__report_gpu_median_compute(d);
    int n = 0;
    for (int i = 0; i < d->ngpu; i++)
        if (d->gpu[i].outlier) {
            const cs_gpu_time_row *r = &d->gpu[i];
            fprintf(f, "%s rank %d %.1f %%", n++ ? "," : "  compute share out of line:", r->rank,
                    100 * cs__report_gpu_share(r, r->compute_ns));
        }
    if (n)
        fprintf(f, " (median of the ranks %.1f %%)\n", 100 * med);
    else if (d->ngpu >= 4)
        fprintf(f, "  compute share: no rank out of line (median %.1f %%)\n", 100 * med);
}

/* The top GPU kernels of each rank (the first CS_REPORT_TEXT_KERNELS of
 * each; JSON has all the stored ones). */
#define CS_REPORT_TEXT_KERNELS 5
static void cs_report_text_kernels(FILE *f, const cs_report_data *d)
{
    if (!d->nkern)
        return;
    char b1[32], b2[32], b3[32];
    fprintf(f,
            "\nTop GPU kernels per rank (by total GPU time, %d of each; copies and sets are memory)\n"
            "  %6s %-8s %-50s %7s %11s %11s %11s\n",
            CS_REPORT_TEXT_KERNELS, "rank", "category", "name", "count", "total", "median", "p99");
    int shown = 0;
    for (int i = 0; i < d->nkern; i++) {
        const cs_kernel_row *k = &d->kern[i];
        shown = i > 0 && d->kern[i - 1].rank == k->rank ? shown + 1 : 0;
        if (shown >= CS_REPORT_TEXT_KERNELS)
            continue;
        fprintf(f, "  %6d %-8s %-50.50s %7lld %11s %11s %11s\n", k->rank, k->category, k->name, (long long)k->count,
                cs_fmt_ns(k->total_ns, b1, sizeof b1), cs_fmt_ns(k->median_ns, b2, sizeof b2),
                cs_fmt_ns(k->p99_ns, b3, sizeof b3));
    }
}

/* The cost models, the replay and the proposals. */
/* The cost models, the replay and the proposals (text). */
static void cs_report_text_whatif(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    if (d->guard[0]) {
        fprintf(f,
                "\nApply mode's guard (windows of at least 64 calls; time in MPI calls per call, fused vs unfused)\n");
        for (const char *l = d->guard; *l;) {
            const char *e = strchr(l, '\n');
            int n = e ? (int)(e - l) : (int)strlen(l);
            fprintf(f, "  %.*s\n", n, l);
            l += n + (e != NULL);
        }
    }
    if (d->fuse_members || d->fused_calls)
        fprintf(f, "\nApply mode: %lld calls fused into %lld (all ranks)\n", (long long)d->fuse_members,
                (long long)d->fused_calls);
    fprintf(f, "\nCost models (time of n calls completing together = alpha + (n-1) x gamma + bytes x beta,\n"
               "fitted to the completion times; resid: relative residual of the cells)\n");
    /* the models' names (op and communicator) get the room they need */
    int w = 36;
    for (int i = 0; i < d->nmodels; i++) {
        char key[256];
        cs__report_model_name(key, sizeof key, d, &d->models[i]);
        int l = (int)strlen(key);
        w = l > w ? (l < 90 ? l : 90) : w;
    }
    if (!d->nmodels)
        fprintf(f, "  (none: no collective transfer to fit)\n");
    else
        fprintf(f, "  %-*s %7s %19s %11s %11s %12s %6s %7s\n", w, "op [algo] on communicator", "points", "sizes",
                "alpha", "gamma", "beta/KiB", "R2", "resid");
    for (int i = 0; i < d->nmodels; i++) {
        const cs_model_row *m = &d->models[i];
        char key[256], sz[48];
        cs__report_model_name(key, sizeof key, d, m);
        snprintf(sz, sizeof sz, "%s-%s", cs_fmt_bytes(m->min_bytes, b1, sizeof b1),
                 cs_fmt_bytes(m->max_bytes, b2, sizeof b2));
        char beta[32], r2[16];
        if (m->fitted)
            snprintf(beta, sizeof beta, "%.3f ns", m->beta_ns_per_byte * 1024);
        else
            snprintf(beta, sizeof beta, "unknown");
        if (m->fitted)
            snprintf(r2, sizeof r2, "%.3f", m->r2);
        else
            snprintf(r2, sizeof r2, "-");
        fprintf(f, "  %-*.*s %7lld %19s %8.2f us %8.2f us %12s %6s %6.1f%%\n", w, w, key, (long long)m->points, sz,
                m->alpha_ns / 1e3, m->gamma_ns / 1e3, beta, r2, 100 * m->rel_resid);
        if (!m->fitted || strcmp(m->note, "fitted") != 0)
            fprintf(f, "    %s\n", m->note);
    }
    fprintf(f, "\nWhat-if replay (median step time)\n");
    if (!d->has_whatif) {
        fprintf(f, "  not run%s%s\n", d->wf_note[0] ? ": " : "", d->wf_note);
    } else {
        fprintf(f,
                "  measured %s; replayed with measured transfers %s (error %.2f %%); with the cost models %s "
                "(replay error %.2f %%)\n",
                cs_fmt_ns(d->wf_measured_ns, b1, sizeof b1), cs_fmt_ns(d->wf_replay_ns, b2, sizeof b2),
                100 * d->wf_replay_error, cs_fmt_ns(d->wf_model_ns, b3, sizeof b3), 100 * d->wf_model_error);
        if (d->wf_ontime_ns >= 0)
            fprintf(f, "  stragglers on time: %s (gain %s per step)\n", cs_fmt_ns(d->wf_ontime_ns, b1, sizeof b1),
                    cs_fmt_ns(d->wf_ontime_gain_ns, b2, sizeof b2));
        if (d->wf_note[0])
            fprintf(f, "  %s\n", d->wf_note);
    }
    if (d->wf_comm_step_ns >= 0)
        fprintf(f, "  communication per step (time inside communication calls, median over ranks and steps): %s\n",
                cs_fmt_ns(d->wf_comm_step_ns, b1, sizeof b1));
    fprintf(f, "\nProposals (estimated by the what-if replay; made where the cost model explains the data and the\n"
               "gain is at least 5 %% of the step)\n");
    if (!d->nprops)
        fprintf(f, "  none\n");
    for (const char *l = d->wf_declined; *l;) {
        const char *e = strchr(l, '\n');
        int n = e ? (int)(e - l) : (int)strlen(l);
        fprintf(f, "  %.*s\n", n, l);
        l += n + (e != NULL);
    }
    for (int i = 0; i < d->nprops; i++) {
        const cs_proposal *p = &d->props[i];
        fprintf(f, "  %-8s gain %s per step (%.1f %%)", p->kind, cs_fmt_ns(p->gain_ns, b1, sizeof b1),
                p->step_ns > 0 ? 100.0 * (double)p->gain_ns / (double)p->step_ns : 0.0);
        if (strcmp(p->kind, "fusion") == 0)
            fprintf(f, ", %s, bucket %s", p->callsite, cs_fmt_bytes(p->bucket_bytes, b2, sizeof b2));
        fprintf(f, "\n    %s\n", p->evidence);
        if (p->env[0])
            fprintf(f, "    apply with: %s\n", p->env);
    }
}

static void cs_report_text_analysis(FILE *f, const cs_report_data *d, const cs_gate *g, int ng)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], name[CS_COMMS_DISPLAY_MAX];
    fprintf(f, "\nClocks (aligned from the N-to-N collectives; offset relative to rank %d)\n",
            d->nproc ? d->procs[0].rank : 0);
    fprintf(f, "  %6s %-10s %14s %10s %12s\n", "rank", "clock", "offset", "drift", "residual");
    for (int i = 0; i < d->nproc; i++) {
        const cs_proc *p = &d->procs[i];
        fprintf(f, "  %6d %-10s %11.3f us %7.3f ppm %12s\n", p->rank, p->clock, (double)p->clock_offset_ns / 1e3,
                p->clock_drift_ppm, p->align_residual_ns >= 0 ? cs_fmt_ns(p->align_residual_ns, b1, sizeof b1) : "-");
    }
    fprintf(f, "\nStragglers\n");
    if (d->nstrag == 0)
        fprintf(f, "  none: no rank, link or collective is out of line\n");
    for (int i = 0; i < d->nstrag; i++) {
        const cs_straggler *s = &d->strag[i];
        if (strcmp(s->kind, "slow_link") == 0 && s->src >= 0)
            fprintf(f, "  %-16s %d -> %d  costs %s per step\n", s->kind, s->src, s->dst,
                    cs_fmt_ns(s->cost_ns, b1, sizeof b1));
        else if (strcmp(s->kind, "slow_link") == 0 || (s->comm && s->rank < 0))
            fprintf(f, "  %-16s %s  costs %s per step, steps %lld-%lld\n", s->kind,
                    cs_report_commname(d, s->comm, name, sizeof name), cs_fmt_ns(s->cost_ns, b1, sizeof b1),
                    (long long)s->first_step, (long long)s->last_step);
        else if (strcmp(s->kind, "recurring") == 0 && s->period > 0)
            fprintf(
                f,
                "  %-16s rank %d  costs %s per affected step, every %lld steps (phase %lld), %lld steps, %s in all\n",
                s->kind, s->rank, cs_fmt_ns(s->cost_ns, b1, sizeof b1), (long long)s->period, (long long)s->phase,
                (long long)s->affected, cs_fmt_ns(s->total_ns, b2, sizeof b2));
        else if (strcmp(s->kind, "recurring") == 0)
            fprintf(f, "  %-16s rank %d  costs %s per affected step, %lld steps (%s), %s in all\n", s->kind, s->rank,
                    cs_fmt_ns(s->cost_ns, b1, sizeof b1), (long long)s->affected, s->steps,
                    cs_fmt_ns(s->total_ns, b2, sizeof b2));
        else
            fprintf(f, "  %-16s rank %d  costs %s per step, steps %lld-%lld\n", s->kind, s->rank,
                    cs_fmt_ns(s->cost_ns, b1, sizeof b1), (long long)s->first_step, (long long)s->last_step);
        fprintf(f, "    %s\n", s->evidence);
    }
    fprintf(f, "\nSteps (from %s): %d", d->step_source, d->nsteps);
    if (d->nsteps)
        fprintf(f, ", median %s, p90 %s; median had the slowest rank arrived on time: %s",
                cs_fmt_ns(d->step_median_ns, b1, sizeof b1), cs_fmt_ns(d->step_p90_ns, b2, sizeof b2),
                cs_fmt_ns(d->whatif_median_ns, b3, sizeof b3));
    if (d->nsteps && d->step_comm_ns >= 0)
        fprintf(f, "; communication %s per step", cs_fmt_ns(d->step_comm_ns, b4, sizeof b4));
    if (strcmp(d->step_source, "period") == 0)
        fprintf(f, "\n  period %d calls per step, matching %.1f %% of the positions, on %d of %d ranks searched",
                d->step_period, 100 * d->step_confidence, d->step_ranks_agreeing, d->step_ranks_searched);
    fprintf(f, "\n");
    if (d->layout[0]) {
        fprintf(f, "\nParallel layout: %s\n  %s\n", d->layout, d->layout_source);
        if (d->nlay <= 32) {
            fprintf(f, "  rank (dp,pp,tp):");
            for (int i = 0; i < d->nlay; i++)
                fprintf(f, "%s %d (%d,%d,%d)", i && i % 8 == 0 ? "\n                  " : "", d->lay[i].rank,
                        d->lay[i].dp, d->lay[i].pp, d->lay[i].tp);
            fprintf(f, "\n");
        }
    }
    if (d->has_slowdown) {
        fprintf(f,
                "\nSlowdown: S %.3f (median step %s replayed, %s with ideal durations; replay error %.1f %%)\n  %s\n",
                d->sd_S, cs_fmt_ns(d->sd_actual_ns, b1, sizeof b1), cs_fmt_ns(d->sd_ideal_ns, b2, sizeof b2),
                100 * d->sd_replay_error, d->sd_text);
        fprintf(f, "  %-16s %-24s %8s %8s %9s\n", "by", "what", "S", "share", "compute");
        int shown = 0;
        for (int i = 0; i < d->nsd; i++) {
            const cs_slowdown_row *r = &d->sd[i];
            if (strcmp(r->kind, "step") == 0 || (strcmp(r->kind, "rank") == 0 && shown++ >= 8))
                continue;
            char cs[16] = "-";
            if (r->compute_share >= 0)
                snprintf(cs, sizeof cs, "%.0f%%", 100 * r->compute_share);
            fprintf(f, "  %-16s %-24s %8.3f %7.0f%% %9s\n", r->kind, r->name, r->s, 100 * r->share, cs);
        }
    }
    fprintf(f, "\nWait states per rank (who made the others wait)\n  %6s %10s %14s %16s\n", "rank", "last",
            "imposed wait", "median lateness");
    for (int i = 0; i < d->nrstats; i++) {
        const cs_rank_stat *r = &d->rstats[i];
        fprintf(f, "  %6d %10lld %14s %16s\n", r->rank, (long long)r->times_last,
                cs_fmt_ns(r->imposed_wait_ns, b1, sizeof b1), cs_fmt_ns(r->median_lateness_ns, b2, sizeof b2));
    }
    fprintf(f, "\nTail latency per collective (instance time: first entry to last exit)\n");
    fprintf(f, "  %-36s %7s %9s %9s %9s %9s %9s\n", "op [size] call site", "count", "p50", "p90", "p99", "p99.9",
            "max");
    for (int i = 0; i < d->ntails && i < 20; i++) {
        const cs_tail_row *t = &d->tails[i];
        char key[256];
        snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(d, t->op),
                 cs_fmt_bytes(1LL << t->bucket, b6, sizeof b6), t->callsite);
        fprintf(f, "  %-36.36s %7lld %9s %9s %9s %9s %9s\n", key, (long long)t->count,
                cs_fmt_ns(t->p50_ns, b1, sizeof b1), cs_fmt_ns(t->p90_ns, b2, sizeof b2),
                cs_fmt_ns(t->p99_ns, b3, sizeof b3), cs_fmt_ns(t->p999_ns, b4, sizeof b4),
                cs_fmt_ns(t->max_ns, b5, sizeof b5));
        if (t->common[0])
            fprintf(f, "    slowest 1%%: %s\n", t->common);
    }
    if (d->ntails == 0)
        fprintf(f, "  (none)\n");
    cs_report_text_whatif(f, d);
    if (d->notes[0]) {
        fprintf(f, "\nWhat is missing\n");
        const char *p = d->notes;
        while (*p) {
            const char *e = strchr(p, '\n');
            int l = e ? (int)(e - p) : (int)strlen(p);
            fprintf(f, "  - %.*s\n", l, p);
            p += l + (e ? 1 : 0);
        }
    }
    if (ng) {
        fprintf(f, "\nGates\n");
        for (int i = 0; i < ng; i++)
            fprintf(f, "  %-4s %-16s %s\n", g[i].failed ? "FAIL" : "ok", g[i].name, g[i].message);
    }
}

void cs_report_text_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng)
{
    const cs_proc *procs = t->procs;
    int nproc = t->nproc;
    int64_t spans = 0, dropped = 0, overhead = 0;
    int crashed = 0;
    for (int i = 0; i < nproc; i++) {
        spans += procs[i].spans;
        dropped += procs[i].dropped;
        overhead += procs[i].overhead_ns;
        crashed += strcmp(procs[i].status, "crashed") == 0;
    }
    char b1[32], b2[32];
    cs_msg_line(f, "collscope report: %s", t->path);
    fprintf(f, "  %d processes, %lld spans", nproc, (long long)spans);
    if (dropped)
        fprintf(f, ", %lld dropped (log full)", (long long)dropped);
    if (crashed) {
        fprintf(f, ", crashed ranks:");
        for (int i = 0; i < nproc; i++)
            if (strcmp(procs[i].status, "crashed") == 0)
                fprintf(f, " %d", procs[i].rank);
    }
    fprintf(f, "\n  clocks: %s; tool overhead about %s in all\n", nproc ? procs[0].clock : "-",
            cs_fmt_ns(overhead, b1, sizeof b1));
    /* the job's failures first: none on a trace that ended well */
    if (d->failures.n) {
        fprintf(f, "\nFailures (the job hung or failed; as `collscope status` would say post mortem)\n");
        for (size_t i = 0; i < d->failures.n; i++)
            fprintf(f, "  %s: %s\n", d->failures.v[i].kind, d->failures.v[i].text);
    }
    fprintf(f, "\n(total: time on the ranks' time lines, each instant once per rank: calls in flight together share\n"
               " it; a nonblocking collective lasts from its start to the end of the completion call that finished\n"
               " it, which gives its own time to the collectives it completed. p50-max: each call's own duration)\n");
    cs_report_text_groups(f, "Per op", "op", t->by_op, t->nby_op, 0, NULL);
    cs_report_text_groups(f, "Per communicator", "communicator", t->by_comm, t->nby_comm, 0, &t->comms);
    cs_report_text_groups(f, "Per call site", "call site", t->by_site, t->nby_site, 1, NULL);
    fprintf(f, "\nPer rank: time inside traced calls\n  %6s %12s %12s %8s %10s\n", "rank", "in calls", "wall", "share",
            "spans");
    for (size_t i = 0; i < t->nranks; i++) {
        const cs_report_rank *r = &t->ranks[i];
        fprintf(f, "  %6d %12s %12s %7.1f%% %10lld\n", r->rank, cs_fmt_ns(r->busy, b1, sizeof b1),
                cs_fmt_ns(r->wall, b2, sizeof b2), r->wall > 0 ? 100.0 * (double)r->busy / (double)r->wall : 0.0,
                (long long)r->spans);
    }
    cs_report_text_analysis(f, d, g, ng);
    cs_report_text_gpu(f, d);
    cs_report_text_kernels(f, d);
    cs_report_text_overlap(f, t);
}
