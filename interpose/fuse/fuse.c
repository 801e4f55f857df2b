/* fuse.c: apply mode's settings, and the guard's records both engines
 * write (fuse.h). */
#include "config.h"
#include "interpose/fuse/fuse.h"
#include "interpose/core.h"

#include <stdlib.h>

int cs_fuse_on, cs_fuse_test_nomem, cs_fuse_guard = 1, cs_fuse_test_fused_us, cs_fuse_test_unfused_us;
size_t cs_fuse_threshold = 64 << 10, cs_fuse_buffer = 4 << 20;

void *cs_fuse_alloc(size_t n)
{
    if (cs_fuse_test_nomem)
        return NULL;
    return malloc(n);
}

/* Ticks to nanoseconds for the trace's records (the figures themselves
 * stay in ticks: only their ratios decide). */
static uint64_t cs_fuse_tick0, cs_fuse_mono0;
static int cs_fuse_clock_on;

void cs_fuse_guard_clock(void)
{
    if (__atomic_exchange_n(&cs_fuse_clock_on, 1, __ATOMIC_ACQ_REL))
        return;
    cs_fuse_tick0 = cs_clock_ticks();
    cs_fuse_mono0 = cs__mono_ns();
}

static double cs_fuse_ns_per_tick(void)
{
    uint64_t t = cs_clock_ticks(), m = cs__mono_ns();
    return t > cs_fuse_tick0 + 1000000 ? (double)(m - cs_fuse_mono0) / (double)(t - cs_fuse_tick0) : 1.0;
}

static void cs_fuse_guard_record(uint32_t comm, int nccl, int what, int setting, uint32_t window, uint32_t why,
                                 uint64_t buffer, uint64_t a, uint64_t b, double ratio, uint64_t wall)
{
    cs_rec_fuseguard *x = (cs_rec_fuseguard *)cs_log_slot();
    if (!x)
        return;
    x->comm = (uint16_t)comm;
    x->what = (uint8_t)what;
    x->setting = (uint8_t)setting;
    x->window = window;
    x->why = why;
    x->t = cs_clock_ticks();
    x->buffer = buffer;
    x->ns = a;
    x->calls = b;
    x->ratio = ratio > 0 ? (uint64_t)(ratio * 1e6) : 0;
    x->wall = wall;
    cs_log_commit(x, CS_REC_HDR(CS_REC_FUSEGUARD, nccl ? CS_FG_F_NCCL : 0));
}

void cs_fuse_guard_consume(cs_guard *g, uint32_t comm, int nccl, uint32_t w, const int64_t sum[3])
{
    int cfg = cs_guard_cfg_of(g, w);
    double k = cs_fuse_ns_per_tick();
    cs_fuse_guard_record(comm, nccl, CS_FG_WINDOW, cfg, w, 0, g->buf[cfg],
                         sum[0] > 0 ? (uint64_t)((double)sum[0] * k) : 0, sum[1] > 0 ? (uint64_t)sum[1] : 0, 0,
                         sum[2] > 0 ? (uint64_t)((double)sum[2] * k) : 0);
    cs_guard_decision d;
    if (cs_guard_figure(g, sum[0], sum[1], sum[2], &d))
        cs_fuse_guard_record(comm, nccl, CS_FG_DECISION, d.chosen, d.window, (uint32_t)d.why, d.buffer,
                             (uint64_t)(d.unfused_ns * k * 1e3), (uint64_t)(d.chosen_ns * k * 1e3), d.ratio, 0);
}

static void cs_fuse_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    cs_fuse_on = s->fuse;
    cs_fuse_threshold = s->fuse_threshold;
    cs_fuse_buffer = s->fuse_buffer;
    cs_fuse_guard = s->fuse_guard;
    cs_fuse_test_nomem = s->test_fuse_nomem;
    cs_fuse_test_fused_us = s->test_guard_fused_us;
    cs_fuse_test_unfused_us = s->test_guard_unfused_us;
}

const cs_module cs_fuse_module = {
    .name = "fuse",
    .start = cs_fuse_start,
};
