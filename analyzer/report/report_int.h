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

#endif
