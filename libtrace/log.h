/* log.h: the per-process, crash-safe span log.
 *
 * The log is a file of 64-byte slots mapped MAP_SHARED in segments. Each
 * thread claims a chunk of slots with one atomic add and fills it with no
 * further synchronization; a slot becomes visible when its hdr word is
 * stored (release). Mapped pages belong to the page cache, so everything
 * a process wrote survives its death, SIGKILL included. Segment space is
 * reserved with posix_fallocate before it is mapped, so a full disk turns
 * tracing off (and counts dropped spans) instead of raising SIGBUS. A
 * thread of the writer's (the prefault thread) readies segments ahead of
 * use, writing their zeros through the file before mapping them (the
 * kernel makes the pages cheaper that way than by faults), and unmaps the
 * segments every thread is done with; neither changes what the file holds.
 *
 * The reader (cs_logr_*) walks a log written by a live, closed or dead
 * process and yields only complete slots. */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "libtrace/span.h"

#define CS_LOG_MAGIC "CSLOG01\n"
#define CS_LOG_VERSION 1
#define CS_LOG_HEADER_BYTES 4096

enum cs_log_state { CS_LOG_RUNNING = 1, CS_LOG_CLOSED = 2 };

/* Page 0 of every log file. Fields marked (atomic) change while running. */
typedef struct cs_log_header {
    char magic[8];
    uint32_t version;
    uint32_t rec_size;
    uint32_t chunk_recs; /* slots per chunk */
    uint32_t seg_chunks; /* chunks per mapped segment */
    int32_t rank;        /* job rank; -1 until known */
    int32_t pid;
    int32_t world_size;
    uint32_t clock_kind;    /* enum cs_clock_kind */
    uint32_t state;         /* enum cs_log_state (atomic) */
    uint32_t callsites;     /* 1 when call sites were captured */
    int64_t test_offset_ns; /* test-only clock offset applied to CALIB */
    uint64_t next_chunk;    /* chunks claimed (atomic) */
    uint64_t dropped;       /* spans lost to a full disk or log cap (atomic) */
    uint64_t overhead_ns;   /* measured tool cost of one traced call */
    double ticks_per_ns;    /* clock rate measured at open (1.0 for monotonic) */
    int64_t start_real_ns;
    int64_t end_real_ns; /* 0 unless closed */
    char host[64];
    char exe[256];
    char mpi[32]; /* MPI flavor of the preload that wrote it */
    char tool_version[32];
    char papi_events[256]; /* COLLSCOPE_PAPI as accepted, "" if off */
    char note[256];        /* one-line notes (e.g. "papi: no counters") */
    char run_id[64];       /* the run this process belongs to; "" = unknown */
} cs_log_header;

_Static_assert(sizeof(cs_log_header) <= CS_LOG_HEADER_BYTES, "the log header fits its page");

#define CS_LOG_RUN_ID_MAX 63 /* longest run id (run_id holds its NUL) */

/* ---- writer (one log per process) ---- */

typedef struct cs_log_tls {
    cs_rec *cur;
    cs_rec *end;
    uint64_t chunk; /* chunk index + 1 of [cur, end), 0 = none */
    uint16_t tid;
    uint16_t has_key;
    uint32_t holds;    /* held slots (cs_log_hold) not yet released */
    uint64_t deferred; /* chunk + 1 whose sealing waits for the release */
} cs_log_tls;

extern __thread cs_log_tls cs__log_tls __attribute__((tls_model("initial-exec")));

/* Create the log at `path`, a file that must not exist yet (no symbolic
 * link is followed). Returns 0, or -1 with a one-line reason in err.
 * Tracing is off until this succeeds. */
int cs_log_open(const char *path, const cs_log_header *proto, char *err, size_t errlen);
/* Final calibration, state CLOSED, unmap. Idempotent. */
void cs_log_close(void);
/* Write what is mapped to the file now (msync), for a process about to
 * end itself. Not from a signal handler. */
void cs_log_sync(void);
/* Forget the log in a forked child without touching the parent's file. */
void cs_log_forget(void);
int cs_log_is_open(void);
cs_log_header *cs_log_header_ptr(void);

cs_rec *cs__log_refill(unsigned n);

/* A slot to fill, or NULL when tracing is off or out of space (the drop is
 * counted). Fill every field but hdr, then cs_log_commit(). */
static inline __attribute__((always_inline)) cs_rec *cs_log_slot(void)
{
    cs_log_tls *t = &cs__log_tls;
    if (__builtin_expect(t->cur < t->end, 1))
        return t->cur++;
    return cs__log_refill(1);
}

/* n contiguous slots in one chunk (n <= 4), or NULL. */
static inline cs_rec *cs_log_slots(unsigned n)
{
    cs_log_tls *t = &cs__log_tls;
    if (t->cur + n <= t->end) {
        cs_rec *r = t->cur;
        t->cur += n;
        return r;
    }
    return cs__log_refill(n);
}

static inline __attribute__((always_inline)) void cs_log_commit(void *slot, uint32_t hdr)
{
    __atomic_store_n((uint32_t *)slot, hdr, __ATOMIC_RELEASE);
}

/* A slot that stays writable across other records written meanwhile by
 * this thread (a span claimed when a call starts, committed when it ends):
 * its chunk is not sealed, so its segment not unmapped, before
 * cs_log_release(). NULL when tracing is off or out of space. */
static inline __attribute__((always_inline)) cs_rec *cs_log_hold(void)
{
    cs_rec *r = cs_log_slot();
    if (r)
        cs__log_tls.holds++;
    return r;
}

void cs__log_seal_deferred(void);

static inline __attribute__((always_inline)) void cs_log_release(cs_rec *slot, uint32_t hdr)
{
    cs_log_tls *t = &cs__log_tls;
    cs_log_commit(slot, hdr);
    if (--t->holds == 0 && __builtin_expect(t->deferred != 0, 0))
        cs__log_seal_deferred();
}

/* Write a CALIB record now (also done at every chunk claim). */
void cs_log_calibrate(void);

/* ---- records other than spans (span.h has their fields) ---- */

/* A COMMDEF record: communicator `local` of this process is job-wide `id`
 * (made `how`, CS_COMM_*, from `parent`), of `size` members of which this
 * process is `rank` (world rank `world_rank`); `args` (CS_COMM_ARG_*) says
 * which of `color` and `key` hold the split's arguments. */
void cs_log_commdef(int how, uint64_t id, uint64_t parent, uint32_t local, uint32_t size, int32_t rank,
                    int32_t world_rank, uint32_t args, int32_t color, int32_t key);
/* The COMMNAME records of the name set on job-wide communicator `id` (at
 * most CS_COMMNAME_MAX bytes of it are kept). Nothing when tracing is off
 * or the log is full. */
void cs_log_commname(uint64_t id, const char *name);
/* The CALLSITE records of stack `id`: `depth` return addresses (at most
 * CS_CALLSITE_MAX_FRAMES), innermost first. */
void cs_log_callsite(uint32_t id, const uint64_t *pc, unsigned depth);

/* A REQDONE record: request `req` finished in the completion call `op`
 * that ran from t0 to t1, with the status's source and tag (-1: none), the
 * received bytes (0: unknown) and the call's rc. */
static inline void cs_log_reqdone(int op, uint64_t t0, uint64_t t1, uint32_t req, int32_t source, int32_t tag,
                                  uint64_t bytes, int32_t rc)
{
    cs_rec_done *r = (cs_rec_done *)cs_log_slot();
    if (!r)
        return;
    r->op = (uint16_t)op;
    r->tid = cs__log_tls.tid;
    r->t0 = t0;
    r->t1 = t1;
    r->bytes = bytes;
    r->req = req;
    r->source = source;
    r->tag = tag;
    r->rc = rc;
    cs_log_commit(r, CS_REC_HDR(CS_REC_REQDONE, 0));
}

/* System calls routed through a table so tests can inject faults. */
#include <sys/types.h>
struct cs_log_syscalls {
    int (*fallocate)(int fd, off_t off, off_t len); /* 0 or an errno value */
};
extern struct cs_log_syscalls cs_log_sys;

/* mkdir -p: 0, or -1 with errno set. */
int cs_log_mkdirs(const char *path);

/* Is the folder at `path` safe to write into: a real folder (not a
 * symbolic link), owned by this user (or root), and not writable by
 * others unless sticky? Returns 0, or -1 with a one-line reason naming
 * path in why. With `force`, only the first condition is checked. */
int cs_log_dir_safe(const char *path, int force, char *why, size_t whylen);

/* A whole number in [min, max] from the environment variable `name`: its
 * value, or `dflt` when unset or empty. Anything else (not a number,
 * negative, out of range, NaN, inf) sets *bad to 1 and gives dflt. */
uint64_t cs_log_env_count(const char *name, uint64_t min, uint64_t max, uint64_t dflt, int *bad);

/* ---- reader ---- */

/* A process clock's raw ticks as real (CLOCK_REALTIME) nanoseconds, from
 * its latest CALIB record: set ticks_per_ns from the header, note each
 * CALIB, then convert. A zeroed one converts everything to 0. */
typedef struct cs_log_clock {
    double ticks_per_ns;
    uint64_t ticks; /* of the latest calibration point */
    int64_t real;   /* its real time, the test offset taken off */
} cs_log_clock;
void cs_log_clock_note(cs_log_clock *c, const cs_rec_calib *x, int64_t test_offset_ns);
int64_t cs_log_clock_real(const cs_log_clock *c, uint64_t ticks);

/* 0 when h is the header of a log this reader reads, else -1 with a
 * reason naming path in err (the readers of log.c and log_follow.c). */
int cs__log_header_check(const cs_log_header *h, const char *path, char *err, size_t errlen);
/* Open a log to read: never through a symbolic link, never waiting on a
 * FIFO or a device, a regular file with a whole header. The descriptor
 * and the file's size in *size, or -1 with one message in err. */
int cs__log_open_read(const char *path, int64_t *size, char *err, size_t errlen);

typedef struct cs_logr cs_logr;

/* Open a log for reading. Returns NULL with a reason in err when the file
 * is missing, not a regular file (never opened in a blocking way, no
 * symbolic link followed), not a collscope log, or of another version.
 * The header's strings are NUL-terminated in the reader's copy. */
cs_logr *cs_logr_open(const char *path, char *err, size_t errlen);
void cs_logr_close(cs_logr *);
const cs_log_header *cs_logr_header(const cs_logr *);
/* The next complete record, or NULL at the end. */
const cs_rec *cs_logr_next(cs_logr *);
/* 1 when the writer closed it (a clean exit), 0 when it died or still runs. */
int cs_logr_closed(const cs_logr *);
/* After reading: 1 when the log is damaged (cut short, or slots that are
 * no record), with what is missing in why; 0 when whole. */
int cs_logr_damage(const cs_logr *, char *why, size_t whylen);

#endif
