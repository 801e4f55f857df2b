/* report.h: the public interface of libcsreport: the report model (the
 * stored analysis and the trace's own summary, read back), the CI gates,
 * one writer per format, diff and check-estimate. The commands and the
 * TUI use this header; the writers' shared helpers are in report_int.h. */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/analysis/csanalysis.h"
#include "analyzer/status/failure.h"
#include "libtrace/source.h"
#include "libtrace/store.h"
#include "libtrace/store_comms.h"

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
    char guard[2048];       /* apply mode's guard: what it ran and chose, one line each */
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
    char sd_graph[16]; /* meta slowdown_graph: gpu, cpu, threads (a CPU job communicating on threads) */
    cs_slowdown_row *sd;
    int nsd;
    /* the failures post mortem (failure.h): calls that never returned,
     * processes that died or exited without MPI_Finalize; empty when the
     * job ended well */
    cs_failure_list failures;
    /* the failures could not be read (a damaged span page, out of
     * memory): the report goes on without them; a reader that did not
     * check the spans' pages reads the trace again the careful way */
    int failures_unread;
    /* the alarms `collscope run` raised while the job ran (live_alarms,
     * docs/live.md); none when it was not followed or raised none */
    cs_store_alarm_row *live;
    int nlive;
    /* the GPU time of each rank, whole trace (gpu_time rows of step -1, by
     * rank; none without GPU activity) */
    cs_gpu_time_row *gpu;
    int ngpu;
    /* the top GPU kernels of each rank (kernel_stats: by rank, the largest
     * total first; none without kernel names) */
    cs_kernel_row *kern;
    int nkern;
    /* where the trace came from: "collscope run" (the interposer) or
     * "import kineto (nccl)" (meta import_format, import_backend) */
    char source[64];
} cs_report_data;
/* 0, or -1 when the store cannot be read (d is then partly filled: free it). */
int cs_report_load(cs_store *st, cs_report_data *d);
void cs_report_free(cs_report_data *d);
/* The stored analysis of the trace source src, analysed first unless current
 * (as cs_analysis_open, without saving into a trace that cannot be
 * written). 0; 1 when it is of what could be read of a damaged trace or
 * of a job whose rank stores were not all taken (log names what was left
 * out); or -1 with one message in err (free d all the same). */
int cs_report_open(const cs_source *src, cs_report_data *d, FILE *log, char *err, size_t errlen);
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
    int full;       /* text: show the sections that say nothing for this trace, every row (--full) */
} cs_report_trace;
/* 0, or -1 when the trace cannot be read (free t all the same). */
int cs_report_trace_load(cs_store *st, cs_report_trace *t);
void cs_report_trace_free(cs_report_trace *t);

/* ---- units: one for a column, a table or a sentence (report_units.c) ---- */

/* One unit for a column, a table or a sentence of times: that which its
 * largest value reads best in ("s", "ms", "us"), with its decimals (as
 * perf and nsys stats do). The reports and the TUI's tables use it alike. */
typedef struct cs_tunit {
    const char *name;
    double per; /* nanoseconds in one */
    int prec;
} cs_tunit;
cs_tunit cs_report_tunit(int64_t max_ns);
/* ns in unit u, the number alone ("7.487"; negative: "-"; a value too
 * small for the unit: "<0.001", never 0). */
const char *cs_report_tnum(const cs_tunit *u, int64_t ns, char *buf, size_t len);
/* A column header with its unit: "p50 (ms)". */
const char *cs_report_thead(const char *name, const cs_tunit *u, char *buf, size_t len);
/* The same for sizes ("GiB", "MiB", "KiB", "B"). */
typedef cs_tunit cs_bunit;
cs_bunit cs_report_bunit(int64_t max_bytes);
const char *cs_report_bnum(const cs_bunit *u, int64_t b, char *buf, size_t len);

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
 * report_format.c (--help lists it from there). */
typedef void (*cs_report_writer)(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* The writer of the format called name (text, json, markdown or md,
 * junit), or NULL. */
cs_report_writer cs_report_format(const char *name);
/* The formats' names, short forms (md) left out, into buf: "a, b or c", or
 * with bar "a|b|c" (--format's values in the usage line); returns buf. */
const char *cs_report_format_names(char *buf, size_t len, int bar);
/* cs_report_format_names with bar: an option table's values_of. */
const char *cs_report_format_values(char *buf, size_t len);

/* text: the trace and then the analysis. */
void cs_report_text_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* json: format "collscope-report" (docs/report-json.md). */
void cs_report_json_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* markdown: a CI job summary. */
void cs_report_markdown_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);
/* junit: JUnit XML, one test case per gate. */
void cs_report_junit_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng);

/* ---- comparing runs ---- */

/* Why base and cur are not the same job to compare (world sizes, parallel
 * layouts, sources: an MPI run against an imported NCCL job), "; "
 * between the reasons, into why; the number of reasons (0: comparable). */
int cs_diff_comparable(const cs_report_data *base, const cs_report_data *cur, char *why, size_t len);
/* The diff of two runs (text, or JSON format "collscope-diff"); runs that
 * are not comparable get a warning first (JSON: comparable, not_comparable). */
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
int cs_estimate_check(const cs_source *before, const cs_source *after, double tol, double min_gain, int json, FILE *out,
                      FILE *log, char *err, size_t errlen);

#endif
