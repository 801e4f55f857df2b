/* estimate.c: `collscope check-estimate`: the what-if replay's predicted
 * gain of a fusion proposal (BEFORE) against the gain measured in a run
 * with the rewrite applied (AFTER). */
#include "config.h"
#include "analyzer/csanalysis.h"
#include "common/fmt.h"
#include "common/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct cs_side {
    cs_report_data d;
    int nranks;
} cs_side;

static int cs_side_load(const char *arg, cs_side *s, FILE *notes, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    cs_store *st = cs_analysis_open(arg, 0, 0, notes, err, errlen);
    if (!st)
        return -1;
    int r = cs_report_load(st, &s->d);
    cs_store_close(st);
    if (r != 0) {
        snprintf(err, errlen, "%s: cannot read the stored analysis", arg);
        return -1;
    }
    s->nranks = s->d.nproc;
    return 0;
}

/* The program of a trace: the base name of its lowest rank's executable. */
static void cs_trace_program(const char *arg, char *out, size_t len, FILE *notes)
{
    char exe[1024], err[1024];
    out[0] = '\0';
    cs_store *st = cs_analysis_open_trace(arg, CS_STORE_READ, err, sizeof err);
    if (!st) {
        if (notes)
            fprintf(notes, "collscope: %s\n", err);
        return;
    }
    if (cs_store_program(st, exe, sizeof exe) == 0)
        snprintf(out, len, "%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
    cs_store_close(st);
}

int cs_estimate_check(const char *before, const char *after, double tol, int json, FILE *out, FILE *notes, char *err,
                      size_t errlen)
{
    const char *bn = before, *an = after;
    cs_side B, A;
    if (cs_side_load(bn, &B, notes, err, errlen) != 0) {
        cs_report_free(&B.d);
        return 2;
    }
    if (cs_side_load(an, &A, notes, err, errlen) != 0) {
        cs_report_free(&A.d);
        cs_report_free(&B.d);
        return 2;
    }
    int rc = 2;
    char pb[256], pa[256], b1[32], b2[32], b3[32];
    cs_trace_program(bn, pb, sizeof pb, notes);
    cs_trace_program(an, pa, sizeof pa, notes);
    if (B.nranks != A.nranks) {
        snprintf(err, errlen, "check-estimate: %s has %d ranks, %s has %d: not the same job", bn, B.nranks, an,
                 A.nranks);
        goto out;
    }
    if (pb[0] && pa[0] && strcmp(pb, pa) != 0) {
        snprintf(err, errlen, "check-estimate: %s ran '%s', %s ran '%s': not the same job", bn, pb, an, pa);
        goto out;
    }
    if (B.d.nsteps < 3 || A.d.nsteps < 3) {
        snprintf(err, errlen,
                 "check-estimate: %s has no steps (%d found; MPI_Pcontrol markers or a periodic pattern needed)",
                 B.d.nsteps < 3 ? bn : an, B.d.nsteps < 3 ? B.d.nsteps : A.d.nsteps);
        goto out;
    }
    const cs_proposal *p = NULL;
    for (int i = 0; i < B.d.nprops && !p; i++)
        if (strcmp(B.d.props[i].kind, "fusion") == 0)
            p = &B.d.props[i];
    if (!p) {
        snprintf(err, errlen, "check-estimate: %s has no fusion proposal: nothing to check", bn);
        goto out;
    }
    /* the curve point whose calls per step are closest to AFTER's */
    double after_calls = A.d.wf_ar_calls_per_step;
    int applied = A.d.fused_calls > 0;
    long long bucket = p->bucket_bytes, gain = p->gain_ns;
    double groups = p->groups_per_step, bestd = INFINITY;
    if (after_calls > 0) {
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
    int64_t meas = B.d.step_median_ns - A.d.step_median_ns;
    double error = meas != 0 ? fabs((double)(gain - meas)) / fabs((double)meas) : (gain == 0 ? 0 : INFINITY);
    int pass = error * 100 <= tol;
    double ratio = A.d.wf_comm_step_ns > 0 ? (double)B.d.wf_comm_step_ns / (double)A.d.wf_comm_step_ns : 0;
    if (json) {
        unsigned long nulls = cs_json_nulls();
        fprintf(out, "{\n  \"format\": \"collscope-check-estimate\",\n  \"version\": 1,\n  \"before\": ");
        cs_json_str(out, bn);
        fprintf(out, ",\n  \"after\": ");
        cs_json_str(out, an);
        fprintf(out, ",\n  \"callsite\": ");
        cs_json_str(out, p->callsite);
        char cname[CS_COMMS_DISPLAY_MAX];
        fprintf(out, ",\n  \"comm\": %lld,\n  \"comm_id\": %lld,\n  \"comm_name\": ", (long long)p->comm,
                (long long)p->comm);
        cs_json_str(out, cs_report_commname(&B.d, p->comm, cname, sizeof cname));
        fprintf(out, ",\n  \"proposed_bucket_bytes\": %lld,\n  \"bucket_bytes\": %lld,\n", (long long)p->bucket_bytes,
                bucket);
        fprintf(out, "  \"before_calls_per_step\": ");
        cs_json_num(out, "%.3f", B.d.wf_ar_calls_per_step);
        fprintf(out, ",\n  \"after_calls_per_step\": ");
        cs_json_num(out, "%.3f", after_calls);
        fprintf(out, ",\n  \"predicted_calls_per_step\": ");
        cs_json_num(out, "%.3f", groups);
        fprintf(out,
                ",\n  \"after_apply_mode\": %s,\n  \"after_fuse_members\": %lld,\n  \"after_fused_calls\": %lld,\n"
                "  \"before_step_ns\": %lld,\n  \"after_step_ns\": %lld,\n  \"predicted_gain_ns\": %lld,\n"
                "  \"measured_gain_ns\": %lld,\n  \"error\": ",
                applied ? "true" : "false", (long long)A.d.fuse_members, (long long)A.d.fused_calls,
                (long long)B.d.step_median_ns, (long long)A.d.step_median_ns, gain, (long long)meas);
        cs_json_num(out, "%.4f", isfinite(error) ? error : -1.0);
        fprintf(out, ",\n  \"tolerance\": ");
        cs_json_num(out, "%.4f", tol / 100);
        fprintf(out,
                ",\n  \"pass\": %s,\n  \"before_comm_step_ns\": %lld,\n  \"after_comm_step_ns\": %lld,\n"
                "  \"comm_ratio\": ",
                pass ? "true" : "false", (long long)B.d.wf_comm_step_ns, (long long)A.d.wf_comm_step_ns);
        cs_json_num(out, "%.3f", ratio);
        fputc('\n', out);
        cs_json_null_note(out, nulls);
        fprintf(out, "}\n");
    } else {
        fprintf(out, "collscope check-estimate: %s -> %s\n", bn, an);
        char cname[CS_COMMS_DISPLAY_MAX];
        fprintf(out, "  fusion proposal: %s, on %s, %.1f calls per step, suggested bucket %s\n", p->callsite,
                cs_report_commname(&B.d, p->comm, cname, sizeof cname), p->calls_per_step,
                cs_fmt_bytes(p->bucket_bytes, b1, sizeof b1));
        if (applied)
            fprintf(out, "  AFTER (apply mode): %lld calls fused into %lld; %.1f allreduce calls per step\n",
                    (long long)A.d.fuse_members, (long long)A.d.fused_calls, after_calls);
        else
            fprintf(out,
                    "  AFTER has no fused call (not an apply-mode trace): %.1f allreduce calls per step; predicted as\n"
                    "  the program issuing such buckets itself (no member calls)\n",
                    after_calls);
        fprintf(out, "  predicted gain per step: %s (buckets of %s: %.1f calls per step)\n",
                cs_fmt_dns(gain, 0, b1, sizeof b1), cs_fmt_bytes(bucket, b2, sizeof b2), groups);
        fprintf(out, "  measured gain per step:  %s (median step %s -> %s)\n", cs_fmt_dns(meas, 0, b1, sizeof b1),
                cs_fmt_ns(B.d.step_median_ns, b2, sizeof b2), cs_fmt_ns(A.d.step_median_ns, b3, sizeof b3));
        if (isfinite(error))
            fprintf(out, "  error: %.1f %% (tolerance %g %%): %s\n", 100 * error, tol, pass ? "within" : "OUTSIDE");
        else
            fprintf(out, "  error: undefined, the measured gain is 0 (tolerance %g %%): OUTSIDE\n", tol);
        fprintf(out, "  communication per step (median): %s -> %s (ratio %.2fx)\n",
                cs_fmt_ns(B.d.wf_comm_step_ns, b1, sizeof b1), cs_fmt_ns(A.d.wf_comm_step_ns, b2, sizeof b2), ratio);
    }
    rc = pass ? 0 : 1;
out:
    cs_report_free(&B.d);
    cs_report_free(&A.d);
    return rc;
}
