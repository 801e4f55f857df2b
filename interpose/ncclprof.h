/* ncclprof.h: the NCCL profiler plugin ABI, versions 4 and 5, as collscope
 * uses it (no profiler header ships with NCCL), and the hooks between the
 * plugin (ncclprof.c) and the NCCL wrappers.
 *
 * NCCL dlopen()s the library named by NCCL_PROFILER_PLUGIN and looks up
 * ncclProfiler_v5 (then v4 ...): a struct of a name and five functions.
 * init runs once per communicator and says, through an activation mask,
 * which event types the plugin wants; startEvent returns a handle that
 * NCCL passes back to stopEvent and recordEventState, and as the parent
 * of child events. Only the parts collscope reads are named here; the
 * layouts follow NCCL's public ABI (v5: a 64-bit event type; v4: 8-bit;
 * the descriptor unions start at the same offset in both). */
#ifndef CS_NCCLPROF_H
#define CS_NCCLPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nccl.h>

#include "libtrace/span.h"

/* Event types (activation mask bits and descriptor types). */
enum {
    CS_NP_GROUP = 1 << 0,
    CS_NP_COLL = 1 << 1, /* a collective, on the host */
    CS_NP_P2P = 1 << 2,
    CS_NP_PROXY_OP = 1 << 3,
    CS_NP_PROXY_STEP = 1 << 4,
    CS_NP_PROXY_CTRL = 1 << 5,
    CS_NP_KERNEL_CH = 1 << 6, /* one channel of a collective's kernel */
};

/* Event states: a kernel channel's stop carries its GPU end time. */
enum { CS_NP_STATE_KERNEL_CH_STOP = 22 };

typedef void (*cs_np_logger_t)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* The collective descriptor (same in v4 and v5, v5 appends parentGroup). */
typedef struct cs_np_coll {
    uint64_t seqNumber; /* per communicator and collective function */
    const char *func;   /* "AllReduce", "Broadcast", ... */
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;  /* "Ring", "Tree", ... */
    const char *proto; /* "LL", "LL128", "Simple" */
    void *parentGroup; /* v5 only */
} cs_np_coll;

typedef struct cs_np_kernel_ch {
    uint8_t channelId;
    uint64_t pTimer; /* GPU globaltimer (ns) when the channel started */
} cs_np_kernel_ch;

typedef struct cs_np_descr_v5 {
    uint64_t type;
    void *parentObj; /* a kernel channel's: its collective's handle */
    int rank;
    union {
        cs_np_coll coll;
        cs_np_kernel_ch kernelCh;
    };
} cs_np_descr_v5;

typedef struct cs_np_descr_v4 {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        cs_np_coll coll; /* parentGroup is not there in v4 */
        cs_np_kernel_ch kernelCh;
    };
} cs_np_descr_v4;

_Static_assert(offsetof(cs_np_descr_v5, coll) == 24, "v5 descriptor union at 24");
_Static_assert(offsetof(cs_np_descr_v4, coll) == 24, "v4 descriptor union at 24");
_Static_assert(offsetof(cs_np_coll, algo) == 64, "coll.algo at 64 in the union");

typedef union cs_np_state_args {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh; /* GPU globaltimer (ns) at the channel's end */
} cs_np_state_args;

typedef struct cs_np_plugin_v5 {
    const char *name;
    ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask, const char *commName, int nNodes,
                         int nranks, int rank, cs_np_logger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, cs_np_descr_v5 *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, int eState, cs_np_state_args *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} cs_np_plugin_v5;

typedef struct cs_np_plugin_v4 {
    const char *name;
    ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName, uint64_t commHash, int nNodes,
                         int nranks, int rank, cs_np_logger_t logfn);
    ncclResult_t (*startEvent)(void *context, void **eHandle, cs_np_descr_v4 *eDescr);
    ncclResult_t (*stopEvent)(void *eHandle);
    ncclResult_t (*recordEventState)(void *eHandle, int eState, cs_np_state_args *eStateArgs);
    ncclResult_t (*finalize)(void *context);
} cs_np_plugin_v4;

/* Algorithm and protocol names and how GPUTIME records carry them:
 * libtrace/span.h (CS_NP_ALGOS, CS_NP_PACK). */

/* The hooks between the plugin and the NCCL wrappers: on once NCCL
 * initialised the plugin for a communicator of a traced process; each
 * collective is then noted (gputime.h) so the plugin's events find their
 * spans. */
struct cs_gpu_call;
extern int cs_ncclprof_on __attribute__((visibility("hidden")));
void cs_ncclprof_note(struct cs_gpu_call *c);

/* collscope's own collectives are never taken for the program's calls:
 *   cs_ncclprof_forget(corr): a noted call that will not be issued as it
 *       was noted (apply mode: a member of a fused call; the fused call
 *       has its own note and span), its note is dropped;
 *   cs_ncclprof_own(count): an allreduce of count elements that apply
 *       mode issues inside the open group without a span (an untraced
 *       ncclGroupEnd), noted as collscope's: its event gets no handle;
 *   cs_ncclprof_alone: non-zero while this thread issues a collective of
 *       its own outside any group (the guard's vote): NCCL starts its
 *       event during that call, which then matches no note. */
void cs_ncclprof_forget(uint64_t corr);
void cs_ncclprof_own(uint32_t count);
extern __thread int cs_ncclprof_alone __attribute__((visibility("hidden"), tls_model("initial-exec")));

#endif
