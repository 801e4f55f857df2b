/* json.c: writing JSON values to a stream. */
#include "config.h"
#include "common/json.h"

#include <math.h>

void cs_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int cs_json_num(FILE *f, const char *fmt, double v)
{
    if (!isfinite(v)) {
        fputs("null", f);
        return 1;
    }
    fprintf(f, fmt, v);
    return 0;
}

void cs_json_i64_or_null(FILE *f, int64_t v)
{
    if (v < 0)
        fputs("null", f);
    else
        fprintf(f, "%lld", (long long)v);
}
