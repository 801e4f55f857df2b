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

/* The id of stack pc[0..n) (at most CS_CALLSITE_MAX_FRAMES frames,
 * innermost first) in the same table, writing its CALLSITE records when it
 * is new; 0 when the table is full. Not from a signal handler. */
uint32_t cs_callsite_store(const uint64_t *pc, int n);
/* Load libunwind for stack samples whether call sites are on or not, and
 * warm it up; 1 when it can walk stacks. Not from a signal handler. */
int cs_callsite_unwinder(void);
/* From a signal handler (after cs_callsite_unwinder()): the interrupted
 * thread's stack, innermost first, from the frame of `interrupted` (its
 * program counter, 0 = unknown: after the handler's frames and the
 * signal trampoline). Returns the frames stored (at most max). */
int cs_callsite_sample(uint64_t *pc, int max, uint64_t interrupted);

/* The frames of stack `id` (at most max): how many, 0 when unknown. */
int cs_callsite_pcs(uint32_t id, uint64_t *pc, int max);

extern CS_INTERNAL const cs_module cs_callsite_module;

#endif
