/* analysis.c: the entry points of libcsanalysis for its clients: find and
 * open a trace, make sure it holds a current stored analysis, and
 * `collscope analyze` in process (the TUI's "analyse" key calls it). */
#include "config.h"
#include "analyzer/csanalysis.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

void cs_analysis_trace_path(const char *arg, char *out, size_t len)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(out, len, "%s/trace.db", arg);
    else
        snprintf(out, len, "%s", arg);
}

cs_store *cs_analysis_open_trace(const char *arg, int mode, char *err, size_t errlen)
{
    char path[4200];
    cs_analysis_trace_path(arg, path, sizeof path);
    cs_store *st;
    if (cs_store_open(path, mode, &st, err, errlen) != 0)
        return NULL;
    if (cs_store_analysis_check_input(st, err, errlen) != 0) {
        cs_store_close(st);
        return NULL;
    }
    return st;
}

/* One note line on log, as the collscope command prints its notes. */
static void cs_analysis_note(FILE *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cs_analysis_note(FILE *log, const char *fmt, ...)
{
    if (!log)
        return;
    va_list ap;
    fputs("collscope: ", log);
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
    fputc('\n', log);
}

cs_store *cs_analysis_open(const char *arg, int force, int save, FILE *log, char *err, size_t errlen)
{
    err[0] = '\0';
    cs_store *st = cs_analysis_open_trace(arg, CS_STORE_READ, err, errlen);
    if (!st)
        return NULL;
    if (!force && cs_store_analysis_current(st) == 1)
        return st;
    cs_store_close(st);
    char path[4200];
    cs_analysis_trace_path(arg, path, sizeof path);
    if (cs_store_writable(path)) {
        st = cs_analysis_open_trace(arg, CS_STORE_WRITE, err, errlen);
    } else if (save) {
        snprintf(err, errlen,
                 "%s: read-only here, so the analysis cannot be saved into it; copy it to a writable folder", path);
        return NULL;
    } else {
        /* Reading a trace never needs write access to it. */
        cs_analysis_note(log, "%s is read-only here: analysing a private copy (the results are not saved into it)",
                         path);
        if (cs_store_open_scratch(path, &st, err, errlen) != 0)
            return NULL;
    }
    if (!st)
        return NULL;
    if (cs_an_run(st, log, err, errlen) != 0) {
        if (!err[0])
            snprintf(err, errlen, "analysis failed");
        cs_store_close(st);
        return NULL;
    }
    return st;
}

int cs_analysis_run(const char *arg, int force, FILE *log, char *err, size_t errlen)
{
    cs_store *st = cs_analysis_open(arg, force, 1, log, err, errlen);
    if (!st)
        return -1;
    char notes[2048] = "";
    cs_store_meta_get(st, "analysis_notes", notes, sizeof notes);
    if (notes[0])
        cs_analysis_note(log, "%s", notes);
    cs_store_close(st);
    return 0;
}
