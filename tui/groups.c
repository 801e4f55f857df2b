/* groups.c: ranks that behave alike (see groups.h). */
#include "config.h"
#include "tui/groups.h"

#include "common/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct groups_far {
    double far;
    int i;
} groups_far;

static int groups_far_cmp(const void *x, const void *y)
{
    const groups_far *a = x, *b = y;
    if (a->far != b->far)
        return a->far < b->far ? 1 : -1;
    return a->i - b->i;
}

typedef struct groups_by {
    double v;
    int i;
} groups_by;

static int groups_by_cmp(const void *x, const void *y)
{
    const groups_by *a = x, *b = y;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->i - b->i;
}

/* The cuts of figure f in the bulk at gaps wider than gap: written to
 * cut (ascending), their number returned. */
static int groups_cuts(const double *fig, int n, const unsigned char *isalone, double *tmp, double gap, double *cut)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isalone[i])
            tmp[m++] = fig[i];
    qsort(tmp, (size_t)m, sizeof *tmp, cs_stats_cmp_dbl);
    int nc = 0;
    for (int k = 0; k + 1 < m; k++)
        if (tmp[k + 1] - tmp[k] > gap)
            cut[nc++] = tmp[k] + (tmp[k + 1] - tmp[k]) / 2;
    return nc;
}

int tui_groups_make(const double *fig, const double *floor_, int nf, int n, int budget, int *grp, int *rep,
                    unsigned char *alone)
{
    if (n <= 0 || nf <= 0)
        return 0;
    if (budget < 2)
        budget = 2;
    int ret = -1;
    double *tmp = malloc(sizeof *tmp * (size_t)n), *spread = malloc(sizeof *spread * (size_t)nf);
    double *cut = malloc(sizeof *cut * (size_t)nf * (size_t)n);
    int *ncut = malloc(sizeof *ncut * (size_t)nf);
    groups_far *far = calloc((size_t)n, sizeof *far);
    groups_by *by = malloc(sizeof *by * (size_t)n);
    unsigned char *isalone = calloc((size_t)n, 1);
    int64_t *keys = malloc(sizeof *keys * (size_t)(budget + 1));
    int *keygrp = malloc(sizeof *keygrp * (size_t)(budget + 1));
    if (!tmp || !spread || !cut || !ncut || !far || !by || !isalone || !keys || !keygrp)
        goto done;
    /* how far each item lies beyond the bulk, in spreads of the bulk */
    for (int i = 0; i < n; i++)
        far[i].i = i;
    for (int f = 0; f < nf; f++) {
        const double *x = fig + (size_t)f * (size_t)n;
        memcpy(tmp, x, sizeof *tmp * (size_t)n);
        qsort(tmp, (size_t)n, sizeof *tmp, cs_stats_cmp_dbl);
        int ilo = 0, ihi = n - 1;
        if (n >= 3) {
            /* the 10-90 % range, never its extremes: one of three may stand out */
            ilo = (int)floor(0.1 * (n - 1));
            ihi = (int)ceil(0.9 * (n - 1));
            if (ilo < 1)
                ilo = 1;
            if (ihi > n - 2)
                ihi = n - 2;
        }
        double lo = tmp[ilo], hi = tmp[ihi];
        spread[f] = hi - lo > floor_[f] ? hi - lo : floor_[f];
        if (!(spread[f] > 0))
            spread[f] = 1e-300;
        for (int i = 0; i < n; i++) {
            double d = x[i] > hi ? (x[i] - hi) / spread[f] : x[i] < lo ? (lo - x[i]) / spread[f] : 0;
            if (d > far[i].far)
                far[i].far = d;
        }
    }
    /* the items that stand out, the farthest first */
    qsort(far, (size_t)n, sizeof *far, groups_far_cmp);
    int nalone = 0;
    while (nalone < n && nalone < budget / 2 && far[nalone].far > TUI_GROUPS_FAR)
        isalone[far[nalone++].i] = 1;
    /* the bulk: split at its gaps, the wide ones only while the groups do
     * not fit */
    int nkey = 0;
    for (double gm = TUI_GROUPS_GAP;; gm *= 2) {
        int64_t radix = 1;
        int ok = 1;
        for (int f = 0; f < nf; f++) {
            ncut[f] = gm > 1e6 ? 0
                               : groups_cuts(fig + (size_t)f * (size_t)n, n, isalone, tmp, gm * spread[f],
                                             cut + (size_t)f * (size_t)n);
            if (radix > INT64_MAX / (ncut[f] + 1))
                ok = 0;
            else
                radix *= ncut[f] + 1;
        }
        nkey = 0;
        for (int i = 0; i < n && ok; i++) {
            if (isalone[i])
                continue;
            int64_t key = 0, mul = 1;
            for (int f = 0; f < nf; f++) {
                const double *c = cut + (size_t)f * (size_t)n;
                double x = fig[(size_t)f * (size_t)n + (size_t)i];
                int seg = 0;
                while (seg < ncut[f] && x > c[seg])
                    seg++;
                key += seg * mul;
                mul *= ncut[f] + 1;
            }
            int k = 0;
            while (k < nkey && keys[k] != key)
                k++;
            if (k == nkey) {
                if (nkey + nalone >= budget) {
                    ok = 0;
                    break;
                }
                keys[nkey++] = key;
            }
            grp[i] = k; /* a key for now */
        }
        if (ok)
            break;
    }
    /* group ids in order of each group's first item */
    for (int k = 0; k < nkey; k++)
        keygrp[k] = -1;
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (isalone[i]) {
            alone[ng] = 1;
            grp[i] = ng++;
        } else {
            if (keygrp[grp[i]] < 0) {
                alone[ng] = 0;
                keygrp[grp[i]] = ng++;
            }
            grp[i] = keygrp[grp[i]];
        }
    }
    /* each group's median item by figure 0 */
    for (int g = 0; g < ng; g++) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (grp[i] == g)
                by[m++] = (groups_by){ fig[i], i };
        qsort(by, (size_t)m, sizeof *by, groups_by_cmp);
        rep[g] = by[(m - 1) / 2].i;
    }
    ret = ng;
done:
    free(tmp);
    free(spread);
    free(cut);
    free(ncut);
    free(far);
    free(by);
    free(isalone);
    free(keys);
    free(keygrp);
    return ret;
}
