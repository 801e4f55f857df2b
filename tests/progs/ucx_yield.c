/* ucx_yield: a preload for the tests that makes an MPICH rank sleep while
 * it waits instead of spinning.
 *
 * Debian 12's MPICH 4.0 (ch4:ucx) polls ucp_worker_progress in a loop
 * while a rank waits and never yields the core (MPIR_CVAR_POLLS_BEFORE_YIELD
 * is ch3's: ch4 makes no sched_yield call at all). Four ranks on two
 * cores then take whole scheduler slices from the rank that has work:
 * a 4-rank trainer of 100 steps of 5 ms took 7-9 s instead of 0.9 s, and
 * every test running beside it lost its cores. This wrapper calls the
 * real ucp_worker_progress and, after yield_polls calls in a row that
 * made no progress, sleeps yield_ns: the waiting rank gives its core
 * back, as Open MPI's mpi_yield_when_idle does. Messages, matching and
 * results are MPICH's own; only the idle loop sleeps.
 *
 * tests/lib.sh preloads it in every test (only processes that call
 * ucp_worker_progress are affected); CS_NO_UCX_YIELD=1 leaves it out. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned (*yield_progress_fn)(void *worker);

enum { yield_polls = 64, yield_ns = 20000 };

static yield_progress_fn yield_real(void)
{
    static yield_progress_fn real;
    if (!real) {
        real = (yield_progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (!real) { /* libucp loaded with RTLD_LOCAL (a plugin's) */
            void *lib = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
            if (lib)
                real = (yield_progress_fn)dlsym(lib, "ucp_worker_progress");
        }
        if (!real) {
            fprintf(stderr, "ucx_yield: cannot find the real ucp_worker_progress\n");
            abort();
        }
    }
    return real;
}

unsigned ucp_worker_progress(void *worker)
{
    static __thread unsigned nIdle;
    unsigned n = yield_real()(worker);
    if (n) {
        nIdle = 0;
    } else if (++nIdle >= yield_polls) {
        struct timespec ts = {0, yield_ns};
        nIdle = 0;
        nanosleep(&ts, NULL);
    }
    return n;
}
