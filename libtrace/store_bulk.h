/* store_bulk.h: writing a whole trace from code, in one transaction: the
 * synthetic traces of the benchmarks and tests (bench/gen_trace.c). A
 * traced job's stores are made from its logs instead (store.h).
 *
 *     cs_store_create(path, &st, ...);
 *     cs_store_bulk *b = cs_store_bulk_begin(st, ...);
 *     cs_store_bulk_span(b, &span) ... cs_store_bulk_process(b, &proc) ...
 *     cs_store_bulk_end(b, 1, ...);
 *     cs_store_finish(st, "generator", ...);
 */
#ifndef CS_STORE_BULK_H
#define CS_STORE_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/store.h"

typedef struct cs_store_bulk cs_store_bulk;

/* Start a bulk load into st (a new store): NULL with a reason on error. */
cs_store_bulk *cs_store_bulk_begin(cs_store *st, char *err, size_t errlen);
/* Commit (or roll back) the load; frees b. 0, or -1 with a reason. */
int cs_store_bulk_end(cs_store_bulk *b, int commit, char *err, size_t errlen);
/* SQLite's message for the last write that failed ("out of memory",
 * "database or disk is full"). */
const char *cs_store_bulk_errmsg(const cs_store_bulk *b);

/* A process of the job (its processes and clocks rows). */
typedef struct cs_store_bulk_proc {
    int rank, pid, world_size;
    const char *host, *exe, *mpi, *tool_version; /* NULL: none */
    int64_t start_ns, end_ns, spans;
    int callsites;
} cs_store_bulk_proc;
int cs_store_bulk_process(cs_store_bulk *b, const cs_store_bulk_proc *p);

/* A rank's membership of communicator id (created at created_ns). */
int cs_store_bulk_comm(cs_store_bulk *b, int64_t id, int rank, int comm_rank, int size, int64_t created_ns);

/* A call site of a rank with its label and one frame. */
typedef struct cs_store_bulk_site {
    int rank;
    int64_t id;
    const char *label;
    uint64_t pc, offset;
    const char *module, *func, *file;
    int line;
} cs_store_bulk_site;
int cs_store_bulk_callsite(cs_store_bulk *b, const cs_store_bulk_site *x);

/* One span; its op by id of the ops table (ops.gen.h). The stream, group
 * and GPU columns stay empty. */
int cs_store_bulk_span(cs_store_bulk *b, const cs_span *x);

/* One span with its GPU columns too: stream (set when x->stream or GPU
 * times are), grp, corr and gpu_begin_ns/gpu_end_ns (NULL where 0). */
int cs_store_bulk_span_gpu(cs_store_bulk *b, const cs_span *x, int64_t corr);

/* The name of the GPU kernel, copy or set of span (written before): into
 * kernel_names (each name once) and span_kernel. */
int cs_store_bulk_kernel_name(cs_store_bulk *b, int64_t span, const char *name);

/* The launch of imported GPU span `span`: its CUDA runtime call began
 * lead_ns before it (table span_launch). 0, or -1. */
int cs_store_bulk_span_launch(cs_store_bulk *b, int64_t span, int64_t lead_ns);

/* A rank's membership of a communicator made as `how` (world, other, ...;
 * NULL: other), with its name (NULL: none). */
typedef struct cs_store_bulk_comm_def {
    int64_t id;
    int rank, comm_rank, size;
    int64_t created_ns;
    const char *how, *name;
} cs_store_bulk_comm_def;
int cs_store_bulk_comm_named(cs_store_bulk *b, const cs_store_bulk_comm_def *c);

/* Spans of rank from_rank become to_rank's, their times (GPU times too)
 * moved by add_ns: for a writer that learns a rank or a clock base only
 * after writing spans. */
int cs_store_bulk_shift(cs_store_bulk *b, int from_rank, int to_rank, int64_t add_ns);

/* Number the collectives (kinds coll, rooted) that have a communicator but
 * no sequence number, per communicator in the order each member issued
 * them (0, 1, ...), where every member present in the trace has the same
 * count and the same ops in the same order. A communicator whose members
 * disagree is left unnumbered and given to cb: its id, the count the
 * most members agree on, and the disagreeing ranks as "3 (9), 5 (0)"
 * (rank and its count). *ndisagree counts them. 0, or -1 (read or write
 * error, out of memory, or cb returned < 0). */
typedef int (*cs_store_bulk_disagree_cb)(int64_t comm, size_t agreed, const char *ranks, void *arg);
int cs_store_bulk_number_seqs(cs_store *st, cs_store_bulk_disagree_cb cb, void *arg, int *ndisagree);

#endif
