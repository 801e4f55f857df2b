/* verdict.h: the straggler verdicts, one file per kind (an_verdict_*.c),
 * and what they share inside the verdict pass (an_verdict.c).
 *
 * The unit of evidence is the step: L[s][r] is the excess own time of rank
 * r in step s (steps->xgap: for every complete instance, the rank whose
 * time since its exit from the communicator's previous instance is the
 * longest, that time minus the next longest, summed over the step). It is
 * what the rank added on its own, measured on its own clock: neither the
 * clock alignment nor the order in which a collective released the ranks
 * (on an oversubscribed node spread by whole scheduler slices, which made
 * "entry minus the next latest entry" miss a 20 ms delay by up to 12 ms)
 * enters it. A rank is "late" in a step when L[s][r] exceeds the minimum
 * effect E = max(CS_MIN_EFFECT_NS, CS_MIN_EFFECT_FRAC x median step time).
 * On 2 cores shared by 4 ranks, scheduling alone makes one rank cost
 * 1-1.5 ms per step for a while: hence the 2 ms floor. Verdicts need
 * persistence or a clear window, so scheduling noise, which picks a
 * different rank each time, gives none. The first step is left out of the
 * persistence counts (warm-up).
 *
 * A new kind: a file an_verdict_KIND.c that defines one cs_verdict_kind
 * (its rule in the file's opening comment) and an entry in the table of
 * an_verdict.c; the pass runs the kinds in the table's order. */
#ifndef CS_VERDICT_H
#define CS_VERDICT_H

#include "analyzer/analysis/analysis.h"

#define CS_MIN_EFFECT_NS 2000000
#define CS_MIN_EFFECT_FRAC 0.10
#define CS_TRANSIENT_MIN 5
#define CS_PERSIST_FRAC 0.75
#define CS_TRANSIENT_DENSE 0.8
#define CS_OUTSIDE_LATE 0.15

/* The verdicts found so far. */
typedef struct cs_vlist {
    cs_straggler *a;
    int n;
    size_t cap;
} cs_vlist;

/* What every kind reads: the pass's inputs (analysis.h), the thresholds,
 * and the verdicts so far. coll and links: their vectors get sorted. */
typedef struct cs_verdict_ctx {
    cs_an_ctx *ctx;
    const cs_an_clocks *clocks;
    const cs_an_steps *steps;
    cs_an_coll *coll;
    const cs_an_msgs *msgs;
    cs_an_links *links;
    int64_t E;          /* the minimum effect */
    int64_t tmed;       /* the median step time */
    int64_t s0;         /* the first step counted (after the warm-up) */
    int64_t considered; /* the steps counted */
    cs_vlist v;
} cs_verdict_ctx;

/* One kind of verdict. Kinds about one rank have rank: called for each
 * present rank in turn, it returns 1 when it gave a verdict (the later
 * per-rank kinds then skip that rank), 0 when not, -1 out of memory.
 * Kinds about the whole run have run: 0, -1 out of memory, -2 when the
 * store cannot be read back. */
typedef struct cs_verdict_kind {
    const char *name;
    int (*rank)(cs_verdict_ctx *a, int r);
    int (*run)(cs_verdict_ctx *a);
} cs_verdict_kind;

extern const cs_verdict_kind cs__an_verdict_persistent, cs__an_verdict_transient, cs__an_verdict_recurring,
    cs__an_verdict_slow_link, cs__an_verdict_slow_collective, cs__an_verdict_slow_link_comm;

/* L[s][r]: the excess own time of rank r in step s. */
int64_t cs__an_verdict_lat(const cs_verdict_ctx *a, int64_t s, int r);
/* Append a verdict: 0, or -1 out of memory. */
int cs__an_verdict_push(cs_verdict_ctx *a, const cs_straggler *g);
/* A time in the evidence text: "12.3 ms", "4.56 ms", "830 us". */
void cs__an_verdict_ns_text(char *b, size_t len, int64_t ns);
/* The same in the unit that `unit_ns` (the largest time of the sentence)
 * gets, so that one sentence has one unit: "3.06 ms (MAD 0.02 ms)". */
void cs__an_verdict_ns_in(char *b, size_t len, int64_t ns, int64_t unit_ns);
/* "step 3" or "steps 3-9". */
void cs__an_verdict_fmt_steps(char *buf, size_t len, int64_t a, int64_t b);

#endif
