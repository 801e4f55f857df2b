/* clock.h: the process clock used for span times.
 *
 * The hot path reads raw ticks: the invariant TSC where the CPU has one
 * (about 12 ns here), CLOCK_MONOTONIC otherwise (about 30 ns, ticks = ns).
 * CALIB records pair ticks with CLOCK_MONOTONIC and CLOCK_REALTIME; the
 * ingest converts ticks to nanoseconds piecewise between them. */
#ifndef CS_CLOCK_H
#define CS_CLOCK_H

#include <stdint.h>
#include <time.h>

enum cs_clock_kind { CS_CLOCK_AUTO = -1, CS_CLOCK_MONOTONIC = 0, CS_CLOCK_TSC = 1 };

extern int cs_clock_kind_in_use;

static inline uint64_t cs__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t cs_clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (cs_clock_kind_in_use == CS_CLOCK_TSC) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return cs__mono_ns();
}

/* Choose the clock once per process: `want` (CS_CLOCK_TSC or
 * CS_CLOCK_MONOTONIC, as COLLSCOPE_CLOCK asked: interpose/settings.c), or
 * for CS_CLOCK_AUTO the TSC when /proc/cpuinfo reports constant_tsc and
 * nonstop_tsc, else CLOCK_MONOTONIC. */
void cs_clock_init(int want);
const char *cs_clock_name(int kind);

/* Read ticks, CLOCK_MONOTONIC and CLOCK_REALTIME as close together as we can. */
void cs_clock_sample(uint64_t *ticks, int64_t *mono_ns, int64_t *real_ns);

#endif
