/* failure.h: the state of a job that hung or failed, as a neutral model
 * that two sources fill (the live logs: analyzer/status/status.c; an ingested
 * trace: failure_store.c), and the one diagnosis made from it (failure.c):
 * deadlock, mismatch, missing rank, dead rank, compute, ranks alike
 * grouped (docs/hangs.md). */
#ifndef CS_FAILURE_H
#define CS_FAILURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libtrace/store.h"

/* One call of a rank: in flight (never returned so far) or completed. */
typedef struct cs_failure_call {
    int op;         /* index into cs_ops (libtrace/ops.gen.h); 0 none */
    uint64_t comm;  /* job-wide communicator id; 0 none */
    int64_t seq;    /* a collective's sequence number on comm; -1 none */
    int peer;       /* p2p peer or root, a rank of comm; -1 none */
    int tag, tid;   /* p2p tag; thread index */
    uint64_t bytes; /* payload bytes of this rank's side */
    int64_t t0, t1; /* begin and (completed calls) end, ns on the model's clock */
    char site[256]; /* "file.c:LINE (function)", "" unknown */
} cs_failure_call;

/* A rank's highest sequence number entered and completed on a communicator. */
typedef struct cs_failure_seq {
    uint64_t comm;
    int64_t entered, completed; /* -1 none */
} cs_failure_seq;

typedef struct cs_failure_rank {
    int rank, pid, world;
    int alive;     /* 1 runs, 0 gone, -1 unknown (another host) */
    int closed;    /* exited: its log was closed */
    int finalized; /* called MPI_Finalize */
    int has_fly, has_last;
    cs_failure_call fly;  /* the main thread's call in flight */
    cs_failure_call last; /* the last completed call */
    char host[64];
    cs_failure_seq *seq;
    size_t nseq, capSeq;
    /* optional: a sampled stack of the rank (one frame a line, innermost
     * first) and when it was taken; printed when nframes > 0 */
    int nframes;
    int64_t stack_t;
    char stack[2048];
    /* optional: a GPU operation in flight (op, comm, seq; t0 when it was
     * enqueued); printed when has_gpu */
    int has_gpu;
    int gpu_begun; /* its GPU work started (it waits inside the collective) */
    cs_failure_call gpu;
    /* optional: where a stack sample found the rank outside any traced
     * call ("function (file:line)"); "" none */
    char sampled[256];
} cs_failure_rank;

typedef struct cs_failure_comm {
    uint64_t id;
    int size, how;
    int nth;    /* an NCCL one from a unique id: 1, 2, ... in the order first defined */
    int *world; /* [size]: the world rank of each member, -1 unknown */
    char name[96];
} cs_failure_comm;

typedef struct cs_failure_model {
    cs_failure_rank *r; /* sorted by rank once filled */
    size_t n, cap;
    cs_failure_comm *c;
    size_t nc, capC;
    int64_t now; /* the time the model is of (ns, the calls' clock) */
} cs_failure_model;

/* One finding of the diagnosis. */
typedef struct cs_failure {
    char kind[24];   /* deadlock mismatch missing_rank dead_rank compute missing_log */
    char text[1024]; /* the line as printed */
    int *culprits;   /* the ranks at fault */
    int nculprits;
    int *waiting; /* the ranks waiting on them */
    int nwaiting;
    char call[48];  /* the operation it is about ("" none) */
    char comm[96];  /* its communicator's name ("" none) */
    int64_t seq;    /* its sequence number, -1 none */
    char site[256]; /* the first culprit's call site ("" unknown) */
    char doing[48]; /* the first culprit's call in flight ("" none) */
    double for_s;   /* how long the waiting ranks (or the culprit) wait, -1 unknown */
} cs_failure;

typedef struct cs_failure_list {
    cs_failure *v;
    size_t n, cap;
} cs_failure_list;

/* The model's parts, for its fillers. NULL when out of memory or when a
 * damaged source's size is out of bounds. */
cs_failure_rank *cs_failure_rank_add(cs_failure_model *m);
cs_failure_comm *cs_failure_comm_get(cs_failure_model *m, uint64_t id, int size);
/* Communicator id, or NULL when the model lacks it. */
cs_failure_comm *cs_failure_comm_find(const cs_failure_model *m, uint64_t id);
/* What a log's COMMDEF record says: communicator id of size members, made
 * how, member comm_rank is world rank world_rank. */
void cs_failure_comm_def(cs_failure_model *m, uint64_t id, int size, int how, int comm_rank, int world_rank);
/* A COMMNAME record's first part: the name of communicator id (text, up
 * to len bytes), where the model has it. */
void cs_failure_comm_named(cs_failure_model *m, uint64_t id, const char *text, size_t len);
cs_failure_seq *cs_failure_seq_get(cs_failure_rank *r, uint64_t comm);
/* Sort the ranks (once filled). */
void cs_failure_sort(cs_failure_model *m);
void cs_failure_model_free(cs_failure_model *m);

/* Fill m from an ingested trace: each process's exit (processes.status),
 * MPI_Finalize, its calls that never returned (CS_F_INFLIGHT), its last
 * completed call, the highest seq per communicator; the time is the end
 * of the trace and no process runs. 0, or -1 with a message in err (free
 * m all the same). */
int cs_failure_from_store(cs_store *st, cs_failure_model *m, char *err, size_t errlen);

/* Post mortem (a trace), every call that never returned is stuck: its
 * process ended in it (the MPI library or the scheduler may end the others
 * within a second of the first one's death). */
#define CS_FAILURE_POST_AFTER_S 0.0

/* The diagnosis of m (failure.c's header comment); a call in flight for
 * after_s is stuck. Appends to out. */
void cs_failure_diagnose(const cs_failure_model *m, double after_s, cs_failure_list *out);
/* Add a finding (printf-style text); returns it (NULL when out of memory). */
cs_failure *cs_failure_add(cs_failure_list *l, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cs_failure_list_free(cs_failure_list *l);
/* Whether a module (a library's path or name) holds no code of the
 * application's own: the C and MPI libraries, their transports, collscope. */
int cs_failure_system_module(const char *mod);

/* What rank r is doing, as words ("in MPI_Recv from rank 5 (tag 7) since
 * 61.0 s at train.c:120 (main)"). */
void cs_failure_doing(const cs_failure_model *m, const cs_failure_rank *r, char *buf, size_t len);
/* The ranks as "0-2,4,6,7". */
void cs_failure_ranks_text(const int *v, int n, char *buf, size_t len);
/* A communicator's name ("MPI_COMM_WORLD", "comm:HEX (N ranks)"). */
const char *cs_failure_comm_name(const cs_failure_model *m, uint64_t id, char *buf, size_t len);
/* The ranks, alike ones on one line ("  ranks 0,2,3: in ... (for 2.3 s)"),
 * then each rank's sampled stack and GPU operation in flight where set. */
void cs_failure_print_ranks(const cs_failure_model *m, FILE *f);
/* The findings of l as a JSON array (one object per finding). */
void cs_failure_json(FILE *f, const cs_failure_list *l);

/* Whether process pid of this host still runs: it exists and is no zombie
 * (a killed rank stays one until its launcher reaps it). */
int cs_failure_pid_alive(int pid);

#endif
