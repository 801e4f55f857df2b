/* callsite.c: call sites of wrapped calls, deduplicated into a table.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL) so that it never replaces the
 * application's backtrace() and _Unwind_* symbols. unw_backtrace() walks the
 * stack from cached unwind info, with no system call. A stack seen before
 * costs one hash and one probe; a new one is written to the log once, as
 * CALLSITE records of raw return addresses: names are resolved at analysis
 * time, never here. */
#include "config.h"
#include "interpose/callsite.h"
#include "interpose/core.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

int cs_callsite_on;

typedef int (*cs_unw_backtrace_fn)(void **, int);
static cs_unw_backtrace_fn cs_unw_backtrace;

#define CS_CS_SLOTS 8192u /* power of two */
typedef struct cs_site {
    uint64_t hash; /* 0 = empty; written last */
    uint32_t id;
    uint32_t depth;
    uint64_t pc[CS_CALLSITE_MAX_FRAMES];
} cs_site;
static cs_site cs_sites[CS_CS_SLOTS];
static uint32_t cs_next_site = 1;
static pthread_mutex_t cs_site_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- loaded objects, for resolving return addresses later ---- */

static char cs_modules_path[PATH_MAX];
static unsigned long long cs_modules_adds = ~0ull;

typedef struct {
    FILE *f;
    unsigned long long adds;
} cs_mod_ctx;

static int cs_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    cs_mod_ctx *c = arg;
    (void)size;
    c->adds = info->dlpi_adds;
    if (!c->f)
        return 0;
    char exe[PATH_MAX];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = '\0';
        path = exe;
    }
    if (path[0] != '/')
        return 0; /* the vDSO and friends */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        unsigned long long lo = info->dlpi_addr + ph->p_vaddr;
        fprintf(c->f, "%llx %llx %llx %s\n", lo, lo + ph->p_memsz, (unsigned long long)info->dlpi_addr, path);
    }
    return 0;
}

/* Write the list of loaded objects next to the log when it changed
 * (dlopen since the last time). Called rarely: at start, when the rank is
 * known (after MPI_Init), and when a new call site appears. */
static void cs_callsite_snapshot(void)
{
    if (!cs_modules_path[0]) {
        cs_log_header *h = cs_log_header_ptr();
        if (!h)
            return;
        snprintf(cs_modules_path, sizeof cs_modules_path, "%s/logs/%s-%d.modules", cs_settings_get()->dir, h->host,
                 (int)h->pid);
    }
    cs_mod_ctx c = { NULL, 0 };
    dl_iterate_phdr(cs_module_cb, &c);
    if (c.adds == cs_modules_adds)
        return;
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", cs_modules_path);
    /* Never through a link planted under our name. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    c.f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!c.f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    dl_iterate_phdr(cs_module_cb, &c);
    if (fclose(c.f) == 0 && rename(tmp, cs_modules_path) == 0)
        cs_modules_adds = c.adds;
}

/* The address range of this library's code, to recognize our frames. */
static uintptr_t cs_self_lo, cs_self_hi;

static int cs_self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) {
            cs_self_lo = lo;
            cs_self_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void cs_callsite_init(int want)
{
    dl_iterate_phdr(cs_self_cb, (void *)(uintptr_t)&cs_callsite_capture);
    if (want == 0)
        return;
#ifdef HAVE_LIBUNWIND
    static int warned;
    void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        h = dlopen("libunwind.so", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        cs_unw_backtrace = (cs_unw_backtrace_fn)dlsym(h, "unw_backtrace");
    if (!cs_unw_backtrace) {
        if (want == 1)
            cs_warn_once(&warned, "libunwind not found (%s); call sites are off", dlerror());
        return;
    }
    cs_callsite_on = 1;
#endif
}

static void cs_callsite_start(const cs_settings *s, cs_log_header *h)
{
    cs_callsite_init(s->callsites);
    h->callsites = (uint32_t)cs_callsite_on;
    cs_callsite_snapshot();
}

static void cs_callsite_rank_known(int rank, int size)
{
    (void)rank;
    (void)size;
    cs_callsite_snapshot();
}

const cs_module cs_callsite_module = {
    .name = "callsite",
    .start = cs_callsite_start,
    .rank_known = cs_callsite_rank_known,
};

static uint64_t cs_hash_pcs(const uint64_t *pc, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h ^= pc[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h ? h : 1;
}

static uint32_t cs_callsite_capture_inner(void);

/* Called from inside traced calls: never changes errno. */
uint32_t cs_callsite_capture(void)
{
    if (!cs_callsite_on)
        return 0;
    int saved = errno;
    uint32_t id = cs_callsite_capture_inner();
    errno = saved;
    return id;
}

static uint32_t cs_callsite_capture_inner(void)
{
    void *buf[CS_CALLSITE_MAX_FRAMES + 4];
    /* The innermost frames are ours (this function, the wrapper): drop
     * every leading frame inside this library. */
    int got = cs_unw_backtrace(buf, CS_CALLSITE_MAX_FRAMES + 4), skip = 0;
    while (skip < got && (uintptr_t)buf[skip] >= cs_self_lo && (uintptr_t)buf[skip] < cs_self_hi)
        skip++;
    int n = got - skip;
    if (n > CS_CALLSITE_MAX_FRAMES)
        n = CS_CALLSITE_MAX_FRAMES;
    if (n <= 0)
        return 0;
    return cs_callsite_store((uint64_t *)(buf + skip), n);
}

uint32_t cs_callsite_store(const uint64_t *pc, int n)
{
    if (n > CS_CALLSITE_MAX_FRAMES)
        n = CS_CALLSITE_MAX_FRAMES;
    if (n <= 0)
        return 0;
    uint64_t h = cs_hash_pcs(pc, n);
    for (uint32_t i = 0; i < CS_CS_SLOTS; i++) {
        cs_site *s = &cs_sites[(h + i) & (CS_CS_SLOTS - 1)];
        uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
        if (sh == h && s->depth == (uint32_t)n && memcmp(s->pc, pc, (size_t)n * 8) == 0)
            return s->id;
        if (sh == 0) {
            pthread_mutex_lock(&cs_site_lock);
            if (__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE) != 0) {
                /* Another thread took this slot: probe on. */
                pthread_mutex_unlock(&cs_site_lock);
                i--;
                continue;
            }
            s->id = cs_next_site++;
            s->depth = (uint32_t)n;
            memcpy(s->pc, pc, (size_t)n * 8);
            __atomic_store_n(&s->hash, h, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&cs_site_lock);
            cs_log_callsite(s->id, s->pc, s->depth);
            cs_callsite_snapshot();
            return s->id;
        }
    }
    return 0; /* table full: the span goes without a call site */
}

int cs_callsite_unwinder(void)
{
#ifdef HAVE_LIBUNWIND
    if (!cs_unw_backtrace) {
        void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
        if (!h)
            h = dlopen("libunwind.so", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            cs_unw_backtrace = (cs_unw_backtrace_fn)dlsym(h, "unw_backtrace");
    }
    if (cs_unw_backtrace) {
        /* The first walk fills libunwind's caches: never inside a handler. */
        void *buf[4];
        cs_unw_backtrace(buf, 4);
        return 1;
    }
#endif
    return 0;
}

int cs_callsite_sample(uint64_t *pc, int max, uint64_t interrupted)
{
    void *buf[CS_CALLSITE_MAX_FRAMES + 16];
    if (!cs_unw_backtrace || max <= 0)
        return 0;
    int got = cs_unw_backtrace(buf, CS_CALLSITE_MAX_FRAMES + 16), first = -1;
    for (int i = 0; i < got && interrupted; i++)
        if ((uint64_t)(uintptr_t)buf[i] == interrupted) {
            first = i;
            break;
        }
    if (first < 0) {
        /* Our handler's frames, then the signal trampoline. */
        first = 0;
        while (first < got && (uintptr_t)buf[first] >= cs_self_lo && (uintptr_t)buf[first] < cs_self_hi)
            first++;
        if (first < got)
            first++;
    }
    int n = 0;
    for (int i = first; i < got && n < max; i++)
        pc[n++] = (uint64_t)(uintptr_t)buf[i];
    return n;
}

int cs_callsite_pcs(uint32_t id, uint64_t *pc, int max)
{
    for (uint32_t i = 0; id && i < CS_CS_SLOTS; i++) {
        cs_site *s = &cs_sites[i];
        if (__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE) != 0 && s->id == id) {
            int n = (int)s->depth < max ? (int)s->depth : max;
            memcpy(pc, s->pc, (size_t)n * sizeof *pc);
            return n;
        }
    }
    return 0;
}
