/* export_kineto.c: the trace as the PyTorch profiler (Kineto) writes one:
 * a folder of JSON files, one per rank, that Holistic Trace Analysis and
 * `collscope import` read (docs/interop.md).
 *
 * Each file holds schemaVersion, deviceProperties (ranks with GPU work),
 * distributedInfo (rank, world_size, backend, and pg_config: every
 * communicator the rank belongs to, by its display name, with its world
 * ranks), and traceEvents: every span of the rank on its thread's track
 * (collectives and point-to-point calls as `record_param_comms` with
 * PyTorch's args; CUDA calls as `cuda_runtime`; the rest as `cpu_op`),
 * ProfilerStep#N from the step markers (else from the analysis's steps),
 * NCCL GPU times as `ncclDevKernel_*` kernels and CUPTI activity as
 * kernels, copies and sets on the stream tracks of the rank's GPU, each
 * tied to its CPU call by correlation and External id and an `ac2g` flow.
 *
 * Times are on the analysis's aligned time line, microseconds with three
 * decimals from baseTimeNanoseconds (the earliest aligned process start),
 * as Kineto writes them. Ranks are written one at a time, each file from
 * its own queries, row by row: memory holds the communicators, the steps
 * and per rank its threads and streams, never the spans. */
#include "config.h"
#include "common/msg.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/formats/export.h"
#include "analyzer/formats/outfile.h"
#include "common/json.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/dtypes.h"
#include "libtrace/span.h"
#include "libtrace/store_tables.h"
#include "libtrace/store_sql.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Correlation ids of NCCL kernels: above every CUPTI id (32 bits). */
#define CS_KINETO_NCCL_CORR (INT64_C(1) << 32)
/* Kineto's stream id of the default stream, and of the others from here. */
#define CS_KINETO_DEFAULT_STREAM 7
#define CS_KINETO_FIRST_STREAM 20
/* How far the clocks of CUPTI records and of the calls may disagree. */
#define CS_KINETO_SLACK_NS 10000

/* A communicator the ranks belong to: its members' world ranks in
 * communicator rank order. */
typedef struct kineto_group {
    int64_t id;
    int size;
    int *ranks; /* size entries, -1 where a member is missing */
    int nccl;
    int world; /* MPI_COMM_WORLD */
} kineto_group;

typedef struct kineto_step {
    int64_t step, begin_ns, end_ns;
} kineto_step;

typedef struct cs_kineto {
    cs_store *st;
    const char *dir;
    cs_export_stats *stats;
    cs_op_row *ops;
    int nops;
    cs_comms comms;
    kineto_group *groups;
    size_t ngroups, capGroups;
    cs_map group_idx;   /* communicator -> index in groups */
    int64_t default_pg; /* the communicator written as PyTorch's default group, pg_name "0" */
    kineto_step *steps;
    size_t nsteps, capSteps;
    int64_t origin;
    int world_size;
    int nccl; /* the trace has NCCL communicators */
    int has_activity;
    /* CUPTI records of every rank in rank and time order, read as the
     * ranks are written; the launching calls by id; the call a record
     * ran within */
    sqlite3_stmt *act, *launch, *enclosing;
    int act_rc; /* the last step of act; 0 before the first */
} cs_kineto;

/* One rank's file being written. */
typedef struct kineto_rank {
    cs_kineto *k;
    FILE *f;
    int rank, pid, device;
    int64_t events;
    cs_map tids;    /* threads named so far */
    cs_map streams; /* stream bits -> Kineto stream id */
    int nstreams;
    int gpu_named; /* the GPU process has its metadata */
    /* the step open since the last marker */
    int64_t step, step_begin, last_end;
    int step_open, markers;
} kineto_rank;

/* ---- writing ---- */

static void kineto_us(FILE *f, int64_t ns)
{
    char b[32], *e = b + sizeof b, *p = e;
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    for (int i = 0; i < 3; i++) {
        *--p = (char)('0' + a % 10);
        a /= 10;
    }
    *--p = '.';
    do {
        *--p = (char)('0' + a % 10);
        a /= 10;
    } while (a);
    if (ns < 0)
        *--p = '-';
    fwrite(p, 1, (size_t)(e - p), f);
}

static void kineto_ev(kineto_rank *r)
{
    fputs(r->events ? ",\n  " : "\n  ", r->f);
    r->events++;
}

/* The CPU track of thread index tid: the process's id for the main
 * thread, as Linux numbers it, and above it for the others. */
static int64_t kineto_tid(const kineto_rank *r, int tid)
{
    return tid == 0 ? r->pid : (int64_t)r->pid * 1000 + tid;
}

static void kineto_meta(kineto_rank *r, const char *name, int64_t pid, int64_t tid, const char *key, const char *s,
                        int64_t v)
{
    kineto_ev(r);
    fprintf(r->f,
            "{\"name\": \"%s\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": %" PRId64 ", \"tid\": %" PRId64
            ", \"args\": {\"%s\": ",
            name, pid, tid, key);
    if (s)
        cs_json_str(r->f, s);
    else
        fprintf(r->f, "%" PRId64, v);
    fputs("}}", r->f);
}

/* The head of a complete event, up to its args (opened). */
static void kineto_x(kineto_rank *r, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t b, int64_t e)
{
    kineto_ev(r);
    fprintf(r->f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
    cs_json_str(r->f, name);
    fprintf(r->f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", pid, tid);
    kineto_us(r->f, b - r->k->origin);
    fputs(", \"dur\": ", r->f);
    kineto_us(r->f, e > b ? e - b : 0);
    fputs(", \"args\": {", r->f);
}

/* An ac2g flow end: "s" on the CPU call, "f" (bound to the enclosing
 * slice) on the kernel. */
static void kineto_flow(kineto_rank *r, int start, int64_t id, int64_t pid, int64_t tid, int64_t ts)
{
    kineto_ev(r);
    fprintf(r->f, "{\"ph\": \"%s\", \"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
            start ? "s" : "f", id, pid, tid);
    kineto_us(r->f, ts - r->k->origin);
    fputs(start ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}"
                : ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
          r->f);
}

/* ---- names ---- */

static const cs_op_row *kineto_op(const cs_kineto *k, int op)
{
    return op >= 0 && op < k->nops && k->ops[op].name[0] ? &k->ops[op] : NULL;
}

static int kineto_is_comm_kind(const char *kind)
{
    return strcmp(kind, "coll") == 0 || strcmp(kind, "rooted") == 0 || strcmp(kind, "send") == 0 ||
           strcmp(kind, "recv") == 0 || strcmp(kind, "sendrecv") == 0;
}

/* The name PyTorch gives a collective in record_param_comms
 * ("Collective name"), from the op's name: MPI_Iallreduce, ncclAllReduce
 * -> "allreduce". NULL for an op that is no collective or p2p call. */
static const char *kineto_coll_name(const char *op)
{
    static const struct {
        const char *stem, *name;
    } map[] = {
        { "allreduce", "allreduce" },
        { "reduce_scatter", "reduce_scatter" },
        { "reducescatter", "reduce_scatter" },
        { "reduce_scatter_block", "reduce_scatter" },
        { "reduce", "reduce" },
        { "bcast", "broadcast" },
        { "broadcast", "broadcast" },
        { "allgatherv", "allgather" },
        { "allgather", "allgather" },
        { "alltoallv", "all_to_allv" },
        { "alltoallw", "all_to_allv" },
        { "alltoall", "all_to_all" },
        { "gatherv", "gather" },
        { "gather", "gather" },
        { "scatterv", "scatter" },
        { "scatter", "scatter" },
        { "barrier", "barrier" },
        { "scan", "scan" },
        { "exscan", "exscan" },
        { "sendrecv", "sendrecv" },
        { "sendrecv_replace", "sendrecv" },
        { "send", "send" },
        { "bsend", "send" },
        { "ssend", "send" },
        { "rsend", "send" },
        { "recv", "recv" },
    };
    char low[64];
    const char *s = op;
    int mpi = 0;
    if (strncmp(s, "MPI_", 4) == 0) {
        s += 4;
        mpi = 1;
    } else if (strncmp(s, "nccl", 4) == 0)
        s += 4;
    size_t n = 0;
    for (; s[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(s[n] >= 'A' && s[n] <= 'Z' ? s[n] - 'A' + 'a' : s[n]);
    low[n] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        /* MPI's nonblocking starts: MPI_Iallreduce, MPI_Isend, MPI_Ibsend */
        const char *w = pass == 0 ? low : (mpi && low[0] == 'i' ? low + 1 : NULL);
        for (size_t i = 0; w && i < sizeof map / sizeof map[0]; i++)
            if (strcmp(w, map[i].stem) == 0)
                return map[i].name;
    }
    return NULL;
}

/* PyTorch's name of a datatype ("dtype" of record_param_comms). */
static const char *kineto_dtype(int dtype)
{
    static const struct {
        const char *ours, *torch;
    } map[] = {
        { "MPI_FLOAT", "Float" },
        { "MPI_DOUBLE", "Double" },
        { "MPI_INT", "Int" },
        { "MPI_INT32_T", "Int" },
        { "MPI_LONG", "Long" },
        { "MPI_LONG_LONG", "Long" },
        { "MPI_LONG_LONG_INT", "Long" },
        { "MPI_INT64_T", "Long" },
        { "MPI_SHORT", "Short" },
        { "MPI_INT16_T", "Short" },
        { "MPI_CHAR", "Char" },
        { "MPI_SIGNED_CHAR", "Char" },
        { "MPI_INT8_T", "Char" },
        { "MPI_BYTE", "Byte" },
        { "MPI_UNSIGNED_CHAR", "Byte" },
        { "MPI_UINT8_T", "Byte" },
        { "MPI_C_BOOL", "Bool" },
        { "ncclInt8", "Char" },
        { "ncclUint8", "Byte" },
        { "ncclInt32", "Int" },
        { "ncclInt64", "Long" },
        { "ncclFloat16", "Half" },
        { "ncclFloat32", "Float" },
        { "ncclFloat64", "Double" },
        { "ncclBfloat16", "BFloat16" },
        { "ncclFloat8e4m3", "Float8_e4m3fn" },
        { "ncclFloat8e5m2", "Float8_e5m2" },
    };
    if (dtype <= 0 || dtype >= CS_DT_COUNT)
        return NULL;
    const char *name = cs_dtype_names[dtype];
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].ours, name) == 0)
            return map[i].torch;
    return name;
}

/* The NCCL kernel of an NCCL call: ncclAllReduce -> ncclDevKernel_AllReduce;
 * point-to-point and the collectives NCCL builds from it -> SendRecv. */
static void kineto_nccl_kernel(const char *op, char *buf, size_t len)
{
    const char *c = strncmp(op, "nccl", 4) == 0 ? op + 4 : op;
    if (strcmp(c, "Send") == 0 || strcmp(c, "Recv") == 0 || strcmp(c, "AlltoAll") == 0 || strcmp(c, "Gather") == 0 ||
        strcmp(c, "Scatter") == 0)
        c = "SendRecv";
    else if (strcmp(c, "Bcast") == 0)
        c = "Broadcast";
    snprintf(buf, len, "ncclDevKernel_%s", c);
}

/* The correlation id of a CUDA call on both sides of the file: CUPTI's
 * where the trace has it, else one of ours (synchronous copies carry no
 * id in the trace; their records are tied to them by time). */
static int64_t kineto_cuda_corr(int64_t span, int64_t corr)
{
    return corr > 0 ? corr : CS_KINETO_NCCL_CORR + span;
}

/* ---- communicators and steps ---- */

static int kineto_member_cb(const cs_comm_member *m, void *arg)
{
    cs_kineto *k = arg;
    if (strcmp(m->how, "self") == 0 || m->size <= 0)
        return 0;
    int64_t i;
    if (!cs_map_get(&k->group_idx, (uint64_t)m->comm, &i)) {
        if (CS_VEC_RESERVE(k->groups, k->capGroups, k->ngroups + 1) != 0)
            return -1;
        kineto_group *g = &k->groups[k->ngroups];
        memset(g, 0, sizeof *g);
        g->id = m->comm;
        g->size = m->size;
        g->nccl = strncmp(m->how, "nccl", 4) == 0;
        if (!(g->ranks = malloc((size_t)m->size * sizeof *g->ranks)))
            return -1;
        for (int j = 0; j < m->size; j++)
            g->ranks[j] = -1;
        i = (int64_t)k->ngroups++;
        if (cs_map_put(&k->group_idx, (uint64_t)m->comm, i) != 0)
            return -1;
        if (g->nccl)
            k->nccl = 1;
        g->world = strcmp(m->how, "world") == 0;
        if (g->world && m->size > k->world_size)
            k->world_size = m->size;
    }
    kineto_group *g = &k->groups[i];
    if (m->comm_rank >= 0 && m->comm_rank < g->size)
        g->ranks[m->comm_rank] = m->rank;
    return 0;
}

static const kineto_group *kineto_group_of(const cs_kineto *k, int64_t comm)
{
    int64_t i;
    return comm != 0 && cs_map_get(&k->group_idx, (uint64_t)comm, &i) ? &k->groups[i] : NULL;
}

static int kineto_is_member(const kineto_group *g, int rank)
{
    for (int j = 0; j < g->size; j++)
        if (g->ranks[j] == rank)
            return 1;
    return 0;
}

/* The default group: MPI_COMM_WORLD, else the first communicator of
 * every rank. */
static void kineto_default_pg(cs_kineto *k)
{
    for (int pass = 0; pass < 2 && !k->default_pg; pass++)
        for (size_t i = 0; i < k->ngroups && !k->default_pg; i++)
            if (pass == 0 ? k->groups[i].world : k->groups[i].size == k->world_size)
                k->default_pg = k->groups[i].id;
}

/* A group's pg_name: "0" for the default group, as PyTorch names it, else
 * its display name (pg_desc is the display name of every group). */
static const char *kineto_pg_name(const cs_kineto *k, int64_t comm, char *buf, size_t len)
{
    if (comm == k->default_pg) {
        snprintf(buf, len, "0");
        return buf;
    }
    return cs_store_comms_name(&k->comms, comm, buf, len);
}

/* The ranks as PyTorch writes "Process Group Ranks": "[0, 1, 2, 3]". */
static void kineto_ranks_text(FILE *f, const kineto_group *g)
{
    fputc('[', f);
    for (int j = 0; j < g->size; j++)
        fprintf(f, "%s%d", j ? ", " : "", g->ranks[j]);
    fputc(']', f);
}

static int kineto_step_cb(const cs_step_row *x, void *arg)
{
    cs_kineto *k = arg;
    if (CS_VEC_RESERVE(k->steps, k->capSteps, k->nsteps + 1) != 0)
        return -1;
    k->steps[k->nsteps++] = (kineto_step){ x->step, x->begin_ns, x->end_ns };
    return 0;
}

/* ---- one rank ---- */

static void kineto_thread(kineto_rank *r, int tid)
{
    int64_t seen;
    if (cs_map_get(&r->tids, (uint64_t)(uint32_t)tid, &seen))
        return;
    char name[64];
    snprintf(name, sizeof name, "thread %d (rank %d)", tid, r->rank);
    kineto_meta(r, "thread_name", r->pid, kineto_tid(r, tid), "name", name, 0);
    kineto_meta(r, "thread_sort_index", r->pid, kineto_tid(r, tid), "sort_index", NULL, tid);
    cs_map_put(&r->tids, (uint64_t)(uint32_t)tid, 1);
}

/* The Kineto stream id of stream bits (named on first use); -1 when out
 * of memory. */
static int64_t kineto_stream(kineto_rank *r, int64_t bits)
{
    int64_t id;
    uint64_t key = (uint64_t)(bits < 0 ? 0 : bits);
    if (cs_map_get(&r->streams, key, &id))
        return id;
    id = key == 0 ? CS_KINETO_DEFAULT_STREAM : CS_KINETO_FIRST_STREAM + r->nstreams++;
    if (cs_map_put(&r->streams, key, id) != 0)
        return -1;
    if (!r->gpu_named) {
        char name[32];
        snprintf(name, sizeof name, "GPU %d", r->device);
        kineto_meta(r, "process_name", r->device, 0, "name", "collscope", 0);
        kineto_meta(r, "process_labels", r->device, 0, "labels", name, 0);
        kineto_meta(r, "process_sort_index", r->device, 0, "sort_index", NULL, 16777216 + r->device);
        r->gpu_named = 1;
    }
    char name[64];
    snprintf(name, sizeof name, "stream %" PRId64 " ", id);
    kineto_meta(r, "thread_name", r->device, id, "name", name, 0);
    kineto_meta(r, "thread_sort_index", r->device, id, "sort_index", NULL, id);
    return id;
}

static void kineto_profiler_step(kineto_rank *r, int64_t step, int64_t b, int64_t e)
{
    char name[48];
    snprintf(name, sizeof name, "ProfilerStep#%" PRId64, step);
    kineto_thread(r, 0);
    kineto_x(r, "user_annotation", name, r->pid, kineto_tid(r, 0), b, e);
    fputs("}}", r->f);
    r->k->stats->analysis++;
}

/* The args of a collective or p2p call (record_param_comms and its NCCL
 * kernel), without braces. */
static void kineto_comm_args(kineto_rank *r, const cs_span *sp, const cs_op_row *op, const char *coll)
{
    cs_kineto *k = r->k;
    FILE *f = r->f;
    fputs(", \"Collective name\": ", f);
    cs_json_str(f, coll);
    int64_t n = sp->count;
    fprintf(f, ", \"In msg nelems\": %" PRId64 ", \"Out msg nelems\": %" PRId64, n, n);
    fputs(", \"In split size\": \"[]\", \"Out split size\": \"[]\"", f);
    const char *dt = kineto_dtype(sp->dtype);
    if (dt) {
        fputs(", \"dtype\": ", f);
        cs_json_str(f, dt);
    }
    const kineto_group *g = kineto_group_of(k, sp->comm);
    if (g) {
        char buf[CS_COMMS_DISPLAY_MAX];
        fprintf(f, ", \"Group size\": %d, \"Process Group Name\": ", g->size);
        cs_json_str(f, kineto_pg_name(k, sp->comm, buf, sizeof buf));
        cs_store_comms_name(&k->comms, sp->comm, buf, sizeof buf);
        fputs(", \"Process Group Description\": ", f);
        cs_json_str(f, buf);
        fputs(", \"Process Group Ranks\": \"", f);
        kineto_ranks_text(f, g);
        fputc('"', f);
        int stride = g->size > 1 ? g->ranks[1] - g->ranks[0] : 1, regular = g->ranks[0] >= 0 && stride > 0;
        for (int j = 1; j < g->size && regular; j++)
            regular = g->ranks[j] == g->ranks[0] + j * stride;
        if (regular)
            fprintf(f, ", \"Global rank start\": %d, \"Global rank stride\": %d", g->ranks[0], stride);
        if ((sp->flags & CS_F_HAS_PEER) && sp->peer >= 0) {
            int global = sp->peer < g->size ? g->ranks[sp->peer] : -1;
            const char *key = strcmp(coll, "recv") == 0                                    ? "Src Rank"
                              : strcmp(coll, "send") == 0 || strcmp(coll, "sendrecv") == 0 ? "Dst Rank"
                                                                                           : "Root";
            if (global >= 0)
                fprintf(f, ", \"%s\": %d", key, global);
            fprintf(f, ", \"Peer\": %d", sp->peer);
        }
        if (sp->peer2 >= 0) {
            int global = sp->peer2 < g->size ? g->ranks[sp->peer2] : -1;
            if (global >= 0)
                fprintf(f, ", \"Src Rank\": %d", global);
            fprintf(f, ", \"Peer2\": %d", sp->peer2);
        }
    }
    if ((sp->flags & CS_F_HAS_SEQ) && sp->seq >= 0)
        fprintf(f, ", \"Seq\": %" PRId64, sp->seq);
    if (sp->bytes > 0)
        fprintf(f, ", \"Msg bytes\": %" PRId64, sp->bytes);
    if (sp->tag >= 0 && (strcmp(coll, "send") == 0 || strcmp(coll, "recv") == 0 || strcmp(coll, "sendrecv") == 0))
        fprintf(f, ", \"Tag\": %d", sp->tag);
    if ((sp->flags & CS_F_NONBLOCKING) || (op && op->nonblocking))
        fputs(", \"Nonblocking\": 1", f);
    fputs(", \"collscope op\": ", f);
    cs_json_str(f, op ? op->name : "unknown");
}

static int kineto_span(kineto_rank *r, const cs_span *sp, int64_t corr)
{
    cs_kineto *k = r->k;
    const cs_op_row *op = kineto_op(k, sp->op);
    const char *name = op ? op->name : "unknown", *kind = op ? op->kind : "";
    int64_t tid = kineto_tid(r, sp->tid);
    kineto_thread(r, sp->tid);
    if (strcmp(kind, "marker") == 0) {
        if (r->step_open)
            kineto_profiler_step(r, r->step, r->step_begin, sp->begin_ns);
        r->step = r->markers++;
        r->step_begin = sp->begin_ns;
        r->step_open = 1;
    } else if (strcmp(kind, "finalize") != 0 && sp->end_ns > r->last_end)
        r->last_end = sp->end_ns;
    const char *coll = kineto_is_comm_kind(kind) && sp->comm != 0 ? kineto_coll_name(name) : NULL;
    int cuda = strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0;
    if (coll) {
        kineto_x(r, "cpu_op", "record_param_comms", r->pid, tid, sp->begin_ns, sp->end_ns);
        fprintf(r->f, "\"External id\": %" PRId64 ", \"Record function id\": %" PRId64, sp->id, sp->id);
        kineto_comm_args(r, sp, op, coll);
        fputs("}}", r->f);
    } else {
        /* Kineto's name of a launch: cudaLaunchKernel, not the runtime's
         * internal __cudaLaunchKernel. */
        const char *shown = cuda && strncmp(name, "__", 2) == 0 ? name + 2 : name;
        kineto_x(r, cuda ? "cuda_runtime" : "cpu_op", shown, r->pid, tid, sp->begin_ns, sp->end_ns);
        fprintf(r->f, "\"External id\": %" PRId64, sp->id);
        if (cuda)
            fprintf(r->f, ", \"correlation\": %" PRId64, kineto_cuda_corr(sp->id, corr));
        fputs(", \"collscope op\": ", r->f);
        cs_json_str(r->f, name);
        fputs("}}", r->f);
    }
    k->stats->spans++;
    /* An NCCL call's GPU time: its kernel, launched from the call. */
    if (coll && strncmp(name, "nccl", 4) == 0 && sp->gpu_begin_ns != 0 && sp->gpu_end_ns != 0) {
        int64_t stream = kineto_stream(r, sp->stream);
        if (stream < 0)
            return -1;
        int64_t c = CS_KINETO_NCCL_CORR + sp->id;
        char kname[64];
        kineto_nccl_kernel(name, kname, sizeof kname);
        kineto_x(r, "cuda_runtime", "cudaLaunchKernel", r->pid, tid, sp->begin_ns, sp->end_ns);
        fprintf(r->f, "\"External id\": %" PRId64 ", \"correlation\": %" PRId64 "}}", sp->id, c);
        kineto_x(r, "kernel", kname, r->device, stream, sp->gpu_begin_ns, sp->gpu_end_ns);
        fprintf(r->f,
                "\"External id\": %" PRId64 ", \"device\": %d, \"stream\": %" PRId64 ", \"correlation\": %" PRId64,
                sp->id, r->device, stream, c);
        kineto_comm_args(r, sp, op, coll);
        fputs("}}", r->f);
        kineto_flow(r, 1, c, r->pid, tid, sp->begin_ns);
        kineto_flow(r, 0, c, r->device, stream, sp->gpu_begin_ns);
        k->stats->flows++;
    }
    return 0;
}

static int kineto_spans(kineto_rank *r, char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(r->k->st);
    static const char sql[] = "SELECT " CS_SPAN_LIST ", COALESCE(s.corr, 0)" CS_SPAN_FROM
                              " WHERE s.rank = ? ORDER BY s.rank, s.begin_ns, s.id";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the spans: %s", cs_store_path(r->k->st),
                                 sqlite3_errmsg(db));
    sqlite3_bind_int(s, 1, r->rank);
    int rc, bad = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        cs_span sp;
        cs_store_read_span_row(s, &sp);
        if (kineto_span(r, &sp, sqlite3_column_int64(s, CS_SPAN_NCOLS)) != 0) {
            bad = 1;
            break;
        }
    }
    sqlite3_finalize(s);
    if (bad)
        return cs_store_sql_fail(err, errlen, "export: out of memory");
    if (rc != SQLITE_DONE)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the spans (damaged?)", cs_store_path(r->k->st));
    return 0;
}

/* The rank's steps: from its markers (the last one until its last call
 * before MPI_Finalize), else the analysis's steps. */
static void kineto_steps(kineto_rank *r)
{
    if (r->step_open) {
        kineto_profiler_step(r, r->step, r->step_begin, r->last_end > r->step_begin ? r->last_end : r->step_begin);
        return;
    }
    for (size_t i = 0; i < r->k->nsteps; i++)
        kineto_profiler_step(r, r->k->steps[i].step, r->k->steps[i].begin_ns, r->k->steps[i].end_ns);
}

/* The activity pass's statements, and the launching calls by correlation
 * id in a temporary table with an index (the trace has none on
 * span.corr). */
static int kineto_activity_open(cs_kineto *k, char *err, size_t errlen)
{
    sqlite3 *db = cs_store_sql_db(k->st);
    static const char table[] =
        "DROP TABLE IF EXISTS temp.kineto_launch;"
        "CREATE TEMP TABLE kineto_launch(rank INTEGER, corr INTEGER, id INTEGER);"
        "INSERT INTO temp.kineto_launch SELECT rank, corr, id FROM span"
        " WHERE corr IS NOT NULL AND corr != 0 AND op IN (SELECT id FROM ops WHERE api = 'CUDA');"
        "CREATE INDEX temp.kineto_launch_rc ON kineto_launch(rank, corr);";
    static const char act[] =
        "SELECT a.kind, a.name, COALESCE(a.stream, 0), COALESCE(a.corr, 0), " CS_ALIGNED("a.begin_ns") ", " CS_ALIGNED(
            "a.end_ns") ", COALESCE(a.bytes, 0),"
                        " (SELECT l.id FROM temp.kineto_launch l WHERE l.rank = a.rank AND l.corr = a.corr LIMIT 1),"
                        " a.begin_ns, a.end_ns, a.rank"
                        " FROM gpu_activity a LEFT JOIN clocks k ON k.rank = a.rank ORDER BY a.rank, a.begin_ns";
    static const char launch[] = "SELECT s.tid, " CS_ALIGNED("s.begin_ns") " FROM span s LEFT JOIN clocks k ON"
                                                                           " k.rank = s.rank WHERE s.id = ?";
    static const char enclosing[] =
        "SELECT s.id, s.op, s.corr, s.end_ns FROM span s WHERE s.rank = ? AND s.begin_ns <= ?"
        " ORDER BY s.begin_ns DESC LIMIT 2";
    char *msg = NULL;
    if (sqlite3_exec(db, table, NULL, NULL, &msg) != SQLITE_OK) {
        cs_store_sql_fail(err, errlen, "%s: cannot index the CUDA calls: %s", cs_store_path(k->st),
                          msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    if (sqlite3_prepare_v2(db, act, -1, &k->act, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, launch, -1, &k->launch, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, enclosing, -1, &k->enclosing, NULL) != SQLITE_OK)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the GPU activity: %s", cs_store_path(k->st),
                                 sqlite3_errmsg(db));
    return 0;
}

static void kineto_activity_close(cs_kineto *k)
{
    sqlite3_finalize(k->act);
    sqlite3_finalize(k->launch);
    sqlite3_finalize(k->enclosing);
    k->act = k->launch = k->enclosing = NULL;
    sqlite3_exec(cs_store_sql_db(k->st), "DROP TABLE IF EXISTS temp.kineto_launch", NULL, NULL, NULL);
}

/* The call that a record with no known launch ran in: of the rank's last
 * two calls to begin before it (CS_KINETO_SLACK_NS allowed between the
 * clocks of CUPTI and of the calls), a CUDA call without a correlation id
 * (a synchronous copy) that lasted until the record's end. Its span id,
 * or 0. */
static int64_t kineto_enclosing(sqlite3_stmt *e, int rank, int64_t raw_b, int64_t raw_e, const cs_kineto *k)
{
    int64_t id = 0;
    sqlite3_reset(e);
    sqlite3_bind_int(e, 1, rank);
    sqlite3_bind_int64(e, 2, raw_b + CS_KINETO_SLACK_NS);
    while (id == 0 && sqlite3_step(e) == SQLITE_ROW) {
        const cs_op_row *op = kineto_op(k, sqlite3_column_int(e, 1));
        if (sqlite3_column_type(e, 2) == SQLITE_NULL && sqlite3_column_int64(e, 3) >= raw_e - CS_KINETO_SLACK_NS &&
            op && (strncmp(op->name, "cuda", 4) == 0 || strncmp(op->name, "__cuda", 6) == 0))
            id = sqlite3_column_int64(e, 0);
    }
    return id;
}

/* CUPTI's kernels, copies and sets of the rank, each with the call that
 * launched it where the trace has that call. The records come from one
 * statement over every rank, in rank order as the ranks are written. */
static int kineto_activity(kineto_rank *r, char *err, size_t errlen)
{
    cs_kineto *k = r->k;
    if (!k->act)
        return 0;
    sqlite3_stmt *s = k->act, *l = k->launch;
    if (k->act_rc == 0)
        k->act_rc = sqlite3_step(s);
    for (; k->act_rc == SQLITE_ROW; k->act_rc = sqlite3_step(s)) {
        int rank = sqlite3_column_int(s, 10);
        if (rank > r->rank)
            break;
        if (rank < r->rank)
            continue; /* a rank with no file */
        const char *kind = (const char *)sqlite3_column_text(s, 0);
        uint64_t hash = (uint64_t)sqlite3_column_int64(s, 1);
        int64_t bits = sqlite3_column_int64(s, 2), corr = sqlite3_column_int64(s, 3);
        int64_t b = sqlite3_column_int64(s, 4), end = sqlite3_column_int64(s, 5), bytes = sqlite3_column_int64(s, 6);
        int64_t sid = sqlite3_column_type(s, 7) != SQLITE_NULL ? sqlite3_column_int64(s, 7) : 0;
        if (sid == 0) {
            sid = kineto_enclosing(k->enclosing, r->rank, sqlite3_column_int64(s, 8), sqlite3_column_int64(s, 9), k);
            corr = sid ? kineto_cuda_corr(sid, 0) : 0;
        }
        int64_t stream = kineto_stream(r, bits);
        if (stream < 0)
            return cs_store_sql_fail(err, errlen, "export: out of memory");
        char name[64];
        const char *cat = "kernel";
        if (kind && strcmp(kind, "memcpy") == 0) {
            cat = "gpu_memcpy";
            snprintf(name, sizeof name, "Memcpy");
        } else if (kind && strcmp(kind, "memset") == 0) {
            cat = "gpu_memset";
            snprintf(name, sizeof name, "Memset (Device)");
        } else
            snprintf(name, sizeof name, "kernel_%016" PRIx64, hash);
        kineto_x(r, cat, name, r->device, stream, b, end);
        fprintf(r->f, "\"device\": %d, \"stream\": %" PRId64, r->device, stream);
        if (sid)
            fprintf(r->f, ", \"External id\": %" PRId64 ", \"correlation\": %" PRId64, sid, corr);
        if (bytes > 0)
            fprintf(r->f, ", \"bytes\": %" PRId64, bytes);
        fputs("}}", r->f);
        if (sid) {
            sqlite3_reset(l);
            sqlite3_bind_int64(l, 1, sid);
            if (sqlite3_step(l) == SQLITE_ROW) {
                kineto_flow(r, 1, corr, r->pid, kineto_tid(r, sqlite3_column_int(l, 0)), sqlite3_column_int64(l, 1));
                kineto_flow(r, 0, corr, r->device, stream, b);
                k->stats->flows++;
            }
        }
    }
    if (k->act_rc != SQLITE_ROW && k->act_rc != SQLITE_DONE)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the GPU activity (damaged?)", cs_store_path(k->st));
    return 0;
}

/* Does the rank have GPU work (NCCL GPU times or CUPTI activity), and on
 * which device? */
static int kineto_rank_gpu(cs_kineto *k, int rank, int *device)
{
    sqlite3 *db = cs_store_sql_db(k->st);
    sqlite3_stmt *s;
    int gpu = 0;
    *device = 0;
    if (k->has_activity && sqlite3_prepare_v2(db, "SELECT COALESCE(device, 0) FROM gpu_activity WHERE rank = ? LIMIT 1",
                                              -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int(s, 1, rank);
        if (sqlite3_step(s) == SQLITE_ROW) {
            gpu = 1;
            *device = sqlite3_column_int(s, 0);
        }
        sqlite3_finalize(s);
    }
    if (!gpu && sqlite3_prepare_v2(db, "SELECT 1 FROM span WHERE rank = ? AND gpu_begin_ns IS NOT NULL LIMIT 1", -1, &s,
                                   NULL) == SQLITE_OK) {
        sqlite3_bind_int(s, 1, rank);
        gpu = sqlite3_step(s) == SQLITE_ROW;
        sqlite3_finalize(s);
    }
    if (*device < 0 || *device > 1000000)
        *device = 0;
    return gpu;
}

static void kineto_head(kineto_rank *r, const cs_proc *p, int gpu)
{
    cs_kineto *k = r->k;
    FILE *f = r->f;
    fputs("{\n  \"schemaVersion\": 1,\n", f);
    if (gpu)
        fprintf(
            f,
            "  \"deviceProperties\": [\n    {\"id\": %d, \"name\": \"GPU %d of rank %d (collscope export)\"}\n  ],\n",
            r->device, r->device, r->rank);
    /* HTA finds the rank in the first line holding "rank": N. */
    fprintf(f, "  \"distributedInfo\": {\"backend\": \"%s\", \"rank\": %d, \"world_size\": %d",
            k->nccl ? "nccl" : "mpi", r->rank, k->world_size);
    /* as PyTorch: pg_count counts the job's groups, pg_config lists the rank's */
    fprintf(f, ", \"pg_count\": %zu, \"pg_config\": [", k->ngroups);
    int first = 1;
    for (size_t i = 0; i < k->ngroups; i++) {
        const kineto_group *g = &k->groups[i];
        if (!kineto_is_member(g, r->rank))
            continue;
        char buf[CS_COMMS_DISPLAY_MAX];
        fputs(first ? "\n    {\"pg_name\": " : ",\n    {\"pg_name\": ", f);
        first = 0;
        cs_json_str(f, kineto_pg_name(k, g->id, buf, sizeof buf));
        cs_store_comms_name(&k->comms, g->id, buf, sizeof buf);
        fputs(", \"pg_desc\": ", f);
        cs_json_str(f, buf);
        fprintf(f, ", \"backend_config\": \"%s\", \"pg_size\": %d, \"ranks\": ", g->nccl ? "cuda:nccl" : "cpu:mpi",
                g->size);
        kineto_ranks_text(f, g);
        fputc('}', f);
    }
    fputs(first ? "]},\n" : "\n  ]},\n", f);
    fputs("  \"collscope\": {\"producer\": \"collscope " PACKAGE_VERSION "\", \"trace\": ", f);
    cs_json_str(f, cs_store_path(k->st));
    fprintf(f, ", \"host\": ");
    cs_json_str(f, p->host[0] ? p->host : "unknown");
    fputs(", \"time\": \"aligned, microseconds from baseTimeNanoseconds\"},\n  \"traceEvents\": [", f);
    char name[128];
    snprintf(name, sizeof name, "rank %d (%s)", r->rank, p->host[0] ? p->host : "unknown host");
    kineto_meta(r, "process_name", r->pid, 0, "name", name, 0);
    kineto_meta(r, "process_labels", r->pid, 0, "labels", "CPU", 0);
    kineto_meta(r, "process_sort_index", r->pid, 0, "sort_index", NULL, r->rank);
}

/* Write rank p's file into the folder. 0, or -1 (err set; "" when the
 * output file said why). */
static int kineto_rank_file(cs_kineto *k, const cs_proc *p, char *err, size_t errlen)
{
    char path[4300];
    if ((size_t)snprintf(path, sizeof path, "%s/rank-%d.pt.trace.json", k->dir, p->rank) >= sizeof path)
        return cs_store_sql_fail(err, errlen, "export: %s: the name is too long", k->dir);
    cs_outfile out;
    if (cs_outfile_open(&out, "export", path) != 0) {
        if (errlen)
            err[0] = '\0';
        return -1;
    }
    setvbuf(out.f, NULL, _IOFBF, 1 << 20);
    kineto_rank r = { .k = k, .f = out.f, .rank = p->rank, .pid = p->pid > 0 ? p->pid : 1000000 + p->rank };
    int gpu = kineto_rank_gpu(k, p->rank, &r.device);
    kineto_head(&r, p, gpu);
    int rc = kineto_spans(&r, err, errlen);
    if (rc == 0) {
        kineto_steps(&r);
        rc = kineto_activity(&r, err, errlen);
    }
    if (rc == 0)
        fprintf(out.f,
                "\n  ],\n  \"traceName\": \"rank-%d.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n"
                "  \"baseTimeNanoseconds\": %" PRId64 "\n}\n",
                p->rank, k->origin);
    k->stats->events += r.events;
    cs_map_free(&r.tids);
    cs_map_free(&r.streams);
    if (cs_outfile_close(&out, "export", rc == 0) != 0 && rc == 0) {
        if (errlen)
            err[0] = '\0';
        rc = -1;
    }
    return rc;
}

/* The output folder: made when absent (*made set); an existing one must
 * be a real folder (not a link) of this user. */
static int kineto_dir(const char *dir, int *made, char *err, size_t errlen)
{
    struct stat sb;
    *made = 0;
    if (mkdir(dir, 0777) == 0) {
        *made = 1;
        return 0;
    }
    if (errno != EEXIST)
        return cs_store_sql_fail(err, errlen, "export: cannot make the folder %s: %s", dir, strerror(errno));
    if (lstat(dir, &sb) != 0)
        return cs_store_sql_fail(err, errlen, "export: %s: %s", dir, strerror(errno));
    if (S_ISLNK(sb.st_mode))
        return cs_store_sql_fail(err, errlen, "export: %s is a symbolic link: refusing to write through it", dir);
    if (!S_ISDIR(sb.st_mode))
        return cs_store_sql_fail(err, errlen, "export: %s is not a folder: the kineto format writes a folder", dir);
    if (sb.st_uid != geteuid())
        return cs_store_sql_fail(err, errlen, "export: %s belongs to another user: refusing to write in it", dir);
    return 0;
}

/* Name the rank files in the folder that this export did not write (an
 * earlier export of a larger job): a reader of the folder takes them as
 * ranks of this one. */
static void kineto_strays(const char *dir, const cs_proc *procs, int nproc)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        int rank, used = 0, found = 0;
        if (sscanf(de->d_name, "rank-%d.pt.trace.json%n", &rank, &used) != 1 || de->d_name[used] != '\0')
            continue;
        for (int i = 0; i < nproc && !found; i++)
            found = procs[i].rank == rank;
        if (!found)
            cs_note("export: %s/%s is of no rank of this trace: readers of the folder take it as one (remove it)", dir,
                    de->d_name);
    }
    if (d)
        closedir(d);
}

int cs_export_kineto(const char *dir, cs_store *st, cs_export_stats *stats, char *err, size_t errlen)
{
    cs_kineto k = { .st = st, .dir = dir, .stats = stats };
    cs_proc *procs = NULL;
    int nproc = 0, rc = -1, made = 0, written = 0;
    memset(stats, 0, sizeof *stats);
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &k.ops, &k.nops) != 0 ||
        cs_store_comms_load(st, &k.comms) != 0 || cs_store_comm_members(st, kineto_member_cb, &k) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the processes, ops or communicators (damaged?)",
                          cs_store_path(st));
        goto out;
    }
    if (cs_store_analysis_exists(st) == 1 && cs_store_steps_list(st, kineto_step_cb, &k) < 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the stored analysis (damaged?)", cs_store_path(st));
        goto out;
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(cs_store_sql_db(st), "SELECT 1 FROM gpu_activity LIMIT 1", -1, &s, NULL) == SQLITE_OK) {
        k.has_activity = sqlite3_step(s) == SQLITE_ROW;
        sqlite3_finalize(s);
    }
    int nranks = 0;
    for (int i = 0; i < nproc; i++) {
        int64_t t = procs[i].start_ns + procs[i].clock_offset_ns;
        if (i == 0 || t < k.origin)
            k.origin = t;
        if (i == 0 || procs[i].rank != procs[i - 1].rank)
            nranks++;
    }
    if (k.world_size < nranks)
        k.world_size = nranks;
    kineto_default_pg(&k);
    if (kineto_dir(dir, &made, err, errlen) != 0 || (k.has_activity && kineto_activity_open(&k, err, errlen) != 0))
        goto out;
    for (; written < nproc; written++) {
        /* one file a rank (the first process of a rank that has several) */
        const cs_proc *p = &procs[written];
        if (p->rank < 0 || (written > 0 && p->rank == procs[written - 1].rank))
            continue;
        if (kineto_rank_file(&k, p, err, errlen) != 0)
            goto out;
    }
    kineto_strays(dir, procs, nproc);
    rc = 0;
out:
    /* A failed export leaves no part of a job: the files it wrote go, and
     * the folder when it made it. */
    for (int i = 0; rc != 0 && i < written; i++) {
        char path[4300];
        if (procs[i].rank >= 0 && (i == 0 || procs[i].rank != procs[i - 1].rank) &&
            (size_t)snprintf(path, sizeof path, "%s/rank-%d.pt.trace.json", dir, procs[i].rank) < sizeof path)
            unlink(path);
    }
    if (rc != 0 && made)
        rmdir(dir);
    if (k.has_activity)
        kineto_activity_close(&k);
    free(procs);
    free(k.ops);
    cs_store_comms_free(&k.comms);
    for (size_t i = 0; i < k.ngroups; i++)
        free(k.groups[i].ranks);
    free(k.groups);
    free(k.steps);
    cs_map_free(&k.group_idx);
    return rc;
}
