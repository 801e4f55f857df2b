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

/* Where the Markdown report links for its terms: the glossary of the
 * user guide, relative to the source tree (a CI summary of this project). */
#define CS_REPORT_GLOSSARY_URL "docs/guide.md#glossary"

/* The same collective group (op name, size bucket, call site) in the run
 * in, or NULL. */
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

/* One unit for a column, a table or a sentence of times: that which its
 * largest value reads best in ("s", "ms", "us"), with its decimals. */
typedef struct cs_tunit {
    const char *name;
    double per; /* nanoseconds in one */
    int prec;
} cs_tunit;
cs_tunit cs__report_tunit(int64_t max_ns);
/* The unit of the largest of ns[0..n). */
cs_tunit cs__report_tunit_of(const int64_t *ns, int n);
/* ns in unit u, the number alone ("7.487"; negative: "-"). */
const char *cs__report_tnum(const cs_tunit *u, int64_t ns, char *buf, size_t len);
/* ns in unit u with the unit ("7.487 ms"; negative: "-"). */
const char *cs__report_tstr(const cs_tunit *u, int64_t ns, char *buf, size_t len);
/* A column header with its unit: "p50 (ms)". */
const char *cs__report_thead(const char *name, const cs_tunit *u, char *buf, size_t len);
/* The same for sizes ("GiB", "MiB", "KiB", "B"). */
typedef cs_tunit cs_bunit;
cs_bunit cs__report_bunit(int64_t max_bytes);
const char *cs__report_bnum(const cs_bunit *u, int64_t b, char *buf, size_t len);
/* s fitted into w columns: whole when it fits, else its head (ending at
 * the end of a token: a file:line is never cut) and its tail with "..."
 * between. Returns buf. */
const char *cs__report_fit(const char *s, int w, char *buf, size_t len);
/* Lines of a stored text ("a\nb"): the length of the line at l in *n,
 * and where the next one starts (its end when it is the last). */
const char *cs__report_line(const char *l, int *n);

#endif
