/* store_analysis.h: the derived tables of the cross-rank analysis, and the
 * extra read queries the analysis needs. Every SQL statement behind these
 * functions lives in store_analysis.c.
 *
 * `collscope analyze` (and `collscope report`, when the stored analysis is
 * not current) fills the tables below; the TUI and the report writers read
 * them through the functions of this header, without recomputing:
 *
 *   instances(comm, seq, op, nranks, expected, bytes, first_entry_ns,
 *             last_entry_ns, last_rank, last_exit_ns, skew_ns, transfer_ns,
 *             step, callsite)            one row per collective instance
 *   waits(span, rank, comm, seq, wait_ns)  one row per collective span
 *   steps(step, begin_ns, end_ns, time_ns, slowest_rank, whatif_ns)
 *   rank_stats(rank, times_last, imposed_wait_ns, median_lateness_ns)
 *   stragglers(id, kind, rank, src, dst, comm, first_step, last_step,
 *              begin_ns, end_ns, lateness_ns, cost_ns, evidence, period,
 *              phase, affected, total_ns, steps)
 *   p2p(send_span, recv_span, comm, src, dst, tag, late_sender_ns,
 *       late_receiver_ns, transfer_ns)
 *   tails(op, comm, bucket, callsite, count, p50..max, common)
 *   models(comm, op, algo, points, cells, min_bytes, max_bytes, alpha_ns,
 *          beta_ns_per_byte, r2, rel_resid, fitted, note, gamma_ns)   cost models
 *   proposals(id, kind, comm, op, callsite, calls_per_step, min_bytes,
 *             max_bytes, bytes_per_step, bucket_bytes, groups_per_step,
 *             gain_ns, step_ns, evidence, env, curve)      what-if proposals
 *
 * All times are on the aligned time line (the clocks table). The meta keys
 * analysis_version and analysis_spans say whether the stored analysis is
 * current (see cs_store_analysis_current). */
#ifndef CS_STORE_ANALYSIS_H
#define CS_STORE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/store.h"

/* Bumped whenever what the analysis stores changes meaning. */
#define CS_ANALYSIS_VERSION 25

/* ---- rows ---- */

typedef struct cs_instance {
    int64_t comm, seq;
    int op;
    int nranks;    /* members seen in the trace */
    int expected;  /* communicator size; nranks < expected: incomplete */
    int64_t bytes; /* bytes of the first member */
    int64_t first_entry_ns, last_entry_ns;
    int last_rank;        /* world rank that entered last (-1: none) */
    int64_t last_exit_ns; /* for nonblocking ops: the latest completion */
    int64_t skew_ns;      /* last entry - first entry */
    int64_t transfer_ns;  /* last exit - last entry (>= 0) */
    int64_t step;         /* step the instance belongs to, -1 = before the first */
    char callsite[160];   /* call-site label of the first member, "" = unknown */
} cs_instance;

typedef struct cs_wait {
    int64_t span; /* the span's id */
    int rank;
    int64_t comm, seq;
    int64_t wait_ns; /* last entry - this rank's entry (>= 0) */
} cs_wait;

typedef struct cs_step_row {
    int64_t step;
    int64_t begin_ns, end_ns, time_ns;
    int slowest_rank;  /* the rank that set the step time; -1 = nobody late */
    int64_t whatif_ns; /* the step time had that rank arrived on time */
} cs_step_row;

typedef struct cs_rank_stat {
    int rank;
    int64_t times_last;         /* instances it entered last */
    int64_t imposed_wait_ns;    /* waiting of the others in those instances */
    int64_t median_lateness_ns; /* median over steps of the lateness it imposed in the step
                                    (its entry - the next latest, summed over the step);
                                    without steps: median over the instances it was last */
} cs_rank_stat;

/* A rank's coordinates in the parallel layout (an_layout.c): its
 * data-parallel replica, pipeline stage and tensor-parallel rank. */
typedef struct cs_layout_row {
    int rank, dp, pp, tp;
} cs_layout_row;

/* A row of the slowdown attribution (an_slowdown.c): kind "rank", "group",
 * "op" or "step"; what it is ("rank 3", "pp stage 2", "compute", "step 5");
 * its ranks as text; S with only it at its actual durations (the others
 * ideal) over the ideal replay; its share of the slowdown; of that, the
 * share of its compute (ranks; -1 unknown); the replayed actual and ideal
 * times (steps: that step's). */
typedef struct cs_slowdown_row {
    char kind[8], name[48], ranks[96];
    double s, share, compute_share;
    int64_t actual_ns, ideal_ns;
} cs_slowdown_row;

/* The GPU time of a rank (an_gpu.c; docs/analysis.md, "GPU time"): over
 * its window (first GPU start to last GPU end; step >= 0: that step's
 * window clipped to it), the time some compute kernel runs (compute), some
 * communication kernel and no compute kernel (comm_exposed), communication
 * and compute at once (comm_overlapped, part of compute), a memory copy or
 * set and neither (memory), nothing (idle): compute + comm_exposed +
 * memory + idle = window. comm_ns is the union of the communication
 * kernels (comm_exposed + comm_overlapped). step is -1 for the whole
 * trace. outlier: the rank's compute share stands out from the other
 * ranks' (median + CS_GPU_OUTLIER_MADS x MAD, and at least
 * CS_GPU_OUTLIER_POINTS points away): 1 above, -1 below, 0 not (whole-trace
 * rows only). */
typedef struct cs_gpu_time_row {
    int rank;
    int64_t step;
    int64_t window_ns, compute_ns, comm_exposed_ns, comm_overlapped_ns, memory_ns, idle_ns;
    int outlier;
} cs_gpu_time_row;
/* The GPU kernels of a rank (an_kernels.c, table kernel_stats): per kernel
 * name (copies and sets too), its category ("compute" for kernels, "memory"
 * for copies and sets), how many ran, their total GPU time, and the median
 * and p99 of their durations (nearest rank). The CS_KERNEL_TOP of largest
 * total per rank are kept. */
typedef struct cs_kernel_row {
    int rank;
    char name[256];
    char category[16];
    int64_t count, total_ns, median_ns, p99_ns;
} cs_kernel_row;
#define CS_KERNEL_TOP 10
/* The trace's own figures as the report prints them (an_figures.c,
 * tables group_stats and rank_busy), kept by the analysis so that a report
 * reads them instead of every span again: per op, communicator and call
 * site (grp "op", "comm", "callsite") the cs_group_stat of
 * cs_store_group_stats; per rank the time in traced calls of
 * cs_store_rank_busy. */
typedef struct cs_group_stat_row {
    char grp[16];
    cs_group_stat s;
} cs_group_stat_row;
typedef struct cs_rank_busy_row {
    int rank;
    int64_t busy_ns, wall_ns, spans;
} cs_rank_busy_row;
#define CS_GPU_OUTLIER_MADS 5
#define CS_GPU_OUTLIER_POINTS 10.0

typedef struct cs_straggler {
    int64_t id;
    char kind[16]; /* persistent, transient, recurring, slow_link, slow_collective */
    int rank;      /* the late rank; slow_link between two ranks: src; -1 = none */
    int src, dst;  /* slow_link between two ranks: world ranks; else -1 */
    int64_t comm;  /* slow_collective, slow_link on a communicator: its id; else 0 */
    int64_t first_step, last_step;
    int64_t begin_ns, end_ns;
    int64_t lateness_ns; /* median lateness (or transfer excess) per affected step */
    int64_t cost_ns;     /* median cost per affected step */
    char evidence[512];  /* one line a person can read */
    /* recurring: the period in steps (0: irregular or another kind), the
     * phase (first_step mod period), the affected steps, their summed cost,
     * and the list of those steps ("3,6,9", as many whole entries as fit) */
    int64_t period, phase, affected, total_ns;
    char steps[1024];
} cs_straggler;

typedef struct cs_p2p_row {
    int64_t send_span, recv_span;
    int64_t comm;
    int src, dst, tag; /* world ranks */
    int64_t late_sender_ns, late_receiver_ns, transfer_ns;
} cs_p2p_row;

typedef struct cs_tail_row {
    int op;
    int64_t comm;
    int bucket; /* bytes in [2^bucket, 2^(bucket+1)); 0 also holds 0 B */
    char callsite[160];
    int64_t count, p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
    char common[256]; /* what the slowest 1 % share, "" = nothing found */
} cs_tail_row;

/* A cost model: time = alpha + (n - 1) x gamma + bytes x beta for n calls of a collective op on one
 * communicator (and NCCL algorithm/protocol when known), fitted to the
 * trace's own transfer times (analyzer/analysis/an_model.c). */
typedef struct cs_model_row {
    int64_t comm;
    int op;
    char algo[32];  /* "Ring/Simple" for NCCL when known; "" otherwise */
    int64_t points; /* transfer times it was fitted to */
    int64_t cells;  /* distinct (calls, size) cells (their medians were fitted) */
    int64_t min_bytes, max_bytes;
    double alpha_ns, beta_ns_per_byte;
    double gamma_ns;  /* each further call completed together (= alpha for blocking calls) */
    double r2;        /* over the cells; 0 when not fitted */
    double rel_resid; /* the cells' relative residual: sum w |t - model| / sum w t (an_model.c) */
    int fitted;       /* 1 alpha and beta fitted; 0 alpha only (beta unknown, 0) */
    char note[192];
} cs_model_row;

/* A rewrite the what-if replay estimated (analyzer/analysis/an_whatif.c). */
typedef struct cs_proposal {
    int64_t id;
    char kind[16]; /* "fusion", "overlap" */
    int64_t comm;
    int op;
    char callsite[160];
    double calls_per_step;
    int64_t min_bytes, max_bytes, bytes_per_step;
    int64_t bucket_bytes;   /* fusion: the suggested bucket */
    double groups_per_step; /* fusion: fused calls per step with that bucket */
    int64_t gain_ns;        /* estimated gain per step */
    int64_t step_ns;        /* the median step time it is relative to */
    char evidence[768];
    char env[256];    /* apply mode settings, "" when apply mode cannot do it */
    char curve[1024]; /* fusion: "BUCKET:GROUPS:GAIN_NS:GAIN_PROGRAM_NS" per bucket size, comma-
                              separated (GAIN_PROGRAM_NS: the program issuing such buckets itself) */
} cs_proposal;

/* ---- reading the stored analysis (TUI, reports) ---- */

/* 1 when the analysis tables exist (possibly stale), 0 when not, -1 on error. */
/* 0 when the trace's tables hold what the readers assume (integer times
 * within +-2^61 ns, integer ranks and sequence numbers, sane clocks); else
 * -1 and one message in err naming the file and what is wrong. */
int cs_store_analysis_check_input(cs_store *st, char *err, size_t errlen);
/* Its checks of the span table alone, the trace called name in err (a
 * part of a job, checked by the process that made it), and of the other
 * tables alone (a job read through its parts, whose spans were). */
int cs_store_analysis_check_spans(cs_store *st, const char *name, char *err, size_t errlen);
int cs_store_analysis_check_tables(cs_store *st, char *err, size_t errlen);
int cs_store_analysis_exists(cs_store *st);
/* 1 when the stored analysis was made by this analysis version from the
 * spans now in the store, else 0. */
int cs_store_analysis_current(cs_store *st);
/* The results store of a job kept as rank stores (DIR/results.db): the
 * analysis tables, the clocks and the meta of st, copied into a new file
 * at path (renamed into place when whole). 0, or -1 with a reason. */
int cs_store_analysis_save(cs_store *st, const char *path, char *err, size_t errlen);
/* The same, with the waits taken from the stores waits_from[0..n) (the
 * processes of a parallel analysis wrote them there) in span order; or,
 * when waits_file is not NULL, with the file that
 * cs_store_results_waits_file made from them (another process, while this
 * one ran its last passes): the other tables go into it, and it is
 * renamed to path. */
int cs_store_analysis_save_from(cs_store *st, const char *path, char *const *waits_from, int n, const char *waits_file,
                                char *err, size_t errlen);
/* A new file at path (removed first: the caller's own) holding only the
 * results' waits table, taken from the stores waits_from[0..n) in span
 * order, for cs_store_analysis_save_from. 0, or -1 with a reason (and no
 * file). */
int cs_store_results_waits_file(const char *path, char *const *waits_from, int n, char *err, size_t errlen);
/* Take the stored analysis of the results store at path into st when it
 * was made from the same job (meta job_fingerprint) by this analysis
 * version: 1 when taken, 0 when it was not (absent, of another job or
 * version, unreadable; st is unchanged). */
int cs_store_analysis_load(cs_store *st, const char *path);
/* Does the results store at path hold an analysis of this version of the
 * job whose job_fingerprint is fingerprint? 1 or 0. */
int cs_store_results_current(const char *path, const char *fingerprint);

/* Collective instances, worst first: ordered by skew_ns descending (ties by
 * comm, seq). [t0, t1) limits them to instances whose first entry lies in
 * that window (t1 = 0: no limit); comm != 0 limits them to a communicator.
 * The iterator holds a statement open: free it before writing the store. */
typedef struct cs_instance_iter cs_instance_iter;
cs_instance_iter *cs_store_instances_by_skew(cs_store *st, int64_t comm, int64_t t0, int64_t t1);
/* 1 and the next instance, 0 at the end, -1 on error. */
int cs_instance_next(cs_instance_iter *it, cs_instance *out);
void cs_instance_iter_free(cs_instance_iter *it);

/* The instance (comm, seq): 0 and *out, 1 when there is no such instance,
 * -1 on error. */
int cs_store_instance_get(cs_store *st, int64_t comm, int64_t seq, cs_instance *out);
/* The instance a span belongs to, and the waits of all its members, ordered
 * by rank (*waits malloc'ed, free it; may be NULL when nwaits is 0). Returns
 * 0, 1 when the span is not part of a collective instance, -1 on error. */
int cs_store_instance_of_span(cs_store *st, int64_t span_id, cs_instance *inst, cs_wait **waits, int *nwaits);

/* Steps in order, each with the rank that set its time. The callback
 * returns non-zero to stop (that value is returned). */
int cs_store_steps_list(cs_store *st, int (*cb)(const cs_step_row *, void *), void *arg);
/* Straggler verdicts, by cost descending. */
int cs_store_stragglers(cs_store *st, int (*cb)(const cs_straggler *, void *), void *arg);
/* Per-rank statistics, by median lateness descending, then times last. */
int cs_store_rank_stats(cs_store *st, int (*cb)(const cs_rank_stat *, void *), void *arg);
/* The layout's rows by rank (none where the analysis found no layout). */
int cs_store_layout(cs_store *st, int (*cb)(const cs_layout_row *, void *), void *arg);
/* The GPU time rows (cs_gpu_time_row) by rank, the whole trace's (step -1)
 * before the steps'; none for a trace without GPU work or analysed before
 * the table existed. */
int cs_store_gpu_time(cs_store *st, int (*cb)(const cs_gpu_time_row *, void *), void *arg);
/* The top kernels of each rank (cs_kernel_row): by rank, then the largest
 * total first; none for a trace without kernel names or analysed before
 * the table existed. */
int cs_store_kernel_stats(cs_store *st, int (*cb)(const cs_kernel_row *, void *), void *arg);
/* The stored figures of group grp (cs_group_stat_row; in no set order),
 * into a new array: 1 read, 0 not stored (an analysis made before the
 * table existed: compute them, cs_store_group_stats), -1 a failure. */
int cs_store_group_stats_stored(cs_store *st, const char *grp, cs_group_stat **out, size_t *n);
/* The stored time in traced calls of each rank, by rank, to cb as
 * cs_store_rank_busy gives it: 1 read, 0 not stored, -1 a failure or the
 * callback's non-zero. */
int cs_store_rank_busy_stored(cs_store *st, int (*cb)(int, int64_t, int64_t, int64_t, void *), void *arg);
/* The named GPU kernels, copies and sets of the trace (span_kernel), for
 * the kernel statistics: by rank, then by name id, each with its name, 1
 * for a copy or set (else 0) and its duration. None in a file without
 * kernel names. 0, a callback's non-zero, or -1 when the store cannot be
 * read. */
int cs_store_kernel_spans(cs_store *st,
                          int (*cb)(int rank, int64_t name_id, const char *name, int memory, int64_t dur_ns, void *),
                          void *arg);
/* The GPU intervals of the trace, for the GPU time pass: by rank, then by
 * begin, on the rank's own clock (raw), each with its class and stream:
 * CS_GPU_COMPUTE: compute_gpu spans (imported kernels; stream -1);
 * CS_GPU_COMM: the GPU times of communication spans (kinds coll, rooted,
 * send, recv, sendrecv; their stream, 0 when unknown); CS_GPU_MEMORY:
 * memory_gpu spans (imported copies and sets; stream -1) and CUPTI copies
 * and sets; CS_GPU_KERNEL: CUPTI kernels (their stream, 0 when unknown),
 * which may be NCCL's own. Empty intervals are left out. The callback
 * returns non-zero to stop (that value is returned); -1 when the store
 * cannot be read. */
enum { CS_GPU_COMPUTE = 0, CS_GPU_COMM = 1, CS_GPU_MEMORY = 2, CS_GPU_KERNEL = 3 };
int cs_store_gpu_intervals(cs_store *st, int (*cb)(int rank, int cls, int64_t stream, int64_t b, int64_t e, void *),
                           void *arg);
/* The slowdown attribution's rows, in the order written. */
int cs_store_slowdown(cs_store *st, int (*cb)(const cs_slowdown_row *, void *), void *arg);
/* Tail latency groups, by p99 descending. */
int cs_store_tails(cs_store *st, int (*cb)(const cs_tail_row *, void *), void *arg);
/* Apply mode's guard (fuse_guard table, written by the run, not by the
 * analysis; interpose/fuse/fuse_guard.h): a window's figure or a
 * decision, on communicator comm, as the lowest rank of the communicator
 * recorded them (every member records the same). */
typedef struct cs_guard_row {
    int64_t comm;
    char family[8]; /* "mpi" or "nccl": which engine's guard */
    char what[12];  /* "window" or "decision" */
    int64_t window;
    int setting;
    int64_t buffer;                      /* the setting's fusion buffer, 0 = unfused */
    int64_t time_ns, calls;              /* window: the ranks' summed time in MPI calls, fusable calls */
    char why[40];                        /* decision */
    double unfused_ns, chosen_ns, ratio; /* decision: medians per call; best fused / unfused */
} cs_guard_row;
/* By communicator, then window (a decision after the window it follows).
 * None in a trace without the table. */
int cs_store_fuse_guard(cs_store *st, int (*cb)(const cs_guard_row *, void *), void *arg);
/* Cost models, most points first; proposals, largest gain first. A file
 * analysed before these tables existed has none (0, no rows). */
int cs_store_models(cs_store *st, int (*cb)(const cs_model_row *, void *), void *arg);
int cs_store_proposals(cs_store *st, int (*cb)(const cs_proposal *, void *), void *arg);
/* Meta values of the analysis (e.g. "analysis_notes"): as cs_store_meta_get. */

/* ---- writing the analysis (analyzer only) ---- */

/* A writer holds one transaction over all derived tables. _begin creates
 * them when missing (CREATE TABLE IF NOT EXISTS) and empties them; _end
 * commits (commit != 0, also setting analysis_version and analysis_spans
 * = spans, and indexing; spans < 0: the rows alone, for a process's share
 * of a parallel analysis) or rolls back. The store must be open for
 * writing. */
typedef struct cs_awriter cs_awriter;
cs_awriter *cs_store_analysis_begin(cs_store *st, char *err, size_t errlen);
int cs_awriter_instance(cs_awriter *w, const cs_instance *x);
int cs_awriter_wait(cs_awriter *w, const cs_wait *x);
int cs_awriter_step(cs_awriter *w, const cs_step_row *x);
int cs_awriter_rank_stat(cs_awriter *w, const cs_rank_stat *x);
int cs_awriter_layout(cs_awriter *w, const cs_layout_row *x);
int cs_awriter_slowdown(cs_awriter *w, const cs_slowdown_row *x);
int cs_awriter_gpu_time(cs_awriter *w, const cs_gpu_time_row *x);
int cs_awriter_kernel(cs_awriter *w, const cs_kernel_row *x);
int cs_awriter_group_stat(cs_awriter *w, const cs_group_stat_row *x);
int cs_awriter_rank_busy(cs_awriter *w, const cs_rank_busy_row *x);
int cs_awriter_straggler(cs_awriter *w, const cs_straggler *x);
int cs_awriter_p2p(cs_awriter *w, const cs_p2p_row *x);
int cs_awriter_tail(cs_awriter *w, const cs_tail_row *x);
int cs_awriter_model(cs_awriter *w, const cs_model_row *x);
int cs_awriter_proposal(cs_awriter *w, const cs_proposal *x);
int cs_store_analysis_end(cs_awriter *w, int commit, int64_t spans, char *err, size_t errlen);
/* The instances that the processes of a parallel analysis wrote into the
 * stores files[0..n) (each its share of them), into w in (comm, seq)
 * order, as one process writes them. 0, or -1 with a reason. */
int cs_awriter_copy_instances(cs_awriter *w, char *const *files, int n, char *err, size_t errlen);

/* Set the clock alignment of every rank back to zero, in one transaction. */
int cs_store_clear_alignment(cs_store *st);

/* ---- extra reads for the analysis ---- */

/* Communicators with collectives: id, lowest and highest seq, members
 * (from the comms table; 0 when unknown). *out malloc'ed. */
typedef struct cs_comm_range {
    int64_t comm, seq_lo, seq_hi;
    int size;
} cs_comm_range;
int cs_store_comm_ranges(cs_store *st, cs_comm_range **out, int *n);

/* Collective spans of one communicator with seq in [lo, hi], ordered by
 * seq, rank, with RAW times (no alignment), for the clock alignment. */
cs_span_iter *cs_store_spans_raw_seq(cs_store *st, int64_t comm, int64_t lo, int64_t hi, char *err, size_t errlen);

/* The size bucket of a byte count: floor(log2(bytes)), 0 for 0 and 1. */
int cs_bytes_bucket(int64_t bytes);

/* Instances of the analysis being written, grouped by (op, comm, bucket,
 * callsite), by duration (last exit - first entry) within a group. */
typedef struct cs_inst_brief {
    int op;
    int64_t comm;
    int bucket;
    const char *callsite;
    int64_t dur_ns;
    int last_rank;
    int64_t first_entry_ns, step, skew_ns, transfer_ns;
} cs_inst_brief;
int cs_store_instances_grouped(cs_store *st, int (*cb)(const cs_inst_brief *, void *), void *arg);

/* NCCL's algorithm and protocol of each collective span (table nccl_coll;
 * nothing when the table is missing or empty). */
int cs_store_nccl_algos(cs_store *st, int (*cb)(int64_t span, const char *algo, const char *proto, void *), void *arg);

/* The executable of the lowest rank (processes.exe) into buf: 0, or -1
 * when unknown (buf ""). */
int cs_store_program(cs_store *st, char *buf, size_t len);

/* A span that ran on a GPU (an_gpu_graph.c): an imported kernel, copy or
 * set (ops compute_gpu, memory_gpu: its begin and end are the GPU's), or a
 * call with GPU times (an NCCL call, a traced CUDA launch: gb, ge). Times
 * aligned; name: the kernel's id in kernel_names, 0 when unknown; launch
 * (an imported span whose CUDA runtime launch call the trace has, table
 * span_launch): when that call began, aligned; INT64_MIN when unknown. */
typedef struct cs_gpu_op_row {
    int64_t id;
    int rank, op, tid;
    int64_t stream, b, e, gb, ge, comm, seq, bytes, callsite, name, launch;
} cs_gpu_op_row;

/* Every span that ran on a GPU, in no particular order; cb's non-zero
 * return stops. 0, or -1 (a read that failed). */
int cs_store_gpu_ops(cs_store *st, int gpu_op0, int gpu_op1, int (*cb)(const cs_gpu_op_row *, void *), void *arg);

/* All call-site labels: (rank, id, label). */
int cs_store_callsite_labels(cs_store *st, int (*cb)(int rank, int64_t id, const char *label, void *), void *arg);

/* Point-to-point operations (kinds send, recv, sendrecv; those without a
 * communicator are left out) and step markers (kind marker), with RAW
 * times, in storage order: one scan of the spans, no sort; the analysis
 * pairs and orders them itself.
 * peer, peer2 and source are ranks in comm (peer2: the source of a
 * sendrecv; source: what the completion of a receive said, -1 unknown).
 * end_ns of a nonblocking operation is its completion's end (0 when none). */
typedef struct cs_p2p_op {
    int64_t span, comm;
    int rank; /* world rank of the caller */
    int kind; /* 0 send, 1 recv, 2 sendrecv, 3 marker */
    int peer, peer2, tag, source;
    int64_t begin_ns, end_ns;
    int nonblocking;
} cs_p2p_op;
/* part >= 0: those of that part of a job read through its parts only. */
int cs_store_p2p_markers_raw(cs_store *st, int part, int (*cb)(const cs_p2p_op *, void *), void *arg);

/* The job's size as its processes said (MAX(world_size)); 0 when no
 * process said, -1 on error. */
int cs_store_world_size(cs_store *st);

#endif
