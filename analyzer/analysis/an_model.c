/* an_model.c: the cost model of a collective, fitted to the completion
 * times of the trace's collectives.
 *
 * A point is one observed completion: n calls of `bytes` in all that
 * completed together, and the time t from the start of their last member
 * (the latest entry of any rank into any of them) to the end of the call
 * that completed them (see analyzer/analysis/an_whatif.c for how points are taken:
 * a blocking instance gives one point, n = 1, its exit - the last entry;
 * nonblocking collectives completed by one Wait/Waitall give one point,
 * n = the calls it completed, its exit - max(its entry, the last member's
 * start); the start calls' own durations are not part of any point). The
 * model is
 *
 *     t = alpha + (n - 1) * gamma + bytes * beta
 *
 * alpha: the time of one completion (its latency), gamma: what each further
 * call completed in the same completion adds, beta: the cost of a byte.
 * Blocking calls never overlap, so gamma = alpha for them (n calls cost n
 * alphas). It is fitted by weighted least squares to the MEAN or the MEDIAN
 * time of each cell of points with the same n and size bucket (floor log2
 * of bytes per call), weighted by the cell's count; which one is the
 * caller's choice (an_whatif.c fits both and keeps the one whose replay
 * reproduces the measured step times better: on a loaded node the mean
 * keeps the scheduler slices a step absorbs, while a right-skewed
 * distribution makes it overshoot the median step).
 *   - all points n = 1: t = alpha + bytes * beta (2 unknowns);
 *   - n varies: t = lambda + n * gamma + bytes * beta, alpha = lambda + gamma;
 *   - every completion held the same n > 1 (K buckets and one Waitall every
 *     step): the per-call cost inside the completion cannot be told from
 *     the transfer. The calls are then taken as overlapping, gamma = 0:
 *     alpha is the whole completion's latency and fusing them changes the
 *     completion only by its bytes (the starts are replayed as measured, so
 *     what fusion saves is what the data shows: the starts' overhead).
 * Degenerate cases are stated in the row's note, with `fitted` = 0:
 *   - fewer than 3 points, one cell only (one size and n), or cells that
 *     cannot separate the terms: beta unknown (0), alpha = the mean (median)
 *     time per call (per completion for n > 1, gamma 0 as above);
 *   - a fitted beta < 0: the same; a fitted alpha < 0: alpha = 0 and beta
 *     through the origin.
 * Quality: r2 over the cells (weighted, about their weighted mean; 0 when
 * not fitted) and rel_resid, the relative residual of the cells:
 * sum(w |t - model|) / sum(w t) over the cells' fitted times (means or
 * medians, as the note says). cs__an_model_fit also says which terms the
 * data separated (cs_model_fit), what a proposal may rest on. */
#include "config.h"
#include "analyzer/analysis/whatif.h"
#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double cs_dmean(double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / (double)n : 0;
}

static int cs_fp_cmp(const void *x, const void *y)
{
    const cs_fitpt *a = x, *b = y;
    int ba = cs_bytes_bucket(a->n > 0 ? (int64_t)(a->bytes / a->n) : 0);
    int bb = cs_bytes_bucket(b->n > 0 ? (int64_t)(b->bytes / b->n) : 0);
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (ba != bb)
        return ba < bb ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Weighted least squares of t on the given regressors (columns of X, k <= 3)
 * without intercept. 0 and the coefficients in c, or -1 when singular. */
static int cs_wls(const double (*X)[3], const double *t, const double *w, size_t n, int k, double *c)
{
    double A[3][4] = { { 0 } };
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < k; r++) {
            for (int q = 0; q < k; q++)
                A[r][q] += w[i] * X[i][r] * X[i][q];
            A[r][k] += w[i] * X[i][r] * t[i];
        }
    double scale[3];
    for (int r = 0; r < k; r++)
        scale[r] = A[r][r] > 0 ? A[r][r] : 1;
    for (int col = 0; col < k; col++) { /* Gauss-Jordan with partial pivoting */
        int piv = col;
        for (int r = col + 1; r < k; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col]))
                piv = r;
        if (fabs(A[piv][col]) < 1e-9 * scale[col])
            return -1;
        for (int q = 0; q <= k; q++) {
            double tmp = A[col][q];
            A[col][q] = A[piv][q];
            A[piv][q] = tmp;
        }
        for (int r = 0; r < k; r++) {
            if (r == col)
                continue;
            double f = A[r][col] / A[col][col];
            for (int q = col; q <= k; q++)
                A[r][q] -= f * A[col][q];
        }
    }
    for (int r = 0; r < k; r++)
        c[r] = A[r][k] / A[r][r];
    return 0;
}

int cs__an_model_fit(cs_fitpt *p, size_t np, int use_mean, cs_model_row *m, cs_model_fit *fi)
{
    cs_model_fit fdummy;
    if (!fi)
        fi = &fdummy;
    memset(fi, 0, sizeof *fi);
    double (*loc)(double *, size_t) = use_mean ? cs_dmean : cs_stats_median_dbl;
    m->points = (int64_t)np;
    m->cells = 0;
    m->alpha_ns = m->gamma_ns = m->beta_ns_per_byte = m->r2 = m->rel_resid = 0;
    m->fitted = 0;
    m->min_bytes = INT64_MAX;
    m->max_bytes = 0;
    if (!np) {
        m->min_bytes = 0;
        snprintf(m->note, sizeof m->note, "no transfer observed");
        return 0;
    }
    double *tmp = malloc(np * sizeof *tmp);
    typedef struct {
        double n, B, t, w;
    } cell;
    cell *c = malloc(np * sizeof *c);
    double(*X)[3] = malloc(np * sizeof *X);
    double *ct = malloc(np * sizeof *ct), *cw = malloc(np * sizeof *cw);
    if (!tmp || !c || !X || !ct || !cw) {
        free(tmp);
        free(c);
        free(X);
        free(ct);
        free(cw);
        return -1;
    }
    int nmin = INT32_MAX, nmax = 0;
    for (size_t i = 0; i < np; i++) {
        int64_t per = p[i].n > 0 ? (int64_t)(p[i].bytes / p[i].n) : 0;
        if (per < m->min_bytes)
            m->min_bytes = per;
        if (per > m->max_bytes)
            m->max_bytes = per;
        if (p[i].n < nmin)
            nmin = (int)p[i].n;
        if (p[i].n > nmax)
            nmax = (int)p[i].n;
    }
    qsort(p, np, sizeof *p, cs_fp_cmp);
    /* cells: same n, same size bucket; mean or median of t, median of bytes */
    size_t nc = 0;
    for (size_t i = 0; i < np;) {
        size_t j = i;
        while (j < np && p[j].n == p[i].n &&
               cs_bytes_bucket((int64_t)(p[j].bytes / p[j].n)) == cs_bytes_bucket((int64_t)(p[i].bytes / p[i].n)))
            j++;
        size_t k = j - i;
        for (size_t q = 0; q < k; q++)
            tmp[q] = p[i + q].t;
        double tm = loc(tmp, k);
        for (size_t q = 0; q < k; q++)
            tmp[q] = p[i + q].bytes;
        double bm = cs_stats_median_dbl(tmp, k);
        c[nc++] = (cell){ p[i].n, bm, tm, (double)k };
        i = j;
    }
    m->cells = (int64_t)nc;
    fi->nmin = nmin;
    fi->nmax = nmax;
    for (size_t i = 0; i < nc; i++) {
        int sep = 1;
        for (size_t j = 0; j < i && sep; j++)
            sep = cs_bytes_bucket((int64_t)(c[j].B / c[j].n)) != cs_bytes_bucket((int64_t)(c[i].B / c[i].n));
        fi->sizes += sep;
    }
    for (size_t i = 0; i < nc; i++) {
        ct[i] = c[i].t;
        cw[i] = c[i].w;
    }
    double co[3];
    int ok = 0;
    const char *why = np < 3   ? "fewer than 3 points"
                      : nc < 2 ? "one size only"
                               : "sizes too alike to separate alpha and beta";
    if (np >= 3 && nc >= 2 && nmin == nmax) {
        /* one number of calls per completion (n = 1: blocking calls):
         * t = n * a + bytes * beta */
        for (size_t i = 0; i < nc; i++) {
            X[i][0] = c[i].n;
            X[i][1] = c[i].B;
        }
        if (cs_wls((const double(*)[3])X, ct, cw, nc, 2, co) == 0 && co[1] >= 0) {
            if (co[0] < 0) {
                for (size_t i = 0; i < nc; i++)
                    X[i][0] = c[i].B;
                cs_wls((const double(*)[3])X, ct, cw, nc, 1, co + 1);
                co[0] = 0;
            }
            if (nmin == 1) {
                m->alpha_ns = m->gamma_ns = co[0];
            } else { /* the calls of a completion overlap: its latency is alpha */
                m->gamma_ns = 0;
                m->alpha_ns = nmin * co[0];
            }
            m->beta_ns_per_byte = co[1];
            ok = 1;
            fi->separated = nmin == 1;
        } else if (co[1] < 0) {
            why = "the fitted beta was negative";
        }
    } else if (np >= 3 && nc >= 3 && nmin != nmax) {
        /* completions of different numbers of calls: t = lambda + n * gamma + bytes * beta */
        for (size_t i = 0; i < nc; i++) {
            X[i][0] = 1;
            X[i][1] = c[i].n;
            X[i][2] = c[i].B;
        }
        if (cs_wls((const double(*)[3])X, ct, cw, nc, 3, co) == 0 && co[0] >= 0 && co[1] >= 0 && co[2] >= 0) {
            m->gamma_ns = co[1];
            m->alpha_ns = co[0] + co[1];
            m->beta_ns_per_byte = co[2];
            ok = 1;
            fi->separated = 1;
        } else {
            why = "no consistent fit of latency, per-call and per-byte costs";
        }
    }
    if (ok) {
        m->fitted = 1;
        snprintf(m->note, sizeof m->note, "fitted to cell %s", use_mean ? "means" : "medians");
        if (nmin == nmax && nmin > 1)
            snprintf(m->note, sizeof m->note,
                     "fitted to cell %s; %d calls in every completion: per-call cost not separable, "
                     "calls taken as overlapping (gamma 0)",
                     use_mean ? "means" : "medians", nmin);
    } else {
        /* alpha only: the mean time per call, beta unknown */
        for (size_t i = 0; i < np; i++)
            tmp[i] = p[i].t;
        double tm = loc(tmp, np);
        if (nmin == nmax && nmin > 1) {
            m->gamma_ns = 0;
            m->alpha_ns = tm;
            snprintf(m->note, sizeof m->note,
                     "alpha only (%s, cell %s): beta unknown; %d calls in every completion: calls taken as "
                     "overlapping (gamma 0)",
                     why, use_mean ? "means" : "medians", nmin);
        } else {
            for (size_t i = 0; i < np; i++)
                tmp[i] = p[i].t / (p[i].n > 0 ? p[i].n : 1);
            m->alpha_ns = m->gamma_ns = loc(tmp, np);
            snprintf(m->note, sizeof m->note, "alpha only (%s): alpha = %s time per call, beta unknown", why,
                     use_mean ? "the mean" : "the median");
        }
        m->beta_ns_per_byte = 0;
    }
    if (m->fitted) {
        double Sw = 0, Swt = 0, ssr = 0, sst = 0;
        for (size_t i = 0; i < nc; i++) {
            Sw += c[i].w;
            Swt += c[i].w * c[i].t;
        }
        double mean = Sw > 0 ? Swt / Sw : 0;
        for (size_t i = 0; i < nc; i++) {
            double f = cs__an_model_time(m, c[i].n, c[i].B);
            ssr += c[i].w * (c[i].t - f) * (c[i].t - f);
            sst += c[i].w * (c[i].t - mean) * (c[i].t - mean);
        }
        m->r2 = sst > 0 ? 1 - ssr / sst : 1;
    }
    {
        double sa = 0, st = 0;
        for (size_t i = 0; i < nc; i++) {
            sa += c[i].w * fabs(c[i].t - cs__an_model_time(m, c[i].n, c[i].B));
            st += c[i].w * fabs(c[i].t);
        }
        m->rel_resid = st > 0 ? sa / st : 0;
    }
    free(c);
    free(tmp);
    free(X);
    free(ct);
    free(cw);
    return 0;
}

double cs__an_model_time(const cs_model_row *m, double n, double bytes)
{
    return n <= 0 ? 0 : m->alpha_ns + (n - 1) * m->gamma_ns + bytes * m->beta_ns_per_byte;
}
