/* import.h: `collscope import`: traces of other tools turned into a
 * collscope trace (DIR/trace.db, the same schema), so every analysis,
 * report and screen works on them unchanged. Each format is one row of the
 * table in import.c and one reader file (import_NAME.c). A reader turns
 * one per-rank file into one per-rank store, in bounded memory; import.c
 * runs the readers in worker processes (one per core), checks that the
 * files make one job, merges the rank stores and numbers collectives that
 * came without sequence numbers. */
#ifndef CS_IMPORT_H
#define CS_IMPORT_H

#include <stddef.h>
#include <stdint.h>

/* Why a file was not imported (a reader's return value). */
enum cs_import_status {
    CS_IMPORT_OK = 0,
    CS_IMPORT_FAILED = 1,    /* could not read it, or write its store */
    CS_IMPORT_TRUNCATED = 2, /* JSON that ends early (a profiler killed mid-write) */
    CS_IMPORT_NOT_JSON = 3,  /* not JSON, or not a trace of this format */
    CS_IMPORT_NO_RANK = 4,   /* no rank recorded and none from --rank-from-name */
};

/* Records a reader left out for a bad value: the kinds of record, and
 * the value at fault (import.c names them in its summary line). */
enum cs_import_bad_kind {
    CS_IMPORT_BK_COMM = 0, /* record_param_comms, gloo annotations, c10d::send/recv_ */
    CS_IMPORT_BK_KERNEL,   /* NCCL kernels */
    CS_IMPORT_BK_STEP,     /* ProfilerStep#N */
    CS_IMPORT_BK_COMPUTE,  /* other kernels, copies, sets, top-level CPU ops */
    CS_IMPORT_BK_N
};
enum cs_import_bad_why {
    CS_IMPORT_BW_TS = 0, /* ts missing, not a number, negative, or beyond 2^61 ns (with the base) */
    CS_IMPORT_BW_DUR,    /* dur missing, not a number, negative, or beyond 2^61 ns */
    CS_IMPORT_BW_ARGS,   /* a record_param_comms with no args */
    CS_IMPORT_BW_SEQ,    /* Seq not a whole number from 0 to 2^62 */
    CS_IMPORT_BW_NELEMS, /* In/Out msg nelems not a whole number, or its bytes beyond 2^62 */
    CS_IMPORT_BW_N
};

/* What a reader learnt of its file, besides the store. */
typedef struct cs_import_rank_info {
    int rank, world_size;
    char trace_id[128]; /* "" when the file has none */
    char backend[32];   /* "nccl", "gloo", ... ("" unknown) */
    char version[32];   /* the format's version as the file states it */
    int64_t spans, collectives, p2p, kernels, gpu_linked, compute, steps;
    int64_t bytes_read;                          /* of JSON (after decompression) */
    int64_t dropped_rpc;                         /* communication records with no span made of them */
    int64_t bad[CS_IMPORT_BK_N][CS_IMPORT_BW_N]; /* records left out for a bad value */
} cs_import_rank_info;

/* Options of one import. */
typedef struct cs_import_opts {
    const char *rank_regex; /* --rank-from-name: first group (or match) is the rank; NULL none */
    int wait;               /* --wait: wait for another command using DIR to end */
} cs_import_opts;

/* Read one file into a new per-rank store at db_path (created; replaced).
 * CS_IMPORT_OK with *info filled, or a status with one message in err
 * (naming the file; info->rank is the file's rank where it was read
 * before the failure, else -1). A reader never leaves a store presented as complete
 * for a file it did not read to the end. */
typedef int (*cs_import_reader)(const char *file, const char *db_path, const cs_import_opts *o,
                                cs_import_rank_info *info, char *err, size_t errlen);

typedef struct cs_import_format {
    const char *name;    /* for --format and meta.import_format */
    const char *summary; /* one line for --help */
    cs_import_reader read;
    /* Is path (a file name) one of this format's files? */
    int (*accepts)(const char *path);
} cs_import_format;

const cs_import_format *cs_import_find(const char *name);
const char *cs_import_names(char *buf, size_t len);
/* The same, "a|b|c" (--format's values in the usage line; an option
 * table's values_of). */
const char *cs_import_values(char *buf, size_t len);

/* The Kineto (PyTorch profiler) reader: import_kineto.c. */
int cs_import_kineto_read(const char *file, const char *db_path, const cs_import_opts *o, cs_import_rank_info *info,
                          char *err, size_t errlen);
int cs_import_kineto_accepts(const char *path);

/* The rank a file's name gives through regex re: 0 and *rank, or -1. */
int cs_import_rank_from_name(const char *path, const char *re, int *rank);

/* Exit statuses of `collscope import` (its --help lists them). */
enum cs_import_exit {
    CS_IMPORT_EXIT_OK = 0,      /* every file imported, every rank there, every group matched */
    CS_IMPORT_EXIT_PARTIAL = 1, /* trace written, but files left out, ranks missing or groups unmatched */
    CS_IMPORT_EXIT_USAGE = 2,   /* bad usage */
    CS_IMPORT_EXIT_NONE = 3,    /* no trace written: no file could be imported, or DIR refused */
};

/* Import files into dir/trace.db (written to a temporary name in dir and
 * renamed at the end). Prints one message per problem through the
 * command's cs_error; returns an exit status (enum cs_import_exit). */
int cs_import_run(const cs_import_format *fmt, char **files, int nfiles, const char *dir, const cs_import_opts *o,
                  int jobs);

#endif
