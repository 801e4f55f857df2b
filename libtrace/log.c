/* log.c: the per-process crash-safe span log (see log.h). */
#include "config.h"
#include "libtrace/log.h"
#include "libtrace/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CS_CHUNK_RECS 1024u /* 64 KiB a chunk */
#define CS_SEG_CHUNKS 64u   /* 4 MiB a segment */
#define CS_CHUNK_BYTES ((uint64_t)CS_CHUNK_RECS * CS_REC_SIZE)
#define CS_SEG_BYTES (CS_CHUNK_BYTES * CS_SEG_CHUNKS)
#define CS_MAX_SEGS 65536u /* 256 GiB: far past any cap */
#define CS_UNMAP_LAG 4     /* sealed segments left mapped while the next is readied */

__thread cs_log_tls cs__log_tls __attribute__((tls_model("initial-exec")));

/* Fault-injection seam: the system call whose failure matters most (space
 * on disk) goes through this table, which a test may swap. The test-only
 * setting COLLSCOPE_TEST_ENOSPC_AFTER=N makes every reservation after the
 * first N segments fail with ENOSPC, as a full disk would. */
static long cs_enospc_after = -1;
static int cs_fallocate_real(int fd, off_t off, off_t len)
{
    return posix_fallocate(fd, off, len);
}
static int cs_fallocate_test(int fd, off_t off, off_t len)
{
    if (off >= (off_t)CS_LOG_HEADER_BYTES + (off_t)cs_enospc_after * (off_t)CS_SEG_BYTES)
        return ENOSPC;
    return posix_fallocate(fd, off, len);
}
struct cs_log_syscalls cs_log_sys = { cs_fallocate_real };

static struct {
    int fd;
    int open;
    cs_log_header *hdr;   /* page 0, mapped for the life of the log */
    uint64_t max_segs;    /* cap from COLLSCOPE_LOG_MAX_MB */
    int full;             /* out of space: no more chunks */
    pthread_mutex_t lock; /* maps and unmaps segments */
    pthread_cond_t wake;  /* the prefault thread waits on it */
    uint64_t want_seg;    /* segments the prefault thread should ready */
    uint64_t ready_seg;   /* segments it has readied (mapped, faulted in) */
    int bg_started;
    pthread_t bg;            /* the prefault thread, joined at close */
    uint64_t populating;     /* segment + 1 it is faulting in, 0 = none */
    int unmap_deferred;      /* that segment was sealed meanwhile */
    uint64_t preparing;      /* segment + 1 it writes zeros into before mapping it, 0 = none */
    pthread_cond_t prepared; /* writers that claimed that segment wait on it */
    int unmap_want;          /* sealed segments wait for the prefault thread to unmap them */
    uint64_t unmap_lo;       /* every segment below is sealed and unmapped */
    uint64_t calib_ticks;    /* when the last CALIB was written */
    uint64_t calib_every;    /* ticks between CALIB records */
    uint64_t fail_seg;       /* first segment that could not be reserved */
    int closing;             /* records written by the close itself are not spans */
    int drop_told;           /* the first drop was reported */
    char drop_why[160];      /* why later spans will be dropped, told at the first drop */
    pthread_key_t key;       /* seals a thread's chunk when it exits */
    uint16_t next_tid;
    char *seg[CS_MAX_SEGS];
    uint32_t sealed[CS_MAX_SEGS];
} L = {
    .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .prepared = PTHREAD_COND_INITIALIZER
};

static void cs__log_seal(uint64_t chunk);

static void cs__log_thread_exit(void *arg)
{
    cs_log_tls *t = &cs__log_tls;
    (void)arg;
    if (t->chunk)
        cs__log_seal(t->chunk - 1);
    if (t->deferred)
        cs__log_seal(t->deferred - 1);
    t->cur = t->end = NULL;
    t->chunk = t->deferred = 0;
    t->holds = 0;
}

static char *cs__log_map_seg(uint64_t s);
static int cs__log_reserve_seg(uint64_t s);

/* Write zeros over segment s of the file (its space reserved), before it
 * is mapped: the kernel then makes its pages on the write path, dirty and
 * with their blocks mapped, two to four times cheaper in CPU than
 * faulting each page in through the mapping (measured on ext4: 15-27
 * against 55-77 ns a record). The file reads as zeros there anyway, so
 * the log's content is the same; a failed write only loses the gain. */
static void cs__log_zero(uint64_t s)
{
    static const char zeros[256 * 1024];
    off_t off = (off_t)CS_LOG_HEADER_BYTES + (off_t)(s * CS_SEG_BYTES);
    for (uint64_t done = 0; done < CS_SEG_BYTES;) {
        ssize_t n = pwrite(L.fd, zeros, sizeof zeros, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        done += (uint64_t)n;
    }
}

/* Fault a freshly mapped segment in, so that writing spans into it never
 * takes a page fault inside a traced call. */
static void cs__log_populate(char *p)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, CS_SEG_BYTES, MADV_POPULATE_WRITE) == 0 || errno != EINVAL)
        return; /* done, or the kernel could not (no memory): writes will fault */
#endif
    for (uint64_t off = 0; off < CS_SEG_BYTES; off += 4096)
        __atomic_fetch_add((volatile uint32_t *)(p + off + 4), 0, __ATOMIC_RELAXED);
}

/* The prefault thread, L.lock held: unmap the segments every thread is
 * done with (cs__log_seal asked), off the application's path. Unmapping
 * 4 MiB of dirty file pages costs a few hundred microseconds, a few ns a
 * span if a traced call paid it. The pages stay in the page cache: the
 * log on disk is the same whether a segment is unmapped now or never. */
static void cs__log_unmap_sealed(void)
{
    enum { BATCH = 16 };
    char *gone[BATCH];
    unsigned n = 0;
    uint64_t top = __atomic_load_n(&L.hdr->next_chunk, __ATOMIC_ACQUIRE) / CS_SEG_CHUNKS + 1;
    if (top > CS_MAX_SEGS)
        top = CS_MAX_SEGS;
    for (uint64_t s = L.unmap_lo; s < top && n < BATCH; s++) {
        if (__atomic_load_n(&L.sealed[s], __ATOMIC_ACQUIRE) != CS_SEG_CHUNKS || L.populating == s + 1)
            continue;
        if (L.seg[s]) {
            gone[n++] = L.seg[s];
            L.seg[s] = NULL;
        }
        if (s == L.unmap_lo)
            L.unmap_lo = s + 1;
    }
    if (n == BATCH)
        L.unmap_want = 1; /* more next time round */
    if (!n)
        return;
    pthread_mutex_unlock(&L.lock);
    for (unsigned i = 0; i < n; i++)
        munmap(gone[i], CS_SEG_BYTES);
    pthread_mutex_lock(&L.lock);
}

/* The prefault thread: maps and faults in the segment after the one being
 * filled, off the application's path. It holds no application lock and
 * takes no signal. It also unmaps the segments writers are done with. */
static void *cs__log_prefault(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&L.lock);
    while (L.open) {
        /* Readying the next segment comes first (a writer that finds its
         * pages not faulted in pays far more than an unmap), unless
         * CS_UNMAP_LAG sealed segments wait: the mapped log stays bounded. */
        int behind = L.ready_seg < L.want_seg && L.ready_seg < L.fail_seg;
        if (L.unmap_want && (!behind || L.unmap_want >= CS_UNMAP_LAG)) {
            L.unmap_want = 0;
            cs__log_unmap_sealed();
            continue;
        }
        if (!behind) {
            pthread_cond_wait(&L.wake, &L.lock);
            continue;
        }
        uint64_t s = L.ready_seg;
        /* Writers that got ahead mapped their segment themselves, and may
         * have sealed and unmapped it since: only ready segments ahead of
         * every claim, or one would be mapped again and never released. */
        uint64_t claimed = __atomic_load_n(&L.hdr->next_chunk, __ATOMIC_ACQUIRE) / CS_SEG_CHUNKS;
        if (s <= claimed) {
            L.ready_seg = claimed + 1;
            continue;
        }
        if (s < L.max_segs && !L.seg[s] && cs__log_reserve_seg(s) == 0) {
            /* Not mapped yet, so no writer holds it: a writer that claims
             * it meanwhile waits for the zeros (cs__log_refill). */
            L.preparing = s + 1;
            pthread_mutex_unlock(&L.lock);
            cs__log_zero(s);
            pthread_mutex_lock(&L.lock);
            L.preparing = 0;
            pthread_cond_broadcast(&L.prepared);
        }
        char *p = s < L.max_segs ? cs__log_map_seg(s) : NULL;
        L.ready_seg = s + 1;
        if (p) {
            /* Writers may fill and seal it meanwhile: its unmapping waits
             * for us (cs__log_seal), so p stays valid. */
            L.populating = s + 1;
            pthread_mutex_unlock(&L.lock);
            cs__log_populate(p);
            pthread_mutex_lock(&L.lock);
            L.populating = 0;
            if (L.unmap_deferred) {
                L.unmap_deferred = 0;
                munmap(L.seg[s], CS_SEG_BYTES);
                L.seg[s] = NULL;
            }
        }
    }
    pthread_mutex_unlock(&L.lock);
    return NULL;
}

/* Ask for segments [.., upto) to be readied ahead of use. */
static void cs__log_want(uint64_t upto)
{
    pthread_mutex_lock(&L.lock);
    if (upto > L.want_seg) {
        L.want_seg = upto;
        pthread_cond_signal(&L.wake);
    }
    pthread_mutex_unlock(&L.lock);
}

uint64_t cs_log_env_count(const char *name, uint64_t min, uint64_t max, uint64_t dflt, int *bad)
{
    const char *v = getenv(name);
    *bad = 0;
    if (!v || !*v)
        return dflt;
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9') { /* a sign, NaN, inf, words */
        *bad = 1;
        return dflt;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(p, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || *end || n < min || n > max) {
        *bad = 1;
        return dflt;
    }
    return n;
}

/* One warning line for a setting that was not usable (not on ranks > 0). */
static void cs_log_warn_bad(int quiet, int bad, const char *name, const char *value, const char *want, const char *dflt)
{
    if (!bad || quiet)
        return;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "collscope: %s=%.64s is not %s; using %s\n", name, value, want, dflt);
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    if (write(2, msg, (size_t)n) < 0) { /* nothing more we can do */
    }
}

int cs_log_dir_safe(const char *path, int force, char *why, size_t whylen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(why, whylen, "%s is a symbolic link, not a folder: refusing to write through it", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "%s is not a folder", path);
        return -1;
    }
    if (force)
        return 0;
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        snprintf(why, whylen, "%s belongs to another user (uid %u): refusing to write there (--force to accept)", path,
                 (unsigned)st.st_uid);
        return -1;
    }
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        snprintf(why, whylen,
                 "%s is writable by every user and not sticky: refusing to write there (--force to accept)", path);
        return -1;
    }
    return 0;
}

int cs_log_open(const char *path, const cs_log_header *proto, char *err, size_t errlen)
{
    if (L.open)
        return 0;
    /* A new file only: a name already there (an earlier log, or a link
     * planted to make us write elsewhere) is left alone. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "cannot create trace log %s: a file of that name is already there", path);
        else
            snprintf(err, errlen, "cannot create trace log %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat fst;
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
        snprintf(err, errlen, "cannot create trace log %s: not a regular file", path);
        close(fd);
        return -1;
    }
    int quiet = proto->rank > 0; /* settings are the same on every rank: rank 0 warns */
    int bad = 0;
    const char *enospc = getenv("COLLSCOPE_TEST_ENOSPC_AFTER");
    if (enospc && *enospc) {
        cs_enospc_after = (long)cs_log_env_count("COLLSCOPE_TEST_ENOSPC_AFTER", 0, CS_MAX_SEGS, 0, &bad);
        cs_log_warn_bad(quiet, bad, "COLLSCOPE_TEST_ENOSPC_AFTER", enospc, "a number of segments", "0");
        cs_log_sys.fallocate = cs_fallocate_test;
    } else if (cs_log_sys.fallocate == cs_fallocate_test) {
        cs_log_sys.fallocate = cs_fallocate_real;
    }
    int e = cs_log_sys.fallocate(fd, 0, CS_LOG_HEADER_BYTES);
    if (e != 0) {
        snprintf(err, errlen, "cannot write trace log %s: %s", path, strerror(e));
        close(fd);
        unlink(path);
        return -1;
    }
    cs_log_header *h = mmap(NULL, CS_LOG_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        snprintf(err, errlen, "cannot map trace log %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    *h = *proto;
    memcpy(h->magic, CS_LOG_MAGIC, 8);
    h->version = CS_LOG_VERSION;
    h->rec_size = CS_REC_SIZE;
    h->chunk_recs = CS_CHUNK_RECS;
    h->seg_chunks = CS_SEG_CHUNKS;
    h->next_chunk = 0;
    h->dropped = 0;
    h->clock_kind = (uint32_t)cs_clock_kind_in_use;
    __atomic_store_n(&h->state, CS_LOG_RUNNING, __ATOMIC_RELEASE);

    const char *cap = getenv("COLLSCOPE_LOG_MAX_MB");
    uint64_t mb = cs_log_env_count("COLLSCOPE_LOG_MAX_MB", 1, UINT64_MAX >> 20, 16384, &bad);
    cs_log_warn_bad(quiet, bad, "COLLSCOPE_LOG_MAX_MB", cap, "a positive whole number of MiB", "16384");
    L.max_segs = mb * 1024 * 1024 / CS_SEG_BYTES;
    if (L.max_segs < 1)
        L.max_segs = 1;
    if (L.max_segs > CS_MAX_SEGS)
        L.max_segs = CS_MAX_SEGS;
    L.fd = fd;
    L.hdr = h;
    L.full = 0;
    L.closing = 0;
    L.drop_told = 0;
    L.drop_why[0] = '\0';
    static int key_made;
    if (!key_made && pthread_key_create(&L.key, cs__log_thread_exit) == 0)
        key_made = 1;
    L.calib_every = (uint64_t)(10e6 * (h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0)); /* 10 ms */
    L.calib_ticks = 0;
    L.want_seg = L.ready_seg = 0;
    L.unmap_want = 0;
    L.unmap_lo = 0;
    L.fail_seg = UINT64_MAX;
    __atomic_store_n(&L.open, 1, __ATOMIC_RELEASE);
    /* The first segment now, the next ones ahead of need by a thread of
     * ours (or on demand, where a thread cannot be started). */
    pthread_mutex_lock(&L.lock);
    char *first = cs__log_map_seg(0);
    L.ready_seg = 1;
    pthread_mutex_unlock(&L.lock);
    if (first)
        cs__log_populate(first);
    const char *pf = getenv("COLLSCOPE_PREFAULT");
    if (!L.bg_started && !(pf && strcmp(pf, "0") == 0)) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 64 * 1024);
        if (pthread_create(&L.bg, &a, cs__log_prefault, NULL) == 0) {
            L.bg_started = 1;
            pthread_setname_np(L.bg, "collscope-log");
        }
        pthread_attr_destroy(&a);
    }
    if (L.bg_started)
        cs__log_want(2);
    cs_log_calibrate();
    return 0;
}

int cs_log_is_open(void)
{
    return __atomic_load_n(&L.open, __ATOMIC_ACQUIRE);
}
cs_log_header *cs_log_header_ptr(void)
{
    return L.hdr;
}

/* Reserve segment s's space on disk: 0, or -1 (and no segment from s on).
 * Called with L.lock held. */
static int cs__log_reserve_seg(uint64_t s)
{
    off_t off = (off_t)CS_LOG_HEADER_BYTES + (off_t)(s * CS_SEG_BYTES);
    if (s >= L.fail_seg)
        return -1;
    int e = cs_log_sys.fallocate(L.fd, off, (off_t)CS_SEG_BYTES);
    if (e != 0) {
        L.fail_seg = s;
        /* Segments are readied ahead of need: say so only if a span is
         * in fact dropped. */
        if (!L.drop_why[0])
            snprintf(L.drop_why, sizeof L.drop_why, "no space for the trace log (%s)", strerror(e));
        return -1;
    }
    return 0;
}

/* Map segment s (creating its space on disk). Called with L.lock held. */
static char *cs__log_map_seg(uint64_t s)
{
    if (L.seg[s])
        return L.seg[s];
    off_t off = (off_t)CS_LOG_HEADER_BYTES + (off_t)(s * CS_SEG_BYTES);
    if (cs__log_reserve_seg(s) != 0)
        return NULL;
    void *p = mmap(NULL, CS_SEG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, L.fd, off);
    if (p == MAP_FAILED) {
        L.fail_seg = s;
        return NULL;
    }
    L.seg[s] = p;
    return p;
}

/* A thread is done with chunk c: unmap its segment once every chunk is. */
static void cs__log_seal(uint64_t c)
{
    uint64_t s = c / CS_SEG_CHUNKS;
    if (s >= CS_MAX_SEGS)
        return;
    if (__atomic_add_fetch(&L.sealed[s], 1, __ATOMIC_ACQ_REL) == CS_SEG_CHUNKS) {
        pthread_mutex_lock(&L.lock);
        if (L.populating == s + 1) {
            L.unmap_deferred = 1; /* the prefault thread unmaps it when done */
        } else if (L.bg_started && L.open) {
            L.unmap_want++; /* the prefault thread unmaps it */
            pthread_cond_signal(&L.wake);
        } else if (L.seg[s]) {
            munmap(L.seg[s], CS_SEG_BYTES);
            L.seg[s] = NULL;
        }
        pthread_mutex_unlock(&L.lock);
    }
}

void cs__log_seal_deferred(void)
{
    cs_log_tls *t = &cs__log_tls;
    uint64_t c = t->deferred;
    t->deferred = 0;
    if (c && __atomic_load_n(&L.open, __ATOMIC_ACQUIRE))
        cs__log_seal(c - 1);
}

/* Say why spans are dropped once, when the first one is (rank 0 or a
 * process of unknown rank only: one line per job). */
static void cs__log_tell(void)
{
    if (__atomic_exchange_n(&L.drop_told, 1, __ATOMIC_ACQ_REL) || !L.hdr || L.hdr->rank > 0)
        return;
    char msg[200];
    int n = snprintf(msg, sizeof msg, "collscope: %s; later spans are dropped and counted\n",
                     L.drop_why[0] ? L.drop_why : "the trace log is full");
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    if (write(2, msg, (size_t)n) < 0) { /* nothing more we can do */
    }
}

static void cs__log_drop(void)
{
    if (!L.hdr || L.closing)
        return;
    __atomic_add_fetch(&L.hdr->dropped, 1, __ATOMIC_RELAXED);
    cs__log_tell();
}

static cs_rec *cs__log_refill_inner(unsigned n);

/* Called from inside traced calls: never changes errno. */
cs_rec *cs__log_refill(unsigned n)
{
    int saved = errno;
    cs_rec *r = cs__log_refill_inner(n);
    errno = saved;
    return r;
}

static cs_rec *cs__log_refill_inner(unsigned n)
{
    cs_log_tls *t = &cs__log_tls;
    if (!__atomic_load_n(&L.open, __ATOMIC_ACQUIRE))
        return NULL;
    if (L.full) {
        cs__log_drop();
        return NULL;
    }
    if (!t->has_key) {
        t->has_key = 1;
        t->tid = __atomic_fetch_add(&L.next_tid, 1, __ATOMIC_RELAXED);
        pthread_setspecific(L.key, (void *)1);
    }
    if (t->chunk) {
        if (t->holds && !t->deferred)
            t->deferred = t->chunk; /* it holds an open slot: seal on release */
        else
            cs__log_seal(t->chunk - 1);
    }
    t->cur = t->end = NULL;
    t->chunk = 0;

    uint64_t c = __atomic_fetch_add(&L.hdr->next_chunk, 1, __ATOMIC_ACQ_REL);
    uint64_t s = c / CS_SEG_CHUNKS;
    if (s >= L.max_segs) {
        if (!L.full) {
            L.full = 1;
            if (!L.drop_why[0])
                snprintf(L.drop_why, sizeof L.drop_why, "the trace log reached COLLSCOPE_LOG_MAX_MB (%llu)",
                         (unsigned long long)(L.max_segs * (CS_SEG_BYTES >> 20)));
        }
        cs__log_drop();
        return NULL;
    }
    pthread_mutex_lock(&L.lock);
    while (L.preparing == s + 1) /* the prefault thread is writing its zeros */
        pthread_cond_wait(&L.prepared, &L.lock);
    int fresh = L.seg[s] == NULL;
    char *base = cs__log_map_seg(s);
    pthread_mutex_unlock(&L.lock);
    if (base && fresh && !L.bg_started)
        cs__log_populate(base);
    if (!base) {
        L.full = 1;
        cs__log_drop();
        return NULL;
    }
    cs_rec *r = (cs_rec *)(base + (c % CS_SEG_CHUNKS) * CS_CHUNK_BYTES);
    t->chunk = c + 1;
    t->cur = r;
    t->end = r + CS_CHUNK_RECS;
    if (L.bg_started && c % CS_SEG_CHUNKS == 0)
        cs__log_want(s + 2);
    /* A calibration point at least every 10 ms of chunks: ticks stay
     * convertible to nanoseconds up to the end of a process that dies. */
    uint64_t now = cs_clock_ticks(), last = __atomic_load_n(&L.calib_ticks, __ATOMIC_RELAXED);
    if (now - last >= L.calib_every &&
        __atomic_compare_exchange_n(&L.calib_ticks, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        cs_rec_calib *cal = (cs_rec_calib *)t->cur++;
        int64_t mono, real;
        cs_clock_sample(&cal->ticks, &mono, &real);
        cal->mono_ns = mono;
        cal->real_ns = real + L.hdr->test_offset_ns;
        cs_log_commit(cal, CS_REC_HDR(CS_REC_CALIB, 0));
    }
    if (t->cur + n > t->end)
        return NULL;
    r = t->cur;
    t->cur += n;
    return r;
}

void cs_log_calibrate(void)
{
    cs_rec_calib *cal = (cs_rec_calib *)cs_log_slot();
    if (!cal)
        return;
    __atomic_store_n(&L.calib_ticks, cs_clock_ticks(), __ATOMIC_RELAXED);
    int64_t mono, real;
    cs_clock_sample(&cal->ticks, &mono, &real);
    cal->mono_ns = mono;
    cal->real_ns = real + L.hdr->test_offset_ns;
    cs_log_commit(cal, CS_REC_HDR(CS_REC_CALIB, 0));
}

void cs_log_commdef(int how, uint64_t id, uint64_t parent, uint32_t local, uint32_t size, int32_t rank,
                    int32_t world_rank, uint32_t args, int32_t color, int32_t key)
{
    cs_rec_comm *r = (cs_rec_comm *)cs_log_slot();
    if (!r)
        return;
    r->how = (uint16_t)how;
    r->tid = cs__log_tls.tid;
    r->t0 = cs_clock_ticks();
    r->id = id;
    r->parent = parent;
    r->local = local;
    r->size = size;
    r->rank = rank;
    r->world_rank = world_rank;
    r->args = args;
    r->color = color;
    r->key = key;
    memset(r->pad, 0, sizeof r->pad);
    cs_log_commit(r, CS_REC_HDR(CS_REC_COMMDEF, 0));
}

void cs_log_commname(uint64_t id, const char *name)
{
    size_t len = strnlen(name, CS_COMMNAME_MAX);
    unsigned parts = len ? (unsigned)((len + CS_COMMNAME_PER_REC - 1) / CS_COMMNAME_PER_REC) : 1;
    cs_rec_commname *r = (cs_rec_commname *)cs_log_slots(parts);
    if (!r)
        return;
    uint64_t t0 = cs_clock_ticks();
    for (unsigned p = 0; p < parts; p++) {
        cs_rec_commname *x = r + p;
        size_t first = (size_t)p * CS_COMMNAME_PER_REC;
        size_t nhere = len - first < CS_COMMNAME_PER_REC ? len - first : CS_COMMNAME_PER_REC;
        x->part = (uint8_t)p;
        x->nparts = (uint8_t)parts;
        x->tid = cs__log_tls.tid;
        x->t0 = t0;
        x->id = id;
        memset(x->text, 0, sizeof x->text);
        memcpy(x->text, name + first, nhere);
        cs_log_commit(x, CS_REC_HDR(CS_REC_COMMNAME, 0));
    }
}

void cs_log_callsite(uint32_t id, const uint64_t *pc, unsigned depth)
{
    if (depth > CS_CALLSITE_MAX_FRAMES)
        depth = CS_CALLSITE_MAX_FRAMES;
    unsigned parts = (depth + CS_CALLSITE_FRAMES_PER_REC - 1) / CS_CALLSITE_FRAMES_PER_REC;
    if (parts == 0)
        parts = 1;
    cs_rec_callsite *r = (cs_rec_callsite *)cs_log_slots(parts);
    if (!r)
        return;
    for (unsigned p = 0; p < parts; p++) {
        cs_rec_callsite *x = r + p;
        unsigned first = p * CS_CALLSITE_FRAMES_PER_REC;
        unsigned nhere = depth - first;
        if (nhere > CS_CALLSITE_FRAMES_PER_REC)
            nhere = CS_CALLSITE_FRAMES_PER_REC;
        x->part = (uint16_t)p;
        x->nframes = (uint16_t)depth;
        x->id = id;
        x->nhere = nhere;
        memcpy(x->pc, pc + first, nhere * sizeof(uint64_t));
        cs_log_commit(x, CS_REC_HDR(CS_REC_CALLSITE, 0));
    }
}

void cs_log_sync(void)
{
    if (!__atomic_load_n(&L.open, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&L.lock);
    for (unsigned s = 0; s < CS_MAX_SEGS; s++)
        if (L.seg[s])
            msync(L.seg[s], CS_SEG_BYTES, MS_SYNC);
    msync(L.hdr, CS_LOG_HEADER_BYTES, MS_SYNC);
    pthread_mutex_unlock(&L.lock);
}

void cs_log_close(void)
{
    if (!__atomic_load_n(&L.open, __ATOMIC_ACQUIRE))
        return;
    L.closing = 1; /* a last CALIB that finds the log full is no lost span */
    cs_log_calibrate();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    L.hdr->end_real_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + L.hdr->test_offset_ns;
    pthread_mutex_lock(&L.lock);
    __atomic_store_n(&L.open, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&L.wake);
    pthread_mutex_unlock(&L.lock);
    if (L.bg_started) {
        pthread_join(L.bg, NULL);
        L.bg_started = 0;
    }
    __atomic_store_n(&L.hdr->state, CS_LOG_CLOSED, __ATOMIC_RELEASE);
    /* Other threads may still hold chunk pointers: leave the segments
     * mapped (the process is exiting); just make the file consistent. */
    msync(L.hdr, CS_LOG_HEADER_BYTES, MS_ASYNC);
    cs__log_tls.cur = cs__log_tls.end = NULL;
}

void cs_log_forget(void)
{
    /* In a fork child: the mappings are shared with the parent's file, so
     * the child must neither write nor seal. Drop everything locally. */
    cs__log_tls.cur = cs__log_tls.end = NULL;
    cs__log_tls.chunk = cs__log_tls.deferred = 0;
    cs__log_tls.holds = 0;
    if (!L.hdr)
        return;
    for (uint64_t s = 0; s < CS_MAX_SEGS && s < L.max_segs; s++)
        if (L.seg[s]) {
            munmap(L.seg[s], CS_SEG_BYTES);
            L.seg[s] = NULL;
        }
    memset(L.sealed, 0, sizeof L.sealed);
    munmap(L.hdr, CS_LOG_HEADER_BYTES);
    L.hdr = NULL;
    if (L.fd >= 0)
        close(L.fd);
    L.fd = -1;
    L.open = 0;
    L.full = 0;
    L.next_tid = 0;
    L.bg_started = 0;
    L.want_seg = L.ready_seg = 0;
    L.unmap_want = 0;
    L.unmap_lo = 0;
    L.preparing = 0;
    pthread_mutex_init(&L.lock, NULL);
    pthread_cond_init(&L.wake, NULL);
    pthread_cond_init(&L.prepared, NULL);
}

int cs_log_mkdirs(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* ---- reader ---- */

struct cs_logr {
    int fd;
    const char *map;
    size_t size;
    cs_log_header hdr;
    uint64_t nchunks;
    uint64_t chunk; /* current chunk */
    uint64_t slot;  /* next slot in it */
    uint64_t slots_in_file;
    uint64_t missing_bytes; /* claimed log space the file does not hold */
    uint64_t bad_slots;     /* written slots that are no record */
};

/* Cut each header string at its field's end, so no reader runs past it. */
static void cs_logr_terminate(cs_log_header *h)
{
    h->host[sizeof h->host - 1] = '\0';
    h->exe[sizeof h->exe - 1] = '\0';
    h->mpi[sizeof h->mpi - 1] = '\0';
    h->tool_version[sizeof h->tool_version - 1] = '\0';
    h->papi_events[sizeof h->papi_events - 1] = '\0';
    h->note[sizeof h->note - 1] = '\0';
    h->run_id[sizeof h->run_id - 1] = '\0';
}

int cs__log_header_check(const cs_log_header *h, const char *path, char *err, size_t errlen)
{
    if (memcmp(h->magic, CS_LOG_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: not a collscope log (bad magic)", path);
        return -1;
    }
    if (h->version != CS_LOG_VERSION || h->rec_size != CS_REC_SIZE) {
        snprintf(err, errlen, "%s: log version %u (record %u bytes) is not the supported version %d", path, h->version,
                 h->rec_size, CS_LOG_VERSION);
        return -1;
    }
    if (h->chunk_recs == 0 || h->seg_chunks == 0 || h->chunk_recs > (1u << 20) || h->seg_chunks > (1u << 16)) {
        snprintf(err, errlen, "%s: corrupt log header (chunk of %u slots, segment of %u chunks)", path, h->chunk_recs,
                 h->seg_chunks);
        return -1;
    }
    return 0;
}

/* Times from a log are kept within +-CS_LOG_TIME_LIM (2^61 ns, 73
 * years): a damaged calibration or rate gives a saturated time, and the
 * sum or difference of two such times still fits in an int64. */
#define CS_LOG_TIME_LIM (INT64_C(1) << 61)

static int64_t cs_log_time_clamp(int64_t v)
{
    return v > CS_LOG_TIME_LIM ? CS_LOG_TIME_LIM : v < -CS_LOG_TIME_LIM ? -CS_LOG_TIME_LIM : v;
}

void cs_log_clock_note(cs_log_clock *c, const cs_rec_calib *x, int64_t test_offset_ns)
{
    if (x->ticks >= c->ticks) {
        int64_t r;
        c->ticks = x->ticks;
        if (__builtin_sub_overflow(x->real_ns, test_offset_ns, &r))
            r = x->real_ns > 0 ? CS_LOG_TIME_LIM : -CS_LOG_TIME_LIM;
        c->real = cs_log_time_clamp(r);
    }
}

int64_t cs_log_clock_real(const cs_log_clock *c, uint64_t ticks)
{
    if (!(c->ticks_per_ns > 0))
        return 0;
    /* A damaged log's rate or calibration can put the time beyond what
     * an int64 holds: saturate rather than convert out of range (the sum
     * in integers: a double would round today's nanoseconds to 256). */
    double d = ((double)ticks - (double)c->ticks) / c->ticks_per_ns;
    int64_t r;
    if (d != d)
        return cs_log_time_clamp(c->real);
    if (d >= 4.0e18 || d <= -4.0e18 || __builtin_add_overflow(c->real, (int64_t)d, &r))
        return d > 0 ? CS_LOG_TIME_LIM : -CS_LOG_TIME_LIM;
    return cs_log_time_clamp(r);
}

int cs__log_open_read(const char *path, int64_t *size, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO or a device is never waited on; it is refused
     * below, as is a symbolic link. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen, "%s: a symbolic link, not a log file", path);
        else
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_size < CS_LOG_HEADER_BYTES) {
        snprintf(err, errlen, "%s: not a collscope log (too short: %lld bytes)", path, (long long)st.st_size);
        close(fd);
        return -1;
    }
    *size = (int64_t)st.st_size;
    return fd;
}

cs_logr *cs_logr_open(const char *path, char *err, size_t errlen)
{
    int64_t size;
    int fd = cs__log_open_read(path, &size, err, errlen);
    if (fd < 0)
        return NULL;
    const char *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    const cs_log_header *h = (const cs_log_header *)map;
    if (cs__log_header_check(h, path, err, errlen) != 0)
        goto bad;
    cs_logr *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto bad;
    }
    r->fd = fd;
    r->map = map;
    r->size = (size_t)size;
    r->hdr = *h;
    cs_logr_terminate(&r->hdr);
    /* A file cut short (a dying disk, a copy in progress) keeps every
     * whole slot it still has: count the partial last chunk too. */
    uint64_t chunk_bytes = (uint64_t)h->chunk_recs * CS_REC_SIZE;
    uint64_t body = r->size - CS_LOG_HEADER_BYTES;
    uint64_t in_file = (body + chunk_bytes - 1) / chunk_bytes;
    r->nchunks = h->next_chunk < in_file ? h->next_chunk : in_file;
    r->slots_in_file = body / CS_REC_SIZE;
    /* Chunks the header says were claimed but the file lacks were cut
     * off (a claim past the space is a counted drop, not a loss; a process
     * that died may have claimed a chunk of the segment it was about to
     * reserve). Space reserved but never claimed is no loss. */
    uint64_t seg_bytes = chunk_bytes * h->seg_chunks;
    uint64_t claimed = h->next_chunk < UINT64_MAX / chunk_bytes ? h->next_chunk * chunk_bytes : UINT64_MAX;
    if (h->dropped) {
        uint64_t whole = body / seg_bytes * seg_bytes + (body % seg_bytes ? seg_bytes : 0);
        if (claimed > whole)
            claimed = whole;
    }
    uint64_t lost = claimed > body ? claimed - body : 0;
    if (lost && (h->state == CS_LOG_CLOSED || body % seg_bytes != 0 || lost > seg_bytes))
        r->missing_bytes = lost;
    madvise((void *)map, r->size, MADV_SEQUENTIAL);
    return r;
bad:
    munmap((void *)map, (size_t)size);
    close(fd);
    return NULL;
}

void cs_logr_close(cs_logr *r)
{
    if (!r)
        return;
    munmap((void *)r->map, r->size);
    close(r->fd);
    free(r);
}

int cs_logr_damage(const cs_logr *r, char *why, size_t whylen)
{
    if (!r->missing_bytes && !r->bad_slots)
        return 0;
    unsigned long long kib = (r->missing_bytes + 1023) / 1024,
                       recs = (r->missing_bytes + CS_REC_SIZE - 1) / CS_REC_SIZE,
                       bad = (unsigned long long)r->bad_slots;
    if (r->missing_bytes && r->bad_slots)
        snprintf(why, whylen, "cut short: %llu KiB (up to %llu records) missing; %llu damaged slots", kib, recs, bad);
    else if (r->missing_bytes)
        snprintf(why, whylen, "cut short: %llu KiB (up to %llu records) missing", kib, recs);
    else
        snprintf(why, whylen, "%llu damaged slots (no record of a known kind)", bad);
    return 1;
}

const cs_log_header *cs_logr_header(const cs_logr *r)
{
    return &r->hdr;
}
int cs_logr_closed(const cs_logr *r)
{
    return r->hdr.state == CS_LOG_CLOSED;
}

const cs_rec *cs_logr_next(cs_logr *r)
{
    while (r->chunk < r->nchunks) {
        const cs_rec *base =
            (const cs_rec *)(r->map + CS_LOG_HEADER_BYTES + r->chunk * (uint64_t)r->hdr.chunk_recs * CS_REC_SIZE);
        uint64_t first = r->chunk * r->hdr.chunk_recs;
        while (r->slot < r->hdr.chunk_recs && first + r->slot < r->slots_in_file) {
            const cs_rec *rec = base + r->slot++;
            uint32_t hdr = __atomic_load_n(&rec->hdr, __ATOMIC_ACQUIRE);
            if (hdr != 0 && CS_REC_KIND(hdr) < CS_REC_KIND_MAX && CS_REC_KIND(hdr) != 0)
                return rec;
            if (hdr != 0)
                r->bad_slots++;
        }
        r->chunk++;
        r->slot = 0;
        /* Drop what was read from this process's memory (the pages stay in
         * the page cache), so converting a long log needs little memory. */
        if (r->chunk % 64 == 0) {
            uint64_t cb = (uint64_t)r->hdr.chunk_recs * CS_REC_SIZE;
            madvise((void *)(r->map + CS_LOG_HEADER_BYTES + (r->chunk - 64) * cb), 64 * cb, MADV_DONTNEED);
        }
    }
    return NULL;
}
