/* tui.h: the terminal browser's model (model.c), its drawing (draw.c) and
 * its screens and keys (main.c). The drawing code writes into any curses
 * WINDOW, so that bench/tui_bench renders headlessly with the same code. */
#ifndef CS_TUI_H
#define CS_TUI_H

#include <stdint.h>

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#include "libtrace/store.h"
#include "analyzer/store_analysis.h"
#include "tui/store_tui.h"

/* Smallest terminal the timeline is drawn in. */
#define TUI_MIN_COLS 50
#define TUI_MIN_ROWS 12
/* Width of the lane labels at the left of the timeline. */
#define TUI_LABEL_W 9
/* A lane is read raw when its window holds at most TUI_RAW_BUDGET / (lanes
 * on screen) spans, within [TUI_RAW_MIN, TUI_RAW_MAX]: about 3 us a span
 * from a cold cache keeps a frame under 20 ms. */
#define TUI_RAW_BUDGET 6000
#define TUI_RAW_MIN 100
#define TUI_RAW_MAX 1500

enum tui_screen { TUI_TIMELINE = 0, TUI_STATS, TUI_RANKS, TUI_HELP, TUI_NSCREENS };

/* One cell of a lane: the kind drawn there, and how busy it is. */
typedef struct tui_cell {
    unsigned char kind;  /* enum cs_tui_kind */
    unsigned char light; /* busy for less than a quarter of the cell */
    unsigned char cursor;
} tui_cell;

/* A span as kept for one frame. */
typedef struct tui_span {
    int64_t id, begin_ns, end_ns, comm, seq;
    int op;
    int kind;        /* CS_TK_*: from the op; kernels CS_TK_GPU */
    int64_t wait_ns; /* waiting part (collectives), -1 = unknown */
} tui_span;

typedef struct tui_lanebuf {
    tui_span *a;
    int n, cap;
    int raw; /* 1: spans read raw; 0: drawn from the summary */
    int capped;
} tui_lanebuf;

typedef cs_group_stat tui_group; /* one row of a stats table (store.h) */

typedef struct tui_rankrow {
    int rank;
    int64_t times_last, imposed_ns, lateness_ns;
    int64_t busy_ns, wall_ns, spans;
    int has_stat;
} tui_rankrow;

/* The instance cache: last arrival of (comm, seq). */
typedef struct tui_inst {
    int64_t comm, seq, last, first;
    int used; /* last and first are of the whole instance */
    int n;    /* members seen in this frame */
} tui_inst;

typedef struct tui {
    /* the trace */
    char path[4096];
    char dir[4096];
    cs_store *st;
    cs_tui *q;
    cs_tui_index_info idx;
    cs_proc *aProc;
    int nProc;
    cs_op_row *aOp;
    int nOp;
    unsigned char *aOpKind; /* op id -> CS_TK_* */
    unsigned char *aOpAll;  /* op id -> N-to-N collective */
    cs_tui_lane *aLane;
    int nLane;
    int multi_tid;   /* some rank has several threads */
    int has_streams; /* some lane is a stream lane */
    int64_t nSpan;
    int64_t t_begin, t_end;
    int analysed;       /* 1: analysis tables exist; 2: and are current */
    int64_t *aCommSize; /* pairs (comm, size) */
    int nComm;

    /* the view */
    int64_t t0, t1; /* visible window */
    int cur_col;    /* cursor column within the timeline */
    int cur_lane;   /* index into aVis */
    int lane_top;   /* first visible lane row */
    int *aVis;      /* lanes passing the filters */
    int nVis;
    int screen;
    int colour, utf8;

    /* filters */
    int f_op;       /* op id, -1 = none */
    int f_rank;     /* -1 = none */
    int64_t f_comm; /* 0 = none */

    /* the selection */
    int has_sel;
    cs_span sel;
    int sel_last_rank, sel_members;
    int64_t sel_wait, sel_skew, sel_last_begin;
    char sel_site[256];
    char sel_frames[12][160];
    int sel_nframes;

    /* analysis navigation */
    cs_instance *aWorst;
    int nWorst, iWorst, worst_loaded;
    cs_step_row *aStep;
    int nStep, iStep, steps_loaded;

    /* stats and ranks screens */
    tui_group *aGroup[3];
    int nGroup[3];
    int stats_loaded, stats_table, stats_sort, stats_rev, stats_top;
    cs_straggler *aStrag;
    int nStrag;
    tui_rankrow *aRank;
    int nRank, ranks_loaded, ranks_top;

    /* one frame */
    tui_lanebuf *aBuf; /* per lane (nLane) */
    tui_cell *aCell;   /* nVis rows of ncols */
    int ncols, cell_rows;
    int lod_level; /* level used last frame, -1 = raw */
    tui_inst *aInst;
    int nInstCap;

    char status[512];
    int status_warn;
} tui;

/* ---- model.c ---- */
/* Open the trace of DIR (or a .db file): one clear message in err on failure. */
int tui_open(tui *t, const char *arg, int build_index, int quiet, char *err, size_t errlen);
void tui_close(tui *t);
void tui_filters_apply(tui *t);
/* Compute the cells of every visible lane for a timeline ncols wide. */
int tui_frame(tui *t, int ncols, int rows);
int64_t tui_cursor_time(const tui *t);
void tui_zoom(tui *t, double factor);
void tui_pan(tui *t, int64_t dt);
void tui_center(tui *t, int64_t tc, int64_t width);
/* Select the span of the cursor lane nearest the cursor; 0 when found. */
int tui_select_at_cursor(tui *t);
int tui_select_span(tui *t, const cs_span *s);
int tui_next_worst(tui *t, int dir);
int tui_next_step(tui *t, int dir);
int tui_load_stats(tui *t);
void tui_sort_stats(tui *t);
int tui_load_ranks(tui *t);
/* The visible thread lane of rank (tid -1: its first). */
int tui_lane_of(const tui *t, int rank, int tid);
/* The stream number (sN) of a rank's stream, 0 when it has no lane. */
int tui_stream_index(const tui *t, int rank, int64_t stream);
void tui_status(tui *t, int warn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "12.5 ms" */
const char *tui_fmt_ns(int64_t ns, char *buf, int len);
const char *tui_fmt_bytes(int64_t b, char *buf, int len);
/* "12.5ms", "3s", "40%" -> ns from the start; -1 when not understood. */
int64_t tui_parse_time(const tui *t, const char *s);

/* ---- draw.c ---- */
void tui_draw_init(tui *t); /* colours; after initscr/newterm */
/* Draw the current screen into win (rows x cols); returns 0. */
int tui_draw(tui *t, WINDOW *win, int rows, int cols);

#endif
