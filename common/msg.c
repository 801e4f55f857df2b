/* msg.c: one message line, escaped (msg.h). */
#include "config.h"
#include "common/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The escape of byte c into out (at least 5 bytes): its length, 1 for a
 * byte printed as it is. */
static size_t cs_msg_esc(unsigned char c, char *out)
{
    switch (c) {
    case '\n': memcpy(out, "\\n", 2); return 2;
    case '\t': memcpy(out, "\\t", 2); return 2;
    case '\r': memcpy(out, "\\r", 2); return 2;
    case '\\': memcpy(out, "\\\\", 2); return 2;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) {
        snprintf(out, 5, "\\x%02x", c);
        return 4;
    }
    out[0] = (char)c;
    return 1;
}

static void cs_msg_put(FILE *f, const char *s)
{
    char e[5];
    for (; *s; s++) {
        size_t n = cs_msg_esc((unsigned char)*s, e);
        fwrite(e, 1, n, f);
    }
}

void cs_msg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    char small[2048], *text = small;
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, aq);
    else if (n >= (int)sizeof small)
        text = small; /* out of memory: the message cut */
    va_end(aq);
    if (n < 0)
        small[0] = '\0';
    fputs(prefix, f);
    cs_msg_put(f, text);
    fputc('\n', f);
    if (text != small)
        free(text);
}

void cs_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_vline(stderr, "collscope: ", fmt, ap);
    va_end(ap);
}

void cs_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_vline(stderr, "collscope: ", fmt, ap);
    va_end(ap);
}

void cs_msg_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_vline(stdout, "collscope: ", fmt, ap);
    va_end(ap);
}

void cs_msg_line(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_msg_vline(f, "", fmt, ap);
    va_end(ap);
}

const char *cs_msg_name(const char *name, char *buf, size_t len)
{
    size_t o = 0;
    char e[5];
    if (!len)
        return buf;
    for (; *name; name++) {
        size_t n = cs_msg_esc((unsigned char)*name, e);
        if (o + n >= len)
            break;
        memcpy(buf + o, e, n);
        o += n;
    }
    buf[o] = '\0';
    return buf;
}
