/* clock.c: choosing the process clock and sampling calibration points. */
#include "config.h"
#include "libtrace/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_clock_kind_in_use = CS_CLOCK_MONOTONIC;

static int cs__cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int constant = 0, nonstop = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

void cs_clock_init(int want)
{
    if (want == CS_CLOCK_MONOTONIC || want == CS_CLOCK_TSC)
        cs_clock_kind_in_use = want;
    else
        cs_clock_kind_in_use = cs__cpu_has_invariant_tsc() ? CS_CLOCK_TSC : CS_CLOCK_MONOTONIC;
}

const char *cs_clock_name(int kind)
{
    return kind == CS_CLOCK_TSC ? "tsc" : "monotonic";
}

void cs_clock_sample(uint64_t *ticks, int64_t *mono_ns, int64_t *real_ns)
{
    /* Bracket the tick read by the two clock reads and keep the tightest of
     * three tries, so that a preemption between reads does not skew it. */
    int64_t best = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec a, r, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        uint64_t t = cs_clock_ticks();
        clock_gettime(CLOCK_REALTIME, &r);
        clock_gettime(CLOCK_MONOTONIC, &b);
        int64_t an = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
        int64_t bn = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
        if (bn - an < best) {
            best = bn - an;
            *ticks = t;
            *mono_ns = an + (bn - an) / 2;
            *real_ns = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec;
        }
    }
}
