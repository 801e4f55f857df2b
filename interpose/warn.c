/* warn.c: the preload's one way to say something: a line on stderr,
 * at most once per key (warn.h). Below core, settings and every module. */
#include "config.h"
#include "interpose/warn.h"
#include "common/msg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void cs_warn_once(int *once, const char *fmt, ...)
{
    if (once && __atomic_exchange_n(once, 1, __ATOMIC_ACQ_REL))
        return;
    int saved = errno;
    char text[512], buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* one line, whatever a name in it holds (common/msg.h) */
    int n = snprintf(buf, sizeof buf, "collscope: ");
    cs_msg_name(text, buf + n, sizeof buf - (size_t)n - 1);
    n += (int)strlen(buf + n);
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0) { /* stderr closed: nothing to do */
    }
    errno = saved;
}
