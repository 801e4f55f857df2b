/* gates.c: the --fail-on gates of `collscope report`: each checks the
 * stored analysis (and, for p99 and step, a baseline run) against a limit
 * and says why it passed or failed. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/numarg.h"
#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

/* The verdict kinds a gate may name (KIND=PCT). */
static const char *const cs_gates_kinds[] = { "persistent", "transient", "recurring", "slow_link", "slow_collective" };

static int cs_gates_is_kind(const char *name)
{
    for (size_t i = 0; i < sizeof cs_gates_kinds / sizeof cs_gates_kinds[0]; i++)
        if (strcmp(name, cs_gates_kinds[i]) == 0)
            return 1;
    return 0;
}

/* The steps' time in all. */
static double cs_gates_steps_ns(const cs_report_data *d)
{
    double t = 0;
    for (int i = 0; i < d->nsteps; i++)
        if (d->steps[i].time_ns > 0)
            t += (double)d->steps[i].time_ns;
    return t;
}

/* What verdict g costs, in percent: per affected step against the median
 * step time, except for a recurring straggler: its total against the time
 * of all steps (its cost per affected step may well exceed a step). */
static double cs_gates_share(const cs_report_data *d, const cs_straggler *g)
{
    if (d->step_median_ns <= 0)
        return 0;
    if (strcmp(g->kind, "recurring") == 0)
        return cs_gates_steps_ns(d) > 0 ? 100.0 * (double)g->total_ns / cs_gates_steps_ns(d) : 0;
    return 100.0 * (double)g->cost_ns / (double)d->step_median_ns;
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
    int n = 0;
    size_t cap = 0;
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
            char opt[64];
            snprintf(opt, sizeof opt, "--fail-on %s", name);
            if (cs_numarg_double(opt, eq + 1, 0, 1e9, 1, &pct, err, errlen) != 0)
                goto bad;
        }
        int known = strcmp(name, "straggler") == 0 || strcmp(name, "p99") == 0 || strcmp(name, "step") == 0 ||
                    strcmp(name, "verdict") == 0 || strcmp(name, "slowdown") == 0 || strcmp(name, "failures") == 0 ||
                    strcmp(name, "exposed-comm") == 0 || cs_gates_is_kind(name);
        if (!known) {
            snprintf(
                err, errlen,
                "--fail-on: unknown gate '%s' (straggler=PCT, p99=PCT, step=PCT, slowdown=PCT, exposed-comm=PCT, verdict, "
                "failures, or a verdict kind: persistent, transient, recurring, slow_link, slow_collective=PCT)",
                name);
            goto bad;
        }
        if (strcmp(name, "verdict") != 0 && strcmp(name, "failures") != 0 && pct < 0) {
            snprintf(err, errlen, "--fail-on: gate '%s' needs a percentage (%s=PCT)", name, name);
            goto bad;
        }
        if ((strcmp(name, "p99") == 0 || strcmp(name, "step") == 0) && !base) {
            snprintf(err, errlen, "--fail-on: gate '%s' compares against a baseline: give --baseline DIR", name);
            goto bad;
        }
        if (CS_VEC_RESERVE(g, cap, (size_t)n + 1) != 0)
            goto bad;
        cs_gate *x = &g[n++];
        memset(x, 0, sizeof *x);
        if (pct >= 0)
            snprintf(x->name, sizeof x->name, "%s>%g%%", name, pct);
        else
            snprintf(x->name, sizeof x->name, "%s", name);
        if (strcmp(name, "slowdown") == 0) {
            double sd = d->has_slowdown ? 100.0 * (d->sd_S - 1) : 0;
            x->failed = d->has_slowdown && sd > pct;
            if (d->has_slowdown)
                snprintf(x->message, sizeof x->message, "slowdown %.1f%% (S %.3f, limit %g%%): %s", sd, d->sd_S, pct,
                         d->sd_text);
            else
                snprintf(x->message, sizeof x->message, "no slowdown attribution (fewer than 3 steps)");
        } else if (strcmp(name, "exposed-comm") == 0) {
            const cs_gpu_time_row *worst = NULL;
            for (int i = 0; i < d->ngpu; i++)
                if (!worst || cs__report_gpu_share(&d->gpu[i], d->gpu[i].comm_exposed_ns) >
                                  cs__report_gpu_share(worst, worst->comm_exposed_ns))
                    worst = &d->gpu[i];
            double share = worst ? 100.0 * cs__report_gpu_share(worst, worst->comm_exposed_ns) : 0;
            x->failed = worst && share > pct;
            if (worst)
                snprintf(x->message, sizeof x->message,
                         "largest exposed communication: rank %d, %s of its GPU window %s, %.1f%% (limit %g%%)",
                         worst->rank, cs_fmt_ns(worst->comm_exposed_ns, b1, sizeof b1),
                         cs_fmt_ns(worst->window_ns, b2, sizeof b2), share, pct);
            else
                snprintf(x->message, sizeof x->message, "no GPU activity in this trace");
        } else if (strcmp(name, "failures") == 0) {
            x->failed = d->failures.n > 0;
            if (x->failed)
                snprintf(x->message, sizeof x->message, "%zu failure(s) of the job, the first: %s: %s", d->failures.n,
                         d->failures.v[0].kind, d->failures.v[0].text);
            else
                snprintf(x->message, sizeof x->message, "no failure: no call in flight, no process died");
        } else if (strcmp(name, "verdict") == 0) {
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
        } else if (cs_gates_is_kind(name)) {
            const cs_straggler *worst = NULL;
            double share = 0;
            for (int i = 0; i < d->nstrag; i++)
                if (strcmp(d->strag[i].kind, name) == 0 && (!worst || cs_gates_share(d, &d->strag[i]) > share))
                    worst = &d->strag[i], share = cs_gates_share(d, worst);
            x->failed = worst && (d->step_median_ns <= 0 || share > pct);
            if (worst && strcmp(name, "recurring") == 0)
                snprintf(x->message, sizeof x->message,
                         "worst recurring straggler: rank %d costs %s in %lld steps, %.1f%% of the %d steps' "
                         "time %s (limit %g%%)",
                         worst->rank, cs_fmt_ns(worst->total_ns, b1, sizeof b1), (long long)worst->affected, share,
                         d->nsteps, cs_fmt_ns((int64_t)cs_gates_steps_ns(d), b2, sizeof b2), pct);
            else if (worst)
                snprintf(x->message, sizeof x->message,
                         "worst %s verdict: rank %d costs %s per step, %.1f%% of the median step time %s "
                         "(limit %g%%)",
                         name, worst->rank, cs_fmt_ns(worst->cost_ns, b1, sizeof b1), share,
                         cs_fmt_ns(d->step_median_ns, b2, sizeof b2), pct);
            else
                snprintf(x->message, sizeof x->message, "no %s verdict", name);
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
                const cs_tail_row *t = &d->tails[i], *bt = cs__report_find_tail(d, base, t);
                if (!bt || bt->count < 10 || t->count < 10 || bt->p99_ns <= 0)
                    continue;
                double ch = 100.0 * (double)(t->p99_ns - bt->p99_ns) / (double)bt->p99_ns;
                if (!wt || ch > worst)
                    worst = ch, wt = t, wb = bt;
            }
            x->failed = wt && worst > pct;
            if (wt)
                snprintf(x->message, sizeof x->message,
                         "largest p99 change: %s (%s) %s against %s in the baseline (%+.1f%%, limit %g%%)",
                         cs_report_opname(d, wt->op), wt->callsite[0] ? wt->callsite : "?",
                         cs_fmt_ns(wt->p99_ns, b1, sizeof b1), cs_fmt_ns(wb->p99_ns, b2, sizeof b2), worst, pct);
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
