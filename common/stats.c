/* stats.c: order statistics over arrays of numbers. */
#include "config.h"
#include "common/stats.h"

#include <stdlib.h>

int cs_stats_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

int cs_stats_cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int64_t cs_stats_quantile(const int64_t *sorted, size_t n, double q)
{
    if (n == 0)
        return -1;
    double r = q * (double)n + 0.999999999;
    size_t k = r < 1 ? 1 : r > (double)n ? n : (size_t)r;
    return sorted[k - 1];
}

int64_t cs_stats_median_i64(int64_t *v, size_t n)
{
    if (!n)
        return 0;
    if (n > 1)
        qsort(v, n, sizeof *v, cs_stats_cmp_i64);
    return v[n / 2];
}

double cs_stats_median_dbl(double *v, size_t n)
{
    if (!n)
        return 0;
    if (n > 1)
        qsort(v, n, sizeof *v, cs_stats_cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t cs_stats_mad_i64(const int64_t *v, size_t n, int64_t m)
{
    if (!n)
        return 0;
    int64_t *d = malloc(n * sizeof *d);
    if (!d)
        return -1;
    for (size_t i = 0; i < n; i++)
        d[i] = v[i] > m ? v[i] - m : m - v[i];
    int64_t r = cs_stats_median_i64(d, n);
    free(d);
    return r;
}
