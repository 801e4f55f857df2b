/* fuse_guard.c: apply mode's on-line guard, the choosing part (see
 * fuse_guard.h). Pure arithmetic on figures every rank holds alike: no
 * clock, no MPI, no randomness, so every rank plans the same windows. */
#include "config.h"
#include "interpose/fuse/fuse_guard.h"

#include <string.h>

#define CS_GUARD_RING (CS_GUARD_LAG + 4)

void cs_guard_init(cs_guard *g, size_t buffer, size_t min_call, size_t cap)
{
    memset(g, 0, sizeof *g);
    g->chosen = -1;
    g->buf[g->ncfg++] = 0;
    /* smaller buckets first, while one still holds four calls of the
     * first size seen */
    for (size_t d = 64; d >= 8; d /= 8)
        if (buffer / d >= 4 * min_call)
            g->buf[g->ncfg++] = buffer / d;
    g->buf[g->ncfg++] = buffer;
    if (g->ncfg < CS_GUARD_MAXCFG && buffer <= cap / 8)
        g->buf[g->ncfg++] = buffer * 8;
}

/* Trial windows: 1 .. ncfg * ROUNDS (window 0 warms up, unfused). */
static uint32_t cs_guard_trial_end(const cs_guard *g)
{
    return (uint32_t)(g->ncfg * CS_GUARD_ROUNDS);
}

static double cs_median(const double *x, int n)
{
    double v[2 * CS_GUARD_ROUNDS > CS_GUARD_KEEP ? 2 * CS_GUARD_ROUNDS : CS_GUARD_KEEP];
    if (n > (int)(sizeof v / sizeof v[0]))
        n = (int)(sizeof v / sizeof v[0]);
    memcpy(v, x, sizeof(double) * (size_t)n);
    for (int i = 1; i < n; i++) /* insertion sort, n small */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void cs_push(double *ring, int *n, double v)
{
    if (*n == CS_GUARD_KEEP) {
        memmove(ring, ring + 1, sizeof(double) * (CS_GUARD_KEEP - 1));
        (*n)--;
    }
    ring[(*n)++] = v;
}

static double cs_guard_ratio(const cs_guard *g, int c)
{
    return cs_median(g->ratio[c], g->nratio[c]);
}

static double cs_guard_fig(const cs_guard *g, int c)
{
    return cs_median(g->fig[c], g->nfig[c]);
}

/* The fused setting with the lowest median ratio, or -1 when none has one. */
static int cs_guard_best_fused(const cs_guard *g)
{
    int best = -1;
    for (int c = 1; c < g->ncfg; c++)
        if (g->nratio[c] > 0 && (best < 0 || cs_guard_ratio(g, c) < cs_guard_ratio(g, best)))
            best = c;
    return best;
}

/* After evidence of ratio q for the standing choice: the next check, the
 * sooner the closer the call. */
static void cs_guard_reschedule(cs_guard *g, double q)
{
    /* a close call is checked again soon; a clear one less and less */
    int decisive = q > 1.3 || q < 0.7;
    uint32_t gap = !decisive ? CS_GUARD_CHECK_EVERY : g->check_gap ? g->check_gap * 4 : CS_GUARD_CHECK_EVERY * 4;
    g->check_gap = gap < CS_GUARD_CHECK_MAX ? gap : CS_GUARD_CHECK_MAX;
    g->next_check = g->next + g->check_gap;
}

int cs_guard_next(cs_guard *g)
{
    uint32_t w = g->next++;
    uint32_t tend = cs_guard_trial_end(g);
    int c, role = 0;
    if (w == 0)
        c = 0;
    else if (w <= tend) {
        uint32_t r = (w - 1) / (uint32_t)g->ncfg, p = (w - 1) % (uint32_t)g->ncfg;
        c = (int)((p + r) % (uint32_t)g->ncfg);
    } else if (g->chosen < 0)
        c = 0; /* the trial's last figures are not in yet: the safe side */
    else {
        if (g->check_pos == 0 && w >= g->next_check) {
            int b = cs_guard_best_fused(g);
            g->check_cfg = g->chosen != 0 ? 0 : (b > 0 ? b : -1);
            if (g->check_cfg >= 0) {
                g->check_pos = 1; /* a check begins */
                g->check_ext = 0;
                g->nchk[0] = g->nchk[1] = 0;
            } else
                g->next_check = w + CS_GUARD_CHECK_MAX;
        }
        if (g->check_pos > 0) {
            role = g->check_pos % 2 ? 1 : 2;
            c = role == 1 ? g->chosen : g->check_cfg;
            if (++g->check_pos > 2 * CS_GUARD_ROUNDS) {
                g->check_pos = 0;
                g->next_check = (uint32_t)-1; /* set when its figures are in */
            }
        } else
            c = g->chosen;
    }
    g->cfg_ring[w % CS_GUARD_RING] = (uint8_t)c;
    g->role_ring[w % CS_GUARD_RING] = (uint8_t)role;
    return c;
}

int cs_guard_cfg_of(const cs_guard *g, uint32_t w)
{
    return g->cfg_ring[w % CS_GUARD_RING];
}

static int cs_guard_decide(cs_guard *g, int chosen, int why, cs_guard_decision *d)
{
    if (chosen == g->chosen)
        return 0;
    g->chosen = chosen;
    int b = cs_guard_best_fused(g);
    d->window = g->next;
    d->why = why;
    d->chosen = chosen;
    d->buffer = g->buf[chosen];
    d->unfused_ns = cs_guard_fig(g, 0);
    d->chosen_ns = cs_guard_fig(g, chosen);
    d->ratio = b > 0 ? cs_guard_ratio(g, b) : 0;
    return 1;
}

/* fused / unfused of a pair: the larger of the two measures' ratios */
static double cs_guard_pair(double fb, double fw, double ub, double uw)
{
    double q = fb / ub;
    if (fw > 0 && uw > 0 && fw / uw > q)
        q = fw / uw;
    return q;
}

int cs_guard_figure(cs_guard *g, int64_t ns_sum, int64_t calls_sum, int64_t wall_sum, cs_guard_decision *d)
{
    uint32_t w = g->seen++;
    uint32_t tend = cs_guard_trial_end(g);
    int c = cs_guard_cfg_of(g, w), role = g->role_ring[w % CS_GUARD_RING];
    int have = w > 0 && calls_sum > 0 && ns_sum >= 0;
    double v = have ? (double)ns_sum / (double)calls_sum : 0;
    double vw = have && wall_sum > 0 ? (double)wall_sum / (double)calls_sum : 0;
    if (have)
        cs_push(g->fig[c], &g->nfig[c], v);
    if (w >= 1 && w <= tend) {
        /* a trial round: its ratios once its last window is in */
        g->round[c] = have ? v : 0;
        g->wround[c] = vw;
        if ((w - 1) % (uint32_t)g->ncfg == (uint32_t)g->ncfg - 1) {
            for (int k = 1; k < g->ncfg; k++)
                if (g->round[0] > 0 && g->round[k] > 0)
                    cs_push(g->ratio[k], &g->nratio[k],
                            cs_guard_pair(g->round[k], g->wround[k], g->round[0], g->wround[0]));
            memset(g->round, 0, sizeof g->round);
            memset(g->wround, 0, sizeof g->wround);
        }
        if (w < tend)
            return 0;
        int b = cs_guard_best_fused(g);
        int fused = b > 0 && cs_guard_ratio(g, b) < 1.0 - CS_GUARD_MARGIN;
        g->chosen = -2; /* so the first choice is always reported */
        double q = b > 0 ? cs_guard_ratio(g, b) : 2.0;
        int r = cs_guard_decide(g, fused ? b : 0, fused ? CS_GUARD_WHY_TRIAL : CS_GUARD_WHY_LOSES, d);
        g->check_gap = 0;
        cs_guard_reschedule(g, fused ? q : 1.0 / q);
        return r;
    }
    if (!role || g->chosen < 0)
        return 0;
    /* a check's window: its pairs' ratios once all are in */
    int k = role - 1, want = (g->check_ext ? 2 : 1) * CS_GUARD_ROUNDS;
    if (g->nchk[k] < 2 * CS_GUARD_ROUNDS) {
        g->wchk[k][g->nchk[k]] = vw;
        g->chk[k][g->nchk[k]++] = have ? v : -1;
    }
    if (g->nchk[0] < want || g->nchk[1] < want)
        return 0;
    double q[2 * CS_GUARD_ROUNDS];
    int nq = 0, nq1 = 0, fused_chosen = g->chosen > 0;
    for (int i = 0; i < want; i++)
        if (g->chk[0][i] > 0 && g->chk[1][i] > 0) { /* fused / unfused */
            q[nq++] = fused_chosen ? cs_guard_pair(g->chk[0][i], g->wchk[0][i], g->chk[1][i], g->wchk[1][i])
                                   : cs_guard_pair(g->chk[1][i], g->wchk[1][i], g->chk[0][i], g->wchk[0][i]);
            nq1 += i < CS_GUARD_ROUNDS;
        }
    int cc = g->check_cfg, f = fused_chosen ? g->chosen : cc;
    if (nq == 0) {
        g->nchk[0] = g->nchk[1] = 0;
        cs_guard_reschedule(g, 1.0);
        return 0;
    }
    double m = cs_median(q, nq);
    int against = fused_chosen ? m >= 1.0 : m < 1.0 - CS_GUARD_MARGIN;
    if (against && !fused_chosen && !g->check_ext) {
        /* contradicts the choice: as many pairs again before deciding */
        g->check_ext = 1;
        g->check_pos = 1;
        return 0;
    }
    g->nchk[0] = g->nchk[1] = 0;
    cs_push(g->ratio[f], &g->nratio[f], m);
    int r = 0;
    if (fused_chosen && against)
        r = cs_guard_decide(g, 0, CS_GUARD_WHY_CHECK, d);
    else if (!fused_chosen && against) {
        /* a sign test: all pairs but one show the win */
        int wins = 0;
        for (int i = 0; i < nq; i++)
            wins += q[i] < 1.0 - CS_GUARD_MARGIN;
        if (nq - nq1 > 0 && wins >= nq - 1)
            r = cs_guard_decide(g, cc, CS_GUARD_WHY_CHECK, d);
    }
    if (r)
        g->check_gap = 0; /* a new choice: checked soon again */
    /* the standing choice's evidence: fused / unfused, or its inverse
     * (unfused over fused while unfused stands) */
    cs_guard_reschedule(g, g->chosen > 0 ? m : 1.0 / m);
    return r;
}
