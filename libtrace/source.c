/* source.c: what a path given to a command holds (source.h). */
#include "config.h"
#include "libtrace/source.h"
#include "libtrace/store.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cs_source_open(const char *arg, cs_source *src, char *err, size_t errlen)
{
    memset(src, 0, sizeof *src);
    if (strlen(arg) >= sizeof src->arg - 16) {
        snprintf(err, errlen, "%.64s...: the path is too long", arg);
        return -1;
    }
    snprintf(src->arg, sizeof src->arg, "%s", arg);
    struct stat sb;
    src->is_dir = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode);
    if (!src->is_dir) {
        src->kind = CS_SOURCE_TRACE;
        snprintf(src->path, sizeof src->path, "%s", arg);
        return 0;
    }
    src->has_index = cs_store_index_present(arg);
    snprintf(src->path, sizeof src->path, "%s/trace.db", arg);
    if (lstat(src->path, &sb) != 0 && src->has_index) {
        src->kind = CS_SOURCE_JOB;
        snprintf(src->path, sizeof src->path, "%s", arg);
    }
    return 0;
}

const char *cs_source_kind_name(const cs_source *src)
{
    return src->kind == CS_SOURCE_JOB ? "job" : "trace";
}
