/* module_template.c: a commented optional module that does nothing, to
 * copy when adding one (module.h says what core promises a module).
 *
 * It is compiled by `make check` (so it keeps compiling) but never linked
 * into a preload. To make a real module "foo" from it:
 *
 *   1. Copy this file to interpose/foo.c and rename cs_null_* to
 *      cs_foo_* (a module's functions carry its file's name; helpers
 *      used only here are static).
 *   2. Write interpose/foo.h with what other files need: the module
 *      (extern const cs_module cs_foo_module;) and, if wrappers call into
 *      it on every call, its "on" flag and an inline hook (see below).
 *   3. Read its settings in settings.c (a field in cs_settings, one parser,
 *      a default) and add the variable to the table in docs/guide.md.
 *   4. List it in modules.c, under the build condition that compiles it,
 *      and add foo.h and foo.c to interpose/local.mk (CS_CORE_SOURCES, or
 *      the sources of the flavors that carry it).
 *
 * Rules: a module never changes what the application sees (results,
 * return codes, errno); a hook that can fail warns once (cs_warn_once)
 * and turns the module off; nothing blocks on I/O inside a wrapped call. */
#include "config.h"
#include "interpose/core.h"
#include "interpose/module.h"

/* The flag a wrapper tests before calling the module, set at start. A
 * module with per-call work exports it from its header together with a
 * hook that costs one load and a branch while the module is off:
 *
 *   extern int cs_null_on;
 *   CS_HOT void cs_null_call(uint16_t tid)
 *   {
 *       if (CS_UNLIKELY(cs_null_on))
 *           cs_null_call_slow(tid);
 *   }
 *
 * and the wrappers call that hook directly (mpi_wrap.h, gpu_wrap.h):
 * the module table is never used on a call's path. */
static int cs_null_on;
static unsigned long cs_null_calls;

/* At trace start, after the log opened, with the re-entry guard held: the
 * module reads its settings (s) and notes in the log header what it
 * turned on (h->note is free text for "why it is off"). */
static void cs_null_start(const cs_settings *s, cs_log_header *h)
{
    (void)s;
    (void)h;
    cs_null_on = 1;
}

/* The job rank became known (after MPI_Init): per-rank set-up goes here. */
static void cs_null_rank_known(int rank, int size)
{
    (void)rank;
    (void)size;
}

/* At exit, before the log closes: write what the module still holds (as
 * records: cs_log_slot() and cs_log_commit(), see libtrace/log.h). */
static void cs_null_flush(void)
{
    cs_null_calls = 0;
}

/* At exit, after the log closed: release threads, memory, handles. */
static void cs_null_fini(void)
{
    cs_null_on = 0;
}

/* What modules.c lists. Hooks a module does not need stay NULL. */
const cs_module cs_null_module = {
    .name = "null",
    .start = cs_null_start,
    .rank_known = cs_null_rank_known,
    .flush = cs_null_flush,
    .fini = cs_null_fini,
};
