/* cmd_check.c: `collscope check-estimate BEFORE AFTER`: the what-if
 * replay's predicted gain of BEFORE's fusion proposal against the gain
 * measured in AFTER, a run of the same job with the rewrite applied. */
#include "config.h"
#include "analyzer/analysis.h"
#include "analyzer/cli.h"
#include "analyzer/store_analysis.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cs_help_check_estimate[] = "usage: collscope check-estimate BEFORE AFTER [--tolerance PCT] [--json]\n"
                                      "\n"
                                      "Check the what-if replay against reality. BEFORE is a trace of a job\n"
                                      "without apply mode, AFTER a trace of the same job (same program, same\n"
                                      "number of ranks) with apply mode on (COLLSCOPE_FUSE=1 and the settings of\n"
                                      "BEFORE's fusion proposal). Both are analysed first unless current.\n"
                                      "\n"
                                      "The predicted gain per step is BEFORE's what-if replay of its largest\n"
                                      "fusion proposal, for the bucket whose number of calls per step is\n"
                                      "closest to what AFTER issued (its fused calls and the allreduces it left\n"
                                      "alone; when AFTER has no fused call, e.g. the program itself issued\n"
                                      "bigger buckets, the replay in which the members' own calls vanish too);\n"
                                      "the measured gain is BEFORE's median step time minus AFTER's.\n"
                                      "The error is |predicted - measured| / measured. Also printed: the median\n"
                                      "per-step communication time of both runs and their ratio.\n"
                                      "\n"
                                      "  --tolerance PCT  the largest error that passes (default 25)\n"
                                      "  --json           one JSON object (format \"collscope-check-estimate\",\n"
                                      "                   version 1, docs/report-json.md) instead of text\n"
                                      "\n"
                                      "Exit status: 0 when the error is within the tolerance, 1 when not, 2 on\n"
                                      "bad usage or bad input (a trace missing or unreadable, traces of different\n"
                                      "jobs or rank counts, a trace without steps, BEFORE without a fusion\n"
                                      "proposal), with one message.\n";

/* cs_fmt_ns with a sign. */
static const char *cs_fmt_signed(int64_t ns, char *buf, size_t len)
{
    if (ns >= 0)
        return cs_fmt_ns(ns, buf, len);
    buf[0] = '-';
    cs_fmt_ns(-ns, buf + 1, len - 1);
    return buf;
}

typedef struct cs_side {
    cs_report_data d;
    int nranks;
} cs_side;

static int cs_side_load(const char *arg, cs_side *s)
{
    memset(s, 0, sizeof *s);
    cs_store *st = cs_analysis_open(arg, 0, 0);
    if (!st)
        return -1;
    int r = cs_report_load(st, &s->d);
    cs_store_close(st);
    if (r != 0) {
        cs_error("%s: cannot read the stored analysis", arg);
        return -1;
    }
    s->nranks = s->d.nproc;
    return 0;
}

/* The program of a trace: the base name of its lowest rank's executable. */
static void cs_trace_program(const char *arg, char *out, size_t len)
{
    char exe[1024];
    out[0] = '\0';
    cs_store *st = cs_open_trace(arg, CS_STORE_READ);
    if (!st)
        return;
    if (cs_store_program(st, exe, sizeof exe) == 0)
        snprintf(out, len, "%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
    cs_store_close(st);
}

int cs_cmd_check_estimate(int argc, char **argv)
{
    static const struct option opts[] = { { "tolerance", required_argument, NULL, 't' },
                                          { "json", no_argument, NULL, 'j' },
                                          { NULL, 0, NULL, 0 } };
    double tol = 25;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 't') {
            char *end;
            tol = strtod(optarg, &end);
            if (end == optarg || (*end && strcmp(end, "%") != 0) || tol < 0) {
                cs_error("check-estimate: --tolerance '%s' is not a percentage", optarg);
                return 2;
            }
        } else if (c == 'j') {
            json = 1;
        } else {
            fputs(cs_help_check_estimate, stderr);
            return 2;
        }
    }
    if (optind != argc - 2) {
        fputs(cs_help_check_estimate, stderr);
        return 2;
    }
    const char *bn = argv[optind], *an = argv[optind + 1];
    cs_side B, A;
    if (cs_side_load(bn, &B) != 0)
        return 2;
    if (cs_side_load(an, &A) != 0) {
        cs_report_free(&B.d);
        return 2;
    }
    int rc = 2;
    char pb[256], pa[256], b1[32], b2[32], b3[32];
    cs_trace_program(bn, pb, sizeof pb);
    cs_trace_program(an, pa, sizeof pa);
    if (B.nranks != A.nranks) {
        cs_error("check-estimate: %s has %d ranks, %s has %d: not the same job", bn, B.nranks, an, A.nranks);
        goto out;
    }
    if (pb[0] && pa[0] && strcmp(pb, pa) != 0) {
        cs_error("check-estimate: %s ran '%s', %s ran '%s': not the same job", bn, pb, an, pa);
        goto out;
    }
    if (B.d.nsteps < 3 || A.d.nsteps < 3) {
        cs_error("check-estimate: %s has no steps (%d found; MPI_Pcontrol markers or a periodic pattern needed)",
                 B.d.nsteps < 3 ? bn : an, B.d.nsteps < 3 ? B.d.nsteps : A.d.nsteps);
        goto out;
    }
    const cs_proposal *p = NULL;
    for (int i = 0; i < B.d.nprops && !p; i++)
        if (strcmp(B.d.props[i].kind, "fusion") == 0)
            p = &B.d.props[i];
    if (!p) {
        cs_error("check-estimate: %s has no fusion proposal: nothing to check", bn);
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
    double err = meas != 0 ? fabs((double)(gain - meas)) / fabs((double)meas) : (gain == 0 ? 0 : INFINITY);
    int pass = err * 100 <= tol;
    double ratio = A.d.wf_comm_step_ns > 0 ? (double)B.d.wf_comm_step_ns / (double)A.d.wf_comm_step_ns : 0;
    if (json) {
        printf("{\n  \"format\": \"collscope-check-estimate\",\n  \"version\": 1,\n  \"before\": ");
        cs_json_string(stdout, bn);
        printf(",\n  \"after\": ");
        cs_json_string(stdout, an);
        printf(",\n  \"callsite\": ");
        cs_json_string(stdout, p->callsite);
        printf(
            ",\n  \"comm\": %lld,\n  \"proposed_bucket_bytes\": %lld,\n  \"bucket_bytes\": %lld,\n"
            "  \"before_calls_per_step\": %.3f,\n  \"after_calls_per_step\": %.3f,\n  \"predicted_calls_per_step\": %.3f,\n"
            "  \"after_apply_mode\": %s,\n  \"after_fuse_members\": %lld,\n  \"after_fused_calls\": %lld,\n"
            "  \"before_step_ns\": %lld,\n  \"after_step_ns\": %lld,\n  \"predicted_gain_ns\": %lld,\n"
            "  \"measured_gain_ns\": %lld,\n  \"error\": %.4f,\n  \"tolerance\": %.4f,\n  \"pass\": %s,\n"
            "  \"before_comm_step_ns\": %lld,\n  \"after_comm_step_ns\": %lld,\n  \"comm_ratio\": %.3f\n}\n",
            (long long)p->comm, (long long)p->bucket_bytes, bucket, B.d.wf_ar_calls_per_step, after_calls, groups,
            applied ? "true" : "false", (long long)A.d.fuse_members, (long long)A.d.fused_calls,
            (long long)B.d.step_median_ns, (long long)A.d.step_median_ns, gain, (long long)meas,
            isfinite(err) ? err : -1.0, tol / 100, pass ? "true" : "false", (long long)B.d.wf_comm_step_ns,
            (long long)A.d.wf_comm_step_ns, ratio);
    } else {
        printf("collscope check-estimate: %s -> %s\n", bn, an);
        printf("  fusion proposal: %s, communicator %lld, %.1f calls per step, suggested bucket %s\n", p->callsite,
               (long long)p->comm, p->calls_per_step, cs_fmt_bytes(p->bucket_bytes, b1, sizeof b1));
        if (applied)
            printf("  AFTER (apply mode): %lld calls fused into %lld; %.1f allreduce calls per step\n",
                   (long long)A.d.fuse_members, (long long)A.d.fused_calls, after_calls);
        else
            printf("  AFTER has no fused call (not an apply-mode trace): %.1f allreduce calls per step; predicted as\n"
                   "  the program issuing such buckets itself (no member calls)\n",
                   after_calls);
        printf("  predicted gain per step: %s (buckets of %s: %.1f calls per step)\n",
               cs_fmt_signed(gain, b1, sizeof b1), cs_fmt_bytes(bucket, b2, sizeof b2), groups);
        printf("  measured gain per step:  %s (median step %s -> %s)\n", cs_fmt_signed(meas, b1, sizeof b1),
               cs_fmt_ns(B.d.step_median_ns, b2, sizeof b2), cs_fmt_ns(A.d.step_median_ns, b3, sizeof b3));
        if (isfinite(err))
            printf("  error: %.1f %% (tolerance %g %%): %s\n", 100 * err, tol, pass ? "within" : "OUTSIDE");
        else
            printf("  error: undefined, the measured gain is 0 (tolerance %g %%): OUTSIDE\n", tol);
        printf("  communication per step (median): %s -> %s (ratio %.2fx)\n",
               cs_fmt_ns(B.d.wf_comm_step_ns, b1, sizeof b1), cs_fmt_ns(A.d.wf_comm_step_ns, b2, sizeof b2), ratio);
    }
    rc = pass ? 0 : 1;
out:
    cs_report_free(&B.d);
    cs_report_free(&A.d);
    return rc;
}
