/* span.h: the record that travels from the traced process to the store.
 *
 * Every record in a per-process log is one 64-byte slot. A slot is valid
 * once its first word (hdr) is non-zero; the writer stores hdr last, with
 * release order, so a process killed mid-write leaves at most one slot that
 * the reader skips. Times are raw ticks of the process clock (see clock.h);
 * CALIB records convert them to nanoseconds at ingest. */
#ifndef CS_SPAN_H
#define CS_SPAN_H

#include <stdint.h>

#define CS_REC_SIZE 64

/* Record kinds (low 8 bits of hdr). */
enum cs_rec_kind {
    CS_REC_EMPTY = 0,
    CS_REC_SPAN = 1,       /* one intercepted call */
    CS_REC_COMMDEF = 2,    /* a communicator: local index -> job-wide id */
    CS_REC_CALLSITE = 3,   /* part of a call-site stack (6 frames a part) */
    CS_REC_CALIB = 4,      /* a clock calibration point */
    CS_REC_REQDONE = 5,    /* a nonblocking request completed */
    CS_REC_COUNTERS = 6,   /* PAPI deltas over the compute before a span */
    CS_REC_SPANX = 7,      /* NCCL/CUDA extension of the next span of its thread */
    CS_REC_GPUTIME = 8,    /* GPU begin/end of a span, by correlation id */
    CS_REC_GPUACT = 9,     /* CUPTI activity: a kernel or memcpy on the GPU */
    CS_REC_COMMNAME = 10,  /* part of a name set on a communicator */
    CS_REC_INFLIGHT = 11,  /* a span whose call has not returned (yet): its
                             fields as at entry, t1 0; the same slot becomes
                             CS_REC_SPAN when the call returns */
    CS_REC_GPUPEND = 12,   /* GPU work of span `corr` still not done long
                             after it was enqueued (the GPU-timing poller's
                             note; a GPUTIME with that corr says it ended) */
    CS_REC_HANG = 13,      /* the watchdog found a hang (interpose/watchdog.c) */
    CS_REC_FUSEGUARD = 14, /* apply mode's guard: a window's figure or a decision */
    CS_REC_KIND_MAX
};

/* Span flags (bits 8..31 of hdr). */
enum cs_span_flag {
    CS_F_NONBLOCKING = 1u << 0, /* MPI_I*: the span covers the start only */
    CS_F_INPLACE = 1u << 1,     /* MPI_IN_PLACE send buffer */
    CS_F_FUSED = 1u << 2,       /* a call the fusion engine issued itself
                                   (apply mode); tag = its fused-call id */
    CS_F_HAS_SEQ = 1u << 3,     /* seq is meaningful (collectives) */
    CS_F_HAS_PEER = 1u << 4,    /* peer is meaningful (p2p peer or root) */
    CS_F_HAS_COMM = 1u << 5,    /* comm is meaningful */
    CS_F_ERROR = 1u << 6,       /* the real call returned an error */
    CS_F_ANY_SOURCE = 1u << 7,  /* receive posted with MPI_ANY_SOURCE */
    CS_F_FUSE_MEMBER = 1u << 8, /* a user's call the fusion engine took into
                                   a fused call (apply mode): the span covers
                                   the queueing; tag = the fused call's id */
    CS_F_INFLIGHT = 1u << 9,    /* in the store: the call never returned (an
                                   CS_REC_INFLIGHT record); its end is the
                                   last time its process's log recorded */
    CS_F_GPU_PEND = 1u << 10,   /* in the store, with CS_F_INFLIGHT: the call
                                   returned, its GPU work never completed (a
                                   GPUPEND record and no GPUTIME); gpu_end_ns
                                   is the last time its log recorded */
};

#define CS_REC_HDR(kind, flags) ((uint32_t)(kind) | ((uint32_t)(flags) << 8))
#define CS_REC_KIND(hdr) ((hdr)&0xffu)
#define CS_REC_FLAGS(hdr) ((hdr) >> 8)

/* CS_REC_SPAN */
typedef struct cs_rec {
    uint32_t hdr;      /* kind | flags << 8; written last */
    uint16_t op;       /* cs_op id (ops.gen.h) */
    uint16_t tid;      /* thread index within the process */
    uint64_t t0, t1;   /* begin and end, raw clock ticks */
    uint64_t bytes;    /* payload bytes of this rank's side */
    uint16_t comm;     /* process-local communicator index (COMMDEF) */
    uint16_t dtype;    /* cs_dtype id (dtypes.h) */
    uint32_t seq;      /* per-communicator collective sequence number */
    int32_t peer;      /* p2p peer or root, rank in comm */
    int32_t tag;       /* p2p tag */
    int32_t rc;        /* the real call's return code */
    uint32_t count;    /* element count argument */
    uint32_t callsite; /* call-site id (CALLSITE records), 0 = none */
    uint32_t req;      /* request id of a nonblocking start, 0 = none;
                          MPI_Sendrecv*: the receive side's source */
} cs_rec;

/* CS_REC_COMMDEF: the same slot, other meanings. */
typedef struct cs_rec_comm {
    uint32_t hdr;
    uint16_t how; /* enum cs_comm_how */
    uint16_t tid;
    uint64_t t0;        /* when it was created */
    uint64_t id;        /* job-wide id, the same on every member */
    uint64_t parent;    /* job-wide id of the parent, 0 = none */
    uint32_t local;     /* process-local index used by spans */
    uint32_t size;      /* number of members */
    int32_t rank;       /* this process's rank in it */
    int32_t world_rank; /* this process's rank in the job */
    uint32_t args;      /* which of color, key are set (CS_COMM_ARG_*) */
    int32_t color;      /* split: its color; create: the group leader's
                           world rank */
    int32_t key;        /* split: its key */
    uint8_t pad[4];
} cs_rec_comm;

/* cs_rec_comm.args (0 in logs of tools that did not record them). */
#define CS_COMM_ARG_COLOR 1u
#define CS_COMM_ARG_KEY 2u

enum cs_comm_how {
    CS_COMM_WORLD = 1,
    CS_COMM_SELF,
    CS_COMM_DUP,
    CS_COMM_SPLIT,
    CS_COMM_CREATE,
    CS_COMM_OTHER,
    CS_COMM_NCCL,
    CS_COMM_NCCL_SPLIT
};

/* CS_REC_CALLSITE: frames [part*6, part*6+nhere) of stack `id`. */
#define CS_CALLSITE_FRAMES_PER_REC 6
#define CS_CALLSITE_MAX_FRAMES 12
typedef struct cs_rec_callsite {
    uint32_t hdr;
    uint16_t part;
    uint16_t nframes; /* frames in the whole stack */
    uint32_t id;
    uint32_t nhere;
    uint64_t pc[CS_CALLSITE_FRAMES_PER_REC];
} cs_rec_callsite;

/* CS_REC_COMMNAME: bytes [part*CS_COMMNAME_PER_REC, +CS_COMMNAME_PER_REC)
 * of the name set on job-wide communicator `id` at t0, NUL-padded. The
 * nparts records of one name are contiguous slots; the last name set on a
 * communicator (latest t0) is its name. */
#define CS_COMMNAME_PER_REC 40
#define CS_COMMNAME_MAX_PARTS 4
#define CS_COMMNAME_MAX (CS_COMMNAME_PER_REC * CS_COMMNAME_MAX_PARTS) /* bytes, NUL not counted */
typedef struct cs_rec_commname {
    uint32_t hdr;
    uint8_t part;
    uint8_t nparts;
    uint16_t tid;
    uint64_t t0;
    uint64_t id;
    char text[CS_COMMNAME_PER_REC];
} cs_rec_commname;

/* CS_REC_CALIB: a tick count and the clocks read at the same moment. */
typedef struct cs_rec_calib {
    uint32_t hdr;
    uint32_t pad0;
    uint64_t ticks;
    int64_t mono_ns; /* CLOCK_MONOTONIC */
    int64_t real_ns; /* CLOCK_REALTIME (the test offset already added) */
    uint8_t pad[32];
} cs_rec_calib;

/* CS_REC_REQDONE: request `req` completed in a completion call. */
typedef struct cs_rec_done {
    uint32_t hdr;
    uint16_t op; /* the completion call (MPI_Wait, ...) */
    uint16_t tid;
    uint64_t t0, t1; /* the completion call's begin and end */
    uint64_t bytes;  /* received bytes, when known */
    uint32_t req;
    int32_t source; /* status.MPI_SOURCE for receives, -1 unknown */
    int32_t tag;    /* status.MPI_TAG */
    int32_t rc;
    uint8_t pad[16];
} cs_rec_done;

/* CS_REC_COUNTERS: PAPI deltas over the compute that ended at a span.
 * Header flag CS_CTR_AFTER: written after that span's slot (an MPI call,
 * whose slot is claimed at entry); without it, before (NCCL/CUDA calls). */
#define CS_CTR_AFTER 1u
#define CS_COUNTERS_MAX 6
typedef struct cs_rec_counters {
    uint32_t hdr;
    uint16_t n;
    uint16_t tid;
    uint64_t v[CS_COUNTERS_MAX];
    uint8_t pad[8];
} cs_rec_counters;

/* CS_REC_SPANX: what a 64-byte span has no room for, for NCCL and CUDA
 * calls. Written by the calling thread immediately before its span; the
 * importer attaches it to the next span of the same thread. */
typedef struct cs_rec_spanx {
    uint32_t hdr;
    uint16_t op;
    uint16_t tid;
    uint64_t stream; /* cudaStream_t bits, 0 = the default stream */
    uint64_t corr;   /* per-process correlation id (GPUTIME), 0 = none */
    uint32_t grp;    /* NCCL group (GroupStart..End) id, 0 = none */
    int32_t redop;   /* ncclRedOp_t, -1 = none */
    int32_t dir;     /* cudaMemcpyKind, -1 = none */
    int32_t device;  /* CUDA device, -1 = unknown */
    uint8_t pad[24];
} cs_rec_spanx;

/* CS_REC_GPUTIME: when the GPU ran the work of span `corr`, in ticks of the
 * process clock (source 1: converted from CUDA events by the poller thread;
 * source 2: from NCCL's profiler events, interpose/ncclprof.c; g0 = g1 = 0
 * when it gave no GPU time). */
typedef struct cs_rec_gputime {
    uint32_t hdr;
    uint16_t source; /* 1 = CUDA events, 2 = NCCL profiler plugin */
    uint16_t tid;
    uint64_t corr;
    uint64_t g0, g1;
    uint32_t algo; /* source 2: CS_NP_PACK(algorithm, protocol, channels); 0 = unknown */
    uint8_t pad[28];
} cs_rec_gputime;

/* CS_REC_GPUPEND: the poller found the GPU work of span `corr` (queued
 * for CUDA-event timing) not done CS_GPUPEND_NS after it first saw it
 * pending; written again once its begin event completes (begun 1). A
 * GPUTIME record with the same corr (source 1, or 2 with times) says it
 * ended. */
#define CS_GPUPEND_NS 1000000000ull
typedef struct cs_rec_gpupend {
    uint32_t hdr;
    uint16_t begun; /* 1: the stream reached its begin event (the work started) */
    uint16_t tid;   /* the poller's thread */
    uint64_t corr;
    uint64_t g0;     /* begun: when the work started on the GPU (ticks), else 0 */
    uint64_t seen;   /* when the poller first found it not done (ticks) */
    uint64_t at;     /* when this record was written (ticks) */
    uint32_t behind; /* calls queued after it on the same thread, not done either */
    uint8_t pad[20];
} cs_rec_gpupend;

/* GPUTIME.algo of source 2: NCCL's algorithm and protocol (index + 1 in
 * these lists, 0 unknown, 255 a name not listed) and its channel count. */
#define CS_NP_ALGOS "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
#define CS_NP_PROTOS "LL", "LL128", "Simple"
#define CS_NP_PACK(algo, proto, nch) ((uint32_t)(algo) | (uint32_t)(proto) << 8 | (uint32_t)(nch) << 16)
#define CS_NP_ALGO(v) ((v)&0xffu)
#define CS_NP_PROTO(v) (((v) >> 8) & 0xffu)
#define CS_NP_NCH(v) ((v) >> 16)

/* CS_REC_GPUACT: one CUPTI activity (kernel, memcpy, memset), in ticks. */
typedef struct cs_rec_gpuact {
    uint32_t hdr;
    uint16_t kind; /* 1 kernel, 2 memcpy, 3 memset */
    uint16_t tid;
    uint64_t g0, g1;
    uint64_t bytes;
    uint64_t stream;
    uint32_t corr; /* CUPTI correlation id */
    uint32_t device;
    uint64_t name; /* hash of the kernel name */
    uint8_t pad[8];
} cs_rec_gpuact;

/* CS_REC_HANG: the watchdog saw a call in flight longer than its timeout
 * (reason 1), or a rank with no traced call for longer than it while its
 * calls usually come every few milliseconds (reason 2). The stuck call's
 * fields are as at its entry (reason 2: its last call, t0 its end); the
 * stack sampled from the stuck thread (reason 2: the main thread) is the
 * CALLSITE stack `stack`, written just before this record. */
enum cs_hang_reason { CS_HANG_INFLIGHT = 1, CS_HANG_IDLE = 2 };
typedef struct cs_rec_hang {
    uint32_t hdr;      /* flags: the stuck call's span flags (CS_F_HAS_*) */
    uint16_t op;       /* the stuck (reason 2: last) call, 0 = none */
    uint16_t tid;      /* its thread index in the log */
    uint64_t since;    /* ticks: the call's start (reason 2: the last call's end) */
    uint64_t detected; /* ticks: when the watchdog saw it */
    uint64_t bytes;
    uint16_t comm;
    uint8_t reason; /* enum cs_hang_reason */
    uint8_t action; /* 1 report, 2 abort */
    uint32_t seq;
    int32_t peer;
    int32_t tag;
    int32_t ktid;      /* the sampled thread's kernel thread id */
    uint32_t stack;    /* CALLSITE id of the sampled stack, 0 = no sample */
    uint32_t callsite; /* the stuck call's own call site, 0 = none */
    uint32_t pad;
} cs_rec_hang;

/* CS_REC_FUSEGUARD: apply mode's on-line guard (interpose/fuse/
 * fuse_guard.h) on communicator `comm`: the figure of one window (what 1:
 * the setting it ran, the ranks' summed time in MPI calls, their fusable
 * calls and (`wall`) their summed wall time), or
 * a decision (what 2: the setting chosen from window `window` on, why, the
 * median time per call of unfused and of the chosen setting, and the ratio
 * the choice rests on). Every
 * rank writes the same figures and decisions. Header flag CS_FG_F_NCCL:
 * the NCCL engine's guard (else the MPI engine's). */
enum cs_fuseguard_what { CS_FG_WINDOW = 1, CS_FG_DECISION = 2 };
/* The record's header flag: the NCCL engine's guard (comm is then an NCCL
 * communicator; its figures are time in NCCL and CUDA runtime calls). */
#define CS_FG_F_NCCL 1u
typedef struct cs_rec_fuseguard {
    uint32_t hdr;
    uint16_t comm;   /* local index */
    uint8_t what;    /* enum cs_fuseguard_what */
    uint8_t setting; /* 0 = unfused, else 1.. in the guard's list */
    uint32_t window; /* window index (decision: the first it applies to) */
    uint32_t why;    /* decision: 1 best of the trial, 2 unfused wins the trial, 3 a check changed it */
    uint64_t t;      /* ticks: when it was written */
    uint64_t buffer; /* the setting's fusion buffer, bytes (0: unfused) */
    uint64_t ns;     /* window: the ranks' summed time in MPI calls, ns; decision: unfused median ps per call */
    uint64_t calls;  /* window: the ranks' summed calls; decision: chosen median ps per call */
    uint64_t ratio;  /* decision: the best fused setting's median ratio to unfused, in millionths */
    uint64_t wall;   /* window: the ranks' summed wall time, ns */
} cs_rec_fuseguard;

_Static_assert(sizeof(cs_rec_fuseguard) == CS_REC_SIZE, "fuse guard record is 64 bytes");
_Static_assert(sizeof(cs_rec_hang) == CS_REC_SIZE, "hang record is 64 bytes");
_Static_assert(sizeof(cs_rec_spanx) == CS_REC_SIZE, "spanx record is 64 bytes");
_Static_assert(sizeof(cs_rec_gputime) == CS_REC_SIZE, "gputime record is 64 bytes");
_Static_assert(sizeof(cs_rec_gpuact) == CS_REC_SIZE, "gpuact record is 64 bytes");
_Static_assert(sizeof(cs_rec_gpupend) == CS_REC_SIZE, "gpupend record is 64 bytes");
_Static_assert(sizeof(cs_rec) == CS_REC_SIZE, "span record is 64 bytes");
_Static_assert(sizeof(cs_rec_comm) == CS_REC_SIZE, "comm record is 64 bytes");
_Static_assert(sizeof(cs_rec_commname) == CS_REC_SIZE, "comm name record is 64 bytes");
_Static_assert(sizeof(cs_rec_callsite) == CS_REC_SIZE, "callsite record is 64 bytes");
_Static_assert(sizeof(cs_rec_calib) == CS_REC_SIZE, "calib record is 64 bytes");
_Static_assert(sizeof(cs_rec_done) == CS_REC_SIZE, "done record is 64 bytes");
_Static_assert(sizeof(cs_rec_counters) == CS_REC_SIZE, "counters record is 64 bytes");

#endif
