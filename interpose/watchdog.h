/* watchdog.h: the hang watchdog (COLLSCOPE_HANG_TIMEOUT; watchdog.c).
 *
 * Each thread that makes traced calls owns one cs_wd_thr, in a table the
 * watchdog thread scans a few times per timeout: the start of its call in
 * flight (0 when none) and that call's log slot, the end of its last call
 * and how many calls it made. A wrapper touches it twice per call, and
 * only while the watchdog runs (cs_wd_on). */
#ifndef CS_WATCHDOG_H
#define CS_WATCHDOG_H

#include <stdint.h>

#include "interpose/core.h"
#include "interpose/module.h"

typedef struct cs_wd_thr {
    uint64_t t0;    /* ticks: start of the call in flight, 0 = none (atomic) */
    cs_rec *slot;   /* that call's record (its log slot, or the wrapper's scratch) */
    uint64_t last;  /* ticks: end of the last call (atomic) */
    uint64_t calls; /* calls ended (atomic; one writer) */
    uint64_t told;  /* t0 of the call in flight last reported (watchdog only) */
    int32_t ktid;   /* kernel thread id */
    uint16_t tid;   /* thread index in the log */
    uint16_t used;  /* 1 once filled (atomic) */
} __attribute__((aligned(64))) cs_wd_thr;

/* 1 while the watchdog runs. */
extern CS_INTERNAL int cs_wd_on;
/* This thread's entry, NULL until its first call under the watchdog. */
extern CS_INTERNAL __thread cs_wd_thr *cs_wd_me __attribute__((tls_model("initial-exec")));
cs_wd_thr *cs_wd_register(void);

/* The MPI flavor's abort (MPI_Abort on the world), set when it starts. */
extern CS_INTERNAL void (*cs_wd_abort_hook)(int code);
/* The application entered MPI_Finalize: a quiet rank is no hang from now on. */
void cs_wd_finalizing(void);

/* A traced call started: `r` holds its fields and t0. */
CS_HOT void cs_wd_begin(cs_rec *r)
{
    if (CS_UNLIKELY(__atomic_load_n(&cs_wd_on, __ATOMIC_RELAXED))) {
        cs_wd_thr *w = cs_wd_me;
        if (CS_UNLIKELY(!w))
            w = cs_wd_register();
        w->slot = r;
        __atomic_store_n(&w->t0, r->t0, __ATOMIC_RELEASE);
    }
}

/* The call ended at t1 (before its slot is released). */
CS_HOT void cs_wd_end(uint64_t t1)
{
    if (CS_UNLIKELY(__atomic_load_n(&cs_wd_on, __ATOMIC_RELAXED))) {
        cs_wd_thr *w = cs_wd_me;
        if (CS_LIKELY(w != NULL)) {
            __atomic_store_n(&w->t0, 0, __ATOMIC_RELEASE);
            __atomic_store_n(&w->last, t1, __ATOMIC_RELAXED);
            __atomic_store_n(&w->calls, w->calls + 1, __ATOMIC_RELAXED);
        }
    }
}

extern CS_INTERNAL const cs_module cs_wd_module;

#endif
