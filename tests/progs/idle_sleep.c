/* idle_sleep: a preload for the tests that makes an MPICH rank sleep
 * while it waits instead of spinning.
 *
 * Debian 12's MPICH 4.0 (ch4:ucx) polls ucp_worker_progress in a loop
 * while a rank waits and never yields the core (MPIR_CVAR_POLLS_BEFORE_YIELD
 * is ch3's: ch4 makes no sched_yield call at all). Four ranks on two
 * cores then take whole scheduler slices from the rank that has work:
 * a 4-rank trainer of 100 steps of 5 ms took 7-9 s instead of 0.9 s, and
 * every test running beside it lost its cores.
 *
 * Here ucp_worker_progress calls the real one; a rank that has polled
 * without progress for idle_after_ns sleeps idle_ns at each further
 * idle poll, and a call that made progress ends the idle time. A short
 * wait (a ping-pong's microseconds) spins as before; a long one gives its
 * core back and wakes within tens of microseconds. Messages, matching
 * and results are MPICH's own; only its idle loop sleeps.
 *
 * Open MPI's ranks are left alone: they call sched_yield between idle
 * polls (mpi_yield_when_idle), which gives nothing to busy processes (a
 * 4-rank trainer took 8-14 s beside 4 busy loops, 1.3 s quiet), but a
 * sched_yield or opal_progress that slept made HPCC 30-50x slower (1 s
 * -> 40-50 s) and was dropped.
 *
 * tests/lib.sh preloads it in every test; CS_NO_IDLE_SLEEP=1 leaves it
 * out. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned (*idle_ucp_fn)(void *worker);

enum { idle_after_ns = 100000, idle_ns = 20000 };

static __thread int64_t idle_since_ns = -1; /* -1: not idle */

static int64_t idle_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* After a poll: progress ends the idle time; a thread idle for
 * idle_after_ns sleeps. */
static void idle_after_poll(int progress)
{
    if (progress) {
        idle_since_ns = -1;
        return;
    }
    int64_t now = idle_now();
    if (idle_since_ns < 0)
        idle_since_ns = now;
    else if (now - idle_since_ns >= idle_after_ns) {
        struct timespec ts = { 0, idle_ns };
        nanosleep(&ts, NULL);
    }
}

/* The real NAME: the next definition, or LIB's where a plugin loaded it
 * with RTLD_LOCAL. */
static void *idle_real(const char *name, const char *lib)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            f = dlsym(h, name);
    }
    if (!f) {
        fprintf(stderr, "idle_sleep: cannot find the real %s\n", name);
        abort();
    }
    return f;
}

unsigned ucp_worker_progress(void *worker)
{
    static idle_ucp_fn real;
    if (!real)
        real = (idle_ucp_fn)idle_real("ucp_worker_progress", "libucp.so.0");
    unsigned n = real(worker);
    idle_after_poll(n != 0);
    return n;
}
