/* warn.c: the preload's one way to say something: a line on stderr,
 * at most once per key (warn.h). Below core, settings and every module. */
#include "config.h"
#include "interpose/warn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void cs_warn_once(int *once, const char *fmt, ...)
{
    if (once && __atomic_exchange_n(once, 1, __ATOMIC_ACQ_REL))
        return;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "collscope: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    int saved = errno;
    if (write(2, buf, (size_t)n) < 0) { /* stderr closed: nothing to do */
    }
    errno = saved;
}
