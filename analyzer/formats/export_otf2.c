/* export_otf2.c: the trace as an OTF2 archive, written through libotf2's
 * writer API (docs/interop.md), for Vampir, Scalasca and otf2-print.
 *
 * A location group per rank (a process under its host's system-tree node)
 * with a location per traced thread, and per rank with GPU times an
 * accelerator location group with a location per GPU stream. A region per
 * op; every span an Enter/Leave pair on its thread (and on its stream when
 * it has GPU times). MPI calls on an MPI communicator also carry OTF2's MPI
 * records: blocking collectives MpiCollectiveBegin/End (the collective op,
 * root, communicator, bytes), nonblocking ones
 * NonBlockingCollectiveRequest/Complete, sends and receives MpiSend/MpiRecv,
 * MpiIsend/MpiIsendComplete, MpiIrecvRequest/MpiIrecv, the completions at
 * the end of the call that completed them. The MPI communicators are OTF2
 * comms over groups of ranks (MPI_COMM_WORLD, and the others under their
 * display names).
 *
 * Times are the aligned nanoseconds of the store (the clocks table applied,
 * as the chrome export does); timer resolution 1 ns, the clock's offset the
 * earliest event. The spans stream from the store in rank and time order
 * into the event writers of one rank's locations at a time (libotf2 flushes
 * each writer's chunks to its file); the definitions, written once at the
 * end, are what is kept: ranks, locations, ops, communicators. */
#include "config.h"
#include "analyzer/formats/export.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/span.h"
#include "libtrace/store_comms.h"
#include "libtrace/store_sql.h"

#include <otf2/otf2.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const cs_export_otf2_names[] = { "traces.otf2", "traces.def", "traces", NULL };

#define OTF2X_GPU_BIT 0x80000000u /* in a location id: a GPU stream, not a thread */

/* What is left of a span to close on its thread: its Leave. */
typedef struct otf2x_open {
    uint64_t end;
    uint32_t region;
} otf2x_open;

typedef struct otf2x_loc {
    uint64_t id;
    int rix;     /* index of its rank */
    int gpu;     /* a GPU stream */
    int64_t key; /* thread id, or the stream's bits */
    uint64_t events, last;
    OTF2_EvtWriter *w; /* while its rank is written */
    otf2x_open *stack; /* spans of the thread still open (nested) */
    size_t nstack, capStack;
} otf2x_loc;

typedef struct otf2x_rank {
    int rank;
    int host;        /* index in hosts */
    int64_t mpi_loc; /* its location of MPI calls (index in locs), -1 = none yet */
    int64_t first_loc;
    int nstreams;
} otf2x_rank;

/* A nonblocking request in flight on the current rank. */
enum { OTF2X_ISEND = 1, OTF2X_IRECV, OTF2X_ICOLL };
typedef struct otf2x_req {
    int64_t req;
    int kind; /* 0 = a free slot */
    uint32_t comm, peer, tag, root;
    int collop;
    uint64_t bytes;
} otf2x_req;

typedef struct otf2x_comm {
    int64_t id, parent;
    uint32_t ref;
    int self; /* MPI_COMM_SELF */
    char name[CS_COMMS_DISPLAY_MAX];
    uint64_t *members; /* indices of the member ranks in the world list, by comm rank */
    size_t nmembers, capMembers;
} otf2x_comm;

/* A row of the completions query. */
typedef struct otf2x_pend {
    int rank, source, tag;
    int64_t span, req, begin;
} otf2x_pend;

typedef struct otf2x {
    cs_store *st;
    OTF2_Archive *ar;
    cs_export_stats *stats;
    cs_op_row *ops;
    int nops;
    uint32_t *region_of; /* per op (and nops: an op the store does not name): its region + 1, 0 = none yet */
    int *region_op;      /* per region, in ref order: its op */
    uint32_t nregions;
    otf2x_rank *ranks;
    size_t nranks, capRanks;
    char (*hosts)[64];
    size_t nhosts, capHosts;
    otf2x_loc *locs;
    size_t nlocs, capLocs;
    size_t rank_loc0; /* the current rank's locations: locs[rank_loc0..nlocs) */
    int cur;          /* the current rank's index, -1 = none */
    otf2x_comm *comms;
    size_t ncomms, capComms;
    cs_map comm_idx; /* communicator id -> index in comms (MPI ones) */
    otf2x_req *reqs;
    size_t nreqs, capReqs, livereqs;
    cs_map req_idx;   /* request id -> index in reqs, -1 when done */
    sqlite3_stmt *cq; /* the completions, by rank and the completing span's begin */
    int cq_row, cq_done;
    otf2x_pend *pend;
    size_t npend, capPend;
    int64_t tmin, tmax;
    int64_t clamped;
    int64_t nonmono;
    char *err;
    size_t errlen;
    int failed;
} otf2x;

/* ---- libotf2's errors ---- */

static char otf2x_errbuf[512];

static OTF2_ErrorCode otf2x_error_cb(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                                     const char *fmt, va_list va)
{
    if (!otf2x_errbuf[0]) {
        int n = snprintf(otf2x_errbuf, sizeof otf2x_errbuf, "%s: ", OTF2_Error_GetName(code));
        if (n > 0 && (size_t)n < sizeof otf2x_errbuf && fmt)
            vsnprintf(otf2x_errbuf + n, sizeof otf2x_errbuf - (size_t)n, fmt, va);
    }
    return code;
}

/* Keep the first failure of libotf2; 0, or -1. */
static int otf2x_ok(otf2x *c, OTF2_ErrorCode e, const char *what)
{
    if (e == OTF2_SUCCESS)
        return 0;
    if (!c->failed)
        snprintf(c->err, c->errlen, "export: OTF2: %s: %s", what,
                 otf2x_errbuf[0] ? otf2x_errbuf : OTF2_Error_GetDescription(e));
    c->failed = 1;
    return -1;
}

static int otf2x_fail(otf2x *c, const char *fmt, ...)
{
    if (!c->failed) {
        va_list va;
        va_start(va, fmt);
        vsnprintf(c->err, c->errlen, fmt, va);
        va_end(va);
    }
    c->failed = 1;
    return -1;
}

static OTF2_FlushType otf2x_pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final)
{
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks otf2x_flush = { .otf2_pre_flush = otf2x_pre_flush, .otf2_post_flush = NULL };

/* ---- ranks, hosts, locations ---- */

static int64_t otf2x_rank_find(const otf2x *c, int rank)
{
    size_t lo = 0, hi = c->nranks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nranks && c->ranks[lo].rank == rank ? (int64_t)lo : -1;
}

static int otf2x_rank_cmp(const void *a, const void *b)
{
    int x = ((const otf2x_rank *)a)->rank, y = ((const otf2x_rank *)b)->rank;
    return (x > y) - (x < y);
}

static int otf2x_host(otf2x *c, const char *host)
{
    for (size_t i = 0; i < c->nhosts; i++)
        if (strcmp(c->hosts[i], host) == 0)
            return (int)i;
    if (CS_VEC_RESERVE(c->hosts, c->capHosts, c->nhosts + 1) != 0)
        return -1;
    snprintf(c->hosts[c->nhosts], sizeof c->hosts[0], "%s", host);
    return (int)c->nhosts++;
}

static int otf2x_add_rank(otf2x *c, int rank, const char *host)
{
    if (CS_VEC_RESERVE(c->ranks, c->capRanks, c->nranks + 1) != 0)
        return -1;
    int h = otf2x_host(c, host && host[0] ? host : "unknown host");
    if (h < 0)
        return -1;
    c->ranks[c->nranks++] = (otf2x_rank){ .rank = rank, .host = h, .mpi_loc = -1, .first_loc = -1 };
    return 0;
}

/* The location of the current rank for a thread or a stream, made (with
 * its event writer) on first use; NULL on failure. */
static otf2x_loc *otf2x_loc_get(otf2x *c, int gpu, int64_t key)
{
    for (size_t i = c->rank_loc0; i < c->nlocs; i++)
        if (c->locs[i].gpu == gpu && c->locs[i].key == key)
            return &c->locs[i];
    if (CS_VEC_RESERVE(c->locs, c->capLocs, c->nlocs + 1) != 0) {
        otf2x_fail(c, "export: out of memory");
        return NULL;
    }
    otf2x_rank *r = &c->ranks[c->cur];
    uint64_t low = gpu ? OTF2X_GPU_BIT | (uint32_t)r->nstreams++ : (uint32_t)key & ~OTF2X_GPU_BIT;
    otf2x_loc *l = &c->locs[c->nlocs];
    *l = (otf2x_loc){ .id = (uint64_t)c->cur << 32 | low, .rix = c->cur, .gpu = gpu, .key = key };
    l->w = OTF2_Archive_GetEvtWriter(c->ar, l->id);
    if (!l->w) {
        otf2x_ok(c, OTF2_ERROR_MEM_FAULT, "cannot open an event writer");
        return NULL;
    }
    if (!gpu && r->first_loc < 0)
        r->first_loc = (int64_t)c->nlocs;
    c->nlocs++;
    return l;
}

/* A time on the aligned line as an OTF2 timestamp; keeps the range. */
static uint64_t otf2x_ts(otf2x *c, int64_t t)
{
    if (t < 0)
        t = 0;
    if (c->tmin < 0 || t < c->tmin)
        c->tmin = t;
    if (t > c->tmax)
        c->tmax = t;
    return (uint64_t)t;
}

/* Not before the location's last event (a location's events are in time
 * order); counts what had to move. */
static uint64_t otf2x_at(otf2x *c, otf2x_loc *l, uint64_t t)
{
    if (t < l->last) {
        c->nonmono++;
        t = l->last;
    }
    l->last = t;
    return t;
}

/* Leave the open spans of l that ended by t (all of them: UINT64_MAX). */
static int otf2x_pop(otf2x *c, otf2x_loc *l, uint64_t t)
{
    while (l->nstack > 0 && l->stack[l->nstack - 1].end <= t) {
        otf2x_open *o = &l->stack[--l->nstack];
        if (otf2x_ok(c, OTF2_EvtWriter_Leave(l->w, NULL, otf2x_at(c, l, o->end), o->region), "Leave") != 0)
            return -1;
        l->events++;
        c->stats->events++;
    }
    return 0;
}

/* Close the current rank's event writers (their open spans left first). */
static int otf2x_rank_end(otf2x *c)
{
    int rc = 0;
    for (size_t i = c->rank_loc0; i < c->nlocs; i++) {
        otf2x_loc *l = &c->locs[i];
        if (rc == 0 && otf2x_pop(c, l, UINT64_MAX) != 0)
            rc = -1;
        if (l->w && otf2x_ok(c, OTF2_Archive_CloseEvtWriter(c->ar, l->w), "closing an event writer") != 0)
            rc = -1;
        l->w = NULL;
        free(l->stack);
        l->stack = NULL;
        l->nstack = l->capStack = 0;
    }
    c->rank_loc0 = c->nlocs;
    c->cur = -1;
    cs_map_free(&c->req_idx);
    c->nreqs = c->livereqs = 0;
    return rc;
}

/* ---- ops and MPI records ---- */

static const cs_op_row *otf2x_op(const otf2x *c, int op)
{
    return op >= 0 && op < c->nops && c->ops[op].name[0] ? &c->ops[op] : NULL;
}

/* The collective op of an MPI call's name (MPI_Allreduce, MPI_Iallreduce),
 * or -1. */
static int otf2x_collop(const char *name)
{
    static const struct {
        const char *name;
        int op;
    } tab[] = {
        { "barrier", OTF2_COLLECTIVE_OP_BARRIER },
        { "bcast", OTF2_COLLECTIVE_OP_BCAST },
        { "gather", OTF2_COLLECTIVE_OP_GATHER },
        { "gatherv", OTF2_COLLECTIVE_OP_GATHERV },
        { "scatter", OTF2_COLLECTIVE_OP_SCATTER },
        { "scatterv", OTF2_COLLECTIVE_OP_SCATTERV },
        { "allgather", OTF2_COLLECTIVE_OP_ALLGATHER },
        { "allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV },
        { "alltoall", OTF2_COLLECTIVE_OP_ALLTOALL },
        { "alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV },
        { "alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW },
        { "allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE },
        { "reduce", OTF2_COLLECTIVE_OP_REDUCE },
        { "reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER },
        { "reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK },
        { "scan", OTF2_COLLECTIVE_OP_SCAN },
        { "exscan", OTF2_COLLECTIVE_OP_EXSCAN },
    };
    if (strncmp(name, "MPI_", 4) != 0)
        return -1;
    name += 4;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
            if (strcasecmp(name, tab[i].name) == 0)
                return tab[i].op;
        if (tolower((unsigned char)name[0]) != 'i')
            break;
        name++; /* MPI_Iallreduce */
    }
    return -1;
}

static OTF2_RegionRole otf2x_role(const cs_op_row *op)
{
    const char *k = op->kind;
    if (strcmp(k, "send") == 0 || strcmp(k, "recv") == 0 || strcmp(k, "sendrecv") == 0)
        return OTF2_REGION_ROLE_POINT2POINT;
    if (strcmp(k, "coll") == 0 || strcmp(k, "rooted") == 0) {
        switch (otf2x_collop(op->name)) {
        case OTF2_COLLECTIVE_OP_BARRIER: return OTF2_REGION_ROLE_BARRIER;
        case OTF2_COLLECTIVE_OP_BCAST:
        case OTF2_COLLECTIVE_OP_SCATTER:
        case OTF2_COLLECTIVE_OP_SCATTERV: return OTF2_REGION_ROLE_COLL_ONE2ALL;
        case OTF2_COLLECTIVE_OP_GATHER:
        case OTF2_COLLECTIVE_OP_GATHERV:
        case OTF2_COLLECTIVE_OP_REDUCE: return OTF2_REGION_ROLE_COLL_ALL2ONE;
        case -1: return strcmp(k, "rooted") == 0 ? OTF2_REGION_ROLE_COLL_OTHER : OTF2_REGION_ROLE_COLL_ALL2ALL;
        default: return OTF2_REGION_ROLE_COLL_ALL2ALL;
        }
    }
    if (strcmp(k, "marker") == 0)
        return OTF2_REGION_ROLE_ARTIFICIAL;
    return OTF2_REGION_ROLE_FUNCTION;
}

static OTF2_Paradigm otf2x_paradigm(const cs_op_row *op)
{
    if (strncmp(op->name, "MPI_", 4) == 0)
        return OTF2_PARADIGM_MPI;
    if (strncmp(op->name, "cuda", 4) == 0 || strncmp(op->name, "cu", 2) == 0)
        return OTF2_PARADIGM_CUDA;
    return OTF2_PARADIGM_USER;
}

/* The OTF2 comm of a span's communicator (an MPI one), or -1. */
static int64_t otf2x_comm_of(const otf2x *c, const cs_span *sp)
{
    int64_t i;
    if (sp->comm == 0 || !(sp->flags & CS_F_HAS_COMM) || !cs_map_get(&c->comm_idx, (uint64_t)sp->comm, &i))
        return -1;
    return i;
}

static uint32_t otf2x_u32(int v)
{
    return v < 0 ? 0 : (uint32_t)v;
}

/* Keep a request in flight; 0 or -1. */
static int otf2x_req_put(otf2x *c, const otf2x_req *r)
{
    if (c->req_idx.n > 4 * c->livereqs + 1024) {
        /* Mostly completed requests: keep only those in flight. */
        size_t n = 0;
        cs_map_free(&c->req_idx);
        for (size_t i = 0; i < c->nreqs; i++)
            if (c->reqs[i].kind != 0) {
                c->reqs[n] = c->reqs[i];
                if (cs_map_put(&c->req_idx, (uint64_t)c->reqs[n].req, (int64_t)n) != 0)
                    return -1;
                n++;
            }
        c->nreqs = n;
    }
    if (CS_VEC_RESERVE(c->reqs, c->capReqs, c->nreqs + 1) != 0 ||
        cs_map_put(&c->req_idx, (uint64_t)r->req, (int64_t)c->nreqs) != 0)
        return -1;
    c->reqs[c->nreqs++] = *r;
    c->livereqs++;
    return 0;
}

/* The completion of request req on l at t, by the completing call. */
static int otf2x_complete(otf2x *c, otf2x_loc *l, int64_t req, int source, int tag, uint64_t t)
{
    int64_t i;
    if (!cs_map_get(&c->req_idx, (uint64_t)req, &i) || i < 0 || c->reqs[i].kind == 0)
        return 0; /* a request of a call without an MPI record */
    otf2x_req *r = &c->reqs[i];
    OTF2_ErrorCode e = OTF2_SUCCESS;
    t = otf2x_at(c, l, t);
    if (r->kind == OTF2X_ISEND)
        e = OTF2_EvtWriter_MpiIsendComplete(l->w, NULL, t, (uint64_t)req);
    else if (r->kind == OTF2X_IRECV)
        e = OTF2_EvtWriter_MpiIrecv(l->w, NULL, t, source >= 0 ? (uint32_t)source : r->peer, r->comm,
                                    tag >= 0 ? (uint32_t)tag : r->tag, r->bytes, (uint64_t)req);
    else
        e = OTF2_EvtWriter_NonBlockingCollectiveComplete(l->w, NULL, t, (OTF2_CollectiveOp)r->collop, r->comm, r->root,
                                                         r->bytes, r->bytes, (uint64_t)req);
    r->kind = 0;
    c->livereqs--;
    cs_map_put(&c->req_idx, (uint64_t)req, -1);
    if (otf2x_ok(c, e, "a completion record") != 0)
        return -1;
    l->events++;
    c->stats->events++;
    return 0;
}

/* The completions of the span sp (a completion call), at its end. The
 * completions query is read alongside the spans (both by rank, then time);
 * rows of other spans at the very same time wait in a short list. */
static int otf2x_completions(otf2x *c, otf2x_loc *l, const cs_span *sp, uint64_t t)
{
    size_t n = 0;
    for (size_t i = 0; i < c->npend; i++) /* rows of spans passed without them: dropped */
        if (c->pend[i].rank == sp->rank && c->pend[i].begin >= sp->begin_ns)
            c->pend[n++] = c->pend[i];
    c->npend = n;
    while (!c->cq_done) {
        if (!c->cq_row) {
            int s = sqlite3_step(c->cq);
            if (s == SQLITE_DONE) {
                c->cq_done = 1;
                break;
            }
            if (s != SQLITE_ROW)
                return otf2x_fail(c, "%s: cannot read the completions (damaged?)", cs_store_path(c->st));
            c->cq_row = 1;
        }
        otf2x_pend p = { .rank = sqlite3_column_int(c->cq, 0),
                         .span = sqlite3_column_int64(c->cq, 1),
                         .req = sqlite3_column_int64(c->cq, 2),
                         .source = sqlite3_column_int(c->cq, 3),
                         .tag = sqlite3_column_int(c->cq, 4),
                         .begin = sqlite3_column_int64(c->cq, 5) };
        if (p.rank > sp->rank || (p.rank == sp->rank && p.begin > sp->begin_ns))
            break; /* a later span's: kept for it */
        c->cq_row = 0;
        if (p.rank < sp->rank || p.begin < sp->begin_ns)
            continue;
        if (CS_VEC_RESERVE(c->pend, c->capPend, c->npend + 1) != 0)
            return otf2x_fail(c, "export: out of memory");
        c->pend[c->npend++] = p;
    }
    n = 0;
    for (size_t i = 0; i < c->npend; i++) {
        otf2x_pend *p = &c->pend[i];
        if (p->span != sp->id)
            c->pend[n++] = *p;
        else if (otf2x_complete(c, l, p->req, p->source, p->tag, t) != 0)
            return -1;
    }
    c->npend = n;
    return 0;
}

/* The MPI records of an MPI call, between its Enter and its Leave. */
static int otf2x_mpi(otf2x *c, otf2x_loc *l, const cs_span *sp, const cs_op_row *op, uint64_t b, uint64_t e)
{
    const char *k = op->kind;
    int nb = (sp->flags & CS_F_NONBLOCKING) || op->nonblocking;
    int64_t cix = otf2x_comm_of(c, sp);
    int peer = (sp->flags & CS_F_HAS_PEER) ? sp->peer : -1;
    OTF2_ErrorCode err = OTF2_SUCCESS;
    uint64_t bytes = sp->bytes > 0 ? (uint64_t)sp->bytes : 0;
    uint32_t tag = otf2x_u32(sp->tag);
    int n = 0;
    if (strcmp(k, "complete") == 0)
        return otf2x_completions(c, l, sp, e);
    if (cix < 0 || (sp->flags & CS_F_ERROR))
        return 0;
    uint32_t comm = c->comms[cix].ref;
    if (strcmp(k, "coll") == 0 || strcmp(k, "rooted") == 0) {
        int cop = otf2x_collop(op->name);
        if (cop < 0)
            return 0;
        uint32_t root = strcmp(k, "rooted") == 0 && peer >= 0 ? (uint32_t)peer : OTF2_COLLECTIVE_ROOT_NONE;
        if (nb && sp->req != 0) {
            otf2x_req r = {
                .req = sp->req, .kind = OTF2X_ICOLL, .comm = comm, .root = root, .collop = cop, .bytes = bytes
            };
            if (otf2x_req_put(c, &r) != 0)
                return otf2x_fail(c, "export: out of memory");
            err = OTF2_EvtWriter_NonBlockingCollectiveRequest(l->w, NULL, otf2x_at(c, l, b), (uint64_t)sp->req);
            n = 1;
        } else if (!nb) {
            err = OTF2_EvtWriter_MpiCollectiveBegin(l->w, NULL, otf2x_at(c, l, b));
            if (err == OTF2_SUCCESS)
                err = OTF2_EvtWriter_MpiCollectiveEnd(l->w, NULL, otf2x_at(c, l, e), (OTF2_CollectiveOp)cop, comm, root,
                                                      bytes, bytes);
            n = 2;
        }
    } else if (strcmp(k, "send") == 0 && peer >= 0) {
        if (nb && sp->req != 0) {
            otf2x_req r = { .req = sp->req, .kind = OTF2X_ISEND, .comm = comm, .peer = (uint32_t)peer, .tag = tag };
            if (otf2x_req_put(c, &r) != 0)
                return otf2x_fail(c, "export: out of memory");
            err = OTF2_EvtWriter_MpiIsend(l->w, NULL, otf2x_at(c, l, b), (uint32_t)peer, comm, tag, bytes,
                                          (uint64_t)sp->req);
        } else {
            err = OTF2_EvtWriter_MpiSend(l->w, NULL, otf2x_at(c, l, b), (uint32_t)peer, comm, tag, bytes);
        }
        n = 1;
    } else if (strcmp(k, "recv") == 0) {
        if (nb && sp->req != 0) {
            otf2x_req r = {
                .req = sp->req, .kind = OTF2X_IRECV, .comm = comm, .peer = otf2x_u32(peer), .tag = tag, .bytes = bytes
            };
            if (otf2x_req_put(c, &r) != 0)
                return otf2x_fail(c, "export: out of memory");
            err = OTF2_EvtWriter_MpiIrecvRequest(l->w, NULL, otf2x_at(c, l, b), (uint64_t)sp->req);
            n = 1;
        } else if (peer >= 0) {
            err = OTF2_EvtWriter_MpiRecv(l->w, NULL, otf2x_at(c, l, e), (uint32_t)peer, comm, tag, bytes);
            n = 1;
        }
    } else if (strcmp(k, "sendrecv") == 0 && peer >= 0 && sp->peer2 >= 0) {
        err = OTF2_EvtWriter_MpiSend(l->w, NULL, otf2x_at(c, l, b), (uint32_t)peer, comm, tag, bytes);
        if (err == OTF2_SUCCESS)
            err = OTF2_EvtWriter_MpiRecv(l->w, NULL, otf2x_at(c, l, e), (uint32_t)sp->peer2, comm, tag, bytes);
        n = 2;
    }
    if (otf2x_ok(c, err, "an MPI record") != 0)
        return -1;
    l->events += (uint64_t)n;
    c->stats->events += n;
    return 0;
}

/* ---- the spans ---- */

/* Enter a span [*b, *e] on l: the open spans that ended by *b left first;
 * a span that would outlast the one it began in is cut at that one's end
 * (OTF2's regions nest). */
static int otf2x_enter(otf2x *c, otf2x_loc *l, uint64_t *b, uint64_t *e, uint32_t region)
{
    if (*e < *b)
        *e = *b;
    if (otf2x_pop(c, l, *b) != 0)
        return -1;
    if (l->nstack > 0 && *e > l->stack[l->nstack - 1].end) {
        *e = l->stack[l->nstack - 1].end;
        c->clamped++;
    }
    if (otf2x_ok(c, OTF2_EvtWriter_Enter(l->w, NULL, otf2x_at(c, l, *b), region), "Enter") != 0)
        return -1;
    l->events++;
    c->stats->events++;
    return 0;
}

/* Its Leave, written when a later span begins after it, or at the end. */
static int otf2x_push(otf2x *c, otf2x_loc *l, uint64_t e, uint32_t region)
{
    if (CS_VEC_RESERVE(l->stack, l->capStack, l->nstack + 1) != 0)
        return otf2x_fail(c, "export: out of memory");
    l->stack[l->nstack++] = (otf2x_open){ .end = e, .region = region };
    return 0;
}

static int otf2x_span(otf2x *c, const cs_span *sp)
{
    if (c->cur < 0 || c->ranks[c->cur].rank != sp->rank) {
        if (c->cur >= 0 && otf2x_rank_end(c) != 0)
            return -1;
        int64_t rix = otf2x_rank_find(c, sp->rank);
        if (rix < 0)
            return otf2x_fail(c, "%s: rank %d has spans but no process (damaged?)", cs_store_path(c->st), sp->rank);
        c->cur = (int)rix;
    }
    /* A region per op, numbered in order of first use (OTF2 wants the
     * definitions' refs dense); ops this store does not name share one. */
    int opix = otf2x_op(c, sp->op) ? sp->op : c->nops;
    if (!c->region_of[opix]) {
        c->region_op[c->nregions] = opix;
        c->region_of[opix] = ++c->nregions;
    }
    uint32_t region = c->region_of[opix] - 1;
    otf2x_loc *l = otf2x_loc_get(c, 0, sp->tid);
    if (!l)
        return -1;
    uint64_t b = otf2x_ts(c, sp->begin_ns), e = otf2x_ts(c, sp->end_ns);
    if (otf2x_enter(c, l, &b, &e, region) != 0)
        return -1;
    const cs_op_row *op = otf2x_op(c, sp->op);
    if (op) {
        if (sp->flags & CS_F_HAS_COMM) {
            int64_t cix = otf2x_comm_of(c, sp);
            if (cix >= 0 && c->ranks[c->cur].mpi_loc < 0)
                c->ranks[c->cur].mpi_loc = (int64_t)(l - c->locs);
        }
        if (otf2x_mpi(c, l, sp, op, b, e) != 0)
            return -1;
    }
    if (otf2x_push(c, l, e, region) != 0)
        return -1;
    c->stats->spans++;
    if (sp->gpu_begin_ns != 0 && sp->gpu_end_ns != 0) {
        /* Spans share GPU times (the calls of an NCCL group): nested. */
        otf2x_loc *g = otf2x_loc_get(c, 1, sp->stream < 0 ? 0 : sp->stream);
        if (!g)
            return -1;
        uint64_t gb = otf2x_ts(c, sp->gpu_begin_ns), ge = otf2x_ts(c, sp->gpu_end_ns);
        if (otf2x_enter(c, g, &gb, &ge, region) != 0 || otf2x_push(c, g, ge, region) != 0)
            return -1;
    }
    return 0;
}

static int otf2x_spans(otf2x *c)
{
    sqlite3 *db = cs_store_sql_db(c->st);
    static const char cq[] = "SELECT c.rank, c.span, c.req, COALESCE(c.source, -1), COALESCE(c.tag, -1), " CS_ALIGNED(
        "s.begin_ns") " FROM completions c JOIN span s ON s.id = c.span LEFT JOIN clocks k ON k.rank = s.rank"
                      " ORDER BY c.rank, s.begin_ns, c.span";
    if (sqlite3_prepare_v2(db, cq, -1, &c->cq, NULL) != SQLITE_OK)
        return otf2x_fail(c, "%s: cannot read the completions: %s", cs_store_path(c->st), sqlite3_errmsg(db));
    cs_span_query q = { .order = CS_ORDER_RANK_TIME, .rank = -1 };
    cs_span_iter *it = cs_store_spans(c->st, &q, c->err, c->errlen);
    if (!it) {
        c->failed = 1;
        return -1;
    }
    cs_span sp;
    int rc;
    while ((rc = cs_span_next(it, &sp)) == 1)
        if (otf2x_span(c, &sp) != 0) {
            rc = -2;
            break;
        }
    cs_span_iter_free(it);
    if (rc == -2)
        return -1;
    if (rc < 0)
        return otf2x_fail(c, "%s: cannot read the spans (damaged?)", cs_store_path(c->st));
    return c->cur >= 0 ? otf2x_rank_end(c) : 0;
}

/* ---- communicators ---- */

static int otf2x_member_cb(const cs_comm_member *m, void *arg)
{
    otf2x *c = arg;
    int64_t i;
    if (!cs_map_get(&c->comm_idx, (uint64_t)m->comm, &i))
        return 0;
    otf2x_comm *k = &c->comms[i];
    int64_t rix = otf2x_rank_find(c, m->rank);
    if (rix < 0 || m->comm_rank < 0)
        return 0;
    if (CS_VEC_RESERVE(k->members, k->capMembers, (size_t)m->comm_rank + 1) != 0)
        return -1;
    while (k->nmembers <= (size_t)m->comm_rank)
        k->members[k->nmembers++] = UINT64_MAX;
    k->members[m->comm_rank] = (uint64_t)rix;
    return 0;
}

/* The MPI communicators (not NCCL's), and the ranks that are their members. */
static int otf2x_comms(otf2x *c, cs_comms *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const cs_comm_info *ci = &t->a[i];
        if (strncmp(ci->how, "nccl", 4) == 0)
            continue;
        /* Each rank's MPI_COMM_SELF is one comm, as in MPI. */
        int self = strcmp(ci->how, "self") == 0;
        size_t j = 0;
        while (self && j < c->ncomms && !c->comms[j].self)
            j++;
        if (self && j < c->ncomms) {
            if (cs_map_put(&c->comm_idx, (uint64_t)ci->id, (int64_t)j) != 0)
                return -1;
            continue;
        }
        if (CS_VEC_RESERVE(c->comms, c->capComms, c->ncomms + 1) != 0 ||
            cs_map_put(&c->comm_idx, (uint64_t)ci->id, (int64_t)c->ncomms) != 0)
            return -1;
        otf2x_comm *k = &c->comms[c->ncomms];
        *k = (otf2x_comm){ .id = ci->id, .parent = ci->parent, .ref = (uint32_t)c->ncomms, .self = self };
        snprintf(k->name, sizeof k->name, "%s", self ? "MPI_COMM_SELF" : ci->display);
        c->ncomms++;
    }
    return 0;
}

/* Ranks named only as communicator members (no process of their own). */
static int otf2x_member_rank_cb(const cs_comm_member *m, void *arg)
{
    otf2x *c = arg;
    for (size_t i = 0; i < c->nranks; i++)
        if (c->ranks[i].rank == m->rank)
            return 0;
    return otf2x_add_rank(c, m->rank, NULL);
}

/* ---- definitions ---- */

typedef struct otf2x_strs {
    OTF2_GlobalDefWriter *g;
    uint32_t next;
} otf2x_strs;

/* A new string definition; its ref, or OTF2_UNDEFINED_STRING on failure. */
static uint32_t otf2x_str(otf2x *c, otf2x_strs *s, const char *text)
{
    if (otf2x_ok(c, OTF2_GlobalDefWriter_WriteString(s->g, s->next, text), "a string definition") != 0)
        return OTF2_UNDEFINED_STRING;
    return s->next++;
}

static int otf2x_defs(otf2x *c)
{
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(c->ar);
    if (!g)
        return otf2x_ok(c, OTF2_ERROR_MEM_FAULT, "cannot open the definitions");
    otf2x_strs s = { .g = g };
    if (c->tmin < 0)
        c->tmin = 0;
    if (otf2x_ok(c,
                 OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, (uint64_t)c->tmin,
                                                           (uint64_t)(c->tmax - c->tmin) + 1, OTF2_UNDEFINED_TIMESTAMP),
                 "the clock properties") != 0)
        return -1;
    uint32_t mpi = otf2x_str(c, &s, "MPI");
    if (mpi == OTF2_UNDEFINED_STRING ||
        otf2x_ok(c, OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS),
                 "the MPI paradigm") != 0)
        return -1;
    /* System tree: the job, a node per host. */
    uint32_t jn = otf2x_str(c, &s, "collscope job"), jc = otf2x_str(c, &s, "machine"), nc = otf2x_str(c, &s, "node");
    if (otf2x_ok(c, OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, jn, jc, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
                 "the system tree") != 0)
        return -1;
    for (size_t h = 0; h < c->nhosts; h++)
        if (otf2x_ok(c,
                     OTF2_GlobalDefWriter_WriteSystemTreeNode(g, (uint32_t)h + 1, otf2x_str(c, &s, c->hosts[h]), nc, 0),
                     "the system tree") != 0)
            return -1;
    /* A location group per rank (and its GPU streams' group), its
     * locations; a rank without spans gets one location, so that every
     * member of a communicator has one. */
    uint64_t *world = c->nranks ? calloc(c->nranks, sizeof *world) : NULL;
    if (c->nranks && !world)
        return otf2x_fail(c, "export: out of memory");
    size_t li = 0;
    int rc = 0;
    uint32_t lg = 0; /* location group refs, dense */
    for (size_t r = 0; r < c->nranks && rc == 0; r++) {
        otf2x_rank *rk = &c->ranks[r];
        char name[96];
        snprintf(name, sizeof name, rk->rank >= 0 ? "rank %d" : "process %d", rk->rank >= 0 ? rk->rank : -rk->rank);
        if (otf2x_ok(c,
                     OTF2_GlobalDefWriter_WriteLocationGroup(g, lg, otf2x_str(c, &s, name),
                                                             OTF2_LOCATION_GROUP_TYPE_PROCESS, (uint32_t)rk->host + 1,
                                                             OTF2_UNDEFINED_LOCATION_GROUP),
                     "a location group") != 0) {
            rc = -1;
            break;
        }
        uint32_t proc = lg++, acc = lg;
        if (rk->nstreams > 0) {
            snprintf(name, sizeof name, "rank %d GPU", rk->rank);
            if (otf2x_ok(c,
                         OTF2_GlobalDefWriter_WriteLocationGroup(g, lg++, otf2x_str(c, &s, name),
                                                                 OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                                 (uint32_t)rk->host + 1, proc),
                         "a location group") != 0) {
                rc = -1;
                break;
            }
        }
        int any = 0;
        for (; li < c->nlocs && c->locs[li].rix == (int)r; li++) {
            otf2x_loc *l = &c->locs[li];
            if (l->gpu)
                snprintf(name, sizeof name, l->key ? "rank %d GPU stream 0x%" PRIx64 : "rank %d GPU default stream",
                         rk->rank, (uint64_t)l->key);
            else
                snprintf(name, sizeof name, "rank %d thread %d", rk->rank, (int)l->key);
            if (otf2x_ok(c,
                         OTF2_GlobalDefWriter_WriteLocation(g, l->id, otf2x_str(c, &s, name),
                                                            l->gpu ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM
                                                                   : OTF2_LOCATION_TYPE_CPU_THREAD,
                                                            l->events, l->gpu ? acc : proc),
                         "a location") != 0) {
                rc = -1;
                break;
            }
            any |= !l->gpu;
        }
        int64_t ml = rk->mpi_loc >= 0 ? rk->mpi_loc : rk->first_loc;
        world[r] = ml >= 0 ? c->locs[ml].id : (uint64_t)r << 32;
        if (rc == 0 && !any) {
            snprintf(name, sizeof name, "rank %d thread 0", rk->rank);
            rc = otf2x_ok(c,
                          OTF2_GlobalDefWriter_WriteLocation(g, world[r], otf2x_str(c, &s, name),
                                                             OTF2_LOCATION_TYPE_CPU_THREAD, 0, proc),
                          "a location");
        }
    }
    /* Regions: one per op that has spans. */
    for (uint32_t i = 0; i < c->nregions && rc == 0; i++) {
        const cs_op_row *op = otf2x_op(c, c->region_op[i]);
        uint32_t nm = otf2x_str(c, &s, op ? op->name : "unknown op");
        uint32_t ds = otf2x_str(c, &s, op && op->kind[0] ? op->kind : "unknown");
        rc =
            otf2x_ok(c,
                     OTF2_GlobalDefWriter_WriteRegion(g, i, nm, nm, ds, op ? otf2x_role(op) : OTF2_REGION_ROLE_FUNCTION,
                                                      op ? otf2x_paradigm(op) : OTF2_PARADIGM_UNKNOWN,
                                                      OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0),
                     "a region");
    }
    /* Communicators: the MPI ranks' locations (group 0, by world rank
     * index), a group of members per communicator, the comms. */
    if (rc == 0 && c->ncomms > 0)
        rc = otf2x_ok(c,
                      OTF2_GlobalDefWriter_WriteGroup(g, 0, otf2x_str(c, &s, "MPI ranks"),
                                                      OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                                      OTF2_GROUP_FLAG_NONE, (uint32_t)c->nranks, world),
                      "the group of MPI locations");
    uint32_t selfgroup = OTF2_UNDEFINED_UINT32, nextgroup = 1;
    for (size_t i = 0; i < c->ncomms && rc == 0; i++) {
        otf2x_comm *k = &c->comms[i];
        uint32_t grp;
        if (k->self) {
            if (selfgroup == OTF2_UNDEFINED_UINT32) {
                selfgroup = nextgroup++;
                rc = otf2x_ok(c,
                              OTF2_GlobalDefWriter_WriteGroup(g, selfgroup, otf2x_str(c, &s, "MPI_COMM_SELF"),
                                                              OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                                              OTF2_GROUP_FLAG_NONE, 0, NULL),
                              "a communicator's group");
            }
            grp = selfgroup;
        } else {
            size_t n = 0;
            for (size_t j = 0; j < k->nmembers; j++)
                if (k->members[j] != UINT64_MAX)
                    k->members[n++] = k->members[j];
            k->nmembers = n;
            grp = nextgroup++;
            rc = otf2x_ok(c,
                          OTF2_GlobalDefWriter_WriteGroup(g, grp, otf2x_str(c, &s, k->name), OTF2_GROUP_TYPE_COMM_GROUP,
                                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                          (uint32_t)k->nmembers, k->members),
                          "a communicator's group");
        }
        int64_t parent;
        uint32_t pref = OTF2_UNDEFINED_COMM;
        if (k->parent != 0 && cs_map_get(&c->comm_idx, (uint64_t)k->parent, &parent) && (size_t)parent < i)
            pref = c->comms[parent].ref; /* defined before it */
        if (rc == 0)
            rc = otf2x_ok(
                c, OTF2_GlobalDefWriter_WriteComm(g, k->ref, otf2x_str(c, &s, k->name), grp, pref, OTF2_COMM_FLAG_NONE),
                "a communicator");
    }
    free(world);
    return rc;
}

/* ---- the archive ---- */

int cs_export_otf2(const char *dir, cs_store *st, cs_export_stats *stats, char *err, size_t errlen)
{
    otf2x c = { .st = st, .stats = stats, .cur = -1, .tmin = -1, .err = err, .errlen = errlen };
    cs_proc *procs = NULL;
    cs_comms comms = { 0 };
    int nproc = 0;
    memset(stats, 0, sizeof *stats);
    otf2x_errbuf[0] = '\0';
    OTF2_ErrorCallback before = OTF2_Error_RegisterCallback(otf2x_error_cb, NULL);
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &c.ops, &c.nops) != 0 ||
        cs_store_comms_load(st, &comms) != 0) {
        otf2x_fail(&c, "%s: cannot read the processes, ops or communicators (damaged?)", cs_store_path(st));
        goto out;
    }
    if (!(c.region_of = calloc((size_t)c.nops + 1, sizeof *c.region_of)) ||
        !(c.region_op = calloc((size_t)c.nops + 1, sizeof *c.region_op))) {
        otf2x_fail(&c, "export: out of memory");
        goto out;
    }
    for (int i = 0; i < nproc; i++)
        if ((i == 0 || procs[i].rank != procs[i - 1].rank) && otf2x_add_rank(&c, procs[i].rank, procs[i].host) != 0) {
            otf2x_fail(&c, "export: out of memory");
            goto out;
        }
    if (otf2x_comms(&c, &comms) != 0 || cs_store_comm_members(st, otf2x_member_rank_cb, &c) != 0) {
        otf2x_fail(&c, "%s: cannot read the communicators (damaged?)", cs_store_path(st));
        goto out;
    }
    if (c.nranks > 1)
        qsort(c.ranks, c.nranks, sizeof *c.ranks, otf2x_rank_cmp);
    if (cs_store_comm_members(st, otf2x_member_cb, &c) != 0) {
        otf2x_fail(&c, "%s: cannot read the communicators (damaged?)", cs_store_path(st));
        goto out;
    }
    c.ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                             OTF2_COMPRESSION_NONE);
    if (!c.ar) {
        otf2x_ok(&c, OTF2_ERROR_EIO, "cannot create the archive");
        goto out;
    }
    if (otf2x_ok(&c, OTF2_Archive_SetFlushCallbacks(c.ar, &otf2x_flush, NULL), "flush callbacks") != 0 ||
        otf2x_ok(&c, OTF2_Archive_SetSerialCollectiveCallbacks(c.ar), "collective callbacks") != 0 ||
        otf2x_ok(&c, OTF2_Archive_SetCreator(c.ar, "collscope " PACKAGE_VERSION), "the creator") != 0 ||
        otf2x_ok(&c, OTF2_Archive_SetDescription(c.ar, cs_store_path(st)), "the description") != 0 ||
        otf2x_ok(&c, OTF2_Archive_OpenEvtFiles(c.ar), "opening the event files") != 0)
        goto out;
    if (otf2x_spans(&c) != 0)
        goto out;
    if (otf2x_ok(&c, OTF2_Archive_CloseEvtFiles(c.ar), "closing the event files") != 0 ||
        otf2x_ok(&c, OTF2_Archive_OpenDefFiles(c.ar), "opening the local definitions") != 0)
        goto out;
    for (size_t i = 0; i < c.nlocs; i++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(c.ar, c.locs[i].id);
        if (!d || otf2x_ok(&c, OTF2_Archive_CloseDefWriter(c.ar, d), "a local definition file") != 0) {
            otf2x_ok(&c, OTF2_ERROR_EIO, "a local definition file");
            goto out;
        }
    }
    if (otf2x_ok(&c, OTF2_Archive_CloseDefFiles(c.ar), "closing the local definitions") != 0 || otf2x_defs(&c) != 0)
        goto out;
out:
    if (c.cur >= 0)
        otf2x_rank_end(&c);
    if (c.ar && otf2x_ok(&c, OTF2_Archive_Close(c.ar), "closing the archive") != 0)
        c.failed = 1;
    sqlite3_finalize(c.cq);
    free(procs);
    free(c.ops);
    free(c.region_of);
    free(c.region_op);
    free(c.ranks);
    free(c.hosts);
    for (size_t i = 0; i < c.nlocs; i++)
        free(c.locs[i].stack);
    free(c.locs);
    for (size_t i = 0; i < c.ncomms; i++)
        free(c.comms[i].members);
    free(c.comms);
    free(c.reqs);
    free(c.pend);
    cs_map_free(&c.comm_idx);
    cs_map_free(&c.req_idx);
    cs_store_comms_free(&comms);
    OTF2_Error_RegisterCallback(before, NULL);
    return c.failed ? -1 : 0;
}
