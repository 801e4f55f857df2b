/* whatif_int.h: the what-if replay's data, shared by the replay and its
 * proposals (an_whatif.c) and the slowdown attribution (an_slowdown.c),
 * which replays the same graph with ideal durations. Internal to the
 * analysis. */
#ifndef CS_WHATIF_INT_H
#define CS_WHATIF_INT_H

#include "analyzer/analysis/whatif.h"
#include "analyzer/analysis/store_analysis.h"

#include <stdint.h>

/* What this pass reads and writes (analysis.h). */
typedef struct wf_io {
    cs_an_ctx *ctx;
    const cs_an_steps *steps;
    const cs_an_msgs *msgs;
} wf_io;

#define CS_WF_MAX_SPANS 20000000
/* Above this many spans, only the first steps are replayed (as many as fit;
 * at least CS_WF_MIN_STEPS), read rank by rank: the replay keeps about 130
 * bytes a span and costs about 2 s a million spans, which a 10 M-span trace
 * could not afford beside the rest of the analysis (its target: 20 s, 2 GB;
 * a 500 k budget: 1.5 s of the 10 M-span trace's analysis). */
#define CS_WF_BUDGET_SPANS 500000
#define CS_WF_MIN_STEPS 8
#define CS_WF_UNSET INT64_MIN
#define CS_WF_FUSE_THRESHOLD (64 << 10) /* apply mode's default threshold */
/* Apply mode's own costs, traced (docs/fusion.md "Apply mode's own
 * costs": bench/fuse_costs.sh on nbloop, Open MPI 4.1, 2 ranks, this 2-core
 * VM, 8-10 bucket patterns of 16-256 members of 256 B-16 KiB in fused calls
 * of 4-128 KiB):
 * - queueing one MPI_Iallreduce (a generalized request, the batch entry,
 *   the span): member spans with no fused call inside, median 60-130 ns
 *   (94-104 ns mean on the example trainer);
 * - issuing a fused call of G bytes (allocation, pack, the start of G
 *   bytes), over the start of the member it replaces: the fused span minus
 *   the members' median unfused start, fused calls of 4-128 KiB, two sets
 *   of runs: 0.37-0.96 us (4 KiB), 1.0-1.3 (8 KiB), 2.8-3.0 (32 KiB),
 *   5.2-5.7 (64 KiB), 5.1-5.7 us (128 KiB), fitted 1340 ns + 0.039 ns/B
 *   of the bytes the last member adds, on the rank's time line (far
 *   above a copy at memory speed: the fused call mallocs, packs and
 *   frees a buffer of twice its bytes each time);
 * - completing: the unpack copy at the pack's rate inside the completion
 *   call, then a cost per completion call and per member (the members'
 *   requests completed and freed,
 *   their completions traced): the completion call's end minus the fused
 *   call's completion, one fused call a step, 16-256 members: 0.9-10 us
 *   in three sets of runs, fitted 330-700 ns + 36-38 ns a member.
 * MPICH 4.0 (the same bench, 4 patterns): queueing 180 ns, completing 1450
 * ns + 42 ns a member, fused calls of 32-128 KiB issued in 8.6-39 us (MPICH
 * does part of the work in the start: its unfused starts grow by 0.27
 * ns/B, 421 ns at 256 B, 911 at 2 KiB), taken as 1000 ns + 0.27 ns/B. The costs are chosen by the MPI the
 * trace ran (processes.mpi); any other (NCCL's apply mode) takes Open
 * MPI's. */
typedef struct wf_fcost {
    const char *mpi;       /* processes.mpi */
    int64_t queue;         /* queueing a member, ns (CS_WF_QUEUE_NS for Open MPI) */
    int64_t issue;         /* issuing the fused call, ns ... */
    int64_t issue_per_kib; /* ... + ns per KiB the last member adds (pack and start) */
    int64_t unpack_per_kib;
    int64_t done, done_member; /* completing the members: ns per completion call, per member */
} wf_fcost;
#define CS_WF_QUEUE_NS 100
/* The smallest estimated gain, a fraction of the median step, that a
 * proposal is made for: below it, the run-to-run noise of a step on a
 * shared node (several per cent) hides it, and a rewrite is not worth it. */
#define CS_WF_MIN_GAIN 0.05
/* The margin around CS_WF_MIN_GAIN within which one trace is too thin a
 * piece of evidence: reruns of one program give estimates that spread by
 * a factor of 1.5 around their middle (nbloop, 128 x 256 B, 600 us of
 * compute, Open MPI, 2 ranks, 5 reruns: 3.4-7.0 % of the step, the
 * tracer's own start cost and the step moving with the load; neither the
 * interval over the steps nor the two halves of one run show that
 * spread). A gain is proposed from CS_WF_MIN_GAIN x CS_WF_MARGIN up (and
 * with the 95 % interval of its median over the steps above CS_WF_MIN_GAIN,
 * and the median over each half of the steps above it too),
 * declined as below the threshold under CS_WF_MIN_GAIN / CS_WF_MARGIN, and
 * declined as too thin in between: a proposal then comes
 * and goes only between runs whose estimates differ by more than the
 * square of the margin. */
#define CS_WF_MARGIN 1.5
/* The largest error of the modelled replay's median step that proposals
 * are built on (the models explain the calls but not the step beyond it). */
#define CS_WF_MAX_MODEL_ERROR 0.5
/* An alpha-only model of blocking calls (one size: beta unknown) counts
 * each call fusion saves as one alpha, which holds only where the bytes cost
 * little: not when copying a call's bytes once at the memory bandwidth
 * already takes more than this share of alpha (fitted to the cells'
 * medians, the typical call; 16 blocking calls of 64 KiB,
 * Open MPI, 4 ranks: copying one takes 15 % of its 56 us; fused into 2 they
 * measured -12 to +19 %, median -1 %). */
#define CS_WF_ALPHA_ONLY_COPY 0.05

enum { WF_LOCAL, WF_COLL, WF_NBCOLL, WF_WAIT, WF_RECV, WF_MARK };

typedef struct wf_span {
    int64_t id, b, e, bytes, comm, seq, callsite, lag;
    int64_t res; /* lag - the mean lag of the members of its instance (or completion group) */
    uint32_t flags;
    int op, rank, tid, cls, inst, dtype, lane, step;
    int dep0, ndep;
    int nowait; /* ended before its dependencies: replays as local */
} wf_span;

typedef struct wf_inst {
    int64_t comm, seq, bytes, L; /* L: measured last arrival */
    int op, nmem, model, calls, nb, algo;
} wf_inst;

typedef struct wf_class { /* fusion candidates: one (comm, op, dtype, call site) */
    int64_t comm, callsite;
    int op, dtype, nb;
    int64_t calls, minb, maxb, bytes, maxrun;
    int *runs; /* pairs (first span index on the ref lane, length) */
    size_t nruns, cap;
    char label[160];
} wf_class;

typedef struct wf {
    wf_io *a;
    wf_span *s;
    size_t ns;
    int nlanes, *lane_lo, *lane_hi, *lane_rank, *lane_nmark;
    wf_inst *in;
    int ninst;
    size_t capi;
    int64_t *dep;
    size_t ndep;
    cs_model_row *models;
    cs_model_fit *mfit; /* [nmodels]: what each model's data separated */
    int nmodels;
    size_t capModels, capFit;
    /* steps: boundary spans (step, span index) */
    int nsteps;
    int maxsteps; /* > 0: only steps 0..maxsteps-1 were loaded */
    int *bstep, *bspan;
    size_t nb;
    int64_t *mbeg; /* measured begin of each step */
    /* replay scratch */
    int64_t *bp, *ep, *lmax, *lbuf;
    int *cnt, *stamp;
    int *pos;
    const wf_fcost *fc; /* apply mode's costs for this trace's MPI; NULL: Open MPI's */
    char **algos;
    int nalgos;
    size_t capAlgos;
    int deadlocked; /* the measured replay deadlocked: no CPU replay */
} wf;

/* A variant of the replay. */
typedef struct wf_var {
    const int64_t *gap; /* per span; NULL: measured */
    int model;          /* 1: modelled transfers where a model exists */
    const int *ifg;     /* per instance: fused group (instance index >= ninst), -1 none; NULL: no fusion */
    const wf_inst *vin; /* the fused groups, w->ninst + i */
    int nvin;
    const char *flast;  /* per span: the last member of its group on its lane */
    int drop_members;   /* fused nonblocking members before the last take no time (the program
                              issues the fused call itself, as with bigger buckets of its own) */
    const int64_t *lag; /* per span: the transfer after the last arrival; NULL: measured */
    const int64_t *dur; /* per span: the duration of a local span (a blocking send); NULL: measured */
} wf_var;

/* Replay one variant into w->bp / w->ep. Returns 0, or -1 when the
 * dependencies deadlock (an inconsistent trace). */
int cs__wf_replay(wf *w, const wf_var *v);
/* Median step time of one replay (begins in bp), over steps 0..n-2 (the
 * last step has no next begin); -1 when there are fewer than 2 steps. */
int64_t cs__wf_step_median(const wf *w, const int64_t *bp, int64_t *buf);
/* Each step's begin in one replay (begins in bp): the earliest of its
 * boundary spans, INT64_MAX for a step with none; out[nsteps]. */
void cs__wf_step_begins(const wf *w, const int64_t *bp, int64_t *out);

#endif
