/* report_int.h: what the report writers, gates and diff share inside
 * libcsanalysis (not part of its public header). */
#ifndef CS_REPORT_INT_H
#define CS_REPORT_INT_H

#include "analyzer/report/report.h"
#include "common/fmt.h"
#include "common/json.h"

/* The version of the "collscope-report" JSON format (docs/report-json.md). */
#define CS_REPORT_VERSION 2

/* The answer, as the text report begins (report_text.c): "What limits this
 * job", then the culprit, S, the saving per step, why and where, one line
 * each; the Markdown report shows the same lines. */
void cs__report_answer(FILE *f, const cs_report_trace *t, const cs_report_data *d);

/* The answer worked out once for every writer (report_answer.c): the
 * culprit, the saving per step and every estimate of it. */
#define CS_ANSWER_EST_MAX 4
typedef struct cs_answer_est {
    const char *source; /* stragglers, steps, whatif, slowdown */
    const char *what;   /* what it measures, for a person */
    int64_t ns;
    int apart; /* left out of the agreement, its text says why */
} cs_answer_est;
typedef struct cs_answer {
    int rank;                  /* the culprit rank; -1 none */
    int stage;                 /* the culprit is the slowdown's slow stage (d->sd_culprit) */
    int by_strag;              /* named by a straggler verdict, not by the slowdown */
    const cs_straggler *top;   /* the costliest rank straggler verdict, or NULL */
    const cs_slowdown_row *sd; /* the culprit's row of the slowdown attribution, or NULL */
    char who[128];             /* "rank 2 (dp 2, pp 0, tp 0)", "pipeline pp stage 1"; "" none */
    int64_t save_ns, step_ns;  /* the saving per step (-1 none) and the median step */
    char save_how[160];        /* what the saving is */
    cs_answer_est est[CS_ANSWER_EST_MAX];
    int nest;   /* estimates of the saving (for a rank culprit) */
    int agree;  /* two or more not apart, and they agree within 25 % */
    int napart; /* estimates left out of the agreement */
} cs_answer;
void cs__report_answer_of(const cs_report_data *d, cs_answer *a);
/* The layout row of rank, or NULL; the slowdown row of kind and name, or NULL. */
const cs_layout_row *cs__report_lay(const cs_report_data *d, int rank);
const cs_slowdown_row *cs__report_sd(const cs_report_data *d, const char *kind, const char *name);

/* Where the Markdown report links for its terms: the glossary of the
 * user guide, relative to the source tree (a CI summary of this project). */
#define CS_REPORT_GLOSSARY_URL "docs/guide.md#glossary"

/* The same collective group (op name, size bucket, call site, and the
 * communicator by name where the run in has several such groups) in the
 * run in, or NULL. */
const cs_tail_row *cs__report_find_tail(const cs_report_data *d, const cs_report_data *in, const cs_tail_row *t);
/* "OP [ALGO] on COMM": how the reports name a cost model. */
void cs__report_model_name(char *buf, size_t len, const cs_report_data *d, const cs_model_row *m);

/* The one unit of the GPU time table of d: that of its longest window
 * ("s", "ms", "us" or "ns"), with the nanoseconds in one (*ns_per). */
const char *cs__report_gpu_unit(const cs_report_data *d, double *ns_per);
/* The share (0..1) of part in a row's window; 0 for an empty window. */
double cs__report_gpu_share(const cs_gpu_time_row *r, int64_t part);
/* The median of the ranks' compute shares (0..1); 0 without rows. */
double cs__report_gpu_median_compute(const cs_report_data *d);

/* The units of report.h under the names the writers use (cs_tunit: one
 * unit for a column, a table or a sentence of times or sizes). */
static inline cs_tunit cs__report_tunit(int64_t max_ns)
{
    return cs_report_tunit(max_ns);
}
/* The unit of the largest of ns[0..n). */
cs_tunit cs__report_tunit_of(const int64_t *ns, int n);
/* ns in unit u, the number alone ("7.487"; negative: "-"). */
static inline const char *cs__report_tnum(const cs_tunit *u, int64_t ns, char *buf, size_t len)
{
    return cs_report_tnum(u, ns, buf, len);
}
/* ns in unit u with the unit ("7.487 ms"; negative: "-"). */
const char *cs__report_tstr(const cs_tunit *u, int64_t ns, char *buf, size_t len);
/* A column header with its unit: "p50 (ms)". */
static inline const char *cs__report_thead(const char *name, const cs_tunit *u, char *buf, size_t len)
{
    return cs_report_thead(name, u, buf, len);
}
static inline cs_bunit cs__report_bunit(int64_t max_bytes)
{
    return cs_report_bunit(max_bytes);
}
static inline const char *cs__report_bnum(const cs_bunit *u, int64_t b, char *buf, size_t len)
{
    return cs_report_bnum(u, b, buf, len);
}
/* s fitted into w columns: whole when it fits, else its head (ending at
 * the end of a token: a file:line is never cut) and its tail with "..."
 * between. Returns buf. */
const char *cs__report_fit(const char *s, int w, char *buf, size_t len);
/* The n keys (stride bytes each) fitted into w columns, into fits (the
 * same stride), as cs__report_fit does; where two that differ would read
 * alike, both keep more of their head until they differ. */
void cs__report_fit_all(const char *keys, size_t stride, size_t n, int w, char *fits);
/* (report.c) Tail row i's call site as the tables show it: its label, and " on COMM"
 * (the communicator's name) when another of the first n rows has the same
 * op, size bucket and call site, so that no two rows read alike. */
const char *cs__report_tail_site(const cs_report_data *d, int i, int n, char *buf, size_t len);
/* Lines of a stored text ("a\nb"): the length of the line at l in *n,
 * and where the next one starts (its end when it is the last). */
const char *cs__report_line(const char *l, int *n);

#endif
