/* analysis.h: the cross-rank analysis (issue 3): clock alignment, matching
 * of collective instances and point-to-point messages, wait states, steps,
 * straggler verdicts and tail latency. Results go to the derived tables of
 * analyzer/store_analysis.h; the report writers read them from there.
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

#include "common/map.h"
#include "common/vec.h"
#include "libtrace/store.h"
#include "analyzer/store_analysis.h"

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

/* Run the whole analysis on a store open for writing and store it.
 * Prints nothing; returns 0, or -1 with a reason in err. */
int cs_analyze_store(cs_store *st, char *err, size_t errlen);

/* Make sure the trace at arg has a current stored analysis (analysing it
 * when not, or always when force) and return it open for reading; prints
 * one message and returns NULL on failure. A trace that cannot be written
 * is analysed in a private copy (a note says so), unless save: then that
 * is the failure. */
cs_store *cs_analysis_open(const char *arg, int force, int save);

/* ---- reports ---- */

/* What a report holds, read back from the store. */
typedef struct cs_report_data {
    cs_proc *procs;
    int nproc;
    cs_straggler *strag;
    int nstrag;
    cs_step_row *steps;
    int nsteps;
    cs_rank_stat *rstats;
    int nrstats;
    cs_tail_row *tails;
    int ntails;
    cs_op_row *ops;
    int nops;
    int64_t spans, instances, incomplete, p2p;
    int64_t step_median_ns, step_p90_ns, whatif_median_ns;
    char notes[2048];
    char step_source[32];
    /* cost models, proposals and the what-if replay (issue 6) */
    cs_model_row *models;
    int nmodels;
    cs_proposal *props;
    int nprops;
    int has_whatif; /* the replay ran (whatif_measured_ns set) */
    int64_t wf_measured_ns, wf_replay_ns, wf_model_ns, wf_ontime_ns, wf_ontime_gain_ns, wf_comm_step_ns;
    double wf_replay_error, wf_model_error, wf_ar_calls_per_step, wf_memcpy_gbps;
    int64_t fuse_members, fused_calls;
    char wf_note[256];
} cs_report_data;
int cs_report_load(cs_store *st, cs_report_data *d);
void cs_report_free(cs_report_data *d);
const char *cs_report_opname(const cs_report_data *d, int op);

/* Gates (--fail-on) and their outcomes. */
typedef struct cs_gate {
    char name[64]; /* "straggler>5%", "p99>20%", "step>10%", "verdict" */
    int failed;
    char message[512];
} cs_gate;
/* Parse SPEC ("straggler=5,p99=20,step=10,verdict"), evaluate against d and
 * the baseline (may be NULL). Returns the number of gates in *out, or -1
 * with a message in err for a bad spec. */
int cs_gates_eval(const char *spec, const cs_report_data *d, const cs_report_data *base, cs_gate **out, char *err,
                  size_t errlen);

void cs_json_string(FILE *f, const char *s);
void cs_write_analysis_json(FILE *f, const cs_report_data *d, const cs_gate *g, int ng);
void cs_write_analysis_text(FILE *f, const cs_report_data *d, const cs_gate *g, int ng);
void cs_write_markdown(FILE *f, const char *trace, const cs_report_data *d, const cs_gate *g, int ng);
void cs_write_junit(FILE *f, const char *trace, const cs_report_data *d, const cs_gate *g, int ng);
/* The diff of two runs (text or JSON). */
void cs_write_diff(FILE *f, int json, const char *base_name, const cs_report_data *base, const char *new_name,
                   const cs_report_data *cur);

#endif
