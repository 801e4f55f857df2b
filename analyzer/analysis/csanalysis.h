/* csanalysis.h: the public interface of libcsanalysis, the cross-rank
 * analysis of a trace and the reports built on it. The collscope
 * subcommands and the TUI use this header only; the passes' own state is
 * in analyzer/analysis.h, internal to the library.
 *
 * Nothing in the library exits or prints on its own: each call returns 0
 * (or an object), or -1 (NULL) with a message in the caller's buffer, and
 * writes only to the streams it is given. */
#ifndef CS_CSANALYSIS_H
#define CS_CSANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libtrace/store.h"
#include "libtrace/store_comms.h"
#include "analyzer/analysis/store_analysis.h"
#include "analyzer/status/failure.h"

/* ---- running the analysis ---- */

/* The trace of a run: ARG/trace.db when ARG is a folder, else ARG. */
void cs_analysis_trace_path(const char *arg, char *out, size_t len);
/* Is arg a folder that holds a job as rank stores and DIR/index.db (and
 * no trace.db)? 1 or 0. cs_analysis_open and cs_analysis_open_trace read
 * either form; the analysis of the former is kept in DIR/results.db. */
int cs_analysis_is_job(const char *arg);

/* Open the trace at arg (a folder or a .db) in mode (CS_STORE_READ or
 * CS_STORE_WRITE). NULL with the store's message in err on failure. */
cs_store *cs_analysis_open_trace(const char *arg, int mode, char *err, size_t errlen);

/* Make sure the trace at arg has a current stored analysis (analysing it
 * when not, or always when force) and return it open for reading. A trace
 * that cannot be written is analysed in a private copy (one note line on
 * log says so), unless save: then that is the failure. A trace with
 * damaged pages is never written: what can be read of it is copied into
 * STEM.recovered.db beside it (cs_store_recover; a private file when the
 * folder cannot be written), one note on log names the damaged file and
 * says what was kept and lost, and that copy is analysed and returned
 * (cs_store_recovered says so). log (may be NULL)
 * also gets the pass times when COLLSCOPE_AN_TIMES is set. Returns NULL
 * with one message in err on failure. */
cs_store *cs_analysis_open(const char *arg, int force, int save, FILE *log, char *err, size_t errlen);

/* What `collscope analyze [--force] TRACE` does, in process: analyse the
 * trace at arg unless its stored analysis is current (always when force)
 * and store the results in it. The analysis notes (what is missing from
 * the trace, one a line) go to log (may be NULL) after "collscope: ".
 * Returns 0; 1 when the trace was damaged and what could be read of it
 * was analysed instead (the note on log says where); -1 with one message
 * in err (a trace that cannot be read or written, out of memory). */
int cs_analysis_run(const char *arg, int force, FILE *log, char *err, size_t errlen);
/* Bound the store pages this process keeps mapped (cs_store_map_bound,
 * COLLSCOPE_MAPPED_MB) for the connections it opens from now on; a bad
 * value is said on log (when not NULL) and the default kept. */
void cs_analysis_map_bound(FILE *log);

/* Analyse a store open for writing and store the results in it (the
 * passes in order; an_run.c). Returns 0, or -1 with a reason in err. */
int cs_an_run(cs_store *st, FILE *log, char *err, size_t errlen);

/* ---- the report model: the stored analysis, read back ---- */

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
    /* steps from a period: calls per step, fraction of positions matching,
     * ranks agreeing of those searched; communication per step (median
     * over ranks and steps of the union of the rank's communication calls
     * in the step), -1 unknown */
    int step_period, step_ranks_agreeing, step_ranks_searched;
    double step_confidence;
    int64_t step_comm_ns;
    /* cost models, proposals and the what-if replay */
    cs_model_row *models;
    int nmodels;
    cs_proposal *props;
    int nprops;
    int has_whatif; /* the replay ran (whatif_measured_ns set) */
    int64_t wf_measured_ns, wf_replay_ns, wf_model_ns, wf_ontime_ns, wf_ontime_gain_ns, wf_comm_step_ns;
    double wf_replay_error, wf_model_error, wf_ar_calls_per_step, wf_memcpy_gbps;
    int64_t fuse_members, fused_calls;
    char wf_note[256];
    cs_comms comms;         /* the communicators' display names */
    char wf_declined[2048]; /* fusion not proposed: one line per candidate, why */
    /* the parallel layout: "dp 4 x pp 2, tp 1" ("" none found), what each
     * dimension was found from, its sizes and each rank's coordinates */
    char layout[96], layout_source[512];
    int lay_dp, lay_pp, lay_tp;
    cs_layout_row *lay;
    int nlay;
    /* the slowdown attribution (an_slowdown.c): has_slowdown when it ran */
    int has_slowdown;
    double sd_S, sd_replay_error;
    int64_t sd_actual_ns, sd_ideal_ns;
    char sd_verdict[16], sd_culprit[48], sd_text[512];
    cs_slowdown_row *sd;
    int nsd;
    /* the failures post mortem (failure.h): calls that never returned,
     * processes that died or exited without MPI_Finalize; empty when the
     * job ended well */
    cs_failure_list failures;
    /* the GPU time of each rank, whole trace (gpu_time rows of step -1, by
     * rank; none without GPU activity) */
    cs_gpu_time_row *gpu;
    int ngpu;
} cs_report_data;
/* 0, or -1 when the store cannot be read (d is then partly filled: free it). */
int cs_report_load(cs_store *st, cs_report_data *d);
void cs_report_free(cs_report_data *d);
/* The stored analysis of the trace at arg, analysed first unless current
 * (as cs_analysis_open, without saving into a trace that cannot be
 * written). 0, or -1 with one message in err (free d all the same). */
int cs_report_open(const char *arg, cs_report_data *d, FILE *log, char *err, size_t errlen);
const char *cs_report_opname(const cs_report_data *d, int op);
/* The display name of communicator `comm` of the report's trace (see
 * libtrace/store_comms.h) into buf; returns buf. */
const char *cs_report_commname(const cs_report_data *d, int64_t comm, char *buf, size_t len);

/* What the report says about the trace itself (not the analysis): per op,
 * communicator and call site, per rank, and the GPU overlap. */
typedef struct cs_report_rank {
    int rank;
    int64_t busy, wall, spans;
} cs_report_rank;
typedef struct cs_report_overlap {
    int rank;
    int64_t comm_ns, exposed_ns;
} cs_report_overlap;
typedef struct cs_report_trace {
    char path[4200];
    cs_proc *procs;
    int nproc;
    cs_group_stat *by_op, *by_comm, *by_site; /* the costliest first */
    size_t nby_op, nby_comm, nby_site;
    cs_report_rank *ranks;
    size_t nranks, capRanks;
    cs_report_overlap *overlap;
    size_t noverlap, capOverlap;
    cs_comms comms; /* the communicators' display names */
} cs_report_trace;
/* 0, or -1 when the trace cannot be read (free t all the same). */
int cs_report_trace_load(cs_store *st, cs_report_trace *t);
void cs_report_trace_free(cs_report_trace *t);

/* ---- gates (--fail-on) ---- */

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

/* ---- report writers, one per format ---- */

/* A report format: its name for --format and its writer (report_NAME.c).
 * A new format is a new writer file and one entry in the table of
 * report.c. */
typedef void (*cs_report_writer)(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* The writer of the format called name (text, json, markdown or md,
 * junit), or NULL. */
cs_report_writer cs_report_format(const char *name);

/* text: the trace and then the analysis. */
void cs_report_text_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* json: format "collscope-report" (docs/report-json.md). */
void cs_report_json_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* markdown: a CI job summary. */
void cs_report_markdown_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* junit: JUnit XML, one test case per gate. */
void cs_report_junit_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);

/* ---- comparing runs ---- */

/* The diff of two runs (text, or JSON format "collscope-diff"). */
void cs_diff_write(FILE *f, int json, const char *base_name, const cs_report_data *base, const char *new_name,
                   const cs_report_data *cur);

/* `collscope check-estimate BEFORE AFTER`: the gain measured on the
 * program's step time (both traces' steps as their analyses found them, the
 * wall time between steps) against the what-if replay's prediction for
 * BEFORE's fusion proposal, written to out (text, or JSON when json). Both
 * traces are analysed first unless current (notes to log). Returns
 * CS_ESTIMATE_CONFIRMED when the median step time fell by at least min_gain
 * percent, the mean step time fell too and the prediction's error is within
 * tol percent; CS_ESTIMATE_NOT_CONFIRMED when not; CS_ESTIMATE_BAD_INPUT
 * (message in err) on bad input or when BEFORE has no fusion proposal;
 * CS_ESTIMATE_NOT_COMPARABLE (message in err) when the steps of the two
 * traces cannot be compared (none found on one side, found differently,
 * different periods, step counts more than 10 % apart). */
enum {
    CS_ESTIMATE_CONFIRMED = 0,
    CS_ESTIMATE_NOT_CONFIRMED = 1,
    CS_ESTIMATE_BAD_INPUT = 2,
    CS_ESTIMATE_NOT_COMPARABLE = 3,
};
int cs_estimate_check(const char *before, const char *after, double tol, double min_gain, int json, FILE *out,
                      FILE *log, char *err, size_t errlen);

#endif
