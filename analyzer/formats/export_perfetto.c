/* export_perfetto.c: the trace as Perfetto's native protobuf trace (a
 * Trace of TracePackets with TrackEvents, what ui.perfetto.dev and
 * Perfetto's trace processor load natively; docs/interop.md). The
 * messages are encoded by the code protoc-c generates from
 * analyzer/formats/perfetto_trace.proto; each packet is written as it is made,
 * framed as field 1 of Trace, so no whole-trace message is ever built.
 *
 * One packet sequence (trusted_packet_sequence_id 1). Its first packet
 * clears the incremental state and interns the op names, the categories
 * and the names of the debug annotations; communicator names and call-site
 * labels are interned where first used. A track per rank (a process), per
 * traced thread (a thread; spans that overlap without nesting go to a
 * sibling track, since Perfetto's slices on a track must nest), per GPU
 * stream and per counter; every span a begin and an end event with its op,
 * communicator, seq, bytes, peer, call site and flags as debug annotations;
 * flows as flow ids on the begin events of the slices they join; the
 * stored analysis on a process of its own (steps, one track per verdict,
 * each rank's cumulative imposed wait as a counter) and each rank's own
 * wait in each collective as a counter on its process.
 *
 * Times are nanoseconds on the aligned time line (timestamps of the
 * default clock); a time before 0 is written as 0. */
#include "config.h"
#include "analyzer/analysis/csanalysis.h"
#include "analyzer/formats/export.h"
#include "analyzer/formats/export_io.h"
#include "analyzer/formats/perfetto_trace.pb-c.h"
#include "common/map.h"
#include "common/vec.h"
#include "libtrace/span.h"
#include "libtrace/store_comms.h"
#include "libtrace/store_sql.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef Perfetto__Protos__TracePacket pf_packet;
typedef Perfetto__Protos__TrackEvent pf_event;
typedef Perfetto__Protos__DebugAnnotation pf_ann;
typedef Perfetto__Protos__InternedData pf_interned;
typedef Perfetto__Protos__InternedString pf_istr;
typedef Perfetto__Protos__TrackDescriptor pf_track;

#define CS_PF_SEQ 1
/* Process ids: a made-up pid per rank (Perfetto keys threads by pid and
 * tid; 0 and small numbers mean the kernel's own): CS_PF_PID0 + rank x
 * CS_PF_TIDS, its threads pid + thread index. */
#define CS_PF_PID0 1048576
#define CS_PF_TIDS 1024
#define CS_PF_ANALYSIS_PID (CS_PF_PID0 - 1)
/* Track uuids: the analysis 1, its steps 2, verdict n 16 + n, rank R's
 * imposed-wait counter 2^31 + R; rank R's process (R + 1) << 32 and its
 * tracks below it: kind << 24 | level << 20 | index + 1. */
#define CS_PF_ANALYSIS_UUID 1u
#define CS_PF_STEPS_UUID 2u
#define CS_PF_VERDICT_UUID 16u
#define CS_PF_IMPOSED_UUID (1ull << 31)
#define CS_PF_KIND_THREAD 0u
#define CS_PF_KIND_STREAM 1u
#define CS_PF_KIND_WAIT 2u
/* Sibling tracks for spans that overlap without nesting, and the nesting
 * depth followed on each. */
#define CS_PF_LEVELS 4
#define CS_PF_DEPTH 32

/* Debug annotation names, interned as their index + 1. */
enum {
    PF_A_OP,
    PF_A_SPAN,
    PF_A_COMM,
    PF_A_SEQ,
    PF_A_BYTES,
    PF_A_PEER,
    PF_A_PEER2,
    PF_A_TAG,
    PF_A_CALLSITE,
    PF_A_NONBLOCKING,
    PF_A_FAILED,
    PF_A_RC,
    PF_A_FUSED,
    PF_A_FUSE_MEMBER,
    PF_A_GPU,
    PF_A_N
};
static const char *const pf_ann_names[PF_A_N] = { "op",     "span",  "comm",  "seq",         "bytes",
                                                  "peer",   "peer2", "tag",   "callsite",    "nonblocking",
                                                  "failed", "rc",    "fused", "fuse_member", "gpu" };

typedef struct cs_pf_level {
    int64_t ends[CS_PF_DEPTH]; /* the open slices' ends, outermost first */
    size_t depth;
    int64_t last_begin; /* slices nest on a level only in begin order */
    int used, described;
} cs_pf_level;

typedef struct cs_pf_lane {
    uint64_t base; /* the uuid of level 0 */
    int rank, kind;
    int64_t index; /* thread index, or stream bits */
    cs_pf_level lv[CS_PF_LEVELS];
} cs_pf_lane;

typedef struct cs_pf {
    cs_export_out *o;
    cs_store *st;
    cs_export_stats *stats;
    cs_op_row *ops;
    int nops;
    char **cats; /* category names; iid = index + 1 */
    size_t ncats, capCats;
    uint64_t *op_cat; /* per op: its category's iid */
    cs_comms comms;
    cs_map comm_iid; /* communicator -> iid of its name */
    cs_map site_idx; /* (rank, call site) -> index in labels */
    char **labels;
    uint64_t *label_iid; /* 0 until interned */
    size_t nlabels, capLabels;
    uint64_t next_str_iid;
    /* Strings interned by the packet being made. */
    pf_istr pend[2];
    pf_istr *pendp[2];
    size_t npend;
    /* Per rank: its lanes (kind << 62 | thread or stream -> index in
     * lanes) and the number of its GPU streams. */
    struct cs_pf_rank {
        cs_map lane_idx;
        int64_t nstreams;
    } * ranks;
    size_t nranks;
    cs_pf_lane *lanes;
    size_t nlanes, capLanes;
    int analysed; /* the stored analysis is current: its waits are written */
    int nverdicts;
    int imposed_rank;
    int64_t imposed_sum;
    cs_map waits_described; /* counter tracks described */
    uint64_t cat_gpu, cat_unknown;
    uint64_t *flow_out; /* scratch: the flows a slice starts */
    size_t capFlowOut;
    int oom;
} cs_pf;

/* ---- packets ---- */

/* Write one packet, framed as field 1 (length-delimited) of Trace. */
static void pf_write(cs_pf *c, const pf_packet *p)
{
    size_t n = perfetto__protos__trace_packet__get_packed_size(p);
    uint8_t *d = (uint8_t *)cs_export_out_room(c->o, n + 11);
    if (!d) {
        c->oom = 1;
        return;
    }
    size_t h = 0;
    d[h++] = 0x0a; /* field 1, wire type 2 */
    for (uint64_t v = n;; v >>= 7) {
        d[h++] = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
        if (v < 0x80)
            break;
    }
    perfetto__protos__trace_packet__pack(p, d + h);
    c->o->len += h + n;
    c->stats->events++;
}

static uint64_t pf_ts(int64_t ns)
{
    return ns > 0 ? (uint64_t)ns : 0;
}

/* A packet of the sequence, at time ts when timed. */
static pf_packet pf_packet_at(int64_t ts, int timed)
{
    pf_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_trusted_packet_sequence_id = 1;
    p.trusted_packet_sequence_id = CS_PF_SEQ;
    p.has_sequence_flags = 1;
    p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
    if (timed) {
        p.has_timestamp = 1;
        p.timestamp = pf_ts(ts);
    }
    return p;
}

/* The pending interned strings go with packet p. */
static void pf_attach_interned(cs_pf *c, pf_packet *p, pf_interned *in)
{
    if (c->npend == 0)
        return;
    perfetto__protos__interned_data__init(in);
    in->n_debug_annotation_string_values = c->npend;
    in->debug_annotation_string_values = c->pendp;
    p->interned_data = in;
}

/* iid of string s, interned by the packet being made when new: *iid. */
static uint64_t pf_intern(cs_pf *c, uint64_t *iid, const char *s)
{
    if (*iid)
        return *iid;
    if (c->npend == 2)
        return 0;
    *iid = ++c->next_str_iid;
    pf_istr *x = &c->pend[c->npend];
    perfetto__protos__interned_string__init(x);
    x->has_iid = 1;
    x->iid = *iid;
    x->has_str = 1;
    x->str.data = (uint8_t *)s;
    x->str.len = strlen(s);
    c->pendp[c->npend] = x;
    c->npend++;
    return *iid;
}

/* A track descriptor: name, under parent (0: none), with a process or a
 * thread when pid > 0 (tid > 0: a thread), or a counter in ns. */
static void pf_describe(cs_pf *c, uint64_t uuid, uint64_t parent, const char *name, int pid, int tid, int counter)
{
    pf_packet p = pf_packet_at(0, 0);
    pf_track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    t.has_uuid = 1;
    t.uuid = uuid;
    if (parent) {
        t.has_parent_uuid = 1;
        t.parent_uuid = parent;
    }
    t.name = (char *)name;
    if (pid > 0 && tid > 0) {
        td.has_pid = td.has_tid = 1;
        td.pid = pid;
        td.tid = tid;
        td.thread_name = (char *)name;
        t.thread = &td;
    } else if (pid > 0) {
        pd.has_pid = 1;
        pd.pid = pid;
        pd.process_name = (char *)name;
        t.process = &pd;
    }
    if (counter) {
        cd.has_unit = 1;
        cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_TIME_NS;
        t.counter = &cd;
    }
    p.track_descriptor = &t;
    pf_write(c, &p);
}

/* ---- strings ---- */

static uint64_t pf_cat(cs_pf *c, const char *name)
{
    for (size_t i = 0; i < c->ncats; i++)
        if (strcmp(c->cats[i], name) == 0)
            return i + 1;
    char *d = strdup(name);
    if (!d || CS_VEC_RESERVE(c->cats, c->capCats, c->ncats + 1) != 0) {
        free(d);
        c->oom = 1;
        return 0;
    }
    c->cats[c->ncats++] = d;
    return c->ncats;
}

static uint64_t pf_site_key(int rank, int64_t site)
{
    return ((uint64_t)(uint32_t)rank << 40) ^ ((uint64_t)site & 0xffffffffffull);
}

static int pf_site_cb(int rank, int64_t id, const char *label, void *arg)
{
    cs_pf *c = arg;
    char *d = label ? strdup(label) : NULL;
    if (!label)
        return 0;
    if (!d || CS_VEC_RESERVE(c->labels, c->capLabels, c->nlabels + 1) != 0 ||
        cs_map_put(&c->site_idx, pf_site_key(rank, id), (int64_t)c->nlabels) != 0) {
        free(d);
        return -1;
    }
    c->labels[c->nlabels++] = d;
    return 0;
}

/* The first packet: the incremental state cleared, the op names, the
 * categories and the annotation names interned. */
static void pf_first(cs_pf *c)
{
    size_t nn = (size_t)(c->nops > 0 ? c->nops : 0) + 1;
    Perfetto__Protos__EventName *names = calloc(nn, sizeof *names);
    Perfetto__Protos__EventName **namep = calloc(nn, sizeof *namep);
    Perfetto__Protos__EventCategory *cats = calloc(c->ncats + 1, sizeof *cats);
    Perfetto__Protos__EventCategory **catp = calloc(c->ncats + 1, sizeof *catp);
    Perfetto__Protos__DebugAnnotationName an[PF_A_N], *anp[PF_A_N];
    pf_istr *ops = calloc(nn, sizeof *ops);
    pf_istr **opp = calloc(nn, sizeof *opp);
    if (!names || !namep || !cats || !catp || !ops || !opp) {
        c->oom = 1;
        goto out;
    }
    size_t n = 0;
    /* The op names as annotation values too (the "op" annotation), iid =
     * op id + 1; strings interned later are numbered after them. */
    for (int i = 0; i < c->nops; i++) {
        perfetto__protos__interned_string__init(&ops[i]);
        ops[i].has_iid = ops[i].has_str = 1;
        ops[i].iid = (uint64_t)i + 1;
        ops[i].str.data = (uint8_t *)(c->ops[i].name[0] ? c->ops[i].name : "unknown");
        ops[i].str.len = strlen((char *)ops[i].str.data);
        opp[i] = &ops[i];
    }
    for (int i = 0; i < c->nops; i++) {
        perfetto__protos__event_name__init(&names[n]);
        names[n].has_iid = 1;
        names[n].iid = (uint64_t)i + 1;
        names[n].name = c->ops[i].name[0] ? c->ops[i].name : "unknown";
        namep[n] = &names[n];
        n++;
    }
    for (size_t i = 0; i < c->ncats; i++) {
        perfetto__protos__event_category__init(&cats[i]);
        cats[i].has_iid = 1;
        cats[i].iid = i + 1;
        cats[i].name = c->cats[i];
        catp[i] = &cats[i];
    }
    for (int i = 0; i < PF_A_N; i++) {
        perfetto__protos__debug_annotation_name__init(&an[i]);
        an[i].has_iid = 1;
        an[i].iid = (uint64_t)i + 1;
        an[i].name = (char *)pf_ann_names[i];
        anp[i] = &an[i];
    }
    pf_interned in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    in.n_event_names = n;
    in.event_names = namep;
    in.n_event_categories = c->ncats;
    in.event_categories = catp;
    in.n_debug_annotation_names = PF_A_N;
    in.debug_annotation_names = anp;
    in.n_debug_annotation_string_values = (size_t)(c->nops > 0 ? c->nops : 0);
    in.debug_annotation_string_values = opp;
    pf_packet p = pf_packet_at(0, 0);
    p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    p.interned_data = &in;
    pf_write(c, &p);
out:
    free(ops);
    free(opp);
    free(names);
    free(namep);
    free(cats);
    free(catp);
}

/* ---- the spans ---- */

static int pf_pid(int rank)
{
    return CS_PF_PID0 + rank * CS_PF_TIDS;
}

static uint64_t pf_proc_uuid(int rank)
{
    return ((uint64_t)(uint32_t)rank + 1) << 32;
}

/* The lane of a thread or a stream of a rank (NULL: out of memory). */
static cs_pf_lane *pf_lane(cs_pf *c, int rank, int kind, int64_t index)
{
    if (rank < 0)
        rank = 0;
    if ((size_t)rank >= c->nranks) {
        size_t n = (size_t)rank + 1;
        struct cs_pf_rank *a = realloc(c->ranks, n * sizeof *a);
        if (!a)
            return NULL;
        memset(a + c->nranks, 0, (n - c->nranks) * sizeof *a);
        c->ranks = a;
        c->nranks = n;
    }
    struct cs_pf_rank *r = &c->ranks[rank];
    uint64_t key = ((uint64_t)kind << 62) ^ ((uint64_t)index & 0x3fffffffffffffffull);
    int64_t i;
    if (cs_map_get(&r->lane_idx, key, &i))
        return &c->lanes[i];
    if (CS_VEC_RESERVE(c->lanes, c->capLanes, c->nlanes + 1) != 0 ||
        cs_map_put(&r->lane_idx, key, (int64_t)c->nlanes) != 0)
        return NULL;
    cs_pf_lane *l = &c->lanes[c->nlanes];
    memset(l, 0, sizeof *l);
    l->rank = rank;
    l->kind = kind;
    l->index = index;
    uint64_t slot = kind == (int)CS_PF_KIND_STREAM ? (uint64_t)r->nstreams++ : (uint64_t)index;
    l->base = pf_proc_uuid(rank) | (uint64_t)kind << 24 | ((slot & 0xfffffu) + 1);
    return &c->lanes[c->nlanes++];
}

/* The uuid of the level of lane l that [b, e] nests on (described when
 * first used): the first level whose slices so far began no later than b
 * and where [b, e] closes before the slice it opens in. */
static uint64_t pf_place(cs_pf *c, cs_pf_lane *l, int64_t b, int64_t e)
{
    int lv = 0;
    for (; lv < CS_PF_LEVELS; lv++) {
        cs_pf_level *x = &l->lv[lv];
        if (x->used && b < x->last_begin)
            continue;
        size_t d = x->depth;
        while (d > 0 && x->ends[d - 1] <= b)
            d--;
        if (d == 0 || (x->ends[d - 1] >= e && d < CS_PF_DEPTH)) {
            x->depth = d;
            x->ends[d] = e;
            x->depth = d + 1;
            x->last_begin = b;
            x->used = 1;
            break;
        }
    }
    if (lv == CS_PF_LEVELS)
        lv = CS_PF_LEVELS - 1; /* overlaps beyond the last level: shown as the viewer nests them */
    uint64_t uuid = l->base | (uint64_t)lv << 20;
    if (!l->lv[lv].described) {
        char name[96];
        l->lv[lv].described = 1;
        if (l->kind == (int)CS_PF_KIND_STREAM) {
            if (l->index <= 0)
                snprintf(name, sizeof name, "GPU default stream");
            else
                snprintf(name, sizeof name, "GPU stream 0x%" PRIx64, (uint64_t)l->index);
        } else
            snprintf(name, sizeof name, "thread %" PRId64, l->index);
        if (lv > 0) {
            size_t n = strlen(name);
            snprintf(name + n, sizeof name - n, " (overlapping calls %d)", lv);
        }
        int thread = l->kind == (int)CS_PF_KIND_THREAD && lv == 0 && l->index >= 0 && l->index < CS_PF_TIDS;
        pf_describe(c, uuid, pf_proc_uuid(l->rank), name, thread ? pf_pid(l->rank) : 0,
                    thread ? pf_pid(l->rank) + (int)l->index : 0, 0);
    }
    return uuid;
}

typedef struct cs_pf_anns {
    pf_ann a[PF_A_N];
    pf_ann *p[PF_A_N];
    size_t n;
} cs_pf_anns;

static pf_ann *pf_ann_add(cs_pf_anns *x, int name)
{
    pf_ann *a = &x->a[x->n];
    perfetto__protos__debug_annotation__init(a);
    a->has_name_iid = 1;
    a->name_iid = (uint64_t)name + 1;
    x->p[x->n++] = a;
    return a;
}

static void pf_ann_int(cs_pf_anns *x, int name, int64_t v)
{
    pf_ann *a = pf_ann_add(x, name);
    a->has_int_value = 1;
    a->int_value = v;
}

static void pf_ann_true(cs_pf_anns *x, int name)
{
    pf_ann *a = pf_ann_add(x, name);
    a->has_bool_value = 1;
    a->bool_value = 1;
}

static void pf_ann_istr(cs_pf_anns *x, int name, uint64_t iid)
{
    pf_ann *a = pf_ann_add(x, name);
    a->has_string_value_iid = 1;
    a->string_value_iid = iid;
}

/* The annotations of a span (chrome's args, docs/interop.md). */
static void pf_span_anns(cs_pf *c, const cs_span *sp, cs_pf_anns *x)
{
    const cs_op_row *op = sp->op >= 0 && sp->op < c->nops && c->ops[sp->op].name[0] ? &c->ops[sp->op] : NULL;
    if (op)
        pf_ann_istr(x, PF_A_OP, (uint64_t)sp->op + 1); /* op names: interned by the first packet */
    else
        pf_ann_add(x, PF_A_OP)->string_value = "unknown";
    pf_ann_int(x, PF_A_SPAN, sp->id);
    if (sp->comm != 0) {
        int64_t iid;
        if (!cs_map_get(&c->comm_iid, (uint64_t)sp->comm, &iid)) {
            char buf[CS_COMMS_DISPLAY_MAX];
            const char *name = cs_store_comms_name(&c->comms, sp->comm, buf, sizeof buf);
            /* Names the store does not know are made on the spot: kept. */
            size_t k = c->nlabels;
            char *d = strdup(name);
            if (!d || CS_VEC_RESERVE(c->labels, c->capLabels, k + 1) != 0) {
                free(d);
                c->oom = 1;
                return;
            }
            c->labels[c->nlabels++] = d;
            uint64_t v = 0;
            iid = (int64_t)pf_intern(c, &v, d);
            if (cs_map_put(&c->comm_iid, (uint64_t)sp->comm, iid) != 0)
                c->oom = 1;
        }
        pf_ann_istr(x, PF_A_COMM, (uint64_t)iid);
    }
    if (sp->seq >= 0 && (sp->flags & CS_F_HAS_SEQ))
        pf_ann_int(x, PF_A_SEQ, sp->seq);
    if (sp->bytes > 0)
        pf_ann_int(x, PF_A_BYTES, sp->bytes);
    if (sp->peer >= 0 && (sp->flags & CS_F_HAS_PEER))
        pf_ann_int(x, PF_A_PEER, sp->peer);
    if (sp->peer2 >= 0)
        pf_ann_int(x, PF_A_PEER2, sp->peer2);
    if (sp->tag >= 0)
        pf_ann_int(x, PF_A_TAG, sp->tag);
    int64_t li;
    if (sp->callsite != 0 && cs_map_get(&c->site_idx, pf_site_key(sp->rank, sp->callsite), &li)) {
        uint64_t iid = pf_intern(c, &c->label_iid[li], c->labels[li]);
        if (iid)
            pf_ann_istr(x, PF_A_CALLSITE, iid);
    }
    if ((sp->flags & CS_F_NONBLOCKING) || (op && op->nonblocking))
        pf_ann_true(x, PF_A_NONBLOCKING);
    if (sp->flags & CS_F_ERROR) {
        pf_ann_true(x, PF_A_FAILED);
        pf_ann_int(x, PF_A_RC, sp->rc);
    }
    if (sp->flags & CS_F_FUSED)
        pf_ann_true(x, PF_A_FUSED);
    if (sp->flags & CS_F_FUSE_MEMBER)
        pf_ann_true(x, PF_A_FUSE_MEMBER);
}

/* A slice [b, e] on track uuid: its begin event (name, category,
 * annotations) and its end. */
/* The flows a slice starts (out) and ends (in). */
typedef struct cs_pf_flows {
    uint64_t *out, in[2];
    size_t nout, nin;
} cs_pf_flows;

static void pf_slice(cs_pf *c, uint64_t uuid, uint64_t name_iid, uint64_t cat, cs_pf_anns *x, cs_pf_flows *fl,
                     int64_t b, int64_t e)
{
    pf_packet p = pf_packet_at(b, 1);
    pf_event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    pf_interned in;
    ev.has_type = 1;
    ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    ev.has_track_uuid = 1;
    ev.track_uuid = uuid;
    ev.has_name_iid = 1;
    ev.name_iid = name_iid;
    ev.n_category_iids = 1;
    ev.category_iids = &cat;
    ev.n_debug_annotations = x->n;
    ev.debug_annotations = x->p;
    if (fl) {
        ev.n_flow_ids = fl->nout;
        ev.flow_ids = fl->out;
        ev.n_terminating_flow_ids = fl->nin;
        ev.terminating_flow_ids = fl->in;
    }
    p.track_event = &ev;
    pf_attach_interned(c, &p, &in);
    pf_write(c, &p);
    c->npend = 0;
    pf_packet q = pf_packet_at(e > b ? e : b, 1);
    q.has_sequence_flags = 0;
    pf_event end = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    end.has_type = 1;
    end.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    end.has_track_uuid = 1;
    end.track_uuid = uuid;
    q.track_event = &end;
    pf_write(c, &q);
}

/* A counter sample (ns) on track uuid. */
static void pf_counter(cs_pf *c, uint64_t uuid, int64_t t, int64_t v)
{
    pf_packet p = pf_packet_at(t, 1);
    pf_event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    ev.has_type = 1;
    ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
    ev.has_track_uuid = 1;
    ev.track_uuid = uuid;
    ev.has_counter_value = 1;
    ev.counter_value = v;
    p.track_event = &ev;
    pf_write(c, &p);
    c->stats->analysis++;
}

/* A span (its slice starting the flows it is the source of and ending
 * those it is the destination of), its GPU times and its wait (a counter
 * on its process). */
static int pf_span_cb(const cs_span *sp, const cs_export_links *ln, void *arg)
{
    cs_pf *c = arg;
    cs_pf_lane *l = pf_lane(c, sp->rank, CS_PF_KIND_THREAD, sp->tid);
    if (!l)
        return 1;
    uint64_t uuid = pf_place(c, l, sp->begin_ns, sp->end_ns);
    cs_pf_flows fl = { .nout = 0 };
    if (CS_VEC_RESERVE(c->flow_out, c->capFlowOut, ln->npeers + 1) != 0)
        return 1;
    fl.out = c->flow_out;
    if (ln->p2p_out)
        fl.out[fl.nout++] = ln->p2p_out;
    if (ln->p2p_in)
        fl.in[fl.nin++] = ln->p2p_in;
    /* A collective instance: an arrow from the last rank to enter it to
     * every other member. */
    if (ln->coll && ln->coll_last)
        for (size_t i = 0; i < ln->npeers; i++)
            fl.out[fl.nout++] = CS_EXPORT_COLL_FLOW(ln->coll_inst, ln->peers[i]);
    else if (ln->coll)
        fl.in[fl.nin++] = CS_EXPORT_COLL_FLOW(ln->coll_inst, sp->rank);
    c->stats->flows += (int64_t)fl.nout;
    cs_pf_anns x = { .n = 0 };
    pf_span_anns(c, sp, &x);
    int valid = sp->op >= 0 && sp->op < c->nops;
    uint64_t name = valid ? (uint64_t)sp->op + 1 : 0, cat = valid ? c->op_cat[sp->op] : c->cat_unknown;
    pf_slice(c, uuid, name, cat, &x, &fl, sp->begin_ns, sp->end_ns);
    c->stats->spans++;
    if (sp->gpu_begin_ns != 0 && sp->gpu_end_ns != 0) {
        cs_pf_lane *g = pf_lane(c, sp->rank, CS_PF_KIND_STREAM, sp->stream < 0 ? 0 : sp->stream);
        if (!g)
            return 1;
        uint64_t gu = pf_place(c, g, sp->gpu_begin_ns, sp->gpu_end_ns);
        cs_pf_anns y = { .n = 0 };
        pf_span_anns(c, sp, &y);
        pf_ann_true(&y, PF_A_GPU);
        pf_slice(c, gu, name, c->cat_gpu, &y, NULL, sp->gpu_begin_ns, sp->gpu_end_ns);
    }
    if (ln->wait_ns > 0 && c->analysed) {
        uint64_t wu = pf_proc_uuid(sp->rank) | CS_PF_KIND_WAIT << 24 | 1u;
        int64_t seen;
        if (!cs_map_get(&c->waits_described, wu, &seen)) {
            pf_describe(c, wu, pf_proc_uuid(sp->rank), "wait for the last rank (ns)", 0, 0, 1);
            if (cs_map_put(&c->waits_described, wu, 1) != 0)
                return 1;
        }
        pf_counter(c, wu, sp->begin_ns, ln->wait_ns);
        pf_counter(c, wu, sp->begin_ns + ln->wait_ns, 0);
    }
    return c->oom;
}

/* Each rank's cumulative imposed wait (the others' waits in the instances
 * it entered last) as a counter on the analysis process. */
static int pf_imposed_cb(int rank, int64_t t, int64_t w, void *arg)
{
    cs_pf *c = arg;
    if (!c->analysed)
        return 0;
    uint64_t uuid = CS_PF_IMPOSED_UUID + (uint64_t)(uint32_t)rank;
    if (rank != c->imposed_rank) {
        char name[64];
        c->imposed_rank = rank;
        c->imposed_sum = 0;
        snprintf(name, sizeof name, "imposed wait, rank %d (ns, cumulative)", rank);
        pf_describe(c, uuid, CS_PF_ANALYSIS_UUID, name, 0, 0, 1);
    }
    c->imposed_sum += w;
    pf_counter(c, uuid, t, c->imposed_sum);
    return c->oom;
}

/* ---- the analysis ---- */

/* A slice of the analysis with a literal name and category and
 * annotations by name. */
typedef struct cs_pf_named {
    pf_ann a[12];
    pf_ann *p[12];
    size_t n;
} cs_pf_named;

static pf_ann *pf_named_add(cs_pf_named *x, const char *name)
{
    pf_ann *a = &x->a[x->n];
    perfetto__protos__debug_annotation__init(a);
    a->name = (char *)name;
    x->p[x->n++] = a;
    return a;
}

static void pf_named_int(cs_pf_named *x, const char *name, int64_t v)
{
    pf_ann *a = pf_named_add(x, name);
    a->has_int_value = 1;
    a->int_value = v;
}

static void pf_named_str(cs_pf_named *x, const char *name, const char *v)
{
    pf_named_add(x, name)->string_value = (char *)(v ? v : "");
}

static void pf_named_slice(cs_pf *c, uint64_t uuid, const char *name, const char *cat, cs_pf_named *x, int64_t b,
                           int64_t e)
{
    pf_packet p = pf_packet_at(b, 1);
    pf_event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    char *cats[1] = { (char *)cat };
    ev.has_type = 1;
    ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    ev.has_track_uuid = 1;
    ev.track_uuid = uuid;
    ev.name = (char *)name;
    ev.n_categories = 1;
    ev.categories = cats;
    ev.n_debug_annotations = x->n;
    ev.debug_annotations = x->p;
    p.track_event = &ev;
    pf_write(c, &p);
    pf_packet q = pf_packet_at(e > b ? e : b, 1);
    pf_event end = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    end.has_type = 1;
    end.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    end.has_track_uuid = 1;
    end.track_uuid = uuid;
    q.track_event = &end;
    pf_write(c, &q);
    c->stats->analysis++;
}

static int pf_step_cb(const cs_step_row *x, void *arg)
{
    cs_pf *c = arg;
    char name[64];
    cs_pf_named a = { .n = 0 };
    snprintf(name, sizeof name, "step %" PRId64, x->step);
    pf_named_int(&a, "step", x->step);
    pf_named_int(&a, "time_ns", x->time_ns);
    if (x->slowest_rank >= 0) {
        pf_named_int(&a, "slowest_rank", x->slowest_rank);
        pf_named_int(&a, "whatif_ns", x->whatif_ns);
    }
    pf_named_slice(c, CS_PF_STEPS_UUID, name, "step", &a, x->begin_ns, x->end_ns);
    return c->oom;
}

static int pf_verdict_cb(const cs_straggler *x, void *arg)
{
    cs_pf *c = arg;
    char name[160], track[200], buf[CS_COMMS_DISPLAY_MAX];
    uint64_t uuid = CS_PF_VERDICT_UUID + (uint64_t)c->nverdicts++;
    const char *comm = x->comm != 0 ? cs_store_comms_name(&c->comms, x->comm, buf, sizeof buf) : NULL;
    if (x->src >= 0 && x->dst >= 0)
        snprintf(name, sizeof name, "%s: rank %d -> rank %d", x->kind, x->src, x->dst);
    else if (x->rank >= 0)
        snprintf(name, sizeof name, "%s straggler: rank %d", x->kind, x->rank);
    else if (comm)
        snprintf(name, sizeof name, "%s: %s", x->kind, comm);
    else
        snprintf(name, sizeof name, "%s", x->kind);
    snprintf(track, sizeof track, "verdict %d: %s", c->nverdicts, name);
    pf_describe(c, uuid, CS_PF_ANALYSIS_UUID, track, 0, 0, 0);
    cs_pf_named a = { .n = 0 };
    pf_named_str(&a, "kind", x->kind);
    if (x->rank >= 0)
        pf_named_int(&a, "rank", x->rank);
    if (x->src >= 0 && x->dst >= 0) {
        pf_named_int(&a, "src", x->src);
        pf_named_int(&a, "dst", x->dst);
    }
    if (comm)
        pf_named_str(&a, "comm", comm);
    pf_named_int(&a, "first_step", x->first_step);
    pf_named_int(&a, "last_step", x->last_step);
    pf_named_int(&a, "lateness_ns", x->lateness_ns);
    pf_named_int(&a, "cost_ns", x->cost_ns);
    pf_named_str(&a, "evidence", x->evidence);
    pf_named_slice(c, uuid, name, "verdict", &a, x->begin_ns, x->end_ns);
    return c->oom;
}

static int pf_analysis(cs_pf *c, char *err, size_t errlen)
{
    if (cs_store_analysis_exists(c->st) != 1)
        return 0;
    pf_describe(c, CS_PF_ANALYSIS_UUID, 0, "analysis", CS_PF_ANALYSIS_PID, 0, 0);
    pf_describe(c, CS_PF_STEPS_UUID, CS_PF_ANALYSIS_UUID, "steps", 0, 0, 0);
    c->analysed = 1;
    if (cs_store_steps_list(c->st, pf_step_cb, c) < 0 || cs_store_stragglers(c->st, pf_verdict_cb, c) < 0)
        return cs_store_sql_fail(err, errlen, "%s: cannot read the stored analysis (damaged?)", cs_store_path(c->st));
    return 0;
}

/* ---- the file ---- */

int cs_export_perfetto(FILE *file, cs_store *st, cs_export_stats *stats, char *err, size_t errlen)
{
    cs_export_out out;
    cs_pf c = { .o = &out, .st = st, .stats = stats };
    cs_proc *procs = NULL;
    int nproc = 0, rc = -1;
    memset(stats, 0, sizeof *stats);
    if (cs_export_out_init(&out, file) != 0) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        return -1;
    }
    if (cs_store_procs(st, &procs, &nproc) != 0 || cs_store_ops(st, &c.ops, &c.nops) != 0 ||
        cs_store_comms_load(st, &c.comms) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the processes, ops or communicators (damaged?)",
                          cs_store_path(st));
        goto out;
    }
    if (c.nops > 0 && !(c.op_cat = calloc((size_t)c.nops, sizeof *c.op_cat)))
        c.oom = 1;
    for (int i = 0; i < c.nops && !c.oom; i++)
        c.op_cat[i] = pf_cat(&c, c.ops[i].kind[0] ? c.ops[i].kind : "unknown");
    c.cat_gpu = pf_cat(&c, "gpu");
    c.cat_unknown = pf_cat(&c, "unknown");
    if (c.oom) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    if (cs_store_callsite_labels(st, pf_site_cb, &c) != 0) {
        cs_store_sql_fail(err, errlen, "%s: cannot read the call sites (damaged?)", cs_store_path(st));
        goto out;
    }
    /* Room for the iids of the communicators' names kept later. */
    if (!(c.label_iid = calloc(c.nlabels + 1, sizeof *c.label_iid))) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    c.next_str_iid = (uint64_t)(c.nops > 0 ? c.nops : 0);
    pf_first(&c);
    for (int i = 0; i < nproc; i++) {
        if (i > 0 && procs[i].rank == procs[i - 1].rank)
            continue;
        char name[128];
        snprintf(name, sizeof name, "rank %d (%s)", procs[i].rank, procs[i].host[0] ? procs[i].host : "unknown host");
        pf_describe(&c, pf_proc_uuid(procs[i].rank), 0, name, pf_pid(procs[i].rank), 0, 0);
    }
    c.imposed_rank = -1;
    if (pf_analysis(&c, err, errlen) != 0 || cs_export_pass(st, pf_span_cb, pf_imposed_cb, &c, err, errlen) != 0)
        goto out;
    if (c.oom) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        goto out;
    }
    rc = 0;
out:
    /* A write error is the caller's to find, through ferror. */
    if (cs_export_out_done(&out) != 0 && rc == 0 && !ferror(file)) {
        cs_store_sql_fail(err, errlen, "export: out of memory");
        rc = -1;
    }
    free(procs);
    free(c.ops);
    free(c.op_cat);
    cs_store_comms_free(&c.comms);
    for (size_t i = 0; i < c.ncats; i++)
        free(c.cats[i]);
    free(c.cats);
    for (size_t i = 0; i < c.nlabels; i++)
        free(c.labels[i]);
    free(c.labels);
    free(c.label_iid);
    free(c.lanes);
    free(c.flow_out);
    for (size_t i = 0; i < c.nranks; i++)
        cs_map_free(&c.ranks[i].lane_idx);
    free(c.ranks);
    cs_map_free(&c.site_idx);
    cs_map_free(&c.comm_iid);
    cs_map_free(&c.waits_described);
    return rc;
}
