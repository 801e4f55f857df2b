/* modules.c: the optional modules this preload carries (module.h), in
 * start order. Each entry is compiled in under the build condition that
 * compiles its module (interpose/local.mk sets CS_WITH_*); a new module
 * adds one line here and nothing in core.c. */
#include "config.h"
#include "interpose/callsite.h"
#include "interpose/fuse/fuse.h"
#include "interpose/module.h"
#include "interpose/papi.h"
#include "interpose/watchdog.h"
#if CS_WITH_MPI
#include "interpose/fuse/mpi_fuse.h"
#include "interpose/mpi_wrap.h"
#endif
#if CS_WITH_NCCL
#include "interpose/fuse/nccl_fuse.h"
#endif
#if CS_WITH_CUDA
#include "interpose/cupti.h"
#include "interpose/gputime.h"
#endif

const cs_module *const cs_module_table[] = {
    &cs_callsite_module,
    &cs_papi_module,
#if CS_WITH_MPI
    &cs_mpi_module, /* names the log's MPI flavor */
#endif
    &cs_fuse_module,
#if CS_WITH_MPI
    &cs_mpi_fuse_module, /* registers the MPI engine with the wrappers */
#endif
#if CS_WITH_NCCL
    &cs_nccl_fuse_module, /* registers the NCCL engine with the wrappers */
#endif
#if CS_WITH_CUDA
    &cs_gputime_module, /* flushes before CUPTI */
#endif
#if CS_WITH_CUPTI
    &cs_cupti_module,
#endif
    &cs_wd_module, /* after every module whose rank_known it may need */
    NULL,
};
