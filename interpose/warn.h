/* warn.h: one line to stderr, prefixed "collscope: ", at most once per
 * key, from anywhere in the preload (a write(2): no stdio buffer, errno
 * kept). */
#ifndef CS_WARN_H
#define CS_WARN_H

/* once: NULL (always), else a flag set by the first call. */
void cs_warn_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
