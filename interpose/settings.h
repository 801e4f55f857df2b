/* settings.h: every COLLSCOPE_* setting the preload reads, read once.
 *
 * cs_settings_load() reads the environment at trace start (never on a
 * wrapped call's path), validates each value, and keeps the result in one
 * struct that core and the modules read. A value that does not parse
 * gives one warning line on stderr and the default: a setting never stops
 * the job. docs/guide.md "Environment variables" lists them all, with the
 * ones libtrace and the commands read themselves. */
#ifndef CS_SETTINGS_H
#define CS_SETTINGS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CS_SETTINGS_OFFSETS_MAX 256 /* COLLSCOPE_TEST_CLOCK_OFFSET pairs */

enum { CS_HANG_REPORT = 1, CS_HANG_ABORT = 2 };

typedef struct cs_settings {
    /* core */
    int disable;        /* COLLSCOPE_DISABLE: never trace */
    char dir[PATH_MAX]; /* COLLSCOPE_DIR: output folder (collscope.out) */
    int exit_convert;   /* COLLSCOPE_EXIT_CONVERT: build the rank's SQLite file at exit */
    int force;          /* COLLSCOPE_FORCE: accept a log folder of another user or writable by all */
    char run_id[64];    /* COLLSCOPE_RUN_ID, else the launcher's job id, else "" (unknown) */
    int clock;          /* COLLSCOPE_CLOCK: CS_CLOCK_TSC, CS_CLOCK_MONOTONIC or CS_CLOCK_AUTO (libtrace/clock.h) */
    /* optional modules */
    int callsites;           /* COLLSCOPE_CALLSITES: -1 when libunwind is found, 0 off, 1 on (warn if missing) */
    const char *papi;        /* COLLSCOPE_PAPI: event list, NULL = off */
    int cupti;               /* COLLSCOPE_CUPTI: GPU activity records */
    int gputime;             /* COLLSCOPE_GPUTIME: GPU times of collectives (on) */
    const char *kernels_lib; /* COLLSCOPE_KERNELS_LIB: libcskernels to load, NULL = search */
    /* the watchdog (interpose/watchdog.c) */
    double hang_timeout; /* COLLSCOPE_HANG_TIMEOUT: seconds, 0 = off */
    int hang_action;     /* COLLSCOPE_HANG_ACTION: CS_HANG_REPORT or CS_HANG_ABORT */
    int hang_signal;     /* COLLSCOPE_HANG_SIGNAL: the stack-sampling signal */
    /* apply mode (interpose/fuse/) */
    int fuse;              /* COLLSCOPE_FUSE */
    size_t fuse_threshold; /* COLLSCOPE_FUSE_THRESHOLD: largest fused user call, bytes */
    size_t fuse_buffer;    /* COLLSCOPE_FUSE_BUFFER: largest fused call, bytes */
    int fuse_guard;        /* COLLSCOPE_FUSE_GUARD: measure and keep only what wins (1) */
    /* test-only seams */
    int test_fuse_nomem;                            /* COLLSCOPE_TEST_FUSE_NOMEM */
    int test_p2p_src, test_p2p_dst, test_p2p_us;    /* COLLSCOPE_TEST_P2P_DELAY=SRC:DST:USEC, src -1 = off */
    int test_comm_local, test_comm_us;              /* COLLSCOPE_TEST_COMM_DELAY=LOCAL:USEC, local -1 = off */
    int test_guard_fused_us, test_guard_unfused_us; /* COLLSCOPE_TEST_GUARD_SLOW=fused:USEC or unfused:USEC */
    int n_offsets;                                  /* COLLSCOPE_TEST_CLOCK_OFFSET=RANK:NS,... */
    struct {
        int rank;
        int64_t ns;
    } offsets[CS_SETTINGS_OFFSETS_MAX];
} cs_settings;

/* Read and check every setting; warnings are printed when `warn` is set
 * (the settings are the same on every rank: rank 0 says it once). */
void cs_settings_load(int warn);
/* The settings last loaded (all zero before the first load: read them
 * from trace start on). */
const cs_settings *cs_settings_get(void);
/* COLLSCOPE_TEST_CLOCK_OFFSET's offset for `rank`, 0 when it names none. */
int64_t cs_settings_clock_offset(int rank);

#endif
