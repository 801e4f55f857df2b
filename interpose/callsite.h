/* callsite.h: the call site of each traced call, and the list of loaded
 * objects that resolves it after the run (callsite.c). */
#ifndef CS_CALLSITE_H
#define CS_CALLSITE_H

#include <stdint.h>

#include "interpose/module.h"

/* 1 while call sites are captured (libunwind found, not turned off). */
extern CS_INTERNAL int cs_callsite_on;
/* Call site of the current wrapped call: an id of the deduplicated stack,
 * or 0 when call sites are off. Cheap on a known stack (no system call);
 * never changes errno. */
uint32_t cs_callsite_capture(void);

extern CS_INTERNAL const cs_module cs_callsite_module;

#endif
