/* whatif.h: the cost model, the what-if replay and its proposals.
 *
 * cs__an_whatif runs after the other passes (analyzer/analysis/an_run.c): it fits a
 * cost model per communicator and collective op (an_model.c), replays
 * every rank's sequence of operations with their dependencies (an_whatif.c)
 * first as measured, then with the models, then with the variants (the
 * stragglers on time, chosen allreduces fused, exposed GPU communication
 * overlapped), and stores the models (table models), the proposals (table
 * proposals) and the replay's figures (meta keys whatif_*, docs/report-json.md). */
#ifndef CS_WHATIF_H
#define CS_WHATIF_H

#include "analyzer/analysis/analysis.h"

/* One observed transfer: n calls of `bytes` in all took t ns. */
typedef struct cs_fitpt {
    double n, bytes, t;
} cs_fitpt;

/* What the data of a fit could tell apart (an_model.c). */
typedef struct cs_model_fit {
    int nmin, nmax; /* calls per completion, over the points */
    int sizes;      /* size buckets among the cells */
    int separated;  /* the terms a fusion gain rests on were fitted: alpha and
                        beta from 2 sizes or more (n = 1), gamma from 2 values
                        of n or more; 0 for alpha-only models, and where every
                        completion held the same n > 1 (gamma 0 by assumption) */
} cs_model_fit;

/* The largest relative residual of the cells (rel_resid) of a model that a
 * proposal may rest on. */
#define CS_MODEL_MAX_RESID 0.25

/* Fit m (alpha, gamma, beta, r2, rel_resid, cells, points, sizes, fitted,
 * note) to the points (reordered); use_mean: fit to the cells' mean times
 * (else their medians); fi (may be NULL): what the data separated.
 * Returns 0, or -1 out of memory. */
int cs__an_model_fit(cs_fitpt *p, size_t np, int use_mean, cs_model_row *m, cs_model_fit *fi);
/* The model's time of n calls of `bytes` in all completed together. */
double cs__an_model_time(const cs_model_row *m, double n, double bytes);

/* The analysis pass. */
/* What runs on the replay's state right after the measured replay (the
 * pass table gives cs__an_slowdown): 0, or -1 out of memory. */
struct wf;
typedef int (*cs_an_replay_hook)(struct wf *w, int64_t *buf);
int cs__an_whatif(cs_an_ctx *ctx, const cs_an_steps *steps, const cs_an_msgs *msgs, cs_an_replay_hook after_replay,
                  char *err, size_t errlen);
/* The slowdown attribution (an_slowdown.c), after the measured replay:
 * the ideal replay, S, its attribution by rank, group, op and step, the
 * verdict; into the slowdown table and meta keys slowdown_*. 0, or -1 out
 * of memory. */
int cs__an_slowdown(struct wf *w, int64_t *buf);

/* The memory bandwidth used for the pack and unpack copies of a fused call:
 * COLLSCOPE_MEMCPY_GBPS, else CS_WF_MEMCPY_GBPS (GB/s). */
#define CS_WF_MEMCPY_GBPS 8.0
double cs__an_whatif_memcpy_gbps(void);

#endif
