/* papi.c: optional hardware counters over the compute between traced calls.
 *
 * COLLSCOPE_PAPI=EVENT,EVENT,... (at most 6). PAPI is dlopen()ed; where it,
 * its events or the counters themselves are missing (as in most VMs), one
 * warning is printed and the run goes on without counters. Counters are
 * read on the thread that started tracing only. */
#include "config.h"
#include "interpose/core.h"
#include "interpose/papi.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_papi_on;

#ifdef HAVE_PAPI
#include <papi.h>

static struct {
    int (*library_init)(int);
    int (*create_eventset)(int *);
    int (*add_named_event)(int, const char *);
    int (*start)(int);
    int (*read)(int, long long *);
    char *(*strerror)(int);
} P;
static int cs_papi_set = -1;
static int cs_papi_n;
static pthread_t cs_papi_thread;
static long long cs_papi_last[CS_COUNTERS_MAX];

#define CS_PAPI_SYM(h, f, name) ((*(void **)&(f)) = dlsym((h), (name)))

static void cs_papi_start(const cs_settings *s, cs_log_header *h)
{
    static int warned;
    const char *spec = s->papi;
    if (!spec)
        return;
    void *lib = dlopen("libpapi.so.7.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libpapi.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib || !CS_PAPI_SYM(lib, P.library_init, "PAPI_library_init") ||
        !CS_PAPI_SYM(lib, P.create_eventset, "PAPI_create_eventset") ||
        !CS_PAPI_SYM(lib, P.add_named_event, "PAPI_add_named_event") || !CS_PAPI_SYM(lib, P.start, "PAPI_start") ||
        !CS_PAPI_SYM(lib, P.read, "PAPI_read") || !CS_PAPI_SYM(lib, P.strerror, "PAPI_strerror")) {
        if (cs_core_rank() <= 0)
            cs_warn_once(&warned, "PAPI not loadable; COLLSCOPE_PAPI ignored, continuing without counters");
        snprintf(h->note, sizeof h->note, "papi: library not loadable");
        return;
    }
    int rc = P.library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT || P.create_eventset(&cs_papi_set) != PAPI_OK) {
        if (cs_core_rank() <= 0)
            cs_warn_once(&warned, "PAPI did not initialize (%s); continuing without counters",
                         rc < 0 ? P.strerror(rc) : "version mismatch");
        snprintf(h->note, sizeof h->note, "papi: not initialized");
        return;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *ev = strtok_r(buf, ",", &save); ev && cs_papi_n < CS_COUNTERS_MAX; ev = strtok_r(NULL, ",", &save)) {
        rc = P.add_named_event(cs_papi_set, ev);
        if (rc != PAPI_OK) {
            if (cs_core_rank() <= 0)
                cs_warn_once(&warned, "PAPI counter %s unavailable (%s); continuing without counters", ev,
                             P.strerror(rc));
            snprintf(h->note, sizeof h->note, "papi: %s unavailable (%s)", ev, P.strerror(rc));
            return;
        }
        cs_papi_n++;
    }
    if (cs_papi_n == 0 || P.start(cs_papi_set) != PAPI_OK) {
        if (cs_core_rank() <= 0)
            cs_warn_once(&warned, "PAPI counters could not start; continuing without counters");
        snprintf(h->note, sizeof h->note, "papi: could not start");
        return;
    }
    snprintf(h->papi_events, sizeof h->papi_events, "%s", spec);
    cs_papi_thread = pthread_self();
    P.read(cs_papi_set, cs_papi_last);
    __atomic_store_n(&cs_core_hooks, 1, __ATOMIC_RELEASE);
    cs_papi_on = 1;
}

void cs_papi_sample(uint16_t tid, int after)
{
    if (!pthread_equal(pthread_self(), cs_papi_thread))
        return;
    long long now[CS_COUNTERS_MAX];
    int saved = errno;
    int rc = P.read(cs_papi_set, now);
    errno = saved;
    if (rc != PAPI_OK)
        return;
    cs_rec_counters *r = (cs_rec_counters *)cs_log_slot();
    if (!r)
        return;
    r->n = (uint16_t)cs_papi_n;
    r->tid = tid;
    for (int i = 0; i < cs_papi_n; i++) {
        r->v[i] = (uint64_t)(now[i] - cs_papi_last[i]);
        cs_papi_last[i] = now[i];
    }
    cs_log_commit(r, CS_REC_HDR(CS_REC_COUNTERS, after ? CS_CTR_AFTER : 0));
}
#else
static void cs_papi_start(const cs_settings *s, cs_log_header *h)
{
    static int warned;
    (void)h;
    if (s->papi)
        cs_warn_once(&warned, "built without PAPI; COLLSCOPE_PAPI ignored");
}
void cs_papi_sample(uint16_t tid, int after)
{
    (void)tid;
    (void)after;
}
#endif

const cs_module cs_papi_module = {
    .name = "papi",
    .start = cs_papi_start,
};
