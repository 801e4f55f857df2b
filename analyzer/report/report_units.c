/* report_units.c: how the text and Markdown reports (and the TUI's tables) print a column or a
 * sentence of times or sizes: one unit for all of it, chosen by its
 * largest value (as perf and nsys stats do), and names fitted into a
 * column without cutting a token in two. */
#include "config.h"
#include "analyzer/report/report_int.h"

#include <stdio.h>
#include <string.h>

cs_tunit cs_report_tunit(int64_t max_ns)
{
    if (max_ns >= 1000000000LL)
        return (cs_tunit){ "s", 1e9, 3 };
    if (max_ns >= 1000000LL)
        return (cs_tunit){ "ms", 1e6, 3 };
    if (max_ns >= 10000LL)
        return (cs_tunit){ "us", 1e3, 1 };
    return (cs_tunit){ "us", 1e3, 2 };
}

cs_tunit cs__report_tunit_of(const int64_t *ns, int n)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        if (ns[i] > m)
            m = ns[i];
    return cs_report_tunit(m);
}

/* v in unit u: a value too small to show in it reads "<0.001", never 0 */
static const char *cs_units_num(const cs_tunit *u, int64_t v, char *buf, size_t len)
{
    double x = (double)v / u->per, least = 0.5;
    for (int i = 0; i < u->prec; i++)
        least /= 10;
    if (v > 0 && x < least)
        snprintf(buf, len, "<%.*f", u->prec, 2 * least);
    else
        snprintf(buf, len, "%.*f", u->prec, x);
    return buf;
}

const char *cs_report_tnum(const cs_tunit *u, int64_t ns, char *buf, size_t len)
{
    if (ns < 0)
        snprintf(buf, len, "-");
    else
        cs_units_num(u, ns, buf, len);
    return buf;
}

const char *cs__report_tstr(const cs_tunit *u, int64_t ns, char *buf, size_t len)
{
    char n[32];
    if (ns < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%s %s", cs_units_num(u, ns, n, sizeof n), u->name);
    return buf;
}

const char *cs_report_thead(const char *name, const cs_tunit *u, char *buf, size_t len)
{
    snprintf(buf, len, "%s (%s)", name, u->name);
    return buf;
}

cs_bunit cs_report_bunit(int64_t max_bytes)
{
    if (max_bytes >= (1LL << 30))
        return (cs_bunit){ "GiB", (double)(1LL << 30), 2 };
    if (max_bytes >= (1LL << 20))
        return (cs_bunit){ "MiB", (double)(1LL << 20), 2 };
    if (max_bytes >= (1LL << 10))
        return (cs_bunit){ "KiB", 1024.0, 2 };
    return (cs_bunit){ "B", 1.0, 0 };
}

const char *cs_report_bnum(const cs_bunit *u, int64_t b, char *buf, size_t len)
{
    if (b < 0)
        snprintf(buf, len, "-");
    else
        cs_units_num(u, b, buf, len);
    return buf;
}

/* Is c a character inside a token (a name, a number, a path, file:line)? */
static int cs_fit_tokchar(char c)
{
    return c != ' ' && c != '[' && c != ']' && c != '(' && c != ')' && c != ',';
}

/* Does the token of s that holds position i end in ":DIGITS" (a file:line,
 * which a cut would turn into another line)? */
static int cs_fit_fileline(const char *s, size_t n, int i)
{
    int a = i, b = i;
    while (a > 0 && cs_fit_tokchar(s[a - 1]))
        a--;
    while (b < (int)n && cs_fit_tokchar(s[b]))
        b++;
    int d = b;
    while (d > a && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    return d < b && d > a && s[d - 1] == ':';
}

/* Is position i of s inside a token (neither at its start nor past its end)? */
static int cs_fit_inside(const char *s, int i)
{
    return i > 0 && cs_fit_tokchar(s[i]) && cs_fit_tokchar(s[i - 1]);
}

/* cs__report_fit with the head given share/8 of the room (4: half). */
static const char *cs_fit_share(const char *s, int w, int share, char *buf, size_t len)
{
    int n = (int)strlen(s);
    if (w < 12 || n <= w) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    int room = w - 3, head = room * share / 8;
    /* a file:line too long for either half ("tmpxft_..._x.cudafe1.cpp:388
     * main [op]", "MPI_Bcast [128 B] generated_file_name.cpp:350 main"):
     * its file name loses its middle; its end, the line and the rest of
     * the name are kept whole, rather than the whole location lost to the
     * ellipsis */
    for (int t0 = 0; t0 < n;) {
        int t1 = t0;
        while (t1 < n && cs_fit_tokchar(s[t1]))
            t1++;
        if (t1 - t0 > room / 2 && cs_fit_fileline(s, (size_t)n, t0)) {
            int line = t1; /* the ":LINE" of the token */
            while (line > t0 && s[line - 1] != ':')
                line--;
            int keep = w - 3 - (n - (t1 - t0)), tail = keep / 2;
            if (tail < t1 - line + 5)
                tail = t1 - line + 5; /* ":LINE" and a few letters of the file's end */
            while (keep - tail > 4 && (s[t1 - tail] == '.' || s[t1 - tail] == '_' || s[t1 - tail] == '-'))
                tail++; /* no "....cpp": the tail starts on a letter or digit */
            if (keep - tail >= 4) {
                snprintf(buf, len, "%.*s...%s", t0 + keep - tail, s, s + t1 - tail);
                return buf;
            }
            break;
        }
        t0 = t1 < n ? t1 + 1 : n;
    }
    /* a file:line is never cut: the head ends after one or before it */
    if (cs_fit_inside(s, head) && cs_fit_fileline(s, (size_t)n, head)) {
        int end = head, start = head;
        while (end < n && cs_fit_tokchar(s[end]))
            end++;
        while (start > 0 && cs_fit_tokchar(s[start - 1]))
            start--;
        head = end <= room - 4 ? end : start;
    }
    /* nor does the tail begin inside one: it takes the whole of it when the
     * head can give the room, else begins after it */
    int t0 = n - (room - head);
    if (cs_fit_inside(s, t0) && cs_fit_fileline(s, (size_t)n, t0)) {
        int start = t0, end = t0;
        while (start > 0 && cs_fit_tokchar(s[start - 1]))
            start--;
        while (end < n && cs_fit_tokchar(s[end]))
            end++;
        if (n - start <= room - 4) {
            t0 = start;
            head = room - (n - t0);
            if (cs_fit_inside(s, head) && cs_fit_fileline(s, (size_t)n, head))
                while (head > 0 && cs_fit_tokchar(s[head - 1]))
                    head--;
        } else {
            t0 = end;
        }
    }
    /* other cuts fall between tokens where one is near (8 columns) */
    for (int k = 1; k <= 8 && cs_fit_inside(s, head) && head - k > 0; k++)
        if (!cs_fit_tokchar(s[head - k])) {
            head -= k - 1;
            break;
        }
    for (int k = 1; k <= 8 && cs_fit_inside(s, t0) && t0 + k < n; k++)
        if (!cs_fit_tokchar(s[t0 + k - 1])) {
            t0 += k;
            break;
        }
    snprintf(buf, len, "%.*s...%s", head, s, s + t0);
    return buf;
}

const char *cs__report_fit(const char *s, int w, char *buf, size_t len)
{
    return cs_fit_share(s, w, 4, buf, len);
}

void cs__report_fit_all(const char *keys, size_t stride, size_t n, int w, char *fits)
{
    for (size_t i = 0; i < n; i++)
        cs_fit_share(keys + i * stride, w, 4, fits + i * stride, stride);
    /* two keys that differ but fit alike: both keep more of their head
     * (where names of one kind differ: the function after a file:line)
     * until they differ, or the head has all the room it can take */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            for (int share = 5; share <= 7 && strcmp(fits + i * stride, fits + j * stride) == 0 &&
                                strcmp(keys + i * stride, keys + j * stride) != 0;
                 share++) {
                cs_fit_share(keys + i * stride, w, share, fits + i * stride, stride);
                cs_fit_share(keys + j * stride, w, share, fits + j * stride, stride);
            }
}

const char *cs__report_line(const char *l, int *n)
{
    const char *e = strchr(l, '\n');
    *n = e ? (int)(e - l) : (int)strlen(l);
    return l + *n + (e != NULL);
}
