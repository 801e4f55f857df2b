/*
 * mpi_trainer: a small data-parallel trainer, written as a workload for
 * collscope.
 *
 * Every rank holds the same multi-layer perceptron (IN -> H -> H -> OUT,
 * tanh hidden layers, mean squared error) and its own shard of synthetic
 * data drawn from a fixed seed.  Each step computes the gradient of the
 * rank's mini-batch, sums it across ranks with MPI_Allreduce (in buckets,
 * optionally non-blocking), scales it by 1/size and takes an SGD step.
 * The same options give bit-identical weights on every run.
 *
 * Options add the traffic a tracer must handle: a straggler, a halo
 * exchange, every collective and point-to-point call once per step,
 * sub-communicators, MPI_Pcontrol step markers and crashes.  The program
 * counts the MPI calls it makes, per function, and prints the counts at the
 * end, so that a test can compare them with what a tool recorded.
 * See examples/README.md and `mpi_trainer --help`.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

/* ---------------------------------------------------------------------- */
/* Counted MPI calls                                                        */
/* ---------------------------------------------------------------------- */

/* The MPI functions this program counts, in the order they are printed. */
// clang-format off
#define TR_COUNTED(X) \
  X(Init) X(Init_thread) X(Finalize) X(Pcontrol) \
  X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Allgather) X(Allgatherv) \
  X(Gather) X(Gatherv) X(Scatter) X(Scatterv) X(Alltoall) X(Alltoallv) \
  X(Alltoallw) X(Reduce_scatter) X(Reduce_scatter_block) X(Scan) X(Exscan) \
  X(Ibarrier) X(Ibcast) X(Ireduce) X(Iallreduce) X(Iallgather) X(Iallgatherv) \
  X(Igather) X(Igatherv) X(Iscatter) X(Iscatterv) X(Ialltoall) X(Ialltoallv) \
  X(Ialltoallw) X(Ireduce_scatter) X(Ireduce_scatter_block) X(Iscan) X(Iexscan) \
  X(Send) X(Ssend) X(Rsend) X(Bsend) X(Recv) X(Sendrecv) X(Sendrecv_replace) \
  X(Isend) X(Irecv) X(Probe) \
  X(Wait) X(Waitall) X(Waitany) X(Waitsome) \
  X(Test) X(Testall) X(Testany) X(Testsome) \
  X(Comm_dup) X(Comm_split) X(Comm_create) X(Comm_free)
// clang-format on

enum {
#define TR_ENUM(name) TR_##name,
    TR_COUNTED(TR_ENUM)
#undef TR_ENUM
        TR_N_COUNTED
};

static const char *const tr_azName[TR_N_COUNTED] = {
#define TR_NAME(name) "MPI_" #name,
    TR_COUNTED(TR_NAME)
#undef TR_NAME
};

static unsigned long long tr_aCount[TR_N_COUNTED];

/* Record that a call of function iFn returned rc. MPI's default error
 * handler stops the job on errors, so rc is always MPI_SUCCESS here. */
static int tr_returned(int iFn, int rc)
{
    tr_aCount[iFn]++;
    return rc;
}

/* CALL(Allreduce, ...) calls MPI_Allreduce(...) and counts it once it has
 * returned. */
#define CALL(name, ...) tr_returned(TR_##name, MPI_##name(__VA_ARGS__))

static unsigned long long tr_total_calls(void)
{
    unsigned long long n = 0;
    for (int i = 0; i < TR_N_COUNTED; i++)
        n += tr_aCount[i];
    return n;
}

/* Print "calls: rank R MPI_X=n ..." for every function called, as one write. */
static void tr_print_counts(int rank)
{
    char zLine[4096];
    int n = snprintf(zLine, sizeof zLine, "calls: rank %d", rank);
    for (int i = 0; i < TR_N_COUNTED && n < (int)sizeof zLine; i++) {
        if (tr_aCount[i] == 0)
            continue;
        n += snprintf(zLine + n, sizeof zLine - n, " %s=%llu", tr_azName[i], tr_aCount[i]);
    }
    printf("%s\n", zLine);
    fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                  */
/* ---------------------------------------------------------------------- */

enum { CRASH_NONE, CRASH_KILL, CRASH_ABORT, CRASH_SEGV };

typedef struct Options {
    long nStep, nHidden, nBatch, nBucket;
    unsigned long long seed;
    double lr;
    long computeUs, delayUs;
    int *aDelayRank;
    int nDelayRank;             /* empty: no rank is delayed */
    long delayFirst, delayLast; /* steps, inclusive */
    int halo, allOps, split, nonblocking, pcontrol, initThread;
    long crashRank, crashStep;
    int crashMode;
} Options;

static const char tr_zUsage[] = "usage: mpi_trainer [OPTION]...\n"
                                "Data-parallel MLP training with MPI (a workload for collscope).\n"
                                "\n"
                                "  --steps N            training steps (default 100)\n"
                                "  --hidden H           width of the two hidden layers (default 32)\n"
                                "  --batch B            samples per rank and step (default 32)\n"
                                "  --seed S             seed of data and weights (default 1)\n"
                                "  --lr X               learning rate (default 0.05)\n"
                                "  --compute-us U       extra busy compute per step, in microseconds\n"
                                "  --buckets K          split the gradient into K allreduces per step\n"
                                "                       (default: one per parameter tensor, 6)\n"
                                "  --nonblocking        MPI_Iallreduce per bucket, then one MPI_Waitall\n"
                                "  --delay-us D         listed ranks sleep D us before the gradient allreduce\n"
                                "  --delay-ranks LIST   ranks to delay, e.g. 1 or 0,3 (default 1)\n"
                                "  --delay-steps A-B    steps to delay, 0-based, inclusive (default all)\n"
                                "  --halo               ring halo exchange (2 MPI_Sendrecv of 4 KiB) per step\n"
                                "  --all-ops            every collective, its MPI_I* form and every\n"
                                "                       point-to-point call once per step\n"
                                "  --split              collectives on MPI_Comm_split, MPI_Comm_dup and\n"
                                "                       MPI_Comm_create communicators every step\n"
                                "  --pcontrol           MPI_Pcontrol(1) at the start of each step (default)\n"
                                "  --no-pcontrol        no MPI_Pcontrol calls\n"
                                "  --init-thread        MPI_Init_thread(MPI_THREAD_FUNNELED), not MPI_Init\n"
                                "  --crash-rank R       rank R dies at step --crash-step, just before\n"
                                "  --crash-step S       that step's gradient allreduce (default step 0),\n"
                                "  --crash-mode M       by kill (SIGKILL, default), abort or segv\n"
                                "  --help               this text\n"
                                "\n"
                                "Output: rank 0 prints 'config: ...', 'final loss: X', 'weights checksum: H'\n"
                                "and 'step time ms: mean=... min=... max=...'; every rank prints\n"
                                "'calls: rank R MPI_Name=count ...', the MPI calls it made (before a crash:\n"
                                "'crash: rank R completed N MPI calls').\n";

static void usage_error(const char *zFmt, const char *zOpt, const char *zVal)
{
    fprintf(stderr, "mpi_trainer: ");
    fprintf(stderr, zFmt, zOpt, zVal);
    fprintf(stderr, "\n(see mpi_trainer --help)\n");
    exit(2);
}

/* Parse zVal as an integer in [lo, hi] for option zOpt, or exit(2). */
static long opt_long(const char *zOpt, const char *zVal, long lo, long hi)
{
    char *zEnd;
    errno = 0;
    long v = strtol(zVal, &zEnd, 10);
    if (errno || zEnd == zVal || *zEnd || v < lo || v > hi) {
        char zMsg[128];
        snprintf(zMsg, sizeof zMsg, "--%%s: '%%s' is not an integer in [%ld, %ld]", lo, hi);
        usage_error(zMsg, zOpt, zVal);
    }
    return v;
}

/* Parse "0,3" into o->aDelayRank, or exit(2). */
static void opt_rank_list(Options *o, const char *zVal)
{
    free(o->aDelayRank);
    o->aDelayRank = NULL;
    o->nDelayRank = 0;
    char *zCopy = strdup(zVal);
    for (char *zSave = NULL, *z = strtok_r(zCopy, ",", &zSave); z; z = strtok_r(NULL, ",", &zSave)) {
        o->aDelayRank = realloc(o->aDelayRank, (o->nDelayRank + 1) * sizeof *o->aDelayRank);
        o->aDelayRank[o->nDelayRank++] = (int)opt_long("delay-ranks", z, 0, 1 << 20);
    }
    if (o->nDelayRank == 0)
        usage_error("--%s: '%s' names no rank", "delay-ranks", zVal);
    free(zCopy);
}

/* Parse "A-B" or "A" into o->delayFirst..o->delayLast, or exit(2). */
static void opt_step_range(Options *o, const char *zVal)
{
    char zA[32];
    const char *zDash = strchr(zVal, '-');
    size_t nA = zDash ? (size_t)(zDash - zVal) : strlen(zVal);
    if (nA == 0 || nA >= sizeof zA)
        usage_error("--%s: '%s' is not a step range A-B", "delay-steps", zVal);
    memcpy(zA, zVal, nA);
    zA[nA] = 0;
    o->delayFirst = opt_long("delay-steps", zA, 0, 1L << 40);
    o->delayLast = zDash ? opt_long("delay-steps", zDash + 1, 0, 1L << 40) : o->delayFirst;
    if (o->delayLast < o->delayFirst)
        usage_error("--%s: '%s' is an empty range", "delay-steps", zVal);
}

static void options_parse(Options *o, int argc, char **argv)
{
    enum {
        O_STEPS = 256,
        O_HIDDEN,
        O_BATCH,
        O_SEED,
        O_LR,
        O_COMPUTE,
        O_BUCKETS,
        O_NONBLOCKING,
        O_DELAY_US,
        O_DELAY_RANKS,
        O_DELAY_STEPS,
        O_HALO,
        O_ALL_OPS,
        O_SPLIT,
        O_PCONTROL,
        O_NO_PCONTROL,
        O_INIT_THREAD,
        O_CRASH_RANK,
        O_CRASH_STEP,
        O_CRASH_MODE,
        O_HELP
    };
    static const struct option aLong[] = { { "steps", required_argument, 0, O_STEPS },
                                           { "hidden", required_argument, 0, O_HIDDEN },
                                           { "batch", required_argument, 0, O_BATCH },
                                           { "seed", required_argument, 0, O_SEED },
                                           { "lr", required_argument, 0, O_LR },
                                           { "compute-us", required_argument, 0, O_COMPUTE },
                                           { "buckets", required_argument, 0, O_BUCKETS },
                                           { "nonblocking", no_argument, 0, O_NONBLOCKING },
                                           { "delay-us", required_argument, 0, O_DELAY_US },
                                           { "delay-ranks", required_argument, 0, O_DELAY_RANKS },
                                           { "delay-steps", required_argument, 0, O_DELAY_STEPS },
                                           { "halo", no_argument, 0, O_HALO },
                                           { "all-ops", no_argument, 0, O_ALL_OPS },
                                           { "split", no_argument, 0, O_SPLIT },
                                           { "pcontrol", no_argument, 0, O_PCONTROL },
                                           { "no-pcontrol", no_argument, 0, O_NO_PCONTROL },
                                           { "init-thread", no_argument, 0, O_INIT_THREAD },
                                           { "crash-rank", required_argument, 0, O_CRASH_RANK },
                                           { "crash-step", required_argument, 0, O_CRASH_STEP },
                                           { "crash-mode", required_argument, 0, O_CRASH_MODE },
                                           { "help", no_argument, 0, O_HELP },
                                           { 0, 0, 0, 0 } };
    *o = (Options){ .nStep = 100,
                    .nHidden = 32,
                    .nBatch = 32,
                    .seed = 1,
                    .lr = 0.05,
                    .delayFirst = 0,
                    .delayLast = -1,
                    .pcontrol = 1,
                    .crashRank = -1,
                    .crashMode = CRASH_KILL };
    const char *zDelayRanks = "1";
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", aLong, NULL)) != -1) {
        switch (c) {
        case O_STEPS: o->nStep = opt_long("steps", optarg, 0, 1L << 30); break;
        case O_HIDDEN: o->nHidden = opt_long("hidden", optarg, 1, 4096); break;
        case O_BATCH: o->nBatch = opt_long("batch", optarg, 1, 1 << 16); break;
        case O_SEED: o->seed = (unsigned long long)opt_long("seed", optarg, 0, 0x7fffffffL); break;
        case O_LR: {
            char *zEnd;
            o->lr = strtod(optarg, &zEnd);
            if (zEnd == optarg || *zEnd || !(o->lr > 0 && o->lr < 10))
                usage_error("--%s: '%s' is not a number in (0, 10)", "lr", optarg);
            break;
        }
        case O_COMPUTE: o->computeUs = opt_long("compute-us", optarg, 0, 60000000); break;
        case O_BUCKETS: o->nBucket = opt_long("buckets", optarg, 1, 1 << 20); break;
        case O_NONBLOCKING: o->nonblocking = 1; break;
        case O_DELAY_US: o->delayUs = opt_long("delay-us", optarg, 0, 60000000); break;
        case O_DELAY_RANKS: zDelayRanks = optarg; break;
        case O_DELAY_STEPS: opt_step_range(o, optarg); break;
        case O_HALO: o->halo = 1; break;
        case O_ALL_OPS: o->allOps = 1; break;
        case O_SPLIT: o->split = 1; break;
        case O_PCONTROL: o->pcontrol = 1; break;
        case O_NO_PCONTROL: o->pcontrol = 0; break;
        case O_INIT_THREAD: o->initThread = 1; break;
        case O_CRASH_RANK: o->crashRank = opt_long("crash-rank", optarg, 0, 1 << 20); break;
        case O_CRASH_STEP: o->crashStep = opt_long("crash-step", optarg, 0, 1L << 30); break;
        case O_CRASH_MODE:
            if (!strcmp(optarg, "kill"))
                o->crashMode = CRASH_KILL;
            else if (!strcmp(optarg, "abort"))
                o->crashMode = CRASH_ABORT;
            else if (!strcmp(optarg, "segv"))
                o->crashMode = CRASH_SEGV;
            else
                usage_error("--%s: '%s' is not one of kill, abort, segv", "crash-mode", optarg);
            break;
        case O_HELP: fputs(tr_zUsage, stdout); exit(0);
        default: usage_error("%s%s: unknown option or missing value", "", argv[optind - 1]);
        }
    }
    if (optind < argc)
        usage_error("%s%s: unexpected argument", "", argv[optind]);
    opt_rank_list(o, zDelayRanks);
    if (o->delayLast < 0)
        o->delayLast = 1L << 40;
}

/* ---------------------------------------------------------------------- */
/* Time                                                                     */
/* ---------------------------------------------------------------------- */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* Keep the CPU busy for us microseconds (stands for more model compute). */
static void busy_compute(long us)
{
    if (us <= 0)
        return;
    volatile double x = 1.0;
    double end = now_us() + us;
    while (now_us() < end)
        for (int i = 0; i < 256; i++)
            x = x * 1.0000001 + 1e-9;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------------- */
/* Random numbers (splitmix64: the same sequence everywhere)                */
/* ---------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *pState)
{
    uint64_t z = (*pState += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static double rng_uniform(uint64_t *pState)
{
    return (double)(rng_next(pState) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---------------------------------------------------------------------- */
/* The model                                                                */
/* ---------------------------------------------------------------------- */

#define MLP_IN 16
#define MLP_OUT 4
#define MLP_N_TENSOR 6

/* An MLP IN -> H -> H -> OUT. All parameters live in one array, as do their
 * gradients, tensor after tensor: W1 b1 W2 b2 W3 b3 (W row-major, [in][out]). */
typedef struct Mlp {
    int nHid;
    size_t nParam;
    size_t aOff[MLP_N_TENSOR + 1]; /* tensor t is [aOff[t], aOff[t+1]) */
    double *aParam, *aGrad;
    int nBatch; /* activations sized for this batch */
    double *aH1, *aH2, *aOut, *aD2, *aD1;
} Mlp;

enum { T_W1, T_B1, T_W2, T_B2, T_W3, T_B3 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "mpi_trainer: out of memory\n");
        exit(1);
    }
    return p;
}

static Mlp *Mlp_new(int nHid, int nBatch)
{
    Mlp *m = xcalloc(1, sizeof *m);
    size_t aSize[MLP_N_TENSOR] = { (size_t)MLP_IN * nHid,  nHid,   (size_t)nHid * nHid, nHid,
                                   (size_t)nHid * MLP_OUT, MLP_OUT };
    m->nHid = nHid;
    for (int t = 0; t < MLP_N_TENSOR; t++)
        m->aOff[t + 1] = m->aOff[t] + aSize[t];
    m->nParam = m->aOff[MLP_N_TENSOR];
    m->aParam = xcalloc(m->nParam, sizeof(double));
    m->aGrad = xcalloc(m->nParam, sizeof(double));
    m->nBatch = nBatch;
    m->aH1 = xcalloc((size_t)nBatch * nHid, sizeof(double));
    m->aH2 = xcalloc((size_t)nBatch * nHid, sizeof(double));
    m->aD1 = xcalloc((size_t)nBatch * nHid, sizeof(double));
    m->aD2 = xcalloc((size_t)nBatch * nHid, sizeof(double));
    m->aOut = xcalloc((size_t)nBatch * MLP_OUT, sizeof(double));
    return m;
}

static void Mlp_free(Mlp *m)
{
    free(m->aParam);
    free(m->aGrad);
    free(m->aH1);
    free(m->aH2);
    free(m->aD1);
    free(m->aD2);
    free(m->aOut);
    free(m);
}

/* Scaled uniform initialisation from seed (the same on every rank). */
static void mlp_init(Mlp *m, uint64_t seed)
{
    uint64_t st = seed * 7919 + 17;
    int aFanIn[MLP_N_TENSOR] = { MLP_IN, 0, m->nHid, 0, m->nHid, 0 };
    for (int t = 0; t < MLP_N_TENSOR; t++) {
        double scale = aFanIn[t] ? 1.7 / sqrt((double)aFanIn[t]) : 0.0;
        for (size_t i = m->aOff[t]; i < m->aOff[t + 1]; i++)
            m->aParam[i] = scale * rng_uniform(&st);
    }
}

/* y[b][o] = x[b][:] . W[:][o] + bias[o], then tanh if act. */
static void dense(const double *x, int nB, int nIn, const double *W, const double *bias, int nOut, int act, double *y)
{
    for (int b = 0; b < nB; b++) {
        for (int o = 0; o < nOut; o++) {
            double s = bias[o];
            for (int i = 0; i < nIn; i++)
                s += x[b * nIn + i] * W[i * nOut + o];
            y[b * nOut + o] = act ? tanh(s) : s;
        }
    }
}

/* Accumulate gW[i][o] = sum_b x[b][i] d[b][o], gb[o] = sum_b d[b][o]. */
static void dense_grad(const double *x, const double *d, int nB, int nIn, int nOut, double *gW, double *gb)
{
    for (int i = 0; i < nIn; i++)
        for (int o = 0; o < nOut; o++) {
            double s = 0;
            for (int b = 0; b < nB; b++)
                s += x[b * nIn + i] * d[b * nOut + o];
            gW[i * nOut + o] = s;
        }
    for (int o = 0; o < nOut; o++) {
        double s = 0;
        for (int b = 0; b < nB; b++)
            s += d[b * nOut + o];
        gb[o] = s;
    }
}

/* dx[b][i] = (sum_o d[b][o] W[i][o]) * (1 - h[b][i]^2), h = tanh output. */
static void dense_back(const double *d, const double *W, const double *h, int nB, int nIn, int nOut, double *dx)
{
    for (int b = 0; b < nB; b++)
        for (int i = 0; i < nIn; i++) {
            double s = 0;
            for (int o = 0; o < nOut; o++)
                s += d[b * nOut + o] * W[i * nOut + o];
            dx[b * nIn + i] = s * (1 - h[b * nIn + i] * h[b * nIn + i]);
        }
}

/* Loss of nB (<= m->nBatch) samples, 0.5 * mean over samples of |out - y|^2.
 * With grad, also fills m->aGrad with its gradient. */
static double mlp_step(Mlp *m, const double *X, const double *Y, int nB, int grad)
{
    const double *p = m->aParam;
    const size_t *o = m->aOff;
    int H = m->nHid;
    dense(X, nB, MLP_IN, p + o[T_W1], p + o[T_B1], H, 1, m->aH1);
    dense(m->aH1, nB, H, p + o[T_W2], p + o[T_B2], H, 1, m->aH2);
    dense(m->aH2, nB, H, p + o[T_W3], p + o[T_B3], MLP_OUT, 0, m->aOut);
    double loss = 0;
    for (int k = 0; k < nB * MLP_OUT; k++) {
        double e = m->aOut[k] - Y[k];
        loss += 0.5 * e * e;
        m->aOut[k] = e / nB; /* now dLoss/dOut */
    }
    if (grad) {
        double *g = m->aGrad;
        dense_grad(m->aH2, m->aOut, nB, H, MLP_OUT, g + o[T_W3], g + o[T_B3]);
        dense_back(m->aOut, p + o[T_W3], m->aH2, nB, H, MLP_OUT, m->aD2);
        dense_grad(m->aH1, m->aD2, nB, H, H, g + o[T_W2], g + o[T_B2]);
        dense_back(m->aD2, p + o[T_W2], m->aH1, nB, H, H, m->aD1);
        dense_grad(X, m->aD1, nB, MLP_IN, H, g + o[T_W1], g + o[T_B1]);
    }
    return loss / nB;
}

/* FNV-1a over the bytes of all parameters. */
static unsigned long long mlp_checksum(const Mlp *m)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const unsigned char *z = (const unsigned char *)m->aParam;
    for (size_t i = 0; i < m->nParam * sizeof(double); i++)
        h = (h ^ z[i]) * 0x100000001b3ULL;
    return (unsigned long long)h;
}

/* ---------------------------------------------------------------------- */
/* Data: a fixed random "teacher" labels each rank's own shard               */
/* ---------------------------------------------------------------------- */

#define SHARD_BATCHES 8

typedef struct Shard {
    int nSample;
    double *aX, *aY; /* [nSample][MLP_IN], [nSample][MLP_OUT] */
} Shard;

static Shard *Shard_new(uint64_t seed, int rank, int nSample)
{
    Shard *s = xcalloc(1, sizeof *s);
    double aTeacher[MLP_IN * MLP_OUT];
    uint64_t stT = seed * 104729 + 3, stX = seed * 1000003 + (uint64_t)rank * 65537 + 11;
    for (int i = 0; i < MLP_IN * MLP_OUT; i++)
        aTeacher[i] = rng_uniform(&stT) * 0.6;
    s->nSample = nSample;
    s->aX = xcalloc((size_t)nSample * MLP_IN, sizeof(double));
    s->aY = xcalloc((size_t)nSample * MLP_OUT, sizeof(double));
    for (int n = 0; n < nSample; n++) {
        double *x = s->aX + (size_t)n * MLP_IN;
        for (int i = 0; i < MLP_IN; i++)
            x[i] = rng_uniform(&stX);
        for (int k = 0; k < MLP_OUT; k++) {
            double a = 0;
            for (int i = 0; i < MLP_IN; i++)
                a += x[i] * aTeacher[i * MLP_OUT + k];
            s->aY[(size_t)n * MLP_OUT + k] = sin(1.5 * a);
        }
    }
    return s;
}

static void Shard_free(Shard *s)
{
    free(s->aX);
    free(s->aY);
    free(s);
}

/* ---------------------------------------------------------------------- */
/* Gradient allreduce                                                       */
/* ---------------------------------------------------------------------- */

typedef struct Buckets {
    int n;
    size_t *aOff; /* bucket b is [aOff[b], aOff[b+1]) */
    MPI_Request *aReq;
    MPI_Status *aStatus; /* not MPI_STATUSES_IGNORE: GCC 12 warns
                                           about MPICH's (MPI_Status *)1 */
} Buckets;

/* nBucket == 0: one bucket per tensor; else nBucket near-equal slices.
 * Returns NULL when there are more buckets than parameters. */
static Buckets *Buckets_new(const Mlp *m, long nBucket)
{
    if ((size_t)nBucket > m->nParam)
        return NULL;
    Buckets *b = xcalloc(1, sizeof *b);
    b->n = nBucket ? (int)nBucket : MLP_N_TENSOR;
    b->aOff = xcalloc(b->n + 1, sizeof *b->aOff);
    b->aReq = xcalloc(b->n, sizeof *b->aReq);
    b->aStatus = xcalloc(b->n, sizeof *b->aStatus);
    for (int i = 0; i <= b->n; i++)
        b->aOff[i] = nBucket ? m->nParam * i / b->n : m->aOff[i];
    return b;
}

static void Buckets_free(Buckets *b)
{
    free(b->aOff);
    free(b->aReq);
    free(b->aStatus);
    free(b);
}

/* Sum the gradient across ranks in place, bucket by bucket, then average. */
static void grad_allreduce(Mlp *m, Buckets *b, int nonblocking, int size)
{
    for (int i = 0; i < b->n; i++) {
        double *p = m->aGrad + b->aOff[i];
        int n = (int)(b->aOff[i + 1] - b->aOff[i]);
        if (nonblocking)
            CALL(Iallreduce, MPI_IN_PLACE, p, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &b->aReq[i]);
        else
            CALL(Allreduce, MPI_IN_PLACE, p, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (nonblocking)
        CALL(Waitall, b->n, b->aReq, b->aStatus);
    for (size_t i = 0; i < m->nParam; i++)
        m->aGrad[i] /= size;
}

/* ---------------------------------------------------------------------- */
/* Halo exchange                                                            */
/* ---------------------------------------------------------------------- */

#define HALO_N 512 /* doubles per direction: 4 KiB */

/* Exchange HALO_N doubles with both ring neighbours (two MPI_Sendrecv). */
static void halo_exchange(int left, int right, double *aOut, double *aIn)
{
    CALL(Sendrecv, aOut, HALO_N, MPI_DOUBLE, right, 10, aIn, HALO_N, MPI_DOUBLE, left, 10, MPI_COMM_WORLD,
         MPI_STATUS_IGNORE);
    CALL(Sendrecv, aOut + HALO_N, HALO_N, MPI_DOUBLE, left, 11, aIn + HALO_N, HALO_N, MPI_DOUBLE, right, 11,
         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * HALO_N; i++)
        aOut[i] = 0.5 * (aOut[i] + aIn[i]);
}

/* ---------------------------------------------------------------------- */
/* --all-ops: every collective and point-to-point call                      */
/* ---------------------------------------------------------------------- */

#define OPS_C 4          /* ints per rank in collectives */
#define OPS_P2P 64       /* ints per point-to-point message */
#define OPS_N_NB 17      /* non-blocking collectives */
#define POLL_PAUSE_US 20 /* sleep between unsuccessful tests */

typedef struct AllOps {
    MPI_Comm comm;
    int rank, size, left, right;
    int *aSend;                     /* [size * OPS_C], read only */
    int *aRecv[OPS_N_NB];           /* one per pending operation */
    int *aCount, *aDispl, *aDisplB; /* OPS_C each; i*OPS_C; in bytes */
    MPI_Datatype *aType;
    int aP2pOut[OPS_P2P], aP2pIn[OPS_P2P];
    void *pBsend;
    int nBsend;
} AllOps;

static AllOps *AllOps_new(MPI_Comm comm, int rank, int size)
{
    AllOps *a = xcalloc(1, sizeof *a);
    a->comm = comm;
    a->rank = rank;
    a->size = size;
    a->left = size > 1 ? (rank + size - 1) % size : MPI_PROC_NULL;
    a->right = size > 1 ? (rank + 1) % size : MPI_PROC_NULL;
    a->aSend = xcalloc((size_t)size * OPS_C, sizeof(int));
    for (int i = 0; i < OPS_N_NB; i++)
        a->aRecv[i] = xcalloc((size_t)size * OPS_C, sizeof(int));
    a->aCount = xcalloc(size, sizeof(int));
    a->aDispl = xcalloc(size, sizeof(int));
    a->aDisplB = xcalloc(size, sizeof(int));
    a->aType = xcalloc(size, sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) {
        a->aCount[r] = OPS_C;
        a->aDispl[r] = r * OPS_C;
        a->aDisplB[r] = r * OPS_C * (int)sizeof(int);
        a->aType[r] = MPI_INT;
    }
    for (int i = 0; i < size * OPS_C; i++)
        a->aSend[i] = rank + 1 + i;
    for (int i = 0; i < OPS_P2P; i++)
        a->aP2pOut[i] = rank * 1000 + i;
    int nPack;
    MPI_Pack_size(OPS_P2P, MPI_INT, comm, &nPack);
    a->nBsend = nPack + MPI_BSEND_OVERHEAD;
    a->pBsend = xcalloc(1, a->nBsend);
    MPI_Buffer_attach(a->pBsend, a->nBsend);
    return a;
}

static void AllOps_free(AllOps *a)
{
    void *p;
    int n;
    MPI_Buffer_detach(&p, &n);
    free(a->pBsend);
    free(a->aSend);
    for (int i = 0; i < OPS_N_NB; i++)
        free(a->aRecv[i]);
    free(a->aCount);
    free(a->aDispl);
    free(a->aDisplB);
    free(a->aType);
    free(a);
}

/* Stop the job when a collective's result is wrong. */
static void allops_expect(const AllOps *a, const char *zWhat, const int *aGot)
{
    /* Sum over ranks r of (r + 1 + k) for element k. */
    for (int k = 0; k < OPS_C; k++) {
        int want = a->size * (a->size + 1) / 2 + a->size * k;
        if (aGot[k] != want) {
            fprintf(stderr, "mpi_trainer: rank %d: %s gave %d at %d, want %d\n", a->rank, zWhat, aGot[k], k, want);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

static void allops_collectives(AllOps *a)
{
    MPI_Comm c = a->comm;
    int *s = a->aSend, *r = a->aRecv[0];
    CALL(Barrier, c);
    CALL(Bcast, r, OPS_C, MPI_INT, 0, c);
    CALL(Reduce, s, r, OPS_C, MPI_INT, MPI_SUM, 0, c);
    CALL(Allreduce, s, r, OPS_C, MPI_INT, MPI_SUM, c);
    allops_expect(a, "MPI_Allreduce", r);
    CALL(Allgather, s, OPS_C, MPI_INT, r, OPS_C, MPI_INT, c);
    CALL(Allgatherv, s, OPS_C, MPI_INT, r, a->aCount, a->aDispl, MPI_INT, c);
    CALL(Gather, s, OPS_C, MPI_INT, r, OPS_C, MPI_INT, 0, c);
    CALL(Gatherv, s, OPS_C, MPI_INT, r, a->aCount, a->aDispl, MPI_INT, 0, c);
    CALL(Scatter, s, OPS_C, MPI_INT, r, OPS_C, MPI_INT, 0, c);
    CALL(Scatterv, s, a->aCount, a->aDispl, MPI_INT, r, OPS_C, MPI_INT, 0, c);
    CALL(Alltoall, s, OPS_C, MPI_INT, r, OPS_C, MPI_INT, c);
    CALL(Alltoallv, s, a->aCount, a->aDispl, MPI_INT, r, a->aCount, a->aDispl, MPI_INT, c);
    CALL(Alltoallw, s, a->aCount, a->aDisplB, a->aType, r, a->aCount, a->aDisplB, a->aType, c);
    CALL(Reduce_scatter, s, r, a->aCount, MPI_INT, MPI_SUM, c);
    CALL(Reduce_scatter_block, s, r, OPS_C, MPI_INT, MPI_SUM, c);
    CALL(Scan, s, r, OPS_C, MPI_INT, MPI_SUM, c);
    CALL(Exscan, s, r, OPS_C, MPI_INT, MPI_SUM, c);
}

/* Start the 17 non-blocking collectives, then complete them in groups, each
 * group with another wait or test function. */
static void allops_nonblocking(AllOps *a)
{
    MPI_Comm c = a->comm;
    int *s = a->aSend, **r = a->aRecv;
    MPI_Request q[OPS_N_NB];
    MPI_Status aSt[OPS_N_NB];
    int aIdx[OPS_N_NB], idx, flag, n, nLeft;

    CALL(Ibarrier, c, &q[0]);
    CALL(Ibcast, r[1], OPS_C, MPI_INT, 0, c, &q[1]);
    CALL(Ireduce, s, r[2], OPS_C, MPI_INT, MPI_SUM, 0, c, &q[2]);
    CALL(Iallreduce, s, r[3], OPS_C, MPI_INT, MPI_SUM, c, &q[3]);
    CALL(Iallgather, s, OPS_C, MPI_INT, r[4], OPS_C, MPI_INT, c, &q[4]);
    CALL(Iallgatherv, s, OPS_C, MPI_INT, r[5], a->aCount, a->aDispl, MPI_INT, c, &q[5]);
    CALL(Igather, s, OPS_C, MPI_INT, r[6], OPS_C, MPI_INT, 0, c, &q[6]);
    CALL(Igatherv, s, OPS_C, MPI_INT, r[7], a->aCount, a->aDispl, MPI_INT, 0, c, &q[7]);
    CALL(Iscatter, s, OPS_C, MPI_INT, r[8], OPS_C, MPI_INT, 0, c, &q[8]);
    CALL(Iscatterv, s, a->aCount, a->aDispl, MPI_INT, r[9], OPS_C, MPI_INT, 0, c, &q[9]);
    CALL(Ialltoall, s, OPS_C, MPI_INT, r[10], OPS_C, MPI_INT, c, &q[10]);
    CALL(Ialltoallv, s, a->aCount, a->aDispl, MPI_INT, r[11], a->aCount, a->aDispl, MPI_INT, c, &q[11]);
    CALL(Ialltoallw, s, a->aCount, a->aDisplB, a->aType, r[12], a->aCount, a->aDisplB, a->aType, c, &q[12]);
    CALL(Ireduce_scatter, s, r[13], a->aCount, MPI_INT, MPI_SUM, c, &q[13]);
    CALL(Ireduce_scatter_block, s, r[14], OPS_C, MPI_INT, MPI_SUM, c, &q[14]);
    CALL(Iscan, s, r[15], OPS_C, MPI_INT, MPI_SUM, c, &q[15]);
    CALL(Iexscan, s, r[16], OPS_C, MPI_INT, MPI_SUM, c, &q[16]);

    CALL(Wait, &q[0], MPI_STATUS_IGNORE); /* Ibarrier */
    CALL(Waitall, 3, &q[1], aSt);         /* Ibcast..Iallreduce */
    allops_expect(a, "MPI_Iallreduce", r[3]);
    for (int k = 0; k < 2; k++)
        CALL(Waitany, 2, &q[4], &idx, aSt); /* Iallgather(v) */
    for (nLeft = 3; nLeft > 0; nLeft -= n)  /* Igather(v), Iscatter */
        CALL(Waitsome, 3, &q[6], &n, aIdx, aSt);
    /* Test loops pause between polls, which bounds the number of calls. */
    for (flag = 0; !flag;) { /* Iscatterv */
        CALL(Test, &q[9], &flag, aSt);
        if (!flag)
            sleep_us(POLL_PAUSE_US);
    }
    for (flag = 0; !flag;) { /* Ialltoall(v) */
        CALL(Testall, 2, &q[10], &flag, aSt);
        if (!flag)
            sleep_us(POLL_PAUSE_US);
    }
    for (nLeft = 2; nLeft > 0;) { /* Ialltoallw, Ireduce_scatter */
        CALL(Testany, 2, &q[12], &idx, &flag, aSt);
        if (flag && idx != MPI_UNDEFINED)
            nLeft--;
        else
            sleep_us(POLL_PAUSE_US);
    }
    for (nLeft = 3; nLeft > 0;) { /* Ireduce_scatter_block..Iexscan */
        CALL(Testsome, 3, &q[14], &n, aIdx, aSt);
        if (n != MPI_UNDEFINED && n > 0)
            nLeft -= n;
        else
            sleep_us(POLL_PAUSE_US);
    }
}

/* A ring of point-to-point messages; every call is matched (no reliance on
 * eager sends): rank 0 sends first, the others receive first. */
static void allops_p2p(AllOps *a)
{
    MPI_Comm c = a->comm;
    MPI_Status st, aSt[2];
    MPI_Request q[2];
    int *out = a->aP2pOut, *in = a->aP2pIn, first = a->rank == 0;

    if (first)
        CALL(Send, out, OPS_P2P, MPI_INT, a->right, 20, c);
    CALL(Recv, in, OPS_P2P, MPI_INT, a->left, 20, c, &st);
    if (!first)
        CALL(Send, out, OPS_P2P, MPI_INT, a->right, 20, c);

    if (first)
        CALL(Ssend, out, OPS_P2P, MPI_INT, a->right, 21, c);
    CALL(Probe, a->left, 21, c, &st);
    CALL(Recv, in, OPS_P2P, MPI_INT, a->left, 21, c, &st);
    if (!first)
        CALL(Ssend, out, OPS_P2P, MPI_INT, a->right, 21, c);

    /* A ready send needs its receive posted: post, then a barrier, then send. */
    CALL(Irecv, in, OPS_P2P, MPI_INT, a->left, 22, c, &q[0]);
    CALL(Barrier, c);
    CALL(Rsend, out, OPS_P2P, MPI_INT, a->right, 22, c);
    CALL(Wait, &q[0], &st);

    CALL(Bsend, out, OPS_P2P, MPI_INT, a->right, 23, c);
    CALL(Recv, in, OPS_P2P, MPI_INT, a->left, 23, c, &st);

    CALL(Sendrecv, out, OPS_P2P, MPI_INT, a->right, 24, in, OPS_P2P, MPI_INT, a->left, 24, c, &st);
    memcpy(in, out, sizeof a->aP2pIn);
    CALL(Sendrecv_replace, in, OPS_P2P, MPI_INT, a->right, 25, a->left, 25, c, &st);

    CALL(Irecv, in, OPS_P2P, MPI_INT, a->left, 26, c, &q[0]);
    CALL(Isend, out, OPS_P2P, MPI_INT, a->right, 26, c, &q[1]);
    CALL(Waitall, 2, q, aSt);
}

/* ---------------------------------------------------------------------- */
/* --split: sub-communicators                                               */
/* ---------------------------------------------------------------------- */

typedef struct SubComms {
    MPI_Comm split, dupWorld, dupSplit, half; /* half: MPI_COMM_NULL off the group */
} SubComms;

static void subcomms_create(SubComms *p, int rank, int size)
{
    MPI_Group world, first;
    int nHalf = (size + 1) / 2, aRange[1][3] = { { 0, nHalf - 1, 1 } };
    CALL(Comm_split, MPI_COMM_WORLD, rank % 2, rank, &p->split);
    CALL(Comm_dup, MPI_COMM_WORLD, &p->dupWorld);
    CALL(Comm_dup, p->split, &p->dupSplit);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_range_incl(world, 1, aRange, &first);
    CALL(Comm_create, MPI_COMM_WORLD, first, &p->half);
    MPI_Group_free(&first);
    MPI_Group_free(&world);
}

/* A few collectives on every sub-communicator this rank belongs to. */
static void subcomms_step(SubComms *p, double x)
{
    double y, aAll[2] = { x, x };
    double *aGather;
    int n;
    CALL(Allreduce, &x, &y, 1, MPI_DOUBLE, MPI_SUM, p->split);
    CALL(Bcast, &y, 1, MPI_DOUBLE, 0, p->split);
    CALL(Allreduce, &x, &y, 1, MPI_DOUBLE, MPI_MAX, p->dupWorld);
    CALL(Barrier, p->dupWorld);
    MPI_Comm_size(p->dupSplit, &n);
    aGather = xcalloc(2 * (size_t)n, sizeof(double));
    CALL(Allgather, aAll, 2, MPI_DOUBLE, aGather, 2, MPI_DOUBLE, p->dupSplit);
    free(aGather);
    if (p->half != MPI_COMM_NULL) {
        CALL(Allreduce, &x, &y, 1, MPI_DOUBLE, MPI_MIN, p->half);
        CALL(Reduce, &x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, p->half);
    }
}

static void subcomms_free(SubComms *p)
{
    if (p->half != MPI_COMM_NULL)
        CALL(Comm_free, &p->half);
    CALL(Comm_free, &p->dupSplit);
    CALL(Comm_free, &p->dupWorld);
    CALL(Comm_free, &p->split);
}

/* ---------------------------------------------------------------------- */
/* Crashes                                                                  */
/* ---------------------------------------------------------------------- */

static int *volatile tr_pNull; /* NULL, opaque to the compiler */

static void crash(int rank, int mode)
{
    printf("crash: rank %d completed %llu MPI calls\n", rank, tr_total_calls());
    fflush(stdout);
    switch (mode) {
    case CRASH_KILL: kill(getpid(), SIGKILL); break;
    case CRASH_ABORT: abort();
    case CRASH_SEGV: *tr_pNull = 1; break;
    }
    _exit(99); /* not reached */
}

/* ---------------------------------------------------------------------- */

static int is_delayed(const Options *o, int rank, long step)
{
    if (o->delayUs <= 0 || step < o->delayFirst || step > o->delayLast)
        return 0;
    for (int i = 0; i < o->nDelayRank; i++)
        if (o->aDelayRank[i] == rank)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    Options opt;
    int rank, size, provided;
    options_parse(&opt, argc, argv);

    if (opt.initThread)
        CALL(Init_thread, &argc, &argv, MPI_THREAD_FUNNELED, &provided);
    else
        CALL(Init, &argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    Mlp *m = Mlp_new((int)opt.nHidden, (int)opt.nBatch);
    Buckets *b = Buckets_new(m, opt.nBucket);
    const char *zBad = NULL;
    char zBadMsg[160];
    if (!b) {
        snprintf(zBadMsg, sizeof zBadMsg, "--buckets %ld: the model has only %zu parameters", opt.nBucket, m->nParam);
        zBad = zBadMsg;
    } else if (opt.crashRank >= size) {
        snprintf(zBadMsg, sizeof zBadMsg, "--crash-rank %ld: the job has %d ranks", opt.crashRank, size);
        zBad = zBadMsg;
    }
    if (zBad) { /* every rank sees it: stop together */
        if (rank == 0)
            fprintf(stderr, "mpi_trainer: %s\n", zBad);
        MPI_Finalize();
        return 2;
    }

    Shard *shard = Shard_new(opt.seed, rank, (int)opt.nBatch * SHARD_BATCHES);
    if (rank == 0)
        mlp_init(m, opt.seed);
    CALL(Bcast, m->aParam, (int)m->nParam, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double *aHalo = xcalloc(4 * HALO_N, sizeof(double));
    for (int i = 0; i < 2 * HALO_N; i++)
        aHalo[i] = rank + i * 1e-3;
    AllOps *ops = opt.allOps ? AllOps_new(MPI_COMM_WORLD, rank, size) : NULL;
    SubComms sub;
    if (opt.split)
        subcomms_create(&sub, rank, size);

    if (rank == 0) {
        printf("config: ranks=%d params=%zu buckets=%d steps=%ld hidden=%ld batch=%ld seed=%llu%s\n", size, m->nParam,
               b->n, opt.nStep, opt.nHidden, opt.nBatch, opt.seed, opt.nonblocking ? " nonblocking" : "");
        fflush(stdout);
    }

    double tSum = 0, tMin = 0, tMax = 0, loss = 0;
    for (long step = 0; step < opt.nStep; step++) {
        double t0 = MPI_Wtime();
        if (opt.pcontrol)
            CALL(Pcontrol, 1);
        if (opt.halo)
            halo_exchange(left, right, aHalo, aHalo + 2 * HALO_N);

        int iBatch = (int)(step % SHARD_BATCHES);
        loss = mlp_step(m, shard->aX + (size_t)iBatch * opt.nBatch * MLP_IN,
                        shard->aY + (size_t)iBatch * opt.nBatch * MLP_OUT, (int)opt.nBatch, 1);
        busy_compute(opt.computeUs);

        if (is_delayed(&opt, rank, step))
            sleep_us(opt.delayUs);
        if (rank == opt.crashRank && step == opt.crashStep)
            crash(rank, opt.crashMode);
        grad_allreduce(m, b, opt.nonblocking, size);
        for (size_t i = 0; i < m->nParam; i++)
            m->aParam[i] -= opt.lr * m->aGrad[i];

        if (ops) {
            allops_collectives(ops);
            allops_nonblocking(ops);
            allops_p2p(ops);
        }
        if (opt.split)
            subcomms_step(&sub, loss);

        double t = (MPI_Wtime() - t0) * 1e3;
        tSum += t;
        if (step == 0 || t < tMin)
            tMin = t;
        if (step == 0 || t > tMax)
            tMax = t;
    }

    /* Loss of the final weights over every rank's whole shard. */
    double localLoss = 0, sumLoss = 0;
    for (int i = 0; i < SHARD_BATCHES; i++)
        localLoss += mlp_step(m, shard->aX + (size_t)i * opt.nBatch * MLP_IN,
                              shard->aY + (size_t)i * opt.nBatch * MLP_OUT, (int)opt.nBatch, 0);
    localLoss /= SHARD_BATCHES;
    CALL(Reduce, &localLoss, &sumLoss, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    (void)loss;

    if (opt.split)
        subcomms_free(&sub);
    if (ops)
        AllOps_free(ops);

    if (rank == 0) {
        printf("final loss: %.9g\n", sumLoss / size);
        printf("weights checksum: %016llx\n", mlp_checksum(m));
        printf("step time ms: mean=%.3f min=%.3f max=%.3f\n", opt.nStep ? tSum / opt.nStep : 0.0, tMin, tMax);
        fflush(stdout);
    }
    tr_aCount[TR_Finalize]++; /* counted before the call, to be printed */
    tr_print_counts(rank);

    free(aHalo);
    Shard_free(shard);
    Buckets_free(b);
    Mlp_free(m);
    free(opt.aDelayRank);
    MPI_Finalize();
    return 0;
}
