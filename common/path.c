/* path.c: see path.h. */
#include "config.h"
#include "common/path.h"

#include <stdio.h>
#include <string.h>

char *cs_path_folder(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, len, ".");
    else
        slash[slash == out] = '\0';
    return out;
}
