/*
 * nbloop: a training-style communication loop written the way real
 * data-parallel code is (DDP gradient buckets, ZeRO shards), as a workload
 * that is not collscope's example trainer.
 *
 * Each step computes (sleeps, or spins with --spin), then reduces its
 * gradient in B buckets of S bytes with nonblocking allreduces and
 * completes them (one MPI_Waitall by default). There are no step markers
 * unless --markers is given. One rank can be made late in chosen steps
 * (every k-th, a list, or at random) to test straggler verdicts.
 *
 * The program times itself: each rank measures, per step, the wall time
 * inside its MPI calls of the step (the communication time a user sees)
 * and the time between step starts, and prints one line per rank:
 *
 *   NBLOOP rank=R steps=N mpi_us_med=X mpi_us_mean=X step_us_med=X
 *          step_us_mean=X late_steps=a,b,c wall_s=X checksum=HEX late_us_med=X
 *
 * mpi_us is the time around the very MPI calls of the step (the starts and
 * the completion calls, or the blocking calls), step_us the time from one
 * step's start to the next one's; both medians (and means) over the steps.
 * checksum is an FNV-1a hash (over 64-bit words) of every result of every step, so
 * that two runs (fused and unfused) can be compared bit for bit.
 * late_us_med: the median of the late rank's measured delays (its own
 * clock around each one: a loaded machine wakes it late), 0 elsewhere.
 *
 * Rank 0 also prints "NBLOOP_STEPS" with every step's mpi time (us) on
 * request (--print-steps).
 *
 * Every rank also prints, per step, its time between collectives: from the
 * return of its last MPI call of the previous step (the last blocking
 * allreduce, or the completion call; the barrier before the loop for step
 * 0) to the entry into its first collective of the step, in us:
 *
 *   NBLOOP_GAPS rank=R us=g0,g1,...
 *
 * the interval collscope's wait states measure between a rank's
 * collectives, so that a test compares the same interval measured two
 * ways (a late rank's excess over the next slowest, per step).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

/* gcc reads MPI_STATUSES_IGNORE (a null pointer cast to an array) as a
 * zero-sized region passed to MPI_Waitall/MPI_Testall. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

typedef struct nb_opts {
    int steps, buckets, bytes, compute_us, spin, overlap, blocking, markers;
    int late_rank, late_us, late_every, late_random;
    unsigned seed;
    const char *late_list; /* "3,7,20" */
    const char *wait;      /* all | each | test | testeach */
    const char *comm;      /* world | dup | split */
    const char *name;      /* MPI_Comm_set_name */
    int print_steps;
    int buckets_vary; /* step s issues buckets - (a hash of s) % (vary + 1) */
} nb_opts;

static double nb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wait us microseconds: sleep, or spin (a computing rank keeps its core). */
static void nb_compute(int us, int spin)
{
    if (us <= 0)
        return;
    if (spin) {
        double end = nb_now() + 1e-6 * us;
        while (nb_now() < end)
            ;
        return;
    }
    struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int nb_cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static double nb_median(const double *v, int n)
{
    if (n <= 0)
        return 0;
    double *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return 0;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, nb_cmp);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static void nb_usage(FILE *f)
{
    fprintf(f, "usage: nbloop [options]\n"
               "  --steps N          steps (200)\n"
               "  --buckets B        buckets per step (64)\n"
               "  --bytes S          bytes per bucket (2048; doubles, rounded down, at least one)\n"
               "  --compute-us C     compute per step before/among the buckets (1000)\n"
               "  --spin             compute by spinning, not sleeping\n"
               "  --overlap          post each bucket after its share of the compute (DDP backward)\n"
               "  --blocking         MPI_Allreduce per bucket instead of MPI_Iallreduce\n"
               "  --wait all|each|test|testeach  complete with MPI_Waitall, MPI_Wait per request\n"
               "                     (reverse order), MPI_Testall polling, or MPI_Test polling of\n"
               "                     each request in turn (all)\n"
               "  --markers          MPI_Pcontrol(1) at the start of each step\n"
               "  --late-rank R      this rank is late (sleeps) before communicating ...\n"
               "  --late-us U        ... by U us (0: nobody is late) ...\n"
               "  --late-every K     ... in every K-th step (steps K-1, 2K-1, ...), or\n"
               "  --late-steps LIST  ... in the listed steps (0-based, comma-separated), or\n"
               "  --late-random N    ... in N steps drawn at random (--seed)\n"
               "  --seed S           seed for --late-random (1)\n"
               "  --comm world|dup|split  communicator of the buckets (world); split: two\n"
               "                     halves by rank parity, each rank in its own half\n"
               "  --name NAME        MPI_Comm_set_name on that communicator\n"
               "  --print-steps      rank 0 prints every step's MPI time\n");
    fprintf(f, "  --buckets-vary V   each step issues between B-V and B buckets (the same\n"
               "                     count on every rank, drawn from the step number)\n");
}

static int nb_parse(int argc, char **argv, nb_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NB_INT(flag, field)                  \
    if (strcmp(a, flag) == 0) {              \
        if (!v)                              \
            return -1;                       \
        char *end;                           \
        long x = strtol(v, &end, 10);        \
        if (*end || x < 0 || x > 1000000000) \
            return -1;                       \
        o->field = (int)x;                   \
        i++;                                 \
        continue;                            \
    }
#define NB_STR(flag, field)     \
    if (strcmp(a, flag) == 0) { \
        if (!v)                 \
            return -1;          \
        o->field = v;           \
        i++;                    \
        continue;               \
    }
        NB_INT("--steps", steps)
        NB_INT("--buckets", buckets)
        NB_INT("--bytes", bytes)
        NB_INT("--compute-us", compute_us)
        NB_INT("--late-rank", late_rank)
        NB_INT("--late-us", late_us)
        NB_INT("--late-every", late_every)
        NB_INT("--late-random", late_random)
        NB_INT("--buckets-vary", buckets_vary)
        NB_STR("--late-steps", late_list)
        NB_STR("--wait", wait)
        NB_STR("--comm", comm)
        NB_STR("--name", name)
        if (strcmp(a, "--seed") == 0 && v) {
            o->seed = (unsigned)strtoul(v, NULL, 10);
            i++;
            continue;
        }
        if (strcmp(a, "--spin") == 0) {
            o->spin = 1;
            continue;
        }
        if (strcmp(a, "--overlap") == 0) {
            o->overlap = 1;
            continue;
        }
        if (strcmp(a, "--blocking") == 0) {
            o->blocking = 1;
            continue;
        }
        if (strcmp(a, "--markers") == 0) {
            o->markers = 1;
            continue;
        }
        if (strcmp(a, "--print-steps") == 0) {
            o->print_steps = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0) {
            nb_usage(stdout);
            exit(0);
        }
        return -1;
#undef NB_INT
#undef NB_STR
    }
    if (o->steps < 1 || o->buckets < 1 || o->bytes < 1)
        return -1;
    if (strcmp(o->wait, "all") && strcmp(o->wait, "each") && strcmp(o->wait, "test") && strcmp(o->wait, "testeach"))
        return -1;
    if (strcmp(o->comm, "world") && strcmp(o->comm, "dup") && strcmp(o->comm, "split"))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    nb_opts o = { .steps = 200,
                  .buckets = 64,
                  .bytes = 2048,
                  .compute_us = 1000,
                  .late_rank = -1,
                  .seed = 1,
                  .wait = "all",
                  .comm = "world" };
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (nb_parse(argc, argv, &o) != 0) {
        if (rank == 0) {
            fprintf(stderr, "nbloop: bad arguments\n");
            nb_usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    if (strcmp(o.comm, "dup") == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else if (strcmp(o.comm, "split") == 0)
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comm);
    if (o.name)
        MPI_Comm_set_name(comm, o.name);

    /* which steps the late rank is late in */
    char *late = calloc((size_t)o.steps, 1);
    if (!late)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (o.late_us > 0 && o.late_rank >= 0) {
        if (o.late_every > 0)
            for (int s = o.late_every - 1; s < o.steps; s += o.late_every)
                late[s] = 1;
        if (o.late_list) {
            char *copy = strdup(o.late_list), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int s = atoi(t);
                if (s >= 0 && s < o.steps)
                    late[s] = 1;
            }
            free(copy);
        }
        if (o.late_random > 0) {
            unsigned x = o.seed ? o.seed : 1;
            for (int k = 0, placed = 0; placed < o.late_random && placed < o.steps && k < 100 * o.steps; k++) {
                x = x * 1103515245u + 12345u; /* same draw on every rank */
                int s = (int)((x >> 8) % (unsigned)o.steps);
                if (!late[s]) {
                    late[s] = 1;
                    placed++;
                }
            }
        }
    }

    int n = o.bytes / (int)sizeof(double);
    if (n < 1)
        n = 1;
    double *buf = malloc((size_t)o.buckets * (size_t)n * sizeof *buf);
    double *out = malloc((size_t)o.buckets * (size_t)n * sizeof *out);
    MPI_Request *req = malloc((size_t)o.buckets * sizeof *req);
    double *mpi_t = calloc((size_t)o.steps, sizeof *mpi_t);
    double *step_t = calloc((size_t)o.steps, sizeof *step_t);
    double *late_t = calloc((size_t)o.steps, sizeof *late_t);
    double *gap_t = calloc((size_t)o.steps, sizeof *gap_t);
    int nLate = 0;
    if (!buf || !out || !req || !mpi_t || !step_t || !late_t || !gap_t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < o.buckets * n; i++)
        buf[i] = rank + 0.001 * i;

    MPI_Barrier(MPI_COMM_WORLD);
    double t_begin = nb_now(), prev = t_begin, mpi_end = t_begin;
    uint64_t sum = 0xcbf29ce484222325ULL; /* FNV-1a over every result's bits */
    for (int s = 0; s < o.steps; s++) {
        double t0 = nb_now();
        if (s > 0)
            step_t[s - 1] = t0 - prev;
        prev = t0;
        if (o.markers)
            MPI_Pcontrol(1);
        double in_mpi = 0;
        if (!o.overlap)
            nb_compute(o.compute_us, o.spin);
        if (late[s] && rank == o.late_rank) {
            double l0 = nb_now();
            nb_compute(o.late_us, 0);
            late_t[nLate++] = nb_now() - l0;
        }
        int nbk = o.buckets;
        if (o.buckets_vary > 0) {
            nbk -= (int)(((unsigned)s * 2654435761u >> 7) % (unsigned)(o.buckets_vary + 1));
            if (nbk < 1)
                nbk = 1;
        }
        for (int b = 0; b < nbk; b++) {
            if (o.overlap)
                nb_compute(o.compute_us / o.buckets, o.spin);
            double c0 = nb_now();
            if (b == 0)
                gap_t[s] = c0 - mpi_end;
            if (o.blocking)
                MPI_Allreduce(buf + (size_t)b * n, out + (size_t)b * n, n, MPI_DOUBLE, MPI_SUM, comm);
            else
                MPI_Iallreduce(buf + (size_t)b * n, out + (size_t)b * n, n, MPI_DOUBLE, MPI_SUM, comm, &req[b]);
            in_mpi += nb_now() - c0;
        }
        if (!o.blocking) {
            double c0 = nb_now();
            if (strcmp(o.wait, "all") == 0) {
                MPI_Waitall(nbk, req, MPI_STATUSES_IGNORE);
            } else if (strcmp(o.wait, "each") == 0) {
                for (int b = nbk - 1; b >= 0; b--)
                    MPI_Wait(&req[b], MPI_STATUS_IGNORE);
            } else if (strcmp(o.wait, "test") == 0) {
                int done = 0;
                while (!done)
                    MPI_Testall(nbk, req, &done, MPI_STATUSES_IGNORE);
            } else {
                /* each request polled in turn until it is done */
                for (int b = 0; b < nbk; b++) {
                    int done = 0;
                    while (!done)
                        MPI_Test(&req[b], &done, MPI_STATUS_IGNORE);
                }
            }
            in_mpi += nb_now() - c0;
        }
        mpi_end = nb_now();
        mpi_t[s] = in_mpi;
        /* the results, bit for bit (outside the timed calls) */
        for (size_t i = 0; i < (size_t)nbk * (size_t)n; i++) {
            uint64_t word;
            memcpy(&word, &out[i], sizeof word);
            sum = (sum ^ word) * 0x100000001b3ULL;
        }
    }
    double t_end = nb_now();
    step_t[o.steps - 1] = t_end - prev;

    char lates[512] = "";
    size_t l = 0;
    for (int s = 0; s < o.steps && l < sizeof lates - 16; s++)
        if (late[s])
            l += (size_t)snprintf(lates + l, sizeof lates - l, "%s%d", l ? "," : "", s);
    double mean_mpi = 0, mean_step = 0;
    for (int s = 0; s < o.steps; s++) {
        mean_mpi += mpi_t[s];
        mean_step += step_t[s];
    }
    mean_mpi /= o.steps;
    mean_step /= o.steps;
    /* one line per rank, in rank order */
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            printf("NBLOOP rank=%d steps=%d mpi_us_med=%.2f mpi_us_mean=%.2f step_us_med=%.2f "
                   "step_us_mean=%.2f late_steps=%s wall_s=%.6f checksum=%016llx late_us_med=%.2f\n",
                   rank, o.steps, 1e6 * nb_median(mpi_t, o.steps), 1e6 * mean_mpi, 1e6 * nb_median(step_t, o.steps),
                   1e6 * mean_step, lates[0] ? lates : "-", t_end - t_begin, (unsigned long long)sum,
                   nLate ? 1e6 * nb_median(late_t, nLate) : 0.0);
            printf("NBLOOP_GAPS rank=%d us=", rank);
            for (int s = 0; s < o.steps; s++)
                printf("%s%.1f", s ? "," : "", 1e6 * gap_t[s]);
            printf("\n");
            if (rank == 0 && o.print_steps) {
                printf("NBLOOP_STEPS");
                for (int s = 0; s < o.steps; s++)
                    printf(" %.2f", 1e6 * mpi_t[s]);
                printf("\n");
            }
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    free(late);
    free(buf);
    free(out);
    free(req);
    free(mpi_t);
    free(late_t);
    free(gap_t);
    free(step_t);
    MPI_Finalize();
    return 0;
}
