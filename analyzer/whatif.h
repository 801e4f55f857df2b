/* whatif.h: the cost model, the what-if replay and its proposals.
 *
 * cs__an_whatif runs after the other passes (analyzer/an_run.c): it fits a
 * cost model per communicator and collective op (an_model.c), replays
 * every rank's sequence of operations with their dependencies (an_whatif.c)
 * first as measured, then with the models, then with the variants (the
 * stragglers on time, chosen allreduces fused, exposed GPU communication
 * overlapped), and stores the models (table models), the proposals (table
 * proposals) and the replay's figures (meta keys whatif_*, docs/report-json.md). */
#ifndef CS_WHATIF_H
#define CS_WHATIF_H

#include "analyzer/analysis.h"

/* One observed transfer: n calls of `bytes` in all took t ns. */
typedef struct cs_fitpt {
    double n, bytes, t;
} cs_fitpt;

/* Fit m (alpha, gamma, beta, r2, rel_resid, cells, points, sizes, fitted,
 * note) to the points (reordered); gamma_prior: the per-call cost to assume
 * when every completion held the same number of calls (> 1), 0 none;
 * use_mean: fit to the cells' mean times (else their medians).
 * Returns 0, or -1 out of memory. */
int cs__an_model_fit(cs_fitpt *p, size_t np, double gamma_prior, int use_mean, cs_model_row *m);
/* The model's time of n calls of `bytes` in all completed together. */
double cs__an_model_time(const cs_model_row *m, double n, double bytes);

/* The analysis pass. */
int cs__an_whatif(cs_an_ctx *ctx, const cs_an_steps *steps, const cs_an_msgs *msgs, char *err, size_t errlen);

/* The memory bandwidth used for the pack and unpack copies of a fused call:
 * COLLSCOPE_MEMCPY_GBPS, else CS_WF_MEMCPY_GBPS (GB/s). */
#define CS_WF_MEMCPY_GBPS 8.0
double cs__an_whatif_memcpy_gbps(void);

#endif
