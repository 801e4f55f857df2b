/* mpi_wrap.c: the out-of-line parts of the MPI wrappers: finding the real
 * functions, communicator identities, datatypes, requests and completion. */
#include "config.h"
#include "interpose/mpi_wrap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#if defined(OPEN_MPI) && OPEN_MPI
#define CS_MPI_FLAVOR "openmpi"
static const char *const cs_libmpi_names[] = { "libmpi.so.40", "libmpi.so", NULL };
struct cs_ompi_consts cs_ompi;
#else
#define CS_MPI_FLAVOR "mpich"
static const char *const cs_libmpi_names[] = { "libmpich.so.12", "libmpi.so.12", "libmpich.so", NULL };
#endif

void *cs_mpi_real_fns[CS_OP_COUNT];
/* Apply mode's MPI engine, when its module registered it (mpi_wrap.h). */
const cs_mpi_fuse_ops *cs_mpi_fuse;
int cs_mpi_fuse_npending, cs_mpi_fuse_nflight, cs_mpi_fuse_armed, cs_mpi_fuse_timing, cs_mpi_fuse_closing;
uint64_t cs_mpi_fuse_busy;
int cs_mpi_test_p2p_src = -1, cs_mpi_test_p2p_dst = -1, cs_mpi_test_p2p_us;
int cs_mpi_test_comm_local = -1, cs_mpi_test_comm_us;

void cs_mpi_test_stall_us(int us)
{
    uint64_t end = cs__mono_ns() + (uint64_t)us * 1000u;
    while (cs__mono_ns() < end)
        ;
}

/* The watchdog's abort: MPI_Abort on the world ends every rank. */
static void cs_mpi_wd_abort(int code)
{
    int (*f)(MPI_Comm, int) = (int (*)(MPI_Comm, int))cs_mpi_libsym("PMPI_Abort");
    if (f && cs_core_rank() >= 0)
        f(MPI_COMM_WORLD, code);
}

static void cs_mpi_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    cs_wd_abort_hook = cs_mpi_wd_abort;
    cs_mpi_test_p2p_src = s->test_p2p_src;
    cs_mpi_test_p2p_dst = s->test_p2p_dst;
    cs_mpi_test_p2p_us = s->test_p2p_src >= 0 ? s->test_p2p_us : 0;
    cs_mpi_test_comm_local = s->test_comm_local;
    cs_mpi_test_comm_us = s->test_comm_local >= 0 ? s->test_comm_us : 0;
    if (cs_mpi_test_p2p_us > 0 || cs_mpi_test_comm_us > 0)
        __atomic_store_n(&cs_core_hooks, 1, __ATOMIC_RELEASE);
}

const cs_module cs_mpi_module = {
    .name = "mpi",
    .flavor = CS_MPI_FLAVOR,
    .start = cs_mpi_start,
};

/* dlsym in the objects after ours, else in a libmpi loaded RTLD_LOCAL. */
static void *cs_mpi_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f)
        return f;
    static void *lib;
    if (!lib)
        for (int i = 0; cs_libmpi_names[i] && !lib; i++)
            lib = dlopen(cs_libmpi_names[i], RTLD_LAZY | RTLD_NOLOAD);
    return lib ? dlsym(lib, name) : NULL;
}

#if defined(OPEN_MPI) && OPEN_MPI
/* Data symbols: the executable may hold a copy-relocated instance that
 * libmpi itself uses, so search the global scope first. */
static void *cs_mpi_data_sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    return p ? p : cs_mpi_sym(name);
}
#endif

void *cs_mpi_libsym(const char *name)
{
    return cs_mpi_sym(name);
}
#if defined(OPEN_MPI) && OPEN_MPI
void *cs_mpi_libdata(const char *name)
{
    return cs_mpi_data_sym(name);
}
#else
void *cs_mpi_libdata(const char *name)
{
    return cs_mpi_sym(name);
}
#endif

static void *cs_mpi_resolve__inner(int op);
void *cs_mpi_resolve(int op)
{
    int saved = errno;
    void *r = cs_mpi_resolve__inner(op);
    errno = saved;
    return r;
}

static void *cs_mpi_resolve__inner(int op)
{
    const char *name = cs_mpi_real_names[op];
    void *f = name ? cs_mpi_sym(name) : NULL;
    if (!f && name)
        f = cs_mpi_sym(name + 1); /* "MPI_X" where no PMPI_X is exported */
    if (f)
        __atomic_store_n(&cs_mpi_real_fns[op], f, __ATOMIC_RELAXED);
    return f;
}

int cs_mpi_missing(int op)
{
    static int warned[CS_OP_COUNT];
    cs_warn_once(&warned[op], "the MPI library has no %s; the call fails with MPI_ERR_OTHER", cs_ops[op].name);
    return MPI_ERR_OTHER;
}

/* Helper functions of the MPI library we call ourselves (never traced). */
static struct {
    int (*comm_rank)(MPI_Comm, int *);
    int (*comm_size)(MPI_Comm, int *);
    int (*comm_group)(MPI_Comm, MPI_Group *);
    int (*group_translate_ranks)(MPI_Group, int, CS_CONST int[], MPI_Group, int[]);
    int (*group_free)(MPI_Group *);
    int (*group_size)(MPI_Group, int *);
    int (*type_size)(MPI_Datatype, int *);
    int (*type_get_name)(MPI_Datatype, char *, int *);
    int (*initialized)(int *);
    int ready;
} R;

#define CS_RSYM(field, name) (*(void **)&R.field = cs_mpi_sym(name))

static int cs_mpi_helpers(void)
{
    if (R.ready)
        return R.ready > 0;
    int ok = CS_RSYM(comm_rank, "PMPI_Comm_rank") && CS_RSYM(comm_size, "PMPI_Comm_size") &&
             CS_RSYM(comm_group, "PMPI_Comm_group") && CS_RSYM(group_translate_ranks, "PMPI_Group_translate_ranks") &&
             CS_RSYM(group_free, "PMPI_Group_free") && CS_RSYM(group_size, "PMPI_Group_size") &&
             CS_RSYM(type_size, "PMPI_Type_size") && CS_RSYM(type_get_name, "PMPI_Type_get_name") &&
             CS_RSYM(initialized, "PMPI_Initialized");
#if defined(OPEN_MPI) && OPEN_MPI
    ok = ok && (cs_ompi.comm_world = (MPI_Comm)cs_mpi_data_sym("ompi_mpi_comm_world")) &&
         (cs_ompi.comm_self = (MPI_Comm)cs_mpi_data_sym("ompi_mpi_comm_self")) &&
         (cs_ompi.comm_null = (MPI_Comm)cs_mpi_data_sym("ompi_mpi_comm_null")) &&
         (cs_ompi.request_null = (MPI_Request)cs_mpi_data_sym("ompi_request_null")) &&
         (cs_ompi.datatype_null = (MPI_Datatype)cs_mpi_data_sym("ompi_mpi_datatype_null"));
#endif
    R.ready = ok ? 1 : -1;
    if (!ok) {
        static int warned;
        cs_warn_once(&warned, "the MPI library lacks functions collscope needs; communicators are not identified");
    }
    return ok;
}

/* ---- communicators ---- */

#define CS_COMM_SLOTS 4096u
static cs_mpi_comm *cs_comms[CS_COMM_SLOTS];
static uint32_t cs_comm_next_local;
static pthread_mutex_t cs_comm_lock = PTHREAD_MUTEX_INITIALIZER;
size_t cs_mpi_comm_extra;
__thread cs_mpi_comm *cs_mpi_comm_last __attribute__((tls_model("initial-exec")));

static uint64_t cs_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    return h;
}

static uint64_t cs_id63(uint64_t h)
{
    h &= 0x7fffffffffffffffull; /* SQLite integers are signed */
    return h ? h : 1;
}

static unsigned cs_comm_slot(uint64_t key)
{
    return (unsigned)(cs_mix(0, key) & (CS_COMM_SLOTS - 1));
}

static cs_mpi_comm *cs_comm_find(uint64_t key)
{
    unsigned s = cs_comm_slot(key);
    for (unsigned i = 0; i < CS_COMM_SLOTS; i++) {
        cs_mpi_comm *m = __atomic_load_n(&cs_comms[(s + i) & (CS_COMM_SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (!m)
            return NULL;
        if (m->key == key)
            return m;
    }
    return NULL;
}

/* Register a communicator; writes its COMMDEF record. Lock held. */
static cs_mpi_comm *cs_comm_add(uint64_t key, MPI_Comm comm, uint64_t id, uint64_t parent, int how, uint32_t args,
                                int32_t color, int32_t skey)
{
    int size = 0, rank = -1;
    if (R.comm_size(comm, &size) != MPI_SUCCESS || R.comm_rank(comm, &rank) != MPI_SUCCESS)
        return NULL;
    /* Reuse the slot of a freed communicator, or take an empty one. */
    unsigned s = cs_comm_slot(key);
    cs_mpi_comm **slot = NULL;
    for (unsigned i = 0; i < CS_COMM_SLOTS; i++) {
        cs_mpi_comm **p = &cs_comms[(s + i) & (CS_COMM_SLOTS - 1)];
        if (!*p || (*p)->key == 0) {
            slot = p;
            break;
        }
    }
    if (!slot)
        return NULL;
    size_t off = (sizeof(cs_mpi_comm) + 15) & ~(size_t)15, extra = cs_mpi_comm_extra;
    cs_mpi_comm *m = calloc(1, off + extra);
    if (!m)
        return NULL;
    m->ext = extra ? (char *)m + off : NULL;
    m->key = key;
    m->id = cs_id63(id);
    m->local = cs_comm_next_local++ & 0xffff;
    m->size = (uint32_t)size;
    m->rank = rank;
    m->is_world = how == CS_COMM_WORLD;
    __atomic_store_n(slot, m, __ATOMIC_RELEASE); /* the freed one leaks: it is tiny */

    cs_core_emit_commdef(how, m->id, parent, m->local, m->size, m->rank, args, color, skey);
    return m;
}

/* A communicator made by a call we do not wrap: identify it by its member
 * set and how many communicators with that member set this rank has seen,
 * which every member agrees on when they are created collectively. */
static cs_mpi_comm *cs_mpi_comm_lookup__inner(uint64_t key, MPI_Comm comm);
cs_mpi_comm *cs_mpi_comm_lookup(uint64_t key, MPI_Comm comm)
{
    int saved = errno;
    cs_mpi_comm *r = cs_mpi_comm_lookup__inner(key, comm);
    errno = saved;
    return r;
}

static cs_mpi_comm *cs_mpi_comm_lookup__inner(uint64_t key, MPI_Comm comm)
{
    cs_mpi_comm *m = cs_comm_find(key);
    if (m || !cs_mpi_helpers() || comm == MPI_COMM_NULL)
        return m;
    pthread_mutex_lock(&cs_comm_lock);
    m = cs_comm_find(key);
    if (!m) {
        MPI_Group g = 0, wg = 0;
        int n = 0;
        uint64_t h = 0x4c415a59; /* "LAZY" */
        if (R.comm_group(comm, &g) == MPI_SUCCESS && R.group_size(g, &n) == MPI_SUCCESS &&
            R.comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
            int *in = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1) * 2);
            if (in) {
                for (int i = 0; i < n; i++)
                    in[i] = i;
                if (R.group_translate_ranks(g, n, in, wg, in + n) == MPI_SUCCESS)
                    for (int i = 0; i < n; i++)
                        h = cs_mix(h, (uint64_t)(uint32_t)in[n + i]);
                free(in);
            }
            R.group_free(&g);
            R.group_free(&wg);
        }
        static struct {
            uint64_t h;
            uint32_t n;
        } seen[256];
        uint32_t k = 0;
        for (unsigned i = 0; i < 256; i++) {
            if (seen[i].h == h || seen[i].h == 0) {
                seen[i].h = h;
                k = seen[i].n++;
                break;
            }
        }
        m = cs_comm_add(key, comm, cs_mix(h, k), 0, CS_COMM_OTHER, 0, 0, 0);
    }
    pthread_mutex_unlock(&cs_comm_lock);
    return m;
}

static void cs_mpi_comm_created__inner(cs_mpi_call *c, MPI_Comm parent, MPI_Comm *newcomm, int how, int color, int skey,
                                       int rc);
void cs_mpi_comm_created(cs_mpi_call *c, MPI_Comm parent, MPI_Comm *newcomm, int how, int color, int skey, int rc)
{
    int saved = errno;
    cs_mpi_comm_created__inner(c, parent, newcomm, how, color, skey, rc);
    errno = saved;
}

static void cs_mpi_comm_created__inner(cs_mpi_call *c, MPI_Comm parent, MPI_Comm *newcomm, int how, int color, int skey,
                                       int rc)
{
    if (rc != MPI_SUCCESS || !cs_mpi_helpers())
        return;
    cs_mpi_comm *p = cs_mpi_comm_lookup(CS_H(parent), parent);
    if (!p)
        return;
    /* Every member of the parent counts the creation, inside the new
     * communicator or not, so the counters agree across the job. */
    uint32_t nth = __atomic_fetch_add(&p->children, 1, __ATOMIC_RELAXED);
    c->comm = p;
    c->r->comm = (uint16_t)p->local;
    c->flags |= CS_F_HAS_COMM;
    if (*newcomm == MPI_COMM_NULL)
        return;
    uint64_t id = cs_mix(cs_mix(cs_mix(p->id, nth), (uint64_t)how), (uint64_t)(uint32_t)color);
    pthread_mutex_lock(&cs_comm_lock);
    uint32_t args = how == CS_COMM_SPLIT    ? CS_COMM_ARG_COLOR | CS_COMM_ARG_KEY
                    : how == CS_COMM_CREATE ? CS_COMM_ARG_COLOR
                                            : 0;
    cs_mpi_comm *m = cs_comm_add(CS_H(*newcomm), *newcomm, id, p->id, how, args, color, skey);
    pthread_mutex_unlock(&cs_comm_lock);
    if (m)
        c->r->count = m->size;
}

void cs_mpi_comm_freed(cs_mpi_call *c, MPI_Comm freed, int rc)
{
    uint64_t key = CS_H(freed);
    cs_mpi_comm *m = cs_comm_find(key);
    if (!m)
        return;
    c->comm = m;
    c->r->comm = (uint16_t)m->local;
    c->flags |= CS_F_HAS_COMM;
    if (rc != MPI_SUCCESS)
        return;
    pthread_mutex_lock(&cs_comm_lock);
    m->key = 0; /* the handle may be reused by the next communicator */
    pthread_mutex_unlock(&cs_comm_lock);
    if (cs_mpi_comm_last == m)
        cs_mpi_comm_last = NULL;
}

void cs_mpi_comm_named(cs_mpi_call *c, const char *name, int rc)
{
    /* c->comm: the communicator the wrapper looked up (or registered) at
     * entry; a name the library refused is no name. */
    if (rc != MPI_SUCCESS || !c->comm || !name)
        return;
    int saved = errno;
    cs_log_commname(c->comm->id, name);
    errno = saved;
}

static int cs_mpi_group_leader__inner(MPI_Group group);
int cs_mpi_group_leader(MPI_Group group)
{
    int saved = errno;
    int r = cs_mpi_group_leader__inner(group);
    errno = saved;
    return r;
}

static int cs_mpi_group_leader__inner(MPI_Group group)
{
    /* The world rank of the group's rank 0: the same on every member. */
    if (!cs_mpi_helpers())
        return 0;
    MPI_Group wg;
    int zero = 0, w = -1;
    if (R.comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS)
        return 0;
    R.group_translate_ranks(group, 1, &zero, wg, &w);
    R.group_free(&wg);
    return w;
}

void cs_mpi_init_begin(cs_mpi_call *c)
{
    (void)c;
}

static void cs_mpi_init_end__inner(cs_mpi_call *c, int rc);
void cs_mpi_init_end(cs_mpi_call *c, int rc)
{
    int saved = errno;
    cs_mpi_init_end__inner(c, rc);
    errno = saved;
}

static void cs_mpi_init_end__inner(cs_mpi_call *c, int rc)
{
    (void)c;
    if (rc != MPI_SUCCESS || !cs_mpi_helpers())
        return;
    int rank = 0, size = 1;
    R.comm_rank(MPI_COMM_WORLD, &rank);
    R.comm_size(MPI_COMM_WORLD, &size);
    cs_core_set_rank(rank, size);
    pthread_mutex_lock(&cs_comm_lock);
    if (!cs_comm_find(CS_H(MPI_COMM_WORLD)))
        cs_comm_add(CS_H(MPI_COMM_WORLD), MPI_COMM_WORLD, 0x574f524c44ull /* WORLD */, 0, CS_COMM_WORLD, 0, 0, 0);
    if (!cs_comm_find(CS_H(MPI_COMM_SELF)))
        cs_comm_add(CS_H(MPI_COMM_SELF), MPI_COMM_SELF, cs_mix(0x53454c46ull, (uint64_t)rank), 0, CS_COMM_SELF, 0, 0,
                    0);
    pthread_mutex_unlock(&cs_comm_lock);
}

void cs_mpi_fuse_close(int op)
{
    if (cs_mpi_fuse)
        cs_mpi_fuse->close(op);
}

void cs_mpi_finalize_begin(cs_mpi_call *c)
{
    (void)c;
    if (cs_mpi_fuse)
        cs_mpi_fuse->finish();
    cs_wd_finalizing();
}

/* ---- datatypes ---- */

__thread uint64_t cs_mpi_dt_last_key __attribute__((tls_model("initial-exec")));
__thread cs_mpi_dt cs_mpi_dt_last __attribute__((tls_model("initial-exec")));

#define CS_DT_SLOTS 256u
static struct {
    uint64_t key;
    uint64_t val;
} cs_dt_cache[CS_DT_SLOTS];
static pthread_mutex_t cs_dt_lock = PTHREAD_MUTEX_INITIALIZER;

static cs_mpi_dt cs_mpi_dtype__inner(uint64_t key, MPI_Datatype dt);
cs_mpi_dt cs_mpi_dtype(uint64_t key, MPI_Datatype dt)
{
    int saved = errno;
    cs_mpi_dt r = cs_mpi_dtype__inner(key, dt);
    errno = saved;
    return r;
}

static cs_mpi_dt cs_mpi_dtype__inner(uint64_t key, MPI_Datatype dt)
{
    cs_mpi_dt d = { 0, CS_DT_OTHER };
    unsigned s = (unsigned)(cs_mix(1, key) & (CS_DT_SLOTS - 1));
    uint64_t k1 = __atomic_load_n(&cs_dt_cache[s].key, __ATOMIC_ACQUIRE);
    uint64_t v = __atomic_load_n(&cs_dt_cache[s].val, __ATOMIC_ACQUIRE);
    uint64_t k2 = __atomic_load_n(&cs_dt_cache[s].key, __ATOMIC_ACQUIRE);
    if (k1 == key && k2 == key) {
        d.size = (uint32_t)v;
        d.id = (uint16_t)(v >> 32);
        cs_mpi_dt_last_key = key;
        cs_mpi_dt_last = d;
        return d;
    }
    if (!cs_mpi_helpers())
        return d;
    int size = 0;
    if (R.type_size(dt, &size) != MPI_SUCCESS)
        return d;
    d.size = (uint32_t)size;
    char name[MPI_MAX_OBJECT_NAME + 1] = "";
    int len = 0;
    if (R.type_get_name(dt, name, &len) == MPI_SUCCESS)
        d.id = (uint16_t)cs_dtype_by_name(name);
    if (d.id != CS_DT_DERIVED && d.id != CS_DT_OTHER) {
        cs_mpi_dt_last_key = key;
        cs_mpi_dt_last = d;
        /* Predefined types never change: cache them. Derived ones may be
         * freed and their handle reused, so they are asked every time. */
        pthread_mutex_lock(&cs_dt_lock);
        __atomic_store_n(&cs_dt_cache[s].key, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&cs_dt_cache[s].val, ((uint64_t)d.id << 32) | d.size, __ATOMIC_RELEASE);
        __atomic_store_n(&cs_dt_cache[s].key, key, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&cs_dt_lock);
    }
    return d;
}

static uint64_t cs_mpi_bytes_n__inner(int count, MPI_Datatype dt, MPI_Comm comm);
uint64_t cs_mpi_bytes_n(int count, MPI_Datatype dt, MPI_Comm comm)
{
    int saved = errno;
    uint64_t r = cs_mpi_bytes_n__inner(count, dt, comm);
    errno = saved;
    return r;
}

static uint64_t cs_mpi_bytes_n__inner(int count, MPI_Datatype dt, MPI_Comm comm)
{
    int n = 0;
    if (!cs_mpi_helpers() || count <= 0 || R.comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * cs_mpi_dtype(CS_H(dt), dt).size * (uint64_t)n;
}

static uint64_t cs_mpi_bytes_v__inner(CS_CONST int counts[], MPI_Datatype dt, MPI_Comm comm);
uint64_t cs_mpi_bytes_v(CS_CONST int counts[], MPI_Datatype dt, MPI_Comm comm)
{
    int saved = errno;
    uint64_t r = cs_mpi_bytes_v__inner(counts, dt, comm);
    errno = saved;
    return r;
}

static uint64_t cs_mpi_bytes_v__inner(CS_CONST int counts[], MPI_Datatype dt, MPI_Comm comm)
{
    int n = 0;
    if (!cs_mpi_helpers() || !counts || R.comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += (uint64_t)(counts[i] > 0 ? counts[i] : 0);
    return total ? total * cs_mpi_dtype(CS_H(dt), dt).size : 0;
}

static uint64_t cs_mpi_bytes_w__inner(CS_CONST int counts[], CS_CONST MPI_Datatype dts[], MPI_Comm comm);
uint64_t cs_mpi_bytes_w(CS_CONST int counts[], CS_CONST MPI_Datatype dts[], MPI_Comm comm)
{
    int saved = errno;
    uint64_t r = cs_mpi_bytes_w__inner(counts, dts, comm);
    errno = saved;
    return r;
}

static uint64_t cs_mpi_bytes_w__inner(CS_CONST int counts[], CS_CONST MPI_Datatype dts[], MPI_Comm comm)
{
    int n = 0;
    if (!cs_mpi_helpers() || !counts || !dts || R.comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            total += (uint64_t)counts[i] * cs_mpi_dtype(CS_H(dts[i]), dts[i]).size;
    return total;
}

/* ---- requests ---- */

#define CS_REQ_SLOTS (1u << 16)
#define CS_REQ_TOMB (~0ull)
static struct {
    uint64_t key;
    uint32_t id;
    uint32_t pad;
} cs_reqs[CS_REQ_SLOTS];
static uint32_t cs_req_next;

static unsigned cs_req_slot(uint64_t key)
{
    return (unsigned)(cs_mix(2, key) & (CS_REQ_SLOTS - 1));
}

static void cs_req_put(uint64_t key, uint32_t id)
{
    unsigned s = cs_req_slot(key);
    for (unsigned i = 0; i < CS_REQ_SLOTS; i++) {
        unsigned j = (s + i) & (CS_REQ_SLOTS - 1);
        uint64_t k = __atomic_load_n(&cs_reqs[j].key, __ATOMIC_ACQUIRE);
        if (k == key) { /* a stale entry for a reused handle */
            __atomic_store_n(&cs_reqs[j].id, id, __ATOMIC_RELEASE);
            return;
        }
        if ((k == 0 || k == CS_REQ_TOMB) &&
            __atomic_compare_exchange_n(&cs_reqs[j].key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_store_n(&cs_reqs[j].id, id, __ATOMIC_RELEASE);
            return;
        }
    }
}

static uint32_t cs_req_take(uint64_t key)
{
    unsigned s = cs_req_slot(key);
    for (unsigned i = 0; i < CS_REQ_SLOTS; i++) {
        unsigned j = (s + i) & (CS_REQ_SLOTS - 1);
        uint64_t k = __atomic_load_n(&cs_reqs[j].key, __ATOMIC_ACQUIRE);
        if (k == 0)
            return 0;
        if (k == key) {
            uint32_t id = __atomic_load_n(&cs_reqs[j].id, __ATOMIC_ACQUIRE);
            __atomic_compare_exchange_n(&cs_reqs[j].key, &k, CS_REQ_TOMB, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
            return id;
        }
    }
    return 0;
}

void cs_mpi_started(cs_mpi_call *c, MPI_Request *req, int rc)
{
    c->flags |= CS_F_NONBLOCKING;
    if (rc != MPI_SUCCESS || !req)
        return;
    uint32_t id = __atomic_add_fetch(&cs_req_next, 1, __ATOMIC_RELAXED);
    c->r->req = id;
    cs_req_put(CS_H(*req), id);
}

uint32_t cs_mpi_req_id(void)
{
    return __atomic_add_fetch(&cs_req_next, 1, __ATOMIC_RELAXED);
}

void cs_mpi_reqdone(uint32_t id, int op, uint64_t t0, uint64_t t1)
{
    cs_log_reqdone(op, t0, t1, id, -1, -1, 0, 0);
}

static void cs_mpi_done(cs_mpi_call *c, MPI_Request h, const MPI_Status *st)
{
    if (h == MPI_REQUEST_NULL)
        return;
    uint32_t id = cs_req_take(CS_H(h));
    if (id)
        cs_log_reqdone(c->r->op, c->r->t0, c->r->t1, id, st ? st->MPI_SOURCE : -1, st ? st->MPI_TAG : -1, 0, c->r->rc);
}

static void cs_reqs_save(cs_mpi_reqs *q, int n, const MPI_Request *reqs)
{
    q->n = n > 0 && reqs ? n : 0;
    q->h = q->small;
    if (q->n > CS_MPI_REQS_STACK) {
        q->h = malloc(sizeof(MPI_Request) * (size_t)q->n);
        if (!q->h) {
            q->n = 0;
            q->h = q->small;
        }
    }
    if (q->n)
        memcpy(q->h, reqs, sizeof(MPI_Request) * (size_t)q->n);
}

static void cs_reqs_release(cs_mpi_reqs *q)
{
    if (q->h != q->small)
        free(q->h);
}

/* A status array we can read when the caller passed MPI_STATUSES_IGNORE. */
static MPI_Status *cs_statuses(cs_mpi_reqs *q, int n, MPI_Status *st)
{
    if (st == MPI_STATUSES_IGNORE && n <= CS_MPI_REQS_STACK)
        return q->st;
    return st;
}

static const MPI_Status *cs_status_at(const MPI_Status *st, int i)
{
    return st == MPI_STATUSES_IGNORE ? NULL : &st[i];
}

MPI_Status *cs_mpi_complete_one_pre(cs_mpi_call *c, cs_mpi_reqs *q, MPI_Request *req, MPI_Status *st)
{
    (void)c;
    cs_reqs_save(q, 1, req);
    return st == MPI_STATUS_IGNORE ? q->st : st;
}

void cs_mpi_complete_one_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, MPI_Request *req, MPI_Status *st)
{
    (void)req;
    if (rc == MPI_SUCCESS && q->n)
        cs_mpi_done(c, q->h[0], st);
}

MPI_Status *cs_mpi_complete_testone_pre(cs_mpi_call *c, cs_mpi_reqs *q, MPI_Request *req, int *flag, MPI_Status *st)
{
    (void)flag;
    return cs_mpi_complete_one_pre(c, q, req, st);
}

void cs_mpi_complete_testone_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, MPI_Request *req, int *flag, MPI_Status *st)
{
    if (flag && *flag)
        cs_mpi_complete_one_post(c, q, rc, req, st);
}

MPI_Status *cs_mpi_complete_all_pre(cs_mpi_call *c, cs_mpi_reqs *q, int n, MPI_Request *reqs, MPI_Status *st)
{
    (void)c;
    cs_reqs_save(q, n, reqs);
    return cs_statuses(q, n, st);
}

void cs_mpi_complete_all_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, int n, MPI_Request *reqs, MPI_Status *st)
{
    (void)reqs;
    (void)n;
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        for (int i = 0; i < q->n; i++) {
            const MPI_Status *s = cs_status_at(st, i);
            if (rc == MPI_SUCCESS || (s && s->MPI_ERROR == MPI_SUCCESS))
                cs_mpi_done(c, q->h[i], s);
        }
    cs_reqs_release(q);
}

MPI_Status *cs_mpi_complete_testall_pre(cs_mpi_call *c, cs_mpi_reqs *q, int n, MPI_Request *reqs, int *flag,
                                        MPI_Status *st)
{
    (void)flag;
    return cs_mpi_complete_all_pre(c, q, n, reqs, st);
}

void cs_mpi_complete_testall_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, int n, MPI_Request *reqs, int *flag,
                                  MPI_Status *st)
{
    if (flag && *flag) {
        cs_mpi_complete_all_post(c, q, rc, n, reqs, st);
        return;
    }
    cs_reqs_release(q);
}

MPI_Status *cs_mpi_complete_any_pre(cs_mpi_call *c, cs_mpi_reqs *q, int n, MPI_Request *reqs, int *index,
                                    MPI_Status *st)
{
    (void)c;
    (void)index;
    cs_reqs_save(q, n, reqs);
    return st == MPI_STATUS_IGNORE ? q->st : st;
}

void cs_mpi_complete_any_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, int n, MPI_Request *reqs, int *index,
                              MPI_Status *st)
{
    (void)n;
    (void)reqs;
    if (rc == MPI_SUCCESS && index && *index != MPI_UNDEFINED && *index >= 0 && *index < q->n)
        cs_mpi_done(c, q->h[*index], st);
    cs_reqs_release(q);
}

MPI_Status *cs_mpi_complete_testany_pre(cs_mpi_call *c, cs_mpi_reqs *q, int n, MPI_Request *reqs, int *index, int *flag,
                                        MPI_Status *st)
{
    (void)flag;
    return cs_mpi_complete_any_pre(c, q, n, reqs, index, st);
}

void cs_mpi_complete_testany_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, int n, MPI_Request *reqs, int *index,
                                  int *flag, MPI_Status *st)
{
    if (flag && *flag) {
        cs_mpi_complete_any_post(c, q, rc, n, reqs, index, st);
        return;
    }
    cs_reqs_release(q);
}

MPI_Status *cs_mpi_complete_some_pre(cs_mpi_call *c, cs_mpi_reqs *q, int n, MPI_Request *reqs, int *outcount,
                                     int *indices, MPI_Status *st)
{
    (void)c;
    (void)outcount;
    (void)indices;
    cs_reqs_save(q, n, reqs);
    return cs_statuses(q, n, st);
}

void cs_mpi_complete_some_post(cs_mpi_call *c, cs_mpi_reqs *q, int rc, int n, MPI_Request *reqs, int *outcount,
                               int *indices, MPI_Status *st)
{
    (void)n;
    (void)reqs;
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount && *outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++) {
            int i = indices[k];
            const MPI_Status *s = cs_status_at(st, k);
            if (i >= 0 && i < q->n && (rc == MPI_SUCCESS || (s && s->MPI_ERROR == MPI_SUCCESS)))
                cs_mpi_done(c, q->h[i], s);
        }
    cs_reqs_release(q);
}
