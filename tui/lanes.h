/* lanes.h: the cells of the timeline's lanes for one frame, read from the
 * model's trace: raw spans where a lane is sparse in the view, the
 * level-of-detail summary where it is dense, and the waiting part of each
 * collective from its instance's last arrival. No curses. */
#ifndef CS_TUI_LANES_H
#define CS_TUI_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "tui/model.h"

/* A lane is read raw when its window holds at most TUI_RAW_BUDGET / (lanes
 * on screen) spans, within [TUI_RAW_MIN, TUI_RAW_MAX]: about 3 us a span
 * from a cold cache keeps a frame under 20 ms. */
#define TUI_RAW_BUDGET 6000
#define TUI_RAW_MIN 100
#define TUI_RAW_MAX 1500

/* One cell of a lane: the kind drawn there, and how busy it is. */
typedef struct tui_cell {
    unsigned char kind;  /* enum cs_tui_kind */
    unsigned char light; /* busy for less than a quarter of the cell */
    unsigned char cursor;
    unsigned char fly; /* a call that never returned covers it (open-ended to the trace's end) */
} tui_cell;

/* A span as kept for one frame. */
typedef struct tui_span {
    int64_t id, begin_ns, end_ns, comm, seq;
    int op;
    int kind;        /* CS_TK_*: from the op; kernels CS_TK_GPU */
    int64_t wait_ns; /* waiting part (collectives), -1 = unknown */
} tui_span;

/* The spans of one lane in the view. */
typedef struct tui_lanebuf {
    tui_span *a;
    int n;
    size_t cap;
    int raw; /* 1: spans read raw; 0: drawn from the summary */
    int capped;
} tui_lanebuf;

/* The instance cache: last arrival of (comm, seq). */
typedef struct tui_inst {
    int64_t comm, seq, last, first;
    int used; /* last and first are of the whole instance */
    int n;    /* members seen in this frame */
} tui_inst;

/* The cells of the last frame and what they were read into. A zeroed
 * tui_lanes is empty. */
typedef struct tui_lanes {
    tui_lanebuf *aBuf; /* per lane of the model (nBuf) */
    int nBuf;
    tui_cell *aCell; /* rows x ncols */
    size_t capCell;
    int ncols, rows; /* of the last frame: rows lanes from m->lane_top */
    tui_inst *aInst;
    int nInstCap;
} tui_lanes;

/* Compute the cells of the visible lanes for a timeline ncols wide and at
 * most `rows` lanes high; sets the model's width, lane scroll and
 * lod_level. 0, or -1 when out of memory. */
int tui_lanes_frame(tui_lanes *f, tui_model *m, int ncols, int rows);
/* The cells of visible row r (0 <= r < f->rows). */
static inline const tui_cell *tui_lanes_row(const tui_lanes *f, int r)
{
    return &f->aCell[(size_t)r * (size_t)f->ncols];
}
/* Free everything; f is empty again (for a reopened model too). */
void tui_lanes_free(tui_lanes *f);

#endif
