/* settings.c: read and check the preload's COLLSCOPE_* settings (settings.h).
 *
 * Runs at trace start only, before the log opens. Each setting has one
 * parser here; an empty variable counts as unset. */
#include "config.h"
#include "interpose/settings.h"
#include "interpose/warn.h"
#include "libtrace/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static cs_settings cs_set; /* zero until cs_settings_load() */
static int cs_set_warn;

const cs_settings *cs_settings_get(void)
{
    return &cs_set;
}

static void bad(const char *name, const char *value, const char *want, const char *dflt)
{
    if (cs_set_warn)
        cs_warn_once(NULL, "%s=%s is not %s; using %s", name, value, want, dflt);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* 0/1, no/yes, off/on, false/true. */
static int env_bool(const char *name, int dflt)
{
    static const char *const off[] = { "0", "no", "off", "false", NULL };
    static const char *const on[] = { "1", "yes", "on", "true", NULL };
    const char *v = env(name);
    if (!v)
        return dflt;
    for (int i = 0; off[i]; i++)
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    for (int i = 0; on[i]; i++)
        if (strcasecmp(v, on[i]) == 0)
            return 1;
    bad(name, v, "0 or 1", dflt < 0 ? "the default" : dflt ? "1" : "0");
    return dflt;
}

/* A whole decimal number in [lo, hi]; *end (if given) gets what follows
 * it, else the number must end the text. */
static int parse_long(const char *s, long lo, long hi, long *out, const char **end)
{
    char *e;
    errno = 0;
    long n = strtol(s, &e, 10);
    if (errno || e == s || n < lo || n > hi || (!end && *e))
        return -1;
    if (end)
        *end = e;
    *out = n;
    return 0;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static size_t env_bytes(const char *name, size_t dflt)
{
    const char *v = env(name);
    if (!v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long n = v[0] == '-' ? 0 : strtoull(v, &end, 10);
    int shift = 0;
    if (n) {
        switch (*end) {
        case 'k':
        case 'K':
            shift = 10;
            end++;
            break;
        case 'm':
        case 'M':
            shift = 20;
            end++;
            break;
        case 'g':
        case 'G':
            shift = 30;
            end++;
            break;
        }
    }
    if (errno || n == 0 || *end || n > (~0ull >> (shift + 1))) {
        char d[32];
        snprintf(d, sizeof d, "%zu", dflt);
        bad(name, v, "a byte count", d);
        return dflt;
    }
    return (size_t)(n << shift);
}

/* SRC:DST:USEC */
static void env_p2p_delay(cs_settings *c)
{
    const char *v = env("COLLSCOPE_TEST_P2P_DELAY"), *p;
    long src, dst, us;
    c->test_p2p_src = c->test_p2p_dst = -1;
    c->test_p2p_us = 0;
    if (!v)
        return;
    if (parse_long(v, 0, INT_MAX, &src, &p) || *p != ':' || parse_long(p + 1, 0, INT_MAX, &dst, &p) || *p != ':' ||
        parse_long(p + 1, 0, INT_MAX, &us, NULL)) {
        bad("COLLSCOPE_TEST_P2P_DELAY", v, "SRC:DST:USEC", "no delay");
        return;
    }
    c->test_p2p_src = (int)src;
    c->test_p2p_dst = (int)dst;
    c->test_p2p_us = (int)us;
}

/* LOCAL:USEC */
static void env_comm_delay(cs_settings *c)
{
    const char *v = env("COLLSCOPE_TEST_COMM_DELAY"), *p;
    long local, us;
    c->test_comm_local = -1;
    c->test_comm_us = 0;
    if (!v)
        return;
    if (parse_long(v, 0, INT_MAX, &local, &p) || *p != ':' || parse_long(p + 1, 0, INT_MAX, &us, NULL)) {
        bad("COLLSCOPE_TEST_COMM_DELAY", v, "LOCAL:USEC", "no delay");
        return;
    }
    c->test_comm_local = (int)local;
    c->test_comm_us = (int)us;
}

/* fused:USEC or unfused:USEC: apply mode's guard sees that side lose
 * (each fused call it starts, or each call it leaves unfused, stalls). */
static void env_guard_slow(cs_settings *c)
{
    const char *v = env("COLLSCOPE_TEST_GUARD_SLOW");
    long us;
    c->test_guard_fused_us = c->test_guard_unfused_us = 0;
    if (!v)
        return;
    int fused = strncmp(v, "fused:", 6) == 0, unfused = strncmp(v, "unfused:", 8) == 0;
    if ((!fused && !unfused) || parse_long(v + (fused ? 6 : 8), 0, 10000000, &us, NULL)) {
        bad("COLLSCOPE_TEST_GUARD_SLOW", v, "fused:USEC or unfused:USEC", "no stall");
        return;
    }
    if (fused)
        c->test_guard_fused_us = (int)us;
    else
        c->test_guard_unfused_us = (int)us;
}

/* RANK:NS,RANK:NS,... */
static void env_clock_offsets(cs_settings *c)
{
    const char *v = env("COLLSCOPE_TEST_CLOCK_OFFSET"), *p;
    c->n_offsets = 0;
    if (!v)
        return;
    for (p = v; *p;) {
        long rank;
        char *e;
        if (parse_long(p, 0, INT_MAX, &rank, &p) || *p != ':')
            break;
        errno = 0;
        long long ns = strtoll(p + 1, &e, 10);
        if (errno || e == p + 1 || (*e && *e != ',') || c->n_offsets == CS_SETTINGS_OFFSETS_MAX)
            break;
        c->offsets[c->n_offsets].rank = (int)rank;
        c->offsets[c->n_offsets++].ns = ns;
        p = *e ? e + 1 : e;
        if (!*p)
            return;
    }
    bad("COLLSCOPE_TEST_CLOCK_OFFSET", v, "RANK:NS,...", "the pairs before the error");
}

/* A run id names one run in file names and messages: letters, digits and
 * ._:- only, at most 63 of them. */
static int run_id_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n >= sizeof cs_set.run_id)
        return 0;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == ':' || *p == '-'))
            return 0;
    return 1;
}

/* COLLSCOPE_RUN_ID (set by `collscope run`), else the job id of the
 * launcher: Slurm (SLURM_JOB_ID, SLURM_STEP_ID), PMIx (PMIX_NAMESPACE,
 * Open MPI 4 and later), Open MPI (OMPI_MCA_ess_base_jobid). MPICH's
 * Hydra exports none: its runs stay unknown unless started by collscope. */
static void env_run_id(cs_settings *c)
{
    const char *v = env("COLLSCOPE_RUN_ID");
    c->run_id[0] = '\0';
    if (v && run_id_ok(v)) {
        snprintf(c->run_id, sizeof c->run_id, "%s", v);
        return;
    }
    if (v)
        bad("COLLSCOPE_RUN_ID", v, "a run id (up to 63 letters, digits, ._:-)", "the launcher's job id");
    const char *job = env("SLURM_JOB_ID"), *step = env("SLURM_STEP_ID");
    char buf[sizeof c->run_id];
    if (job)
        snprintf(buf, sizeof buf, "slurm:%.24s.%.24s", job, step ? step : "0");
    else if ((v = env("PMIX_NAMESPACE")) != NULL)
        snprintf(buf, sizeof buf, "pmix:%.56s", v);
    else if ((v = env("OMPI_MCA_ess_base_jobid")) != NULL)
        snprintf(buf, sizeof buf, "ompi:%.56s", v);
    else
        return;
    if (run_id_ok(buf))
        snprintf(c->run_id, sizeof c->run_id, "%s", buf);
}

/* tsc or monotonic; unset: the TSC where it is invariant. */
static int env_clock(void)
{
    const char *v = env("COLLSCOPE_CLOCK");
    if (!v)
        return CS_CLOCK_AUTO;
    if (strcasecmp(v, "tsc") == 0)
        return CS_CLOCK_TSC;
    if (strcasecmp(v, "monotonic") == 0)
        return CS_CLOCK_MONOTONIC;
    bad("COLLSCOPE_CLOCK", v, "tsc or monotonic", "the default (tsc where invariant, else monotonic)");
    return CS_CLOCK_AUTO;
}

/* The watchdog's three settings: a bad one turns the watchdog off. */
static void env_hang(cs_settings *c)
{
    const char *v = env("COLLSCOPE_HANG_TIMEOUT");
    c->hang_timeout = 0;
    c->hang_action = CS_HANG_REPORT;
    c->hang_signal = SIGRTMIN + 6;
    if (!v)
        return;
    char *e;
    errno = 0;
    double t = strtod(v, &e);
    if (errno || e == v || *e || !(t > 0) || t > 1e6) {
        bad("COLLSCOPE_HANG_TIMEOUT", v, "a number of seconds (> 0)", "no watchdog");
        return;
    }
    const char *a = env("COLLSCOPE_HANG_ACTION");
    if (a && strcasecmp(a, "abort") == 0)
        c->hang_action = CS_HANG_ABORT;
    else if (a && strcasecmp(a, "report") != 0) {
        bad("COLLSCOPE_HANG_ACTION", a, "report or abort", "no watchdog");
        return;
    }
    const char *g = env("COLLSCOPE_HANG_SIGNAL");
    if (g) {
        long n = -1;
        const char *p = g;
        if (strncasecmp(p, "SIG", 3) == 0)
            p += 3;
        if (strncasecmp(p, "RTMIN", 5) == 0) {
            long k = 0;
            if (p[5] == '\0' || (p[5] == '+' && parse_long(p + 6, 0, 64, &k, NULL) == 0))
                n = SIGRTMIN + k;
        } else if (strcasecmp(p, "USR1") == 0) {
            n = SIGUSR1;
        } else if (strcasecmp(p, "USR2") == 0) {
            n = SIGUSR2;
        } else if (parse_long(p, 1, 1000, &n, NULL) != 0) {
            n = -1;
        }
        if (n < 1 || n > SIGRTMAX || n == SIGKILL || n == SIGSTOP || n == SIGSEGV || n == SIGBUS || n == SIGFPE ||
            n == SIGILL || n == SIGABRT || (n > SIGSYS && n < SIGRTMIN)) {
            bad("COLLSCOPE_HANG_SIGNAL", g, "a signal (a number, USR1, USR2 or RTMIN+N)", "no watchdog");
            return;
        }
        c->hang_signal = (int)n;
    }
    c->hang_timeout = t;
}

int64_t cs_settings_clock_offset(int rank)
{
    for (int i = 0; i < cs_set.n_offsets; i++)
        if (cs_set.offsets[i].rank == rank)
            return cs_set.offsets[i].ns;
    return 0;
}

void cs_settings_load(int warn)
{
    cs_settings *c = &cs_set;
    cs_set_warn = warn;
    memset(c, 0, sizeof *c);
    c->disable = env_bool("COLLSCOPE_DISABLE", 0);
    const char *dir = env("COLLSCOPE_DIR");
    if (dir && strlen(dir) >= sizeof c->dir - 32) {
        bad("COLLSCOPE_DIR", dir, "a path that fits PATH_MAX", "collscope.out");
        dir = NULL;
    }
    snprintf(c->dir, sizeof c->dir, "%s", dir ? dir : "collscope.out");
    c->exit_convert = env_bool("COLLSCOPE_EXIT_CONVERT", 1);
    c->force = env_bool("COLLSCOPE_FORCE", 0);
    env_run_id(c);
    c->clock = env_clock();
    c->callsites = env_bool("COLLSCOPE_CALLSITES", -1);
    c->papi = env("COLLSCOPE_PAPI");
    c->cupti = env_bool("COLLSCOPE_CUPTI", 0);
    c->gputime = env_bool("COLLSCOPE_GPUTIME", 1);
    c->kernels_lib = env("COLLSCOPE_KERNELS_LIB");
    env_hang(c);
    c->fuse = env_bool("COLLSCOPE_FUSE", 0);
    c->fuse_threshold = env_bytes("COLLSCOPE_FUSE_THRESHOLD", 64 << 10);
    c->fuse_buffer = env_bytes("COLLSCOPE_FUSE_BUFFER", 4 << 20);
    c->fuse_guard = env_bool("COLLSCOPE_FUSE_GUARD", 1);
    c->test_fuse_nomem = env_bool("COLLSCOPE_TEST_FUSE_NOMEM", 0);
    env_p2p_delay(c);
    env_comm_delay(c);
    env_guard_slow(c);
    env_clock_offsets(c);
}
