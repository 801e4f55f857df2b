/* watchdog.c: notice a hang from inside the process, while it lasts.
 *
 * With COLLSCOPE_HANG_TIMEOUT=S a thread started once the job rank is known
 * (after MPI_Init) wakes five times per timeout and looks at the table of
 * traced threads (watchdog.h). It finds
 *   - a call in flight for longer than S (reason "inflight"), and
 *   - a rank with no traced call for longer than S although its calls
 *     usually come at least 16 times per timeout (reason "idle"; not
 *     after MPI_Finalize began).
 * For each it samples the stack of the stuck thread (for "idle": the main
 * thread) with a signal (COLLSCOPE_HANG_SIGNAL) whose handler walks the
 * interrupted stack, writes a HANG record (span.h) after the stack's
 * CALLSITE records, and prints one line on stderr. With
 * COLLSCOPE_HANG_ACTION=abort it then waits one look more (the other ranks,
 * hung since about the same moment, record theirs), makes the log durable
 * and ends the process through MPI_Abort, or _exit when that does not end
 * it at once.
 *
 * Nothing happens while nothing hangs: no output, no signal. The
 * application keeps its own handler for the sampling signal: sigaction()
 * and signal() for it are answered here, and the handler passes every
 * signal that is not our sample on to the application's disposition. */
#include "config.h"
#include "interpose/watchdog.h"
#include "interpose/callsite.h"
#include "interpose/settings.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

int cs_wd_on;
__thread cs_wd_thr *cs_wd_me __attribute__((tls_model("initial-exec")));
void (*cs_wd_abort_hook)(int code);

#define CS_WD_MAX 1024 /* threads watched; later ones go unwatched */
static cs_wd_thr cs_wd_tab[CS_WD_MAX];
static cs_wd_thr cs_wd_spare; /* every thread past CS_WD_MAX */
static uint32_t cs_wd_n;

static double cs_wd_timeout; /* seconds */
static double cs_wd_period;  /* seconds between looks */
static int cs_wd_action, cs_wd_sig;
static int cs_wd_final;   /* MPI_Finalize began */
static int cs_wd_started; /* the thread was started (this process) */
static pthread_t cs_wd_thread;
static pthread_mutex_t cs_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cs_wd_wake;
static int cs_wd_stop;

/* ---- the sampling signal ---- */

typedef int (*cs_wd_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*cs_wd_signal_fn)(int, sighandler_t);
static cs_wd_sigaction_fn cs_wd_real_sigaction;
static cs_wd_signal_fn cs_wd_real_signal;
static int cs_wd_owned;            /* our handler is installed for cs_wd_sig */
static struct sigaction cs_wd_app; /* the application's disposition of it */
static int cs_wd_cookie;           /* its address marks our own samples */
static pid_t cs_wd_pid;

#define CS_WD_FRAMES CS_CALLSITE_MAX_FRAMES
static int cs_wd_s_state; /* 1 asked, 2 taken (atomic) */
static int cs_wd_s_n;
static uint64_t cs_wd_s_pc[CS_WD_FRAMES];

static void cs_wd_resolve(void)
{
    if (!cs_wd_real_sigaction)
        cs_wd_real_sigaction = (cs_wd_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!cs_wd_real_signal)
        cs_wd_real_signal = (cs_wd_signal_fn)dlsym(RTLD_NEXT, "signal");
}

/* Resolved before the application runs: sigaction() may be called from a
 * signal handler, where dlsym may not. */
__attribute__((constructor)) static void cs_wd_init(void)
{
    cs_wd_resolve();
}

/* A signal that is not our sample: what the application asked for. */
static void cs_wd_chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction a = cs_wd_app;
    if (a.sa_flags & SA_RESETHAND) {
        memset(&cs_wd_app, 0, sizeof cs_wd_app);
        cs_wd_app.sa_handler = SIG_DFL;
    }
    if (a.sa_flags & SA_SIGINFO) {
        if (a.sa_sigaction)
            a.sa_sigaction(sig, si, uc);
        return;
    }
    if (a.sa_handler == SIG_IGN)
        return;
    if (a.sa_handler == SIG_DFL) {
        /* Its default action (these signals end the process): raised
         * again, delivered once this handler returns. */
        struct sigaction d;
        memset(&d, 0, sizeof d);
        d.sa_handler = SIG_DFL;
        cs_wd_owned = 0;
        if (cs_wd_real_sigaction)
            cs_wd_real_sigaction(sig, &d, NULL);
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
        return;
    }
    a.sa_handler(sig);
}

static void cs_wd_handler(int sig, siginfo_t *si, void *uc)
{
    if (si && si->si_code == SI_QUEUE && si->si_pid == cs_wd_pid && si->si_value.sival_ptr == &cs_wd_cookie) {
        int saved = errno;
        if (__atomic_load_n(&cs_wd_s_state, __ATOMIC_ACQUIRE) == 1) {
            uint64_t ip = 0;
#if defined(__x86_64__)
            if (uc)
                ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
            if (uc)
                ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.pc;
#endif
            cs_wd_s_n = cs_callsite_sample(cs_wd_s_pc, CS_WD_FRAMES, ip);
            __atomic_store_n(&cs_wd_s_state, 2, __ATOMIC_RELEASE);
        }
        errno = saved;
        return;
    }
    cs_wd_chain(sig, si, uc);
}

static int cs_wd_install(int sig)
{
    cs_wd_resolve();
    if (!cs_wd_real_sigaction)
        return -1;
    struct sigaction a, old;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = cs_wd_handler;
    a.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&a.sa_mask);
    if (cs_wd_real_sigaction(sig, &a, &old) != 0)
        return -1;
    cs_wd_app = old;
    cs_wd_pid = getpid();
    __atomic_store_n(&cs_wd_owned, 1, __ATOMIC_RELEASE);
    return 0;
}

/* The application's sigaction(): for our signal, its disposition is kept
 * and reported back while our handler stays installed. */
CS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!cs_wd_real_sigaction)
        cs_wd_resolve();
    if (!__atomic_load_n(&cs_wd_owned, __ATOMIC_ACQUIRE) || sig != cs_wd_sig) {
        if (!cs_wd_real_sigaction) {
            errno = ENOSYS;
            return -1;
        }
        return cs_wd_real_sigaction(sig, act, old);
    }
    struct sigaction prev = cs_wd_app;
    if (act)
        cs_wd_app = *act;
    if (old)
        *old = prev;
    return 0;
}

CS_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
    if (!cs_wd_real_signal)
        cs_wd_resolve();
    if (!__atomic_load_n(&cs_wd_owned, __ATOMIC_ACQUIRE) || sig != cs_wd_sig) {
        if (!cs_wd_real_signal) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return cs_wd_real_signal(sig, h);
    }
    if (h == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sighandler_t prev =
        (cs_wd_app.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)cs_wd_app.sa_sigaction : cs_wd_app.sa_handler;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    a.sa_flags = SA_RESTART;
    cs_wd_app = a;
    return prev;
}

/* The stack of thread `ktid`, sampled by our signal: frames stored in pc,
 * 0 when it did not answer within 200 ms (it blocks the signal, or died). */
static int cs_wd_sample(int32_t ktid, uint64_t *pc)
{
    if (!__atomic_load_n(&cs_wd_owned, __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&cs_wd_s_state, 1, __ATOMIC_RELEASE);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = cs_wd_sig;
    si.si_code = SI_QUEUE;
    si.si_pid = cs_wd_pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = &cs_wd_cookie;
    if (syscall(SYS_rt_tgsigqueueinfo, cs_wd_pid, ktid, cs_wd_sig, &si) != 0) {
        __atomic_store_n(&cs_wd_s_state, 0, __ATOMIC_RELEASE);
        return 0;
    }
    for (int i = 0; i < 200; i++) {
        if (__atomic_load_n(&cs_wd_s_state, __ATOMIC_ACQUIRE) == 2) {
            int n = cs_wd_s_n;
            memcpy(pc, cs_wd_s_pc, (size_t)n * sizeof *pc);
            __atomic_store_n(&cs_wd_s_state, 0, __ATOMIC_RELEASE);
            return n;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&cs_wd_s_state, 0, __ATOMIC_RELEASE);
    return 0;
}

/* ---- the table of threads ---- */

cs_wd_thr *cs_wd_register(void)
{
    int saved = errno;
    uint32_t i = __atomic_fetch_add(&cs_wd_n, 1, __ATOMIC_ACQ_REL);
    cs_wd_thr *w = i < CS_WD_MAX ? &cs_wd_tab[i] : &cs_wd_spare;
    if (w != &cs_wd_spare) {
        w->ktid = (int32_t)syscall(SYS_gettid);
        w->tid = cs__log_tls.tid;
        __atomic_store_n(&w->used, 1, __ATOMIC_RELEASE);
    }
    cs_wd_me = w;
    errno = saved;
    return w;
}

void cs_wd_finalizing(void)
{
    __atomic_store_n(&cs_wd_final, 1, __ATOMIC_RELEASE);
}

/* Copy a record from this process's memory so that a slot unmapped
 * meanwhile gives an error, not a crash (process_vm_readv on ourselves);
 * where the system refuses that call, a plain copy, which the callers
 * make only of a slot its thread still holds. 0 when copied. */
static int cs_wd_copy(const cs_rec *slot, cs_rec *out, int held)
{
    static int plain;
    if (!__atomic_load_n(&plain, __ATOMIC_RELAXED)) {
        struct iovec local = { out, sizeof *out }, remote = { (void *)slot, sizeof *out };
        if (syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) == (long)sizeof *out)
            return 0;
        if (errno != ENOSYS && errno != EPERM)
            return -1;
        __atomic_store_n(&plain, 1, __ATOMIC_RELAXED);
    }
    if (!held)
        return -1;
    memcpy(out, slot, sizeof *out);
    return 0;
}

/* A copy of thread w's record of the call that started at t0: 1 when the
 * copy is of that call still in flight. */
static int cs_wd_peek(cs_wd_thr *w, uint64_t t0, cs_rec *out)
{
    cs_rec *slot = w->slot;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!slot || __atomic_load_n(&w->t0, __ATOMIC_ACQUIRE) != t0)
        return 0;
    if (cs_wd_copy(slot, out, 1) != 0)
        return 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&w->t0, __ATOMIC_ACQUIRE) == t0 && w->slot == slot && out->t0 == t0;
}

/* The record of thread w's last call, ended at `last`: 1 when read. */
static int cs_wd_peek_last(cs_wd_thr *w, uint64_t last, cs_rec *out)
{
    cs_rec *slot = w->slot;
    if (!slot || cs_wd_copy(slot, out, 0) != 0)
        return 0;
    return CS_REC_KIND(out->hdr) == CS_REC_SPAN && out->t1 == last;
}

static double cs_wd_secs(uint64_t ticks)
{
    cs_log_header *h = cs_log_header_ptr();
    double tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
    return (double)ticks / tpn / 1e9;
}

/* "function (object)" or "object+0xoffset" of a code address. */
static void cs_wd_where(uint64_t pc, char *buf, size_t len)
{
    Dl_info di;
    buf[0] = '\0';
    if (!pc || !dladdr((void *)(uintptr_t)pc, &di) || !di.dli_fname)
        return;
    const char *obj = strrchr(di.dli_fname, '/');
    obj = obj ? obj + 1 : di.dli_fname;
    if (di.dli_sname)
        snprintf(buf, len, "%s (%s)", di.dli_sname, obj);
    else
        snprintf(buf, len, "%s+0x%llx", obj, (unsigned long long)(pc - (uint64_t)(uintptr_t)di.dli_fbase));
}

static void cs_wd_comm_name(const cs_rec *r, uint32_t flags, char *buf, size_t len)
{
    if (!(flags & CS_F_HAS_COMM))
        buf[0] = '\0';
    else if (r->comm == 0)
        snprintf(buf, len, " of MPI_COMM_WORLD");
    else if (r->comm == 1)
        snprintf(buf, len, " of MPI_COMM_SELF");
    else
        snprintf(buf, len, " of communicator #%u", (unsigned)r->comm);
}

/* Make the log durable, then end the process (and so the job). */
static void *cs_wd_last_resort(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 700000000 };
    nanosleep(&ts, NULL);
    _exit(134);
    return NULL;
}

static void cs_wd_abort(void)
{
    /* The other ranks of the job, hung since about the same moment, see
     * it within one look of ours: give them that long to record theirs. */
    double grace = cs_wd_period + 0.3;
    struct timespec g = { (time_t)grace, (long)((grace - (double)(time_t)grace) * 1e9) };
    while (nanosleep(&g, &g) != 0)
        ;
    cs_log_sync();
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, cs_wd_last_resort, NULL) != 0)
        _exit(134);
    if (cs_wd_abort_hook)
        cs_wd_abort_hook(134);
    _exit(134);
}

/* Write the HANG record and say it. `r`: the stuck (or last) call, flags
 * its span flags; `ktid`: the thread to sample. */
static void cs_wd_hang(int reason, const cs_rec *r, uint32_t flags, uint16_t tid, int32_t ktid, uint64_t since,
                       uint64_t now, double every_ms)
{
    uint64_t pc[CS_WD_FRAMES];
    int n = cs_wd_sample(ktid, pc);
    uint32_t stack = n > 0 ? cs_callsite_store(pc, n) : 0;
    cs_rec_hang *h = (cs_rec_hang *)cs_log_slot();
    if (h) {
        h->op = r ? r->op : 0;
        h->tid = tid;
        h->since = since;
        h->detected = now;
        h->reason = (uint8_t)reason;
        h->action = (uint8_t)cs_wd_action;
        h->ktid = ktid;
        h->stack = stack;
        if (r) {
            h->bytes = r->bytes;
            h->comm = r->comm;
            h->seq = r->seq;
            h->peer = r->peer;
            h->tag = r->tag;
            h->callsite = r->callsite;
        }
        cs_log_commit(h, CS_REC_HDR(CS_REC_HANG, flags & (CS_F_HAS_COMM | CS_F_HAS_SEQ | CS_F_HAS_PEER)));
    }
    char line[900], comm[48], where[200], peer[48] = "", site[480] = "", at[200];
    cs_wd_comm_name(r ? r : &(cs_rec){ 0 }, r ? flags : 0, comm, sizeof comm);
    uint64_t cpc[CS_WD_FRAMES];
    int cn = r && r->callsite ? cs_callsite_pcs(r->callsite, cpc, CS_WD_FRAMES) : 0;
    cs_wd_where(cn > 0 ? cpc[0] : 0, at, sizeof at);
    cs_wd_where(n > 0 ? pc[0] : 0, where, sizeof where);
    snprintf(site, sizeof site, "%s%s%s%s", at[0] ? ", called at " : "", at, where[0] ? ", sampled in " : "", where);
    const char *op = r && r->op < CS_OP_COUNT ? cs_ops[r->op].name : "?";
    double secs = cs_wd_secs(now - since);
    int rank = cs_core_rank();
    if (reason == CS_HANG_INFLIGHT) {
        if (flags & CS_F_HAS_PEER)
            snprintf(peer, sizeof peer, " peer %d tag %d", (int)r->peer, (int)r->tag);
        char seq[32] = "";
        if (flags & CS_F_HAS_SEQ)
            snprintf(seq, sizeof seq, " seq %u", (unsigned)r->seq);
        snprintf(line, sizeof line, "hang on rank %d (pid %d): %s%s%s%s (%llu B) in flight for %.1f s%s%s", rank,
                 (int)cs_wd_pid, op, seq, comm, peer, (unsigned long long)r->bytes, secs, site,
                 cs_wd_action == CS_HANG_ABORT ? "; aborting" : "");
    } else {
        snprintf(line, sizeof line,
                 "hang on rank %d (pid %d): no traced call for %.1f s (they came every %.2f ms), the last %s%s%s", rank,
                 (int)cs_wd_pid, secs, every_ms, r ? op : "none", site,
                 cs_wd_action == CS_HANG_ABORT ? "; aborting" : "");
    }
    cs_warn_once(NULL, "%s", line);
    if (cs_wd_action == CS_HANG_ABORT)
        cs_wd_abort();
}

/* ---- the thread ---- */

typedef struct cs_wd_state {
    uint64_t to_ticks;
    uint64_t prev_calls, prev_last; /* at the last look that saw calls end */
    double every;                   /* ticks between calls, smoothed; 0 = unknown */
    int idle_told;
} cs_wd_state;

static void cs_wd_scan(cs_wd_state *s)
{
    uint64_t now = cs_clock_ticks();
    uint32_t n = __atomic_load_n(&cs_wd_n, __ATOMIC_ACQUIRE);
    if (n > CS_WD_MAX)
        n = CS_WD_MAX;
    int busy = 0;
    uint64_t last = 0, calls = 0;
    cs_wd_thr *lastw = NULL;
    for (uint32_t i = 0; i < n; i++) {
        cs_wd_thr *w = &cs_wd_tab[i];
        if (!__atomic_load_n(&w->used, __ATOMIC_ACQUIRE))
            continue;
        uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_ACQUIRE);
        if (t0) {
            busy = 1;
            cs_rec r;
            if (now > t0 && now - t0 > s->to_ticks && w->told != t0 && cs_wd_peek(w, t0, &r)) {
                w->told = t0;
                cs_wd_hang(CS_HANG_INFLIGHT, &r, CS_REC_FLAGS(r.hdr), w->tid, w->ktid, t0, now, 0);
            }
        }
        uint64_t l = __atomic_load_n(&w->last, __ATOMIC_RELAXED);
        if (l > last) {
            last = l;
            lastw = w;
        }
        calls += __atomic_load_n(&w->calls, __ATOMIC_RELAXED);
    }
    if (calls > s->prev_calls && last > s->prev_last) {
        /* the mean gap between the calls that ended since the last look */
        double x = (double)(last - s->prev_last) / (double)(calls - s->prev_calls);
        s->every = s->every > 0 ? 0.75 * s->every + 0.25 * x : x;
        s->prev_calls = calls;
        s->prev_last = last;
        s->idle_told = 0;
    }
    if (!busy && !s->idle_told && calls >= 16 && s->every > 0 && s->every * 16 <= (double)s->to_ticks && last &&
        now > last && now - last > s->to_ticks && !__atomic_load_n(&cs_wd_final, __ATOMIC_ACQUIRE)) {
        s->idle_told = 1;
        cs_log_header *h = cs_log_header_ptr();
        double tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
        cs_rec r;
        int have = lastw && cs_wd_peek_last(lastw, last, &r);
        cs_wd_hang(CS_HANG_IDLE, have ? &r : NULL, have ? CS_REC_FLAGS(r.hdr) : 0, lastw ? lastw->tid : 0,
                   (int32_t)cs_wd_pid, last, now, s->every / tpn / 1e6);
    }
}

static void *cs_wd_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    cs_core_busy = 1; /* an MPI call made here (the abort) is not traced */
    cs_log_header *h = cs_log_header_ptr();
    double tpn = h && h->ticks_per_ns > 0 ? h->ticks_per_ns : 1.0;
    cs_wd_state s;
    memset(&s, 0, sizeof s);
    s.to_ticks = (uint64_t)(cs_wd_timeout * 1e9 * tpn);
    s.prev_last = cs_clock_ticks();
    double period = cs_wd_period;
    pthread_mutex_lock(&cs_wd_lock);
    while (!cs_wd_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(period * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        pthread_cond_timedwait(&cs_wd_wake, &cs_wd_lock, &ts);
        if (cs_wd_stop)
            break;
        pthread_mutex_unlock(&cs_wd_lock);
        cs_wd_scan(&s);
        pthread_mutex_lock(&cs_wd_lock);
    }
    pthread_mutex_unlock(&cs_wd_lock);
    return NULL;
}

static void cs_wd_atfork_child(void)
{
    /* The thread does not exist in the child, which traces nothing. */
    cs_wd_on = 0;
    cs_wd_started = 0;
    cs_wd_n = 0;
    cs_wd_me = NULL;
    cs_wd_pid = getpid();
    pthread_mutex_init(&cs_wd_lock, NULL);
}

static void cs_wd_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    cs_wd_timeout = s->hang_timeout;
    cs_wd_action = s->hang_action;
    cs_wd_sig = s->hang_signal;
}

/* Once the rank is known (after MPI_Init): the handler and the thread. */
static void cs_wd_rank_known(int rank, int size)
{
    (void)rank;
    (void)size;
    static int warned, forked;
    if (cs_wd_timeout <= 0 || cs_wd_started)
        return;
    cs_wd_started = 1;
    cs_wd_period = cs_wd_timeout / 5 < 0.01 ? 0.01 : cs_wd_timeout / 5;
    if (!cs_callsite_unwinder() && cs_core_rank() <= 0)
        cs_warn_once(&warned, "no stack walker (libunwind) for the watchdog: hangs are recorded without stacks");
    if (cs_wd_install(cs_wd_sig) != 0 && cs_core_rank() <= 0)
        cs_warn_once(&warned, "cannot handle signal %d for stack samples: hangs are recorded without stacks",
                     cs_wd_sig);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cs_wd_wake, &ca);
    pthread_condattr_destroy(&ca);
    if (!forked) {
        pthread_atfork(NULL, NULL, cs_wd_atfork_child);
        forked = 1;
    }
    cs_wd_stop = 0;
    __atomic_store_n(&cs_core_hooks, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&cs_wd_on, 1, __ATOMIC_RELEASE);
    if (pthread_create(&cs_wd_thread, NULL, cs_wd_main, NULL) != 0) {
        __atomic_store_n(&cs_wd_on, 0, __ATOMIC_RELEASE);
        cs_wd_started = 0;
        cs_warn_once(&warned, "cannot start the watchdog thread: no hang detection");
    }
}

/* At exit: stop the thread before the log closes. */
static void cs_wd_flush(void)
{
    if (!cs_wd_started || !__atomic_load_n(&cs_wd_on, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&cs_wd_lock);
    cs_wd_stop = 1;
    pthread_cond_signal(&cs_wd_wake);
    pthread_mutex_unlock(&cs_wd_lock);
    pthread_join(cs_wd_thread, NULL);
    __atomic_store_n(&cs_wd_on, 0, __ATOMIC_RELEASE);
}

const cs_module cs_wd_module = {
    .name = "watchdog",
    .start = cs_wd_start,
    .rank_known = cs_wd_rank_known,
    .flush = cs_wd_flush,
};
