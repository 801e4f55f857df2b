/* an_verdict_transient.c: a rank late in a window of steps and on time
 * outside it.
 *
 *   transient    a window of >= CS_TRANSIENT_MIN late steps, runs joined
 *                across single on-time steps, its edges trimmed of steps
 *                late by less than half its median, >= CS_TRANSIENT_DENSE of
 *                its steps late, with the rank on time outside (late in at
 *                most CS_OUTSIDE_LATE of the >= CS_TRANSIENT_MIN other
 *                steps) and its median L at least twice the outside median */
#include "config.h"
#include "analyzer/analysis/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cs_transient_rank(cs_verdict_ctx *a, int r)
{
    int64_t ns = a->steps->nsteps, E = a->E, s0 = a->s0;
    char b1[32], b2[32], b3[48];
    /* Windows: runs of late steps joined across single on-time steps,
     * at least CS_TRANSIENT_MIN late and CS_TRANSIENT_DENSE of their
     * length, with an on-time step (or the run's edge) on each side.
     * Outside every window the rank must be on time: scheduling noise
     * makes scattered late steps, not a window and a quiet rest. */
    int64_t wins[8][3];
    int nw = 0;
    int64_t s = s0;
    while (s < ns && nw < 8) {
        if (cs__an_verdict_lat(a, s, r) <= E) {
            s++;
            continue;
        }
        int64_t wa = s, wb = s, cnt = 1, t = s + 1;
        while (t < ns) {
            if (cs__an_verdict_lat(a, t, r) > E) {
                wb = t++;
                cnt++;
            } else if (t + 1 < ns && cs__an_verdict_lat(a, t + 1, r) > E) {
                t++;
            } else {
                break;
            }
        }
        s = wb + 1;
        /* clear edges: trim steps at either end that are late by less
         * than half the window's median (a scheduling hiccup next to
         * the window is not part of it) */
        cs_vec wl = { 0 };
        for (int64_t u = wa; u <= wb; u++)
            if (cs__an_verdict_lat(a, u, r) > E)
                cs_vec_push(&wl, cs__an_verdict_lat(a, u, r));
        int64_t wmed = cs__an_ctx_median(&wl);
        cs_vec_free(&wl);
        while (wb > wa && cs__an_verdict_lat(a, wb, r) * 2 < wmed)
            cnt -= cs__an_verdict_lat(a, wb--, r) > E;
        while (wa < wb && cs__an_verdict_lat(a, wa, r) * 2 < wmed)
            cnt -= cs__an_verdict_lat(a, wa++, r) > E;
        if (cnt >= CS_TRANSIENT_MIN && (double)cnt >= CS_TRANSIENT_DENSE * (double)(wb - wa + 1)) {
            wins[nw][0] = wa;
            wins[nw][1] = wb;
            wins[nw][2] = cnt;
            nw++;
        }
    }
    if (nw == 0)
        return 0;
    int64_t outn = 0, outlate = 0;
    cs_vec out = { 0 };
    for (int64_t u = s0; u < ns; u++) {
        int in = 0;
        for (int k = 0; k < nw; k++)
            in |= u >= wins[k][0] && u <= wins[k][1];
        if (in)
            continue;
        outn++;
        outlate += cs__an_verdict_lat(a, u, r) > E;
        cs_vec_push(&out, cs__an_verdict_lat(a, u, r));
    }
    int64_t mo = out.n ? cs__an_ctx_median(&out) : 0;
    cs_vec_free(&out);
    /* on time outside: at most CS_OUTSIDE_LATE of those steps late
     * (and not fewer than the steps of one window outside) */
    if (outn < CS_TRANSIENT_MIN || (double)outlate > CS_OUTSIDE_LATE * (double)outn)
        return 0;
    for (int k = 0; k < nw; k++) {
        int64_t wa = wins[k][0], wb = wins[k][1], cnt = wins[k][2];
        cs_vec in = { 0 }, c2 = { 0 };
        for (int64_t u = wa; u <= wb; u++) {
            if (cs__an_verdict_lat(a, u, r) > E) {
                cs_vec_push(&in, cs__an_verdict_lat(a, u, r));
                cs_vec_push(&c2, a->steps->late[cs__an_ctx_sr(a->ctx, u, r)]);
            }
        }
        int64_t mi = cs__an_ctx_median(&in), ml = cs__an_ctx_median(&c2);
        cs_vec_free(&in);
        cs_vec_free(&c2);
        if (mi <= E || mi < 2 * mo)
            continue;
        cs_straggler g;
        memset(&g, 0, sizeof g);
        snprintf(g.kind, sizeof g.kind, "transient");
        g.rank = r;
        g.src = g.dst = -1;
        g.first_step = wa;
        g.last_step = wb;
        g.begin_ns = a->steps->step_begin[wa];
        g.end_ns = a->steps->step_end[wb];
        g.lateness_ns = ml;
        g.cost_ns = mi;
        cs__an_verdict_ns_text(b1, sizeof b1, mi);
        cs__an_verdict_ns_text(b2, sizeof b2, mo);
        cs__an_verdict_fmt_steps(b3, sizeof b3, wa, wb);
        snprintf(g.evidence, sizeof g.evidence,
                 "rank %d spent a median %s longer between collectives than the next slowest rank in %lld of "
                 "the %lld steps of %s (%.3f s to %.3f s into the run), and was on time otherwise (late in "
                 "%lld of %lld other steps, median excess %s)",
                 r, b1, (long long)cnt, (long long)(wb - wa + 1), b3, (double)(g.begin_ns - a->clocks->t_first) / 1e9,
                 (double)(g.end_ns - a->clocks->t_first) / 1e9, (long long)outlate, (long long)outn, b2);
        if (cs__an_verdict_push(a, &g) != 0)
            return -1;
    }
    return 0;
}

const cs_verdict_kind cs__an_verdict_transient = { .name = "transient", .rank = cs_transient_rank };
