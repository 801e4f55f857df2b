/* nccl_wrap.c: the out-of-line parts of the NCCL wrappers: finding the real
 * functions, communicator identities (see nccl_wrap.h) and groups. */
#include "config.h"
#include "interpose/nccl_wrap.h"
#include "libtrace/dtypes.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *cs_nccl_real_fns[CS_OP_COUNT];
__thread cs_nccl_comm *cs_nccl_comm_last __attribute__((tls_model("initial-exec")));

/* NCCL's API symbols are weak: the next object's, else a libnccl loaded
 * RTLD_LOCAL (PyTorch), else its strong pnccl* alias. */
void *cs_nccl_resolve(int op)
{
    const char *name = cs_nccl_real_names[op];
    if (!name)
        return NULL;
    int saved = errno;
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        static void *lib;
        if (!lib)
            lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
        if (lib) {
            f = dlsym(lib, name);
            if (!f) {
                char p[96];
                snprintf(p, sizeof p, "p%s", name);
                f = dlsym(lib, p);
            }
        }
    }
    if (f)
        __atomic_store_n(&cs_nccl_real_fns[op], f, __ATOMIC_RELAXED);
    errno = saved;
    return f;
}

int cs_nccl_missing(int op)
{
    static int warned[CS_OP_COUNT];
    cs_warn_once(&warned[op], "no NCCL library provides %s; the call fails with ncclSystemError", cs_ops[op].name);
    return ncclSystemError;
}

/* Apply mode's NCCL engine, when its module registered it (nccl_wrap.h). */
const cs_nccl_fuse_ops *cs_nccl_fuse;

/* ---- communicators ---- */

#define CS_NCOMM_SLOTS 1024u

static cs_nccl_comm *cs_ncomms[CS_NCOMM_SLOTS];
static uint32_t cs_ncomm_next;
static pthread_mutex_t cs_ncomm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    ncclResult_t (*count)(const ncclComm_t, int *);
    ncclResult_t (*user_rank)(const ncclComm_t, int *);
    int ready;
} N;

static uint64_t cs_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    return h;
}

static uint64_t cs_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = 0;
        memcpy(&v, b + i, n - i < 8 ? n - i : 8);
        h = cs_mix(h, v);
    }
    return h;
}

static unsigned cs_ncomm_slot(uint64_t key)
{
    return (unsigned)(cs_mix(3, key) & (CS_NCOMM_SLOTS - 1));
}

cs_nccl_comm *cs_nccl_comm_find(ncclComm_t comm)
{
    uint64_t key = (uint64_t)(uintptr_t)comm;
    if (!key)
        return NULL;
    unsigned s = cs_ncomm_slot(key);
    for (unsigned i = 0; i < CS_NCOMM_SLOTS; i++) {
        cs_nccl_comm *m = __atomic_load_n(&cs_ncomms[(s + i) & (CS_NCOMM_SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (!m)
            return NULL;
        if (m->key == key)
            return m;
    }
    return NULL;
}

static int cs_nccl_helpers(void)
{
    if (!N.ready) {
        *(void **)&N.count = dlsym(RTLD_NEXT, "ncclCommCount");
        *(void **)&N.user_rank = dlsym(RTLD_NEXT, "ncclCommUserRank");
        if (!N.count || !N.user_rank) {
            void *lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
            if (lib) {
                *(void **)&N.count = dlsym(lib, "ncclCommCount");
                *(void **)&N.user_rank = dlsym(lib, "ncclCommUserRank");
            }
        }
        N.ready = N.count && N.user_rank ? 1 : -1;
    }
    return N.ready > 0;
}

size_t cs_nccl_comm_extra;

static cs_nccl_comm *cs_ncomm_add_inner(ncclComm_t comm, uint64_t id, uint64_t parent, int how, int size, int rank,
                                        uint32_t args, int32_t color);

/* Register a communicator and write its COMMDEF record; errno as it was. */
static cs_nccl_comm *cs_ncomm_add(ncclComm_t comm, uint64_t id, uint64_t parent, int how, int size, int rank,
                                  uint32_t args, int32_t color)
{
    int saved = errno;
    cs_nccl_comm *m = cs_ncomm_add_inner(comm, id, parent, how, size, rank, args, color);
    errno = saved;
    return m;
}

static cs_nccl_comm *cs_ncomm_add_inner(ncclComm_t comm, uint64_t id, uint64_t parent, int how, int size, int rank,
                                        uint32_t args, int32_t color)
{
    uint64_t key = (uint64_t)(uintptr_t)comm;
    if (!key)
        return NULL;
    if (cs_nccl_helpers()) {
        /* Ask the library: it knows (the arguments may be -1 or wrong). */
        int n = 0, r = -1;
        if (N.count(comm, &n) == ncclSuccess && n > 0)
            size = n;
        if (N.user_rank(comm, &r) == ncclSuccess && r >= 0)
            rank = r;
    }
    pthread_mutex_lock(&cs_ncomm_lock);
    unsigned s = cs_ncomm_slot(key);
    cs_nccl_comm **slot = NULL;
    for (unsigned i = 0; i < CS_NCOMM_SLOTS; i++) {
        cs_nccl_comm **p = &cs_ncomms[(s + i) & (CS_NCOMM_SLOTS - 1)];
        if (!*p || (*p)->key == 0 || (*p)->key == key) {
            slot = p;
            break;
        }
    }
    size_t off = (sizeof(cs_nccl_comm) + 15) & ~(size_t)15, extra = cs_nccl_comm_extra;
    cs_nccl_comm *m = slot ? calloc(1, off + extra) : NULL;
    if (!m) {
        pthread_mutex_unlock(&cs_ncomm_lock);
        return NULL;
    }
    m->ext = extra ? (char *)m + off : NULL;
    id &= 0x7fffffffffffffffull; /* SQLite integers are signed */
    m->key = key;
    m->id = id ? id : 1;
    m->local = CS_NCCL_LOCAL_BASE + (cs_ncomm_next++ & 0x7fff);
    m->size = (uint32_t)(size > 0 ? size : 0);
    m->rank = rank;
    __atomic_store_n(slot, m, __ATOMIC_RELEASE); /* a destroyed one leaks: it is tiny */
    pthread_mutex_unlock(&cs_ncomm_lock);

    cs_core_emit_commdef(how, m->id, parent, m->local, m->size, m->rank, args, color, 0);
    return m;
}

static void cs_nccl_created(cs_gpu_call *c, cs_nccl_comm *m)
{
    if (!m)
        return;
    /* A communicator constructor's span names the new communicator, unless
     * it has a parent (split, shrink): then the parent, like MPI's. */
    if (!c->comm) {
        c->comm = m;
        c->rec.comm = (uint16_t)m->local;
        c->flags |= CS_F_HAS_COMM;
    }
    c->rec.count = m->size;
}

void cs_nccl_init_uid(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *newcomm, int nranks, const ncclUniqueId *id,
                      int rank)
{
    if (rc != ncclSuccess || !newcomm || !id)
        return;
    uint64_t h = cs_hash_bytes(0x4e43434cull /* NCCL */, id->internal, sizeof id->internal);
    cs_nccl_created(c, cs_ncomm_add(*newcomm, h, 0, CS_COMM_NCCL, nranks, rank, 0, 0));
}

void cs_nccl_init_ids(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *newcomm, int nranks, int nid,
                      const ncclUniqueId *ids, int rank)
{
    if (rc != ncclSuccess || !newcomm || !ids || nid <= 0)
        return;
    uint64_t h = 0x4e43434cull;
    for (int i = 0; i < nid; i++)
        h = cs_hash_bytes(h, ids[i].internal, sizeof ids[i].internal);
    cs_nccl_created(c, cs_ncomm_add(*newcomm, h, 0, CS_COMM_NCCL, nranks, rank, 0, 0));
}

void cs_nccl_init_all(cs_gpu_call *c, ncclResult_t rc, ncclComm_t *comms, int ndev, const int *devlist)
{
    static uint32_t calls;
    uint32_t nth = __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    if (rc != ncclSuccess || !comms || ndev <= 0)
        return;
    /* One process holds every member: the id only has to be unique here,
     * and the same for all of them. */
    uint64_t h = cs_mix(cs_mix(0x414c4cull /* ALL */, (uint64_t)getpid()), nth);
    for (int i = 0; i < ndev; i++)
        h = cs_mix(h, (uint64_t)(devlist ? devlist[i] : i));
    for (int i = 0; i < ndev; i++)
        cs_nccl_created(c, cs_ncomm_add(comms[i], h, 0, CS_COMM_NCCL, ndev, i, 0, 0));
}

static void cs_nccl_derived(cs_gpu_call *c, ncclResult_t rc, ncclComm_t parent, int color, ncclComm_t *newcomm)
{
    cs_nccl_comm *p = cs_nccl_comm_find(parent);
    if (!p)
        return;
    /* Every member of the parent counts the split, in the new
     * communicator or not, so the counters agree across the job. */
    uint32_t nth = __atomic_fetch_add(&p->splits, 1, __ATOMIC_RELAXED);
    if (rc != ncclSuccess || !newcomm || !*newcomm)
        return;
    uint64_t id = cs_mix(cs_mix(cs_mix(p->id, 0x53504c54ull /* SPLT */), nth), (uint64_t)(uint32_t)color);
    cs_nccl_created(
        c, cs_ncomm_add(*newcomm, id, p->id, CS_COMM_NCCL_SPLIT, 0, -1, color >= 0 ? CS_COMM_ARG_COLOR : 0, color));
}

void cs_nccl_init_split(cs_gpu_call *c, ncclResult_t rc, ncclComm_t parent, int color, ncclComm_t *newcomm)
{
    cs_nccl_derived(c, rc, parent, color, newcomm);
}

void cs_nccl_init_shrink(cs_gpu_call *c, ncclResult_t rc, ncclComm_t parent, ncclComm_t *newcomm)
{
    cs_nccl_derived(c, rc, parent, -1, newcomm);
}

void cs_nccl_comm_freed(cs_gpu_call *c, ncclComm_t comm, ncclResult_t rc)
{
    (void)c;
    if (rc != ncclSuccess)
        return;
    cs_nccl_comm *m = cs_nccl_comm_find(comm);
    if (!m)
        return;
    pthread_mutex_lock(&cs_ncomm_lock);
    m->key = 0; /* the handle may be reused by the next communicator */
    pthread_mutex_unlock(&cs_ncomm_lock);
    if (cs_nccl_comm_last == m)
        cs_nccl_comm_last = NULL;
    if (CS_UNLIKELY(cs_nccl_fuse != NULL))
        cs_nccl_fuse->comm_freed(m);
}

/* ---- groups ---- */

static uint32_t cs_grp_next;

void cs_nccl_group_start(cs_gpu_call *c)
{
    if (cs_gpu_t.depth++ == 0)
        cs_gpu_t.grp = __atomic_add_fetch(&cs_grp_next, 1, __ATOMIC_RELAXED);
    c->x.grp = cs_gpu_t.grp;
}

void cs_nccl_group_started(cs_gpu_call *c, ncclResult_t rc)
{
    (void)c;
    (void)rc;
}

/* Apply mode: the held calls are issued (fused where safe) inside the
 * group, before its GPU begin events are recorded, and unpacked after the
 * real ncclGroupEnd and its end events (nccl_fuse.h). */
void cs_nccl_group_end_pre(cs_gpu_call *c)
{
    (void)c;
    if (cs_gpu_t.depth == 1) {
        if (CS_UNLIKELY(cs_nccl_fuse != NULL) && cs_nccl_fuse->held())
            cs_nccl_fuse->flush();
        cs_gputime_group_end_pre();
    }
}

ncclResult_t cs_nccl_group_end_post(cs_gpu_call *c, ncclResult_t rc)
{
    (void)c;
    if (cs_gpu_t.depth > 0 && --cs_gpu_t.depth == 0) {
        cs_gputime_group_end_post(rc == ncclSuccess || rc == ncclInProgress);
        cs_gpu_t.grp = 0;
        if (CS_UNLIKELY(cs_nccl_fuse != NULL))
            rc = cs_nccl_fuse->finish(rc);
    }
    return rc;
}
