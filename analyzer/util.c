/* util.c: formatting and small statistics shared by the subcommands. */
#include "config.h"
#include "analyzer/cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *cs_fmt_ns(int64_t ns, char *buf, size_t len)
{
    double v = (double)ns;
    if (ns < 0)
        snprintf(buf, len, "-");
    else if (ns < 10000)
        snprintf(buf, len, "%.2f us", v / 1e3);
    else if (ns < 10000000)
        snprintf(buf, len, "%.1f us", v / 1e3);
    else if (ns < 10000000000LL)
        snprintf(buf, len, "%.2f ms", v / 1e6);
    else
        snprintf(buf, len, "%.2f s", v / 1e9);
    return buf;
}

const char *cs_fmt_bytes(int64_t b, char *buf, size_t len)
{
    double v = (double)b;
    if (b < 1024)
        snprintf(buf, len, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", v / 1024);
    else if (b < 1024LL * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", v / (1024 * 1024));
    else
        snprintf(buf, len, "%.2f GiB", v / (1024.0 * 1024 * 1024));
    return buf;
}

int64_t cs_quantile(const int64_t *sorted, size_t n, double q)
{
    if (n == 0)
        return -1;
    size_t k = (size_t)(q * (double)n + 0.999999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

void cs_trace_path(const char *arg, char *out, size_t len)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(out, len, "%s/trace.db", arg);
    else
        snprintf(out, len, "%s", arg);
}

cs_store *cs_open_trace(const char *arg, int mode)
{
    char path[4200], err[1024];
    cs_trace_path(arg, path, sizeof path);
    cs_store *st;
    if (cs_store_open(path, mode, &st, err, sizeof err) != 0) {
        cs_error("%s", err);
        return NULL;
    }
    return st;
}
