/* fuzz_store.c: the store reader. The bytes become DIR/trace.db (a SQLite
 * file); the analysis runs on it in process (cs_analysis_run, what
 * `collscope analyze --force` does), then the report is read back and
 * written in every format to /dev/null with every gate (what `collscope
 * report --fail-on ...` does), the diff of the run against itself, and,
 * where the TUI is built, its index. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "analyzer/report/report.h"
#ifdef CS_FUZZ_TUI
#include "tui/store_tui.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *cs_fuzz_null;

static void cs_fuzz_report(const char *path)
{
    static const char *const formats[] = { "text", "json", "markdown", "junit" };
    char err[1024];
    cs_source src;
    if (cs_source_open(path, &src, err, sizeof err) != 0)
        return;
    cs_store *st = cs_analysis_open(&src, 0, 0, NULL, err, sizeof err);
    if (!st)
        return;
    cs_report_data d;
    cs_report_trace tr;
    memset(&d, 0, sizeof d);
    memset(&tr, 0, sizeof tr);
    cs_gate *gates = NULL;
    int ng = 0;
    if (cs_report_load(st, &d) == 0 && cs_report_trace_load(st, &tr) == 0) {
        ng = cs_gates_eval("straggler=5,p99=20,step=10,verdict", &d, &d, &gates, err, sizeof err);
        if (ng < 0)
            ng = 0;
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            cs_report_format(formats[i])(cs_fuzz_null, &tr, &d, gates, ng);
        cs_diff_write(cs_fuzz_null, 0, "a", &d, "b", &d);
        cs_diff_write(cs_fuzz_null, 1, "a", &d, "b", &d);
    }
    free(gates);
    cs_report_trace_free(&tr);
    cs_report_free(&d);
    cs_store_close(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = cs_fuzz_dir();
    char path[PATH_MAX + 16], err[1024];
    if (!cs_fuzz_null && !(cs_fuzz_null = fopen("/dev/null", "w")))
        return 0;
    cs_fuzz_clear(dir);
    snprintf(path, sizeof path, "%s/trace.db", dir);
    if (cs_fuzz_write(path, data, size) != 0)
        return 0;
    cs_source src;
    if (cs_source_open(path, &src, err, sizeof err) != 0 || cs_analysis_run(&src, 1, cs_fuzz_null, err, sizeof err) < 0)
        return 0;
    cs_fuzz_report(path);
#ifdef CS_FUZZ_TUI
    cs_tui_index_info info;
    cs_tui_index_build(path, NULL, NULL, &info, err, sizeof err);
#endif
    return 0;
}
