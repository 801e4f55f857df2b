/* report_markdown.c: `collscope report --format markdown`: a summary for a
 * CI job page: the answer, then the sections in the text report's order
 * (docs/guide.md: slowdown, stragglers, layout, wait states, tail latency,
 * GPU time, what-if replay, proposals, cost models, what is missing,
 * gates). */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/msg.h"

#include <string.h>

static void cs_report_markdown_cell(FILE *f, const char *s)
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

static void cs_report_markdown_proposals(FILE *f, const cs_report_data *d)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "\n### What-if replay\n\n");
    if (d->has_whatif && d->wf_model_ns < 0)
        fprintf(f, "Measured median step %s; the replay with the cost models could not run (it deadlocked).\n",
                cs_fmt_ns(d->wf_measured_ns, b1, sizeof b1));
    else if (d->has_whatif) {
        const int64_t v[] = { d->wf_measured_ns, d->wf_model_ns };
        cs_tunit u = cs__report_tunit_of(v, 2);
        fprintf(f, "Measured median step %s, replayed with the cost models %s (replay error %.2f %%).\n",
                cs__report_tstr(&u, d->wf_measured_ns, b1, sizeof b1),
                cs__report_tstr(&u, d->wf_model_ns, b2, sizeof b2), 100 * d->wf_model_error);
    } else
        fprintf(f, "Could not run%s%s.\n", d->wf_note[0] ? ": " : "", d->wf_note);
    fprintf(f, "\n### Proposals\n\n");
    for (const char *l = d->guard, *next; *l; l = next) {
        int n;
        next = cs__report_line(l, &n);
        fprintf(f, "- Apply mode's guard: %.*s\n%s", n, l, *next ? "" : "\n");
    }
    if (d->fuse_members || d->fused_calls)
        fprintf(f, "Apply mode: %lld calls fused into %lld (all ranks).\n\n", (long long)d->fuse_members,
                (long long)d->fused_calls);
    if (!d->nprops)
        fprintf(f, "None.\n");
    for (const char *l = d->wf_declined, *next; *l; l = next) {
        int n;
        next = cs__report_line(l, &n);
        fprintf(f, "%s- %.*s\n", l == d->wf_declined ? "\n" : "", n, l);
    }
    if (d->nprops) {
        fprintf(f,
                "| kind | call site | bucket | gain per step | evidence | apply with |\n|---|---|---:|---:|---|---|\n");
        for (int i = 0; i < d->nprops; i++) {
            const cs_proposal *p = &d->props[i];
            fprintf(f, "| %s | ", p->kind);
            cs_report_markdown_cell(f, p->callsite[0] ? p->callsite : "(not recorded)");
            fprintf(f, " | %s | %s (%.1f %%) | ", p->bucket_bytes ? cs_fmt_bytes(p->bucket_bytes, b1, sizeof b1) : "",
                    cs_fmt_ns(p->gain_ns, b2, sizeof b2),
                    p->step_ns > 0 ? 100.0 * (double)p->gain_ns / (double)p->step_ns : 0.0);
            cs_report_markdown_cell(f, p->evidence);
            fprintf(f, " | %s%s%s |\n", p->env[0] ? "`" : "", p->env, p->env[0] ? "`" : "");
        }
    }
    if (d->nmodels) {
        int64_t ma = 0;
        for (int i = 0; i < d->nmodels; i++) {
            ma = (int64_t)d->models[i].alpha_ns > ma ? (int64_t)d->models[i].alpha_ns : ma;
            ma = (int64_t)d->models[i].gamma_ns > ma ? (int64_t)d->models[i].gamma_ns : ma;
        }
        cs_tunit mu = cs__report_tunit(ma);
        fprintf(
            f,
            "\n### Cost models\n\n| cost model | points | alpha (%s) | gamma (%s) | beta (ns per KiB) | R² | resid (%% of the cells' time) | note |\n"
            "|---|---:|---:|---:|---:|---:|---:|---|\n",
            mu.name, mu.name);
        for (int i = 0; i < d->nmodels; i++) {
            const cs_model_row *m = &d->models[i];
            char key[256];
            cs__report_model_name(key, sizeof key, d, m);
            fprintf(f, "| %s | %lld | %s | %s | ", key, (long long)m->points,
                    cs__report_tnum(&mu, (int64_t)m->alpha_ns, b1, sizeof b1),
                    cs__report_tnum(&mu, (int64_t)m->gamma_ns, b2, sizeof b2));
            if (m->fitted)
                fprintf(f, "%.3f | %.3f | ", m->beta_ns_per_byte * 1024, m->r2);
            else
                fprintf(f, "unknown | - | ");
            fprintf(f, "%.1f %% | ", 100 * m->rel_resid);
            cs_report_markdown_cell(f, m->note);
            fprintf(f, " |\n");
        }
    }
    (void)b3;
}

/* The GPU time of each rank, in one unit, and the compute outliers. */
static void cs_report_markdown_gpu(FILE *f, const cs_report_data *d)
{
    fprintf(f, "\n### GPU time per rank\n\n");
    if (!d->ngpu) {
        fprintf(f, "No GPU activity in this trace.\n");
        return;
    }
    double per;
    const char *unit = cs__report_gpu_unit(d, &per);
    fprintf(f,
            "Times in %s, and %% of the rank's GPU window (first kernel start to last kernel end); compute + comm "
            "exposed + memory + idle = window.\n\n"
            "| rank | window | compute | comm exposed | comm overlapped | memory | idle |\n"
            "|---:|---:|---:|---:|---:|---:|---:|\n",
            unit);
    for (int i = 0; i < d->ngpu; i++) {
        const cs_gpu_time_row *r = &d->gpu[i];
        const int64_t part[] = { r->compute_ns, r->comm_exposed_ns, r->comm_overlapped_ns, r->memory_ns, r->idle_ns };
        fprintf(f, "| %d%s | %.3f |", r->rank, r->outlier ? " ⚠" : "", (double)r->window_ns / per);
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++)
            fprintf(f, " %.3f (%.1f %%) |", (double)part[k] / per, 100 * cs__report_gpu_share(r, part[k]));
        fprintf(f, "\n");
    }
    int n = 0;
    for (int i = 0; i < d->ngpu; i++)
        if (d->gpu[i].outlier)
            fprintf(f, "%s rank %d (%.1f %% of its GPU window)",
                    n++ ? "," : "\nCompute share out of line (⚠):", d->gpu[i].rank,
                    100 * cs__report_gpu_share(&d->gpu[i], d->gpu[i].compute_ns));
    if (n)
        fprintf(f, " (median of the ranks %.1f %%).\n", 100 * cs__report_gpu_median_compute(d));
}

void cs_report_markdown_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng)
{
    char tname[8192];
    const char *trace = cs_msg_name(t->path, tname, sizeof tname); /* one line, whatever the name holds */
    char b1[32], b2[32], b3[32], b4[32], name[CS_COMMS_DISPLAY_MAX];
    int failed = 0;
    for (int i = 0; i < ng; i++)
        failed += g[i].failed;
    fprintf(f, "## collscope report%s\n\n", ng ? (failed ? ": gates failed" : ": gates passed") : "");
    fprintf(f, "Terms (S, imposed wait, median lateness, ...) are defined in the [glossary](" CS_REPORT_GLOSSARY_URL
               ").\n\n");
    fprintf(f, "Trace `%s`: %d processes, %lld spans, %lld collective instances", trace, d->nproc, (long long)d->spans,
            (long long)d->instances);
    const int64_t sv[] = { d->step_median_ns, d->whatif_median_ns, d->step_comm_ns };
    cs_tunit su = cs__report_tunit_of(sv, 3);
    if (d->nsteps)
        fprintf(f, "; %d steps, median %s (%s had the slowest rank been on time)", d->nsteps,
                cs__report_tstr(&su, d->step_median_ns, b1, sizeof b1),
                cs__report_tstr(&su, d->whatif_median_ns, b2, sizeof b2));
    if (d->nsteps && d->step_comm_ns >= 0)
        fprintf(f, ", communication %s per step", cs__report_tstr(&su, d->step_comm_ns, b3, sizeof b3));
    if (d->nsteps && strcmp(d->step_source, "period") == 0)
        fprintf(f,
                " (steps from the period of the calls: %d calls, matching %.1f %% of the positions on %d of %d ranks)",
                d->step_period, 100 * d->step_confidence, d->step_ranks_agreeing, d->step_ranks_searched);
    fprintf(f, ".\n\n");
    fprintf(f, "```text\n");
    cs__report_answer(f, t, d);
    fprintf(f, "```\n\n");
    if (d->failures.n) {
        fprintf(
            f,
            "### Failures\n\n| kind | culprits | call | communicator | seq | call site | finding |\n|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < d->failures.n; i++) {
            const cs_failure *x = &d->failures.v[i];
            char ranks[256];
            cs_failure_ranks_text(x->culprits, x->nculprits, ranks, sizeof ranks);
            fprintf(f, "| %s | %s | %s | %s | ", x->kind, ranks, x->call[0] ? x->call : "-",
                    x->comm[0] ? x->comm : "-");
            if (x->seq >= 0)
                fprintf(f, "%lld", (long long)x->seq);
            else
                fprintf(f, "-");
            fprintf(f, " | %s | ", x->site[0] ? x->site : "-");
            cs_report_markdown_cell(f, x->text);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
    }
    if (d->nlive) {
        fprintf(
            f,
            "### Alarms raised while the job ran\n\n| kind | rank or comm | from step | until | factor | alarm |\n|---|---|---|---|---|---|\n");
        for (int i = 0; i < d->nlive; i++) {
            const cs_store_alarm_row *a = &d->live[i];
            char until[32] = "the end";
            if (a->until_step >= 0)
                snprintf(until, sizeof until, "step %lld", (long long)a->until_step);
            if (a->name[0] && strcmp(a->subject, "rank") != 0 && strcmp(a->subject, "comm") != 0) {
                fprintf(f, "| %s | ", a->kind);
                cs_report_markdown_cell(f, a->name);
                fprintf(f, " | %lld | %s | %.1fx | ", (long long)a->step, until, a->factor);
            } else if (a->rank >= 0)
                fprintf(f, "| %s | %d | %lld | %s | %.1fx | ", a->kind, a->rank, (long long)a->step, until, a->factor);
            else if (a->comm[0]) {
                fprintf(f, "| %s | comm ", a->kind);
                cs_report_markdown_cell(f, a->comm);
                fprintf(f, " | %lld | %s | %.1fx | ", (long long)a->step, until, a->factor);
            } else
                fprintf(f, "| %s | - | %lld | %s | - | ", a->kind, (long long)a->step, until);
            cs_report_markdown_cell(f, a->text);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
    }
    if (d->has_slowdown)
        fprintf(f, "Slowdown: **S %.3f** (replay error %.1f %%): %s.\n\n", d->sd_S, 100 * d->sd_replay_error,
                d->sd_text);
    fprintf(f, "### Stragglers\n\n");
    if (!d->nstrag)
        fprintf(f, "No verdict: no rank, link or collective is out of line.\n\n");
    else {
        int64_t mc = 0;
        for (int i = 0; i < d->nstrag; i++)
            mc = d->strag[i].cost_ns > mc ? d->strag[i].cost_ns : mc;
        cs_tunit cu = cs__report_tunit(mc);
        fprintf(f, "| kind | rank | link | steps | cost per step (%s) | evidence |\n|---|---|---|---|---|---|\n",
                cu.name);
        for (int i = 0; i < d->nstrag; i++) {
            const cs_straggler *s = &d->strag[i];
            fprintf(f, "| %s | %d | ", s->kind, s->rank);
            if (s->src >= 0)
                fprintf(f, "%d → %d", s->src, s->dst);
            else if (s->comm)
                cs_report_markdown_cell(f, cs_report_commname(d, s->comm, name, sizeof name));
            if (strcmp(s->kind, "recurring") == 0 && s->period > 0)
                fprintf(f, " | every %lld (phase %lld), %lld–%lld | %s | ", (long long)s->period, (long long)s->phase,
                        (long long)s->first_step, (long long)s->last_step,
                        cs__report_tnum(&cu, s->cost_ns, b1, sizeof b1));
            else if (strcmp(s->kind, "recurring") == 0)
                fprintf(f, " | %s | %s | ", s->steps, cs__report_tnum(&cu, s->cost_ns, b1, sizeof b1));
            else
                fprintf(f, " | %lld–%lld | %s | ", (long long)s->first_step, (long long)s->last_step,
                        cs__report_tnum(&cu, s->cost_ns, b1, sizeof b1));
            cs_report_markdown_cell(f, s->evidence);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
    }
    if (d->layout[0])
        fprintf(f, "Parallel layout: **%s** (%s).\n\n", d->layout, d->layout_source);
    int64_t m1 = 0, m2 = 0;
    for (int i = 0; i < d->nrstats; i++) {
        m1 = d->rstats[i].imposed_wait_ns > m1 ? d->rstats[i].imposed_wait_ns : m1;
        m2 = d->rstats[i].median_lateness_ns > m2 ? d->rstats[i].median_lateness_ns : m2;
    }
    cs_tunit u1 = cs__report_tunit(m1), u2 = cs__report_tunit(m2);
    fprintf(
        f,
        "### Wait states per rank (who made the others wait)\n\n| rank | times last | imposed wait (%s) | median lateness (%s) |\n"
        "|---:|---:|---:|---:|\n",
        u1.name, u2.name);
    for (int i = 0; i < d->nrstats; i++)
        fprintf(f, "| %d | %lld | %s | %s |\n", d->rstats[i].rank, (long long)d->rstats[i].times_last,
                cs__report_tnum(&u1, d->rstats[i].imposed_wait_ns, b1, sizeof b1),
                cs__report_tnum(&u2, d->rstats[i].median_lateness_ns, b2, sizeof b2));
    int64_t tm[3] = { 0 };
    for (int i = 0; i < d->ntails && i < 15; i++) {
        const int64_t v[3] = { d->tails[i].p50_ns, d->tails[i].p99_ns, d->tails[i].max_ns };
        for (int k = 0; k < 3; k++)
            tm[k] = v[k] > tm[k] ? v[k] : tm[k];
    }
    cs_tunit tu[3] = { cs__report_tunit(tm[0]), cs__report_tunit(tm[1]), cs__report_tunit(tm[2]) };
    fprintf(f,
            "\n### Tail latency\n\n| op | size | call site | count | p50 (%s) | p99 (%s) | max (%s) | slowest 1 %% |\n"
            "|---|---:|---|---:|---:|---:|---:|---|\n",
            tu[0].name, tu[1].name, tu[2].name);
    for (int i = 0; i < d->ntails && i < 15; i++) {
        const cs_tail_row *t = &d->tails[i];
        fprintf(f, "| %s | %s | ", cs_report_opname(d, t->op), cs_fmt_bytes(1LL << t->bucket, b4, sizeof b4));
        char site[300];
        cs_report_markdown_cell(f, cs__report_tail_site(d, i, d->ntails < 15 ? d->ntails : 15, site, sizeof site));
        fprintf(f, " | %lld | %s | %s | %s | ", (long long)t->count, cs__report_tnum(&tu[0], t->p50_ns, b1, sizeof b1),
                cs__report_tnum(&tu[1], t->p99_ns, b2, sizeof b2), cs__report_tnum(&tu[2], t->max_ns, b3, sizeof b3));
        cs_report_markdown_cell(f, t->common);
        fprintf(f, " |\n");
    }
    cs_report_markdown_gpu(f, d);
    cs_report_markdown_proposals(f, d);
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
    if (ng) {
        fprintf(f, "\n### Gates\n\n| gate | result | detail |\n|---|---|---|\n");
        for (int i = 0; i < ng; i++) {
            fprintf(f, "| `%s` | %s | ", g[i].name, g[i].failed ? "**FAIL**" : "pass");
            cs_report_markdown_cell(f, g[i].message);
            fprintf(f, " |\n");
        }
    }
}
