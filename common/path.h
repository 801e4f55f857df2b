/* path.h: what collscope asks of a path without touching the file. */
#ifndef CS_PATH_H
#define CS_PATH_H

#include <stddef.h>

/* The folder that holds path, into out: "." for a bare name, "/" for a
 * name under the root. Returns out. */
char *cs_path_folder(const char *path, char *out, size_t len);

#endif
