/* papi.h: hardware counters over the compute between traced calls
 * (papi.c, COLLSCOPE_PAPI). */
#ifndef CS_PAPI_H
#define CS_PAPI_H

#include <stdint.h>

#include "interpose/module.h"

/* 1 while counters are read. */
extern CS_INTERNAL int cs_papi_on;
/* Write the deltas of the configured counters since the last traced call
 * on this thread, as a COUNTERS record; `after`: the call's span slot is
 * already claimed (MPI), so the record follows it in the log. */
void cs_papi_sample(uint16_t tid, int after);

extern CS_INTERNAL const cs_module cs_papi_module;

#endif
