/* analysis.h: the passes of the cross-rank analysis, internal to
 * libcsanalysis (clients use analyzer/csanalysis.h): clock alignment, matching
 * of collective instances and point-to-point messages, wait states, steps,
 * straggler verdicts and tail latency. Results go to the derived tables of
 * libtrace/store_analysis.h; the report writers read them from there.
 *
 * The passes stream the store: alignment reads a bounded sample of
 * N-to-N collectives with raw times; matching reads collective spans
 * ordered by (comm, seq), so each instance is complete when its group ends;
 * point-to-point operations come in one unsorted scan and are paired in
 * memory (one record per message). Memory is bounded by ranks x steps and
 * messages, not by spans. */
#ifndef CS_ANALYSIS_H
#define CS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/csanalysis.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/store.h"
#include "libtrace/store_analysis.h"

/* Median (sorts v in place); 0 for an empty vector. */
int64_t cs_vec_median(cs_vec *v);
/* Median absolute deviation around m. */
int64_t cs_vec_mad(const cs_vec *v, int64_t m);

#define CS_AN_MAX_COMMS 64

/* Per-rank clock result. */
typedef struct cs_an_clock {
    int present;
    int64_t offset_ns;
    double drift_ppm;
    int64_t residual_ns; /* median |exit - instance median exit| after alignment */
    int64_t bounds;      /* constraints that fixed it */
    char clock[16];
    int64_t start_ns; /* raw start of the process (the drift's origin) */
} cs_an_clock;

/* A point-to-point message: its send and its receive, RAW times (each on
 * its rank's clock); se, re 0 when the completion is unknown. */
typedef struct cs_msg {
    int64_t send_span, recv_span, comm;
    int src, dst, tag; /* world ranks */
    int recv_nonblocking;
    int64_t sb, se, rb, re;
} cs_msg;

/* Everything the passes share. */
typedef struct cs_an {
    cs_store *st;
    cs_awriter *w;
    cs_op_row *ops;
    int nops;
    unsigned char *op_n2n; /* [nops]: cs_an_is_n2n, computed once */
    int nranks;            /* highest rank + 1 */
    int nproc;             /* processes in the trace */
    int world_size;        /* as the processes said */
    int ref_rank;          /* the reference clock */
    int *present;          /* [nranks] */
    cs_an_clock *clk;      /* [nranks] */
    int64_t align_instances, align_violations;
    int64_t t_first, t_last; /* aligned span of the trace */

    /* steps: boundaries per rank (aligned begin of each step) */
    cs_vec *marks;   /* [nranks] */
    int step_source; /* 0 none, 1 markers, 2 detected period */
    int step_period; /* detected: collectives per step */
    int64_t nsteps;
    int64_t *late;                              /* [nsteps * nranks]: lateness of each rank in each step
                              (its entry - the median entry of the others, when last) */
    int64_t *late2;                             /* the same, against the next latest entry (what-if);
                              nonblocking instances add only their excess over
                              the largest one of the step so far (nblate) */
    int64_t *nblate;                            /* [nsteps * nranks]: that largest nonblocking lateness */
    int64_t *xgap;                              /* [nsteps * nranks]: the excess own time of each rank in
                              each step: for every complete instance, the rank whose
                              time since its exit from the communicator's previous
                              instance (its "gap") is the longest, that gap minus the
                              next longest; summed over the step */
    int64_t *step_last_exit;                    /* [nsteps] */
    int64_t *step_begin, *step_end, *step_time; /* [nsteps] after matching */

    /* per rank */
    int64_t *times_last, *imposed;
    cs_vec *lateness; /* [nranks] lateness when last */

    /* matching counts */
    int64_t instances, incomplete, coll_spans, uncompleted, exit_before_entry;
    int64_t p2p_pairs, p2p_unmatched;
    cs_msg *msgs; /* paired before the alignment (cs_an_p2p_collect) */
    size_t nmsgs;
    /* per directed pair [src * nranks + dst]: message transfer times and
     * late-sender times, and when the messages ran */
    cs_vec *pair_xfer, *pair_late;
    int64_t *pair_t0, *pair_t1;

    int64_t min_effect_ns; /* the verdicts' minimum effect */
    /* per communicator and step, for slow collectives: summed transfer and
     * summed arrival skew of its complete instances */
    cs_map comm_idx; /* comm id -> index < CS_AN_MAX_COMMS */
    int ncomms;
    int64_t *comm_ids;                /* [CS_AN_MAX_COMMS] */
    int64_t *cstep_xfer, *cstep_skew; /* [CS_AN_MAX_COMMS * nsteps] */
    int *cstep_op;                    /* [CS_AN_MAX_COMMS]: the op of the first instance */

    /* notes for the report: what is missing */
    char notes[2048];
} cs_an;

void cs_an_note(cs_an *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cs_an_is_n2n(const cs_an *a, int op);
/* A raw time of rank's clock on the aligned time line (as CS_ALIGNED). */
int64_t cs_an_aligned(const cs_an *a, int rank, int64_t raw);
int cs_an_kind_is(const cs_an *a, int op, const char *kind);

/* The passes, in order. Each returns 0, or -1 with a reason in err.
 * cs_an_p2p_collect pairs the point-to-point messages (raw times) for the
 * alignment and for cs_an_p2p, which writes them aligned. */
int cs_an_p2p_collect(cs_an *a, char *err, size_t errlen);
int cs_an_align(cs_an *a, char *err, size_t errlen);
int cs_an_steps_prepare(cs_an *a, char *err, size_t errlen);
int cs_an_match(cs_an *a, char *err, size_t errlen);
int cs_an_p2p(cs_an *a, char *err, size_t errlen);
int cs_an_verdicts(cs_an *a, char *err, size_t errlen);
int cs_an_tail(cs_an *a, char *err, size_t errlen);

#endif
