/* callsite.c: call sites of wrapped calls, deduplicated into a table.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL) so that it never replaces the
 * application's backtrace() and _Unwind_* symbols. unw_backtrace() walks the
 * stack from cached unwind info, with no system call. A stack seen before
 * costs one hash and one probe; a new one is written to the log once, as
 * CALLSITE records of raw return addresses: names are resolved at analysis
 * time, never here.
 *
 * Most calls skip the walk too: a cache keyed by where the wrapper called
 * us from (our return address, our frame, the thread) remembers the stack
 * id and, for each of its return addresses, the stack slot the call
 * instruction stored it in. A call whose slots still hold those addresses
 * has that stack: with the same frame of the same wrapper at the same
 * depth of the same thread's stack, the return addresses in their slots
 * are what an unwinder would read again. A slot learned wrong is never
 * used: the slots come from a full libunwind walk (unw_step, which also
 * reports each frame's stack pointer) whose addresses must equal the
 * backtrace's, and the word in each slot must be its return address. */
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
/* libunwind's local walk, for learning the cache's slots (x86-64 only:
 * the register numbers and a return address stored just below the
 * caller's stack pointer are that ABI's). Buffers are larger than
 * libunwind's unw_context_t (a ucontext_t) and unw_cursor_t (127 words). */
#if defined(__x86_64__)
#define CS_UNW_REG_SP 7  /* UNW_X86_64_RSP */
#define CS_UNW_REG_IP 16 /* UNW_X86_64_RIP */
#define CS_UNW_BUF 4096
typedef int (*cs_unw_getcontext_fn)(void *ctx);
typedef int (*cs_unw_init_local_fn)(void *cursor, void *ctx);
typedef int (*cs_unw_step_fn)(void *cursor);
typedef int (*cs_unw_get_reg_fn)(void *cursor, int reg, uint64_t *val);
static cs_unw_getcontext_fn cs_unw_getcontext;
static cs_unw_init_local_fn cs_unw_init_local;
static cs_unw_step_fn cs_unw_step;
static cs_unw_get_reg_fn cs_unw_get_reg;
#endif

/* The cache of call sites by where the wrapper calls from (see the top).
 * An entry is written once under cs_site_lock and published by storing
 * `ra` last; readers need no lock. Several entries may share a key (one
 * call point reached from different callers at the same depth); `n` ==
 * CS_FAST_WALK marks a key whose stack cannot be checked this way (a
 * frame without its return address in the slot below its caller's stack
 * pointer, e.g. a signal frame): those calls walk the stack every time. */
#define CS_FAST_SLOTS 2048u /* power of two */
#define CS_FAST_PROBES 16u
#define CS_FAST_LEARN_MAX 1024 /* full walks to learn slots, per process (each ~30 us) */
#define CS_FAST_WALK 0xffffu
typedef struct cs_fast {
    uint64_t ra; /* our return address (in the wrapper); 0 = empty; written last */
    uint64_t fp; /* our frame address */
    uint64_t th; /* the thread (its TLS block) */
    uint32_t id; /* stack id */
    uint16_t n;  /* frames to check, or CS_FAST_WALK */
    uint16_t pad;
    uint32_t off[CS_CALLSITE_MAX_FRAMES]; /* slot of pc[i]: fp + off[i] */
    uint64_t pc[CS_CALLSITE_MAX_FRAMES];
} cs_fast;
static cs_fast cs_fast_tab[CS_FAST_SLOTS];
static int cs_fast_learns;

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
#if defined(__x86_64__)
    /* Without all four, every call walks its stack (no cache). */
    cs_unw_getcontext = (cs_unw_getcontext_fn)dlsym(h, "_Ux86_64_getcontext");
    cs_unw_init_local = (cs_unw_init_local_fn)dlsym(h, "_ULx86_64_init_local");
    cs_unw_step = (cs_unw_step_fn)dlsym(h, "_ULx86_64_step");
    cs_unw_get_reg = (cs_unw_get_reg_fn)dlsym(h, "_ULx86_64_get_reg");
    if (!cs_unw_getcontext || !cs_unw_init_local || !cs_unw_step || !cs_unw_get_reg)
        cs_fast_learns = CS_FAST_LEARN_MAX;
#endif
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

static uint64_t cs_fast_hash(uint64_t ra, uint64_t fp, uint64_t th)
{
    uint64_t h = (ra ^ (fp * 0x9e3779b97f4a7c15ull) ^ (th >> 12)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static uint32_t cs_callsite_capture_inner(uint64_t ra, uint64_t fp, uint64_t th, uint64_t h);

/* Does the stack above `fp` hold e's return addresses in their slots? */
static inline int cs_fast_holds(const cs_fast *e, uint64_t fp)
{
    for (unsigned k = 0; k < e->n; k++)
        if (*(const uint64_t *)(uintptr_t)(fp + e->off[k]) != e->pc[k])
            return 0;
    return 1;
}

/* This thread's last hit: a loop calling from one place finds it first. */
static __thread const cs_fast *cs_fast_last __attribute__((tls_model("initial-exec")));

static __attribute__((noinline)) uint32_t cs_callsite_capture_slow(uint64_t ra, uint64_t fp)
{
    uint64_t th = (uint64_t)(uintptr_t)&cs__log_tls;
    uint64_t h = cs_fast_hash(ra, fp, th);
    for (uint32_t i = 0; i < CS_FAST_PROBES; i++) {
        const cs_fast *e = &cs_fast_tab[(h + i) & (CS_FAST_SLOTS - 1)];
        uint64_t era = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
        if (era == 0)
            break;
        if (era != ra || e->fp != fp || e->th != th)
            continue;
        if (e->n == CS_FAST_WALK)
            break;
        if (cs_fast_holds(e, fp)) {
            cs_fast_last = e;
            return e->id;
        }
    }
    int saved = errno;
    uint32_t id = cs_callsite_capture_inner(ra, fp, th, h);
    errno = saved;
    return id;
}

/* Called from inside traced calls (the wrapper calls it directly: its
 * return address and frame are the cache's key): never changes errno. A
 * cache hit reads the slots of the stack's return addresses, nothing else. */
__attribute__((noinline)) uint32_t cs_callsite_capture(void)
{
    if (!cs_callsite_on)
        return 0;
    uint64_t ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
    uint64_t fp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    const cs_fast *e = cs_fast_last;
    /* An entry's ra is never reset, so the one this thread last hit stays
     * whole; its th is this thread's by construction. */
    if (CS_LIKELY(e != NULL) && e->ra == ra && e->fp == fp && cs_fast_holds(e, fp))
        return e->id;
    return cs_callsite_capture_slow(ra, fp);
}

#if defined(__x86_64__)
/* The stack slots of pc[0..n) above `base`, as offsets from it, from a
 * full walk of this thread's stack: 0, or -1 when a frame's return address
 * is not where the call stored it (its slot just below the caller's stack
 * pointer) or the walk disagrees with pc[]. */
__attribute__((noinline)) static int cs_fast_learn(const uint64_t *pc, int n, uint64_t base, uint32_t *off)
{
    _Alignas(64) char ctx[CS_UNW_BUF], cur[CS_UNW_BUF];
    if (cs_unw_getcontext(ctx) != 0 || cs_unw_init_local(cur, ctx) != 0)
        return -1;
    int k = 0;
    for (int steps = 0; steps < 64; steps++) {
        uint64_t ip = 0, sp = 0;
        if (cs_unw_get_reg(cur, CS_UNW_REG_IP, &ip) != 0 || cs_unw_get_reg(cur, CS_UNW_REG_SP, &sp) != 0)
            return -1;
        if (ip == pc[k]) {
            uint64_t slot = sp - 8;
            if (sp < base + 8 || slot - base > UINT32_MAX || *(const uint64_t *)(uintptr_t)slot != ip)
                return -1;
            off[k++] = (uint32_t)(slot - base);
            if (k == n)
                return 0;
        } else if (k > 0) {
            return -1;
        }
        if (cs_unw_step(cur) <= 0)
            return -1;
    }
    return -1;
}
#endif

/* Remember the stack of key (ra, fp, th): its slots when a walk finds
 * them, else that this key must walk. Under cs_site_lock. */
static void cs_fast_add(uint64_t ra, uint64_t fp, uint64_t th, uint64_t h, uint32_t id, const uint64_t *pc, int n)
{
    cs_fast e;
    memset(&e, 0, sizeof e);
    e.fp = fp;
    e.th = th;
    e.id = id;
    e.n = CS_FAST_WALK;
#if defined(__x86_64__)
    if (id && cs_fast_learn(pc, n, fp, e.off) == 0) {
        e.n = (uint16_t)n;
        memcpy(e.pc, pc, (size_t)n * sizeof *pc);
    }
#else
    (void)pc;
    (void)n;
#endif
    for (uint32_t i = 0; i < CS_FAST_PROBES; i++) {
        cs_fast *s = &cs_fast_tab[(h + i) & (CS_FAST_SLOTS - 1)];
        if (__atomic_load_n(&s->ra, __ATOMIC_RELAXED) != 0)
            continue;
        uint64_t ra_keep = ra;
        e.ra = 0;
        *s = e;
        __atomic_store_n(&s->ra, ra_keep, __ATOMIC_RELEASE);
        return;
    }
}

static uint32_t cs_callsite_capture_inner(uint64_t ra, uint64_t fp, uint64_t th, uint64_t h)
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
    uint32_t id = cs_callsite_store((uint64_t *)(buf + skip), n);
    /* Learn this key's slots, a bounded number of times per process: a
     * key already cached as one to walk, or a full table, stays walking. */
    if (id && __atomic_load_n(&cs_fast_learns, __ATOMIC_RELAXED) < CS_FAST_LEARN_MAX) {
        pthread_mutex_lock(&cs_site_lock);
        if (cs_fast_learns < CS_FAST_LEARN_MAX) {
            int walk = 0;
            for (uint32_t i = 0; i < CS_FAST_PROBES; i++) {
                const cs_fast *e = &cs_fast_tab[(h + i) & (CS_FAST_SLOTS - 1)];
                if (e->ra == 0)
                    break;
                if (e->ra == ra && e->fp == fp && e->th == th && e->n == CS_FAST_WALK)
                    walk = 1;
            }
            if (!walk) {
                __atomic_store_n(&cs_fast_learns, cs_fast_learns + 1, __ATOMIC_RELAXED);
                cs_fast_add(ra, fp, th, h, id, (uint64_t *)(buf + skip), n);
            }
        }
        pthread_mutex_unlock(&cs_site_lock);
    }
    return id;
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
