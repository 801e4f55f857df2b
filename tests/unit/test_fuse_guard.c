/* test_fuse_guard.c: apply mode's guard (interpose/fuse/fuse_guard.c)
 * driven by a model job whose true cost per call of each setting is known:
 * it must keep a setting that wins, refuse or drop one that loses, hold
 * its choice when the whole machine gets slower or faster, plan the same
 * windows for every rank (a pure function of the figures), and report each
 * decision once. */
#include "config.h"
#include "tests/unit/check.h"
#include "interpose/fuse/fuse_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A model job: cost[c] ns per call for setting c from window `from` on
 * (two phases), a machine factor per window, noise of +-noise (a fixed
 * pseudo-random sequence). Runs `windows` windows through the guard with
 * its lag, as mpi_fuse.c does; returns the windows run per setting and the
 * decisions made. */
typedef struct model {
    double cost[CS_GUARD_MAXCFG], cost2[CS_GUARD_MAXCFG];
    uint32_t from;
    double slow_from, slow_factor; /* the whole machine slower from this window */
    double noise;
    uint32_t windows;
    double wall_over; /* wall time of a fused window over its MPI time's story (0: no wall time) */
} model;

typedef struct result {
    int ran[CS_GUARD_MAXCFG];
    int ndec;
    cs_guard_decision dec[64];
    int plan[4096];
} result;

static void run(const model *m, size_t buffer, size_t call, result *out)
{
    cs_guard g;
    cs_guard_init(&g, buffer, call, (size_t)64 << 20);
    memset(out, 0, sizeof *out);
    uint64_t seed = 88172645463325252ull; /* xorshift64: no pattern a window order could meet */
    int64_t fig[4096][3];
    for (uint32_t w = 0; w < m->windows; w++) {
        int c = cs_guard_next(&g);
        out->plan[w] = c;
        out->ran[c]++;
        double base = (w >= m->from ? m->cost2 : m->cost)[c];
        if (w >= m->slow_from)
            base *= m->slow_factor;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        double u = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
        double v = base * (1 + m->noise * u);
        fig[w][0] = (int64_t)(v * 128 * 2); /* 128 calls on each of 2 ranks */
        fig[w][1] = 256;
        /* wall time: the same story, or (wall_over) another for the fused settings */
        fig[w][2] = (int64_t)((c ? m->wall_over : 1.0) * (m->wall_over ? v : 0) * 256);
        /* the figure of window w - LAG comes back at the end of window w */
        if (w >= CS_GUARD_LAG) {
            cs_guard_decision d;
            if (cs_guard_figure(&g, fig[w - CS_GUARD_LAG][0], fig[w - CS_GUARD_LAG][1], fig[w - CS_GUARD_LAG][2], &d) &&
                out->ndec < 64)
                out->dec[out->ndec++] = d;
        }
    }
}

static int last_choice(const result *r)
{
    return r->ndec ? r->dec[r->ndec - 1].chosen : -1;
}

int main(void)
{
    result r;
    /* settings for an 8 KiB buffer and 2 KiB calls: unfused, 8 KiB, 64 KiB */
    cs_guard g;
    cs_guard_init(&g, 8192, 2048, (size_t)64 << 20);
    CHECK(g.ncfg == 3 && g.buf[0] == 0 && g.buf[1] == 8192 && g.buf[2] == 65536, "settings %d: %zu %zu %zu", g.ncfg,
          g.buf[0], g.buf[1], g.buf[2]);
    cs_guard_init(&g, (size_t)4 << 20, 2048, (size_t)64 << 20);
    CHECK(g.ncfg == 4 && g.buf[1] == 65536 && g.buf[2] == 524288 && g.buf[3] == ((size_t)4 << 20),
          "default buffer: %d settings %zu %zu %zu", g.ncfg, g.buf[1], g.buf[2], g.buf[3]);

    /* 1. fusing loses (the shape: 1.7x slower): never chosen, and
     *    it runs only in the trial and in the rare check windows */
    model lose = { .cost = { 1000, 1700, 1500 },
                   .cost2 = { 1000, 1700, 1500 },
                   .from = 100000,
                   .slow_from = 1e9,
                   .slow_factor = 1,
                   .noise = 0.15,
                   .windows = 400 };
    run(&lose, 8192, 2048, &r);
    CHECK(r.ndec >= 1 && r.dec[0].chosen == 0 && r.dec[0].why == CS_GUARD_WHY_LOSES, "losing: first decision %d why %d",
          r.ndec ? r.dec[0].chosen : -1, r.ndec ? r.dec[0].why : -1);
    CHECK(last_choice(&r) == 0, "losing: ends on setting %d", last_choice(&r));
    int fusedwin = r.ran[1] + r.ran[2];
    /* the trial (2 fused settings x 3 rounds) and checks of 3 pairs at
     * gaps of 128 and 256 windows (a decisive loss): 2 in 400 */
    CHECK(fusedwin <= 6 + 2 * CS_GUARD_ROUNDS, "losing: %d of 400 windows fused", fusedwin);

    /* 2. fusing wins (30 % less with 64 KiB buckets): chosen after the
     *    trial and kept; unfused runs only in the check windows */
    model win = { .cost = { 1000, 950, 700 },
                  .cost2 = { 1000, 950, 700 },
                  .from = 100000,
                  .slow_from = 1e9,
                  .slow_factor = 1,
                  .noise = 0.15,
                  .windows = 400 };
    run(&win, 8192, 2048, &r);
    CHECK(r.ndec == 1 && r.dec[0].chosen == 2 && r.dec[0].buffer == 65536 && r.dec[0].why == CS_GUARD_WHY_TRIAL,
          "winning: %d decisions, first %d", r.ndec, r.ndec ? r.dec[0].chosen : -1);
    CHECK(r.dec[0].ratio > 0.5 && r.dec[0].ratio < 0.9, "winning: ratio %.3f (truth 0.70, noise 15 %%)",
          r.dec[0].ratio);
    CHECK(r.ran[2] >= 400 - 20 - 400 / CS_GUARD_CHECK_EVERY, "winning: only %d windows on the winner", r.ran[2]);

    /* 3. a win within the margin is no win: unfused is kept */
    model tie = { .cost = { 1000, 990, 985 },
                  .cost2 = { 1000, 990, 985 },
                  .from = 100000,
                  .slow_from = 1e9,
                  .slow_factor = 1,
                  .noise = 0.0,
                  .windows = 200 };
    run(&tie, 8192, 2048, &r);
    CHECK(last_choice(&r) == 0, "tie: chose %d", last_choice(&r));

    /* 4. the machine gets 3x slower at window 60 (every setting alike):
     *    the choice stands */
    model drift = win;
    drift.slow_from = 60;
    drift.slow_factor = 3;
    run(&drift, 8192, 2048, &r);
    CHECK(r.ndec == 1 && last_choice(&r) == 2, "drift: %d decisions, last %d", r.ndec, last_choice(&r));
    drift.slow_factor = 1.0 / 3;
    run(&drift, 8192, 2048, &r);
    CHECK(r.ndec == 1 && last_choice(&r) == 2, "faster machine: %d decisions, last %d", r.ndec, last_choice(&r));

    /* 5. the fused setting stops winning at window 100 (the job changed
     *    shape): the checks find it and unfused comes back */
    model turn = win;
    turn.from = 100;
    turn.cost2[0] = 1000, turn.cost2[1] = 1600, turn.cost2[2] = 1500;
    run(&turn, 8192, 2048, &r);
    CHECK(last_choice(&r) == 0 && r.dec[r.ndec - 1].why == CS_GUARD_WHY_CHECK, "turn: last choice %d why %d",
          last_choice(&r), r.ndec ? r.dec[r.ndec - 1].why : -1);
    int back = -1;
    for (int w = 100; w < 400 && back < 0; w++)
        if (r.plan[w] == 0 && r.plan[w + 1] == 0 && r.plan[w + 2] == 0)
            back = w;
    /* a decisive choice is checked again within CS_GUARD_CHECK_MAX windows */
    CHECK(back >= 100 && back < 100 + CS_GUARD_CHECK_MAX + 4 * CS_GUARD_ROUNDS + CS_GUARD_LAG,
          "turn: unfused again from window %d", back);

    /* 6. and the other way: unfused chosen, then fusing starts to win */
    model rise = lose;
    rise.from = 100;
    rise.cost2[0] = 1000, rise.cost2[1] = 600, rise.cost2[2] = 650;
    run(&rise, 8192, 2048, &r);
    CHECK(last_choice(&r) == 1 && r.dec[r.ndec - 1].why == CS_GUARD_WHY_CHECK, "rise: last choice %d", last_choice(&r));

    /* 6b. never slower on the model: over 1000 windows of +-30 % noise a
     *     window, for wins and losses of 5 to 100 %, the windows run
     *     cost at most 2.5 % more than every window unfused (the trial and
     *     the checks of a loser included); a clear win is taken, at twice
     *     that noise too */
    static const double sweep[][3] = { { 1000, 1300, 700 }, { 1000, 1300, 900 },  { 1000, 1100, 950 },
                                       { 1000, 950, 1050 }, { 1000, 1050, 1100 }, { 1000, 2000, 1500 } };
    for (size_t ci = 0; ci < sizeof sweep / sizeof sweep[0]; ci++) {
        model m = { .from = 100000, .slow_from = 1e9, .slow_factor = 1, .noise = 0.3, .windows = 1000 };
        memcpy(m.cost, sweep[ci], sizeof sweep[ci]);
        memcpy(m.cost2, sweep[ci], sizeof sweep[ci]);
        run(&m, 8192, 2048, &r);
        double tot = 0;
        for (int w = 0; w < 1000; w++)
            tot += sweep[ci][r.plan[w]];
        double vs = tot / (1000 * sweep[ci][0]);
        CHECK(vs <= 1.025, "costs %.0f/%.0f/%.0f: %.3f of always unfused", sweep[ci][0], sweep[ci][1], sweep[ci][2],
              vs);
        if (ci == 0) {
            CHECK(vs <= 0.75, "a 30 %% win: %.3f of always unfused", vs);
            m.noise = 0.6;
            run(&m, 8192, 2048, &r);
            tot = 0;
            for (int w = 0; w < 1000; w++)
                tot += sweep[ci][r.plan[w]];
            CHECK(tot / (1000 * sweep[ci][0]) <= 0.8, "a 30 %% win, noise 60 %%: %.3f of always unfused",
                  tot / (1000 * sweep[ci][0]));
        }
    }

    /* 6c. less time in MPI calls but longer windows (ranks sharing cores):
     *     the wall time decides against fusing */
    model walls = { .cost = { 1000, 1300, 700 },
                    .cost2 = { 1000, 1300, 700 },
                    .from = 100000,
                    .slow_from = 1e9,
                    .slow_factor = 1,
                    .noise = 0.15,
                    .windows = 400,
                    .wall_over = 2.0 };
    run(&walls, 8192, 2048, &r);
    CHECK(last_choice(&r) == 0, "fused wins in MPI time, loses in wall time: chose %d", last_choice(&r));
    walls.wall_over = 1.0;
    run(&walls, 8192, 2048, &r);
    CHECK(last_choice(&r) == 2, "fused wins on both: chose %d", last_choice(&r));

    /* 7. every rank plans the same windows from the same figures */
    result r2;
    run(&turn, 8192, 2048, &r);
    run(&turn, 8192, 2048, &r2);
    CHECK(memcmp(r.plan, r2.plan, sizeof r.plan) == 0 && r.ndec == r2.ndec, "two ranks planned differently");

    /* 8. windows without a figure (a vote the library refused) decide nothing */
    cs_guard_init(&g, 8192, 2048, (size_t)64 << 20);
    cs_guard_decision d;
    int any = 0;
    for (int w = 0; w < 40; w++) {
        cs_guard_next(&g);
        if (w >= CS_GUARD_LAG)
            any |= cs_guard_figure(&g, -1, 0, 0, &d) && d.chosen != 0;
    }
    CHECK(!any, "no figures, yet a fused setting was chosen");

    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("fuse guard: all checks passed\n");
    return failures ? 1 : 0;
}
