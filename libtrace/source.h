/* source.h: the trace source. A command that is given a path (a run's
 * folder or a store's file) opens it here once; what it holds is decided
 * in cs_source_open and nowhere else, and every layer below the command
 * (the analysis, the report, the exports, the TUI) reads the handle.
 *
 *   kind              the path                      what is read
 *   CS_SOURCE_TRACE   FILE.db, or DIR with          that one store (merged, imported or
 *                     DIR/trace.db                  made by the bulk writer alike; a
 *                                                   damaged one is recovered by the
 *                                                   analysis into STEM.recovered.db)
 *   CS_SOURCE_JOB     DIR with DIR/index.db and     the rank stores the index names
 *                     no DIR/trace.db               (docs/schema.md), the analysis
 *                                                   kept in DIR/results.db
 *
 * A folder with neither is a CS_SOURCE_TRACE whose store, DIR/trace.db,
 * is missing: opening it fails with the store's message. */
#ifndef CS_SOURCE_H
#define CS_SOURCE_H

#include <stddef.h>

typedef enum cs_source_kind {
    CS_SOURCE_TRACE = 0,
    CS_SOURCE_JOB = 1,
} cs_source_kind;

typedef struct cs_source {
    cs_source_kind kind;
    int is_dir;      /* the path is a folder (a run's output folder) */
    int has_index;   /* the folder holds a job index (DIR/index.db) */
    char arg[4096];  /* the path as given */
    char path[4200]; /* TRACE: the store's file; JOB: the folder */
} cs_source;

/* Decide what arg holds and fill *src. 0, or -1 with one message in err
 * (a path too long). Never opens a store: a missing or unreadable one is
 * the failure of the first read. */
int cs_source_open(const char *arg, cs_source *src, char *err, size_t errlen);
/* "trace" or "job": the kind's name, for messages. */
const char *cs_source_kind_name(const cs_source *src);

#endif
