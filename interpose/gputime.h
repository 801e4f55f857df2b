/* gputime.h: GPU time of NCCL collectives (gputime.c), as the NCCL
 * wrappers see it.
 *
 * Before a collective, a pool event is recorded on its stream; after it,
 * another. Inside an NCCL group the work starts at ncclGroupEnd, so the
 * events of grouped calls are recorded around ncclGroupEnd instead. A
 * poller thread waits for them (cudaEventQuery, never a synchronization
 * of the application's streams) and writes GPUTIME records. Any failing
 * CUDA call of this machinery turns GPU timing off, with one warning. */
#ifndef CS_GPUTIME_H
#define CS_GPUTIME_H

#include "interpose/gpu_wrap.h"
#include "interpose/module.h"
#include "interpose/ncclprof.h"

extern CS_INTERNAL int cs_gputime_on; /* 1 on, 0 off (COLLSCOPE_GPUTIME=0 or a failure) */
void cs_gputime_pre_slow(cs_gpu_call *c);
void cs_gputime_post_slow(cs_gpu_call *c, int ok);
void cs_gputime_group_end_pre(void);
void cs_gputime_group_end_post(int ok);

/* Before a collective: its correlation id, the profiler plugin's note,
 * and the begin event. */
CS_HOT void cs_gputime_pre(cs_gpu_call *c)
{
    if (CS_UNLIKELY(cs_gpu_t.corr_next == cs_gpu_t.corr_end))
        cs_gpu_corr_refill();
    c->x.corr = cs_gpu_t.corr_next++;
    c->has_x = 1;
    if (CS_UNLIKELY(cs_ncclprof_on))
        cs_ncclprof_note(c);
    if (CS_LIKELY(cs_gputime_on))
        cs_gputime_pre_slow(c);
}

/* After it (`ok`: it succeeded): the end event. */
CS_HOT void cs_gputime_post(cs_gpu_call *c, int ok)
{
    if (c->ev >= 0)
        cs_gputime_post_slow(c, ok);
}

extern CS_INTERNAL const cs_module cs_gputime_module;

#endif
