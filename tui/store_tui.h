/* store_tui.h: what the terminal browser reads beyond store.h.
 *
 * The timeline must redraw in a few milliseconds on traces of tens of
 * millions of spans. It reads two things:
 *  - raw spans of one lane (rank, thread) in a time window, through the
 *    (rank, begin_ns) index, when the window holds few enough of them;
 *  - a level-of-detail summary, built once per trace (tables tui_lanes and
 *    tui_lod, created here with CREATE TABLE IF NOT EXISTS): for every
 *    lane and every power-of-two bucket of time, how long that lane spent
 *    in each kind of span. Level 0 buckets are 2^shift ns wide; level l
 *    buckets 2^(shift+l) ns, aligned on base_ns.
 * Every SQL statement of the TUI lives in store_tui.c. */
#ifndef CS_STORE_TUI_H
#define CS_STORE_TUI_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/store.h"

/* What a span is drawn as. CS_TK_WAIT is the waiting part of a
 * collective (before the last rank arrived); the rest is CS_TK_COLL. */
enum cs_tui_kind {
    CS_TK_GAP = 0, /* no traced call: compute */
    CS_TK_COLL,    /* collective (transfer part) */
    CS_TK_WAIT,    /* collective, waiting for the last rank */
    CS_TK_P2P,     /* point-to-point, probes and completions */
    CS_TK_GPU,     /* GPU kernels and copies */
    CS_TK_OTHER,   /* init, finalize, markers, communicator calls */
    CS_TK_N
};
/* The drawing kind of an op kind name of the ops table ("coll", "send"...). */
int cs_tui_kind_of(const char *op_kind);
/* Does this op kind have every member present at once (N-to-N)? */
int cs_tui_kind_all_to_all(const char *op_kind);

typedef struct cs_tui cs_tui;

/* A read connection of its own on the trace at path (already checked by
 * cs_store_open). */
int cs_tui_open(const char *path, cs_tui **out, char *err, size_t errlen);
void cs_tui_close(cs_tui *t);

/* ---- level-of-detail summary ---- */

/* 2: stream lanes (tui_lanes.stream, tui_lanes.sidx) */
#define CS_TUI_LOD_VERSION 2

typedef struct cs_tui_index_info {
    int present;   /* tables and meta are there and of this version */
    int stale;     /* built for another span count or analysis state */
    int64_t spans; /* spans it was built from */
    int shift, levels;
    int64_t base_ns, end_ns;
    int waits;      /* waiting parts of collectives are in it */
    double build_s; /* how long the build took */
} cs_tui_index_info;
int cs_tui_index_info_get(cs_tui *t, int64_t spans_now, cs_tui_index_info *out);

/* Build (or rebuild) the summary of the trace at path: one pass over the
 * spans in (rank, begin) order. progress (may be NULL) is called now and
 * then with the fraction done. Returns 0, or -1 with a reason (a
 * read-only file, for instance). */
int cs_tui_index_build(const char *path, void (*progress)(double frac, void *arg), void *arg, cs_tui_index_info *out,
                       char *err, size_t errlen);

/* Load the summary parameters from the trace after a build. */
int cs_tui_index_reload(cs_tui *t);

typedef struct cs_tui_bucket {
    int64_t b;           /* bucket index at its level */
    int64_t n;           /* spans that begin in it */
    int64_t ns[CS_TK_N]; /* busy time per kind (ns[CS_TK_GAP] unused) */
} cs_tui_bucket;
/* Buckets b0 <= b < b1 of one lane at one level, in order; empty buckets
 * are absent. Returns how many were written to out (at most max), -1 on
 * error. */
int cs_tui_lod(cs_tui *t, int lane, int level, int64_t b0, int64_t b1, cs_tui_bucket *out, int max);

/* ---- lanes ---- */

/* A lane is a rank's thread (sidx 0: its CPU-side calls, every span of
 * the thread at its CPU times) or a rank's stream (sidx 1.., numbered per
 * rank in order of first use: the spans with that stream at their GPU
 * times when known, else their CPU times, and the kernels that
 * gpu_activity holds for it). */
typedef struct cs_tui_lane {
    int rank, tid;             /* tid -1 on stream lanes */
    int sidx;                  /* 0: thread lane; 1..: stream lane */
    int64_t stream;            /* stream handle bits (stream lanes) */
    int64_t spans, max_dur_ns; /* max_dur_ns: on stream lanes, from the
                                    CPU begin to the latest end drawn */
    int64_t first_ns, last_ns; /* aligned */
} cs_tui_lane;
/* The lanes of the trace, by rank, then threads, then streams; *out is
 * malloc'ed. From the summary when it exists, else from scans of the
 * spans and gpu_activity. */
int cs_tui_lanes(cs_tui *t, cs_tui_lane **out, int *n);

/* Each lane's busy time (every kind, waiting parts included) from the
 * summary's coarsest level, in one query: cb(lane, busy_ns) in the order
 * of the lanes. 0, or -1 without a summary or on an error. */
int cs_tui_lane_busy(cs_tui *t, int (*cb)(int lane, int64_t busy_ns, void *), void *arg);

/* ---- raw spans ---- */

/* Spans of one lane overlapping [t0, t1) (aligned times), by begin.
 * max_dur_ns bounds the duration of the lane's spans (cs_tui_lane). The
 * callback returns non-zero to stop. Returns 0, or -1 on error. */
int cs_tui_window(cs_tui *t, int rank, int tid, int64_t max_dur_ns, int64_t t0, int64_t t1,
                  int (*cb)(const cs_span *, void *), void *arg);
/* The same for a stream lane: spans of (rank, stream) with begin_ns and
 * end_ns replaced by their GPU times when known, then the lane's kernels
 * (gpu_activity), passed with id 0 and op -1. */
int cs_tui_stream_window(cs_tui *t, int rank, int64_t stream, int64_t max_dur_ns, int64_t t0, int64_t t1,
                         int (*cb)(const cs_span *, void *), void *arg);
/* One span by id (with stream, group and GPU times); 0, or -1 when absent.
 * The spans these functions pass have stream -1 when they have none (0 is
 * the default stream). */
int cs_tui_span(cs_tui *t, int64_t id, cs_span *out);
/* The first and last entry (aligned) of collective instance (comm, seq),
 * its members and its last rank, from the stored analysis (one look-up),
 * else from the summary's table tui_inst (written by a build without the
 * analysis when the trace has CS_TUI_INST_RANKS ranks or more); 0, or -1
 * when the trace holds neither. */
#define CS_TUI_INST_RANKS 64
int cs_tui_instance_ends(cs_tui *t, int64_t comm, int64_t seq, int64_t *first, int64_t *last, int *members,
                         int *last_rank);
/* Every rank's span of collective instance (comm, seq), by rank. */
int cs_tui_instance(cs_tui *t, int64_t comm, int64_t seq, int (*cb)(const cs_span *, void *), void *arg);

typedef struct cs_tui_frame {
    int level;
    uint64_t pc;
    const char *module, *func, *file; /* NULL when unknown */
    int line;
} cs_tui_frame;
/* The frames of one call site, innermost first. */
int cs_tui_frames(cs_tui *t, int rank, int64_t callsite, int (*cb)(const cs_tui_frame *, void *), void *arg);

/* ---- the failures, kept beside the summary ---- */

/* A call that never returned (flagged in flight): drawn open-ended. */
typedef struct cs_tui_fly {
    int rank, tid;
    int64_t begin_ns;
} cs_tui_fly;
/* A failure post mortem and its first culprit's call (analyzer/status/failure.h). */
typedef struct cs_tui_fail {
    int rank;
    int64_t t_ns;
    char kind[24], text[240];
} cs_tui_fail;
/* The failures found when the trace held `spans` spans (tables tui_fly
 * and tui_fail, meta tui_fail_spans and tui_fail_end_ns: when the job
 * ended, 0 when no later than its last record): finding them takes a pass
 * over the spans, so the TUI keeps them beside its summary. Returns 0 with
 * the lists malloc'ed, 1 when none are kept for this span count, -1 on an
 * error. */
int cs_tui_failures_load(cs_tui *t, int64_t spans, cs_tui_fly **fly, int *nfly, cs_tui_fail **fail, int *nfail,
                         int64_t *end_ns);
/* Keep them in the trace at path (replacing what was kept); 0, or -1 with a
 * reason (a read-only file). */
int cs_tui_failures_save(const char *path, int64_t spans, const cs_tui_fly *fly, int nfly, const cs_tui_fail *fail,
                         int nfail, int64_t end_ns, char *err, size_t errlen);

/* Each rank's time in calls, wall time and spans (cs_store_rank_busy, a
 * pass over the spans) as found when the trace held `spans` spans, kept
 * beside the summary (table tui_rank_busy, meta tui_busy_spans): cb per
 * rank, by rank. 0, 1 when none are kept for this span count, -1 on an
 * error. */
int cs_tui_rank_busy_load(cs_tui *t, int64_t spans, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg);
/* One rank's row of them. */
typedef struct cs_tui_busy {
    int rank;
    int64_t busy_ns, wall_ns, spans;
} cs_tui_busy;
/* Keep them in the trace at path; 0, or -1 with a reason. */
int cs_tui_rank_busy_save(const char *path, int64_t spans, const cs_tui_busy *rows, int n, char *err, size_t errlen);

/* Does the trace hold table name (e.g. the analysis tables)? */
int cs_tui_has_table(cs_tui *t, const char *name);

#endif
