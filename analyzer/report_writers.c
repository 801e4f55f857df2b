/* report_writers.c: the analysis part of the reports (text, JSON, Markdown,
 * JUnit XML), the --fail-on gates and the diff of two runs. Everything is
 * read back from the stored analysis (cs_report_load). */
#include "config.h"
#include "analyzer/analysis.h"
#include "analyzer/cli.h"

#include <stdlib.h>
#include <string.h>

/* ---- loading ---- */

#define CS_GROW(arr, n, cap, T)                                 \
    do {                                                        \
        if ((n) == (cap)) {                                     \
            int nc_ = (cap) ? (cap)*2 : 16;                     \
            T *na_ = realloc((arr), (size_t)nc_ * sizeof *na_); \
            if (!na_)                                           \
                return -1;                                      \
            (arr) = na_;                                        \
            (cap) = nc_;                                        \
        }                                                       \
    } while (0)

typedef struct cs_loader {
    cs_report_data *d;
    int cs, cst, cr, ct, cm, cp;
} cs_loader;

static int cs_ld_model(const cs_model_row *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->models, l->d->nmodels, l->cm, cs_model_row);
    l->d->models[l->d->nmodels++] = *g;
    return 0;
}

static int cs_ld_prop(const cs_proposal *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->props, l->d->nprops, l->cp, cs_proposal);
    l->d->props[l->d->nprops++] = *g;
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

static int cs_ld_strag(const cs_straggler *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->strag, l->d->nstrag, l->cs, cs_straggler);
    l->d->strag[l->d->nstrag++] = *g;
    return 0;
}

static int cs_ld_step(const cs_step_row *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->steps, l->d->nsteps, l->cst, cs_step_row);
    l->d->steps[l->d->nsteps++] = *g;
    return 0;
}

static int cs_ld_rank(const cs_rank_stat *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->rstats, l->d->nrstats, l->cr, cs_rank_stat);
    l->d->rstats[l->d->nrstats++] = *g;
    return 0;
}

static int cs_ld_tail(const cs_tail_row *g, void *arg)
{
    cs_loader *l = arg;
    CS_GROW(l->d->tails, l->d->ntails, l->ct, cs_tail_row);
    l->d->tails[l->d->ntails++] = *g;
    return 0;
}

static int cs_cmp64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
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
    d->wf_measured_ns = cs_meta_i64(st, "whatif_measured_ns", -1);
    d->has_whatif = d->wf_measured_ns >= 0;
    d->wf_replay_ns = cs_meta_i64(st, "whatif_replay_ns", -1);
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
    if (d->nsteps > 0) {
        int64_t *t = malloc((size_t)d->nsteps * sizeof *t), *w = malloc((size_t)d->nsteps * sizeof *w);
        if (!t || !w) {
            free(t);
            free(w);
            return -1;
        }
        for (int i = 0; i < d->nsteps; i++)
            t[i] = d->steps[i].time_ns, w[i] = d->steps[i].whatif_ns;
        qsort(t, (size_t)d->nsteps, sizeof *t, cs_cmp64);
        qsort(w, (size_t)d->nsteps, sizeof *w, cs_cmp64);
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
    memset(d, 0, sizeof *d);
}

const char *cs_report_opname(const cs_report_data *d, int op)
{
    return op >= 0 && op < d->nops && d->ops[op].name[0] ? d->ops[op].name : "?";
}

/* ---- gates ---- */

static const cs_tail_row *cs_find_tail(const cs_report_data *d, const cs_report_data *in, const cs_tail_row *t)
{
    const char *name = cs_report_opname(d, t->op);
    for (int i = 0; i < in->ntails; i++) {
        const cs_tail_row *x = &in->tails[i];
        if (x->bucket == t->bucket && strcmp(x->callsite, t->callsite) == 0 &&
            strcmp(cs_report_opname(in, x->op), name) == 0)
            return x;
    }
    return NULL;
}

int cs_gates_eval(const char *spec, const cs_report_data *d, const cs_report_data *base, cs_gate **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    if (!spec || !*spec)
        return 0;
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return -1;
    int n = 0, cap = 0;
    cs_gate *g = NULL;
    char b1[32], b2[32];
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char name[32] = "";
        double pct = -1;
        char *eq = strpbrk(tok, "=>:");
        size_t nl = eq ? (size_t)(eq - tok) : strlen(tok);
        if (nl >= sizeof name)
            nl = sizeof name - 1;
        memcpy(name, tok, nl);
        name[nl] = '\0';
        if (eq) {
            char *end;
            pct = strtod(eq + 1, &end);
            if (*end == '%')
                end++;
            if (end == eq + 1 || *end || pct < 0) {
                snprintf(err, errlen, "--fail-on: '%s' is not NAME=PERCENT", tok);
                goto bad;
            }
        }
        int known = strcmp(name, "straggler") == 0 || strcmp(name, "p99") == 0 || strcmp(name, "step") == 0 ||
                    strcmp(name, "verdict") == 0;
        if (!known) {
            snprintf(err, errlen, "--fail-on: unknown gate '%s' (straggler=PCT, p99=PCT, step=PCT, verdict)", name);
            goto bad;
        }
        if (strcmp(name, "verdict") != 0 && pct < 0) {
            snprintf(err, errlen, "--fail-on: gate '%s' needs a percentage (%s=PCT)", name, name);
            goto bad;
        }
        if ((strcmp(name, "p99") == 0 || strcmp(name, "step") == 0) && !base) {
            snprintf(err, errlen, "--fail-on: gate '%s' compares against a baseline: give --baseline DIR", name);
            goto bad;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            cs_gate *ng = realloc(g, (size_t)cap * sizeof *ng);
            if (!ng)
                goto bad;
            g = ng;
        }
        cs_gate *x = &g[n++];
        memset(x, 0, sizeof *x);
        if (pct >= 0)
            snprintf(x->name, sizeof x->name, "%s>%g%%", name, pct);
        else
            snprintf(x->name, sizeof x->name, "%s", name);
        if (strcmp(name, "verdict") == 0) {
            x->failed = d->nstrag > 0;
            if (x->failed)
                snprintf(x->message, sizeof x->message, "%d straggler verdict(s), the first: %s rank %d: %s", d->nstrag,
                         d->strag[0].kind, d->strag[0].rank, d->strag[0].evidence);
            else
                snprintf(x->message, sizeof x->message, "no straggler verdict");
        } else if (strcmp(name, "straggler") == 0) {
            const cs_straggler *worst = NULL;
            for (int i = 0; i < d->nstrag; i++)
                if (!worst || d->strag[i].cost_ns > worst->cost_ns)
                    worst = &d->strag[i];
            double share =
                worst && d->step_median_ns > 0 ? 100.0 * (double)worst->cost_ns / (double)d->step_median_ns : 0;
            x->failed = worst && (d->step_median_ns <= 0 || share > pct);
            if (worst)
                snprintf(x->message, sizeof x->message,
                         "worst straggler: %s rank %d costs %s per step, %.1f%% of the "
                         "median step time %s (limit %g%%)",
                         worst->kind, worst->rank, cs_fmt_ns(worst->cost_ns, b1, sizeof b1), share,
                         cs_fmt_ns(d->step_median_ns, b2, sizeof b2), pct);
            else
                snprintf(x->message, sizeof x->message, "no straggler");
        } else if (strcmp(name, "step") == 0) {
            double ch = base->step_median_ns > 0
                            ? 100.0 * (double)(d->step_median_ns - base->step_median_ns) / (double)base->step_median_ns
                            : 0;
            x->failed = base->step_median_ns > 0 && ch > pct;
            snprintf(
                x->message, sizeof x->message, "median step time %s against %s in the baseline (%+.1f%%, limit %g%%)",
                cs_fmt_ns(d->step_median_ns, b1, sizeof b1), cs_fmt_ns(base->step_median_ns, b2, sizeof b2), ch, pct);
        } else { /* p99 */
            double worst = 0;
            const cs_tail_row *wt = NULL, *wb = NULL;
            for (int i = 0; i < d->ntails; i++) {
                const cs_tail_row *t = &d->tails[i], *bt = cs_find_tail(d, base, t);
                if (!bt || bt->count < 10 || t->count < 10 || bt->p99_ns <= 0)
                    continue;
                double ch = 100.0 * (double)(t->p99_ns - bt->p99_ns) / (double)bt->p99_ns;
                if (!wt || ch > worst)
                    worst = ch, wt = t, wb = bt;
            }
            x->failed = wt && worst > pct;
            if (wt)
                snprintf(x->message, sizeof x->message,
                         "largest p99 change: %s (%s) %s against %s (%+.1f%%, limit %g%%)", cs_report_opname(d, wt->op),
                         wt->callsite[0] ? wt->callsite : "?", cs_fmt_ns(wt->p99_ns, b1, sizeof b1),
                         cs_fmt_ns(wb->p99_ns, b2, sizeof b2), worst, pct);
            else
                snprintf(x->message, sizeof x->message, "no collective group in common with the baseline");
        }
    }
    free(copy);
    *out = g;
    return n;
bad:
    free(copy);
    free(g);
    return -1;
}

/* ---- text ---- */

static void cs_model_name(char *buf, size_t len, const cs_report_data *d, const cs_model_row *m)
{
    snprintf(buf, len, "%s%s%s comm %lld", cs_report_opname(d, m->op), m->algo[0] ? " " : "", m->algo,
             (long long)m->comm);
}

/* The cost models, the replay and the proposals (text). */
static void cs_write_whatif_text(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    if (d->fuse_members || d->fused_calls)
        fprintf(f, "\nApply mode: %lld calls fused into %lld (all ranks)\n", (long long)d->fuse_members,
                (long long)d->fused_calls);
    fprintf(f, "\nCost models (time of n calls completing together = alpha + (n-1) x gamma + bytes x beta,\n"
               "fitted to the transfers)\n");
    if (!d->nmodels)
        fprintf(f, "  (none: no collective transfer to fit)\n");
    else
        fprintf(f, "  %-36s %7s %19s %11s %11s %12s %6s %7s\n", "op [algo] communicator", "points", "sizes", "alpha",
                "gamma", "beta/KiB", "R2", "resid");
    for (int i = 0; i < d->nmodels; i++) {
        const cs_model_row *m = &d->models[i];
        char key[128], sz[48];
        cs_model_name(key, sizeof key, d, m);
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
        fprintf(f, "  %-36.36s %7lld %19s %8.2f us %8.2f us %12s %6s %6.1f%%\n", key, (long long)m->points, sz,
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
        fprintf(f, "  communication per step (median of the ranks' mean): %s\n",
                cs_fmt_ns(d->wf_comm_step_ns, b1, sizeof b1));
    fprintf(f, "\nProposals (estimated by the what-if replay)\n");
    if (!d->nprops)
        fprintf(f, "  none\n");
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

void cs_write_analysis_text(FILE *f, const cs_report_data *d, const cs_gate *g, int ng)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
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
        else if (strcmp(s->kind, "slow_link") == 0)
            fprintf(f, "  %-16s comm %lld  costs %s per step, steps %lld-%lld\n", s->kind, (long long)s->comm,
                    cs_fmt_ns(s->cost_ns, b1, sizeof b1), (long long)s->first_step, (long long)s->last_step);
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
    fprintf(f, "\n");
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
    cs_write_whatif_text(f, d);
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

/* ---- JSON ---- */

void cs_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void cs_json_i64_or_null(FILE *f, int64_t v)
{
    if (v < 0)
        fputs("null", f);
    else
        fprintf(f, "%lld", (long long)v);
}

/* The keys of issue 6: cost_models, whatif, proposals, apply_mode. */
static void cs_write_whatif_json(FILE *f, const cs_report_data *d)
{
    fprintf(f, "  \"cost_models\": [");
    for (int i = 0; i < d->nmodels; i++) {
        const cs_model_row *m = &d->models[i];
        fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
        cs_json_string(f, cs_report_opname(d, m->op));
        fprintf(f, ", \"comm\": %lld, \"algo\": ", (long long)m->comm);
        cs_json_string(f, m->algo);
        fprintf(f,
                ", \"points\": %lld, \"cells\": %lld, \"min_bytes\": %lld, \"max_bytes\": %lld, "
                "\"alpha_ns\": %.3f, \"gamma_ns\": %.3f, \"beta_ns_per_byte\": ",
                (long long)m->points, (long long)m->cells, (long long)m->min_bytes, (long long)m->max_bytes,
                m->alpha_ns, m->gamma_ns);
        if (m->fitted)
            fprintf(f, "%.6g, \"r2\": %.4f", m->beta_ns_per_byte, m->r2);
        else
            fprintf(f, "null, \"r2\": null");
        fprintf(f, ", \"rel_residual\": %.4f, \"fitted\": %s, \"note\": ", m->rel_resid, m->fitted ? "true" : "false");
        cs_json_string(f, m->note);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", d->nmodels ? "\n  " : "");
    fprintf(f, "  \"whatif\": {\"replayed\": %s, \"measured_step_ns\": ", d->has_whatif ? "true" : "false");
    cs_json_i64_or_null(f, d->wf_measured_ns);
    fprintf(f, ", \"replay_step_ns\": ");
    cs_json_i64_or_null(f, d->wf_replay_ns);
    fprintf(f, ", \"replay_error\": %.6f, \"model_step_ns\": ", d->wf_replay_error);
    cs_json_i64_or_null(f, d->wf_model_ns);
    fprintf(f, ", \"model_error\": %.6f, \"ontime_step_ns\": ", d->wf_model_error);
    cs_json_i64_or_null(f, d->wf_ontime_ns);
    fprintf(f, ", \"ontime_gain_ns\": %lld, \"comm_step_ns\": ", (long long)d->wf_ontime_gain_ns);
    cs_json_i64_or_null(f, d->wf_comm_step_ns);
    fprintf(f, ", \"allreduce_calls_per_step\": %.3f, \"memcpy_gbps\": %.3g, \"note\": ", d->wf_ar_calls_per_step,
            d->wf_memcpy_gbps);
    cs_json_string(f, d->wf_note);
    fprintf(f, "},\n  \"apply_mode\": {\"fuse_members\": %lld, \"fused_calls\": %lld},\n", (long long)d->fuse_members,
            (long long)d->fused_calls);
    fprintf(f, "  \"proposals\": [");
    for (int i = 0; i < d->nprops; i++) {
        const cs_proposal *p = &d->props[i];
        fprintf(f, "%s\n    {\"kind\": ", i ? "," : "");
        cs_json_string(f, p->kind);
        fprintf(f, ", \"comm\": %lld, \"op\": ", (long long)p->comm);
        cs_json_string(f, strcmp(p->kind, "fusion") == 0 ? cs_report_opname(d, p->op) : "");
        fprintf(f, ", \"callsite\": ");
        cs_json_string(f, p->callsite);
        fprintf(f,
                ", \"calls_per_step\": %.3f, \"min_bytes\": %lld, \"max_bytes\": %lld, \"bytes_per_step\": %lld,"
                " \"bucket_bytes\": %lld, \"groups_per_step\": %.3f, \"gain_ns\": %lld, \"step_ns\": %lld,"
                " \"gain_share\": %.4f, \"evidence\": ",
                p->calls_per_step, (long long)p->min_bytes, (long long)p->max_bytes, (long long)p->bytes_per_step,
                (long long)p->bucket_bytes, p->groups_per_step, (long long)p->gain_ns, (long long)p->step_ns,
                p->step_ns > 0 ? (double)p->gain_ns / (double)p->step_ns : 0.0);
        cs_json_string(f, p->evidence);
        fprintf(f, ", \"env\": ");
        cs_json_string(f, p->env);
        fprintf(f, ", \"curve\": [");
        const char *c = p->curve;
        int k = 0;
        while (*c) {
            long long sz = 0, gain = 0, gain2 = 0;
            double grp = 0;
            if (sscanf(c, "%lld:%lf:%lld:%lld", &sz, &grp, &gain, &gain2) == 4)
                fprintf(
                    f,
                    "%s{\"bucket_bytes\": %lld, \"groups_per_step\": %.3f, \"gain_ns\": %lld, \"gain_program_ns\": %lld}",
                    k++ ? ", " : "", sz, grp, gain, gain2);
            const char *n = strchr(c, ',');
            if (!n)
                break;
            c = n + 1;
        }
        fprintf(f, "]}");
    }
    fprintf(f, "%s],\n", d->nprops ? "\n  " : "");
}

void cs_write_analysis_json(FILE *f, const cs_report_data *d, const cs_gate *g, int ng)
{
    fprintf(f,
            "  \"analysis_version\": %d,\n  \"instances\": %lld,\n  \"incomplete_instances\": %lld,\n"
            "  \"p2p_messages\": %lld,\n",
            CS_ANALYSIS_VERSION, (long long)d->instances, (long long)d->incomplete, (long long)d->p2p);
    fprintf(f, "  \"clocks\": [");
    for (int i = 0; i < d->nproc; i++) {
        const cs_proc *p = &d->procs[i];
        fprintf(f, "%s\n    {\"rank\": %d, \"clock\": ", i ? "," : "", p->rank);
        cs_json_string(f, p->clock);
        fprintf(f, ", \"host\": ");
        cs_json_string(f, p->host);
        fprintf(f, ", \"offset_ns\": %lld, \"drift_ppm\": %.6f, \"residual_ns\": %lld}", (long long)p->clock_offset_ns,
                p->clock_drift_ppm, (long long)p->align_residual_ns);
    }
    fprintf(f, "%s],\n", d->nproc ? "\n  " : "");
    fprintf(f, "  \"stragglers\": [");
    for (int i = 0; i < d->nstrag; i++) {
        const cs_straggler *s = &d->strag[i];
        fprintf(f, "%s\n    {\"kind\": ", i ? "," : "");
        cs_json_string(f, s->kind);
        fprintf(f,
                ", \"rank\": %d, \"src\": %d, \"dst\": %d, \"comm\": %lld, \"first_step\": %lld, \"last_step\": %lld,"
                " \"begin_ns\": %lld, \"end_ns\": %lld, \"lateness_ns\": %lld, \"cost_ns\": %lld, \"cost_share\": %.4f,"
                " \"evidence\": ",
                s->rank, s->src, s->dst, (long long)s->comm, (long long)s->first_step, (long long)s->last_step,
                (long long)s->begin_ns, (long long)s->end_ns, (long long)s->lateness_ns, (long long)s->cost_ns,
                d->step_median_ns > 0 ? (double)s->cost_ns / (double)d->step_median_ns : 0.0);
        cs_json_string(f, s->evidence);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", d->nstrag ? "\n  " : "");
    fprintf(f, "  \"steps\": {\"source\": ");
    cs_json_string(f, d->step_source);
    fprintf(f, ", \"count\": %d, \"median_ns\": %lld, \"p90_ns\": %lld, \"whatif_median_ns\": %lld, \"list\": [",
            d->nsteps, (long long)d->step_median_ns, (long long)d->step_p90_ns, (long long)d->whatif_median_ns);
    for (int i = 0; i < d->nsteps; i++) {
        const cs_step_row *s = &d->steps[i];
        fprintf(
            f,
            "%s\n    {\"step\": %lld, \"begin_ns\": %lld, \"time_ns\": %lld, \"slowest_rank\": %d, \"whatif_ns\": %lld}",
            i ? "," : "", (long long)s->step, (long long)s->begin_ns, (long long)s->time_ns, s->slowest_rank,
            (long long)s->whatif_ns);
    }
    fprintf(f, "%s]},\n", d->nsteps ? "\n  " : "");
    fprintf(f, "  \"rank_stats\": [");
    for (int i = 0; i < d->nrstats; i++) {
        const cs_rank_stat *r = &d->rstats[i];
        fprintf(f,
                "%s\n    {\"rank\": %d, \"times_last\": %lld, \"imposed_wait_ns\": %lld, \"median_lateness_ns\": %lld}",
                i ? "," : "", r->rank, (long long)r->times_last, (long long)r->imposed_wait_ns,
                (long long)r->median_lateness_ns);
    }
    fprintf(f, "%s],\n", d->nrstats ? "\n  " : "");
    fprintf(f, "  \"tails\": [");
    for (int i = 0; i < d->ntails; i++) {
        const cs_tail_row *t = &d->tails[i];
        fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
        cs_json_string(f, cs_report_opname(d, t->op));
        fprintf(f, ", \"comm\": %lld, \"bucket\": %d, \"callsite\": ", (long long)t->comm, t->bucket);
        cs_json_string(f, t->callsite);
        fprintf(f,
                ", \"count\": %lld, \"p50_ns\": %lld, \"p90_ns\": %lld, \"p99_ns\": %lld, \"p999_ns\": %lld,"
                " \"max_ns\": %lld, \"slowest_common\": ",
                (long long)t->count, (long long)t->p50_ns, (long long)t->p90_ns, (long long)t->p99_ns,
                (long long)t->p999_ns, (long long)t->max_ns);
        cs_json_string(f, t->common);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", d->ntails ? "\n  " : "");
    fprintf(f, "  \"notes\": [");
    const char *p = d->notes;
    int k = 0;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
        fprintf(f, "%s", k++ ? ", " : "");
        cs_json_string(f, line);
        p += l + (e ? 1 : 0);
    }
    fprintf(f, "],\n");
    cs_write_whatif_json(f, d);
    fprintf(f, "  \"gates\": [");
    for (int i = 0; i < ng; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        cs_json_string(f, g[i].name);
        fprintf(f, ", \"failed\": %s, \"message\": ", g[i].failed ? "true" : "false");
        cs_json_string(f, g[i].message);
        fprintf(f, "}");
    }
    fprintf(f, "%s]\n", ng ? "\n  " : "");
}

/* ---- Markdown ---- */

static void cs_md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void cs_write_whatif_markdown(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "\n### Proposals\n\n");
    if (d->fuse_members || d->fused_calls)
        fprintf(f, "Apply mode: %lld calls fused into %lld (all ranks).\n\n", (long long)d->fuse_members,
                (long long)d->fused_calls);
    if (d->has_whatif)
        fprintf(f,
                "What-if replay: measured median step %s, replayed with the cost models %s (replay error %.2f %%).\n\n",
                cs_fmt_ns(d->wf_measured_ns, b1, sizeof b1), cs_fmt_ns(d->wf_model_ns, b2, sizeof b2),
                100 * d->wf_model_error);
    if (!d->nprops) {
        fprintf(f, "None.\n");
    } else {
        fprintf(f,
                "| kind | call site | bucket | gain per step | evidence | apply with |\n|---|---|---:|---:|---|---|\n");
        for (int i = 0; i < d->nprops; i++) {
            const cs_proposal *p = &d->props[i];
            fprintf(f, "| %s | ", p->kind);
            cs_md_cell(f, p->callsite);
            fprintf(f, " | %s | %s (%.1f %%) | ", p->bucket_bytes ? cs_fmt_bytes(p->bucket_bytes, b1, sizeof b1) : "",
                    cs_fmt_ns(p->gain_ns, b2, sizeof b2),
                    p->step_ns > 0 ? 100.0 * (double)p->gain_ns / (double)p->step_ns : 0.0);
            cs_md_cell(f, p->evidence);
            fprintf(f, " | %s%s%s |\n", p->env[0] ? "`" : "", p->env, p->env[0] ? "`" : "");
        }
    }
    if (d->nmodels) {
        fprintf(
            f,
            "\n| cost model | points | alpha | gamma | beta per KiB | R² | note |\n|---|---:|---:|---:|---:|---:|---|\n");
        for (int i = 0; i < d->nmodels; i++) {
            const cs_model_row *m = &d->models[i];
            char key[128];
            cs_model_name(key, sizeof key, d, m);
            fprintf(f, "| %s | %lld | %.2f us | %.2f us | ", key, (long long)m->points, m->alpha_ns / 1e3,
                    m->gamma_ns / 1e3);
            if (m->fitted)
                fprintf(f, "%.3f ns | %.3f | ", m->beta_ns_per_byte * 1024, m->r2);
            else
                fprintf(f, "unknown | - | ");
            cs_md_cell(f, m->note);
            fprintf(f, " |\n");
        }
    }
    (void)b3;
}

void cs_write_markdown(FILE *f, const char *trace, const cs_report_data *d, const cs_gate *g, int ng)
{
    char b1[32], b2[32], b3[32], b4[32];
    int failed = 0;
    for (int i = 0; i < ng; i++)
        failed += g[i].failed;
    fprintf(f, "## collscope report%s\n\n", ng ? (failed ? ": gates failed" : ": gates passed") : "");
    fprintf(f, "Trace `%s`: %d processes, %lld spans, %lld collective instances", trace, d->nproc, (long long)d->spans,
            (long long)d->instances);
    if (d->nsteps)
        fprintf(f, "; %d steps, median %s (%s had the slowest rank been on time)", d->nsteps,
                cs_fmt_ns(d->step_median_ns, b1, sizeof b1), cs_fmt_ns(d->whatif_median_ns, b2, sizeof b2));
    fprintf(f, ".\n\n");
    if (ng) {
        fprintf(f, "### Gates\n\n| gate | result | detail |\n|---|---|---|\n");
        for (int i = 0; i < ng; i++) {
            fprintf(f, "| `%s` | %s | ", g[i].name, g[i].failed ? "**FAIL**" : "pass");
            cs_md_cell(f, g[i].message);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "### Stragglers\n\n");
    if (!d->nstrag)
        fprintf(f, "No verdict: no rank, link or collective is out of line.\n\n");
    else {
        fprintf(f, "| kind | rank | link | steps | cost per step | evidence |\n|---|---|---|---|---|---|\n");
        for (int i = 0; i < d->nstrag; i++) {
            const cs_straggler *s = &d->strag[i];
            fprintf(f, "| %s | %d | ", s->kind, s->rank);
            if (s->src >= 0)
                fprintf(f, "%d → %d", s->src, s->dst);
            else if (strcmp(s->kind, "slow_link") == 0)
                fprintf(f, "comm %lld", (long long)s->comm);
            fprintf(f, " | %lld–%lld | %s | ", (long long)s->first_step, (long long)s->last_step,
                    cs_fmt_ns(s->cost_ns, b1, sizeof b1));
            cs_md_cell(f, s->evidence);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
    }
    fprintf(
        f,
        "### Who made the others wait\n\n| rank | times last | imposed wait | median lateness |\n|---:|---:|---:|---:|\n");
    for (int i = 0; i < d->nrstats; i++)
        fprintf(f, "| %d | %lld | %s | %s |\n", d->rstats[i].rank, (long long)d->rstats[i].times_last,
                cs_fmt_ns(d->rstats[i].imposed_wait_ns, b1, sizeof b1),
                cs_fmt_ns(d->rstats[i].median_lateness_ns, b2, sizeof b2));
    fprintf(f, "\n### Tail latency\n\n| op | size | call site | count | p50 | p99 | max | slowest 1 %% |\n"
               "|---|---:|---|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < d->ntails && i < 15; i++) {
        const cs_tail_row *t = &d->tails[i];
        fprintf(f, "| %s | %s | ", cs_report_opname(d, t->op), cs_fmt_bytes(1LL << t->bucket, b4, sizeof b4));
        cs_md_cell(f, t->callsite);
        fprintf(f, " | %lld | %s | %s | %s | ", (long long)t->count, cs_fmt_ns(t->p50_ns, b1, sizeof b1),
                cs_fmt_ns(t->p99_ns, b2, sizeof b2), cs_fmt_ns(t->max_ns, b3, sizeof b3));
        cs_md_cell(f, t->common);
        fprintf(f, " |\n");
    }
    cs_write_whatif_markdown(f, d);
    if (d->notes[0]) {
        fprintf(f, "\n### What is missing\n\n");
        const char *p = d->notes;
        while (*p) {
            const char *e = strchr(p, '\n');
            int l = e ? (int)(e - p) : (int)strlen(p);
            fprintf(f, "- %.*s\n", l, p);
            p += l + (e ? 1 : 0);
        }
    }
}

/* ---- JUnit ---- */

static void cs_xml(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

void cs_write_junit(FILE *f, const char *trace, const cs_report_data *d, const cs_gate *g, int ng)
{
    cs_gate dflt;
    if (ng == 0) { /* no gate asked: one informational case on the verdicts */
        memset(&dflt, 0, sizeof dflt);
        snprintf(dflt.name, sizeof dflt.name, "verdict");
        dflt.failed = d->nstrag > 0;
        snprintf(dflt.message, sizeof dflt.message, "%d straggler verdict(s)", d->nstrag);
        g = &dflt;
        ng = 1;
    }
    int failed = 0;
    for (int i = 0; i < ng; i++)
        failed += g[i].failed;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%d\" failures=\"%d\">\n", ng, failed);
    fprintf(f, "  <testsuite name=\"collscope\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", ng,
            failed);
    for (int i = 0; i < ng; i++) {
        fprintf(f, "    <testcase classname=\"collscope.gates\" name=\"");
        cs_xml(f, g[i].name);
        fprintf(f, "\">");
        if (g[i].failed) {
            fprintf(f, "\n      <failure message=\"");
            cs_xml(f, g[i].message);
            fprintf(f, "\">");
            cs_xml(f, g[i].message);
            fprintf(f, "</failure>\n    ");
        } else {
            fprintf(f, "<system-out>");
            cs_xml(f, g[i].message);
            fprintf(f, "</system-out>");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "    <system-out>trace ");
    cs_xml(f, trace);
    fprintf(f, ": %d processes, %lld spans, %d straggler verdict(s)</system-out>\n", d->nproc, (long long)d->spans,
            d->nstrag);
    fprintf(f, "  </testsuite>\n</testsuites>\n");
}

/* ---- diff ---- */

void cs_write_diff(FILE *f, int json, const char *base_name, const cs_report_data *base, const char *new_name,
                   const cs_report_data *cur)
{
    char b1[32], b2[32];
    double ch = base->step_median_ns > 0
                    ? 100.0 * (double)(cur->step_median_ns - base->step_median_ns) / (double)base->step_median_ns
                    : 0;
    if (json) {
        fprintf(f, "{\n  \"format\": \"collscope-diff\",\n  \"version\": 1,\n  \"base\": ");
        cs_json_string(f, base_name);
        fprintf(f, ",\n  \"new\": ");
        cs_json_string(f, new_name);
        fprintf(f, ",\n  \"step\": {\"base_median_ns\": %lld, \"new_median_ns\": %lld, \"change_pct\": %.2f},\n",
                (long long)base->step_median_ns, (long long)cur->step_median_ns, ch);
    } else {
        fprintf(f, "collscope diff: %s -> %s\n\nStep time (median): %s -> %s (%+.1f%%)\n", base_name, new_name,
                cs_fmt_ns(base->step_median_ns, b1, sizeof b1), cs_fmt_ns(cur->step_median_ns, b2, sizeof b2), ch);
    }
    /* stragglers: in both, gone, new (same kind and rank or link) */
    const cs_report_data *side[2] = { base, cur };
    const char *label[2] = { "gone", "new" };
    if (json)
        fprintf(f, "  \"stragglers\": [");
    else
        fprintf(f, "\nStragglers\n");
    int k = 0;
    for (int sd = 0; sd < 2; sd++) {
        const cs_report_data *x = side[sd], *y = side[1 - sd];
        for (int i = 0; i < x->nstrag; i++) {
            const cs_straggler *s = &x->strag[i], *m = NULL;
            for (int j = 0; j < y->nstrag; j++)
                if (strcmp(y->strag[j].kind, s->kind) == 0 && y->strag[j].rank == s->rank &&
                    y->strag[j].dst == s->dst &&
                    (s->src >= 0 || strcmp(s->kind, "slow_link") != 0 || y->strag[j].comm == s->comm))
                    m = &y->strag[j];
            if (m && sd == 1)
                continue; /* reported from the base side */
            const char *st = m ? "both" : label[sd];
            if (json) {
                fprintf(f, "%s\n    {\"status\": \"%s\", \"kind\": ", k++ ? "," : "", st);
                cs_json_string(f, s->kind);
                fprintf(f, ", \"rank\": %d, \"src\": %d, \"dst\": %d, \"base_cost_ns\": %lld, \"new_cost_ns\": %lld}",
                        s->rank, s->src, s->dst, (long long)(sd == 0 ? s->cost_ns : 0),
                        (long long)(sd == 1 ? s->cost_ns
                                    : m     ? m->cost_ns
                                            : 0));
            } else {
                k++;
                char where[48] = "";
                if (s->src >= 0)
                    snprintf(where, sizeof where, " (link)");
                else if (s->comm)
                    snprintf(where, sizeof where, " (comm %lld)", (long long)s->comm);
                fprintf(f, "  %-5s %-16s rank %d%s  cost %s -> %s\n", st, s->kind, s->rank, where,
                        cs_fmt_ns(sd == 0 ? s->cost_ns : 0, b1, sizeof b1),
                        cs_fmt_ns(sd == 1 ? s->cost_ns
                                  : m     ? m->cost_ns
                                          : 0,
                                  b2, sizeof b2));
            }
        }
    }
    if (json)
        fprintf(f, "%s],\n  \"tails\": [", k ? "\n  " : "");
    else {
        if (!k)
            fprintf(f, "  none in either run\n");
        fprintf(f, "\nTail (p99) of each collective group\n  %-40s %11s %11s %8s\n", "op [size] call site", "base",
                "new", "change");
    }
    k = 0;
    for (int i = 0; i < cur->ntails; i++) {
        const cs_tail_row *t = &cur->tails[i], *bt = cs_find_tail(cur, base, t);
        double c = bt && bt->p99_ns > 0 ? 100.0 * (double)(t->p99_ns - bt->p99_ns) / (double)bt->p99_ns : 0;
        if (json) {
            fprintf(f, "%s\n    {\"op\": ", k++ ? "," : "");
            cs_json_string(f, cs_report_opname(cur, t->op));
            fprintf(f, ", \"bucket\": %d, \"callsite\": ", t->bucket);
            cs_json_string(f, t->callsite);
            fprintf(f, ", \"base_p99_ns\": %lld, \"new_p99_ns\": %lld, \"change_pct\": %.2f}",
                    (long long)(bt ? bt->p99_ns : -1), (long long)t->p99_ns, c);
        } else {
            char key[256], b6[32];
            snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(cur, t->op),
                     cs_fmt_bytes(1LL << t->bucket, b6, sizeof b6), t->callsite);
            fprintf(f, "  %-40.40s %11s %11s", key, bt ? cs_fmt_ns(bt->p99_ns, b1, sizeof b1) : "-",
                    cs_fmt_ns(t->p99_ns, b2, sizeof b2));
            if (bt)
                fprintf(f, " %+7.1f%%\n", c);
            else
                fprintf(f, " %8s\n", "new");
        }
    }
    if (json)
        fprintf(f, "%s]\n}\n", k ? "\n  " : "");
}
