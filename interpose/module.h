/* module.h: how an optional part of the preload plugs into core.
 *
 * Core (core.c) knows modules only through this table: it starts them
 * once the log is open, tells them the job rank, and flushes and ends
 * them at exit. It never names one. A module fills a cs_module with the
 * hooks it needs (the others stay NULL) and modules.c lists it, under the
 * build condition that compiles it; module_template.c is a commented
 * example. The table is static: nothing is registered or looked up while
 * the application runs, and no hook is ever on a wrapped call's path (a
 * module's per-call work is reached from the wrappers directly, through
 * its own header, behind its own "on" flag). */
#ifndef CS_MODULE_H
#define CS_MODULE_H

#include "interpose/preload.h"
#include "interpose/settings.h"
#include "libtrace/log.h"

typedef struct cs_module {
    const char *name;
    /* The MPI flavor a preload was built for ("openmpi", "mpich"), written
     * in the log header; NULL for every other module. */
    const char *flavor;
    /* At trace start, after the log opened and before the first span, on
     * the thread that started tracing, with the re-entry guard held (calls
     * the module makes are not traced). `h`: the log header, where a
     * module notes what it turned on. Must not fail the job: a module
     * that cannot start warns once and stays off. */
    void (*start)(const cs_settings *s, cs_log_header *h);
    /* The job rank became known or changed (MPI_Init, a singleton). */
    void (*rank_known)(int rank, int size);
    /* At exit, before the log closes: write what the module still holds. */
    void (*flush)(void);
    /* At exit, after the log closed: release what the module holds. */
    void (*fini)(void);
} cs_module;

/* The modules this preload carries, in start order (flush and fini run in
 * the same order); NULL-terminated. */
extern CS_INTERNAL const cs_module *const cs_module_table[];

#endif
