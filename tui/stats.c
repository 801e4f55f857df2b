/* stats.c: the stats screen: the report's tables (per op, per
 * communicator, per call site), sortable by any column, and the
 * analysis's straggler verdicts. Read from the trace on first view. */
#include "config.h"
#include "tui/screen.h"

#include "analyzer/report/report.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTABLES 3
#define NCOLS 8

typedef struct tui_stats {
    cs_group_stat *aGroup[NTABLES];
    int nGroup[NTABLES];
    int loaded;
    int table; /* shown: 0 per op, 1 per communicator, 2 per call site */
    int sort;  /* column sorted by (stat_cols) */
    int rev;   /* reversed */
    int top;   /* first row shown */
    cs_straggler *aStrag;
    int nStrag;
    size_t capStrag;
} tui_stats;

static const char *const stat_cols[NCOLS] = { "key", "calls", "bytes", "total", "p50", "p90", "p99", "max" };
/* the widths of the value columns, room for a header with its unit ("bytes (MiB)*") */
static const int stat_width[NCOLS] = { 0, 9, 12, 11, 10, 10, 10, 10 };
static const char *const stat_titles[NTABLES] = { "Per op", "Per communicator", "Per call site" };

static void stats_reset(void *st)
{
    tui_stats *s = st;
    for (int i = 0; i < NTABLES; i++)
        free(s->aGroup[i]);
    free(s->aStrag);
    memset(s, 0, sizeof *s);
    s->sort = 3; /* total, as the report */
}

static void *stats_create(void)
{
    tui_stats *s = calloc(1, sizeof *s);
    if (s)
        stats_reset(s);
    return s;
}

static void stats_destroy(void *st)
{
    if (st)
        stats_reset(st);
    free(st);
}

/* ---- sorting ---- */

static int sort_col, sort_rev; /* of the qsort in progress */

static int64_t group_val(const cs_group_stat *g, int col)
{
    switch (col) {
    case 1: return g->count;
    case 2: return g->bytes;
    case 3: return g->total;
    case 4: return g->p50;
    case 5: return g->p90;
    case 6: return g->p99;
    default: return g->max;
    }
}

static int group_cmp(const void *x, const void *y)
{
    const cs_group_stat *a = x, *b = y;
    int r;
    if (sort_col == 0)
        r = strcmp(a->key, b->key);
    else {
        int64_t va = group_val(a, sort_col), vb = group_val(b, sort_col);
        r = va < vb ? 1 : va > vb ? -1 : strcmp(a->key, b->key);
    }
    return sort_rev ? -r : r;
}

static void stats_sort(tui_stats *s)
{
    sort_col = s->sort;
    sort_rev = s->rev;
    for (int i = 0; i < NTABLES; i++)
        if (s->nGroup[i])
            qsort(s->aGroup[i], (size_t)s->nGroup[i], sizeof *s->aGroup[i], group_cmp);
}

/* ---- reading ---- */

static int strag_cb(const cs_straggler *x, void *arg)
{
    tui_stats *s = arg;
    if (s->nStrag >= 64)
        return 1;
    if (CS_VEC_RESERVE(s->aStrag, s->capStrag, (size_t)s->nStrag + 1) != 0)
        return 1;
    s->aStrag[s->nStrag++] = *x;
    return 0;
}

static int stats_load(tui_stats *s, tui_model *m)
{
    if (s->loaded)
        return 0;
    static const char *const by[NTABLES] = { "op", "comm", "callsite" };
    for (int i = 0; i < NTABLES; i++) {
        size_t n = 0;
        free(s->aGroup[i]);
        s->aGroup[i] = NULL;
        s->nGroup[i] = 0;
        if (cs_store_group_stats(m->st, by[i], &s->aGroup[i], &n) != 0) {
            tui_model_status(m, 1, "cannot read the stats (corrupt trace?)");
            return -1;
        }
        s->nGroup[i] = (int)n;
    }
    if (m->analysed)
        cs_store_stragglers(m->st, strag_cb, s);
    s->loaded = 1;
    stats_sort(s);
    return 0;
}

static void stats_enter(void *st, tui_model *m, tui_ui *ui)
{
    tui_stats *s = st;
    if (!s->loaded) {
        tui_model_status(m, 0, "reading the stats of %lld spans...", (long long)m->nSpan);
        tui_ui_redraw(ui);
    }
    tui_model_status(m, 0, "stats of the whole trace");
}

/* ---- drawing ---- */

static void stats_draw(void *st, tui_model *m, WINDOW *w, int rows, int cols)
{
    tui_stats *s = st;
    char buf[1024], b[7][32];
    tui_draw_header(m, w, cols, tui_stats_screen.name);
    stats_load(s, m);
    int y = 1;
    snprintf(buf, sizeof buf, " Tables: %s%s%s | %s%s%s | %s%s%s   (Tab: next table, </>: sort column, r: reverse)",
             s->table == 0 ? "[" : "", stat_titles[0], s->table == 0 ? "]" : "", s->table == 1 ? "[" : "",
             stat_titles[1], s->table == 1 ? "]" : "", s->table == 2 ? "[" : "", stat_titles[2],
             s->table == 2 ? "]" : "");
    tui_draw_line(w, y++, cols, A_NORMAL, buf);
    if (s->nStrag > 0) {
        tui_draw_line(w, y++, cols, A_BOLD, " Stragglers (by cost):");
        /* one unit for the costs of the lines shown */
        int64_t most = 0;
        for (int i = 0; i < s->nStrag && i < 3; i++)
            if (s->aStrag[i].cost_ns > most)
                most = s->aStrag[i].cost_ns;
        cs_tunit cu = cs_report_tunit(most);
        for (int i = 0; i < s->nStrag && i < 3 && y < rows - 4; i++) {
            const cs_straggler *x = &s->aStrag[i];
            snprintf(buf, sizeof buf, "  %s rank %d, steps %lld-%lld, cost %s %s/step: %s", x->kind, x->rank,
                     (long long)x->first_step, (long long)x->last_step, cs_report_tnum(&cu, x->cost_ns, b[0], 32),
                     cu.name, x->evidence);
            tui_draw_line(w, y++, cols, A_NORMAL, buf);
        }
    }
    int keyw = cols - 8 * 10 - 2;
    if (keyw > 40)
        keyw = 40;
    if (keyw < 12)
        keyw = 12;
    snprintf(buf, sizeof buf, " %s (sorted by %s%s)", stat_titles[s->table], stat_cols[s->sort],
             s->rev ? ", reversed" : "");
    tui_draw_line(w, y++, cols, A_BOLD, buf);
    /* one unit per column, chosen by its largest value in the whole table
     * (not only the rows on screen), named in its header */
    int ng = s->nGroup[s->table];
    int64_t most[NCOLS] = { 0 };
    for (int gi = 0; gi < ng; gi++) {
        const cs_group_stat *g = &s->aGroup[s->table][gi];
        const int64_t v[NCOLS] = { 0, 0, g->bytes, g->total, g->p50, g->p90, g->p99, g->max };
        for (int c = 2; c < NCOLS; c++)
            if (v[c] > most[c])
                most[c] = v[c];
    }
    cs_tunit unit[NCOLS];
    unit[2] = cs_report_bunit(most[2]);
    for (int c = 3; c < NCOLS; c++)
        unit[c] = cs_report_tunit(most[c]);
    int n = snprintf(buf, sizeof buf, " %-*.*s", keyw, keyw, s->sort == 0 ? "key*" : "key");
    for (int c = 1; c < NCOLS; c++) {
        char h[32];
        if (c >= 2)
            cs_report_thead(stat_cols[c], &unit[c], h, sizeof h);
        else
            snprintf(h, sizeof h, "%s", stat_cols[c]);
        if (s->sort == c)
            strcat(h, "*");
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %*s", stat_width[c], h);
    }
    tui_draw_line(w, y++, cols, A_REVERSE, buf);
    int room = rows - 1 - y;
    if (s->top > ng - room)
        s->top = ng - room > 0 ? ng - room : 0;
    for (int i = 0; i < room; i++, y++) {
        wmove(w, y, 0);
        wclrtoeol(w);
        int gi = s->top + i;
        if (gi >= ng)
            continue;
        const cs_group_stat *g = &s->aGroup[s->table][gi];
        char key[256];
        if (s->table == 0)
            snprintf(key, sizeof key, "%s", g->key);
        else if (s->table == 1)
            cs_store_comms_label(&m->comms, strtoll(g->key, NULL, 10), key, sizeof key);
        else
            snprintf(key, sizeof key, "%s [%s]", g->key, g->op);
        snprintf(buf, sizeof buf, " %-*.*s %*lld %*s %*s %*s %*s %*s %*s", keyw, keyw, key, stat_width[1],
                 (long long)g->count, stat_width[2], cs_report_bnum(&unit[2], g->bytes, b[0], 32), stat_width[3],
                 cs_report_tnum(&unit[3], g->total, b[1], 32), stat_width[4],
                 cs_report_tnum(&unit[4], g->p50, b[2], 32), stat_width[5], cs_report_tnum(&unit[5], g->p90, b[3], 32),
                 stat_width[6], cs_report_tnum(&unit[6], g->p99, b[4], 32), stat_width[7],
                 cs_report_tnum(&unit[7], g->max, b[5], 32));
        tui_draw_text(w, y, 0, cols, A_NORMAL, buf);
    }
    tui_draw_statusline(m, w, rows - 1, cols, " t: timeline  ?: help  q: quit ");
}

/* ---- keys ---- */

static int stats_key(void *st, tui_model *m, tui_ui *ui, int ch)
{
    tui_stats *s = st;
    (void)m;
    (void)ui;
    switch (ch) {
    case '\t':
        s->table = (s->table + 1) % NTABLES;
        s->top = 0;
        break;
    case KEY_BTAB:
        s->table = (s->table + NTABLES - 1) % NTABLES;
        s->top = 0;
        break;
    case '<':
    case KEY_LEFT:
    case 'h':
        s->sort = (s->sort + NCOLS - 1) % NCOLS;
        stats_sort(s);
        break;
    case '>':
    case KEY_RIGHT:
    case 'l':
        s->sort = (s->sort + 1) % NCOLS;
        stats_sort(s);
        break;
    case 'r':
        s->rev = !s->rev;
        stats_sort(s);
        break;
    case KEY_DOWN:
    case 'j': s->top++; break;
    case KEY_UP:
    case 'k':
        if (s->top > 0)
            s->top--;
        break;
    default: return TUI_IGNORED;
    }
    return TUI_HANDLED | TUI_REDRAW;
}

const tui_screen tui_stats_screen = {
    .name = "stats",
    .keys = "2T",
    .create = stats_create,
    .destroy = stats_destroy,
    .reset = stats_reset,
    .enter = stats_enter,
    .draw = stats_draw,
    .key = stats_key,
};
