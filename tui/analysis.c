/* analysis.c: worst instances and straggler steps of the stored analysis,
 * and running the analysis (see analysis.h). */
#include "config.h"
#include "tui/analysis.h"

#include "analyzer/analysis/csanalysis.h"
#include "analyzer/report/report.h"
#include "common/fmt.h"
#include "common/msg.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tui_analysis_forget_worst(tui_analysis *a)
{
    a->worst_loaded = 0;
    a->iWorst = -1;
}

void tui_analysis_free(tui_analysis *a)
{
    free(a->aWorst);
    free(a->aStep);
    memset(a, 0, sizeof *a);
}

static int need_analysis(tui_model *m, const char *what)
{
    if (m->analysed)
        return 0;
    tui_model_status(m, 1, "%s: not analysed yet; run 'collscope analyze %s' (or press A)", what, m->dir);
    return -1;
}

/* ---- worst instances ---- */

typedef struct spanfind {
    int rank;
    cs_span s;
    int found;
} spanfind;

static int spanfind_cb(const cs_span *s, void *arg)
{
    spanfind *f = arg;
    if (s->rank == f->rank && !f->found) {
        f->s = *s;
        f->found = 1;
    }
    return 0;
}

static void load_worst(tui_analysis *a, const tui_model *m)
{
    cs_instance_iter *it = cs_store_instances_by_skew(m->st, m->f_comm, 0, 0);
    cs_instance x;
    a->nWorst = 0;
    while (it && a->nWorst < 10000 && cs_instance_next(it, &x) == 1) {
        if (x.op < 0 || x.op >= m->nOp || (m->f_op >= 0 && x.op != m->f_op))
            continue;
        if (CS_VEC_RESERVE(a->aWorst, a->capWorst, (size_t)a->nWorst + 1) != 0)
            break;
        a->aWorst[a->nWorst++] = x;
    }
    cs_instance_iter_free(it);
    a->worst_loaded = 1;
    a->iWorst = -1;
}

int tui_analysis_next_worst(tui_analysis *a, tui_model *m, int dir)
{
    if (need_analysis(m, "worst instances"))
        return -1;
    if (!a->worst_loaded)
        load_worst(a, m);
    if (a->nWorst == 0) {
        tui_model_status(m, 1, "no collective instances in the analysis");
        return -1;
    }
    int i = a->iWorst + dir;
    if (i < 0 || i >= a->nWorst) {
        tui_model_status(m, 1, "%s worst instance", dir > 0 ? "no further" : "this is the");
        return -1;
    }
    a->iWorst = i;
    const cs_instance *x = &a->aWorst[i];
    int64_t end = x->last_exit_ns > x->last_entry_ns ? x->last_exit_ns : x->last_entry_ns;
    int64_t w = (end - x->first_entry_ns) * 4 + 1000;
    tui_model_center(m, x->last_entry_ns, w);
    spanfind f = { x->last_rank, { 0 }, 0 };
    cs_tui_instance(m->q, x->comm, x->seq, spanfind_cb, &f);
    if (f.found) {
        int l = tui_model_show_rank(m, f.s.rank, f.s.tid);
        if (l >= 0)
            m->cur_lane = l;
        tui_model_select_span(m, &f.s);
        tui_model_center(m, f.s.begin_ns, w);
    }
    char b1[32];
    tui_model_status(m, 0, "worst #%d of %d: %s seq %lld, arrival skew %s, last rank %d", i + 1, a->nWorst,
                     tui_model_op_name(m, x->op), (long long)x->seq, cs_fmt_ns(x->skew_ns, b1, sizeof b1),
                     x->last_rank);
    return 0;
}

/* ---- straggler steps ---- */

static int step_cb(const cs_step_row *r, void *arg)
{
    tui_analysis *a = arg;
    if (r->slowest_rank < 0)
        return 0;
    if (CS_VEC_RESERVE(a->aStep, a->capStep, (size_t)a->nStep + 1) != 0)
        return -1;
    a->aStep[a->nStep++] = *r;
    return 0;
}

int tui_analysis_next_step(tui_analysis *a, tui_model *m, int dir)
{
    if (need_analysis(m, "straggler steps"))
        return -1;
    if (!a->steps_loaded) {
        a->nStep = 0;
        cs_store_steps_list(m->st, step_cb, a);
        a->steps_loaded = 1;
        a->iStep = -1;
    }
    if (a->nStep == 0) {
        tui_model_status(m, 1, "no straggler steps: no step had a late rank");
        return -1;
    }
    int i = a->iStep + dir;
    if (i < 0 || i >= a->nStep) {
        tui_model_status(m, 1, "%s straggler step", dir > 0 ? "no further" : "this is the first");
        return -1;
    }
    a->iStep = i;
    const cs_step_row *s = &a->aStep[i];
    int64_t w = (s->end_ns - s->begin_ns);
    tui_model_center(m, s->begin_ns + w / 2, w + w / 5 + 1000);
    int l = tui_model_show_rank(m, s->slowest_rank, -1);
    if (l >= 0)
        m->cur_lane = l;
    m->has_sel = 0;
    char b1[32], b2[32];
    cs_tunit u = cs_report_tunit(s->time_ns > s->whatif_ns ? s->time_ns : s->whatif_ns); /* one unit for both */
    tui_model_status(m, 0, "straggler step %lld (%d of %d): rank %d set the step time %s %s (on time: %s %s)",
                     (long long)s->step, i + 1, a->nStep, s->slowest_rank,
                     cs_report_tnum(&u, s->time_ns, b1, sizeof b1), u.name,
                     cs_report_tnum(&u, s->whatif_ns, b2, sizeof b2), u.name);
    return 0;
}

/* ---- running the analysis ---- */

int tui_analyze(tui_model *m, char *err, size_t errlen)
{
    cs_msg_line(stderr, "collscope-tui: analysing %s ...", m->dir);
    return cs_analysis_run(&m->src, 0, stderr, err, errlen);
}
