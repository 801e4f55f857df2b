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

static unsigned long json_nulls;

unsigned long cs_json_nulls(void)
{
    return json_nulls;
}

void cs_json_null_note(FILE *f, unsigned long since)
{
    if (json_nulls <= since)
        return;
    fprintf(f,
            ",\n  \"null_note\": \"%lu figure(s) were not finite numbers (NaN or infinite, from a damaged or "
            "degenerate trace) and are written as null\"\n",
            json_nulls - since);
}

int cs_json_num(FILE *f, const char *fmt, double v)
{
    if (!isfinite(v)) {
        json_nulls++;
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
