/* model.c: the trace, the view window, the filters and the selection that
 * every screen of the terminal browser shares (see model.h). */
#include "config.h"
#include "tui/model.h"
#include "tui/groups.h"
#include "analyzer/analysis/csanalysis.h"

#include "common/vec.h"
#include "analyzer/status/failure.h"
#include "libtrace/store_sql.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void tui_model_status(tui_model *m, int warn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->status, sizeof m->status, fmt, ap);
    va_end(ap);
    m->status_warn = warn;
}

int64_t tui_model_parse_time(const tui_model *m, const char *s)
{
    char *end;
    while (*s == ' ')
        s++;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 1e18 || (!isdigit((unsigned char)*s) && *s != '.'))
        return -1;
    while (*end == ' ')
        end++;
    double mul;
    if (!strcmp(end, "%"))
        return v <= 100 ? (int64_t)(((double)m->t_end - (double)m->t_begin) * v / 100.0) : -1;
    if (!strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms") || !*end)
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else
        return -1;
    return v * mul < 9e18 ? (int64_t)(v * mul) : -1;
}

/* ---- opening ---- */

static int comm_member_cb(const cs_comm_member *cm, void *arg)
{
    tui_model *m = arg;
    for (size_t i = 0; i < m->nComm; i++)
        if (m->aComm[i].comm == cm->comm)
            return 0;
    if (CS_VEC_RESERVE(m->aComm, m->capComm, m->nComm + 1) != 0)
        return -1;
    m->aComm[m->nComm++] = (tui_comm_size){ cm->comm, cm->size };
    return 0;
}

int tui_model_comm_size(const tui_model *m, int64_t comm)
{
    for (size_t i = 0; i < m->nComm; i++)
        if (m->aComm[i].comm == comm)
            return (int)m->aComm[i].size;
    return 0;
}

/* ---- groups of alike ranks: the ranks ---- */

/* The ranks of the lanes, each with its first thread lane. */
static int model_ranks(tui_model *m)
{
    size_t cap = 0;
    for (int i = 0; i < m->nLane; i++) {
        const cs_tui_lane *L = &m->aLane[i];
        if (m->nRk && m->aRk[m->nRk - 1].rank == L->rank) {
            if (m->aLane[m->aRk[m->nRk - 1].lane].sidx > 0 && L->sidx == 0)
                m->aRk[m->nRk - 1].lane = i;
            continue;
        }
        if (CS_VEC_RESERVE(m->aRk, cap, (size_t)m->nRk + 1) != 0)
            return -1;
        m->aRk[m->nRk++] = (struct tui_rk){ L->rank, i, 0, 0 };
    }
    return 0;
}

/* The index of rank in aRk, -1 when absent. */
static int model_rk(const tui_model *m, int rank)
{
    int lo = 0, hi = m->nRk - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->aRk[mid].rank == rank)
            return mid;
        if (m->aRk[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Each group's members not shown alone, the first of them, and the one
 * that draws: the median member, else the shown member nearest it. */
static void groups_shown(tui_model *m)
{
    for (int g = 0; g < m->nGrp; g++) {
        struct tui_group *G = &m->aGrp[g];
        G->shown = 0;
        G->first_shown = G->rep_shown = -1;
        int best = INT_MAX;
        for (int j = 0; j < G->n; j++) {
            int k = m->aGrpMem[G->first + j];
            if (m->aRk[k].alone)
                continue;
            G->shown++;
            if (G->first_shown < 0)
                G->first_shown = k;
            int d = abs(k - G->rep);
            if (d < best) {
                best = d;
                G->rep_shown = k;
            }
        }
    }
}

static void index_progress(double frac, void *arg)
{
    (void)arg;
    fprintf(stderr, "\rcollscope-tui: indexing the timeline... %3d%%", (int)(frac * 100));
    fflush(stderr);
}

/* The calls that never returned, and the failures with their first
 * culprits' calls; the end of the trace moves to when the job ended where
 * that is later (the open-ended bars reach it). Nothing when the trace
 * cannot tell (an older trace): the TUI works without. Finding them takes
 * a pass over the spans: they are kept beside a current summary (keep) and
 * read from there while the span count is the same. */
static void model_failures(tui_model *m, int keep)
{
    int64_t end_ns = 0;
    int cur = m->idx.present && !m->idx.stale && !m->job;
    if (cur && cs_tui_failures_load(m->q, m->nSpan, &m->aFly, &m->nFly, &m->aFail, &m->nFail, &end_ns) == 0) {
        if (end_ns > m->t_end)
            m->t_end = end_ns;
        m->iFail = -1;
        return;
    }
    sqlite3 *db = cs_store_sql_db(m->st);
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, thread, begin_ns FROM spans WHERE id IN "
                           "(SELECT id FROM span WHERE (flags & 512) != 0)",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW && CS_VEC_RESERVE(m->aFly, cap, (size_t)m->nFly + 1) == 0)
            m->aFly[m->nFly++] =
                (cs_tui_fly){ sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2) };
    }
    sqlite3_finalize(s);
    cs_failure_model fm;
    cs_failure_list fl = { 0 };
    char err[512];
    if (cs_failure_from_store(m->st, &fm, err, sizeof err) == 0) {
        cs_failure_diagnose(&fm, CS_FAILURE_POST_AFTER_S, &fl);
        if (fl.n && fm.now > m->t_end)
            m->t_end = end_ns = fm.now;
        cap = 0;
        for (size_t i = 0; i < fl.n; i++) {
            const cs_failure *x = &fl.v[i];
            const cs_failure_rank *r = NULL;
            for (size_t k = 0; x->nculprits && k < fm.n; k++)
                if (fm.r[k].rank == x->culprits[0])
                    r = &fm.r[k];
            if (!r || (!r->has_fly && !r->has_last) || CS_VEC_RESERVE(m->aFail, cap, (size_t)m->nFail + 1) != 0)
                continue;
            cs_tui_fail *f = &m->aFail[m->nFail++];
            f->rank = r->rank;
            f->t_ns = r->has_fly ? r->fly.t0 : r->last.t0;
            snprintf(f->kind, sizeof f->kind, "%s", x->kind);
            snprintf(f->text, sizeof f->text, "%s", x->text);
        }
    }
    m->iFail = -1;
    cs_failure_list_free(&fl);
    cs_failure_model_free(&fm);
    if (cur && keep) {
        char e2[512];
        cs_tui_failures_save(m->path, m->nSpan, m->aFly, m->nFly, m->aFail, m->nFail, end_ns, e2, sizeof e2);
    }
}

int tui_model_next_failure(tui_model *m, int dir)
{
    if (m->nFail == 0) {
        tui_model_status(m, 0, "no failure: no call in flight at the end, no process died");
        return -1;
    }
    int i = m->iFail + dir;
    if (i < 0)
        i = m->nFail - 1;
    if (i >= m->nFail)
        i = 0;
    m->iFail = i;
    const cs_tui_fail *f = &m->aFail[i];
    /* the culprit's call and what follows it to the end of the trace */
    int64_t w = (m->t_end - f->t_ns) * 3 / 2 + 1000;
    tui_model_center(m, f->t_ns + w / 3, w);
    tui_model_filter(m, "clear");
    int l = tui_model_show_rank(m, f->rank, -1);
    if (l >= 0)
        m->cur_lane = l;
    m->has_sel = 0;
    m->cur_col = m->ncols > 0 ? (int)((double)(f->t_ns - m->t0) / ((double)(m->t1 - m->t0) / m->ncols)) : 0;
    if (m->cur_col < 0 || m->cur_col >= m->ncols)
        m->cur_col = 0;
    tui_model_status(m, 1, "failure %d of %d: rank %d: %s: %s", i + 1, m->nFail, f->rank, f->kind, f->text);
    return 0;
}

int tui_model_open(tui_model *m, const cs_source *src, int build_index, int quiet, char *err, size_t errlen)
{
    struct stat sb;
    memset(m, 0, sizeof *m);
    m->src = *src;
    const char *arg = src->arg;
    m->f_op = -1;
    m->f_rank = -1;
    m->lod_level = -1;
    m->jump_rk = -1;
    if (src->is_dir) {
        snprintf(m->dir, sizeof m->dir, "%s", arg);
        snprintf(m->path, sizeof m->path, "%s/trace.db", arg);
    } else {
        snprintf(m->path, sizeof m->path, "%s", arg);
        snprintf(m->dir, sizeof m->dir, "%s", arg);
        char *sl = strrchr(m->dir, '/');
        if (sl)
            *sl = '\0';
        else
            snprintf(m->dir, sizeof m->dir, ".");
    }
    if (src->kind == CS_SOURCE_JOB) {
        m->job = 1;
        if (!(m->st = cs_analysis_open_trace(src, CS_STORE_READ, err, errlen)))
            return -1;
        snprintf(m->path, sizeof m->path, "%s", cs_store_file(m->st));
        /* never shown as if whole: said on the status line, and again
         * at exit (tui.c) */
        char from[8];
        if (!cs_store_recovered(m->st, from, sizeof from, m->left_out, sizeof m->left_out))
            m->left_out[0] = '\0';
    } else if (stat(m->path, &sb) != 0) {
        snprintf(err, errlen, "%s: no trace there (%s)", m->path,
                 src->is_dir ? "no trace.db in the directory; run collscope run -o DIR first"
                             : "no such file or directory");
        return -1;
    } else if (cs_store_open(m->path, CS_STORE_READ, &m->st, err, errlen) != 0)
        return -1;
    if (cs_store_procs(m->st, &m->aProc, &m->nProc) != 0 || cs_store_ops(m->st, &m->aOp, &m->nOp) != 0 ||
        cs_store_comm_members(m->st, comm_member_cb, m) != 0) {
        snprintf(err, errlen, "%s: corrupt trace (cannot read its processes)", m->path);
        return -1;
    }
    /* Without the names (a damaged comms table), ids show as comm:HEX. */
    cs_store_comms_load(m->st, &m->comms);
    for (int i = 0; i < m->nProc; i++)
        m->nSpan += m->aProc[i].spans;
    m->aOpKind = calloc((size_t)m->nOp + 1, 1);
    m->aOpAll = calloc((size_t)m->nOp + 1, 1);
    if (!m->aOpKind || !m->aOpAll) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < m->nOp; i++) {
        m->aOpKind[i] = (unsigned char)cs_tui_kind_of(m->aOp[i].kind);
        m->aOpAll[i] = (unsigned char)cs_tui_kind_all_to_all(m->aOp[i].kind);
    }
    if (cs_tui_open(m->path, &m->q, err, errlen) != 0)
        return -1;
    cs_tui_index_info_get(m->q, m->nSpan, &m->idx);
    /* a summary of many ranks built before it kept the instances */
    if (m->idx.present && !m->idx.stale && m->nProc >= CS_TUI_INST_RANKS && !cs_tui_has_table(m->q, "waits") &&
        !cs_tui_has_table(m->q, "tui_inst"))
        m->idx.stale = 1;
    /* What a reader may assume of the spans (one pass over them): checked
     * before the summary is built, and not again while it is current. */
    if ((!m->idx.present || m->idx.stale) && !m->job && cs_store_analysis_check_input(m->st, err, errlen) != 0)
        return -1;
    if ((!m->idx.present || m->idx.stale) && build_index && m->nSpan > 0) {
        char e2[512] = "";
        cs_tui_index_info info;
        int big = m->nSpan > 200000 && !quiet;
        if (cs_tui_index_build(m->path, big ? index_progress : NULL, NULL, &info, e2, sizeof e2) == 0) {
            if (big)
                fprintf(stderr, "\rcollscope-tui: indexed %lld spans in %.1f s\n", (long long)m->nSpan, info.build_s);
            cs_tui_index_reload(m->q);
            cs_tui_index_info_get(m->q, m->nSpan, &m->idx);
        } else {
            if (big)
                fputc('\n', stderr);
            tui_model_status(m, 1, "no timeline index (%s): zoomed-out views are slow", e2);
        }
    }
    if (cs_tui_lanes(m->q, &m->aLane, &m->nLane) != 0) {
        snprintf(err, errlen, "%s: corrupt trace (cannot read its spans)", m->path);
        return -1;
    }
    if (m->nLane == 0) {
        snprintf(err, errlen, "%s: the trace holds no spans (did the job call MPI?)", m->path);
        return -1;
    }
    m->t_begin = INT64_MAX;
    m->t_end = INT64_MIN;
    for (int i = 0; i < m->nLane; i++) {
        if (m->aLane[i].first_ns < m->t_begin)
            m->t_begin = m->aLane[i].first_ns;
        if (m->aLane[i].last_ns > m->t_end)
            m->t_end = m->aLane[i].last_ns;
        if (m->aLane[i].sidx > 0)
            m->has_streams = 1;
        else if (i && m->aLane[i].rank == m->aLane[i - 1].rank && m->aLane[i - 1].sidx == 0)
            m->multi_tid = 1;
    }
    if (m->t_end <= m->t_begin)
        m->t_end = m->t_begin + 1000;
    model_failures(m, build_index);
    m->aVis = calloc((size_t)m->nLane, sizeof *m->aVis);
    m->aVisGrp = calloc((size_t)m->nLane, sizeof *m->aVisGrp);
    if (!m->aVis || !m->aVisGrp || model_ranks(m) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int ex = cs_store_analysis_exists(m->st);
    if (ex == 1) {
        char v[64];
        m->analysed = 1;
        if (cs_store_meta_get(m->st, "analysis_spans", v, sizeof v) == 0 && strtoll(v, NULL, 10) == m->nSpan)
            m->analysed = 2;
    }
    int nranks = m->nRk;
    if (m->left_out[0])
        tui_model_status(m, 1, "%s: %s (named again at exit)", m->dir, m->left_out);
    else if (m->nFail > 0)
        tui_model_status(m, 1, "the job failed (%d finding%s, the first: %s): F jumps to its first culprit", m->nFail,
                         m->nFail > 1 ? "s" : "", m->aFail[0].kind);
    if (!m->status[0]) {
        if (nranks == 1)
            tui_model_status(m, 1, "single-rank trace: no cross-rank waits or stragglers to find");
        else if (!m->analysed)
            tui_model_status(m, 0,
                             "not analysed: worst instances, straggler steps and lateness need "
                             "'collscope analyze %s'",
                             m->dir);
        else if (m->analysed == 1)
            tui_model_status(m, 1, "the stored analysis is stale: run 'collscope analyze %s'", m->dir);
        else
            tui_model_status(m, 0, "%d ranks, %lld spans. Press ? for help.", nranks, (long long)m->nSpan);
    }
    tui_model_filters_apply(m);
    m->t0 = m->t_begin;
    m->t1 = m->t_end + (m->t_end - m->t_begin) / 50 + 1;
    return 0;
}

int tui_model_reopen(tui_model *m, char *err, size_t errlen)
{
    cs_source src = m->src;
    int64_t t0 = m->t0, t1 = m->t1;
    int ncols = m->ncols, cur_col = m->cur_col, cur_lane = m->cur_lane, colour = m->colour, utf8 = m->utf8;
    int group_mode = m->group_mode;
    tui_model_close(m);
    if (tui_model_open(m, &src, 1, 0, err, errlen) != 0) {
        tui_model_close(m);
        return -1;
    }
    m->t0 = t0;
    m->t1 = t1;
    m->ncols = ncols;
    m->cur_col = cur_col;
    m->cur_lane = cur_lane < m->nVis ? cur_lane : 0;
    m->colour = colour;
    m->utf8 = utf8;
    m->group_mode = group_mode;
    return 0;
}

void tui_model_close(tui_model *m)
{
    free(m->aFly);
    free(m->aFail);
    free(m->aVis);
    free(m->aVisGrp);
    free(m->aRk);
    free(m->aGrp);
    free(m->aGrpMem);
    free(m->aLane);
    free(m->aProc);
    free(m->aOp);
    free(m->aOpKind);
    free(m->aOpAll);
    free(m->aComm);
    cs_store_comms_free(&m->comms);
    cs_tui_close(m->q);
    cs_store_close(m->st);
    memset(m, 0, sizeof *m);
}

/* ---- filters ---- */

void tui_model_filters_apply(tui_model *m)
{
    m->nVis = 0;
    int grouping = m->grouped && m->nGrp > 0 && m->f_rank < 0;
    if (grouping)
        groups_shown(m);
    for (int i = 0, k = 0; i < m->nLane; i++) {
        const cs_tui_lane *L = &m->aLane[i];
        if (m->f_rank >= 0 && L->rank != m->f_rank)
            continue;
        if (grouping) {
            while (k + 1 < m->nRk && m->aRk[k].rank < L->rank)
                k++;
            const struct tui_rk *r = &m->aRk[k];
            const struct tui_group *g = &m->aGrp[r->group];
            if (r->rank == L->rank && !r->alone && !g->expanded && g->shown > 1) {
                /* the group's lane, where its first member shown in it is */
                if (k == g->first_shown && i == r->lane) {
                    m->aVisGrp[m->nVis] = r->group;
                    m->aVis[m->nVis++] = m->aRk[g->rep_shown].lane;
                }
                continue;
            }
        }
        m->aVisGrp[m->nVis] = -1;
        m->aVis[m->nVis++] = i;
    }
    if (m->cur_lane >= m->nVis)
        m->cur_lane = m->nVis ? m->nVis - 1 : 0;
    if (m->lane_top > m->cur_lane)
        m->lane_top = m->cur_lane;
}

int tui_model_filter(tui_model *m, const char *line)
{
    char what[32] = "", arg[128] = "";
    if (sscanf(line, " %31s %127s", what, arg) < 1) {
        tui_model_status(m, 1, "filter: type 'op NAME', 'rank N', 'comm NAME|ID' or 'clear'");
        return -1;
    }
    if (!strcmp(what, "clear")) {
        m->f_op = -1;
        m->f_rank = -1;
        m->f_comm = 0;
        tui_model_status(m, 0, "filters cleared");
    } else if (!strcmp(what, "op") && arg[0]) {
        int found = -1;
        for (int i = 0; i < m->nOp && found < 0; i++)
            if (!strcasecmp(m->aOp[i].name, arg) ||
                (!strncasecmp(m->aOp[i].name, "MPI_", 4) && !strcasecmp(m->aOp[i].name + 4, arg)))
                found = i;
        for (int i = 0; i < m->nOp && found < 0; i++)
            if (m->aOp[i].name[0] && strcasestr(m->aOp[i].name, arg))
                found = i;
        if (found < 0) {
            tui_model_status(m, 1, "filter: no op named '%s'", arg);
            return -1;
        }
        m->f_op = found;
        tui_model_status(m, 0, "filter: only %s", m->aOp[found].name);
    } else if (!strcmp(what, "rank") && arg[0]) {
        char *end;
        long r = strtol(arg, &end, 10);
        if (*end || r < 0 || r > INT_MAX || !tui_model_has_rank(m, (int)r)) {
            tui_model_status(m, 1, "filter: no rank '%s' in this trace", arg);
            return -1;
        }
        m->f_rank = (int)r;
        tui_model_status(m, 0, "filter: only rank %ld", r);
    } else if (!strcmp(what, "comm") && arg[0]) {
        char *end, name[CS_COMMS_DISPLAY_MAX];
        long long c = strtoll(arg, &end, 0);
        if (*end || c == 0) {
            /* a communicator's display name, as the screens show it */
            c = 0;
            for (size_t i = 0; i < m->comms.n && !c; i++)
                if (strcmp(m->comms.a[i].display, arg) == 0)
                    c = m->comms.a[i].id;
        }
        if (c == 0) {
            tui_model_status(m, 1, "filter: '%s' is not a communicator id or name", arg);
            return -1;
        }
        m->f_comm = c;
        tui_model_status(m, 0, "filter: only communicator %s", cs_store_comms_name(&m->comms, c, name, sizeof name));
    } else {
        tui_model_status(m, 1, "filter: type 'op NAME', 'rank N', 'comm NAME|ID' or 'clear'");
        return -1;
    }
    tui_model_filters_apply(m);
    return 0;
}

/* ---- lanes ---- */

int tui_model_lane_of(const tui_model *m, int rank, int tid)
{
    for (int i = 0; i < m->nVis; i++)
        if (m->aVisGrp[i] < 0 && m->aLane[m->aVis[i]].rank == rank && m->aLane[m->aVis[i]].sidx == 0 &&
            (tid < 0 || m->aLane[m->aVis[i]].tid == tid))
            return i;
    return -1;
}

int tui_model_has_rank(const tui_model *m, int rank)
{
    return model_rk(m, rank) >= 0;
}

/* ---- groups of alike ranks ---- */

typedef struct groups_fig {
    tui_model *m;
    double *fig; /* nf x nRk */
    int n;
} groups_fig;

static int groups_stat_cb(const cs_rank_stat *s, void *arg)
{
    groups_fig *x = arg;
    int k = model_rk(x->m, s->rank);
    if (k >= 0) {
        x->fig[k] = (double)s->imposed_wait_ns;
        x->fig[x->n + k] = (double)s->median_lateness_ns;
    }
    return 0;
}

static int groups_busy_cb(int lane, int64_t busy, void *arg)
{
    groups_fig *x = arg;
    tui_model *m = x->m;
    if (lane < 0 || lane >= m->nLane)
        return 0;
    const cs_tui_lane *L = &m->aLane[lane];
    int k = model_rk(m, L->rank);
    if (k >= 0 && m->aRk[k].lane == lane && L->last_ns > L->first_ns)
        x->fig[k] = (double)busy / (double)(L->last_ns - L->first_ns);
    return 0;
}

static int groups_rank_busy_cb(int rank, int64_t busy, int64_t wall, int64_t spans, void *arg)
{
    groups_fig *x = arg;
    (void)spans;
    int k = model_rk(x->m, rank);
    if (k >= 0 && wall > 0)
        x->fig[k] = (double)busy / (double)wall;
    return 0;
}

/* Group the ranks for `rows` rows: by the analysis's imposed wait and
 * median lateness per rank when analysed, else by each rank's share of
 * time in calls (from the summary, else from the spans). 0 or -1. */
static int model_groups_make(tui_model *m, int rows)
{
    int n = m->nRk, ret = -1;
    double *fig = calloc((size_t)n * 2 + 1, sizeof *fig);
    int *grp = malloc(sizeof *grp * (size_t)(n + 1)), *rep = malloc(sizeof *rep * (size_t)(n + 1));
    unsigned char *alone = malloc((size_t)n + 1);
    if (!fig || !grp || !rep || !alone)
        goto done;
    groups_fig x = { m, fig, n };
    int nf;
    /* what counts as alike: imposed waits within 0.5 % of all the ranks'
     * time, median lateness within 0.5 % of the trace's, time in calls
     * within 2 % */
    double floors[2], wall = (double)(m->t_end - m->t_begin);
    if (m->analysed && cs_store_rank_stats(m->st, groups_stat_cb, &x) == 0) {
        nf = 2;
        floors[0] = 0.005 * wall * n;
        floors[1] = 0.005 * wall;
        m->group_by = 1;
    } else {
        nf = 1;
        floors[0] = 0.02;
        m->group_by = 0;
        if (cs_tui_lane_busy(m->q, groups_busy_cb, &x) != 0 && cs_store_rank_busy(m->st, groups_rank_busy_cb, &x) != 0)
            goto done;
    }
    int ng = tui_groups_make(fig, floors, nf, n, rows, grp, rep, alone);
    if (ng <= 0)
        goto done;
    /* the rows name groups that go: the cursor's is only its lane now */
    for (int i = 0; i < m->nVis; i++)
        m->aVisGrp[i] = -1;
    free(m->aGrp);
    free(m->aGrpMem);
    m->aGrp = calloc((size_t)ng, sizeof *m->aGrp);
    m->aGrpMem = malloc(sizeof *m->aGrpMem * (size_t)n);
    m->nGrp = 0;
    if (!m->aGrp || !m->aGrpMem)
        goto done;
    for (int k = 0; k < n; k++)
        m->aGrp[grp[k]].n++;
    for (int g = 0, at = 0; g < ng; g++) {
        m->aGrp[g].first = at;
        at += m->aGrp[g].n;
        m->aGrp[g].n = 0;
        m->aGrp[g].rep = rep[g];
        m->aGrp[g].stands_out = alone[g];
    }
    for (int k = 0; k < n; k++) {
        struct tui_group *G = &m->aGrp[grp[k]];
        m->aGrpMem[G->first + G->n++] = k;
        m->aRk[k].group = grp[k];
    }
    m->nGrp = ng;
    ret = 0;
done:
    free(fig);
    free(grp);
    free(rep);
    free(alone);
    return ret;
}

/* Rebuild the rows, keeping the cursor on its group's lane (same_groups:
 * the groups are those the rows were made of), else on its lane, else on
 * the lane of the group that now holds its rank. */
static void model_rows_rebuild(tui_model *m, int same_groups)
{
    int lane = -1, grp = -1, lead = -1, off = m->cur_lane - m->lane_top;
    if (m->nVis > 0 && m->cur_lane >= 0 && m->cur_lane < m->nVis) {
        lane = m->aVis[m->cur_lane];
        grp = m->aVisGrp[m->cur_lane];
        /* a group's lane that goes: its first member's lane */
        if (grp >= 0 && grp < m->nGrp && m->aGrp[grp].first_shown >= 0)
            lead = m->aRk[m->aGrp[grp].first_shown].lane;
        if (!same_groups)
            grp = -1;
    }
    tui_model_filters_apply(m);
    if (lane < 0)
        return;
    int found = -1;
    for (int i = 0; i < m->nVis && found < 0 && grp >= 0; i++)
        if (m->aVisGrp[i] == grp)
            found = i;
    for (int i = 0; i < m->nVis && found < 0 && lead >= 0; i++)
        if (m->aVisGrp[i] < 0 && m->aVis[i] == lead)
            found = i;
    for (int i = 0; i < m->nVis && found < 0; i++)
        if (m->aVisGrp[i] < 0 && m->aVis[i] == lane)
            found = i;
    int k = model_rk(m, m->aLane[lane].rank);
    for (int i = 0; i < m->nVis && found < 0 && k >= 0 && m->grouped; i++)
        if (m->aVisGrp[i] == m->aRk[k].group)
            found = i;
    if (found >= 0) {
        m->cur_lane = found;
        m->lane_top = found - off > 0 ? found - off : 0;
    }
}

void tui_model_group_fit(tui_model *m, int rows)
{
    if (rows < 2)
        rows = 2;
    int want = m->group_mode == 1 || (m->group_mode == 0 && m->nRk > rows);
    if (want && m->group_rows >= 0 && (m->group_rows == 0 || (rows < m->group_rows && m->nGrp > rows))) {
        if (model_groups_make(m, rows) != 0) {
            m->group_rows = -1;
            m->nGrp = 0;
            tui_model_status(m, 1, "cannot group the ranks (out of memory, or the trace cannot be read)");
        } else {
            m->group_rows = rows;
            m->grouped = 1;
            model_rows_rebuild(m, 0);
            return;
        }
    }
    want = want && m->nGrp > 0;
    if (want != m->grouped) {
        m->grouped = want;
        model_rows_rebuild(m, 0);
    }
}

int tui_model_group_toggle(tui_model *m, int rows)
{
    m->group_mode = m->grouped ? 2 : 1;
    tui_model_group_fit(m, rows);
    if (m->grouped) {
        int lanes = 0;
        for (int i = 0; i < m->nVis; i++)
            lanes += m->aVisGrp[i] >= 0;
        tui_model_status(m, 0, "alike ranks grouped (by %s): %d group lanes, %d ranks; Enter expands one; c: ungroup",
                         m->group_by ? "imposed wait and lateness" : "share of time in calls", lanes, m->nRk);
    } else if (m->group_rows >= 0) {
        tui_model_status(m, 0, "one lane per rank; c groups alike ranks");
    }
    return m->grouped;
}

int tui_model_row_group(const tui_model *m, int vi)
{
    return vi >= 0 && vi < m->nVis ? m->aVisGrp[vi] : -1;
}

int tui_model_group_expand(tui_model *m, int vi)
{
    if (vi < 0 || vi >= m->nVis)
        return -1;
    int g = m->aVisGrp[vi];
    if (g >= 0) {
        struct tui_group *G = &m->aGrp[g];
        int first = G->first_shown, n = G->shown;
        G->expanded = 1;
        model_rows_rebuild(m, 1);
        int l = first >= 0 ? tui_model_lane_of(m, m->aRk[first].rank, -1) : -1;
        if (l >= 0)
            m->cur_lane = l;
        tui_model_status(m, 0, "group of %d ranks expanded, a lane each; e on one of them groups them again", n);
        return 0;
    }
    const cs_tui_lane *L = &m->aLane[m->aVis[vi]];
    int k = model_rk(m, L->rank);
    if (!m->grouped || k < 0) {
        tui_model_status(m, 1, "no groups shown: c groups alike ranks");
        return -1;
    }
    struct tui_group *G = &m->aGrp[m->aRk[k].group];
    if (G->n < 2) {
        tui_model_status(m, 0, "rank %d has a lane of its own: it %s", L->rank,
                         G->stands_out ? "stands out from the others" : "is like no other rank");
        return -1;
    }
    int was = m->aRk[k].alone;
    for (int j = 0; j < G->n && G->expanded; j++)
        m->aRk[m->aGrpMem[G->first + j]].alone = 0;
    m->aRk[k].alone = 0;
    G->expanded = 0;
    model_rows_rebuild(m, 0);
    tui_model_status(m, 0, was ? "rank %d back in its group's lane" : "ranks grouped again (rank %d's group)", L->rank);
    return 0;
}

void tui_model_group_label(const tui_model *m, int g, char *buf, size_t len)
{
    const struct tui_group *G = &m->aGrp[g];
    char tail[32], list[1024];
    snprintf(tail, sizeof tail, " (%d)", G->shown);
    /* "ranks " + list + tail + NUL in len */
    size_t room = len > strlen(tail) + 11 ? len - strlen(tail) - 7 : 4;
    if (room >= sizeof list)
        room = sizeof list - 1;
    size_t n = 0;
    int cut = 0;
    for (int j = 0; j < G->n && !cut; j++) {
        int k = m->aGrpMem[G->first + j];
        if (m->aRk[k].alone)
            continue;
        int a = m->aRk[k].rank, b = a;
        while (j + 1 < G->n && !m->aRk[m->aGrpMem[G->first + j + 1]].alone &&
               m->aRk[m->aGrpMem[G->first + j + 1]].rank == b + 1) {
            j++;
            b++;
        }
        char r[40];
        int w = a == b ? snprintf(r, sizeof r, "%s%d", n ? "," : "", a)
                       : snprintf(r, sizeof r, "%s%d-%d", n ? "," : "", a, b);
        int more = 0; /* a member shown after this range: room for ",..." */
        for (int j2 = j + 1; j2 < G->n && !more; j2++)
            more = !m->aRk[m->aGrpMem[G->first + j2]].alone;
        if (n + (size_t)w + (more ? 4 : 0) > room) {
            snprintf(list + n, sizeof list - n, "%s", n ? ",..." : "...");
            cut = 1;
        } else {
            memcpy(list + n, r, (size_t)w + 1);
            n += (size_t)w;
        }
    }
    snprintf(buf, len, "ranks %s%s", list, tail);
}

void tui_model_group_status(tui_model *m, int vi)
{
    int g = tui_model_row_group(m, vi);
    if (g < 0)
        return;
    char lbl[300];
    tui_model_group_label(m, g, lbl, sizeof lbl);
    const struct tui_group *G = &m->aGrp[g];
    tui_model_status(m, 0, "group of %d alike ranks (%s), drawn: rank %d, their median; Enter expands: %s", G->shown,
                     m->group_by ? "imposed wait, lateness" : "share of time in calls",
                     G->rep_shown >= 0 ? m->aRk[G->rep_shown].rank : -1, lbl);
}

int tui_model_show_rank(tui_model *m, int rank, int tid)
{
    int l = tui_model_lane_of(m, rank, tid);
    int k = model_rk(m, rank);
    if (l >= 0 || k < 0 || !m->grouped || m->f_rank >= 0)
        return l;
    /* one rank out of its group for the jumps: the one jumped to */
    if (m->jump_rk >= 0 && m->jump_rk < m->nRk && m->jump_rk != k)
        m->aRk[m->jump_rk].alone = 0;
    m->aRk[k].alone = 1;
    m->jump_rk = k;
    model_rows_rebuild(m, 1);
    return tui_model_lane_of(m, rank, tid);
}

int tui_model_stream_index(const tui_model *m, int rank, int64_t stream)
{
    for (int i = 0; i < m->nLane; i++)
        if (m->aLane[i].rank == rank && m->aLane[i].sidx > 0 && m->aLane[i].stream == stream)
            return m->aLane[i].sidx;
    return 0;
}

int tui_model_kind(const tui_model *m, int op)
{
    return op < 0 ? CS_TK_GPU : op < m->nOp ? m->aOpKind[op] : CS_TK_OTHER;
}

int tui_model_lane_window(const tui_model *m, const cs_tui_lane *L, int64_t t0, int64_t t1,
                          int (*cb)(const cs_span *, void *), void *arg)
{
    if (L->sidx > 0)
        return cs_tui_stream_window(m->q, L->rank, L->stream, L->max_dur_ns, t0, t1, cb, arg);
    return cs_tui_window(m->q, L->rank, L->tid, L->max_dur_ns, t0, t1, cb, arg);
}

static int instq_cb(const cs_span *s, void *arg)
{
    tui_instq *q = arg;
    if (s->begin_ns > q->last) {
        q->last = s->begin_ns;
        q->last_rank = s->rank;
    }
    if (s->begin_ns < q->first)
        q->first = s->begin_ns;
    q->n++;
    return 0;
}

int tui_model_instance(const tui_model *m, int64_t comm, int64_t seq, tui_instq *q)
{
    *q = (tui_instq){ INT64_MIN, INT64_MAX, 0, -1 };
    /* a current analysis (or, without one, the summary) has it in one
     * look-up, not one span per member */
    if ((m->analysed == 2 || (!m->analysed && m->idx.present && !m->idx.stale)) &&
        cs_tui_instance_ends(m->q, comm, seq, &q->first, &q->last, &q->n, &q->last_rank) == 0)
        return 0;
    return cs_tui_instance(m->q, comm, seq, instq_cb, q);
}

/* ---- the view ---- */

int64_t tui_model_cursor_time(const tui_model *m)
{
    int n = m->ncols > 0 ? m->ncols : 1;
    double col = (double)(m->t1 - m->t0) / n;
    return m->t0 + (int64_t)(col * (m->cur_col + 0.5));
}

void tui_model_set_width(tui_model *m, int ncols)
{
    if (ncols < 1)
        ncols = 1;
    if (m->ncols == ncols)
        return;
    int64_t tc = m->ncols > 0 ? tui_model_cursor_time(m) : m->t0;
    m->ncols = ncols;
    double col = ((double)m->t1 - (double)m->t0) / ncols;
    double x = ((double)tc - (double)m->t0) / col;
    m->cur_col = !(x >= 0) ? 0 : x >= ncols ? ncols - 1 : (int)x;
}

int tui_model_scroll(tui_model *m, int rows)
{
    if (rows < 0)
        rows = 0;
    if (m->cur_lane < m->lane_top)
        m->lane_top = m->cur_lane;
    if (rows > 0 && m->cur_lane >= m->lane_top + rows)
        m->lane_top = m->cur_lane - rows + 1;
    if (m->lane_top + rows > m->nVis)
        m->lane_top = m->nVis - rows > 0 ? m->nVis - rows : 0;
    return m->nVis - m->lane_top < rows ? m->nVis - m->lane_top : rows;
}

static void clamp_view(tui_model *m)
{
    int64_t w = m->t1 - m->t0;
    int64_t span = m->t_end - m->t_begin;
    int64_t minw = m->ncols > 0 ? m->ncols : 80; /* 1 ns a column */
    int64_t maxw = span + span / 2 + 1000;
    if (w < minw)
        w = minw;
    if (w > maxw)
        w = maxw;
    if (m->t0 < m->t_begin - span / 4)
        m->t0 = m->t_begin - span / 4;
    if (m->t0 > m->t_end - w / 8)
        m->t0 = m->t_end - w / 8;
    m->t1 = m->t0 + w;
}

void tui_model_zoom(tui_model *m, double factor)
{
    int64_t tc = tui_model_cursor_time(m);
    double frac = m->ncols > 0 ? (m->cur_col + 0.5) / m->ncols : 0.5;
    int64_t w = (int64_t)((double)(m->t1 - m->t0) * factor);
    if (w < 1)
        w = 1;
    m->t0 = tc - (int64_t)(frac * (double)w);
    m->t1 = m->t0 + w;
    clamp_view(m);
}

void tui_model_pan(tui_model *m, int64_t dt)
{
    m->t0 += dt;
    m->t1 += dt;
    clamp_view(m);
}

void tui_model_center(tui_model *m, int64_t tc, int64_t width)
{
    if (width > 0) {
        m->t0 = tc - width / 2;
        m->t1 = m->t0 + width;
    } else {
        int64_t w = m->t1 - m->t0;
        m->t0 = tc - w / 2;
        m->t1 = m->t0 + w;
    }
    clamp_view(m);
    int n = m->ncols > 0 ? m->ncols : 1;
    double col = ((double)m->t1 - (double)m->t0) / n;
    double x = ((double)tc - (double)m->t0) / col;
    m->cur_col = !(x >= 0) ? 0 : x >= n ? n - 1 : (int)x;
}

/* ---- the selection ---- */

const char *tui_model_op_name(const tui_model *m, int op)
{
    return op >= 0 && op < m->nOp && m->aOp[op].name[0] ? m->aOp[op].name : "?";
}

static int frame_cb(const cs_tui_frame *f, void *arg)
{
    tui_model *m = arg;
    if (m->sel_nframes >= 12)
        return 1;
    char *o = m->sel_frames[m->sel_nframes++];
    const char *file = f->file ? strrchr(f->file, '/') : NULL;
    file = file ? file + 1 : f->file;
    if (f->func && file && f->line > 0)
        snprintf(o, 160, "#%d %s  %s:%d", f->level, f->func, file, f->line);
    else if (f->func)
        snprintf(o, 160, "#%d %s", f->level, f->func);
    else if (f->module) {
        const char *mod = strrchr(f->module, '/');
        snprintf(o, 160, "#%d %s+0x%llx", f->level, mod ? mod + 1 : f->module, (unsigned long long)f->pc);
    } else
        snprintf(o, 160, "#%d 0x%llx", f->level, (unsigned long long)f->pc);
    return 0;
}

int tui_model_select_span(tui_model *m, const cs_span *s)
{
    m->has_sel = 1;
    m->sel = *s;
    m->sel_last_rank = -1;
    m->sel_members = 0;
    m->sel_wait = -1;
    m->sel_skew = -1;
    m->sel_nframes = 0;
    m->sel_site[0] = '\0';
    if (s->seq >= 0 && s->comm) {
        cs_instance in;
        cs_wait *w = NULL;
        int nw = 0;
        if (m->analysed && cs_store_instance_of_span(m->st, s->id, &in, &w, &nw) == 0) {
            m->sel_last_rank = in.last_rank;
            m->sel_members = in.nranks;
            m->sel_skew = in.skew_ns;
            m->sel_last_begin = in.last_entry_ns;
            for (int i = 0; i < nw; i++)
                if (w[i].span == s->id)
                    m->sel_wait = w[i].wait_ns;
            free(w);
        } else {
            tui_instq q;
            if (tui_model_instance(m, s->comm, s->seq, &q) == 0 && q.n > 0) {
                m->sel_last_rank = q.last_rank;
                m->sel_members = q.n;
                m->sel_skew = q.last - q.first;
                m->sel_last_begin = q.last;
                int64_t w2 = q.last - s->begin_ns;
                m->sel_wait = w2 < 0 ? 0 : w2;
            }
        }
    }
    if (s->callsite) {
        cs_store_callsite_label(m->st, s->rank, s->callsite, m->sel_site, sizeof m->sel_site);
        cs_tui_frames(m->q, s->rank, s->callsite, frame_cb, m);
    }
    return 0;
}

/* The span nearest the cursor among the first `limit` spans of a window
 * that pass the filters; kernels (id 0) are not selectable. */
typedef struct nearest {
    const tui_model *m;
    int64_t tc, colns;
    int n, limit;
    int64_t best_id, best_d;
} nearest;

static int nearest_cb(const cs_span *s, void *arg)
{
    nearest *c = arg;
    const tui_model *m = c->m;
    if (m->f_op >= 0 && s->op != m->f_op)
        return 0;
    if (m->f_comm && s->comm != m->f_comm)
        return 0;
    if (c->n >= c->limit)
        return 1;
    c->n++;
    if (!s->id)
        return 0;
    int64_t d = c->tc < s->begin_ns ? s->begin_ns - c->tc : c->tc > s->end_ns ? c->tc - s->end_ns : 0;
    /* prefer communication over markers */
    if (tui_model_kind(m, s->op) == CS_TK_OTHER)
        d += c->colns;
    if (d < c->best_d) {
        c->best_d = d;
        c->best_id = s->id;
    }
    return 0;
}

int tui_model_select_at_cursor(tui_model *m)
{
    if (m->nVis == 0)
        return -1;
    const cs_tui_lane *L = &m->aLane[m->aVis[m->cur_lane]];
    double colns = (double)(m->t1 - m->t0) / (m->ncols > 0 ? m->ncols : 1);
    int64_t tc = tui_model_cursor_time(m);
    int64_t half = (int64_t)(colns / 2) + 1;
    /* the span under the cursor, else the nearest within two columns */
    for (int widen = 0; widen < 2; widen++) {
        int64_t r = widen ? (int64_t)(colns * 2) + 1 : half;
        nearest c = { m, tc, (int64_t)colns, 0, 20000, 0, INT64_MAX };
        tui_model_lane_window(m, L, tc - r, tc + r, nearest_cb, &c);
        if (c.best_id) {
            cs_span s;
            if (cs_tui_span(m->q, c.best_id, &s) != 0)
                return -1;
            return tui_model_select_span(m, &s);
        }
    }
    return -1;
}
