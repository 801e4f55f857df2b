/* pipe3d: a training loop in the 3-D parallel style of large-model
 * trainers (Megatron-LM's rank order): dp x pp x tp ranks, rank =
 * stage * (dp * tp) + replica * tp + tp_rank. Communicators are made with
 * MPI_Comm_split: the tensor-parallel group (same replica and stage), the
 * data-parallel group (same stage and tp rank) and the pipeline (same
 * replica and tp rank), named "tp", "dp", "pp" with --names. Per step,
 * for each of M microbatches: forward (receive the activations from the
 * previous stage, compute, an allreduce in the tp group per layer, send
 * to the next stage), then backward in reverse; then the data-parallel
 * allreduce of the gradients.
 *
 *   pipe3d [--dp D] [--pp P] [--tp T] [--steps N] [--micro M] [--layers L]
 *          [--compute-us U] [--bytes B] [--names] [--sleep]
 *          [--slow-stage S | --slow-rank R] [--slow-us U] [--slow-every K]
 *          [--imbalance-us U] [--seed X]
 *
 * --sleep: compute sleeps instead of spinning (8 ranks on 2 cores keep
 * their timing); --slow-stage / --slow-rank: those ranks compute U us more
 * per microbatch and layer pass (every K-th step with --slow-every);
 * --imbalance-us: every rank computes a random 0-U us more per microbatch
 * (seeded by --seed and the rank, different in every step).
 *
 * Prints per rank: PIPE3D rank=R dp=I pp=S tp=J step_us_med=X (its own
 * coordinates and step time). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double p3_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void p3_compute(double us)
{
    double end = p3_now() + us * 1e-6;
    volatile double x = 1;
    while (p3_now() < end)
        x = x * 1.0000001 + 1e-9;
}

static void p3_sleep(double us)
{
    struct timespec ts = { (time_t)(us / 1e6), (long)((us - 1e6 * (double)(time_t)(us / 1e6)) * 1e3) };
    nanosleep(&ts, NULL);
}

/* A uniform number in [0, 1) from (seed, rank, step, microbatch):
 * splitmix64's finalizer on their mix. */
static double p3_uniform(unsigned seed, int rank, int step, int micro)
{
    unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ull +
                           (unsigned long long)rank * 0xBF58476D1CE4E5B9ull +
                           (unsigned long long)step * 0x94D049BB133111EBull + (unsigned long long)micro + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static int p3_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int D = 2, P = 2, T = 1, steps = 10, micro = 2, layers = 2, names = 0, slow_stage = -1, slow_rank = -1;
    int use_sleep = 0, slow_every = 1;
    unsigned seed = 1;
    double compute_us = 200, slow_us = 0, imbalance_us = 0;
    long bytes = 16384;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--names")) {
            names = 1;
            continue;
        }
        if (!strcmp(a, "--sleep")) {
            use_sleep = 1;
            continue;
        }
        if (!v) {
            if (rank == 0)
                fprintf(stderr, "pipe3d: %s needs a value (see the comment at the top of pipe3d.c)\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
        if (!strcmp(a, "--dp"))
            D = atoi(v);
        else if (!strcmp(a, "--pp"))
            P = atoi(v);
        else if (!strcmp(a, "--tp"))
            T = atoi(v);
        else if (!strcmp(a, "--steps"))
            steps = atoi(v);
        else if (!strcmp(a, "--micro"))
            micro = atoi(v);
        else if (!strcmp(a, "--layers"))
            layers = atoi(v);
        else if (!strcmp(a, "--compute-us"))
            compute_us = atof(v);
        else if (!strcmp(a, "--bytes"))
            bytes = atol(v);
        else if (!strcmp(a, "--slow-stage"))
            slow_stage = atoi(v);
        else if (!strcmp(a, "--slow-us"))
            slow_us = atof(v);
        else if (!strcmp(a, "--slow-rank"))
            slow_rank = atoi(v);
        else if (!strcmp(a, "--slow-every"))
            slow_every = atoi(v);
        else if (!strcmp(a, "--imbalance-us"))
            imbalance_us = atof(v);
        else if (!strcmp(a, "--seed"))
            seed = (unsigned)atol(v);
        else {
            if (rank == 0)
                fprintf(stderr, "pipe3d: unknown option %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (D < 1 || P < 1 || T < 1 || D * P * T != size || steps < 1 || micro < 1 || layers < 1 || bytes < 8 ||
        slow_every < 1) {
        if (rank == 0)
            fprintf(stderr, "pipe3d: dp %d x pp %d x tp %d must be the %d ranks\n", D, P, T, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int stage = rank / (D * T), replica = (rank / T) % D, tpr = rank % T;
    MPI_Comm tp, dp, pp;
    MPI_Comm_split(MPI_COMM_WORLD, stage * D + replica, tpr, &tp);
    MPI_Comm_split(MPI_COMM_WORLD, stage * T + tpr, replica, &dp);
    MPI_Comm_split(MPI_COMM_WORLD, replica * T + tpr, stage, &pp);
    if (names) {
        MPI_Comm_set_name(tp, "tp");
        MPI_Comm_set_name(dp, "dp");
        MPI_Comm_set_name(pp, "pp");
    }
    size_t n = (size_t)bytes / sizeof(double);
    double *act = calloc(n, sizeof *act), *grad = calloc(n, sizeof *grad), *tmp = calloc(n, sizeof *tmp);
    double *st = malloc((size_t)steps * sizeof *st);
    if (!act || !grad || !tmp || !st)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++)
        act[i] = grad[i] = 1.0 + (double)rank;
    int prev = stage > 0 ? stage - 1 : MPI_PROC_NULL, next = stage < P - 1 ? stage + 1 : MPI_PROC_NULL;
    int slow_me = stage == slow_stage || rank == slow_rank;
    void (*work)(double) = use_sleep ? p3_sleep : p3_compute;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < steps; s++) {
        double t0 = p3_now();
        double extra = slow_me && s % slow_every == slow_every - 1 ? slow_us : 0;
        for (int m = 0; m < micro; m++) { /* forward */
            MPI_Recv(act, (int)n, MPI_DOUBLE, prev, m, pp, MPI_STATUS_IGNORE);
            double imb = imbalance_us * p3_uniform(seed, rank, s, m);
            for (int l = 0; l < layers; l++) {
                work((compute_us + extra + imb) / layers);
                if (T > 1)
                    MPI_Allreduce(MPI_IN_PLACE, act, (int)(n / 4 ? n / 4 : 1), MPI_DOUBLE, MPI_SUM, tp);
            }
            MPI_Send(act, (int)n, MPI_DOUBLE, next, m, pp);
        }
        for (int m = micro - 1; m >= 0; m--) { /* backward */
            MPI_Recv(grad, (int)n, MPI_DOUBLE, next, 1000 + m, pp, MPI_STATUS_IGNORE);
            for (int l = 0; l < layers; l++) {
                work(2 * (compute_us + extra) / layers);
                if (T > 1)
                    MPI_Allreduce(MPI_IN_PLACE, grad, (int)(n / 4 ? n / 4 : 1), MPI_DOUBLE, MPI_SUM, tp);
            }
            MPI_Send(grad, (int)n, MPI_DOUBLE, prev, 1000 + m, pp);
        }
        if (D > 1)
            MPI_Allreduce(grad, tmp, (int)n, MPI_DOUBLE, MPI_SUM, dp);
        st[s] = p3_now() - t0;
    }
    qsort(st, (size_t)steps, sizeof *st, p3_cmp);
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            printf("PIPE3D rank=%d dp=%d pp=%d tp=%d step_us_med=%.2f\n", rank, replica, stage, tpr,
                   1e6 * st[steps / 2]);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(act);
    free(grad);
    free(tmp);
    free(st);
    MPI_Comm_free(&tp);
    MPI_Comm_free(&dp);
    MPI_Comm_free(&pp);
    MPI_Finalize();
    return 0;
}
