/* diff.c: `collscope diff`: two runs compared (median step time,
 * straggler verdicts in both, gone or new, the p99 of each collective
 * group), as text or JSON (format "collscope-diff", docs/report-json.md). */
#include "config.h"
#include "analyzer/report/report_int.h"

#include <string.h>

void cs_diff_write(FILE *f, int json, const char *base_name, const cs_report_data *base, const char *new_name,
                   const cs_report_data *cur)
{
    char b1[32], b2[32];
    unsigned long nulls = cs_json_nulls();
    double ch = base->step_median_ns > 0
                    ? 100.0 * (double)(cur->step_median_ns - base->step_median_ns) / (double)base->step_median_ns
                    : 0;
    if (json) {
        fprintf(f, "{\n  \"format\": \"collscope-diff\",\n  \"version\": 1,\n  \"base\": ");
        cs_json_str(f, base_name);
        fprintf(f, ",\n  \"new\": ");
        cs_json_str(f, new_name);
        fprintf(f, ",\n  \"step\": {\"base_median_ns\": %lld, \"new_median_ns\": %lld, \"change_pct\": ",
                (long long)base->step_median_ns, (long long)cur->step_median_ns);
        cs_json_num(f, "%.2f", ch);
        fprintf(f, "},\n");
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
        const cs_tail_row *t = &cur->tails[i], *bt = cs__report_find_tail(cur, base, t);
        double c = bt && bt->p99_ns > 0 ? 100.0 * (double)(t->p99_ns - bt->p99_ns) / (double)bt->p99_ns : 0;
        if (json) {
            fprintf(f, "%s\n    {\"op\": ", k++ ? "," : "");
            cs_json_str(f, cs_report_opname(cur, t->op));
            fprintf(f, ", \"bucket\": %d, \"callsite\": ", t->bucket);
            cs_json_str(f, t->callsite);
            fprintf(f, ", \"base_p99_ns\": %lld, \"new_p99_ns\": %lld, \"change_pct\": ",
                    (long long)(bt ? bt->p99_ns : -1), (long long)t->p99_ns);
            cs_json_num(f, "%.2f", c);
            fprintf(f, "}");
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
    if (json) {
        fprintf(f, "%s]\n", k ? "\n  " : "");
        cs_json_null_note(f, nulls);
        fprintf(f, "}\n");
    }
}
