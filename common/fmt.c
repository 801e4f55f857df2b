/* fmt.c: how collscope prints times, sizes and value lists. */
#include "config.h"
#include "common/fmt.h"

#include <stdio.h>
#include <string.h>

static void cs__fmt_mag(uint64_t ns, const char *sign, char *buf, size_t len)
{
    double v = (double)ns;
    if (ns < 10000)
        snprintf(buf, len, "%s%.2f us", sign, v / 1e3);
    else if (ns < 10000000)
        snprintf(buf, len, "%s%.1f us", sign, v / 1e3);
    else if (ns < 10000000000ULL)
        snprintf(buf, len, "%s%.2f ms", sign, v / 1e6);
    else
        snprintf(buf, len, "%s%.2f s", sign, v / 1e9);
}

const char *cs_fmt_ns(int64_t ns, char *buf, size_t len)
{
    if (ns < 0)
        snprintf(buf, len, "-");
    else
        cs__fmt_mag((uint64_t)ns, "", buf, len);
    return buf;
}

const char *cs_fmt_dns(int64_t ns, int plus, char *buf, size_t len)
{
    if (ns < 0)
        cs__fmt_mag((uint64_t)0 - (uint64_t)ns, "-", buf, len);
    else
        cs__fmt_mag((uint64_t)ns, plus ? "+" : "", buf, len);
    return buf;
}

const char *cs_fmt_bytes(int64_t b, char *buf, size_t len)
{
    double v = (double)b;
    if (b < 0)
        snprintf(buf, len, "-");
    else if (b < 1024)
        snprintf(buf, len, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", v / 1024);
    else if (b < 1024LL * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", v / (1024 * 1024));
    else
        snprintf(buf, len, "%.2f GiB", v / (1024.0 * 1024 * 1024));
    return buf;
}

const char *cs_fmt_names(char *buf, size_t len, size_t n, const char *(*name)(size_t i, const void *arg),
                         const void *arg, int bar)
{
    size_t at = 0, k = 0, last = 0;
    for (size_t i = 0; i < n; i++)
        if (name(i, arg))
            last = i;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++) {
        const char *nm = name(i, arg);
        if (!nm)
            continue;
        const char *sep = k++ == 0 ? "" : bar ? "|" : i == last ? " or " : ", ";
        int w = snprintf(buf + at, len - at, "%s%s", sep, nm);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

static const char *const cs_fmt_textjson_name[] = { "text", "json" }; /* index: is JSON */
#define CS_FMT_NTEXTJSON (sizeof cs_fmt_textjson_name / sizeof cs_fmt_textjson_name[0])

int cs_fmt_textjson(const char *name)
{
    for (size_t i = 0; name && i < CS_FMT_NTEXTJSON; i++)
        if (strcmp(name, cs_fmt_textjson_name[i]) == 0)
            return (int)i;
    return -1;
}

static const char *cs_fmt_textjson_at(size_t i, const void *arg)
{
    (void)arg;
    return cs_fmt_textjson_name[i];
}

const char *cs_fmt_textjson_names(char *buf, size_t len, int bar)
{
    return cs_fmt_names(buf, len, CS_FMT_NTEXTJSON, cs_fmt_textjson_at, NULL, bar);
}

const char *cs_fmt_textjson_values(char *buf, size_t len)
{
    return cs_fmt_textjson_names(buf, len, 1);
}
