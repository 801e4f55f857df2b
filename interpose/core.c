/* core.c: process-wide tracing state inside the traced application.
 *
 * Rules of the house: nothing here may change the application's results,
 * return codes, errno or exit status; nothing blocks on I/O inside a
 * wrapped call; launchers (mpirun, orted, hydra) that inherit LD_PRELOAD
 * are left alone; fork children stop writing the parent's log. */
#include "config.h"
#include "interpose/core.h"
#include "interpose/module.h"
#include "interpose/settings.h"
#include "libtrace/store.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cs_core_tracing;
int cs_core_hooks;
__thread int cs_core_busy __attribute__((tls_model("initial-exec")));
static pthread_mutex_t cs_start_lock = PTHREAD_MUTEX_INITIALIZER;
static int cs_start_tried;
static int cs_rank = -1;
static char cs_dir[PATH_MAX];
static char cs_log_path[PATH_MAX];

static const char *cs_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Launchers and their daemons inherit LD_PRELOAD; they must not trace. */
static int cs_is_launcher(void)
{
    static const char *const names[] = { "mpirun",
                                         "mpiexec",
                                         "orterun",
                                         "orted",
                                         "prterun",
                                         "prted",
                                         "prte",
                                         "mpiexec.hydra",
                                         "mpirun.openmpi",
                                         "mpirun.mpich",
                                         "mpiexec.openmpi",
                                         "mpiexec.mpich",
                                         "hydra_pmi_proxy",
                                         "hydra_nameserver",
                                         "srun",
                                         "torchrun",
                                         NULL };
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    const char *b = cs_basename(exe);
    for (int i = 0; names[i]; i++)
        if (strcmp(b, names[i]) == 0)
            return 1;
    return 0;
}

static int cs_env_rank(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK", "SLURM_PROCID", NULL };
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

/* Estimate the tool's own cost of one traced call: the work a wrapper adds
 * around the real call, timed on a scratch record. */
static uint64_t cs_measure_overhead(double ticks_per_ns)
{
    enum { N = 2000 };
    static cs_rec scratch[8];
    uint64_t a = cs_clock_ticks();
    for (int i = 0; i < N; i++) {
        cs_rec r = { 0 };
        r.t0 = cs_clock_ticks();
        r.t1 = cs_clock_ticks();
        r.op = (uint16_t)i;
        scratch[i & 7] = r;
        __atomic_store_n(&scratch[i & 7].hdr, 1u, __ATOMIC_RELEASE);
    }
    uint64_t b = cs_clock_ticks();
    return (uint64_t)((double)(b - a) / ticks_per_ns / N);
}

static double cs_measure_tick_rate(void)
{
    if (cs_clock_kind_in_use != CS_CLOCK_TSC)
        return 1.0;
    uint64_t t0, t1;
    int64_t m0, m1, r;
    cs_clock_sample(&t0, &m0, &r);
    do {
        cs_clock_sample(&t1, &m1, &r);
    } while (m1 - m0 < 2000000); /* 2 ms */
    return (double)(t1 - t0) / (double)(m1 - m0);
}

static void cs_atfork_child(void)
{
    /* The child shares the parent's mapped log: never write into it. */
    if (cs_core_tracing || cs_log_is_open()) {
        cs_core_tracing = 0;
        cs_log_forget();
    }
    cs_start_tried = 0;
}

/* The log header's `mpi` field: the flavor a module names, else the API
 * whose first call started the trace. */
static const char *cs_flavor(const char *api)
{
    for (const cs_module *const *m = cs_module_table; *m; m++)
        if ((*m)->flavor)
            return (*m)->flavor;
    return api ? api : "";
}

int cs_core_start(const char *api)
{
    if (CS_LIKELY(__atomic_load_n(&cs_core_tracing, __ATOMIC_ACQUIRE)))
        return 1;
    pthread_mutex_lock(&cs_start_lock);
    if (cs_start_tried) {
        pthread_mutex_unlock(&cs_start_lock);
        return cs_core_tracing;
    }
    cs_start_tried = 1;
    int saved_errno = errno;
    if (cs_is_launcher())
        goto out;
    cs_rank = cs_env_rank();
    cs_settings_load(cs_rank <= 0);
    const cs_settings *set = cs_settings_get();
    if (set->disable)
        goto out;

    cs_clock_init(set->clock);
    snprintf(cs_dir, sizeof cs_dir, "%s", set->dir);

    char logs[PATH_MAX];
    snprintf(logs, sizeof logs, "%s/logs", cs_dir);
    static int warned;
    if (cs_log_mkdirs(logs) != 0) {
        if (cs_rank <= 0)
            cs_warn_once(&warned, "cannot create %s (%s); the job runs untraced", logs, strerror(errno));
        goto out;
    }
    /* Only into a folder of this user's, never through a planted link:
     * else one warning and no trace, the job itself undisturbed. */
    char real[PATH_MAX], why[PATH_MAX + 128];
    if (realpath(cs_dir, real) && strlen(real) < sizeof cs_dir - 32) {
        snprintf(cs_dir, sizeof cs_dir, "%s", real);
        snprintf(logs, sizeof logs, "%s/logs", cs_dir);
    }
    if (cs_log_dir_safe(cs_dir, set->force, why, sizeof why) != 0 ||
        cs_log_dir_safe(logs, set->force, why, sizeof why) != 0) {
        if (cs_rank <= 0)
            cs_warn_once(&warned, "%s; the job runs untraced", why);
        goto out;
    }
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(proto.host, sizeof proto.host, "%s", host);
    proto.pid = (int32_t)getpid();
    proto.rank = cs_rank;
    proto.world_size = -1;
    proto.test_offset_ns = cs_settings_clock_offset(cs_rank);
    ssize_t n = readlink("/proc/self/exe", proto.exe, sizeof proto.exe - 1);
    if (n > 0)
        proto.exe[n] = '\0';
    snprintf(proto.mpi, sizeof proto.mpi, "%s", cs_flavor(api));
    snprintf(proto.tool_version, sizeof proto.tool_version, "%s", PACKAGE_VERSION);
    snprintf(proto.run_id, sizeof proto.run_id, "%s", set->run_id);
    proto.ticks_per_ns = cs_measure_tick_rate();
    proto.overhead_ns = cs_measure_overhead(proto.ticks_per_ns);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    proto.start_real_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + proto.test_offset_ns;

    snprintf(cs_log_path, sizeof cs_log_path, "%s/%s-%d.cslog", logs, host, (int)proto.pid);
    char err[512];
    if (cs_log_open(cs_log_path, &proto, err, sizeof err) != 0) {
        if (cs_rank <= 0)
            cs_warn_once(&warned, "%s; the job runs untraced", err);
        goto out;
    }
    /* The modules start before the first span, with the guard held: a
     * call they make into a wrapped library is not traced. */
    cs_core_busy++;
    for (const cs_module *const *m = cs_module_table; *m; m++)
        if ((*m)->start)
            (*m)->start(set, cs_log_header_ptr());
    cs_core_busy--;
    static int atfork_done;
    if (!atfork_done) {
        pthread_atfork(NULL, NULL, cs_atfork_child);
        atfork_done = 1;
    }
    __atomic_store_n(&cs_core_tracing, 1, __ATOMIC_RELEASE);
out:
    errno = saved_errno;
    pthread_mutex_unlock(&cs_start_lock);
    return cs_core_tracing;
}

void cs_core_set_rank(int rank, int size)
{
    cs_log_header *h = cs_log_header_ptr();
    cs_rank = rank;
    if (!h)
        return;
    if (h->rank != rank) {
        /* The environment did not say (a singleton, or a launcher we do
         * not know): the test offset is keyed by the real rank. */
        h->test_offset_ns = cs_settings_clock_offset(rank);
        h->rank = rank;
        cs_log_calibrate();
    }
    h->world_size = size;
    for (const cs_module *const *m = cs_module_table; *m; m++)
        if ((*m)->rank_known)
            (*m)->rank_known(rank, size);
}

int cs_core_rank(void)
{
    return cs_rank;
}

void cs_core_emit_commdef(int how, uint64_t id, uint64_t parent, uint32_t local, uint32_t size, int32_t rank,
                          uint32_t args, int32_t color, int32_t key)
{
    cs_log_commdef(how, id, parent, local, size, rank, cs_core_rank(), args, color, key);
}

/* At exit: close the log and turn it into this rank's SQLite file, unless
 * COLLSCOPE_EXIT_CONVERT=0 leaves that to `collscope run`. */
__attribute__((destructor)) static void cs_core_fini(void)
{
    if (!cs_log_is_open())
        return;
    cs_core_busy = 1;
    for (const cs_module *const *m = cs_module_table; *m; m++)
        if ((*m)->flush)
            (*m)->flush();
    __atomic_store_n(&cs_core_tracing, 0, __ATOMIC_RELEASE);
    cs_log_close();
    for (const cs_module *const *m = cs_module_table; *m; m++)
        if ((*m)->fini)
            (*m)->fini();
    if (!cs_settings_get()->exit_convert)
        return;
    int saved = errno;
    char err[512];
    if (cs_store_convert_log(cs_log_path, cs_dir, NULL, err, sizeof err) != 0)
        cs_warn_once(NULL, "%s (collscope ingest %s can retry)", err, cs_dir);
    errno = saved;
}
