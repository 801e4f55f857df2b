/* report_answer.c: the report's answer, what limits the job, worked out
 * once from the report's data for every writer: the text and Markdown
 * reports print it first (cs__report_answer in report_text.c), the JSON
 * report writes it as "answer" (report_json.c), so that every format
 * names the same culprit with the same saving.
 *
 *   culprit   the slowdown attribution's slow worker or slow stage; else
 *             the costliest rank straggler verdict when it costs 5 % of
 *             the median step or more (the attribution may see none: an
 *             imported CPU job whose ideal durations are its actual ones)
 *   saving    a straggler's cost per step where the culprit is that
 *             straggler, else the culprit's share of the slowdown times
 *             (actual - ideal) step time
 *   estimates every figure the report has for "what if the culprit were
 *             on time", with what each measures (issue 31: three
 *             sections once gave three answers without a word on why);
 *             where they disagree, one known to count something else on
 *             this trace (Steps on a job whose collectives run on
 *             several threads at once) is set apart, its text says why,
 *             and the others are compared. */
#include "config.h"

#include "analyzer/report/report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cs_layout_row *cs__report_lay(const cs_report_data *d, int rank)
{
    for (int i = 0; i < d->nlay; i++)
        if (d->lay[i].rank == rank)
            return &d->lay[i];
    return NULL;
}

const cs_slowdown_row *cs__report_sd(const cs_report_data *d, const char *kind, const char *name)
{
    for (int i = 0; i < d->nsd; i++)
        if (strcmp(d->sd[i].kind, kind) == 0 && strcmp(d->sd[i].name, name) == 0)
            return &d->sd[i];
    return NULL;
}

static void cs_answer_add(cs_answer *a, const char *source, int64_t ns, const char *what)
{
    if (a->nest < CS_ANSWER_EST_MAX)
        a->est[a->nest++] = (cs_answer_est){ source, what, ns, 0 };
}

/* Whether the estimates not set apart, two or more, lie within 25 % of
 * each other. */
static int cs_answer_agree(const cs_answer *a)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int n = 0;
    for (int i = 0; i < a->nest; i++) {
        if (a->est[i].apart)
            continue;
        n++;
        lo = a->est[i].ns < lo ? a->est[i].ns : lo;
        hi = a->est[i].ns > hi ? a->est[i].ns : hi;
    }
    return n >= 2 && (double)hi <= 1.25 * (double)lo;
}

void cs__report_answer_of(const cs_report_data *d, cs_answer *a)
{
    memset(a, 0, sizeof *a);
    a->rank = -1;
    a->save_ns = -1;
    for (int i = 0; i < d->nstrag; i++)
        if (d->strag[i].rank >= 0 && strcmp(d->strag[i].kind, "slow_link") != 0 &&
            (!a->top || d->strag[i].cost_ns > a->top->cost_ns))
            a->top = &d->strag[i];
    const cs_straggler *top = a->top;
    int worker = d->has_slowdown && strcmp(d->sd_verdict, "slow_worker") == 0;
    a->stage = d->has_slowdown && strcmp(d->sd_verdict, "slow_stage") == 0;
    int64_t step0 = d->step_median_ns > 0 ? d->step_median_ns : d->sd_actual_ns;
    if (worker)
        a->rank = atoi(d->sd_culprit);
    else if (!a->stage && top && (!d->has_slowdown || (step0 > 0 && top->cost_ns * 20 >= step0))) {
        a->rank = top->rank;
        a->by_strag = 1;
    }
    if (a->rank >= 0) {
        const cs_layout_row *l = cs__report_lay(d, a->rank);
        if (l && d->layout[0] && d->lay_pp > 1)
            snprintf(a->who, sizeof a->who, "rank %d (dp %d, pp %d, tp %d; pipeline stage %d)", a->rank, l->dp, l->pp,
                     l->tp, l->pp);
        else if (l && d->layout[0])
            snprintf(a->who, sizeof a->who, "rank %d (dp %d, pp %d, tp %d)", a->rank, l->dp, l->pp, l->tp);
        else
            snprintf(a->who, sizeof a->who, "rank %d", a->rank);
    } else if (a->stage) {
        /* the slowdown's group "pp stage 1" reads "pipeline stage 1" */
        const char *st = strncmp(d->sd_culprit, "pp stage ", 9) == 0 ? d->sd_culprit + 9 : d->sd_culprit;
        snprintf(a->who, sizeof a->who, "pipeline stage %s", st);
    }
    /* the culprit's row of the slowdown attribution, and its share of
     * the gap to ideal durations */
    char key[48];
    if (a->rank >= 0)
        snprintf(key, sizeof key, "rank %d", a->rank);
    else
        snprintf(key, sizeof key, "%s", d->sd_culprit);
    if (a->rank >= 0 || a->stage)
        a->sd = cs__report_sd(d, a->rank >= 0 ? "rank" : "group", key);
    int64_t share_ns = -1;
    if (a->sd && d->sd_actual_ns > d->sd_ideal_ns)
        share_ns = (int64_t)(a->sd->share * (double)(d->sd_actual_ns - d->sd_ideal_ns));
    /* the saving per step */
    a->step_ns = step0;
    if (top && (a->rank < 0 || top->rank == a->rank) && (a->who[0] || !d->has_slowdown)) {
        a->save_ns = top->cost_ns;
        snprintf(a->save_how, sizeof a->save_how, "the %s straggler's cost per step", top->kind);
    } else if (share_ns >= 0) {
        a->save_ns = share_ns;
        snprintf(a->save_how, sizeof a->save_how, "its %.0f %% share of the slowdown", 100 * a->sd->share);
    }
    /* every estimate of the same saving, for a rank */
    if (a->rank < 0)
        return;
    if (top && top->rank == a->rank && top->cost_ns > 0)
        cs_answer_add(a, "stragglers", top->cost_ns,
                      "its lateness against the next slowest rank in its late steps (Stragglers)");
    /* a job whose ranks run their collectives on several threads at once
     * (gloo's workers): Steps adds up the lateness of each collective in
     * flight, one wait counted once per collective */
    int threads = d->has_slowdown && strcmp(d->sd_graph, "threads") == 0, steps = -1;
    if (d->nsteps && d->whatif_median_ns > 0 && d->step_median_ns > d->whatif_median_ns) {
        steps = a->nest;
        cs_answer_add(a, "steps", d->step_median_ns - d->whatif_median_ns,
                      "the median step less each step's last rank's lateness, whichever rank it is (Steps)");
    }
    if (d->has_whatif && d->wf_ontime_ns >= 0 && d->wf_ontime_gain_ns > 0)
        cs_answer_add(a, "whatif", d->wf_ontime_gain_ns,
                      "the job replayed with every straggler on time, every other delay kept (what-if)");
    if (d->has_slowdown && share_ns >= 0 && a->sd->share > 0)
        cs_answer_add(a, "slowdown", share_ns,
                      "its share of the gap to ideal durations, its own jitter removed too (Slowdown)");
    a->agree = cs_answer_agree(a);
    if (!a->agree && threads && steps >= 0 && steps < a->nest) {
        a->est[steps].apart = 1;
        a->est[steps].what = "the median step less each step's last rank's lateness (Steps), set apart: the ranks "
                             "run collectives on several threads at once, each one's lateness counted";
        a->napart = 1;
        a->agree = cs_answer_agree(a);
    }
}
