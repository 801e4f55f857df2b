/* idle_sleep: a preload for the tests that makes an MPI rank sleep while
 * it waits instead of spinning, under both MPIs.
 *
 * Debian 12's MPICH 4.0 (ch4:ucx) polls ucp_worker_progress in a loop
 * while a rank waits and never yields the core (MPIR_CVAR_POLLS_BEFORE_YIELD
 * is ch3's: ch4 makes no sched_yield call at all). Four ranks on two
 * cores then take whole scheduler slices from the rank that has work:
 * a 4-rank trainer of 100 steps of 5 ms took 7-9 s instead of 0.9 s, and
 * every test running beside it lost its cores. Open MPI's waiting ranks
 * call sched_yield between idle polls (mpi_yield_when_idle), which gives
 * nothing to busy processes of the same priority: the same trainer took
 * 14 s beside 4 busy loops instead of 1.3 s.
 *
 * Here ucp_worker_progress calls the real one and, after idle_polls
 * calls in a row that made no progress, sleeps idle_ns; sched_yield
 * sleeps idle_ns. A waiting rank gives its core back and wakes within
 * tens of microseconds. Messages, matching and results are the MPI
 * library's own; only its idle loop sleeps.
 *
 * tests/lib.sh preloads it in every test; CS_NO_IDLE_SLEEP=1 leaves it
 * out. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned (*idle_progress_fn)(void *worker);

enum { idle_polls = 64, idle_ns = 20000 };

static void idle_sleep(void)
{
    struct timespec ts = {0, idle_ns};
    nanosleep(&ts, NULL);
}

static idle_progress_fn idle_real_progress(void)
{
    static idle_progress_fn real;
    if (!real) {
        real = (idle_progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (!real) { /* libucp loaded with RTLD_LOCAL (a plugin's) */
            void *lib = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
            if (lib)
                real = (idle_progress_fn)dlsym(lib, "ucp_worker_progress");
        }
        if (!real) {
            fprintf(stderr, "idle_sleep: cannot find the real ucp_worker_progress\n");
            abort();
        }
    }
    return real;
}

unsigned ucp_worker_progress(void *worker)
{
    static __thread unsigned nIdle;
    unsigned n = idle_real_progress()(worker);
    if (n) {
        nIdle = 0;
    } else if (++nIdle >= idle_polls) {
        nIdle = 0;
        idle_sleep();
    }
    return n;
}

int sched_yield(void)
{
    idle_sleep();
    return 0;
}
