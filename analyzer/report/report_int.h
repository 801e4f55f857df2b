/* report_int.h: what the report writers, gates and diff share inside
 * libcsanalysis (not part of its public header). */
#ifndef CS_REPORT_INT_H
#define CS_REPORT_INT_H

#include "analyzer/report/report.h"
#include "common/fmt.h"
#include "common/json.h"

/* The version of the "collscope-report" JSON format (docs/report-json.md). */
#define CS_REPORT_VERSION 2

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

#endif
