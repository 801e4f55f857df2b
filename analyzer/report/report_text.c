/* report_text.c: `collscope report --format text`: the answer first (what
 * limits the job, S, the saving per step, where), then the evidence in a
 * fixed order: slowdown, stragglers, steps, layout, wait states, tail
 * latency, the trace (per op, communicator, call site, rank), GPU time,
 * what-if replay and proposals, cost models, clocks, what is missing,
 * gates. Sections that say nothing for this trace are one line each
 * unless --full. Each column and each sentence of times has one unit
 * (report_units.c); the terms are those of docs/guide.md's glossary. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/msg.h"

#include <stdlib.h>
#include <string.h>

/* One table of groups, each column of times and the bytes in one unit
 * (named in its header). With `comms`, the keys are communicator ids,
 * shown by name and size; else with show_op, each key is followed by its
 * op. Keys get the room they need up to a point, then lose their middle
 * (cs__report_fit). At most `max` rows (0: all), the rest counted. */
static void cs_report_text_groups(FILE *f, const char *title, const char *keyname, const cs_group_stat *a, size_t n,
                                  int show_op, const cs_comms *comms, size_t max)
{
    char b[6][32], h[6][32];
    size_t shown = max && n > max ? max : n;
    int w = 40;
    int64_t mx[6] = { 0 };
    for (size_t i = 0; i < n; i++) {
        const int64_t v[6] = { a[i].bytes, a[i].total, a[i].p50, a[i].p90, a[i].p99, a[i].max };
        for (int k = 0; k < 6; k++)
            mx[k] = v[k] > mx[k] ? v[k] : mx[k];
    }
    char *keys = calloc(shown ? shown : 1, 300);
    for (size_t i = 0; keys && i < shown; i++) {
        char *key = keys + i * 300;
        if (comms)
            cs_store_comms_label(comms, strtoll(a[i].key, NULL, 10), key, 300);
        else if (show_op && strcmp(a[i].op, "(several)") != 0)
            snprintf(key, 300, "%s [%s]", a[i].key, a[i].op);
        else if (show_op && strcmp(a[i].key, "(unknown)") == 0)
            snprintf(key, 300, "(not recorded)");
        else
            snprintf(key, 300, "%s", a[i].key);
        int l = (int)strlen(key), cap = comms ? 120 : 72; /* communicator names get more room */
        w = l > w ? (l < cap ? l : cap) : w;
    }
    cs_bunit bu = cs__report_bunit(mx[0]);
    cs_tunit tu[5];
    const char *names[6] = { "bytes", "total", "p50", "p90", "p99", "max" };
    snprintf(h[0], sizeof h[0], "bytes (%s)", bu.name);
    for (int k = 0; k < 5; k++) {
        tu[k] = cs__report_tunit(mx[k + 1]);
        cs__report_thead(names[k + 1], &tu[k], h[k + 1], sizeof h[k + 1]);
    }
    char *fits = keys ? calloc(shown ? shown : 1, 300) : NULL;
    if (fits)
        cs__report_fit_all(keys, 300, shown, w, fits);
    fprintf(f, "\n%s\n", title);
    fprintf(f, "  %-*s %9s %11s %11s %10s %10s %10s %10s\n", w, keyname, "calls", h[0], h[1], h[2], h[3], h[4], h[5]);
    for (size_t i = 0; fits && i < shown; i++) {
        const cs_group_stat *x = &a[i];
        const char *fit = fits + i * 300;
        const int64_t v[5] = { x->total, x->p50, x->p90, x->p99, x->max };
        for (int k = 0; k < 5; k++)
            cs__report_tnum(&tu[k], v[k], b[k + 1], sizeof b[k + 1]);
        fprintf(f, "  %-*s %9lld %11s %11s %10s %10s %10s %10s\n", w, fit, (long long)x->count,
                cs__report_bnum(&bu, x->bytes, b[0], sizeof b[0]), b[1], b[2], b[3], b[4], b[5]);
    }
    free(keys);
    free(fits);
    if (n == 0)
        fprintf(f, "  (none)\n");
    else if (shown < n)
        fprintf(f, "  ... and %zu more (--full shows them)\n", n - shown);
}

static void cs_report_text_overlap(FILE *f, const cs_report_trace *t)
{
    char b1[32], b2[32], h1[32], h2[32];
    if (!t->noverlap)
        return;
    int64_t mx = 0;
    for (size_t i = 0; i < t->noverlap; i++)
        mx = t->overlap[i].comm_ns > mx ? t->overlap[i].comm_ns : mx;
    cs_tunit u = cs__report_tunit(mx);
    fprintf(f,
            "\nGPU overlap: NCCL time on the GPU not overlapped by compute (kernels of other streams)\n"
            "  %6s %14s %14s %18s\n",
            "rank", cs__report_thead("comm (GPU)", &u, h1, sizeof h1),
            cs__report_thead("not overlap", &u, h2, sizeof h2), "share of comm");
    for (size_t i = 0; i < t->noverlap; i++) {
        const cs_report_overlap *o = &t->overlap[i];
        fprintf(f, "  %6d %14s %14s %17.1f%%\n", o->rank, cs__report_tnum(&u, o->comm_ns, b1, sizeof b1),
                cs__report_tnum(&u, o->exposed_ns, b2, sizeof b2),
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
            fprintf(f, "%s rank %d %.1f %% of its GPU window", n++ ? "," : "  compute share out of line:", r->rank,
                    100 * cs__report_gpu_share(r, r->compute_ns));
        }
    if (n)
        fprintf(f, " (median of the ranks %.1f %%)\n", 100 * med);
    else if (d->ngpu >= 4)
        fprintf(f, "  compute share: no rank out of line (median %.1f %% of the GPU window)\n", 100 * med);
}

/* The top GPU kernels of each rank (the first CS_REPORT_TEXT_KERNELS of
 * each; JSON has all the stored ones). */
#define CS_REPORT_TEXT_KERNELS 5
static void cs_report_text_kernels(FILE *f, const cs_report_data *d)
{
    if (!d->nkern)
        return;
    char b1[32], b2[32], b3[32], h[3][32];
    int64_t mx[3] = { 0 };
    for (int i = 0; i < d->nkern; i++) {
        const int64_t v[3] = { d->kern[i].total_ns, d->kern[i].median_ns, d->kern[i].p99_ns };
        for (int k = 0; k < 3; k++)
            mx[k] = v[k] > mx[k] ? v[k] : mx[k];
    }
    cs_tunit u[3] = { cs__report_tunit(mx[0]), cs__report_tunit(mx[1]), cs__report_tunit(mx[2]) };
    fprintf(f,
            "\nTop GPU kernels per rank (by total GPU time, %d of each; copies and sets are memory)\n"
            "  %6s %-8s %-50s %7s %11s %11s %11s\n",
            CS_REPORT_TEXT_KERNELS, "rank", "category", "name", "count",
            cs__report_thead("total", &u[0], h[0], sizeof h[0]), cs__report_thead("median", &u[1], h[1], sizeof h[1]),
            cs__report_thead("p99", &u[2], h[2], sizeof h[2]));
    int shown = 0;
    for (int i = 0; i < d->nkern; i++) {
        const cs_kernel_row *k = &d->kern[i];
        shown = i > 0 && d->kern[i - 1].rank == k->rank ? shown + 1 : 0;
        if (shown >= CS_REPORT_TEXT_KERNELS)
            continue;
        char name[300];
        fprintf(f, "  %6d %-8s %-50s %7lld %11s %11s %11s\n", k->rank, k->category,
                cs__report_fit(k->name, 50, name, sizeof name), (long long)k->count,
                cs__report_tnum(&u[0], k->total_ns, b1, sizeof b1), cs__report_tnum(&u[1], k->median_ns, b2, sizeof b2),
                cs__report_tnum(&u[2], k->p99_ns, b3, sizeof b3));
    }
}

/* Is m fitted from one message size only (alpha only, beta unknown): a
 * row that says nothing the per-op tables do not? */
static int cs_report_text_model_one_size(const cs_model_row *m)
{
    return !m->fitted && m->min_bytes == m->max_bytes;
}

/* The cost models: those fitted from one size only folded into one line
 * unless full. */
static void cs_report_text_models(FILE *f, const cs_report_data *d, int full)
{
    char b1[32], b2[32], b3[32], h1[32], h2[32];
    int nsingle = 0;
    int64_t mx = 0;
    for (int i = 0; i < d->nmodels; i++) {
        nsingle += cs_report_text_model_one_size(&d->models[i]);
        int64_t a = (int64_t)d->models[i].alpha_ns, g = (int64_t)d->models[i].gamma_ns;
        mx = a > mx ? a : mx;
        mx = g > mx ? g : mx;
    }
    if (!full && d->nmodels && nsingle == d->nmodels) {
        fprintf(f,
                "\nCost models: all %d fitted from one message size only (alpha only, beta unknown): nothing to "
                "add to the tables above (--full shows them)\n",
                d->nmodels);
        return;
    }
    fprintf(f, "\nCost models (time of n calls completing together = alpha + (n-1) x gamma + bytes x beta,\n"
               " fitted to the completion times; resid: the cells' residual, in %% of their time)\n");
    /* the models' names (op and communicator) get the room they need */
    int w = 36;
    for (int i = 0; i < d->nmodels; i++) {
        char key[256];
        cs__report_model_name(key, sizeof key, d, &d->models[i]);
        int l = (int)strlen(key);
        w = l > w ? (l < 72 ? l : 72) : w;
    }
    cs_tunit u = cs__report_tunit(mx);
    if (!d->nmodels)
        fprintf(f, "  (none: no collective transfer to fit)\n");
    else
        fprintf(f, "  %-*s %7s %19s %11s %11s %14s %6s %7s\n", w, "op [algo] on communicator", "points", "sizes",
                cs__report_thead("alpha", &u, h1, sizeof h1), cs__report_thead("gamma", &u, h2, sizeof h2),
                "beta (ns/KiB)", "R2", "resid");
    for (int i = 0; i < d->nmodels; i++) {
        const cs_model_row *m = &d->models[i];
        if (!full && cs_report_text_model_one_size(m))
            continue;
        char key[256], fit[256], sz[48];
        cs__report_model_name(key, sizeof key, d, m);
        snprintf(sz, sizeof sz, "%s-%s", cs_fmt_bytes(m->min_bytes, b1, sizeof b1),
                 cs_fmt_bytes(m->max_bytes, b2, sizeof b2));
        char beta[32], r2[16];
        if (m->fitted)
            snprintf(beta, sizeof beta, "%.3f", m->beta_ns_per_byte * 1024);
        else
            snprintf(beta, sizeof beta, "unknown");
        if (m->fitted)
            snprintf(r2, sizeof r2, "%.3f", m->r2);
        else
            snprintf(r2, sizeof r2, "-");
        fprintf(f, "  %-*s %7lld %19s %11s %11s %14s %6s %6.1f%%\n", w, cs__report_fit(key, w, fit, sizeof fit),
                (long long)m->points, sz, cs__report_tnum(&u, (int64_t)m->alpha_ns, b1, sizeof b1),
                cs__report_tnum(&u, (int64_t)m->gamma_ns, b3, sizeof b3), beta, r2, 100 * m->rel_resid);
        if (!m->fitted || strcmp(m->note, "fitted") != 0)
            fprintf(f, "    %s\n", m->note);
    }
    if (!full && nsingle)
        fprintf(f, "  and %d fitted from one message size only (alpha only, beta unknown; --full shows them)\n",
                nsingle);
}

/* The replay and the proposals (text). */
static void cs_report_text_whatif(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    if (d->guard[0]) {
        fprintf(
            f,
            "\nApply mode's guard (windows of at least 64 calls; time in MPI, or NCCL and CUDA, calls per call, fused vs unfused)\n");
        for (const char *l = d->guard, *next; *l; l = next) {
            int n;
            next = cs__report_line(l, &n);
            fprintf(f, "  %.*s\n", n, l);
        }
    }
    if (d->fuse_members || d->fused_calls)
        fprintf(f, "\nApply mode: %lld calls fused into %lld (all ranks)\n", (long long)d->fuse_members,
                (long long)d->fused_calls);
    fprintf(f, "\nWhat-if replay (median step time)\n");
    if (!d->has_whatif) {
        fprintf(f, "  could not run%s%s\n", d->wf_note[0] ? ": " : "", d->wf_note);
    } else {
        const int64_t v[] = { d->wf_measured_ns, d->wf_replay_ns, d->wf_model_ns };
        cs_tunit u = cs__report_tunit_of(v, 3);
        fprintf(f, "  measured %s; replayed with measured transfers %s (error %.2f %%); ",
                cs__report_tstr(&u, d->wf_measured_ns, b1, sizeof b1),
                cs__report_tstr(&u, d->wf_replay_ns, b2, sizeof b2), 100 * d->wf_replay_error);
        if (d->wf_model_ns >= 0)
            fprintf(f, "with the cost models %s (replay error %.2f %%)\n",
                    cs__report_tstr(&u, d->wf_model_ns, b3, sizeof b3), 100 * d->wf_model_error);
        else /* the modelled replay deadlocked: no estimate from the models */
            fprintf(f, "the replay with the cost models could not run (it deadlocked)\n");
        if (d->wf_ontime_ns >= 0) {
            const int64_t w[] = { d->wf_ontime_ns, d->wf_ontime_gain_ns };
            cs_tunit uo = cs__report_tunit_of(w, 2);
            fprintf(f, "  stragglers on time: %s (gain %s per step)\n",
                    cs__report_tstr(&uo, d->wf_ontime_ns, b1, sizeof b1),
                    cs__report_tstr(&uo, d->wf_ontime_gain_ns, b2, sizeof b2));
        }
        if (d->wf_note[0])
            fprintf(f, "  %s\n", d->wf_note);
    }
    if (d->wf_comm_step_ns >= 0) {
        const int64_t v[] = { d->wf_measured_ns, d->wf_comm_step_ns };
        cs_tunit u = cs__report_tunit_of(v, 2);
        fprintf(f, "  communication per step (time inside communication calls, median over ranks and steps): %s\n",
                cs__report_tstr(&u, d->wf_comm_step_ns, b1, sizeof b1));
    }
    fprintf(f, "\nProposals (estimated by the what-if replay; made where the cost model explains the data and the\n"
               " gain is at least 5 %% of the step)\n");
    if (!d->nprops)
        fprintf(f, "  none\n");
    for (const char *l = d->wf_declined, *next; *l; l = next) {
        int n;
        next = cs__report_line(l, &n);
        fprintf(f, "  %.*s\n", n, l);
    }
    for (int i = 0; i < d->nprops; i++) {
        const cs_proposal *p = &d->props[i];
        fprintf(f, "  %-8s gain %s per step (%.1f %% of the median step)", p->kind,
                cs_fmt_ns(p->gain_ns, b1, sizeof b1),
                p->step_ns > 0 ? 100.0 * (double)p->gain_ns / (double)p->step_ns : 0.0);
        if (strcmp(p->kind, "fusion") == 0)
            fprintf(f, "%s%s, bucket %s", p->callsite[0] ? ", " : "", p->callsite,
                    cs_fmt_bytes(p->bucket_bytes, b2, sizeof b2));
        fprintf(f, "\n    %s\n", p->evidence);
        if (p->env[0])
            fprintf(f, "    apply with: %s\n", p->env);
    }
}

/* The answer, first: what limits the job (the culprit or "no single
 * culprit"), S, what fixing it would save per step, and where (the rank's
 * dp/pp/tp coordinates and stage, the op or kernel, the call site). */
void cs__report_answer(FILE *f, const cs_report_trace *t, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    cs_answer a;
    cs__report_answer_of(d, &a);
    const cs_straggler *top = a.top;
    int rank = a.rank, by_strag = a.by_strag;
    fprintf(f, "What limits this job\n");
    if (a.who[0])
        fprintf(f, "  culprit: %s\n", a.who);
    else if (d->has_slowdown && strcmp(d->sd_verdict, "none") == 0)
        fprintf(f, "  no single culprit: the job runs close to its ideal\n");
    else if (d->has_slowdown)
        fprintf(f, "  no single culprit: the slowdown is spread over ranks and steps\n");
    else
        fprintf(f, "  no single culprit found (no straggler verdict%s)\n",
                d->nsteps < 3 ? "; fewer than 3 steps, so no slowdown S" : "");
    if (d->has_slowdown) {
        const int64_t v[] = { d->sd_actual_ns, d->sd_ideal_ns };
        cs_tunit u = cs__report_tunit_of(v, 2);
        fprintf(f, "  S %.3f: the median step takes %.2f times as long as with ideal durations (%s against %s)\n",
                d->sd_S, d->sd_S, cs__report_tstr(&u, d->sd_actual_ns, b1, sizeof b1),
                cs__report_tstr(&u, d->sd_ideal_ns, b2, sizeof b2));
    }
    if (a.save_ns >= 0 && a.step_ns > 0) {
        const int64_t v[] = { a.save_ns, a.step_ns };
        cs_tunit u = cs__report_tunit_of(v, 2);
        fprintf(f, "  saving: about %s per step if fixed (%.0f %% of the median step of %s; %s)\n",
                cs__report_tstr(&u, a.save_ns, b1, sizeof b1), 100.0 * (double)a.save_ns / (double)a.step_ns,
                cs__report_tstr(&u, a.step_ns, b2, sizeof b2), a.save_how);
    }
    /* where: what the culprit's excess is, and where the others wait */
    if (by_strag)
        fprintf(f, "  why: a %s straggler, steps %lld-%lld (Stragglers below)%s%s\n", top->kind,
                (long long)top->first_step, (long long)top->last_step,
                d->has_slowdown ? "; the slowdown attribution blames no single rank: " : "",
                d->has_slowdown ? d->sd_text : "");
    else if (d->has_slowdown && d->sd_text[0])
        fprintf(f, "  why: %s\n", d->sd_text);
    if (rank >= 0) {
        const cs_kernel_row *k = NULL;
        for (int i = 0; i < d->nkern && !k; i++)
            if (d->kern[i].rank == rank && strcmp(d->kern[i].category, "compute") == 0)
                k = &d->kern[i];
        const cs_slowdown_row *r = a.sd;
        if (k && (!r || r->compute_share >= 0.5)) {
            cs_tunit u = cs__report_tunit(k->total_ns);
            char kn[300];
            fprintf(f, "  where: its GPU compute; its costliest kernel %s (%lld runs, %s in all)\n",
                    cs__report_fit(k->name, 60, kn, sizeof kn), (long long)k->count,
                    cs__report_tstr(&u, k->total_ns, b3, sizeof b3));
        }
    }
    /* the call site where the communication time goes */
    if (t->nby_site && strcmp(t->by_site[0].key, "(unknown)") != 0) {
        const cs_group_stat *x = &t->by_site[0];
        int64_t all = 0;
        for (size_t i = 0; i < t->nby_site; i++)
            all += t->by_site[i].total;
        fprintf(f, "  where the others wait: %s at %s (%.0f %% of the time in communication calls)\n",
                strcmp(x->op, "(several)") == 0 ? "several ops" : x->op, x->key,
                all > 0 ? 100.0 * (double)x->total / (double)all : 0.0);
    } else if (t->nby_op && t->nby_comm) {
        const cs_group_stat *x = &t->by_op[0];
        int64_t all = 0;
        for (size_t i = 0; i < t->nby_op; i++)
            all += t->by_op[i].total;
        fprintf(f, "  where the others wait: %s (%.0f %% of the time in communication calls; no call sites recorded)\n",
                x->key, all > 0 ? 100.0 * (double)x->total / (double)all : 0.0);
    }
    /* every estimate of the saving side by side, where there are two or more */
    if (a.nest >= 2) {
        int64_t v[CS_ANSWER_EST_MAX];
        for (int i = 0; i < a.nest; i++)
            v[i] = a.est[i].ns;
        cs_tunit u = cs__report_tunit_of(v, a.nest);
        fprintf(f, "  the saving measured %d ways (%s):\n", a.nest,
                a.agree && a.napart ? "they agree within 25 %, but for the one set apart"
                : a.agree           ? "they agree within 25 %"
                                    : "they measure different things");
        for (int i = 0; i < a.nest; i++)
            fprintf(f, "    %12s  %s\n", cs__report_tstr(&u, a.est[i].ns, b3, sizeof b3), a.est[i].what);
    }
}

static void cs_report_text_clocks(FILE *f, const cs_report_data *d, int full)
{
    char b1[32], b2[32], h[32];
    int moved = 0;
    int64_t res = 0;
    for (int i = 0; i < d->nproc; i++) {
        moved += d->procs[i].clock_offset_ns != 0 || d->procs[i].clock_drift_ppm != 0;
        res = d->procs[i].align_residual_ns > res ? d->procs[i].align_residual_ns : res;
    }
    cs_tunit u = cs__report_tunit(res);
    if (!full && !moved) {
        fprintf(f,
                "\nClocks: kept as recorded on all %d ranks (no offset or drift found; largest residual %s; "
                "--full shows the table)\n",
                d->nproc, cs__report_tstr(&u, res, b1, sizeof b1));
        return;
    }
    int64_t mo = 0;
    for (int i = 0; i < d->nproc; i++) {
        int64_t o = d->procs[i].clock_offset_ns < 0 ? -d->procs[i].clock_offset_ns : d->procs[i].clock_offset_ns;
        mo = o > mo ? o : mo;
    }
    cs_tunit uo = cs__report_tunit(mo);
    fprintf(f, "\nClocks (aligned from the N-to-N collectives; offset relative to rank %d)\n",
            d->nproc ? d->procs[0].rank : 0);
    fprintf(f, "  %6s %-10s %14s %12s %14s\n", "rank", "clock", cs__report_thead("offset", &uo, b2, sizeof b2),
            "drift (ppm)", cs__report_thead("residual", &u, h, sizeof h));
    for (int i = 0; i < d->nproc; i++) {
        const cs_proc *p = &d->procs[i];
        int64_t o = p->clock_offset_ns;
        fprintf(f, "  %6d %-10s %s%13s %12.3f %14s\n", p->rank, p->clock, o < 0 ? "-" : " ",
                cs__report_tnum(&uo, o < 0 ? -o : o, b1, sizeof b1), p->clock_drift_ppm,
                p->align_residual_ns >= 0 ? cs__report_tnum(&u, p->align_residual_ns, b2, sizeof b2) : "-");
    }
}

static void cs_report_text_stragglers(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], name[CS_COMMS_DISPLAY_MAX];
    fprintf(f, "\nStragglers\n");
    if (d->nstrag == 0)
        fprintf(f, "  none: no rank, link or collective is out of line\n");
    for (int i = 0; i < d->nstrag; i++) {
        const cs_straggler *s = &d->strag[i];
        const int64_t v[] = { s->cost_ns, s->total_ns };
        cs_tunit u = cs__report_tunit_of(v, 2);
        if (strcmp(s->kind, "slow_link") == 0 && s->src >= 0)
            fprintf(f, "  %-16s %d -> %d  costs %s per step\n", s->kind, s->src, s->dst,
                    cs__report_tstr(&u, s->cost_ns, b1, sizeof b1));
        else if (strcmp(s->kind, "slow_link") == 0 || (s->comm && s->rank < 0))
            fprintf(f, "  %-16s %s  costs %s per step, steps %lld-%lld\n", s->kind,
                    cs_report_commname(d, s->comm, name, sizeof name), cs__report_tstr(&u, s->cost_ns, b1, sizeof b1),
                    (long long)s->first_step, (long long)s->last_step);
        else if (strcmp(s->kind, "recurring") == 0 && s->period > 0)
            fprintf(
                f,
                "  %-16s rank %d  costs %s per affected step, every %lld steps (phase %lld), %lld steps, %s in all\n",
                s->kind, s->rank, cs__report_tstr(&u, s->cost_ns, b1, sizeof b1), (long long)s->period,
                (long long)s->phase, (long long)s->affected, cs__report_tstr(&u, s->total_ns, b2, sizeof b2));
        else if (strcmp(s->kind, "recurring") == 0)
            fprintf(f, "  %-16s rank %d  costs %s per affected step, %lld steps (%s), %s in all\n", s->kind, s->rank,
                    cs__report_tstr(&u, s->cost_ns, b1, sizeof b1), (long long)s->affected, s->steps,
                    cs__report_tstr(&u, s->total_ns, b2, sizeof b2));
        else
            fprintf(f, "  %-16s rank %d  costs %s per step, steps %lld-%lld\n", s->kind, s->rank,
                    cs__report_tstr(&u, s->cost_ns, b1, sizeof b1), (long long)s->first_step, (long long)s->last_step);
        fprintf(f, "    %s\n", s->evidence);
    }
}

static void cs_report_text_steps(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(f, "\nSteps (from %s): %d", d->step_source, d->nsteps);
    const int64_t v[] = { d->step_median_ns, d->step_p90_ns, d->whatif_median_ns, d->step_comm_ns };
    cs_tunit u = cs__report_tunit_of(v, 4);
    if (d->nsteps)
        fprintf(f, ", median %s, p90 %s", cs__report_tstr(&u, d->step_median_ns, b1, sizeof b1),
                cs__report_tstr(&u, d->step_p90_ns, b2, sizeof b2));
    if (d->nsteps && d->whatif_median_ns > 0)
        fprintf(f, "; median had the slowest rank arrived on time: %s",
                cs__report_tstr(&u, d->whatif_median_ns, b3, sizeof b3));
    if (d->nsteps && d->step_comm_ns >= 0)
        fprintf(f, "; communication %s per step", cs__report_tstr(&u, d->step_comm_ns, b4, sizeof b4));
    if (strcmp(d->step_source, "period") == 0)
        fprintf(f, "\n  period %d calls per step, matching %.1f %% of the positions, on %d of %d ranks searched",
                d->step_period, 100 * d->step_confidence, d->step_ranks_agreeing, d->step_ranks_searched);
    fprintf(f, "\n");
}

static void cs_report_text_layout(FILE *f, const cs_report_data *d)
{
    if (!d->layout[0])
        return;
    fprintf(f, "\nParallel layout: %s\n  %s\n", d->layout, d->layout_source);
    if (d->nlay <= 32) {
        fprintf(f, "  rank (dp,pp,tp):");
        for (int i = 0; i < d->nlay; i++)
            fprintf(f, "%s %d (%d,%d,%d)", i && i % 8 == 0 ? "\n                  " : "", d->lay[i].rank, d->lay[i].dp,
                    d->lay[i].pp, d->lay[i].tp);
        fprintf(f, "\n");
    }
}

static void cs_report_text_slowdown(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32];
    if (!d->has_slowdown)
        return;
    const int64_t v[] = { d->sd_actual_ns, d->sd_ideal_ns };
    cs_tunit u = cs__report_tunit_of(v, 2);
    fprintf(f, "\nSlowdown: S %.3f (median step %s replayed, %s with ideal durations; replay error %.1f %%)\n  %s\n",
            d->sd_S, cs__report_tstr(&u, d->sd_actual_ns, b1, sizeof b1),
            cs__report_tstr(&u, d->sd_ideal_ns, b2, sizeof b2), 100 * d->sd_replay_error, d->sd_text);
    fprintf(f, "  %-16s %-24s %8s %16s %16s\n", "by", "what", "S", "share of S - 1", "compute share");
    int shown = 0;
    for (int i = 0; i < d->nsd; i++) {
        const cs_slowdown_row *r = &d->sd[i];
        if (strcmp(r->kind, "step") == 0 || (strcmp(r->kind, "rank") == 0 && shown++ >= 8))
            continue;
        char cs[16] = "-";
        if (r->compute_share >= 0)
            snprintf(cs, sizeof cs, "%.0f%%", 100 * r->compute_share);
        fprintf(f, "  %-16s %-24s %8.3f %15.0f%% %16s\n", r->kind, r->name, r->s, 100 * r->share, cs);
    }
}

static void cs_report_text_waits(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], h1[32], h2[32];
    int64_t m1 = 0, m2 = 0;
    for (int i = 0; i < d->nrstats; i++) {
        m1 = d->rstats[i].imposed_wait_ns > m1 ? d->rstats[i].imposed_wait_ns : m1;
        m2 = d->rstats[i].median_lateness_ns > m2 ? d->rstats[i].median_lateness_ns : m2;
    }
    cs_tunit u1 = cs__report_tunit(m1), u2 = cs__report_tunit(m2);
    fprintf(f, "\nWait states per rank (who made the others wait)\n  %6s %10s %18s %22s\n", "rank", "times last",
            cs__report_thead("imposed wait", &u1, h1, sizeof h1),
            cs__report_thead("median lateness", &u2, h2, sizeof h2));
    for (int i = 0; i < d->nrstats; i++) {
        const cs_rank_stat *r = &d->rstats[i];
        fprintf(f, "  %6d %10lld %18s %22s\n", r->rank, (long long)r->times_last,
                cs__report_tnum(&u1, r->imposed_wait_ns, b1, sizeof b1),
                cs__report_tnum(&u2, r->median_lateness_ns, b2, sizeof b2));
    }
}

static void cs_report_text_tails(FILE *f, const cs_report_data *d)
{
    char b[5][32], h[5][32], sz[32];
    int n = d->ntails < 20 ? d->ntails : 20;
    int64_t mx[5] = { 0 };
    int w = 36;
    for (int i = 0; i < n; i++) {
        const cs_tail_row *t = &d->tails[i];
        const int64_t v[5] = { t->p50_ns, t->p90_ns, t->p99_ns, t->p999_ns, t->max_ns };
        for (int k = 0; k < 5; k++)
            mx[k] = v[k] > mx[k] ? v[k] : mx[k];
        char key[400], site[300];
        int l =
            snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(d, t->op),
                     cs_fmt_bytes(1LL << t->bucket, sz, sizeof sz), cs__report_tail_site(d, i, n, site, sizeof site));
        w = l > w ? (l < 64 ? l : 64) : w;
    }
    static const char *names[5] = { "p50", "p90", "p99", "p99.9", "max" };
    cs_tunit u[5];
    for (int k = 0; k < 5; k++) {
        u[k] = cs__report_tunit(mx[k]);
        cs__report_thead(names[k], &u[k], h[k], sizeof h[k]);
    }
    fprintf(f, "\nTail latency per collective (instance time: first entry to last exit)\n");
    fprintf(f, "  %-*s %7s %11s %11s %11s %11s %11s\n", w, "op [size] call site", "count", h[0], h[1], h[2], h[3],
            h[4]);
    for (int i = 0; i < n; i++) {
        const cs_tail_row *t = &d->tails[i];
        char key[400], fit[400], site[300];
        snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(d, t->op),
                 cs_fmt_bytes(1LL << t->bucket, sz, sizeof sz), cs__report_tail_site(d, i, n, site, sizeof site));
        const int64_t v[5] = { t->p50_ns, t->p90_ns, t->p99_ns, t->p999_ns, t->max_ns };
        for (int k = 0; k < 5; k++)
            cs__report_tnum(&u[k], v[k], b[k], sizeof b[k]);
        fprintf(f, "  %-*s %7lld %11s %11s %11s %11s %11s\n", w, cs__report_fit(key, w, fit, sizeof fit),
                (long long)t->count, b[0], b[1], b[2], b[3], b[4]);
        if (t->common[0])
            fprintf(f, "    slowest 1%%: %s\n", t->common);
    }
    if (d->ntails == 0)
        fprintf(f, "  (none)\n");
}

static void cs_report_text_trace(FILE *f, const cs_report_trace *t)
{
    char b1[32], b2[32], h1[32], h2[32];
    fprintf(f, "\n(total: time on the ranks' time lines, each instant once per rank: calls in flight together share\n"
               " it; a nonblocking collective lasts from its start to the end of the completion call that finished\n"
               " it, which gives its own time to the collectives it completed. p50-max: each call's own duration)\n");
    cs_report_text_groups(f, "Per op", "op", t->by_op, t->nby_op, 0, NULL, 0);
    cs_report_text_groups(f, "Per communicator", "communicator", t->by_comm, t->nby_comm, 0, &t->comms,
                          t->full ? 0 : 8);
    cs_report_text_groups(f, "Per call site", "call site", t->by_site, t->nby_site, 1, NULL, t->full ? 0 : 20);
    int64_t mw = 0;
    for (size_t i = 0; i < t->nranks; i++)
        mw = t->ranks[i].wall > mw ? t->ranks[i].wall : mw;
    cs_tunit u = cs__report_tunit(mw);
    fprintf(f, "\nPer rank: time inside traced calls\n  %6s %14s %14s %14s %10s\n", "rank",
            cs__report_thead("in calls", &u, h1, sizeof h1), cs__report_thead("wall", &u, h2, sizeof h2), "% of wall",
            "spans");
    for (size_t i = 0; i < t->nranks; i++) {
        const cs_report_rank *r = &t->ranks[i];
        fprintf(f, "  %6d %14s %14s %13.1f%% %10lld\n", r->rank, cs__report_tnum(&u, r->busy, b1, sizeof b1),
                cs__report_tnum(&u, r->wall, b2, sizeof b2),
                r->wall > 0 ? 100.0 * (double)r->busy / (double)r->wall : 0.0, (long long)r->spans);
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
    char b1[32];
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
    fprintf(f, "; clocks: %s; tool overhead about %s in all\n", nproc ? procs[0].clock : "-",
            cs_fmt_ns(overhead, b1, sizeof b1));
    /* the job's failures first: none on a trace that ended well */
    if (d->failures.n) {
        fprintf(f, "\nFailures (the job hung or failed; as `collscope status` would say post mortem)\n");
        for (size_t i = 0; i < d->failures.n; i++)
            fprintf(f, "  %s: %s\n", d->failures.v[i].kind, d->failures.v[i].text);
    }
    /* what the operators saw while it ran */
    if (d->nlive) {
        fprintf(f, "\nAlarms raised while the job ran (collscope run --top/--metrics-*; docs/live.md)\n");
        for (int i = 0; i < d->nlive; i++) {
            const cs_store_alarm_row *a = &d->live[i];
            char until[64] = "until the end";
            if (a->until_step >= 0)
                snprintf(until, sizeof until, "until step %lld", (long long)a->until_step);
            if (strcmp(a->kind, "slow") == 0 && a->name[0])
                cs_msg_line(f, "  %s turned slow at step %lld, %.1fx, %s", a->name, (long long)a->step, a->factor,
                            until);
            else if (strcmp(a->kind, "slow") == 0 && strcmp(a->subject, "comm") == 0)
                cs_msg_line(f, "  communicator %s turned slow at step %lld, %.1fx, %s", a->comm, (long long)a->step,
                            a->factor, until);
            else if (strcmp(a->kind, "slow") == 0 && a->rank >= 0 && strcmp(a->subject, "rank") == 0)
                cs_msg_line(f, "  rank %d turned slow at step %lld, %.1fx, %s", a->rank, (long long)a->step, a->factor,
                            until);
            else
                cs_msg_line(f, "  %s (at step %lld, %s)", a->text, (long long)a->step, until);
        }
    }
    fprintf(f, "\n");
    cs__report_answer(f, t, d);
    cs_report_text_slowdown(f, d);
    cs_report_text_stragglers(f, d);
    cs_report_text_steps(f, d);
    cs_report_text_layout(f, d);
    cs_report_text_waits(f, d);
    cs_report_text_tails(f, d);
    cs_report_text_trace(f, t);
    cs_report_text_gpu(f, d);
    cs_report_text_kernels(f, d);
    cs_report_text_overlap(f, t);
    cs_report_text_whatif(f, d);
    cs_report_text_models(f, d, t->full);
    cs_report_text_clocks(f, d, t->full);
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
