/* analysis.h: the passes of the cross-rank analysis, internal to
 * libcsanalysis (clients use analyzer/analysis/csanalysis.h): clock alignment, matching
 * of collective instances and point-to-point messages, wait states, steps,
 * straggler verdicts and tail latency. Results go to the derived tables of
 * analyzer/analysis/store_analysis.h; the report writers read them from there.
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
#include <time.h>

#include "analyzer/analysis/csanalysis.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/store.h"
#include "analyzer/analysis/store_analysis.h"

/* The analysis of the trace src by this process (an_open.c): as
 * cs_analysis_run for a trace. */
int cs__an_open_run(const cs_source *src, int force, FILE *log, char *err, size_t errlen);

/* Median (sorts v in place); 0 for an empty vector. */
int64_t cs__an_ctx_median(cs_vec *v);
/* Median absolute deviation around m. */
int64_t cs__an_ctx_mad(const cs_vec *v, int64_t m);

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

/* The analysis runs as a chain of passes (an_run.c). Each pass reads the
 * shared context and the results of earlier passes (const where it only
 * reads them) and fills its own result struct; nothing else is shared.
 *
 *   pass          reads                              writes
 *   p2p_collect   ctx                                cs_an_msgs, cs_an_steps (raw marks)
 *   align         ctx, msgs                          cs_an_clocks
 *   steps_prepare ctx, clocks                        cs_an_steps (marks aligned)
 *   match         ctx, clocks                        cs_an_steps (per step), cs_an_coll
 *   p2p           ctx, clocks, steps, msgs           cs_an_links
 *   layout        ctx, msgs                          (the layout table)
 *   verdicts      ctx, clocks, steps, coll, msgs, links
 *   tail          ctx, clocks
 *   gpu           ctx, clocks, steps                 (the gpu_time table)
 *   kernels       ctx                                (the kernel_stats table)
 *   whatif        ctx, steps, msgs
 *
 * The derived tables go to the store through ctx->w. */

/* What every pass shares: the store, the ops, the ranks, the notes. */
typedef struct cs_an_ctx {
    cs_store *st;
    cs_awriter *w;
    cs_op_row *ops;
    int nops;
    unsigned char *op_n2n; /* [nops]: cs__an_ctx_is_n2n, computed once */
    int c10d_async;        /* PyTorch's c10d ops are NCCL's (meta import_backend): asynchronous */
    int nproc;             /* processes in the trace */
    int world_size;        /* as the processes said */
    int ref_rank;          /* the reference clock (a rank id) */
    /* The ranks present, indexed densely: every per-rank table of the
     * analysis has ndense entries (per pair, ndense^2), whatever the ids
     * (0..INT32_MAX). cs__an_ctx_ix maps an id to its index. */
    int ndense;   /* ranks present */
    int *rank_of; /* [ndense]: the rank id of an index, ascending */
    int *byid;    /* [nbyid]: the index of an id, -1 when absent; only when */
    int nbyid;    /* the ids are compact (else 0: binary search in rank_of) */
    /* notes for the report: what is missing */
    char notes[2048];
} cs_an_ctx;

/* Point-to-point messages paired on raw times (cs__an_p2p_collect), in
 * the order of their (comm, src, dst, tag), then of their sends: in
 * memory, or, in a parallel analysis, in the files its processes wrote
 * (each process pairs the messages to its share of the ranks; an_msgs.c),
 * never all in one process's memory. Read them with a cs_msg_iter. */
typedef struct cs_an_msgs {
    cs_msg *msgs; /* in memory: msgs[0..nmsgs) */
    char **files; /* else files[0..nfiles), each in that order */
    int nfiles;
    size_t nmsgs;          /* how many in all */
    int64_t p2p_unmatched; /* operations without a partner */
} cs_an_msgs;

/* The messages of a cs_an_msgs in order, one at a time:
 *     cs_msg_iter it;
 *     if (cs__an_msgs_begin(msgs, &it) != 0) ...out of memory or a file
 *     for (const cs_msg *m; (m = cs__an_msgs_next(&it));) ...
 *     if (cs__an_msgs_end(&it) != 0) ...a file could not be read whole
 * Those in files are merged as they are read, a buffer a file. */
typedef struct cs_msg_iter {
    const cs_an_msgs *m;
    size_t i;
    struct cs_msg_file *f; /* [m->nfiles] */
    int *heap, nheap;      /* files by their next message */
    int err;
} cs_msg_iter;
int cs__an_msgs_begin(const cs_an_msgs *m, cs_msg_iter *it);
const cs_msg *cs__an_msgs_next(cs_msg_iter *it);
int cs__an_msgs_end(cs_msg_iter *it);
/* The messages of m (in memory) into path, freed: 0, or -1 (errno). */
int cs__an_msgs_save(cs_an_msgs *m, const char *path);
void cs__an_msgs_free(cs_an_msgs *m);

/* The clock alignment (cs__an_align) and the aligned span of the trace. */
typedef struct cs_an_clocks {
    const cs_an_ctx *ctx; /* the rank index of clk */
    cs_an_clock *clk;     /* [ndense], by rank index */
    int64_t align_instances, align_violations;
    int64_t t_first, t_last;
} cs_an_clocks;

/* Steps: their boundaries (cs__an_match_steps) and what each rank did in
 * each of them (filled by cs__an_match). */
typedef struct cs_an_steps {
    cs_vec *marks;           /* [ndense]: aligned begin of each step, per rank index */
    int step_source;         /* 0 none, 1 markers, 2 detected period */
    int step_period;         /* detected: calls per step (a polling run counts once) */
    double step_confidence;  /* detected: mean fraction of positions the period matches */
    int step_ranks_agreeing; /* detected: ranks whose calls repeat with that period */
    int step_ranks_checked;  /* detected: ranks with calls to search */
    int64_t step_comm_ns;    /* median over ranks of the median over steps of the union of
                              the rank's communication calls in the step; -1 unknown */
    int64_t nsteps;
    int64_t *late;           /* [nsteps * (ndense + 1)], cs__an_ctx_sr: lateness of each rank in each step
                              (its entry - the median entry of the others, when last) */
    int64_t *late2;          /* the same, against the next latest entry (what-if);
                              nonblocking instances add only their excess over
                              the largest one of the step so far (nblate) */
    int64_t *nblate;         /* [nsteps * (ndense + 1)], cs__an_ctx_sr: that largest nonblocking lateness */
    int64_t *xgap;           /* [nsteps * (ndense + 1)], cs__an_ctx_sr: the excess own time of each rank in
                              each step: for every complete instance, the rank whose
                              time since its exit from the communicator's previous
                              instance (its "gap") is the longest, that gap minus the
                              next longest; summed over the step */
    int64_t *step_last_exit; /* [nsteps] */
    int64_t *step_begin, *step_end, *step_time; /* [nsteps] after matching */
} cs_an_steps;

/* The collective instances (cs__an_match): counts, wait states per rank,
 * and per communicator and step the summed transfer and arrival skew of
 * its complete instances (for slow collectives). */
typedef struct cs_an_coll {
    int64_t *times_last, *imposed; /* [ndense], by rank index */
    cs_vec *lateness;              /* [ndense] lateness when last */
    int64_t instances, incomplete, coll_spans, uncompleted, exit_before_entry;
    cs_map comm_idx; /* comm id -> index < CS_AN_MAX_COMMS */
    int ncomms;
    int64_t *comm_ids;                /* [CS_AN_MAX_COMMS] */
    int64_t *comm_seq;                /* [CS_AN_MAX_COMMS]: the seq of that first instance */
    int64_t *cstep_xfer, *cstep_skew; /* [CS_AN_MAX_COMMS * nsteps] */
    int *cstep_op;                    /* [CS_AN_MAX_COMMS]: the op of the first instance */
} cs_an_coll;

/* One directed pair of the ranks present (dense indices) that exchanged
 * messages: the transfer and late-sender times of its messages, and when
 * they ran. */
typedef struct cs_an_pair {
    int src, dst;
    cs_vec xfer, late;
    int64_t t0, t1;
} cs_an_pair;

/* The point-to-point messages on the aligned time line (cs__an_p2p), per
 * directed pair. Only the pairs that exchanged messages are kept (a ring
 * of 8192 ranks has 8192 of the 67 M possible ones); pair_ix maps
 * ix(src) * ndense + ix(dst) to the pair's index. */
typedef struct cs_an_links {
    int64_t p2p_pairs;
    cs_map pair_ix;
    cs_an_pair *pair;
    size_t npairs, cap_pairs;
} cs_an_links;

/* The index of directed pair ds -> dd in l, added when new; -1 when out
 * of memory. */
int64_t cs__an_links_pair(cs_an_links *l, int ndense, int ds, int dd);
void cs__an_links_free(cs_an_links *l);

/* The index of rank id r among the ranks present when sparse (binary
 * search in rank_of); -1 when absent. */
int cs__an_ctx_ix_search(const cs_an_ctx *c, int r);

/* The dense index of rank id r (0 <= index < ndense), or -1 when r is not
 * present. */
static inline int cs__an_ctx_ix(const cs_an_ctx *c, int r)
{
    if (c->nbyid)
        return r >= 0 && r < c->nbyid ? c->byid[r] : -1;
    return cs__an_ctx_ix_search(c, r);
}

/* The index of (step s, rank id r) in the per-step, per-rank tables of
 * cs_an_steps ([nsteps * (ndense + 1)]): one column per rank present, and
 * one more, never written, that reads as zero for any other rank. */
static inline size_t cs__an_ctx_sr(const cs_an_ctx *c, int64_t s, int r)
{
    int d = cs__an_ctx_ix(c, r);
    return (size_t)s * (size_t)(c->ndense + 1) + (size_t)(d >= 0 ? d : c->ndense);
}

/* A map key for (rank id, 32-bit id of that rank: request, call site):
 * distinct for every rank in 0..INT32_MAX. */
static inline uint64_t cs__an_ctx_rank_key(int rank, int64_t id)
{
    return (uint64_t)(uint32_t)rank << 32 ^ (uint64_t)id;
}

/* Builds the rank index of c from the ranks of the processes (ids in any
 * order, repeated or negative: negative ones are left out); 0, or -1 out
 * of memory. */
int cs__an_ctx_index(cs_an_ctx *c, const int *ranks, int n);

void cs__an_ctx_note(cs_an_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cs__an_ctx_is_n2n(const cs_an_ctx *c, int op);
/* A collective whose call returns before the collective is done: NCCL's,
 * and the c10d ops of an imported trace of the NCCL backend (the CPU only
 * enqueues the work). Its call's span says nothing about when the members
 * met; its GPU times do. */
int cs__an_ctx_is_async(const cs_an_ctx *c, int op);
/* The same, computed from the op table (an_run.c caches it in op_n2n). */
int cs__an_ctx_op_is_n2n(const cs_an_ctx *c, int op);
int cs__an_ctx_kind_is(const cs_an_ctx *c, int op, const char *kind);
/* The display name of communicator `id` of the trace (libtrace/store_comms.h)
 * into buf, for the texts of verdicts and proposals; returns buf. */
const char *cs__an_ctx_commname(const cs_an_ctx *c, int64_t id, char *buf, size_t len);
/* A raw time of rank's clock on the aligned time line (as CS_ALIGNED). */
int64_t cs__an_align_time(const cs_an_clocks *k, int rank, int64_t raw);

/* A process's part in a parallel analysis (an_par.c): its processes, and
 * the folder where each writes its instances and waits (match-P.db). */
typedef struct cs_par cs_par;
typedef struct cs_an_share {
    cs_par *par;
    const char *scratch;
    int nparts;   /* processes 0..nparts-1 made the parts, part P process P's */
    int *matched; /* set by cs__an_run: 1 when every process's match store is whole */
} cs_an_share;
/* The analysis of st (an_run.c): by one process when share is NULL, else
 * by the processes of share->par, each matching its share of the
 * collective instances; only the root goes on past the match and writes
 * the results. 0, or -1 with a reason. */
int cs__an_run(cs_store *st, const cs_an_share *share, FILE *log, char *err, size_t errlen);
/* The exchanges of a parallel analysis, in order: every process's routed
 * message ends written (each process's status to the root, and the
 * root's verdict to all), what every process paired to the root, the
 * root's clocks and steps to all, every process's match to the root, then
 * the root's word that every match store is whole and closed. */
enum {
    CS_AN_X_NONE = 0,
    CS_AN_X_ROUTE = 1,
    CS_AN_X_PAIR = 2,
    CS_AN_X_STEPS = 3,
    CS_AN_X_MATCH = 4,
    CS_AN_X_MATCHED = 5
};
/* Those after stage for a process that failed: it takes part in each (an
 * empty share, which the others take as a failure), so that none waits
 * for it forever. */
void cs__an_par_finish(const cs_an_share *share, int stage);
/* The files the processes keep in the private folder: SCRATCH/STEM-I.db
 * (stems "part", "view", "match"), or SCRATCH/STEM-I.EXT for a stem
 * "STEM.EXT" ("msgs.bin"); the list of the first n (NULL when out of
 * memory), freed with cs__an_ctx_scratch_files_free. */
void cs__an_ctx_scratch_file(char *buf, size_t len, const char *scratch, const char *stem, int i);
char **cs__an_ctx_scratch_files(const char *scratch, const char *stem, int n);
void cs__an_ctx_scratch_files_free(char **files, int n);
/* Seconds from a to b (COLLSCOPE_AN_TIMES's pass timings). */
double cs__an_seconds(const struct timespec *a, const struct timespec *b);

/* The passes, in order. Each returns 0, or -1 with a reason in err.
 * cs__an_p2p_collect pairs the point-to-point messages (raw times) for the
 * alignment and for cs__an_p2p, which writes them aligned. cs__an_verdict
 * sorts the vectors of coll and links in place. */
int cs__an_p2p_collect(cs_an_ctx *ctx, cs_an_msgs *out, cs_an_steps *marks, char *err, size_t errlen);
/* The pairing of a parallel analysis, where each process pairs the
 * messages to its run of the ranks (share of nshares runs of the ranks
 * present, in their order):
 * 1. each process that made a part routes the ends of the messages in it
 *    to their shares, into the file at ends_path, and writes its step
 *    markers into the file at marks_path;
 * 2. each process reads its share's ends from the nfiles routed files,
 *    and pairs them into out (in memory);
 * 3. the root reads the step markers of the nfiles marker files. */
int cs__an_p2p_route(cs_an_ctx *ctx, int part, int nshares, const char *ends_path, const char *marks_path, char *err,
                     size_t errlen);
int cs__an_p2p_pair_routed(char *const *files, int nfiles, int share, cs_an_msgs *out, char *err, size_t errlen);
int cs__an_p2p_marks_read(cs_an_ctx *ctx, char *const *files, int nfiles, cs_an_steps *marks, char *err, size_t errlen);
int cs__an_align(cs_an_ctx *ctx, const cs_an_msgs *msgs, cs_an_clocks *out, char *err, size_t errlen);
int cs__an_match_steps(cs_an_ctx *ctx, const cs_an_clocks *clocks, cs_an_steps *out, char *err, size_t errlen);
/* The per-step tables of nmax steps (zeroed), as cs__an_match_steps
 * leaves them for the match. */
int cs__an_steps_alloc(const cs_an_ctx *ctx, cs_an_steps *steps, int64_t nmax, char *err, size_t errlen);
/* A share of the collective instances: seq_n instances of comm from
 * seq_lo (first_seq: the communicator's first). */
typedef struct cs_an_piece {
    int64_t comm, seq_lo, seq_n, first_seq;
} cs_an_piece;
int cs__an_match(cs_an_ctx *ctx, const cs_an_clocks *clocks, cs_an_steps *steps, cs_an_coll *out,
                 const cs_an_piece *pieces, size_t npieces, char *err, size_t errlen);
/* After every share is matched: the step bounds, and the notes on
 * incomplete and uncompleted instances. */
void cs__an_match_finish(cs_an_ctx *ctx, cs_an_steps *steps, cs_an_coll *coll);
int cs__an_p2p(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, const cs_an_msgs *msgs,
               cs_an_links *out, char *err, size_t errlen);
int cs__an_verdict(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, cs_an_coll *coll,
                   const cs_an_msgs *msgs, cs_an_links *links, char *err, size_t errlen);
int cs__an_tail(cs_an_ctx *ctx, const cs_an_clocks *clocks, char *err, size_t errlen);
/* The GPU time of each rank and step (an_gpu.c): the gpu_time table. */
int cs__an_gpu(cs_an_ctx *ctx, const cs_an_clocks *clocks, const cs_an_steps *steps, char *err, size_t errlen);
/* The top GPU kernels of each rank (an_kernels.c): the kernel_stats table. */
int cs__an_kernels(cs_an_ctx *ctx, char *err, size_t errlen);
/* The trace's own figures as the report prints them (an_figures.c): the
 * group_stats and rank_busy tables. */
int cs__an_figures(cs_an_ctx *ctx, char *err, size_t errlen);
/* The parallel layout (an_layout.c): meta analysis_layout and the layout table. */
int cs__an_layout(cs_an_ctx *ctx, const cs_an_msgs *msgs, char *err, size_t errlen);

#endif
