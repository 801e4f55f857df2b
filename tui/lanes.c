/* lanes.c: the cells of the timeline's lanes for one frame (see lanes.h). */
#include "config.h"
#include "tui/lanes.h"

#include "common/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tui_lanes_free(tui_lanes *f)
{
    for (int i = 0; i < f->nBuf; i++)
        free(f->aBuf[i].a);
    free(f->aBuf);
    free(f->aCell);
    free(f->aInst);
    memset(f, 0, sizeof *f);
}

/* ---- instances (last arrival), cached ---- */

static tui_inst *inst_get(tui_lanes *f, int64_t comm, int64_t seq)
{
    if (!f->aInst) {
        f->nInstCap = 1 << 14;
        f->aInst = calloc((size_t)f->nInstCap, sizeof *f->aInst);
        if (!f->aInst)
            return NULL;
    }
    uint64_t h = ((uint64_t)comm * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)seq * 0xbf58476d1ce4e5b9ull);
    size_t j = (size_t)(h ^ (h >> 29)) & (size_t)(f->nInstCap - 1);
    for (int probe = 0; probe < 16; probe++, j = (j + 1) & (size_t)(f->nInstCap - 1)) {
        tui_inst *x = &f->aInst[j];
        if (x->used && x->comm == comm && x->seq == seq)
            return x;
        if (!x->used) {
            *x = (tui_inst){ comm, seq, INT64_MIN, INT64_MAX, 0, 0 };
            return x;
        }
    }
    /* a full neighbourhood: reuse the slot (it is only a cache) */
    tui_inst *x = &f->aInst[j];
    *x = (tui_inst){ comm, seq, INT64_MIN, INT64_MAX, 0, 0 };
    return x;
}

static const tui_inst *inst_complete(tui_lanes *f, const tui_model *m, int64_t comm, int64_t seq)
{
    tui_inst *x = inst_get(f, comm, seq);
    if (!x)
        return NULL;
    if (!x->used) {
        tui_instq q;
        if (tui_model_instance(m, comm, seq, &q) != 0)
            return NULL;
        x->last = q.last;
        x->first = q.first;
        x->used = 1;
    }
    return x;
}

/* ---- one frame ---- */

typedef struct rawctx {
    const tui_model *m;
    tui_lanebuf *lb;
    int limit;
    int stream; /* a stream lane: no waiting parts there */
} rawctx;

static int raw_cb(const cs_span *s, void *arg)
{
    rawctx *c = arg;
    const tui_model *m = c->m;
    if (m->f_op >= 0 && s->op != m->f_op)
        return 0;
    if (m->f_comm && s->comm != m->f_comm)
        return 0;
    tui_lanebuf *lb = c->lb;
    if (lb->n >= c->limit) {
        lb->capped = 1;
        return 1;
    }
    if (CS_VEC_RESERVE(lb->a, lb->cap, (size_t)lb->n + 1) != 0)
        return 1;
    /* on a stream lane a collective is drawn whole, at its GPU times */
    lb->a[lb->n++] = (tui_span){
        s->id, s->begin_ns, s->end_ns, s->comm, c->stream ? -1 : s->seq, s->op, tui_model_kind(m, s->op), -1
    };
    return 0;
}

static void cells_add(double *acc, int ncols, int64_t t0, double colns, int64_t b, int64_t e, int kind)
{
    if (e < b)
        return;
    /* In doubles, and clamped before any conversion to int: a span may lie
     * any distance outside the window. */
    double x0 = ((double)b - (double)t0) / colns, x1 = ((double)e - (double)t0) / colns;
    if (!(x1 >= 0) || !(x0 < ncols))
        return;
    int c0 = x0 < 0 ? 0 : (int)floor(x0);
    int c1 = x1 >= ncols ? ncols - 1 : (int)floor(x1);
    for (int c = c0; c <= c1; c++) {
        double lo = x0 > c ? x0 : c, hi = x1 < c + 1 ? x1 : c + 1;
        double v = hi > lo ? hi - lo : 0;
        /* something that is there shows, however short */
        if (v < 1e-3)
            v = 1e-3;
        acc[c * CS_TK_N + kind] += v;
    }
}

static void cells_finish(tui_cell *row, const double *acc, int ncols)
{
    for (int c = 0; c < ncols; c++) {
        const double *a = &acc[c * CS_TK_N];
        int best = CS_TK_GAP;
        double bv = 0, tot = 0;
        for (int k = 1; k < CS_TK_N; k++) {
            tot += a[k];
            if (a[k] > bv) {
                bv = a[k];
                best = k;
            }
        }
        row[c].kind = (unsigned char)best;
        row[c].light = best != CS_TK_GAP && tot < 0.25;
        row[c].cursor = 0;
    }
}

/* Is s a member of an N-to-N collective instance? */
static int is_all_member(const tui_model *m, const tui_span *s)
{
    return s->seq >= 0 && s->op >= 0 && s->op < m->nOp && m->aOpAll[s->op];
}

int tui_lanes_frame(tui_lanes *f, tui_model *m, int ncols, int rows)
{
    if (ncols < 1)
        ncols = 1;
    tui_model_set_width(m, ncols);
    int nrows = tui_model_scroll(m, rows);
    if (f->nBuf != m->nLane) {
        for (int i = 0; i < f->nBuf; i++)
            free(f->aBuf[i].a);
        free(f->aBuf);
        f->nBuf = 0;
        f->aBuf = calloc((size_t)m->nLane, sizeof *f->aBuf);
        if (!f->aBuf)
            return -1;
        f->nBuf = m->nLane;
    }
    size_t need = (size_t)(nrows > 0 ? nrows : 1) * (size_t)ncols;
    if (CS_VEC_RESERVE(f->aCell, f->capCell, need) != 0)
        return -1;
    f->ncols = ncols;
    f->rows = nrows;
    double *acc = calloc((size_t)ncols * CS_TK_N, sizeof *acc);
    cs_tui_bucket *bk = malloc(sizeof *bk * (size_t)(4 * ncols + 8));
    if (!acc || !bk) {
        free(acc);
        free(bk);
        return -1;
    }
    double colns = (double)(m->t1 - m->t0) / ncols;
    int filtered = m->f_op >= 0 || m->f_comm != 0;
    /* the level whose buckets are at most a column wide */
    int level = -1;
    if (m->idx.present) {
        /* below the finest level, its buckets still tell whether the lane
         * is dense enough here to need the summary */
        level = colns >= 1.0 ? (int)floor(log2(colns)) - m->idx.shift : 0;
        if (level < 0)
            level = 0;
        if (level >= m->idx.levels)
            level = m->idx.levels - 1;
    }
    m->lod_level = -1;
    int64_t raw_max = nrows > 0 ? TUI_RAW_BUDGET / nrows : TUI_RAW_MAX;
    raw_max = raw_max < TUI_RAW_MIN ? TUI_RAW_MIN : raw_max > TUI_RAW_MAX ? TUI_RAW_MAX : raw_max;
    /* Pass 1: read each visible lane, raw or summarized. */
    for (int r = 0; r < nrows; r++) {
        int li = m->aVis[m->lane_top + r];
        const cs_tui_lane *L = &m->aLane[li];
        tui_lanebuf *lb = &f->aBuf[li];
        tui_cell *row = &f->aCell[(size_t)r * (size_t)ncols];
        memset(acc, 0, (size_t)ncols * CS_TK_N * sizeof *acc);
        lb->n = 0;
        lb->capped = 0;
        lb->raw = 1;
        int nb = 0;
        if (level >= 0) {
            int sh = m->idx.shift + level;
            int64_t b0 = (m->t0 - m->idx.base_ns) >> sh, b1 = ((m->t1 - m->idx.base_ns) >> sh) + 1;
            if (b0 < 0)
                b0 = 0;
            if (b1 - b0 > 4 * ncols + 8)
                b1 = b0 + 4 * ncols + 8;
            nb = cs_tui_lod(m->q, li, level, b0, b1, bk, 4 * ncols + 8);
            int64_t inview = 0;
            for (int i = 0; i < nb; i++)
                inview += bk[i].n;
            if (nb >= 0 && inview > raw_max)
                lb->raw = 0;
        }
        if (!lb->raw && !filtered) {
            int sh = m->idx.shift + level;
            m->lod_level = level;
            for (int i = 0; i < nb; i++) {
                int64_t lo = m->idx.base_ns + (bk[i].b << sh);
                double width = (double)((int64_t)1 << sh);
                for (int k = 1; k < CS_TK_N; k++) {
                    if (!bk[i].ns[k])
                        continue;
                    /* spread the busy time over the bucket's columns */
                    double x0 = ((double)lo - (double)m->t0) / colns, x1 = x0 + width / colns;
                    if (!(x1 > 0) || !(x0 < ncols))
                        continue;
                    int c0 = x0 < 0 ? 0 : (int)floor(x0);
                    int c1 = x1 - 1e-9 >= ncols ? ncols - 1 : (int)floor(x1 - 1e-9);
                    double per = (double)bk[i].ns[k] / width;
                    for (int c = c0; c <= c1 && c < ncols; c++) {
                        double l2 = x0 > c ? x0 : c, h2 = x1 < c + 1 ? x1 : c + 1;
                        if (h2 > l2)
                            acc[c * CS_TK_N + k] += per * (h2 - l2);
                    }
                }
            }
        } else {
            rawctx c = { m, lb, lb->raw ? (int)(4 * raw_max) : 50000, L->sidx > 0 };
            lb->raw = 1;
            tui_model_lane_window(m, L, m->t0, m->t1, raw_cb, &c);
        }
        cells_finish(row, acc, ncols); /* provisional for summarized lanes */
    }
    /* Pass 2: last arrivals of the collectives in view, then raw cells. */
    for (int r = 0; r < nrows; r++) {
        tui_lanebuf *lb = &f->aBuf[m->aVis[m->lane_top + r]];
        if (!lb->raw)
            continue;
        for (int i = 0; i < lb->n; i++) {
            tui_span *s = &lb->a[i];
            if (!is_all_member(m, s))
                continue;
            tui_inst *x = inst_get(f, s->comm, s->seq);
            if (x && !x->used) {
                x->n++;
                if (s->begin_ns > x->last)
                    x->last = s->begin_ns;
                if (s->begin_ns < x->first)
                    x->first = s->begin_ns;
            }
        }
    }
    for (int r = 0; r < nrows; r++) {
        tui_lanebuf *lb = &f->aBuf[m->aVis[m->lane_top + r]];
        if (!lb->raw)
            continue;
        tui_cell *row = &f->aCell[(size_t)r * (size_t)ncols];
        memset(acc, 0, (size_t)ncols * CS_TK_N * sizeof *acc);
        for (int i = 0; i < lb->n; i++) {
            tui_span *s = &lb->a[i];
            int kind = s->kind;
            if (kind == CS_TK_COLL && s->seq >= 0 && m->aOpAll[s->op]) {
                tui_inst *y = inst_get(f, s->comm, s->seq);
                if (y && !y->used) {
                    int sz = tui_model_comm_size(m, s->comm);
                    if (sz > 0 && y->n >= sz)
                        y->used = 1;
                }
                const tui_inst *x = y && y->used ? y : inst_complete(f, m, s->comm, s->seq);
                if (x) {
                    int64_t w = x->last - s->begin_ns;
                    s->wait_ns = w < 0 ? 0 : w > s->end_ns - s->begin_ns ? s->end_ns - s->begin_ns : w;
                }
            }
            if (s->wait_ns > 0) {
                cells_add(acc, ncols, m->t0, colns, s->begin_ns, s->begin_ns + s->wait_ns, CS_TK_WAIT);
                if (s->end_ns > s->begin_ns + s->wait_ns)
                    cells_add(acc, ncols, m->t0, colns, s->begin_ns + s->wait_ns, s->end_ns, CS_TK_COLL);
            } else {
                cells_add(acc, ncols, m->t0, colns, s->begin_ns, s->end_ns, kind);
            }
        }
        cells_finish(row, acc, ncols);
    }
    /* mark the instance cache entries we filled from partial views unused:
     * only complete queries are kept */
    for (int r = 0; r < nrows; r++) {
        tui_lanebuf *lb = &f->aBuf[m->aVis[m->lane_top + r]];
        if (!lb->raw)
            continue;
        for (int i = 0; i < lb->n; i++)
            if (is_all_member(m, &lb->a[i])) {
                tui_inst *x = inst_get(f, lb->a[i].comm, lb->a[i].seq);
                if (x && !x->used) {
                    x->last = INT64_MIN;
                    x->first = INT64_MAX;
                    x->n = 0;
                }
            }
    }
    /* calls that never returned: from their start to the end of the trace */
    for (int r = 0; r < nrows; r++) {
        const cs_tui_lane *L = &m->aLane[m->aVis[m->lane_top + r]];
        tui_cell *row = &f->aCell[(size_t)r * (size_t)ncols];
        for (int c = 0; c < ncols; c++)
            row[c].fly = 0;
        for (int i = 0; i < m->nFly && L->sidx == 0; i++) {
            if (m->aFly[i].rank != L->rank || m->aFly[i].tid != L->tid || m->aFly[i].begin_ns > m->t1)
                continue;
            double x0 = ((double)m->aFly[i].begin_ns - (double)m->t0) / colns;
            int c0 = x0 < 0 ? 0 : (int)floor(x0);
            for (int c = c0; c < ncols && (double)m->t0 + colns * c <= (double)m->t_end; c++)
                row[c].fly = 1;
        }
    }
    free(acc);
    free(bk);
    return 0;
}
