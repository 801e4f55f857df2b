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
    double v[CS_GUARD_KEEP];
    memcpy(v, x, sizeof(double) * (size_t)n);
    for (int i = 1; i < n; i++) /* insertion sort, n <= CS_GUARD_KEEP */
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

int cs_guard_next(cs_guard *g)
{
    uint32_t w = g->next++;
    uint32_t tend = cs_guard_trial_end(g);
    int c;
    if (w == 0)
        c = 0;
    else if (w <= tend) {
        uint32_t r = (w - 1) / (uint32_t)g->ncfg, p = (w - 1) % (uint32_t)g->ncfg;
        c = (int)((p + r) % (uint32_t)g->ncfg);
    } else if (g->chosen < 0)
        c = 0; /* the trial's last figures are not in yet: the safe side */
    else if (w >= g->next_check) {
        int b = cs_guard_best_fused(g);
        c = g->chosen != 0 ? 0 : (b > 0 ? b : 0);
        g->check_gap = g->check_gap * 2 < CS_GUARD_CHECK_MAX ? g->check_gap * 2 : CS_GUARD_CHECK_MAX;
        g->next_check = w + g->check_gap;
    } else
        c = g->chosen;
    g->cfg_ring[w % CS_GUARD_RING] = (uint8_t)c;
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
    /* a new choice is checked soon, then less and less often */
    g->check_gap = CS_GUARD_CHECK_EVERY;
    g->next_check = g->next + CS_GUARD_CHECK_EVERY;
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

int cs_guard_figure(cs_guard *g, int64_t ns_sum, int64_t calls_sum, cs_guard_decision *d)
{
    uint32_t w = g->seen++;
    uint32_t tend = cs_guard_trial_end(g);
    int c = cs_guard_cfg_of(g, w);
    int have = w > 0 && calls_sum > 0 && ns_sum >= 0;
    double v = have ? (double)ns_sum / (double)calls_sum : 0;
    if (have)
        cs_push(g->fig[c], &g->nfig[c], v);
    if (w >= 1 && w <= tend) {
        /* a trial round: its ratios once its last window is in */
        g->round[c] = have ? v : 0;
        if ((w - 1) % (uint32_t)g->ncfg == (uint32_t)g->ncfg - 1) {
            for (int k = 1; k < g->ncfg; k++)
                if (g->round[0] > 0 && g->round[k] > 0)
                    cs_push(g->ratio[k], &g->nratio[k], g->round[k] / g->round[0]);
            memset(g->round, 0, sizeof g->round);
        }
        if (w < tend)
            return 0;
        int b = cs_guard_best_fused(g);
        int fused = b > 0 && cs_guard_ratio(g, b) < 1.0 - CS_GUARD_MARGIN;
        g->chosen = -2; /* so the first choice is always reported */
        g->decided_at = g->next;
        return cs_guard_decide(g, fused ? b : 0, fused ? CS_GUARD_WHY_TRIAL : CS_GUARD_WHY_LOSES, d);
    }
    if (g->chosen < 0 || !have || c == g->chosen || w < g->decided_at)
        return 0; /* not a challenger's window (those of the lag ran unfused) */
    /* a challenger's window: its ratio against the chosen's recent figures */
    double ref = cs_guard_fig(g, g->chosen);
    if (ref <= 0)
        return 0;
    double q = g->chosen > 0 ? ref / v : v / ref;
    if (g->chosen > 0 ? q >= 1.0 : q < 1.0 - CS_GUARD_MARGIN) {
        /* it contradicts the choice: check again at once, not after a
         * doubled gap */
        g->next_check = g->next;
        g->check_gap = CS_GUARD_CHECK_EVERY / 4;
    }
    if (g->chosen > 0) {
        cs_push(g->ratio[g->chosen], &g->nratio[g->chosen], q);
        if (cs_guard_ratio(g, g->chosen) >= 1.0)
            return cs_guard_decide(g, 0, CS_GUARD_WHY_CHECK, d);
        return 0;
    }
    cs_push(g->ratio[c], &g->nratio[c], q);
    int b = cs_guard_best_fused(g);
    if (b > 0 && cs_guard_ratio(g, b) < 1.0 - CS_GUARD_MARGIN)
        return cs_guard_decide(g, b, CS_GUARD_WHY_CHECK, d);
    return 0;
}
