/* numarg.c: numbers from the command line and the environment, checked
 * once (see numarg.h). */
#include "config.h"
#include "common/numarg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only digits, one dot, an exponent and a sign: strtod's "nan", "inf",
 * "infinity" and hexadecimal forms are not numbers a user means here. */
static int numarg_is_decimal(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    int digits = 0;
    while (isdigit((unsigned char)*p) || *p == '.')
        digits += isdigit((unsigned char)*p++) != 0;
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return !*p || (*p == '%' && !p[1]);
}

int cs_numarg_double(const char *opt, const char *s, double lo, double hi, int pct, double *out, char *err,
                     size_t errlen)
{
    char *end = NULL;
    double v = 0;
    if (s && *s && !isspace((unsigned char)*s) && numarg_is_decimal(s)) {
        errno = 0;
        v = strtod(s, &end);
        if (pct && end && *end == '%')
            end++;
        if (end && !*end && errno != ERANGE && isfinite(v) && v >= lo && v <= hi) {
            *out = v;
            return 0;
        }
        if (end && !*end && (errno == ERANGE || !isfinite(v))) {
            snprintf(err, errlen, "%s: '%s' is out of range", opt, s);
            return -1;
        }
        if (end && !*end) {
            snprintf(err, errlen, "%s: '%s' is out of range (%g to %g)", opt, s, lo, hi);
            return -1;
        }
    }
    snprintf(err, errlen, "%s: '%s' is not a number%s", opt, s ? s : "", pct ? " (a percentage like 25 or 25%)" : "");
    return -1;
}

int cs_numarg_ll(const char *opt, const char *s, long long lo, long long hi, long long *out, char *err, size_t errlen)
{
    char *end = NULL;
    if (s && *s && !isspace((unsigned char)*s)) {
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end != s && !*end) {
            if (errno == ERANGE || v < lo || v > hi) {
                snprintf(err, errlen, "%s: '%s' is out of range (%lld to %lld)", opt, s, lo, hi);
                return -1;
            }
            *out = v;
            return 0;
        }
    }
    snprintf(err, errlen, "%s: '%s' is not a whole number", opt, s ? s : "");
    return -1;
}

double cs_numarg_env(const char *name, double lo, double hi, double def, void (*warn)(const char *msg))
{
    const char *e = getenv(name);
    if (!e)
        return def;
    double v;
    char err[256], msg[400];
    if (cs_numarg_double(name, e, lo, hi, 0, &v, err, sizeof err) == 0)
        return v;
    if (warn) {
        snprintf(msg, sizeof msg, "%s; using %g", err, def);
        warn(msg);
    }
    return def;
}
