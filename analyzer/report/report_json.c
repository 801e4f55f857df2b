/* report_json.c: `collscope report --format json`: one object of format
 * "collscope-report" (docs/report-json.md). Strings go through cs_json_str,
 * fractional numbers through cs_json_num (null when not finite). */
#include "config.h"
#include "analyzer/report/report_int.h"

#include <stdlib.h>
#include <string.h>

/* `"comm": ID, "comm_id": ID, "comm_name": NAME` of communicator `id`
 * (0: none, name null). */
static void cs_report_json_comm(FILE *f, const cs_comms *comms, int64_t id)
{
    char name[CS_COMMS_DISPLAY_MAX];
    fprintf(f, ", \"comm\": %lld, \"comm_id\": %lld, \"comm_name\": ", (long long)id, (long long)id);
    if (id)
        cs_json_str(f, cs_store_comms_name(comms, id, name, sizeof name));
    else
        fprintf(f, "null");
}

/* One list of groups; with `comms`, the keys are communicator ids, and
 * each group also gives comm_id, comm_name and size. */
static void cs_report_json_groups(FILE *f, const char *name, const char *keyname, const cs_group_stat *a, size_t n,
                                  int last, const cs_comms *comms)
{
    fprintf(f, "  \"%s\": [", name);
    for (size_t i = 0; i < n; i++) {
        const cs_group_stat *x = &a[i];
        fprintf(f, "%s\n    {\"%s\": ", i ? "," : "", keyname);
        cs_json_str(f, x->key);
        if (comms) {
            int64_t id = strtoll(x->key, NULL, 10);
            const cs_comm_info *c = cs_store_comms_find(comms, id);
            char cname[CS_COMMS_DISPLAY_MAX];
            fprintf(f, ", \"comm_id\": %lld, \"comm_name\": ", (long long)id);
            cs_json_str(f, cs_store_comms_name(comms, id, cname, sizeof cname));
            fprintf(f, ", \"comm_origin\": ");
            if (c)
                cs_json_str(f, c->origin);
            else
                fprintf(f, "null");
            fprintf(f, ", \"size\": %d", c ? c->size : 0);
        }
        fprintf(f, ", \"op\": ");
        cs_json_str(f, x->op);
        fprintf(f,
                ", \"calls\": %lld, \"bytes\": %lld, \"total_ns\": %lld, \"p50_ns\": %lld, \"p90_ns\": %lld,"
                " \"p99_ns\": %lld, \"max_ns\": %lld}",
                (long long)x->count, (long long)x->bytes, (long long)x->total, (long long)x->p50, (long long)x->p90,
                (long long)x->p99, (long long)x->max);
    }
    fprintf(f, "%s]%s\n", n ? "\n  " : "", last ? "" : ",");
}

/* The cost models, the what-if replay, apply mode and the proposals. */

/* The lines of a stored text ("a\nb") as JSON strings, each after first
 * (the first) or sep (the others); how many. */
static int cs_report_json_lines(FILE *f, const char *text, const char *first, const char *sep)
{
    int k = 0;
    for (const char *l = text, *next; *l; l = next) {
        int n;
        next = cs__report_line(l, &n);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", n, l);
        fprintf(f, "%s", k++ ? sep : first);
        cs_json_str(f, line);
    }
    return k;
}
static void cs_report_json_whatif(FILE *f, const cs_report_data *d)
{
    fprintf(f, "  \"cost_models\": [");
    for (int i = 0; i < d->nmodels; i++) {
        const cs_model_row *m = &d->models[i];
        fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
        cs_json_str(f, cs_report_opname(d, m->op));
        cs_report_json_comm(f, &d->comms, m->comm);
        fprintf(f, ", \"algo\": ");
        cs_json_str(f, m->algo);
        fprintf(f,
                ", \"points\": %lld, \"cells\": %lld, \"min_bytes\": %lld, \"max_bytes\": %lld, "
                "\"alpha_ns\": ",
                (long long)m->points, (long long)m->cells, (long long)m->min_bytes, (long long)m->max_bytes);
        cs_json_num(f, "%.3f", m->alpha_ns);
        fprintf(f, ", \"gamma_ns\": ");
        cs_json_num(f, "%.3f", m->gamma_ns);
        fprintf(f, ", \"beta_ns_per_byte\": ");
        if (m->fitted) {
            cs_json_num(f, "%.6g", m->beta_ns_per_byte);
            fprintf(f, ", \"r2\": ");
            cs_json_num(f, "%.4f", m->r2);
        } else {
            fprintf(f, "null, \"r2\": null");
        }
        fprintf(f, ", \"rel_residual\": ");
        cs_json_num(f, "%.4f", m->rel_resid);
        fprintf(f, ", \"fitted\": %s, \"note\": ", m->fitted ? "true" : "false");
        cs_json_str(f, m->note);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", d->nmodels ? "\n  " : "");
    fprintf(f, "  \"whatif\": {\"replayed\": %s, \"measured_step_ns\": ", d->has_whatif ? "true" : "false");
    cs_json_i64_or_null(f, d->wf_measured_ns);
    fprintf(f, ", \"replay_step_ns\": ");
    cs_json_i64_or_null(f, d->wf_replay_ns);
    fprintf(f, ", \"replay_error\": ");
    if (d->has_whatif && !(d->wf_replay_error < 0)) /* NaN: cs_json_num says it was not finite */
        cs_json_num(f, "%.6f", d->wf_replay_error);
    else
        fputs("null", f); /* not replayed: no error to state */
    fprintf(f, ", \"model_step_ns\": ");
    cs_json_i64_or_null(f, d->wf_model_ns);
    fprintf(f, ", \"model_error\": ");
    if (d->has_whatif && !(d->wf_model_error < 0)) /* NaN: cs_json_num says it was not finite */
        cs_json_num(f, "%.6f", d->wf_model_error);
    else
        fputs("null", f); /* not replayed: no error to state */
    fprintf(f, ", \"ontime_step_ns\": ");
    cs_json_i64_or_null(f, d->wf_ontime_ns);
    fprintf(f, ", \"ontime_gain_ns\": %lld, \"comm_step_ns\": ", (long long)d->wf_ontime_gain_ns);
    cs_json_i64_or_null(f, d->wf_comm_step_ns);
    fprintf(f, ", \"allreduce_calls_per_step\": ");
    cs_json_num(f, "%.3f", d->wf_ar_calls_per_step);
    fprintf(f, ", \"memcpy_gbps\": ");
    cs_json_num(f, "%.3g", d->wf_memcpy_gbps);
    fprintf(f, ", \"note\": ");
    cs_json_str(f, d->wf_note);
    fprintf(f, "},\n  \"apply_mode\": {\"fuse_members\": %lld, \"fused_calls\": %lld, \"guard\": [",
            (long long)d->fuse_members, (long long)d->fused_calls);
    cs_report_json_lines(f, d->guard, "", ", ");
    fprintf(f, "]},\n");
    fprintf(f, "  \"proposals\": [");
    for (int i = 0; i < d->nprops; i++) {
        const cs_proposal *p = &d->props[i];
        fprintf(f, "%s\n    {\"kind\": ", i ? "," : "");
        cs_json_str(f, p->kind);
        cs_report_json_comm(f, &d->comms, p->comm);
        fprintf(f, ", \"op\": ");
        cs_json_str(f, strcmp(p->kind, "fusion") == 0 ? cs_report_opname(d, p->op) : "");
        fprintf(f, ", \"callsite\": ");
        cs_json_str(f, p->callsite);
        fprintf(f, ", \"calls_per_step\": ");
        cs_json_num(f, "%.3f", p->calls_per_step);
        fprintf(f,
                ", \"min_bytes\": %lld, \"max_bytes\": %lld, \"bytes_per_step\": %lld, \"bucket_bytes\": %lld,"
                " \"groups_per_step\": ",
                (long long)p->min_bytes, (long long)p->max_bytes, (long long)p->bytes_per_step,
                (long long)p->bucket_bytes);
        cs_json_num(f, "%.3f", p->groups_per_step);
        fprintf(f, ", \"gain_ns\": %lld, \"step_ns\": %lld, \"gain_share\": ", (long long)p->gain_ns,
                (long long)p->step_ns);
        cs_json_num(f, "%.4f", p->step_ns > 0 ? (double)p->gain_ns / (double)p->step_ns : 0.0);
        fprintf(f, ", \"evidence\": ");
        cs_json_str(f, p->evidence);
        fprintf(f, ", \"env\": ");
        cs_json_str(f, p->env);
        fprintf(f, ", \"curve\": [");
        const char *c = p->curve;
        int k = 0;
        while (*c) {
            long long sz = 0, gain = 0, gain2 = 0;
            double grp = 0;
            if (sscanf(c, "%lld:%lf:%lld:%lld", &sz, &grp, &gain, &gain2) == 4) {
                fprintf(f, "%s{\"bucket_bytes\": %lld, \"groups_per_step\": ", k++ ? ", " : "", sz);
                cs_json_num(f, "%.3f", grp);
                fprintf(f, ", \"gain_ns\": %lld, \"gain_program_ns\": %lld}", gain, gain2);
            }
            const char *n = strchr(c, ',');
            if (!n)
                break;
            c = n + 1;
        }
        fprintf(f, "]}");
    }
    fprintf(f, "%s],\n", d->nprops ? "\n  " : "");
    fprintf(f, "  \"proposals_declined\": [");
    int nd = cs_report_json_lines(f, d->wf_declined, "\n    ", ",\n    ");
    fprintf(f, "%s],\n", nd ? "\n  " : "");
}

/* The stored step list ("3,6,9") as JSON numbers: only the integers in it
 * (the text comes from the store, which may be damaged). */
static void cs_report_json_steps(FILE *f, const char *list)
{
    const char *p = list;
    int first = 1;
    while (*p) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        fprintf(f, "%s%lld", first ? "" : ", ", v);
        first = 0;
        p = end;
    }
}

/* "answer": what the text report's first lines say (report_answer.c) */
static void cs_report_json_answer(FILE *f, const cs_report_data *d)
{
    cs_answer a;
    cs__report_answer_of(d, &a);
    fprintf(f, "  \"answer\": {\"culprit\": ");
    if (a.who[0])
        cs_json_str(f, a.who);
    else
        fprintf(f, "null");
    fprintf(f, ", \"culprit_rank\": ");
    cs_json_i64_or_null(f, a.rank);
    fprintf(f, ", \"culprit_stage\": ");
    if (a.stage)
        cs_json_str(f, d->sd_culprit);
    else
        fprintf(f, "null");
    fprintf(f, ", \"named_by\": %s", a.by_strag ? "\"stragglers\"" : a.who[0] ? "\"slowdown\"" : "null");
    fprintf(f, ", \"saving_ns\": ");
    cs_json_i64_or_null(f, a.save_ns);
    fprintf(f, ", \"saving_basis\": ");
    cs_json_str(f, a.save_ns >= 0 ? a.save_how : "");
    fprintf(f, ", \"step_ns\": ");
    cs_json_i64_or_null(f, a.step_ns > 0 ? a.step_ns : -1);
    fprintf(f, ", \"saving_estimates\": [");
    for (int i = 0; i < a.nest; i++) {
        fprintf(f, "%s{\"source\": \"%s\", \"ns\": %lld, \"what\": ", i ? ", " : "", a.est[i].source,
                (long long)a.est[i].ns);
        cs_json_str(f, a.est[i].what);
        fprintf(f, ", \"apart\": %s}", a.est[i].apart ? "true" : "false");
    }
    fprintf(f, "], \"estimates_agree\": %s},\n", a.nest - a.napart < 2 ? "null" : a.agree ? "true" : "false");
}

static void cs_report_json_analysis(FILE *f, const cs_report_data *d, const cs_gate *g, int ng)
{
    fprintf(f,
            "  \"analysis_version\": %d,\n  \"instances\": %lld,\n  \"incomplete_instances\": %lld,\n"
            "  \"p2p_messages\": %lld,\n",
            CS_ANALYSIS_VERSION, (long long)d->instances, (long long)d->incomplete, (long long)d->p2p);
    cs_report_json_answer(f, d);
    fprintf(f, "  \"clocks\": [");
    for (int i = 0; i < d->nproc; i++) {
        const cs_proc *p = &d->procs[i];
        fprintf(f, "%s\n    {\"rank\": %d, \"clock\": ", i ? "," : "", p->rank);
        cs_json_str(f, p->clock);
        fprintf(f, ", \"host\": ");
        cs_json_str(f, p->host);
        fprintf(f, ", \"offset_ns\": %lld, \"drift_ppm\": ", (long long)p->clock_offset_ns);
        cs_json_num(f, "%.6f", p->clock_drift_ppm);
        fprintf(f, ", \"residual_ns\": %lld}", (long long)p->align_residual_ns);
    }
    fprintf(f, "%s],\n", d->nproc ? "\n  " : "");
    fprintf(f, "  \"stragglers\": [");
    for (int i = 0; i < d->nstrag; i++) {
        const cs_straggler *s = &d->strag[i];
        fprintf(f, "%s\n    {\"kind\": ", i ? "," : "");
        cs_json_str(f, s->kind);
        fprintf(f, ", \"rank\": %d, \"src\": %d, \"dst\": %d", s->rank, s->src, s->dst);
        cs_report_json_comm(f, &d->comms, s->comm);
        fprintf(f,
                ", \"first_step\": %lld, \"last_step\": %lld,"
                " \"begin_ns\": %lld, \"end_ns\": %lld, \"lateness_ns\": %lld, \"cost_ns\": %lld, \"cost_share\": ",
                (long long)s->first_step, (long long)s->last_step, (long long)s->begin_ns, (long long)s->end_ns,
                (long long)s->lateness_ns, (long long)s->cost_ns);
        cs_json_num(f, "%.4f", d->step_median_ns > 0 ? (double)s->cost_ns / (double)d->step_median_ns : 0.0);
        fprintf(f, ", \"period\": %lld, \"phase\": %lld, \"affected_steps\": %lld, \"total_ns\": %lld, \"steps\": [",
                (long long)s->period, (long long)s->phase, (long long)s->affected, (long long)s->total_ns);
        cs_report_json_steps(f, s->steps);
        fprintf(f, "]");
        fprintf(f, ", \"evidence\": ");
        cs_json_str(f, s->evidence);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", d->nstrag ? "\n  " : "");
    fprintf(f, "  \"layout\": ");
    if (d->layout[0]) {
        fprintf(f, "{\"text\": ");
        cs_json_str(f, d->layout);
        fprintf(f, ", \"dp\": %d, \"pp\": %d, \"tp\": %d, \"source\": ", d->lay_dp, d->lay_pp, d->lay_tp);
        cs_json_str(f, d->layout_source);
        fprintf(f, ", \"ranks\": [");
        for (int i = 0; i < d->nlay; i++)
            fprintf(f, "%s{\"rank\": %d, \"dp\": %d, \"pp\": %d, \"tp\": %d}", i ? ", " : "", d->lay[i].rank,
                    d->lay[i].dp, d->lay[i].pp, d->lay[i].tp);
        fprintf(f, "]},\n");
    } else {
        fprintf(f, "null,\n");
    }
    fprintf(f, "  \"gpu_time\": [");
    for (int i = 0; i < d->ngpu; i++) {
        const cs_gpu_time_row *r = &d->gpu[i];
        static const char *const name[] = { "compute", "comm_exposed", "comm_overlapped", "memory", "idle" };
        const int64_t part[] = { r->compute_ns, r->comm_exposed_ns, r->comm_overlapped_ns, r->memory_ns, r->idle_ns };
        fprintf(f, "%s\n    {\"rank\": %d, \"window_ns\": %lld", i ? "," : "", r->rank, (long long)r->window_ns);
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++)
            fprintf(f, ", \"%s_ns\": %lld", name[k], (long long)part[k]);
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++) {
            fprintf(f, ", \"%s_share\": ", name[k]);
            cs_json_num(f, "%.6f", cs__report_gpu_share(r, part[k]));
        }
        fprintf(f, ", \"compute_outlier\": %d}", r->outlier);
    }
    fprintf(f, "%s],\n", d->ngpu ? "\n  " : "");
    fprintf(f, "  \"kernels\": [");
    for (int i = 0; i < d->nkern; i++) {
        const cs_kernel_row *k = &d->kern[i];
        fprintf(f, "%s\n    {\"rank\": %d, \"name\": ", i ? "," : "", k->rank);
        cs_json_str(f, k->name);
        fprintf(f, ", \"category\": ");
        cs_json_str(f, k->category);
        fprintf(f, ", \"count\": %lld, \"total_ns\": %lld, \"median_ns\": %lld, \"p99_ns\": %lld}", (long long)k->count,
                (long long)k->total_ns, (long long)k->median_ns, (long long)k->p99_ns);
    }
    fprintf(f, "%s],\n", d->nkern ? "\n  " : "");
    fprintf(f, "  \"slowdown\": ");
    if (d->has_slowdown) {
        fprintf(f, "{\"S\": ");
        cs_json_num(f, "%.4f", d->sd_S);
        fprintf(f, ", \"replay_error\": ");
        cs_json_num(f, "%.4f", d->sd_replay_error);
        fprintf(f, ", \"actual_step_ns\": %lld, \"ideal_step_ns\": %lld, \"verdict\": ", (long long)d->sd_actual_ns,
                (long long)d->sd_ideal_ns);
        cs_json_str(f, d->sd_verdict);
        fprintf(f, ", \"culprit\": ");
        cs_json_str(f, d->sd_culprit);
        fprintf(f, ", \"text\": ");
        cs_json_str(f, d->sd_text);
        fprintf(f, ", \"layout\": ");
        cs_json_str(f, d->layout);
        static const char *const kinds[][2] = {
            { "rank", "by_rank" }, { "group", "by_group" }, { "op", "by_op" }, { "step", "by_step" }
        };
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            fprintf(f, ", \"%s\": [", kinds[k][1]);
            int first = 1;
            for (int i = 0; i < d->nsd; i++) {
                const cs_slowdown_row *r = &d->sd[i];
                if (strcmp(r->kind, kinds[k][0]) != 0)
                    continue;
                fprintf(f, "%s{\"name\": ", first ? "" : ", ");
                cs_json_str(f, r->name);
                fprintf(f, ", \"ranks\": ");
                cs_json_str(f, r->ranks);
                fprintf(f, ", \"S\": ");
                cs_json_num(f, "%.4f", r->s);
                fprintf(f, ", \"share\": ");
                cs_json_num(f, "%.4f", r->share);
                fprintf(f, ", \"compute_share\": ");
                cs_json_num(f, "%.4f", r->compute_share);
                fprintf(f, ", \"actual_ns\": %lld, \"ideal_ns\": %lld}", (long long)r->actual_ns,
                        (long long)r->ideal_ns);
                first = 0;
            }
            fprintf(f, "]");
        }
        fprintf(f, "},\n");
    } else {
        fprintf(f, "null,\n");
    }
    fprintf(f, "  \"steps\": {\"source\": ");
    cs_json_str(f, d->step_source);
    fprintf(f, ", \"count\": %d, \"median_ns\": %lld, \"p90_ns\": %lld, \"whatif_median_ns\": %lld, ", d->nsteps,
            (long long)d->step_median_ns, (long long)d->step_p90_ns, (long long)d->whatif_median_ns);
    if (strcmp(d->step_source, "period") == 0) {
        fprintf(f, "\"period_calls\": %d, \"confidence\": ", d->step_period);
        cs_json_num(f, "%.4f", d->step_confidence);
        fprintf(f, ", \"ranks_agreeing\": %d, \"ranks_searched\": %d, ", d->step_ranks_agreeing,
                d->step_ranks_searched);
    }
    fprintf(f, "\"comm_ns\": %lld, \"list\": [", (long long)(d->nsteps ? d->step_comm_ns : -1));
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
        cs_json_str(f, cs_report_opname(d, t->op));
        cs_report_json_comm(f, &d->comms, t->comm);
        fprintf(f, ", \"bucket\": %d, \"callsite\": ", t->bucket);
        cs_json_str(f, t->callsite);
        fprintf(f,
                ", \"count\": %lld, \"p50_ns\": %lld, \"p90_ns\": %lld, \"p99_ns\": %lld, \"p999_ns\": %lld,"
                " \"max_ns\": %lld, \"slowest_common\": ",
                (long long)t->count, (long long)t->p50_ns, (long long)t->p90_ns, (long long)t->p99_ns,
                (long long)t->p999_ns, (long long)t->max_ns);
        cs_json_str(f, t->common);
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
        cs_json_str(f, line);
        p += l + (e ? 1 : 0);
    }
    fprintf(f, "],\n");
    cs_report_json_whatif(f, d);
    fprintf(f, "  \"gates\": [");
    for (int i = 0; i < ng; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        cs_json_str(f, g[i].name);
        fprintf(f, ", \"failed\": %s, \"message\": ", g[i].failed ? "true" : "false");
        cs_json_str(f, g[i].message);
        fprintf(f, "}");
    }
    fprintf(f, "%s]\n", ng ? "\n  " : "");
}

void cs_report_json_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng)
{
    const cs_proc *procs = t->procs;
    int nproc = t->nproc;
    int64_t spans = 0, dropped = 0, overhead = 0;
    unsigned long nulls = cs_json_nulls();
    for (int i = 0; i < nproc; i++) {
        spans += procs[i].spans;
        dropped += procs[i].dropped;
        overhead += procs[i].overhead_ns;
    }
    fprintf(f, "{\n  \"format\": \"collscope-report\",\n  \"version\": %d,\n  \"trace\": ", CS_REPORT_VERSION);
    cs_json_str(f, t->path);
    fprintf(f, ",\n  \"processes\": %d,\n  \"spans\": %lld,\n  \"dropped\": %lld,\n  \"tool_overhead_ns\": %lld,\n",
            nproc, (long long)spans, (long long)dropped, (long long)overhead);
    fprintf(f, "  \"failures\": ");
    cs_failure_json(f, &d->failures);
    fprintf(f, ",\n  \"live_alarms\": [");
    for (int i = 0; i < d->nlive; i++) {
        const cs_store_alarm_row *a = &d->live[i];
        fprintf(f, "%s\n    {\"kind\": ", i ? "," : "");
        cs_json_str(f, a->kind);
        fprintf(f, ", \"subject\": ");
        cs_json_str(f, a->subject);
        fprintf(f, ", \"rank\": ");
        cs_json_i64_or_null(f, a->rank); /* null: a communicator or the job (a hang) */
        fprintf(f, ", \"comm\": ");
        if (a->comm[0])
            cs_json_str(f, a->comm);
        else
            fprintf(f, "null");
        fprintf(f, ", \"peer\": ");
        cs_json_i64_or_null(f, a->peer); /* null unless a link */
        fprintf(f, ", \"name\": ");
        cs_json_str(f, a->name);
        fprintf(f, ", \"step\": %lld, \"raised\": %lld, \"until_step\": %lld, \"factor\": ", (long long)a->step,
                (long long)a->raised, (long long)a->until_step);
        cs_json_num(f, "%.3f", a->factor);
        fprintf(f, ", \"text\": ");
        cs_json_str(f, a->text);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n  \"ranks\": [", d->nlive ? "\n  " : "");
    for (size_t i = 0; i < t->nranks; i++) {
        const cs_report_rank *r = &t->ranks[i];
        const cs_proc *p = NULL;
        for (int k = 0; k < nproc; k++)
            if (procs[k].rank == r->rank)
                p = &procs[k];
        fprintf(f, "%s\n    {\"rank\": %d, \"in_calls_ns\": %lld, \"wall_ns\": %lld, \"share\": ", i ? "," : "",
                r->rank, (long long)r->busy, (long long)r->wall);
        cs_json_num(f, "%.4f", r->wall > 0 ? (double)r->busy / (double)r->wall : 0.0);
        fprintf(f, ", \"spans\": %lld, \"status\": ", (long long)r->spans);
        cs_json_str(f, p ? p->status : "");
        fprintf(f, ", \"clock\": ");
        cs_json_str(f, p ? p->clock : "");
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", t->nranks ? "\n  " : "");
    cs_report_json_groups(f, "ops", "op", t->by_op, t->nby_op, 0, NULL);
    cs_report_json_groups(f, "comms", "comm", t->by_comm, t->nby_comm, 0, &t->comms);
    cs_report_json_groups(f, "callsites", "callsite", t->by_site, t->nby_site, 0, NULL);
    cs_report_json_analysis(f, d, g, ng);
    cs_json_null_note(f, nulls);
    fprintf(f, "}\n");
}
