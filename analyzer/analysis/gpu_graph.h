/* gpu_graph.h: the GPU graph of a job (an_gpu_graph.c), what the slowdown
 * attribution (an_slowdown.c) replays where the trace has GPU spans.
 * Internal to the analysis; docs/analysis.md "Slowdown on the GPU". */
#ifndef CS_GPU_GRAPH_H
#define CS_GPU_GRAPH_H

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/whatif_int.h"

#include <stdint.h>

/* A dependency across streams is tight when the op began within this
 * long of the other's end: what a stream's wait for an event recorded on
 * another (a gradient allreduce waiting for the backward kernels, the
 * optimizer waiting for the allreduce, a forward waiting for its receive)
 * looks like; a real stream-wait-event resumes the waiting stream within
 * a few us. Tight dependencies seen twice are learnt for every rank and
 * step (an_gpu_graph.c, gg_edges). */
#define CS_GG_DEP_NS 10000

/* An op's typical duration (transfer): this quantile of the same op over
 * the ranks and steps. Not the median: where a slow stage is half the
 * pipeline (pp 2), the median of its kernels and the others' is halfway
 * between them; a lower quantile still drops a rank's noise (a kernel's
 * jitter of a few per cent moves it by as much). */
#define CS_GG_TYPICAL_Q 0.25

/* On the CPU threads (gg.cpu) the typical duration is the median, as on
 * the CPU's graph, and it replaces the op's own even where it is longer:
 * four ranks sharing two cores stretch their ops by their turns on a
 * core, and the lower quartile, or never more than the op's own, took
 * that noise for a slowdown. */
#define CS_GG_CPU_Q 0.5

enum { GG_COMPUTE, GG_MEMORY, GG_COMM };

typedef struct gg_op {
    int64_t b, e;  /* measured begin and end, aligned */
    int64_t key;   /* what the operation is (kernel name, op and bytes) */
    int64_t slack; /* its begin after its last predecessor's end: the launch's lateness */
    int d;         /* rank index */
    int lane;      /* (rank, stream) lane; ops sorted by (d, lane, b) */
    int dep;       /* the op of another stream it waits for, -1 none */
    int inst;      /* its collective or p2p pair, -1 none (a local op) */
    int step, kind;
} gg_op;

typedef struct gg {
    cs_an_ctx *ctx;
    gg_op *op;
    size_t n, cap;
    int nsteps, ninst;
    int64_t *xa, *xi;  /* [n] actual and ideal: a local op's duration, a
                         communication's transfer after its last member began */
    int64_t *xv;       /* [n] a variant's */
    int64_t *si;       /* [n] the ideal slack, where the slack is compute (cpu); else NULL */
    int cpu;           /* 1: built from the CPU threads of a trace without GPU activity */
    unsigned char *nw; /* [n] cpu: a send, which its receive waits for but which waits for nothing */
    int64_t *bp, *ep, *ready;
    int *need, *indeg, *succ_lo, *succ, *stack; /* succ: the edges across streams (CSR) */
    uint64_t *ident;                            /* [n] the op's identity (key, occurrence in its rank's step), 0 none */
    int *ilo, *imem, *ibeg;                     /* instance members (CSR), how many began */
    int64_t *iL;
    int *owner;                                /* [n] the rank index whose durations the op takes: its own; a
                               transfer's, its instance's owner (the member slow the most) */
    int64_t *excess, *sexc;                    /* [ndense], [ndense * nsteps]: each rank's own excess */
    int ndeps, ntight, nlearnt, ncomm, nlocal; /* deps (within CS_GG_DEP_NS), transfers, local ops */
    int nlaunch;                               /* edges from the launch order (a receive, then its compute) */
} gg;

/* The GPU graph of the trace behind w (its ranks, steps, messages): 1 with
 * *out built, 0 when the trace has no GPU spans (or too few steps), -1 out
 * of memory or a failed read (err). A trace without GPU activity whose
 * ranks communicate on threads other than the one with their step
 * markers (an imported PyTorch job on gloo) gets the same graph of its
 * CPU threads (out->cpu): lanes per (rank, thread), the compute spans and
 * the communication, and the time between an op and its predecessors
 * (its slack: the host's own work between traced ops) compute too, with
 * its ideal (out->si). */
int cs__gg_build(wf *w, gg *out, char *err, size_t errlen);
/* Replay with rank index d's ops at their actual durations where on[d]
 * (compute ops where comp, transfers where comm), the others ideal; each
 * step's begin into stepb[nsteps]. The median step time, or -1 (no whole
 * step, or a deadlock). */
int64_t cs__gg_replay(gg *g, const unsigned char *on, int comp, int comm, int64_t *stepb, int64_t *buf);
/* The measured median step time (buf: [nsteps]). */
int64_t cs__gg_measured(gg *g, int64_t *buf);
void cs__gg_free(gg *g);

#endif
