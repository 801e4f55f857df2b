/* import_kineto.c: one PyTorch profiler (Kineto) trace file, JSON or
 * gzip'ed JSON, into one per-rank store (import.h).
 *
 * The file is parsed as a stream (yajl) in 256 KiB reads: compute spans
 * (non-communication GPU kernels, GPU copies and sets, the main thread's
 * top-level CPU ops) go to the store as they are read; the communication
 * records (record_param_comms, NCCL kernels, gloo annotations) and
 * ProfilerStep annotations are kept, a small record each, until the end of the file,
 * where they are paired, sorted and written. Memory grows with the number
 * of communication records and process groups, not with the file. */
#include "config.h"
#include "analyzer/formats/import.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/dtypes.h"
#include "libtrace/ops.gen.h"
#include "libtrace/span.h"
#include "libtrace/store.h"
#include "libtrace/store_bulk.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define KT_NAME 256
#define KT_MAXDEPTH 64
#define KT_MAX_NS ((int64_t)1 << 61) /* times (ts, dur, the base, their sums) beyond this are not kept */

/* The keys the reader looks at; any other is KK_OTHER. */
enum kt_key {
    KK_OTHER = 0,
    KK_TRACEEVENTS,
    KK_DISTRIBUTEDINFO,
    KK_ARGS,
    KK_INPUT_DIMS,
    KK_INPUT_TYPE,
    KK_PG_CONFIG,
    KK_BASETIMENANOSECONDS,
    KK_SCHEMAVERSION,
    KK_TRACE_ID,
    KK_TRACEID,
    KK_RANK,
    KK_WORLD_SIZE,
    KK_BACKEND,
    KK_PG_NAME,
    KK_PG_DESC,
    KK_PG_SIZE,
    KK_RANKS,
    KK_PH,
    KK_PID,
    KK_CAT,
    KK_NAME,
    KK_TS,
    KK_TID,
    KK_DUR,
    KK_EXTERNAL_ID,
    KK_CORRELATION,
    KK_IN_MSG_NELEMS,
    KK_OUT_MSG_NELEMS,
    KK_GROUP_SIZE,
    KK_SEQ,
    KK_SRC_RANK,
    KK_DST_RANK,
    KK_STREAM,
    KK_PROCESS_GROUP_NAME,
    KK_COLLECTIVE_NAME,
    KK_DTYPE,
    KK_PROCESS_GROUP_DESCRIPTION,
    KK_PROCESS_GROUP_RANKS,
    KK_CONCRETE_INPUTS,
    KK_N
};
static const char *const kt_key_names[KK_N] = {
    [KK_TRACEEVENTS] = "traceEvents",
    [KK_DISTRIBUTEDINFO] = "distributedInfo",
    [KK_ARGS] = "args",
    [KK_INPUT_DIMS] = "Input Dims",
    [KK_INPUT_TYPE] = "Input type",
    [KK_PG_CONFIG] = "pg_config",
    [KK_BASETIMENANOSECONDS] = "baseTimeNanoseconds",
    [KK_SCHEMAVERSION] = "schemaVersion",
    [KK_TRACE_ID] = "trace_id",
    [KK_TRACEID] = "traceId",
    [KK_RANK] = "rank",
    [KK_WORLD_SIZE] = "world_size",
    [KK_BACKEND] = "backend",
    [KK_PG_NAME] = "pg_name",
    [KK_PG_DESC] = "pg_desc",
    [KK_PG_SIZE] = "pg_size",
    [KK_RANKS] = "ranks",
    [KK_PH] = "ph",
    [KK_PID] = "pid",
    [KK_CAT] = "cat",
    [KK_NAME] = "name",
    [KK_TS] = "ts",
    [KK_TID] = "tid",
    [KK_DUR] = "dur",
    [KK_EXTERNAL_ID] = "External id",
    [KK_CORRELATION] = "correlation",
    [KK_IN_MSG_NELEMS] = "In msg nelems",
    [KK_OUT_MSG_NELEMS] = "Out msg nelems",
    [KK_GROUP_SIZE] = "Group size",
    [KK_SEQ] = "Seq",
    [KK_SRC_RANK] = "Src Rank",
    [KK_DST_RANK] = "Dst Rank",
    [KK_STREAM] = "stream",
    [KK_PROCESS_GROUP_NAME] = "Process Group Name",
    [KK_COLLECTIVE_NAME] = "Collective name",
    [KK_DTYPE] = "dtype",
    [KK_PROCESS_GROUP_DESCRIPTION] = "Process Group Description",
    [KK_PROCESS_GROUP_RANKS] = "Process Group Ranks",
    [KK_CONCRETE_INPUTS] = "Concrete Inputs",
};

/* The id of key s (n bytes): a scan of the few known keys of its length
 * whose first and last bytes match. */
static int kt_key_id(const unsigned char *s, size_t n)
{
    enum { MAXLEN = 32, PER = 6 };
    static unsigned char by_len[MAXLEN][PER];
    static int ready;
    if (!ready) {
        for (int i = 1; i < KK_N; i++) {
            size_t l = strlen(kt_key_names[i]);
            for (int j = 0; l < MAXLEN && j < PER; j++)
                if (!by_len[l][j]) {
                    by_len[l][j] = (unsigned char)i;
                    break;
                }
        }
        ready = 1;
    }
    if (n == 0 || n >= MAXLEN)
        return KK_OTHER;
    for (int j = 0; j < PER && by_len[n][j]; j++) {
        const char *c = kt_key_names[by_len[n][j]];
        if ((unsigned char)c[0] == s[0] && (unsigned char)c[n - 1] == s[n - 1] && memcmp(c, s, n) == 0)
            return by_len[n][j];
    }
    return KK_OTHER;
}

/* A communication (or step) record kept until the end of the file. */
/* KT_C10DP2P: a gloo send or receive's own c10d::send / c10d::recv_ CPU
 * op (its peer, in the group, in peer_global; its tag in seq) */
enum kt_rec_kind { KT_RPC, KT_NCCLK, KT_GLOO, KT_STEP, KT_C10DP2P };
typedef struct kt_rec {
    int64_t ts, dur; /* ns, raw */
    int64_t ext;     /* External id, -1 none */
    int64_t nelems, seq, peer_global, stream, tid;
    int kind, coll, dtype, tix, pg; /* coll: enum kt_coll; pg: index in groups, -1 default */
    int paired;
} kt_rec;

enum kt_coll {
    KT_C_NONE = 0,
    KT_C_ALLREDUCE,
    KT_C_ALLGATHER,
    KT_C_REDUCE_SCATTER,
    KT_C_ALLTOALL,
    KT_C_BARRIER,
    KT_C_BROADCAST,
    KT_C_REDUCE,
    KT_C_GATHER,
    KT_C_SCATTER,
    KT_C_SEND,
    KT_C_RECV,
    KT_C_N
};
/* The ops of each collective: torch.distributed's own, NCCL's. */
static const int kt_op_c10d[KT_C_N] = {
    [KT_C_ALLREDUCE] = CS_OP_c10d_allreduce,
    [KT_C_ALLGATHER] = CS_OP_c10d_allgather,
    [KT_C_REDUCE_SCATTER] = CS_OP_c10d_reduce_scatter,
    [KT_C_ALLTOALL] = CS_OP_c10d_alltoall,
    [KT_C_BARRIER] = CS_OP_c10d_barrier,
    [KT_C_BROADCAST] = CS_OP_c10d_broadcast,
    [KT_C_REDUCE] = CS_OP_c10d_reduce,
    [KT_C_GATHER] = CS_OP_c10d_gather,
    [KT_C_SCATTER] = CS_OP_c10d_scatter,
    [KT_C_SEND] = CS_OP_c10d_send,
    [KT_C_RECV] = CS_OP_c10d_recv,
};
static const int kt_op_nccl[KT_C_N] = {
    [KT_C_ALLREDUCE] = CS_OP_ncclAllReduce,
    [KT_C_ALLGATHER] = CS_OP_ncclAllGather,
    [KT_C_REDUCE_SCATTER] = CS_OP_ncclReduceScatter,
    [KT_C_ALLTOALL] = CS_OP_ncclAlltoAll,
    [KT_C_BARRIER] = CS_OP_c10d_barrier,
    [KT_C_BROADCAST] = CS_OP_ncclBroadcast,
    [KT_C_REDUCE] = CS_OP_ncclReduce,
    [KT_C_GATHER] = CS_OP_ncclGather,
    [KT_C_SCATTER] = CS_OP_ncclScatter,
    [KT_C_SEND] = CS_OP_ncclSend,
    [KT_C_RECV] = CS_OP_ncclRecv,
};

/* A collective's name as record_param_comms, gloo annotations and NCCL
 * kernels write it ("allreduce", "all_reduce", "_allgather_base",
 * "AllReduce", ...). */
static int kt_coll_of(const char *s)
{
    char b[64];
    size_t n = 0;
    for (; *s && n + 1 < sizeof b; s++)
        if (*s != '_')
            b[n++] = (char)tolower((unsigned char)*s);
    b[n] = 0;
    if (strstr(b, "allreduce"))
        return KT_C_ALLREDUCE;
    if (strstr(b, "reducescatter"))
        return KT_C_REDUCE_SCATTER;
    if (strstr(b, "allgather"))
        return KT_C_ALLGATHER;
    if (strstr(b, "alltoall"))
        return KT_C_ALLTOALL;
    if (strstr(b, "barrier"))
        return KT_C_BARRIER;
    if (strstr(b, "broadcast") || strstr(b, "bcast"))
        return KT_C_BROADCAST;
    if (strstr(b, "reduce"))
        return KT_C_REDUCE;
    if (strstr(b, "gather"))
        return KT_C_GATHER;
    if (strstr(b, "scatter"))
        return KT_C_SCATTER;
    if (strstr(b, "send"))
        return KT_C_SEND;
    if (strstr(b, "recv"))
        return KT_C_RECV;
    return KT_C_NONE;
}

/* torch dtype names ("Float", "BFloat16") as the store's datatypes. */
static int kt_dtype(const char *s, int *size)
{
    static const struct {
        const char *torch, *cs;
        int size;
    } t[] = { { "Float", "ncclFloat32", 4 },
              { "Double", "ncclFloat64", 8 },
              { "Half", "ncclFloat16", 2 },
              { "BFloat16", "ncclBfloat16", 2 },
              { "Int", "ncclInt32", 4 },
              { "Long", "ncclInt64", 8 },
              { "Byte", "ncclUint8", 1 },
              { "Char", "ncclInt8", 1 },
              { "Bool", "ncclUint8", 1 },
              { "Short", "MPI_SHORT", 2 },
              { "ComplexFloat", "MPI_C_FLOAT_COMPLEX", 8 },
              { "ComplexDouble", "MPI_C_DOUBLE_COMPLEX", 16 } };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(s, t[i].torch) == 0) {
            *size = t[i].size;
            return cs_dtype_by_name(t[i].cs);
        }
    *size = strncmp(s, "Float8", 6) == 0 ? 1 : 0;
    return CS_DT_OTHER;
}

/* A process group: from distributedInfo.pg_config or the records' args. */
typedef struct kt_pg {
    char name[64], desc[128];
    int size;
    int *ranks;
    size_t nranks, capRanks;
} kt_pg;

/* The event being read. */
typedef struct kt_event {
    char ph[8], cat[48], name[KT_NAME];
    int64_t ts, dur, tid, pid;
    int has_ts, has_dur;
    /* args */
    int64_t ext, corr, in_nelems, out_nelems, group_size, seq, src, dst, stream;
    char coll[64], dtype[32], pg_name[64], pg_desc[128], pg_ranks[1024];
    int64_t dims_prod; /* elements of the first input (Input Dims) */
    int has_dims, ndims_lists;
    char in_type[32];            /* its type (Input type: "float") */
    int nconc;                   /* Concrete Inputs read so far */
    int64_t conc_peer, conc_tag; /* c10d::send / c10d::recv_: its [2] and [3], -1 none */
    int has_args;
    unsigned bad; /* KT_BAD_*: a value given that is not what its field holds */
} kt_event;
enum { KT_BAD_TS = 1, KT_BAD_DUR = 2, KT_BAD_SEQ = 4, KT_BAD_IN = 8, KT_BAD_OUT = 16 };

/* A GPU span written with a correlation id: its span id and begin. */
typedef struct kt_kl {
    int64_t corr, span, ts;
} kt_kl;

typedef struct kt {
    const char *file;
    const cs_import_opts *o;
    cs_import_rank_info *info;
    cs_store *st;
    cs_store_bulk *b;
    int failed;
    char err[512];
    /* parser position */
    int depth;
    char ctype[KT_MAXDEPTH]; /* 'm' map, 'a' array at each depth */
    int kid[KT_MAXDEPTH];    /* the key at each depth (KK_*; KK_OTHER for the rest) */
    int skip;                /* depth of a value being skipped (arrays in args) */
    kt_event ev;
    /* distributedInfo */
    int rank, world_size, has_rank;
    kt_pg *pgs;
    size_t npg, capPg;
    kt_pg cur_pg;
    int in_pg;
    int64_t base_ns;
    int has_base;
    /* records kept */
    kt_rec *recs;
    size_t nrec, capRec;
    /* threads: kineto tid -> thread index */
    cs_map tids;
    int ntids;
    int64_t main_tid;
    int64_t main_top_end;
    int64_t span_id;
    int64_t stream_base; /* the base the streamed spans were written with */
    int stream_rank, stream_rank_set;
    int64_t nstreamed;
    int64_t t_lo, t_hi;
    int saw_events, saw_trace_events;
    /* launches: a CUDA runtime call's begin by its correlation id, and the
     * GPU spans written with a correlation id (their launch lead is
     * written at the end: the two come in either order) */
    cs_map launch;
    kt_kl *kl;
    size_t nkl, capKl;
} kt;

static int kt_fail(kt *k, const char *fmt, ...)
{
    if (!k->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->err, sizeof k->err, fmt, ap);
        va_end(ap);
    }
    k->failed = 1;
    return 0; /* stops yajl */
}

/* Out of memory: the message names the file, the resource and what the
 * reader held. */
static int kt_nomem(kt *k)
{
    return kt_fail(
        k, "%s: out of memory (the process's memory limit) with %zu communication records (%.1f MB) kept: not imported",
        k->file, k->nrec, (double)(k->capRec * sizeof(kt_rec)) / 1e6);
}

/* A store write failed: the file and SQLite's reason. */
static int kt_store_fail(kt *k)
{
    return kt_fail(k, "%s: cannot write its store (%s): not imported", k->file, cs_store_bulk_errmsg(k->b));
}

/* µs as JSON writes them ("1669783687464181", "4458676524648.797",
 * "1.5e3") to integer ns, exactly for plain decimals; *ok 0 when the
 * value is beyond what a time can be (|v| over 2^62 ns, 60 digits,
 * 1e300). */
static int64_t kt_us_to_ns(const char *s, size_t n, int *ok)
{
    char b[64];
    *ok = 1;
    if (n >= sizeof b) {
        *ok = 0; /* no time has 64 characters */
        return 0;
    }
    memcpy(b, s, n);
    b[n] = 0;
    if (strpbrk(b, "eE")) {
        double d = strtod(b, NULL) * 1000.0;
        if (!(d > -4.6e18 && d < 4.6e18)) {
            *ok = 0;
            return 0;
        }
        return (int64_t)d;
    }
    int neg = b[0] == '-';
    const char *p = b + neg;
    int64_t ip = 0, frac = 0;
    int nf = 0;
    for (; isdigit((unsigned char)*p); p++) {
        if (ip >= INT64_MAX / 10000) { /* beyond 2^63 ns */
            *ok = 0;
            return 0;
        }
        ip = ip * 10 + (*p - '0');
    }
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            if (nf < 3) {
                frac = frac * 10 + (*p - '0');
                nf++;
            }
    while (nf < 3) {
        frac *= 10;
        nf++;
    }
    int64_t v = ip * 1000 + frac;
    return neg ? -v : v;
}

static int64_t kt_int(const char *s, size_t n)
{
    /* plain integers (nearly all) directly; anything else through strtod */
    size_t i = s[0] == '-';
    int64_t v = 0;
    if (n && n < 19)
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            v = v * 10 + (s[i] - '0');
    if (n && i == n)
        return s[0] == '-' ? -v : v;
    char b[40];
    if (n >= sizeof b)
        n = sizeof b - 1;
    memcpy(b, s, n);
    b[n] = 0;
    if (!strpbrk(b, ".eE"))
        return strtoll(b, NULL, 10); /* saturates */
    double d = strtod(b, NULL);
    return d > 9.2e18 ? INT64_MAX : d < -9.2e18 ? INT64_MIN : (int64_t)d;
}

static void kt_copy(char *dst, size_t len, const unsigned char *s, size_t n)
{
    if (n >= len)
        n = len - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* A whole number from 0 to 2^62 written as JSON digits (a number, or a
 * string of digits): 1 and *v, or 0 (a fraction, a sign, an exponent,
 * letters, too large). */
static int kt_whole(const unsigned char *s, size_t n, int64_t *v)
{
    int64_t x = 0;
    if (n == 0 || n > 19)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || x > (((int64_t)1 << 62) - (s[i] - '0')) / 10)
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 1;
}

/* Where the parser is: the keys of the levels above. */
static int kt_in(const kt *k, int depth, int key)
{
    return k->depth >= depth && k->kid[depth] == key;
}

static int kt_in_event(const kt *k)
{
    return k->depth >= 3 && k->ctype[1] == 'm' && kt_in(k, 1, KK_TRACEEVENTS) && k->ctype[2] == 'a';
}

/* A scalar value: s (text of a number or a string), isnum. */
static int kt_scalar(kt *k, const unsigned char *s, size_t n, int isnum)
{
    if (k->skip)
        return 1;
    int d = k->depth;
    if (d == 1 && k->ctype[1] == 'm') {
        int key = k->kid[1];
        if ((key == KK_BASETIMENANOSECONDS) && isnum) {
            k->base_ns = kt_int((const char *)s, n);
            k->has_base = 1;
            if (k->base_ns < 0 || k->base_ns > KT_MAX_NS)
                return kt_fail(k, "%s: baseTimeNanoseconds %lld is no time", k->file, (long long)k->base_ns);
        } else if (key == KK_SCHEMAVERSION)
            kt_copy(k->info->version, sizeof k->info->version, s, n);
        else if ((key == KK_TRACE_ID) || (key == KK_TRACEID))
            kt_copy(k->info->trace_id, sizeof k->info->trace_id, s, n);
        return 1;
    }
    if (d == 2 && k->ctype[1] == 'm' && kt_in(k, 1, KK_DISTRIBUTEDINFO)) {
        int key = k->kid[2];
        if ((key == KK_RANK) && isnum) {
            int64_t v = kt_int((const char *)s, n);
            if (v < 0 || v > INT32_MAX)
                return kt_fail(k, "%s: distributedInfo.rank %lld is no rank (0 to 2^31-1)", k->file, (long long)v);
            k->rank = (int)v;
            k->has_rank = 1;
        } else if ((key == KK_WORLD_SIZE) && isnum) {
            int64_t v = kt_int((const char *)s, n);
            if (v < 0 || v > INT32_MAX)
                return kt_fail(k, "%s: distributedInfo.world_size %lld is no size (0 to 2^31-1)", k->file,
                               (long long)v);
            k->world_size = (int)v;
        } else if (key == KK_BACKEND)
            kt_copy(k->info->backend, sizeof k->info->backend, s, n);
        else if (key == KK_TRACE_ID)
            kt_copy(k->info->trace_id, sizeof k->info->trace_id, s, n);
        return 1;
    }
    if (k->in_pg && d == 4) {
        int key = k->kid[4];
        if (key == KK_PG_NAME)
            kt_copy(k->cur_pg.name, sizeof k->cur_pg.name, s, n);
        else if (key == KK_PG_DESC)
            kt_copy(k->cur_pg.desc, sizeof k->cur_pg.desc, s, n);
        else if ((key == KK_PG_SIZE) && isnum)
            k->cur_pg.size = (int)kt_int((const char *)s, n);
        return 1;
    }
    if (k->in_pg && d == 5 && isnum && (k->kid[4] == KK_RANKS)) {
        if (CS_VEC_RESERVE(k->cur_pg.ranks, k->cur_pg.capRanks, k->cur_pg.nranks + 1) != 0)
            return kt_nomem(k);
        k->cur_pg.ranks[k->cur_pg.nranks++] = (int)kt_int((const char *)s, n);
        return 1;
    }
    if (!kt_in_event(k))
        return 1;
    kt_event *e = &k->ev;
    if (d == 3) {
        int key = k->kid[3];
        switch (key) {
        case KK_PH: kt_copy(e->ph, sizeof e->ph, s, n); break;
        case KK_PID: e->pid = isnum ? kt_int((const char *)s, n) : -2; break;
        case KK_CAT: kt_copy(e->cat, sizeof e->cat, s, n); break;
        case KK_NAME: kt_copy(e->name, sizeof e->name, s, n); break;
        case KK_TS: {
            int ok = 0;
            if (isnum)
                e->ts = kt_us_to_ns((const char *)s, n, &ok);
            e->has_ts = 1;
            if (!ok)
                e->bad |= KT_BAD_TS;
            break;
        }
        case KK_TID:
            if (isnum)
                e->tid = kt_int((const char *)s, n);
            else {
                /* "stream 7" or a thread name: its digits, else none */
                size_t i = 0;
                while (i < n && !isdigit(s[i]))
                    i++;
                e->tid = i < n ? kt_int((const char *)s + i, n - i) : -2;
            }
            break;
        case KK_DUR: {
            int ok = 0;
            if (isnum)
                e->dur = kt_us_to_ns((const char *)s, n, &ok);
            e->has_dur = 1;
            if (!ok)
                e->bad |= KT_BAD_DUR;
            break;
        }
        }
        return 1;
    }
    if (d == 6 && kt_in(k, 3, KK_ARGS) && kt_in(k, 4, KK_INPUT_DIMS) && isnum && e->ndims_lists == 1) {
        e->dims_prod = (e->has_dims ? e->dims_prod : 1) * kt_int((const char *)s, n);
        e->has_dims = 1;
        return 1;
    }
    if (d == 5 && kt_in(k, 3, KK_ARGS) && kt_in(k, 4, KK_CONCRETE_INPUTS)) {
        /* c10d::send / c10d::recv_ (gloo): ["", "", "PEER", "TAG"] */
        int i = e->nconc++;
        if ((i == 2 || i == 3) && n > 0 && n < 12) {
            int digits = 1;
            for (size_t q = 0; q < n; q++)
                digits &= isdigit(s[q]) != 0;
            if (digits)
                *(i == 2 ? &e->conc_peer : &e->conc_tag) = kt_int((const char *)s, n);
        }
        return 1;
    }
    if (d == 5 && kt_in(k, 3, KK_ARGS) && kt_in(k, 4, KK_INPUT_TYPE) && !isnum && !e->in_type[0]) {
        kt_copy(e->in_type, sizeof e->in_type, s, n);
        return 1;
    }
    if (d == 4 && kt_in(k, 3, KK_ARGS)) {
        int key = k->kid[4];
        /* the values a collective is matched and sized by: whole numbers,
         * or the record is left out (no 0 stands in for a bad one) */
        if (key == KK_SEQ || key == KK_IN_MSG_NELEMS || key == KK_OUT_MSG_NELEMS) {
            int64_t v = -1;
            if (!kt_whole(s, n, &v)) {
                e->bad |= key == KK_SEQ ? KT_BAD_SEQ : key == KK_IN_MSG_NELEMS ? KT_BAD_IN : KT_BAD_OUT;
                v = -1;
            }
            *(key == KK_SEQ ? &e->seq : key == KK_IN_MSG_NELEMS ? &e->in_nelems : &e->out_nelems) = v;
            return 1;
        }
        if (isnum) {
            int64_t v = kt_int((const char *)s, n);
            if (key == KK_EXTERNAL_ID)
                e->ext = v;
            else if (key == KK_CORRELATION)
                e->corr = v;
            else if (key == KK_GROUP_SIZE)
                e->group_size = v;
            else if (key == KK_SRC_RANK)
                e->src = v;
            else if (key == KK_DST_RANK)
                e->dst = v;
            else if (key == KK_STREAM)
                e->stream = v;
            else if (key == KK_PROCESS_GROUP_NAME)
                kt_copy(e->pg_name, sizeof e->pg_name, s, n);
        } else {
            if (key == KK_COLLECTIVE_NAME)
                kt_copy(e->coll, sizeof e->coll, s, n);
            else if (key == KK_DTYPE)
                kt_copy(e->dtype, sizeof e->dtype, s, n);
            else if (key == KK_PROCESS_GROUP_NAME)
                kt_copy(e->pg_name, sizeof e->pg_name, s, n);
            else if (key == KK_PROCESS_GROUP_DESCRIPTION)
                kt_copy(e->pg_desc, sizeof e->pg_desc, s, n);
            else if (key == KK_PROCESS_GROUP_RANKS)
                kt_copy(e->pg_ranks, sizeof e->pg_ranks, s, n);
        }
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return kt_scalar(ctx, (const unsigned char *)"", 0, 0);
}
static int cb_bool(void *ctx, int v)
{
    return kt_scalar(ctx, (const unsigned char *)(v ? "1" : "0"), 1, 1);
}
static int cb_number(void *ctx, const char *s, size_t n)
{
    return kt_scalar(ctx, (const unsigned char *)s, n, 1);
}
static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    return kt_scalar(ctx, s, n, 0);
}

static int kt_push(kt *k, char type)
{
    if (k->skip) {
        k->depth++;
        return 1;
    }
    if (k->depth + 1 >= KT_MAXDEPTH) {
        k->skip = k->depth + 1; /* deeper than anything read: skipped */
        k->depth++;
        return 1;
    }
    k->depth++;
    k->ctype[k->depth] = type;
    k->kid[k->depth] = KK_OTHER;
    if (k->depth == 2 && type == 'a' && k->ctype[1] == 'm' && kt_in(k, 1, KK_TRACEEVENTS))
        k->saw_trace_events = 1;
    /* values inside args that are arrays or maps: not read, but for the
     * first input's dims and type ([[1024]], ["float"]) */
    if (k->depth >= 5 && kt_in_event(k) && kt_in(k, 3, KK_ARGS)) {
        int dims = kt_in(k, 4, KK_INPUT_DIMS), type = kt_in(k, 4, KK_INPUT_TYPE) || kt_in(k, 4, KK_CONCRETE_INPUTS);
        if (!((dims && k->depth <= 6) || (type && k->depth == 5)))
            k->skip = k->depth;
        else if (dims && k->depth == 6)
            k->ev.ndims_lists++;
    }
    if (k->depth == 4 && type == 'm' && kt_in_event(k) && kt_in(k, 3, KK_ARGS))
        k->ev.has_args = 1;
    if (k->depth == 3 && type == 'm' && kt_in_event(k)) {
        memset(&k->ev, 0, sizeof k->ev);
        k->ev.ext = k->ev.corr = k->ev.seq = k->ev.src = k->ev.dst = k->ev.stream = -1;
        k->ev.in_nelems = k->ev.out_nelems = k->ev.group_size = -1;
        k->ev.tid = k->ev.pid = -1;
        k->ev.conc_peer = k->ev.conc_tag = -1;
    }
    if (k->depth == 4 && type == 'm' && k->ctype[1] == 'm' && kt_in(k, 1, KK_DISTRIBUTEDINFO) &&
        kt_in(k, 2, KK_PG_CONFIG)) {
        memset(&k->cur_pg, 0, sizeof k->cur_pg);
        k->in_pg = 1;
    }
    return 1;
}

static int cb_start_map(void *ctx)
{
    return kt_push(ctx, 'm');
}
static int cb_start_array(void *ctx)
{
    return kt_push(ctx, 'a');
}

static int cb_key(void *ctx, const unsigned char *s, size_t n)
{
    kt *k = ctx;
    if (!k->skip && k->depth < KT_MAXDEPTH)
        k->kid[k->depth] = kt_key_id(s, n);
    return 1;
}

static int kt_event_done(kt *k);

static int kt_pop(kt *k)
{
    int d = k->depth;
    if (k->skip) {
        if (d == k->skip)
            k->skip = 0;
        k->depth--;
        return 1;
    }
    if (d == 3 && k->ctype[3] == 'm' && kt_in_event(k)) {
        k->depth--;
        return kt_event_done(k);
    }
    if (d == 4 && k->in_pg) {
        k->in_pg = 0;
        if (CS_VEC_RESERVE(k->pgs, k->capPg, k->npg + 1) != 0)
            return kt_nomem(k);
        k->pgs[k->npg++] = k->cur_pg;
        memset(&k->cur_pg, 0, sizeof k->cur_pg);
    }
    k->depth--;
    return 1;
}

static int cb_end(void *ctx)
{
    return kt_pop(ctx);
}

static const yajl_callbacks kt_callbacks = { cb_null,      cb_bool, NULL,   NULL,           cb_number, cb_string,
                                             cb_start_map, cb_key,  cb_end, cb_start_array, cb_end };

/* ---- events ---- */

static int kt_thread(kt *k, int64_t tid)
{
    int64_t ix;
    uint64_t key = (uint64_t)tid;
    if (key == UINT64_MAX)
        key--;
    if (cs_map_get(&k->tids, key, &ix))
        return (int)ix;
    ix = k->ntids++;
    if (cs_map_put(&k->tids, key, ix) != 0)
        kt_nomem(k);
    return (int)ix;
}

static int kt_keep(kt *k, const kt_rec *r)
{
    if (CS_VEC_RESERVE(k->recs, k->capRec, k->nrec + 1) != 0)
        return kt_nomem(k);
    k->recs[k->nrec++] = *r;
    return 1;
}

/* Index of the group called name (adding it from the record's args when
 * distributedInfo did not list it), or -1. */
static int kt_group(kt *k, const kt_event *e)
{
    if (!e->pg_name[0])
        return -1;
    for (size_t i = 0; i < k->npg; i++)
        if (strcmp(k->pgs[i].name, e->pg_name) == 0)
            return (int)i;
    if (!e->pg_ranks[0])
        return -1;
    kt_pg g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", e->pg_name);
    snprintf(g.desc, sizeof g.desc, "%s", e->pg_desc);
    for (const char *p = e->pg_ranks; *p;) {
        if (isdigit((unsigned char)*p)) {
            char *end;
            long v = strtol(p, &end, 10);
            if (CS_VEC_RESERVE(g.ranks, g.capRanks, g.nranks + 1) != 0) {
                free(g.ranks);
                kt_nomem(k);
                return -1;
            }
            g.ranks[g.nranks++] = (int)v;
            p = end;
        } else
            p++;
    }
    g.size = (int)g.nranks;
    if (CS_VEC_RESERVE(k->pgs, k->capPg, k->npg + 1) != 0) {
        free(g.ranks);
        kt_nomem(k);
        return -1;
    }
    k->pgs[k->npg++] = g;
    return (int)k->npg - 1;
}

/* Write x (a record of kind, enum cs_import_bad_kind) with base added to
 * its times; one beyond what the store holds is counted and left out. */
static int kt_write_span(kt *k, cs_span *x, int64_t corr, int64_t base, int kind)
{
    if (base + x->end_ns > KT_MAX_NS || (x->gpu_begin_ns && base + x->gpu_end_ns > KT_MAX_NS)) {
        k->info->bad[kind][CS_IMPORT_BW_TS]++;
        return 1;
    }
    x->id = ++k->span_id;
    x->begin_ns += base;
    x->end_ns += base;
    if (x->gpu_begin_ns) {
        x->gpu_begin_ns += base;
        x->gpu_end_ns += base;
    }
    if (x->begin_ns < k->t_lo)
        k->t_lo = x->begin_ns;
    if (x->end_ns > k->t_hi)
        k->t_hi = x->end_ns;
    k->info->spans++;
    if (cs_store_bulk_span_gpu(k->b, x, corr) != 0)
        return kt_store_fail(k);
    return 1;
}

static void kt_span_init(cs_span *x, int rank)
{
    memset(x, 0, sizeof *x);
    x->rank = rank;
    x->seq = -1;
    x->peer = x->peer2 = x->tag = -1;
}

/* Which kind of record e is, of those the reader keeps (enum
 * cs_import_bad_kind), or -1 for the events it does not read. */
static int kt_kind_of(const kt *k, const kt_event *e)
{
    if (!strncmp(e->name, "ProfilerStep#", 13) && strcmp(e->cat, "gpu_user_annotation") != 0)
        return CS_IMPORT_BK_STEP;
    int gpu_cat = !strcmp(e->cat, "kernel");
    if (gpu_cat && (!strncmp(e->name, "ncclKernel_", 11) || !strncmp(e->name, "ncclDevKernel_", 14)))
        return CS_IMPORT_BK_KERNEL;
    if (!strcmp(e->cat, "cpu_op")) {
        if (!strcmp(e->name, "record_param_comms"))
            return CS_IMPORT_BK_COMM;
        if (k->main_tid < 0 || e->tid != k->main_tid)
            return -1; /* not the main thread's */
        return !strncmp(e->name, "c10d::", 6) ? CS_IMPORT_BK_COMM : CS_IMPORT_BK_COMPUTE;
    }
    if (!strcmp(e->cat, "user_annotation") && !strncmp(e->name, "gloo:", 5))
        return CS_IMPORT_BK_COMM;
    if (gpu_cat || !strcmp(e->cat, "gpu_memcpy") || !strcmp(e->cat, "gpu_memset"))
        return CS_IMPORT_BK_COMPUTE;
    return -1;
}

static int kt_ts_ok(const kt_event *e)
{
    return e->has_ts && !(e->bad & KT_BAD_TS) && e->ts >= 0 && e->ts <= KT_MAX_NS;
}

static int kt_dur_ok(const kt_event *e)
{
    return e->has_dur && !(e->bad & KT_BAD_DUR) && e->dur >= 0 && e->dur <= KT_MAX_NS;
}

/* Is e's every value one the reader can use? Else it is counted, by
 * kind and fault, and left out. */
static int kt_event_ok(kt *k, const kt_event *e, int kind)
{
    int why = -1;
    if (!kt_ts_ok(e))
        why = CS_IMPORT_BW_TS;
    else if (!kt_dur_ok(e))
        why = CS_IMPORT_BW_DUR;
    else if (kind == CS_IMPORT_BK_COMM && !strcmp(e->name, "record_param_comms")) {
        if (!e->has_args)
            why = CS_IMPORT_BW_ARGS;
        else if (e->bad & KT_BAD_SEQ)
            why = CS_IMPORT_BW_SEQ;
        else if ((e->bad & KT_BAD_IN) || (e->in_nelems < 0 && (e->bad & KT_BAD_OUT)))
            why = CS_IMPORT_BW_NELEMS;
    }
    if (why < 0)
        return 1;
    k->info->bad[kind][why]++;
    return 0;
}

static int kt_event_done(kt *k)
{
    kt_event *e = &k->ev;
    k->saw_events = 1;
    if (strcmp(e->ph, "X") != 0)
        return 1;
    /* the main thread: tid = pid, named by the first such event */
    if (k->main_tid < 0 && e->pid >= 0 && e->tid == e->pid && kt_ts_ok(e) && kt_dur_ok(e))
        k->main_tid = e->tid;
    if ((!strcmp(e->cat, "cuda_runtime") || !strcmp(e->cat, "cuda_driver")) && e->corr > 0 && kt_ts_ok(e)) {
        /* a launch (cudaLaunchKernel, cudaMemcpyAsync, ...): a kernel of
         * its correlation id cannot start before it began */
        if (cs_map_put(&k->launch, (uint64_t)e->corr, e->ts) != 0)
            return kt_fail(k, "%s: out of memory", k->file);
        return 1;
    }
    int kind = kt_kind_of(k, e);
    if (kind < 0 || !kt_event_ok(k, e, kind))
        return 1;
    int64_t dur = e->dur;
    kt_rec r;
    memset(&r, 0, sizeof r);
    r.ts = e->ts;
    r.dur = dur;
    r.ext = e->ext;
    r.seq = e->seq;
    r.stream = e->stream;
    r.nelems = e->in_nelems >= 0 ? e->in_nelems : e->out_nelems;
    r.tid = e->tid;
    r.peer_global = -1;
    r.pg = -1;
    int gpu_cat = !strcmp(e->cat, "kernel");
    if (!strncmp(e->name, "ProfilerStep#", 13) && strcmp(e->cat, "gpu_user_annotation") != 0) {
        r.kind = KT_STEP;
        r.nelems = strtoll(e->name + 13, NULL, 10);
        r.tix = kt_thread(k, e->tid);
        return kt_keep(k, &r);
    }
    if (!strcmp(e->cat, "cpu_op") && !strcmp(e->name, "record_param_comms")) {
        r.kind = KT_RPC;
        r.coll = kt_coll_of(e->coll);
        if (r.coll == KT_C_NONE) {
            k->info->dropped_rpc++; /* init, wait, coalesced bookkeeping */
            return 1;
        }
        int sz = 0;
        r.dtype = kt_dtype(e->dtype, &sz);
        if (r.nelems >= 0 && sz && r.nelems > ((((int64_t)1 << 62) - 1) / sz)) {
            k->info->bad[CS_IMPORT_BK_COMM][CS_IMPORT_BW_NELEMS]++; /* bytes beyond 2^62 */
            return 1;
        }
        r.pg = kt_group(k, e);
        r.peer_global = r.coll == KT_C_SEND ? e->dst : r.coll == KT_C_RECV ? e->src : -1;
        if (r.nelems >= 0 && sz)
            r.nelems = r.nelems * sz | (int64_t)1 << 62; /* bytes known: marked */
        r.tix = kt_thread(k, e->tid);
        return kt_keep(k, &r);
    }
    if (gpu_cat && (!strncmp(e->name, "ncclKernel_", 11) || !strncmp(e->name, "ncclDevKernel_", 14))) {
        r.kind = KT_NCCLK;
        r.coll = kt_coll_of(e->name + (e->name[4] == 'K' ? 11 : 14));
        if (r.stream < 0)
            r.stream = e->tid;
        k->info->kernels++;
        return kt_keep(k, &r);
    }
    if (!strcmp(e->cat, "user_annotation") && !strncmp(e->name, "gloo:", 5)) {
        r.kind = KT_GLOO;
        r.coll = kt_coll_of(e->name + 5);
        if (r.coll == KT_C_NONE)
            return 1;
        if (e->has_dims && e->in_type[0]) { /* the size, for traces with no record_param_comms */
            static const struct {
                const char *t;
                int size, dtype;
            } ty[] = { { "float", 4, 0 }, { "double", 8, 0 },   { "c10::Half", 2, 0 },     { "c10::BFloat16", 2, 0 },
                       { "int", 4, 0 },   { "long int", 8, 0 }, { "unsigned char", 1, 0 }, { "bool", 1, 0 } };
            for (size_t i = 0; i < sizeof ty / sizeof ty[0]; i++)
                if (!strcmp(e->in_type, ty[i].t))
                    r.nelems = (e->dims_prod * ty[i].size) | (int64_t)1 << 62;
        }
        r.tix = kt_thread(k, e->tid);
        return kt_keep(k, &r);
    }
    if (!k->stream_rank_set) {
        k->stream_rank = k->has_rank ? k->rank : -1;
        k->stream_rank_set = 1;
    }
    int rank = k->stream_rank;
    cs_span x;
    int mem_cat = !strcmp(e->cat, "gpu_memcpy") || !strcmp(e->cat, "gpu_memset");
    if (gpu_cat || mem_cat) { /* a kernel that is no communication, a copy or a set */
        kt_span_init(&x, rank);
        x.op = gpu_cat ? CS_OP_compute_gpu : CS_OP_memory_gpu;
        /* on a lane of its own per GPU stream: thread 1000 + the stream */
        int64_t stream = e->stream >= 0 ? e->stream : e->tid;
        x.tid = stream >= 0 && stream < 1000000 ? 1000 + (int)stream : 1000 + kt_thread(k, e->tid);
        x.begin_ns = e->ts;
        x.end_ns = e->ts + dur;
        k->info->kernels += gpu_cat;
        k->info->compute++;
        k->nstreamed++;
        int rc = kt_write_span(k, &x, e->corr > 0 ? e->corr : 0, k->stream_base, CS_IMPORT_BK_COMPUTE);
        /* its name (x.id stays 0 when the span was not written) */
        if (rc == 1 && x.id && e->name[0] && cs_store_bulk_kernel_name(k->b, x.id, e->name) != 0)
            return kt_store_fail(k);
        if (rc == 1 && x.id && e->corr > 0) {
            if (CS_VEC_RESERVE(k->kl, k->capKl, k->nkl + 1) != 0)
                return kt_fail(k, "%s: out of memory", k->file);
            k->kl[k->nkl++] = (kt_kl){ e->corr, x.id, e->ts };
        }
        return rc;
    }
    if (!strcmp(e->cat, "cpu_op") && k->main_tid >= 0 && e->tid == k->main_tid) {
        if (e->ts < k->main_top_end)
            return 1; /* nested in the top-level op before it */
        k->main_top_end = e->ts + dur;
        if (!strncmp(e->name, "c10d::", 6)) {
            /* a collective's own wrapper: communication, not compute; a
             * send's or receive's names its peer and tag (gloo traces
             * have no record_param_comms to say it) */
            int snd = !strcmp(e->name, "c10d::send"), rcv = !strcmp(e->name, "c10d::recv_");
            if ((snd || rcv) && e->conc_peer >= 0) {
                kt_rec p;
                memset(&p, 0, sizeof p);
                p.kind = KT_C10DP2P;
                p.coll = snd ? KT_C_SEND : KT_C_RECV;
                p.ts = e->ts;
                p.dur = dur;
                p.tid = e->tid;
                p.ext = -1;
                p.nelems = -1;
                p.peer_global = e->conc_peer;
                p.seq = e->conc_tag;
                p.pg = -1;
                return kt_keep(k, &p);
            }
            return 1;
        }
        kt_span_init(&x, rank);
        x.op = CS_OP_compute_cpu;
        x.tid = kt_thread(k, e->tid);
        x.begin_ns = e->ts;
        x.end_ns = e->ts + dur;
        k->info->compute++;
        k->nstreamed++;
        return kt_write_span(k, &x, 0, k->stream_base, CS_IMPORT_BK_COMPUTE);
    }
    return 1;
}

/* ---- the end of the file: communication spans ---- */

static int kt_by_ts(const void *a, const void *b)
{
    const kt_rec *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static uint64_t kt_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The job-wide id of a group: from its name and members, the same in
 * every rank's file. */
static int64_t kt_group_id(const kt_pg *g)
{
    uint64_t h = kt_fnv(1469598103934665603ull, "c10d:", 5);
    h = kt_fnv(h, g->name, strlen(g->name));
    for (size_t i = 0; i < g->nranks; i++)
        h = kt_fnv(h, &g->ranks[i], sizeof g->ranks[i]);
    int64_t id = (int64_t)(h & 0x3fffffffffffffffull);
    return id ? id : 1;
}

static int kt_group_rank(const kt_pg *g, int rank)
{
    for (size_t i = 0; i < g->nranks; i++)
        if (g->ranks[i] == rank)
            return (int)i;
    return -1;
}

static int kt_finish(kt *k)
{
    cs_import_rank_info *in = k->info;
    int rank = k->rank;
    /* the default group when the file names none: every rank */
    int dflt = -1;
    for (size_t i = 0; i < k->npg; i++)
        if (!strcmp(k->pgs[i].name, "0") || !strcmp(k->pgs[i].desc, "default_pg")) {
            dflt = (int)i;
            break;
        }
    if (dflt < 0 && k->world_size > 0) {
        kt_pg g;
        memset(&g, 0, sizeof g);
        snprintf(g.name, sizeof g.name, "0");
        snprintf(g.desc, sizeof g.desc, "default_pg");
        g.size = k->world_size;
        for (int r = 0; r < k->world_size; r++) {
            if (CS_VEC_RESERVE(g.ranks, g.capRanks, g.nranks + 1) != 0)
                return kt_nomem(k);
            g.ranks[g.nranks++] = r;
        }
        if (CS_VEC_RESERVE(k->pgs, k->capPg, k->npg + 1) != 0) {
            free(g.ranks);
            return kt_nomem(k);
        }
        k->pgs[k->npg++] = g;
        dflt = (int)k->npg - 1;
    }
    /* the groups this rank is in */
    for (size_t i = 0; i < k->npg; i++) {
        const kt_pg *g = &k->pgs[i];
        int cr = kt_group_rank(g, rank);
        if (cr < 0)
            continue;
        char name[160];
        if (g->desc[0] && strcmp(g->desc, "undefined") != 0)
            snprintf(name, sizeof name, "%s", g->desc);
        else
            snprintf(name, sizeof name, "pg %s", g->name);
        /* made: its place in pg_config, the same list on every rank (a
         * trace has no creation times), so that the groups of one kind
         * are made at the same place of each member's sequence, as the
         * layout's families need (an_layout.c) */
        cs_store_bulk_comm_def c = { kt_group_id(g), rank,    cr,  g->size > 0 ? g->size : (int)g->nranks,
                                     (int64_t)i,     "other", name };
        if (cs_store_bulk_comm_named(k->b, &c) != 0)
            return kt_store_fail(k);
    }
    if (k->nrec)
        qsort(k->recs, k->nrec, sizeof *k->recs, kt_by_ts);
    /* NCCL kernels by External id; gloo annotations of each collective */
    cs_map kern;
    memset(&kern, 0, sizeof kern);
    int nccl = !strcmp(in->backend, "nccl"), gloo = 0;
    for (size_t i = 0; i < k->nrec; i++) {
        if (k->recs[i].kind == KT_NCCLK) {
            nccl = 1;
            if (k->recs[i].ext >= 0 && cs_map_put(&kern, (uint64_t)k->recs[i].ext, (int64_t)i) != 0) {
                cs_map_free(&kern);
                return kt_nomem(k);
            }
        } else if (k->recs[i].kind == KT_GLOO)
            gloo = 1;
    }
    /* gloo: the n-th gloo:KIND annotation is the n-th record_param_comms of
     * that kind; the annotation gives the time (the work itself), the
     * record the group, sequence and size. */
    size_t next[KT_C_N] = { 0 };
    int ok = 1, any_rpc = 0;
    for (size_t i = 0; i < k->nrec && !any_rpc; i++)
        any_rpc = k->recs[i].kind == KT_RPC;
    int64_t *pool = NULL; /* gloo worker threads, in tid order */
    size_t npool = 0, capPool = 0, per = 0;
    int *pool_pg = NULL, npg_in = 0;
    if (gloo && !any_rpc) {
        /* No record_param_comms (PyTorch's gloo CPU runs): a group's work runs
         * on its own pool of worker threads, made with the group. The pools,
         * in tid order, are the rank's groups in the order they were made
         * (pg_config's), when the threads split evenly among them. */
        for (size_t i = 0; i < k->nrec; i++) {
            const kt_rec *r = &k->recs[i];
            if (r->kind != KT_GLOO || r->tid == k->main_tid)
                continue;
            size_t j = 0;
            while (j < npool && pool[j] != r->tid)
                j++;
            if (j == npool) {
                if (CS_VEC_RESERVE(pool, capPool, npool + 1) != 0) {
                    cs_map_free(&kern);
                    return kt_nomem(k);
                }
                pool[npool++] = r->tid;
            }
        }
        for (size_t a = 1; a < npool; a++)
            for (size_t b = a; b > 0 && pool[b - 1] > pool[b]; b--) {
                int64_t t = pool[b];
                pool[b] = pool[b - 1];
                pool[b - 1] = t;
            }
        pool_pg = calloc(k->npg ? k->npg : 1, sizeof *pool_pg);
        if (!pool_pg) {
            free(pool);
            cs_map_free(&kern);
            return kt_nomem(k);
        }
        for (size_t i = 0; i < k->npg; i++)
            if (kt_group_rank(&k->pgs[i], rank) >= 0)
                pool_pg[npg_in++] = (int)i;
        for (int a = 1; a < npg_in; a++) /* by pg_name, numerically: creation order */
            for (int b = a;
                 b > 0 && strtol(k->pgs[pool_pg[b - 1]].name, NULL, 10) > strtol(k->pgs[pool_pg[b]].name, NULL, 10);
                 b--) {
                int t = pool_pg[b];
                pool_pg[b] = pool_pg[b - 1];
                pool_pg[b - 1] = t;
            }
        per = npg_in > 0 && npool % (size_t)npg_in == 0 ? npool / (size_t)npg_in : 0;
    }
    for (size_t i = 0; i < k->nrec && ok; i++) {
        kt_rec *r = &k->recs[i];
        cs_span x;
        kt_span_init(&x, rank);
        if (r->kind == KT_STEP) {
            x.op = CS_OP_ProfilerStep;
            x.tid = r->tix;
            x.count = r->nelems;
            x.begin_ns = r->ts;
            x.end_ns = r->ts + r->dur;
            in->steps++;
            ok = kt_write_span(k, &x, 0, k->base_ns, CS_IMPORT_BK_STEP);
            continue;
        }
        const kt_rec *args = NULL, *p2p = NULL;
        if (r->kind == KT_C10DP2P)
            continue;
        if (r->kind == KT_GLOO) {
            size_t *n = &next[r->coll];
            while (*n < k->nrec && (k->recs[*n].kind != KT_RPC || k->recs[*n].coll != r->coll || k->recs[*n].paired))
                (*n)++;
            if (*n < k->nrec) {
                k->recs[*n].paired = 1;
                args = &k->recs[*n];
            }
        } else if (r->kind == KT_RPC && !gloo)
            args = r;
        else {
            if (r->kind == KT_RPC && gloo && !r->paired)
                in->dropped_rpc++; /* counted when no annotation claims it */
            continue;
        }
        int coll = r->coll;
        if (r->kind == KT_GLOO && !args && (coll == KT_C_SEND || coll == KT_C_RECV)) {
            /* its c10d::send / c10d::recv_: on its thread, around its start */
            for (size_t q = 0; q < k->nrec; q++) {
                kt_rec *c = &k->recs[q];
                if (c->kind == KT_C10DP2P && !c->paired && c->coll == coll && c->tid == r->tid && c->ts <= r->ts &&
                    r->ts <= c->ts + c->dur) {
                    c->paired = 1;
                    p2p = c;
                    break;
                }
            }
        }
        int pg = args && args->pg >= 0 ? args->pg : dflt;
        if (!args && per)
            for (size_t j = 0; j < npool; j++)
                if (pool[j] == r->tid)
                    pg = pool_pg[j / per];
        const kt_pg *g = pg >= 0 ? &k->pgs[pg] : NULL;
        x.op = (nccl ? kt_op_nccl : kt_op_c10d)[coll];
        x.tid = r->tix;
        x.begin_ns = r->ts;
        x.end_ns = r->ts + r->dur;
        if (g && kt_group_rank(g, rank) >= 0) {
            x.comm = kt_group_id(g);
            x.flags |= CS_F_HAS_COMM;
        }
        if (!args && r->nelems >= 0 && (r->nelems >> 62 & 1))
            x.bytes = r->nelems & (((int64_t)1 << 62) - 1);
        if (args) {
            if (args->nelems >= 0 && (args->nelems >> 62 & 1))
                x.bytes = args->nelems & (((int64_t)1 << 62) - 1);
            x.dtype = args->dtype;
            if (args->seq >= 0 && coll != KT_C_SEND && coll != KT_C_RECV) {
                x.seq = args->seq;
                x.flags |= CS_F_HAS_SEQ;
            }
            if (args->peer_global >= 0 && g) {
                int pr = kt_group_rank(g, (int)args->peer_global);
                x.peer = pr >= 0 ? pr : (int)args->peer_global;
                x.flags |= CS_F_HAS_PEER;
            }
        }
        if (p2p) { /* the peer is a rank of the group, as MPI's */
            x.peer = (int)p2p->peer_global;
            x.flags |= CS_F_HAS_PEER;
            if (p2p->seq >= 0 && p2p->seq <= INT32_MAX)
                x.tag = (int)p2p->seq;
        }
        int64_t kx, corr = 0;
        if (args && args->ext >= 0 && cs_map_get(&kern, (uint64_t)args->ext, &kx)) {
            const kt_rec *kr = &k->recs[kx];
            x.gpu_begin_ns = kr->ts;
            x.gpu_end_ns = kr->ts + kr->dur;
            x.stream = kr->stream;
            corr = args->ext;
            in->gpu_linked++;
        }
        if (coll == KT_C_SEND || coll == KT_C_RECV)
            in->p2p++;
        else
            in->collectives++;
        ok = kt_write_span(k, &x, corr, k->base_ns, CS_IMPORT_BK_COMM);
    }
    free(pool);
    free(pool_pg);
    cs_map_free(&kern);
    return ok;
}

/* ---- the file ---- */

int cs_import_kineto_accepts(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && !strcmp(path + n - 5, ".json")) || (n > 8 && !strcmp(path + n - 8, ".json.gz"));
}

int cs_import_rank_from_name(const char *path, const char *re, int *rank)
{
    regex_t rx;
    if (regcomp(&rx, re, REG_EXTENDED) != 0)
        return -1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    regmatch_t m[2];
    int rc = -1;
    if (regexec(&rx, base, 2, m, 0) == 0) {
        regmatch_t *g = m[1].rm_so >= 0 ? &m[1] : &m[0];
        char num[32];
        size_t len = (size_t)(g->rm_eo - g->rm_so);
        const char *p = base + g->rm_so;
        while (len && !isdigit((unsigned char)*p))
            p++, len--;
        if (len && len < sizeof num) {
            memcpy(num, p, len);
            num[len] = 0;
            char *end;
            long v = strtol(num, &end, 10);
            if (end != num && v >= 0 && v <= INT32_MAX) {
                *rank = (int)v;
                rc = 0;
            }
        }
    }
    regfree(&rx);
    return rc;
}

/* baseTimeNanoseconds, which Kineto writes at the end of the file: read
 * from the file's last 64 KiB (fd, a regular file of size bytes) when it
 * is plain JSON. */
static void kt_peek_base(kt *k, int fd, int64_t size)
{
    char buf[65536 + 1];
    int64_t from = size > 65536 ? size - 65536 : 0;
    ssize_t got = pread(fd, buf, sizeof buf - 1, (off_t)from);
    if (got <= 0)
        return;
    size_t n = (size_t)got;
    buf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!buf[i])
            buf[i] = ' ';
    char *p = strstr(buf, "\"baseTimeNanoseconds\"");
    if (p && (p = strchr(p, ':'))) {
        long long v = strtoll(p + 1, NULL, 10);
        if (v >= 0 && v <= KT_MAX_NS) { /* else the parser says so */
            k->base_ns = v;
            k->has_base = 1;
        }
    }
}

int cs_import_kineto_read(const char *file, const char *db_path, const cs_import_opts *o, cs_import_rank_info *info,
                          char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    info->rank = -1;
    kt *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "%s: out of memory (the process's memory limit): not imported", file);
        return CS_IMPORT_FAILED;
    }
    k->file = file;
    k->o = o;
    k->info = info;
    k->main_tid = -1;
    k->t_lo = INT64_MAX;
    k->t_hi = INT64_MIN;
    int status = CS_IMPORT_FAILED;
    unsigned char *buf = NULL;
    gzFile gz = NULL;
    yajl_handle h = NULL;
    size_t n = strlen(file);
    int gzipped = n > 3 && !strcmp(file + n - 3, ".gz");
    /* opened without waiting (a FIFO or a device would block), and read
     * only when it is a regular file */
    struct stat sb;
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open it: %s", file, strerror(errno));
        free(k);
        return CS_IMPORT_FAILED;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file: not read", file);
        close(fd);
        free(k);
        return CS_IMPORT_FAILED;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!gzipped)
        kt_peek_base(k, fd, (int64_t)sb.st_size);
    k->stream_base = k->base_ns;
    /* the rank a name gives is used until distributedInfo says otherwise */
    int name_rank = -1;
    if (o && o->rank_regex && cs_import_rank_from_name(file, o->rank_regex, &name_rank) == 0) {
        k->rank = name_rank;
        k->has_rank = 1;
    }
    if (cs_store_create(db_path, &k->st, err, errlen) != 0)
        goto out;
    if (!(k->b = cs_store_bulk_begin(k->st, err, errlen)))
        goto out;
    gz = gzdopen(fd, "rb");
    if (!gz) {
        snprintf(err, errlen, "%s: out of memory (opening it)", file);
        goto out;
    }
    fd = -1; /* gzclose closes it */
    gzbuffer(gz, 1 << 18);
    h = yajl_alloc(&kt_callbacks, NULL, k);
    if (!h) {
        snprintf(err, errlen, "%s: out of memory (the process's memory limit): not imported", file);
        goto out;
    }
    yajl_config(h, yajl_allow_trailing_garbage, 1);
    buf = malloc(1 << 18);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory (the process's memory limit): not imported", file);
        goto out;
    }
    int first = 1, gzerr = 0;
    for (;;) {
        int rd = gzread(gz, buf, 1 << 18);
        if (rd < 0) {
            gzerr = 1;
            break;
        }
        if (rd == 0) {
            int zn = Z_OK;
            gzerror(gz, &zn);
            gzerr = zn != Z_OK && zn != Z_STREAM_END; /* a gzip stream cut short */
            break;
        }
        if (first) {
            first = 0;
            int i = 0;
            while (i < rd && isspace(buf[i]))
                i++;
            if (i < rd && buf[i] != '{') {
                snprintf(err, errlen, "%s: not a PyTorch profiler trace (not JSON: it starts with '%c')", file,
                         isprint(buf[i]) ? buf[i] : '?');
                status = CS_IMPORT_NOT_JSON;
                goto out;
            }
        }
        info->bytes_read += rd;
        yajl_status ys = yajl_parse(h, buf, (size_t)rd);
        if (k->failed) {
            snprintf(err, errlen, "%s", k->err);
            goto out;
        }
        if (ys != yajl_status_ok) {
            unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
            for (size_t i = msg ? strlen((char *)msg) : 0; i > 0 && (msg[i - 1] == '\n' || msg[i - 1] == '.'); i--)
                msg[i - 1] = 0;
            snprintf(err, errlen, "%s: not valid JSON near byte %lld (%s)", file,
                     (long long)(info->bytes_read - rd + (long long)yajl_get_bytes_consumed(h)),
                     msg ? (const char *)msg : "parse error");
            if (msg)
                yajl_free_error(h, msg);
            status = CS_IMPORT_NOT_JSON;
            goto out;
        }
    }
    if (gzerr) {
        int zn;
        const char *zm = gzerror(gz, &zn);
        snprintf(err, errlen, "%s: truncated or damaged gzip data after %lld bytes (%s): not imported", file,
                 (long long)info->bytes_read, zm ? zm : "read error");
        status = CS_IMPORT_TRUNCATED;
        goto out;
    }
    if (first) {
        snprintf(err, errlen, "%s: empty file: not imported", file);
        status = CS_IMPORT_NOT_JSON;
        goto out;
    }
    if (yajl_complete_parse(h) != yajl_status_ok || k->depth != 0) {
        snprintf(err, errlen,
                 "%s: truncated: the JSON ends after %lld bytes, inside %s (a profiler stopped mid-write?): not "
                 "imported",
                 file, (long long)info->bytes_read,
                 k->depth >= 2 && kt_in(k, 1, KK_TRACEEVENTS) ? "traceEvents" : "the trace");
        status = CS_IMPORT_TRUNCATED;
        goto out;
    }
    if (k->failed) {
        snprintf(err, errlen, "%s", k->err);
        goto out;
    }
    if (!k->saw_trace_events) {
        snprintf(err, errlen, "%s: not a PyTorch profiler trace (no traceEvents)", file);
        status = CS_IMPORT_NOT_JSON;
        goto out;
    }
    if (!k->has_rank) {
        snprintf(err, errlen,
                 "%s: no rank: the trace has no distributedInfo.rank; give one with --rank-from-name REGEX "
                 "(e.g. 'rank[-_]?([0-9]+)')",
                 file);
        status = CS_IMPORT_NO_RANK;
        goto out;
    }
    info->rank = k->rank;
    info->world_size = k->world_size;
    if (!info->version[0])
        snprintf(info->version, sizeof info->version, "unknown");
    /* spans written before the rank was known (a distributedInfo after
     * traceEvents, or a name's rank overridden) get it now */
    if (k->nstreamed && (k->stream_rank != k->rank || k->stream_base != k->base_ns)) {
        if (cs_store_bulk_shift(k->b, k->stream_rank, k->rank, k->base_ns - k->stream_base) != 0) {
            snprintf(err, errlen, "%s: cannot write its store (%s): not imported", file, cs_store_bulk_errmsg(k->b));
            goto out;
        }
        k->t_lo += k->base_ns - k->stream_base;
        k->t_hi += k->base_ns - k->stream_base;
    }
    if (kt_finish(k) != 1 || k->failed) {
        snprintf(err, errlen, "%s", k->err);
        goto out;
    }
    for (size_t i = 0; i < k->nkl; i++) {
        int64_t lt;
        if (!cs_map_get(&k->launch, (uint64_t)k->kl[i].corr, &lt))
            continue;
        if (cs_store_bulk_span_launch(k->b, k->kl[i].span, k->kl[i].ts - lt) != 0) {
            snprintf(err, errlen, "%s: cannot write its store (%s): not imported", file, cs_store_bulk_errmsg(k->b));
            goto out;
        }
    }
    cs_store_bulk_proc p = { .rank = k->rank,
                             .pid = 0,
                             .world_size = k->world_size,
                             .host = "kineto",
                             .exe = file,
                             .mpi = info->backend[0] ? info->backend : "torch",
                             .tool_version = NULL,
                             .start_ns = k->t_lo == INT64_MAX ? 0 : k->t_lo,
                             .end_ns = k->t_hi == INT64_MIN ? 0 : k->t_hi,
                             .spans = info->spans };
    if (cs_store_bulk_process(k->b, &p) != 0) {
        snprintf(err, errlen, "%s: cannot write its store (%s): not imported", file, cs_store_bulk_errmsg(k->b));
        goto out;
    }
    if (cs_store_bulk_end(k->b, 1, err, errlen) != 0) {
        k->b = NULL;
        goto out;
    }
    k->b = NULL;
    cs_store_meta_set(k->st, "kind", "rank");
    status = CS_IMPORT_OK;
out:
    if (status != CS_IMPORT_OK && k->has_rank)
        info->rank = k->rank; /* for the command's list of missing ranks */
    if (fd >= 0)
        close(fd);
    if (k->b)
        cs_store_bulk_end(k->b, 0, NULL, 0);
    if (k->st)
        cs_store_close(k->st);
    if (status != CS_IMPORT_OK)
        unlink(db_path);
    if (h)
        yajl_free(h);
    if (gz)
        gzclose(gz);
    free(buf);
    for (size_t i = 0; i < k->npg; i++)
        free(k->pgs[i].ranks);
    free(k->cur_pg.ranks);
    free(k->pgs);
    free(k->recs);
    cs_map_free(&k->tids);
    cs_map_free(&k->launch);
    free(k->kl);
    free(k);
    return status;
}
