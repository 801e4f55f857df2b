/* diff.c: `collscope diff`: two runs compared (median step time,
 * straggler verdicts in both, gone or new, the p99 of each collective
 * group, the GPU time of each rank), as text or JSON (format
 * "collscope-diff", docs/report-json.md). */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/fmt.h"
#include "common/msg.h"
#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The parts of a rank's GPU time the diff compares, as in the report. */
enum { CS_DIFF_GPU_PARTS = 5 };
static const char *const cs_diff_gpu_key[CS_DIFF_GPU_PARTS] = { "compute", "comm_exposed", "comm_overlapped", "memory",
                                                                "idle" };
static const char *const cs_diff_gpu_label[CS_DIFF_GPU_PARTS] = { "compute", "comm exposed", "comm overlapped",
                                                                  "memory", "idle" };

/* The whole-trace GPU row of rank in d, or NULL. */
static const cs_gpu_time_row *cs_diff_gpu_find(const cs_report_data *d, int rank)
{
    for (int i = 0; i < d->ngpu; i++)
        if (d->gpu[i].rank == rank)
            return &d->gpu[i];
    return NULL;
}

/* The shares (0..1) of a row's parts; NAN for every part without a row. */
static void cs_diff_gpu_shares(const cs_gpu_time_row *r, double sh[CS_DIFF_GPU_PARTS])
{
    if (!r) {
        for (int k = 0; k < CS_DIFF_GPU_PARTS; k++)
            sh[k] = NAN;
        return;
    }
    const int64_t part[CS_DIFF_GPU_PARTS] = { r->compute_ns, r->comm_exposed_ns, r->comm_overlapped_ns, r->memory_ns,
                                              r->idle_ns };
    for (int k = 0; k < CS_DIFF_GPU_PARTS; k++)
        sh[k] = cs__report_gpu_share(r, part[k]);
}

/* The next rank after prev (INT_MIN: the first) with a GPU row on either
 * side, or -1 when none is left. */
static int cs_diff_gpu_next(const cs_report_data *a, const cs_report_data *b, int prev, int first)
{
    int best = -1;
    const cs_report_data *side[2] = { a, b };
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < side[s]->ngpu; i++) {
            int r = side[s]->gpu[i].rank;
            if ((first || r > prev) && (best < 0 || r < best))
                best = r;
        }
    return best;
}

/* The median over the ranks with a row on both sides of the change of
 * their compute share, in points, into *med; returns how many such ranks
 * (0: *med is 0). */
static int cs_diff_gpu_median_change(const cs_report_data *base, const cs_report_data *cur, double *med)
{
    *med = 0;
    double *v = malloc((size_t)(cur->ngpu > 0 ? cur->ngpu : 1) * sizeof *v);
    if (!v)
        return 0;
    int n = 0;
    for (int i = 0; i < cur->ngpu; i++) {
        const cs_gpu_time_row *b = cs_diff_gpu_find(base, cur->gpu[i].rank), *r = &cur->gpu[i];
        if (b)
            v[n++] = 100 * (cs__report_gpu_share(r, r->compute_ns) - cs__report_gpu_share(b, b->compute_ns));
    }
    if (n)
        *med = cs_stats_median_dbl(v, (size_t)n);
    free(v);
    return n;
}

/* Whether a rank's compute-share change (points) is out of line with the
 * ranks' median change: at least 4 ranks on both sides, and as far from
 * the median as a compute outlier of the report must be. */
static int cs_diff_gpu_changed(double change, double med, int n)
{
    return n >= 4 && fabs(change - med) >= CS_GPU_OUTLIER_POINTS;
}

/* A share in JSON: null where the rank has no row on that side (not a
 * figure that failed, so not counted in the null note). */
static void cs_diff_json_share(FILE *f, double v)
{
    if (isnan(v))
        fputs("null", f);
    else
        cs_json_num(f, "%.6f", v);
}

/* The GPU time of each rank, base and new (section "gpu_time" of the JSON
 * diff, or the text table); nothing in text when neither side has rows. */
static void cs_diff_gpu(FILE *f, int json, const cs_report_data *base, const cs_report_data *cur)
{
    if (json)
        fprintf(f, "  \"gpu_time\": [");
    if (!base->ngpu && !cur->ngpu) {
        if (json)
            fprintf(f, "]");
        return;
    }
    if (!json)
        fprintf(f,
                "\nGPU time per rank, base -> new (%% of the rank's GPU window; change in points;\n"
                " window in ms)\n  %6s %21s %22s %22s %22s %22s %22s\n",
                "rank", "window", cs_diff_gpu_label[0], cs_diff_gpu_label[1], cs_diff_gpu_label[2],
                cs_diff_gpu_label[3], cs_diff_gpu_label[4]);
    int k = 0;
    double med;
    int nboth = cs_diff_gpu_median_change(base, cur, &med);
    for (int r = cs_diff_gpu_next(base, cur, 0, 1); r >= 0; r = cs_diff_gpu_next(base, cur, r, 0)) {
        const cs_gpu_time_row *b = cs_diff_gpu_find(base, r), *n = cs_diff_gpu_find(cur, r);
        double sb[CS_DIFF_GPU_PARTS], sn[CS_DIFF_GPU_PARTS];
        cs_diff_gpu_shares(b, sb);
        cs_diff_gpu_shares(n, sn);
        if (json) {
            fprintf(f, "%s\n    {\"rank\": %d, \"base_window_ns\": ", k++ ? "," : "", r);
            cs_json_i64_or_null(f, b ? b->window_ns : -1);
            fprintf(f, ", \"new_window_ns\": ");
            cs_json_i64_or_null(f, n ? n->window_ns : -1);
            for (int p = 0; p < CS_DIFF_GPU_PARTS; p++) {
                fprintf(f, ", \"base_%s_share\": ", cs_diff_gpu_key[p]);
                cs_diff_json_share(f, sb[p]);
                fprintf(f, ", \"new_%s_share\": ", cs_diff_gpu_key[p]);
                cs_diff_json_share(f, sn[p]);
                fprintf(f, ", \"%s_change_points\": ", cs_diff_gpu_key[p]);
                cs_diff_json_share(f, b && n ? 100 * (sn[p] - sb[p]) : NAN);
            }
            fprintf(f,
                    ", \"base_compute_outlier\": %d, \"new_compute_outlier\": %d, \"compute_change_out_of_line\": %d}",
                    b ? b->outlier : 0, n ? n->outlier : 0,
                    b && n ? cs_diff_gpu_changed(100 * (sn[0] - sb[0]), med, nboth) : 0);
        } else {
            char wb[16] = "-", wn[16] = "-";
            if (b)
                snprintf(wb, sizeof wb, "%.3f", (double)b->window_ns / 1e6);
            if (n)
                snprintf(wn, sizeof wn, "%.3f", (double)n->window_ns / 1e6);
            fprintf(f, "  %6d %9s -> %-9s", r, wb, wn);
            for (int p = 0; p < CS_DIFF_GPU_PARTS; p++) {
                if (b && n)
                    fprintf(f, " %5.1f -> %5.1f %+6.1f", 100 * sb[p], 100 * sn[p], 100 * (sn[p] - sb[p]));
                else if (b)
                    fprintf(f, " %5.1f -> %5s %6s", 100 * sb[p], "-", "gone");
                else
                    fprintf(f, " %5s -> %5.1f %6s", "-", 100 * sn[p], "new");
            }
            fprintf(f, "\n");
        }
    }
    if (json) {
        fprintf(f, "\n  ]");
        return;
    }
    /* the ranks whose compute share changed unlike the others' */
    int nc = 0;
    for (int i = 0; i < cur->ngpu; i++) {
        const cs_gpu_time_row *r = &cur->gpu[i], *b = cs_diff_gpu_find(base, r->rank);
        if (!b)
            continue;
        double ch = 100 * (cs__report_gpu_share(r, r->compute_ns) - cs__report_gpu_share(b, b->compute_ns));
        if (cs_diff_gpu_changed(ch, med, nboth))
            fprintf(f, "%s rank %d %+.1f points", nc++ ? "," : "  compute share changed out of line:", r->rank, ch);
    }
    if (nc)
        fprintf(f, " (median change of the ranks %+.1f points)\n", med);
    else if (nboth >= 4)
        fprintf(f, "  compute share changed alike on all ranks (median %+.1f points)\n", med);
    /* the compute-share outliers of each run (the report's own flags) */
    const cs_report_data *side[2] = { base, cur };
    const char *label[2] = { "gone", "new" };
    int n = 0;
    for (int sd = 0; sd < 2; sd++)
        for (int i = 0; i < side[sd]->ngpu; i++) {
            const cs_gpu_time_row *x = &side[sd]->gpu[i], *y = cs_diff_gpu_find(side[1 - sd], x->rank);
            if (!x->outlier)
                continue;
            int both = y && y->outlier == x->outlier;
            if (both && sd == 1)
                continue;
            fprintf(f, "%s rank %d %s (%s)", n++ ? "," : "  compute share out of line:", x->rank,
                    x->outlier > 0 ? "above" : "below", both ? "both" : label[sd]);
        }
    fprintf(f, "%s\n", n ? "" : "  compute share out of line: no rank in either run");
}

int cs_diff_comparable(const cs_report_data *base, const cs_report_data *cur, char *why, size_t len)
{
    int n = 0;
    size_t o = 0;
    why[0] = 0;
#define CS_DIFF_WHY(...)                                                    \
    do {                                                                    \
        if (o < len)                                                        \
            o += (size_t)snprintf(why + o, len - o, "%s", n++ ? "; " : ""); \
        if (o < len)                                                        \
            o += (size_t)snprintf(why + o, len - o, __VA_ARGS__);           \
    } while (0)
    if (base->nproc != cur->nproc)
        CS_DIFF_WHY("world sizes %d and %d", base->nproc, cur->nproc);
    if (strcmp(base->source, cur->source) != 0)
        CS_DIFF_WHY("sources %s and %s", base->source, cur->source);
    if (base->layout[0] && cur->layout[0] && strcmp(base->layout, cur->layout) != 0)
        CS_DIFF_WHY("layouts %s and %s", base->layout, cur->layout);
#undef CS_DIFF_WHY
    return n;
}

void cs_diff_write(FILE *f, int json, const char *base_name, const cs_report_data *base, const char *new_name,
                   const cs_report_data *cur)
{
    char b1[32], b2[32];
    unsigned long nulls = cs_json_nulls();
    double ch = base->step_median_ns > 0
                    ? 100.0 * (double)(cur->step_median_ns - base->step_median_ns) / (double)base->step_median_ns
                    : 0;
    char why[1024];
    int nwhy = cs_diff_comparable(base, cur, why, sizeof why);
    if (json) {
        fprintf(f, "{\n  \"format\": \"collscope-diff\",\n  \"version\": 1,\n  \"base\": ");
        cs_json_str(f, base_name);
        fprintf(f, ",\n  \"new\": ");
        cs_json_str(f, new_name);
        fprintf(f, ",\n  \"comparable\": %s,\n  \"not_comparable\": ", nwhy ? "false" : "true");
        cs_json_str(f, why);
        fprintf(f, ",\n  \"step\": {\"base_median_ns\": %lld, \"new_median_ns\": %lld, \"change_pct\": ",
                (long long)base->step_median_ns, (long long)cur->step_median_ns);
        cs_json_num(f, "%.2f", ch);
        fprintf(f, "},\n");
    } else {
        cs_msg_line(f, "collscope diff: %s -> %s", base_name, new_name);
        /* the base of every change, once: "+173.6%" of what */
        cs_msg_line(f, "Changes in %% are relative to the base run, %s", base_name);
        if (nwhy)
            fprintf(f, "\nWARNING: these runs are not comparable (%s): the changes below compare different jobs\n",
                    why);
        const int64_t sv[] = { base->step_median_ns, cur->step_median_ns };
        cs_tunit su = cs__report_tunit_of(sv, 2);
        fprintf(f, "\nStep time (median): %s -> %s (%+.1f%% vs base%s)\n",
                cs__report_tstr(&su, base->step_median_ns, b1, sizeof b1),
                cs__report_tstr(&su, cur->step_median_ns, b2, sizeof b2), ch, nwhy ? "; not comparable" : "");
    }
    /* stragglers: in both, gone, new (same kind and rank or link) */
    const cs_report_data *side[2] = { base, cur };
    const char *label[2] = { "gone", "new" };
    if (json)
        fprintf(f, "  \"stragglers\": [");
    else
        fprintf(f, "\nStragglers\n");
    int k = 0, tw = 40;
    int64_t tmax = 0;
    cs_tunit tu = cs__report_tunit(0);
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
                cs_json_str(f, s->kind);
                if (s->comm) {
                    char cname[CS_COMMS_DISPLAY_MAX];
                    fprintf(f, ", \"comm_id\": %lld, \"comm_name\": ", (long long)s->comm);
                    cs_json_str(f, cs_report_commname(x, s->comm, cname, sizeof cname));
                }
                fprintf(f, ", \"rank\": %d, \"src\": %d, \"dst\": %d, \"base_cost_ns\": %lld, \"new_cost_ns\": %lld}",
                        s->rank, s->src, s->dst, (long long)(sd == 0 ? s->cost_ns : 0),
                        (long long)(sd == 1 ? s->cost_ns
                                    : m     ? m->cost_ns
                                            : 0));
            } else {
                k++;
                char where[CS_COMMS_DISPLAY_MAX + 8] = "", name[CS_COMMS_DISPLAY_MAX];
                if (s->src >= 0)
                    snprintf(where, sizeof where, " (link)");
                else if (s->comm)
                    snprintf(where, sizeof where, " (%s)", cs_report_commname(x, s->comm, name, sizeof name));
                int64_t c0 = sd == 0 ? s->cost_ns : 0, c1 = sd == 1 ? s->cost_ns : m ? m->cost_ns : 0;
                const int64_t cv[] = { c0, c1 };
                cs_tunit cu = cs__report_tunit_of(cv, 2);
                fprintf(f, "  %-5s %-16s rank %d%s  cost %s -> %s\n", st, s->kind, s->rank, where,
                        cs__report_tstr(&cu, c0, b1, sizeof b1), cs__report_tstr(&cu, c1, b2, sizeof b2));
            }
        }
    }
    if (json)
        fprintf(f, "%s],\n  \"tails\": [", k ? "\n  " : "");
    else {
        if (!k)
            fprintf(f, "  none in either run\n");
        for (int i = 0; i < cur->ntails; i++) {
            const cs_tail_row *t = &cur->tails[i], *bt = cs__report_find_tail(cur, base, t);
            char key[400], b6[32], site[300];
            int l = snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(cur, t->op),
                             cs_fmt_bytes(1LL << t->bucket, b6, sizeof b6),
                             cs__report_tail_site(cur, i, cur->ntails, site, sizeof site));
            tw = l > tw ? (l < 64 ? l : 64) : tw;
            tmax = t->p99_ns > tmax ? t->p99_ns : tmax;
            tmax = bt && bt->p99_ns > tmax ? bt->p99_ns : tmax;
        }
        tu = cs__report_tunit(tmax);
        char h1[32], h2[32];
        fprintf(f, "\nTail (p99) of each collective group\n  %-*s %11s %11s %8s\n", tw, "op [size] call site",
                cs__report_thead("base", &tu, h1, sizeof h1), cs__report_thead("new", &tu, h2, sizeof h2), "vs base");
    }
    k = 0;
    for (int i = 0; i < cur->ntails; i++) {
        const cs_tail_row *t = &cur->tails[i], *bt = cs__report_find_tail(cur, base, t);
        double c = bt && bt->p99_ns > 0 ? 100.0 * (double)(t->p99_ns - bt->p99_ns) / (double)bt->p99_ns : 0;
        if (json) {
            fprintf(f, "%s\n    {\"op\": ", k++ ? "," : "");
            cs_json_str(f, cs_report_opname(cur, t->op));
            fprintf(f, ", \"bucket\": %d, \"callsite\": ", t->bucket);
            cs_json_str(f, t->callsite);
            char cname[CS_COMMS_DISPLAY_MAX];
            fprintf(f, ", \"comm_name\": ");
            cs_json_str(f, cs_report_commname(cur, t->comm, cname, sizeof cname));
            fprintf(f, ", \"base_p99_ns\": %lld, \"new_p99_ns\": %lld, \"change_pct\": ",
                    (long long)(bt ? bt->p99_ns : -1), (long long)t->p99_ns);
            cs_json_num(f, "%.2f", c);
            fprintf(f, "}");
        } else {
            char key[400], fit[400], b6[32], site[300];
            snprintf(key, sizeof key, "%s [%s] %s", cs_report_opname(cur, t->op),
                     cs_fmt_bytes(1LL << t->bucket, b6, sizeof b6),
                     cs__report_tail_site(cur, i, cur->ntails, site, sizeof site));
            fprintf(f, "  %-*s %11s %11s", tw, cs__report_fit(key, tw, fit, sizeof fit),
                    bt ? cs__report_tnum(&tu, bt->p99_ns, b1, sizeof b1) : "-",
                    cs__report_tnum(&tu, t->p99_ns, b2, sizeof b2));
            if (bt)
                fprintf(f, " %+7.1f%%\n", c);
            else
                fprintf(f, " %8s\n", "new");
        }
    }
    if (json)
        fprintf(f, "%s],\n", k ? "\n  " : "");
    cs_diff_gpu(f, json, base, cur);
    if (json) {
        fprintf(f, "\n");
        cs_json_null_note(f, nulls);
        fprintf(f, "}\n");
    }
}
