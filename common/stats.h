/* stats.h: order statistics over arrays of numbers. */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The q-quantile (0 < q <= 1) of a sorted array by the nearest-rank
 * method: the smallest value with at least q*n values at or below it.
 * -1 for an empty array. */
int64_t cs_stats_quantile(const int64_t *sorted, size_t n, double q);

/* The upper median, v[n/2] after sorting v in place; 0 when n is 0. */
int64_t cs_stats_median_i64(int64_t *v, size_t n);
/* The median (the mean of the two middle values when n is even), after
 * sorting v in place; 0 when n is 0. */
double cs_stats_median_dbl(double *v, size_t n);
/* The upper median of |v[i] - m| (v is not changed); 0 when n is 0,
 * -1 when out of memory. */
int64_t cs_stats_mad_i64(const int64_t *v, size_t n, int64_t m);

/* qsort comparators. */
int cs_stats_cmp_i64(const void *x, const void *y);
int cs_stats_cmp_dbl(const void *x, const void *y);

#endif
