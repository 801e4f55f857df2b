/* util.c: formatting and small statistics shared by the subcommands. */
#include "config.h"
#include "analyzer/cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void cs_trace_path(const char *arg, char *out, size_t len)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(out, len, "%s/trace.db", arg);
    else
        snprintf(out, len, "%s", arg);
}

cs_store *cs_open_trace(const char *arg, int mode)
{
    char path[4200], err[1024];
    cs_trace_path(arg, path, sizeof path);
    cs_store *st;
    if (cs_store_open(path, mode, &st, err, sizeof err) != 0) {
        cs_error("%s", err);
        return NULL;
    }
    return st;
}
