/* export.h: `collscope export`: a trace and its analysis written in the
 * formats other viewers read. Each format is one row of the table in
 * export.c and one writer file (export_NAME.c); a writer streams the trace
 * from the store and never holds the whole of it in memory. */
#ifndef CS_EXPORT_H
#define CS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libtrace/store.h"

/* What a writer wrote, for the command's summary line and the bench. */
typedef struct cs_export_stats {
    int64_t spans;    /* spans of the trace written */
    int64_t events;   /* events written in all (spans, GPU spans, metadata, flows, analysis) */
    int64_t flows;    /* flow arrows (send -> receive, collective instances) */
    int64_t analysis; /* events of the analysis (steps, verdicts, wait counters) */
} cs_export_stats;

/* Write the trace of st (its stored analysis too where it has one) to f.
 * 0, or -1 with one message in err (a read error names the store's file;
 * a write error is the caller's to find, through ferror). */
typedef int (*cs_export_writer)(FILE *f, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);

/* A format written as a folder of files. With names (the files it writes,
 * the anchor first): into dir, a new empty folder that the command renames
 * onto the output when the writer returns 0. Without: into dir itself,
 * made when absent, the writer refusing links and others' folders and
 * removing what it wrote when it fails. 0, or -1 with one message in err
 * ("" when an output file's own message was printed). */
typedef int (*cs_export_dir_writer)(const char *dir, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);

typedef struct cs_export_format {
    const char *name;    /* for --format */
    const char *suffix;  /* of the default output file: DIR/trace.SUFFIX (a folder format: DIR/SUFFIX) */
    const char *summary; /* one line for --help */
    cs_export_writer write;
    /* A folder format instead: the default output is DIR/FOLDER (STEM.FOLDER
     * beside a file STEM.db); names: what the writer puts in it, the anchor
     * first (an existing output folder is replaced only when it holds
     * nothing else: analyzer/formats/outfile.h), NULL for a writer that writes into
     * the folder itself (cs_export_dir_writer). */
    const char *folder;
    const char *const *names;
    cs_export_dir_writer write_dir;
    /* Not in this build: why (the format is refused with this message). */
    const char *missing;
} cs_export_format;

/* The format called name, or NULL. */
const cs_export_format *cs_export_find(const char *name);
/* The formats, in table order: *n of them. */
const cs_export_format *cs_export_formats(size_t *n);
/* The formats' names, "a, b or c", into buf; returns buf. */
const char *cs_export_names(char *buf, size_t len);
/* The same, "a|b|c" (--format's values in the usage line; an option
 * table's values_of). */
const char *cs_export_values(char *buf, size_t len);

/* Chrome trace-event JSON (export_chrome.c; docs/interop.md). */
int cs_export_chrome(FILE *f, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);
/* Perfetto's protobuf trace (export_perfetto.c; built with protobuf-c). */
int cs_export_perfetto(FILE *f, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);

/* OTF2 archive through libotf2 (export_otf2.c, built with HAVE_OTF2;
 * docs/interop.md). */
int cs_export_otf2(const char *dir, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);
extern const char *const cs_export_otf2_names[];
/* PyTorch profiler (Kineto) JSON, one file per rank (export_kineto.c). */
int cs_export_kineto(const char *dir, cs_store *st, cs_export_stats *stats, char *err, size_t errlen);

#endif
