/* msg.c: one message line on stderr (msg.h). */
#include "config.h"
#include "common/msg.h"

#include <stdarg.h>
#include <stdio.h>

static void cs_msg_line(const char *fmt, va_list ap)
{
    fputs("collscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cs_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_line(fmt, ap);
    va_end(ap);
}

void cs_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_line(fmt, ap);
    va_end(ap);
}
