/* report_junit.c: `collscope report --format junit`: JUnit XML, one test
 * case per gate (one informational case on the verdicts when no gate was
 * asked for), and a failing case per failure of the job. */
#include "config.h"
#include "analyzer/report/report_int.h"
#include "common/msg.h"

#include <string.h>

static void cs_report_junit_xml(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

void cs_report_junit_write(FILE *f, const cs_report_trace *t, const cs_report_data *d, const cs_gate *g, int ng)
{
    char tname[8192];
    const char *trace = cs_msg_name(t->path, tname, sizeof tname); /* one line, whatever the name holds */
    cs_gate dflt;
    if (ng == 0) { /* no gate asked: one informational case on the verdicts */
        memset(&dflt, 0, sizeof dflt);
        snprintf(dflt.name, sizeof dflt.name, "verdict");
        dflt.failed = d->nstrag > 0;
        size_t l = (size_t)snprintf(dflt.message, sizeof dflt.message, "%d straggler verdict(s)", d->nstrag);
        /* each verdict in a few words: kind, rank, and when it recurs */
        for (int i = 0; i < d->nstrag && l < sizeof dflt.message; i++) {
            const cs_straggler *s = &d->strag[i];
            if (strcmp(s->kind, "recurring") == 0 && s->period > 0)
                l += (size_t)snprintf(dflt.message + l, sizeof dflt.message - l,
                                      "%s recurring rank %d every %lld steps (phase %lld)", i ? ";" : ":", s->rank,
                                      (long long)s->period, (long long)s->phase);
            else if (strcmp(s->kind, "recurring") == 0)
                l += (size_t)snprintf(dflt.message + l, sizeof dflt.message - l, "%s recurring rank %d in steps %s",
                                      i ? ";" : ":", s->rank, s->steps);
            else
                l += (size_t)snprintf(dflt.message + l, sizeof dflt.message - l, "%s %s rank %d", i ? ";" : ":",
                                      s->kind, s->rank);
        }
        g = &dflt;
        ng = 1;
    }
    int failed = (int)d->failures.n, ncases = ng + (int)d->failures.n;
    for (int i = 0; i < ng; i++)
        failed += g[i].failed;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%d\" failures=\"%d\">\n", ncases,
            failed);
    fprintf(f, "  <testsuite name=\"collscope\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", ncases,
            failed);
    /* the job's failures (the report's Failures section): a failing case each */
    for (size_t i = 0; i < d->failures.n; i++) {
        const cs_failure *x = &d->failures.v[i];
        char ranks[256];
        cs_failure_ranks_text(x->culprits, x->nculprits, ranks, sizeof ranks);
        fprintf(f, "    <testcase classname=\"collscope.failures\" name=\"");
        cs_report_junit_xml(f, x->kind);
        fprintf(f, " rank%s ", x->nculprits > 1 ? "s" : "");
        cs_report_junit_xml(f, ranks);
        fprintf(f, "\">\n      <failure message=\"");
        cs_report_junit_xml(f, x->text);
        fprintf(f, "\">");
        cs_report_junit_xml(f, x->text);
        fprintf(f, "</failure>\n    </testcase>\n");
    }
    for (int i = 0; i < ng; i++) {
        fprintf(f, "    <testcase classname=\"collscope.gates\" name=\"");
        cs_report_junit_xml(f, g[i].name);
        fprintf(f, "\">");
        if (g[i].failed) {
            fprintf(f, "\n      <failure message=\"");
            cs_report_junit_xml(f, g[i].message);
            fprintf(f, "\">");
            cs_report_junit_xml(f, g[i].message);
            fprintf(f, "</failure>\n    ");
        } else {
            fprintf(f, "<system-out>");
            cs_report_junit_xml(f, g[i].message);
            fprintf(f, "</system-out>");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "    <system-out>trace ");
    cs_report_junit_xml(f, trace);
    fprintf(f, ": %d processes, %lld spans, %d straggler verdict(s)", d->nproc, (long long)d->spans, d->nstrag);
    if (d->notes[0]) {
        fputs("\nnotes:\n", f);
        cs_report_junit_xml(f, d->notes);
    }
    fprintf(f, "</system-out>\n");
    fprintf(f, "  </testsuite>\n</testsuites>\n");
}
