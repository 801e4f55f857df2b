/* model.h: what the terminal browser shows, shared by every screen and
 * free of curses: the open trace, the view window, the filters, the
 * selection and the status line. Screens read and change the model; they
 * never call each other. */
#ifndef CS_TUI_MODEL_H
#define CS_TUI_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/store.h"
#include "libtrace/store_comms.h"
#include "analyzer/analysis/store_analysis.h"
#include "libtrace/source.h"
#include "tui/store_tui.h"

/* The screens, in the order of the screen table (ui.c). */
enum tui_screen_id { TUI_TIMELINE = 0, TUI_STATS, TUI_RANKS, TUI_LAYOUT, TUI_HELP, TUI_NSCREENS };

/* The size of one communicator, read at open. */
typedef struct tui_comm_size {
    int64_t comm;
    int64_t size;
} tui_comm_size;

/* The ranks of one collective instance seen by a scan: the last and the
 * first arrival, and how many members were seen. */
typedef struct tui_instq {
    int64_t last, first;
    int n, last_rank;
} tui_instq;

typedef struct tui_model {
    /* the trace */
    char path[4096];
    char dir[4096];
    cs_source src; /* what the command was given (libtrace/source.h) */
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
    int analysed;        /* 1: analysis tables exist; 2: and are current */
    int job;             /* dir is a job kept as rank stores; path its private merged copy */
    char left_out[3400]; /* the job's rank stores left out (foreign, stale, duplicate, unreadable), named; "" none */
    tui_comm_size *aComm;
    size_t nComm, capComm;
    cs_comms comms; /* the communicators' display names */

    /* the view */
    int64_t t0, t1; /* visible window */
    int ncols;      /* width of the timeline in columns, 0 before the first frame */
    int cur_col;    /* cursor column within the timeline */
    int cur_lane;   /* index into aVis */
    int lane_top;   /* first visible lane row */
    int *aVis;      /* lanes passing the filters */
    int nVis;
    int lod_level; /* summary level the last frame was read from, -1 = raw */

    /* the terminal */
    int screen; /* enum tui_screen_id shown */
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

    char status[512];
    int status_warn;

    /* lanes of alike ranks (docs/tui.md): each group of ranks that behave
     * alike (tui/groups.h) drawn as one lane, that of its median member */
    int group_mode; /* 0: when the ranks outnumber the timeline's rows; 1: on; 2: off */
    int grouped;    /* the rows group alike ranks now */
    int group_rows; /* the rows the groups were made for; -1: they could not be made */
    int group_by;   /* what made them: 1 the analysis's figures, 0 the share of time in calls */
    struct tui_rk {
        int rank, lane; /* lane: its first thread lane */
        int group;      /* index into aGrp */
        int alone;      /* shown out of its group (a screen asked for it) */
    } * aRk;            /* the ranks, by rank */
    int nRk;
    struct tui_group {
        int first, n;                      /* its members: aGrpMem[first .. first + n), indices into aRk, by rank */
        int rep;                           /* the member whose activity its lane draws (index into aRk) */
        int expanded;                      /* its members shown one lane each */
        int stands_out;                    /* one rank that stands out from the rest */
        int shown, rep_shown, first_shown; /* members not alone, and which of them draws, which leads */
    } * aGrp;
    int nGrp;
    int *aGrpMem;
    int *aVisGrp; /* per visible row: the group it draws collapsed, -1 for a lane of its own */
    int jump_rk;  /* the rank (index into aRk) the last jump took out of its group, -1: none */

    /* the calls that never returned (CS_F_INFLIGHT): drawn open-ended to
     * the end of the trace */
    cs_tui_fly *aFly;
    int nFly;
    /* the failures post mortem (analyzer/status/failure.h, as `collscope report`
     * finds them), each with its first culprit's call to jump to */
    cs_tui_fail *aFail;
    int nFail, iFail;
} tui_model;

/* Open the trace of DIR (or a .db file), building its timeline summary when
 * build_index is set and it is missing or stale (with progress on stderr
 * unless quiet). 0, or -1 with one clear message in err; tui_model_close
 * is safe either way. */
int tui_model_open(tui_model *m, const cs_source *src, int build_index, int quiet, char *err, size_t errlen);
/* Close and open the trace again (after its analysis changed), keeping the
 * view window, the cursor and the terminal settings; the filters and the
 * selection are dropped. 0, or -1 with err set (the model is closed). */
int tui_model_reopen(tui_model *m, char *err, size_t errlen);
void tui_model_close(tui_model *m);
/* 'F': center the view on the next failure's first culprit (its call in
 * flight, else its last call), its lane the cursor's; 0, or -1 when the
 * trace has no failure (the status line says so). */
int tui_model_next_failure(tui_model *m, int dir);

void tui_model_status(tui_model *m, int warn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- filters ---- */
/* Recompute the visible lanes from the filters. */
void tui_model_filters_apply(tui_model *m);
/* Apply a filter line ("op NAME", "rank N", "comm ID", "clear"): 0 when the
 * filters changed, -1 when the line was not understood (status says why). */
int tui_model_filter(tui_model *m, const char *line);

/* ---- lanes ---- */
/* The visible thread lane of rank (tid -1: its first), -1 when hidden
 * (filtered out, or drawn in a group's lane). */
int tui_model_lane_of(const tui_model *m, int rank, int tid);
/* The same, first taking the rank out of its group when a group's lane
 * holds it (the rank filter still hides it: then -1); the rank an earlier
 * call took out goes back into its group. */
int tui_model_show_rank(tui_model *m, int rank, int tid);
/* Does the trace have a lane of rank? */
int tui_model_has_rank(const tui_model *m, int rank);

/* ---- groups of alike ranks ---- */
/* Fit the rows to a timeline `rows` lanes high: group alike ranks when
 * grouping is on, or when automatic and the ranks outnumber the rows. The
 * cursor stays on its rank (or the group lane that holds it). */
void tui_model_group_fit(tui_model *m, int rows);
/* Grouping on / off (the key c): 1 when it is on now. */
int tui_model_group_toggle(tui_model *m, int rows);
/* The collapsed group drawn by visible row vi, -1 for a lane of its own. */
int tui_model_row_group(const tui_model *m, int vi);
/* Expand the group of row vi (a group's lane), or collapse the group whose
 * member's lane vi is (and put a rank shown alone back): 0 when something
 * changed, -1 when the row is no group's (status says so). */
int tui_model_group_expand(tui_model *m, int vi);
/* A group's label: "ranks 0-76,78-511 (511)", its members shown in it,
 * ranges cut with "..." to fit len (the count stays). */
void tui_model_group_label(const tui_model *m, int g, char *buf, size_t len);
/* Say on the status line what row vi is when it is a group's lane. */
void tui_model_group_status(tui_model *m, int vi);
/* The stream number (sN) of a rank's stream, 0 when it has no lane. */
int tui_model_stream_index(const tui_model *m, int rank, int64_t stream);
/* The drawing kind (CS_TK_*) of a span of op (kernels have op < 0). */
int tui_model_kind(const tui_model *m, int op);
/* The size of communicator comm, 0 when unknown. */
int tui_model_comm_size(const tui_model *m, int64_t comm);
/* The spans of lane L overlapping [t0, t1), as its lane draws them (stream
 * lanes at their GPU times); cb returns nonzero to stop. */
int tui_model_lane_window(const tui_model *m, const cs_tui_lane *L, int64_t t0, int64_t t1,
                          int (*cb)(const cs_span *, void *), void *arg);
/* Scan the members of instance (comm, seq) into q; 0 or -1. */
int tui_model_instance(const tui_model *m, int64_t comm, int64_t seq, tui_instq *q);

/* ---- the view ---- */
/* Set the timeline's width, keeping the cursor at the same time. */
void tui_model_set_width(tui_model *m, int ncols);
/* Scroll the lanes so that the cursor lane is among `rows` rows; returns
 * how many lanes are visible from lane_top. */
int tui_model_scroll(tui_model *m, int rows);
int64_t tui_model_cursor_time(const tui_model *m);
void tui_model_zoom(tui_model *m, double factor);
void tui_model_pan(tui_model *m, int64_t dt);
/* Centre the view on tc (width 0 keeps the width) and put the cursor there. */
void tui_model_center(tui_model *m, int64_t tc, int64_t width);
/* "12.5ms", "3s", "40%" -> ns from the start; -1 when not understood. */
int64_t tui_model_parse_time(const tui_model *m, const char *s);

/* ---- the selection ---- */
/* Select the span of the cursor lane nearest the cursor; 0 when found. */
int tui_model_select_at_cursor(tui_model *m);
/* Select s, reading its instance (wait, last rank, skew) and call site. */
int tui_model_select_span(tui_model *m, const cs_span *s);
const char *tui_model_op_name(const tui_model *m, int op);

#endif
