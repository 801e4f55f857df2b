/* estimate.c: `collscope check-estimate`: the gain of a rewrite measured on
 * the program's step time, BEFORE (a run without it) against AFTER (a run
 * with it), and the what-if replay's prediction for BEFORE's fusion
 * proposal checked against that measurement.
 *
 * A side's steps are the ones its analysis found (markers, else the
 * detected period: the stored steps table and meta keys), and its step time
 * the wall time from a step's begin to the next one's (steps 0..n-2: the
 * last step has no next begin). Two sides compare when both have 3 steps or
 * more, found the same way (and with the same period), and their step
 * counts are within 10 % of each other. */
#include "config.h"
#include "analyzer/report/report.h"
#include "common/fmt.h"
#include "common/json.h"
#include "common/msg.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest difference of the two step counts, relative to the larger. */
#define CS_ESTIMATE_MAX_COUNT_DIFF 0.10

typedef struct cs_side {
    const char *arg;
    cs_report_data d;
    int nranks;
    int64_t period;    /* collectives per step when detected; 0 otherwise */
    int64_t nfull;     /* steps with a next begin */
    int64_t med, mean; /* their wall time, ns; -1 without steps */
} cs_side;

static int cs_side_load(const cs_source *src, cs_side *s, FILE *notes, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const char *arg = src->arg;
    s->arg = arg;
    s->med = s->mean = -1;
    cs_store *st = cs_analysis_open(src, 0, 0, notes, err, errlen);
    if (!st)
        return -1;
    int r = cs_report_load(st, &s->d);
    /* the detected period (calls per step), as the analysis stored it */
    s->period = s->d.step_period;
    cs_store_close(st);
    if (r != 0) {
        snprintf(err, errlen, "%s: cannot read the stored analysis", arg);
        return -1;
    }
    s->nranks = s->d.nproc;
    if (strcmp(s->d.step_source, "period") != 0)
        s->period = 0;
    /* the wall time between consecutive steps' begins */
    int64_t n = s->d.nsteps > 1 ? s->d.nsteps - 1 : 0;
    int64_t *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        t[i] = s->d.steps[i + 1].begin_ns - s->d.steps[i].begin_ns;
        sum += (double)t[i];
    }
    s->nfull = n;
    if (n > 0) {
        s->med = cs_stats_median_i64(t, (size_t)n);
        s->mean = (int64_t)llround(sum / (double)n);
    }
    free(t);
    return 0;
}

/* The program of a trace: the base name of its lowest rank's executable. */
static void cs_trace_program(const cs_source *src, char *out, size_t len, FILE *notes)
{
    char exe[1024], err[1024];
    out[0] = '\0';
    cs_store *st = cs_analysis_open_trace(src, CS_STORE_READ, err, sizeof err);
    if (!st) {
        if (notes)
            cs_msg_line(notes, "collscope: %s", err);
        return;
    }
    if (cs_store_program(st, exe, sizeof exe) == 0)
        snprintf(out, len, "%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
    cs_store_close(st);
}

/* Why the steps of B and A cannot be compared, or "" when they can. */
static void cs_steps_comparable(const cs_side *B, const cs_side *A, char *why, size_t len)
{
    why[0] = '\0';
    const cs_side *s[2] = { B, A };
    for (int i = 0; i < 2; i++)
        if (s[i]->d.nsteps < 3) {
            snprintf(why, len, "%s has %d steps (3 needed: MPI_Pcontrol markers or a periodic call pattern)", s[i]->arg,
                     s[i]->d.nsteps);
            return;
        }
    if (strcmp(B->d.step_source, A->d.step_source) != 0) {
        snprintf(why, len, "the steps were found differently: from %s in %s, from %s in %s", B->d.step_source, B->arg,
                 A->d.step_source, A->arg);
        return;
    }
    if (B->period != A->period) {
        snprintf(why, len, "the detected periods differ: %lld calls per step in %s, %lld in %s", (long long)B->period,
                 B->arg, (long long)A->period, A->arg);
        return;
    }
    int nmax = B->d.nsteps > A->d.nsteps ? B->d.nsteps : A->d.nsteps;
    int nmin = B->d.nsteps < A->d.nsteps ? B->d.nsteps : A->d.nsteps;
    if ((double)(nmax - nmin) > CS_ESTIMATE_MAX_COUNT_DIFF * (double)nmax)
        snprintf(why, len, "the step counts differ by more than %.0f %%: %d in %s, %d in %s",
                 100 * CS_ESTIMATE_MAX_COUNT_DIFF, B->d.nsteps, B->arg, A->d.nsteps, A->arg);
}

static void cs_side_text(FILE *out, const char *name, const cs_side *s)
{
    char b1[32], b2[32];
    fprintf(out, "  %-6s %d steps (from %s", name, s->d.nsteps, s->d.step_source);
    if (s->period)
        fprintf(out, ", %lld calls per step", (long long)s->period);
    fprintf(out, ")");
    if (s->med >= 0)
        fprintf(out, ", step time median %s, mean %s", cs_fmt_ns(s->med, b1, sizeof b1),
                cs_fmt_ns(s->mean, b2, sizeof b2));
    fprintf(out, "\n");
}

static void cs_side_json(FILE *out, const char *name, const cs_side *s)
{
    fprintf(out, "  \"%s_steps\": %d,\n  \"%s_step_source\": ", name, s->d.nsteps, name);
    cs_json_str(out, s->d.step_source);
    fprintf(out, ",\n  \"%s_step_period\": %lld,\n", name, (long long)s->period);
    if (s->med >= 0)
        fprintf(out, "  \"%s_step_median_ns\": %lld,\n  \"%s_step_mean_ns\": %lld,\n", name, (long long)s->med, name,
                (long long)s->mean);
    else
        fprintf(out, "  \"%s_step_median_ns\": null,\n  \"%s_step_mean_ns\": null,\n", name, name);
}

int cs_estimate_check(const cs_source *before, const cs_source *after, double tol, double min_gain, int json, FILE *out,
                      FILE *notes, char *err, size_t errlen)
{
    const char *bn = before->arg, *an = after->arg;
    cs_side B, A;
    if (cs_side_load(before, &B, notes, err, errlen) != 0) {
        cs_report_free(&B.d);
        return CS_ESTIMATE_BAD_INPUT;
    }
    if (cs_side_load(after, &A, notes, err, errlen) != 0) {
        cs_report_free(&A.d);
        cs_report_free(&B.d);
        return CS_ESTIMATE_BAD_INPUT;
    }
    int rc = CS_ESTIMATE_BAD_INPUT;
    char pb[256], pa[256], b1[32], b2[32], b3[32], why[1024];
    cs_trace_program(before, pb, sizeof pb, notes);
    cs_trace_program(after, pa, sizeof pa, notes);
    if (B.nranks != A.nranks) {
        snprintf(err, errlen, "check-estimate: %s has %d ranks, %s has %d: not the same job", bn, B.nranks, an,
                 A.nranks);
        goto out;
    }
    if (pb[0] && pa[0] && strcmp(pb, pa) != 0) {
        snprintf(err, errlen, "check-estimate: %s ran '%s', %s ran '%s': not the same job", bn, pb, an, pa);
        goto out;
    }
    cs_steps_comparable(&B, &A, why, sizeof why);
    int comparable = !why[0];
    int64_t meas = comparable ? B.med - A.med : 0, meas_mean = comparable ? B.mean - A.mean : 0;
    double share = comparable && B.med > 0 ? (double)meas / (double)B.med : 0;
    int gain_shown = comparable && share * 100 >= min_gain && meas_mean > 0;

    const cs_proposal *p = NULL;
    for (int i = 0; i < B.d.nprops && !p; i++)
        if (strcmp(B.d.props[i].kind, "fusion") == 0)
            p = &B.d.props[i];
    /* the curve point whose calls per step are closest to AFTER's */
    double after_calls = A.d.wf_ar_calls_per_step;
    int applied = A.d.fused_calls > 0;
    long long bucket = p ? p->bucket_bytes : 0, gain = p ? p->gain_ns : 0;
    double groups = p ? p->groups_per_step : 0, bestd = INFINITY;
    if (p && after_calls > 0) {
        const char *cv = p->curve;
        while (*cv) {
            long long sz, g, g2;
            double gr;
            if (sscanf(cv, "%lld:%lf:%lld:%lld", &sz, &gr, &g, &g2) == 4 && gr > 0) {
                double dd = fabs(log(gr / after_calls));
                if (dd < bestd - 1e-9) {
                    bestd = dd;
                    bucket = sz;
                    gain = applied ? g : g2;
                    groups = gr;
                }
            }
            const char *n = strchr(cv, ',');
            if (!n)
                break;
            cv = n + 1;
        }
    }
    double error = meas != 0 ? fabs((double)(gain - meas)) / fabs((double)meas) : (gain == 0 ? 0 : INFINITY);
    int within = p && comparable && error * 100 <= tol;
    int pass = within && gain_shown;
    const char *verdict = !comparable   ? "steps not comparable"
                          : !p          ? "nothing predicted"
                          : pass        ? "confirmed"
                          : !gain_shown ? "NOT confirmed: the program's step time does not show the gain"
                                        : "NOT confirmed: the prediction is outside the tolerance";
    double ratio = A.d.wf_comm_step_ns > 0 ? (double)B.d.wf_comm_step_ns / (double)A.d.wf_comm_step_ns : 0;
    if (json) {
        unsigned long nulls = cs_json_nulls();
        fprintf(out, "{\n  \"format\": \"collscope-check-estimate\",\n  \"version\": 2,\n  \"before\": ");
        cs_json_str(out, bn);
        fprintf(out, ",\n  \"after\": ");
        cs_json_str(out, an);
        fprintf(out, ",\n");
        cs_side_json(out, "before", &B);
        cs_side_json(out, "after", &A);
        fprintf(out, "  \"comparable\": %s,\n  \"not_comparable_reason\": ", comparable ? "true" : "false");
        cs_json_str(out, why);
        fprintf(out,
                ",\n  \"measured_gain_ns\": %lld,\n  \"measured_gain_mean_ns\": %lld,\n  \"measured_gain_share\": ",
                (long long)meas, (long long)meas_mean);
        cs_json_num(out, "%.4f", share);
        fprintf(out, ",\n  \"min_gain\": ");
        cs_json_num(out, "%.4f", min_gain / 100);
        fprintf(out,
                ",\n  \"gain_shown\": %s,\n  \"has_proposal\": %s,\n  \"callsite\": ", gain_shown ? "true" : "false",
                p ? "true" : "false");
        cs_json_str(out, p ? p->callsite : "");
        fprintf(out, ",\n  \"comm\": %lld,\n  \"proposed_bucket_bytes\": %lld,\n  \"bucket_bytes\": %lld,\n",
                (long long)(p ? p->comm : 0), (long long)(p ? p->bucket_bytes : 0), bucket);
        fprintf(out, "  \"before_calls_per_step\": ");
        cs_json_num(out, "%.3f", B.d.wf_ar_calls_per_step);
        fprintf(out, ",\n  \"after_calls_per_step\": ");
        cs_json_num(out, "%.3f", after_calls);
        fprintf(out, ",\n  \"predicted_calls_per_step\": ");
        cs_json_num(out, "%.3f", groups);
        fprintf(out,
                ",\n  \"after_apply_mode\": %s,\n  \"after_fuse_members\": %lld,\n  \"after_fused_calls\": %lld,\n"
                "  \"predicted_gain_ns\": %lld,\n  \"error\": ",
                applied ? "true" : "false", (long long)A.d.fuse_members, (long long)A.d.fused_calls, gain);
        if (p && comparable && isfinite(error))
            cs_json_num(out, "%.4f", error);
        else
            fprintf(out, "null");
        fprintf(out, ",\n  \"tolerance\": ");
        cs_json_num(out, "%.4f", tol / 100);
        fprintf(out, ",\n  \"pass\": %s,\n  \"verdict\": ", pass ? "true" : "false");
        cs_json_str(out, verdict);
        fprintf(out, ",\n  \"before_comm_step_ns\": %lld,\n  \"after_comm_step_ns\": %lld,\n  \"comm_ratio\": ",
                (long long)B.d.wf_comm_step_ns, (long long)A.d.wf_comm_step_ns);
        cs_json_num(out, "%.3f", ratio);
        fputc('\n', out);
        cs_json_null_note(out, nulls);
        fprintf(out, "}\n");
    } else {
        cs_msg_line(out, "collscope check-estimate: %s -> %s", bn, an);
        fprintf(out, "steps (the wall time from a step's begin to the next one's)\n");
        cs_side_text(out, "BEFORE", &B);
        cs_side_text(out, "AFTER", &A);
        if (!comparable) {
            fprintf(out, "  the steps cannot be compared: %s\n", why);
        } else {
            fprintf(out,
                    "  measured gain per step: %s median (%.1f %% of BEFORE's step), %s mean; at least %g %% "
                    "needed: %s\n",
                    cs_fmt_dns(meas, 0, b1, sizeof b1), 100 * share, cs_fmt_dns(meas_mean, 0, b2, sizeof b2), min_gain,
                    gain_shown ? "shown" : "NOT shown");
        }
        if (p) {
            char cname[CS_COMMS_DISPLAY_MAX];
            fprintf(out, "fusion proposal of BEFORE: %s%son %s, %.1f calls per step, suggested bucket %s\n",
                    p->callsite, p->callsite[0] ? ", " : "", cs_report_commname(&B.d, p->comm, cname, sizeof cname),
                    p->calls_per_step, cs_fmt_bytes(p->bucket_bytes, b1, sizeof b1));
            if (applied)
                fprintf(out, "  AFTER (apply mode): %lld calls fused into %lld; %.1f allreduce calls per step\n",
                        (long long)A.d.fuse_members, (long long)A.d.fused_calls, after_calls);
            else
                fprintf(out,
                        "  AFTER has no fused call (not an apply-mode trace): %.1f allreduce calls per step; predicted "
                        "as\n  the program issuing such buckets itself (no member calls)\n",
                        after_calls);
            fprintf(out, "  predicted gain per step: %s (buckets of %s: %.1f calls per step)\n",
                    cs_fmt_dns(gain, 0, b1, sizeof b1), cs_fmt_bytes(bucket, b2, sizeof b2), groups);
            if (comparable && isfinite(error))
                fprintf(out, "  error: %.1f %% of the measured gain (tolerance %g %%): %s\n", 100 * error, tol,
                        within ? "within" : "OUTSIDE");
            else if (comparable)
                fprintf(out, "  error: undefined, the measured gain is 0 (tolerance %g %%): OUTSIDE\n", tol);
        } else {
            fprintf(out, "BEFORE has no fusion proposal: nothing predicted to check\n");
        }
        fprintf(out, "communication per step (median; shown, not decisive): %s -> %s (ratio %.2fx)\n",
                cs_fmt_ns(B.d.wf_comm_step_ns, b1, sizeof b1), cs_fmt_ns(A.d.wf_comm_step_ns, b3, sizeof b3), ratio);
        fprintf(out, "verdict: %s\n", verdict);
    }
    if (!comparable) {
        snprintf(err, errlen, "check-estimate: %s", why);
        rc = CS_ESTIMATE_NOT_COMPARABLE;
    } else if (!p) {
        snprintf(err, errlen, "check-estimate: %s has no fusion proposal: nothing to check", bn);
        rc = CS_ESTIMATE_BAD_INPUT;
    } else {
        rc = pass ? CS_ESTIMATE_CONFIRMED : CS_ESTIMATE_NOT_CONFIRMED;
    }
out:
    cs_report_free(&B.d);
    cs_report_free(&A.d);
    return rc;
}
