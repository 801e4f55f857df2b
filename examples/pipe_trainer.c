/* pipe_trainer: a training step in the 3-D parallel style of large-model
 * trainers (Megatron-LM's rank order and its pipeline schedules), with
 * injected compute so the true slowdown is known.
 *
 * dp x pp x tp ranks, rank = stage * (dp * tp) + replica * tp + tp_rank.
 * Communicators (MPI_Comm_split, named with MPI_Comm_set_name unless
 * --no-names): "tp" (same replica and stage), "dp" (same stage and tp
 * rank), "pp" (same replica and tp rank) and "embd" (the first and the
 * last stage of a replica; the pipeline's own when pp is 2).
 *
 * A step: MPI_Pcontrol(1); M microbatches through the stages by
 * send/receive in the 1F1B schedule (stage s runs pp-1-s forwards, then
 * one forward and one backward in turn, then the remaining backwards; the
 * steady pairs exchange with MPI_Sendrecv as Megatron's
 * send_forward_recv_backward does), or all forwards then all backwards
 * with --gpipe (plain sends and receives only); a tensor-parallel allreduce per layer; then the
 * data-parallel gradient sync (an allreduce, or a reduce-scatter and an
 * all-gather with --rs-ag); then the embedding allreduce between the first
 * and the last stage. Every send and receive is called at the pipeline's
 * ends too, to MPI_PROC_NULL, so every rank's compute lies between calls
 * of the same call sites. A forward of a microbatch computes (sleeps)
 * F = --compute-us, a backward 2 F. See examples/README.md for the knobs.
 *
 * Each rank prints its coordinates and its own timers:
 *   PIPE rank=R dp=I pp=S tp=J step_us=X model_us=Y ideal_us=Z [warm_us=W]
 * step_us: its median step, measured (after the --warm-steps); model_us:
 * the median step this schedule takes with these durations if
 * communication were free; ideal_us: the same without the injected
 * problems (a per-microbatch imbalance at its mean); warm_us: the median
 * of the first --warm-steps (but the very first), which run without the
 * slow rank and the heavy stage. step_us / warm_us is the true slowdown, measured in the same run
 * (under the same load); step_us / ideal_us over a clean run's, or
 * model_us / ideal_us, are others. --print-steps: rank 0 prints every
 * step's time too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct pt_opts {
    int D, P, T, steps, micro, layers, names, gpipe, rsag, pcontrol, print_steps;
    int slow_rank, slow_every, heavy_stage, warm;
    unsigned seed;
    double compute_us, slow_us, heavy_us, imbalance_us;
    long bytes;
} pt_opts;

static double pt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pt_sleep(double us)
{
    if (us <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1e6);
    ts.tv_nsec = (long)((us - 1e6 * (double)ts.tv_sec) * 1e3);
    nanosleep(&ts, NULL);
}

/* A uniform number in [0, 1) from (seed, rank, step, microbatch):
 * splitmix64's finalizer on their mix. */
static double pt_uniform(unsigned seed, int rank, int step, int micro)
{
    unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ull +
                           (unsigned long long)rank * 0xBF58476D1CE4E5B9ull +
                           (unsigned long long)step * 0x94D049BB133111EBull + (unsigned long long)micro + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* The forward compute of one microbatch on one rank [us]; a backward
 * takes twice as long. ideal: without the injected problems. */
static double pt_fwd_us(const pt_opts *o, int rank, int step, int m, int ideal)
{
    int stage = rank / (o->D * o->T);
    double f = o->compute_us;
    if (ideal)
        return f + o->imbalance_us / 2;
    if (step < o->warm)
        return f + o->imbalance_us * pt_uniform(o->seed, rank, step, m);
    if (stage == o->heavy_stage)
        f += o->heavy_us;
    if (rank == o->slow_rank && step % o->slow_every == o->slow_every - 1)
        f += o->slow_us;
    return f + o->imbalance_us * pt_uniform(o->seed, rank, step, m);
}

/* The schedule of a stage: ops[k] = m (a forward) or -1 - m (a backward). */
static int pt_schedule(const pt_opts *o, int stage, int *ops)
{
    int M = o->micro, n = 0;
    if (o->gpipe) {
        for (int m = 0; m < M; m++)
            ops[n++] = m;
        for (int m = M - 1; m >= 0; m--)
            ops[n++] = -1 - m;
        return n;
    }
    int warm = o->P - 1 - stage < M ? o->P - 1 - stage : M;
    for (int m = 0; m < warm; m++)
        ops[n++] = m;
    for (int i = 0; i + warm < M; i++) {
        ops[n++] = warm + i;
        ops[n++] = -1 - i;
    }
    for (int m = M - warm; m < M; m++)
        ops[n++] = -1 - m;
    return n;
}

static int pt_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median step time [us] of the group (replica, stage) of rank `me`
 * when every rank computes as pt_fwd_us says and communication is free:
 * the schedule replayed over all steps, a microbatch's forward on a
 * stage after the previous stage's, its backward after the next stage's,
 * the tensor-parallel group as one (its slowest member), the data-parallel
 * sync and the embedding allreduce as barriers of their groups. */
static double pt_model(const pt_opts *o, int me, int ideal)
{
    int D = o->D, P = o->P, M = o->micro, nu = D * P;
    int *ops = malloc((size_t)P * 2 * (size_t)M * sizeof *ops), *nops = malloc((size_t)P * sizeof *nops);
    int *ptr = malloc((size_t)nu * sizeof *ptr);
    double *clock = calloc((size_t)nu, sizeof *clock), *t0 = malloc((size_t)nu * sizeof *t0);
    double *fd = malloc((size_t)nu * (size_t)M * sizeof *fd);
    double *fe = malloc((size_t)nu * (size_t)M * sizeof *fe), *be = malloc((size_t)nu * (size_t)M * sizeof *be);
    double *st = malloc((size_t)o->steps * sizeof *st);
    if (!ops || !nops || !ptr || !clock || !t0 || !fd || !fe || !be || !st) {
        fprintf(stderr, "pipe_trainer: out of memory\n");
        exit(1);
    }
    for (int p = 0; p < P; p++)
        nops[p] = pt_schedule(o, p, ops + (size_t)p * 2 * (size_t)M);
    int mu = (me / o->T) % D + D * (me / (D * o->T)); /* my unit: replica + D * stage */
    for (int s = 0; s < o->steps; s++) {
        for (int u = 0; u < nu; u++) {
            int r = u % D, p = u / D;
            ptr[u] = 0;
            t0[u] = clock[u];
            for (int m = 0; m < M; m++) {
                double f = 0;
                for (int j = 0; j < o->T; j++) {
                    double x = pt_fwd_us(o, p * D * o->T + r * o->T + j, s, m, ideal);
                    f = x > f ? x : f;
                }
                fd[(size_t)u * M + m] = f;
                fe[(size_t)u * M + m] = be[(size_t)u * M + m] = -1;
            }
        }
        for (int progress = 1; progress;) {
            progress = 0;
            for (int u = 0; u < nu; u++) {
                int p = u / D;
                while (ptr[u] < nops[p]) {
                    int op = ops[(size_t)p * 2 * M + (size_t)ptr[u]], m = op >= 0 ? op : -1 - op;
                    double dep = 0;
                    if (op >= 0 && p > 0)
                        dep = fe[(size_t)(u - D) * M + m];
                    else if (op < 0 && p < P - 1)
                        dep = be[(size_t)(u + D) * M + m];
                    if (dep < 0)
                        break;
                    double b = clock[u] > dep ? clock[u] : dep, d = fd[(size_t)u * M + m];
                    clock[u] = b + (op >= 0 ? d : 2 * d);
                    (op >= 0 ? fe : be)[(size_t)u * M + m] = clock[u];
                    ptr[u]++;
                    progress = 1;
                }
            }
        }
        for (int p = 0; p < P && D > 1; p++) { /* the data-parallel sync */
            double t = 0;
            for (int r = 0; r < D; r++)
                t = clock[p * D + r] > t ? clock[p * D + r] : t;
            for (int r = 0; r < D; r++)
                clock[p * D + r] = t;
        }
        for (int r = 0; r < D && P > 1; r++) { /* the embedding allreduce */
            int a = r, b = (P - 1) * D + r;
            double t = clock[a] > clock[b] ? clock[a] : clock[b];
            clock[a] = clock[b] = t;
        }
        st[s] = clock[mu] - t0[mu];
    }
    int n = o->steps - o->warm;
    qsort(st + o->warm, (size_t)n, sizeof *st, pt_cmp);
    double med = st[o->warm + n / 2];
    free(ops);
    free(nops);
    free(ptr);
    free(clock);
    free(t0);
    free(fd);
    free(fe);
    free(be);
    free(st);
    return med;
}

static void pt_usage_exit(int rank, const char *msg, const char *arg)
{
    if (rank == 0)
        fprintf(stderr, "pipe_trainer: %s%s (see examples/README.md)\n", msg, arg ? arg : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Each role of a point-to-point call has a call site of its own (the
 * compiler may neither merge two of them nor two calls into one): the
 * compute before a call is then always of one kind, forward or backward.
 * Every message has tag 0, as PyTorch's pipelines send them: between two
 * stages the activations go one way and the gradients the other, in
 * order (and collscope matches a Sendrecv's receive by its send tag). */
#if defined(__GNUC__) && !defined(__clang__)
#define PT_P2P __attribute__((noipa)) static void
#else
#define PT_P2P __attribute__((noinline)) static void
#endif
PT_P2P pt_recv_fwd(double *b, int n, int peer, int tag, MPI_Comm c)
{
    MPI_Recv(b, n, MPI_DOUBLE, peer, tag, c, MPI_STATUS_IGNORE);
}
PT_P2P pt_recv_bwd(double *b, int n, int peer, int tag, MPI_Comm c)
{
    MPI_Recv(b, n, MPI_DOUBLE, peer, tag, c, MPI_STATUS_IGNORE);
}
PT_P2P pt_send_fwd(double *b, int n, int peer, int tag, MPI_Comm c)
{
    MPI_Send(b, n, MPI_DOUBLE, peer, tag, c);
}
PT_P2P pt_send_bwd(double *b, int n, int peer, int tag, MPI_Comm c)
{
    MPI_Send(b, n, MPI_DOUBLE, peer, tag, c);
}
PT_P2P pt_send_fwd_recv_bwd(double *s, double *r, int n, int peer, int stag, int rtag, MPI_Comm c)
{
    MPI_Sendrecv(s, n, MPI_DOUBLE, peer, stag, r, n, MPI_DOUBLE, peer, rtag, c, MPI_STATUS_IGNORE);
}
PT_P2P pt_send_bwd_recv_fwd(double *s, double *r, int n, int peer, int stag, int rtag, MPI_Comm c)
{
    MPI_Sendrecv(s, n, MPI_DOUBLE, peer, stag, r, n, MPI_DOUBLE, peer, rtag, c, MPI_STATUS_IGNORE);
}

/* One layer pass: compute, then the tensor-parallel allreduce. */
static void pt_layers(const pt_opts *o, double us, double *buf, int n, MPI_Comm tp)
{
    for (int l = 0; l < o->layers; l++) {
        pt_sleep(us / o->layers);
        if (o->T > 1)
            MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, tp);
    }
}

int main(int argc, char **argv)
{
    pt_opts o = { .D = 2,
                  .P = 2,
                  .T = 1,
                  .steps = 10,
                  .micro = 4,
                  .layers = 1,
                  .names = 1,
                  .pcontrol = 1,
                  .slow_rank = -1,
                  .slow_every = 1,
                  .heavy_stage = -1,
                  .seed = 1,
                  .compute_us = 2000,
                  .bytes = 2048 };
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-names")) {
            o.names = 0;
            continue;
        }
        if (!strcmp(a, "--gpipe")) {
            o.gpipe = 1;
            continue;
        }
        if (!strcmp(a, "--rs-ag")) {
            o.rsag = 1;
            continue;
        }
        if (!strcmp(a, "--no-pcontrol")) {
            o.pcontrol = 0;
            continue;
        }
        if (!strcmp(a, "--print-steps")) {
            o.print_steps = 1;
            continue;
        }
        if (!v)
            pt_usage_exit(rank, "needs a value: ", a);
        i++;
        if (!strcmp(a, "--dp"))
            o.D = atoi(v);
        else if (!strcmp(a, "--pp"))
            o.P = atoi(v);
        else if (!strcmp(a, "--tp"))
            o.T = atoi(v);
        else if (!strcmp(a, "--steps"))
            o.steps = atoi(v);
        else if (!strcmp(a, "--micro"))
            o.micro = atoi(v);
        else if (!strcmp(a, "--layers"))
            o.layers = atoi(v);
        else if (!strcmp(a, "--compute-us"))
            o.compute_us = atof(v);
        else if (!strcmp(a, "--bytes"))
            o.bytes = atol(v);
        else if (!strcmp(a, "--slow-rank"))
            o.slow_rank = atoi(v);
        else if (!strcmp(a, "--slow-us"))
            o.slow_us = atof(v);
        else if (!strcmp(a, "--slow-every"))
            o.slow_every = atoi(v);
        else if (!strcmp(a, "--heavy-stage"))
            o.heavy_stage = atoi(v);
        else if (!strcmp(a, "--heavy-us"))
            o.heavy_us = atof(v);
        else if (!strcmp(a, "--imbalance-us"))
            o.imbalance_us = atof(v);
        else if (!strcmp(a, "--warm-steps"))
            o.warm = atoi(v);
        else if (!strcmp(a, "--seed"))
            o.seed = (unsigned)atol(v);
        else
            pt_usage_exit(rank, "unknown option ", a);
    }
    if (o.D < 1 || o.P < 1 || o.T < 1 || o.D * o.P * o.T != size)
        pt_usage_exit(rank, "dp x pp x tp must be the number of ranks", NULL);
    if (o.steps < 1 || o.micro < 1 || o.layers < 1 || o.bytes < 8 || o.slow_every < 1 || o.warm < 0 ||
        o.warm >= o.steps || o.compute_us < 0 || o.slow_us < 0 || o.heavy_us < 0 || o.imbalance_us < 0)
        pt_usage_exit(rank, "a count or a time out of range", NULL);
    int D = o.D, P = o.P, T = o.T;
    int stage = rank / (D * T), replica = (rank / T) % D, tpr = rank % T;
    MPI_Comm tp, dp, pp, embd = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, stage * D + replica, tpr, &tp);
    MPI_Comm_split(MPI_COMM_WORLD, stage * T + tpr, replica, &dp);
    MPI_Comm_split(MPI_COMM_WORLD, replica * T + tpr, stage, &pp);
    if (P > 2)
        MPI_Comm_split(MPI_COMM_WORLD, stage == 0 || stage == P - 1 ? replica * T + tpr : MPI_UNDEFINED, stage, &embd);
    else if (P == 2)
        embd = pp;
    if (o.names) {
        MPI_Comm_set_name(tp, "tp");
        MPI_Comm_set_name(dp, "dp");
        MPI_Comm_set_name(pp, "pp");
        if (P > 2 && embd != MPI_COMM_NULL)
            MPI_Comm_set_name(embd, "embd");
    }
    int n = (int)((size_t)o.bytes / sizeof(double)), ntp = n / 4 ? n / 4 : 1;
    int nd = (n + D - 1) / D * D; /* the gradients, padded to D equal shards */
    double *act = calloc((size_t)n, sizeof *act), *grad = calloc((size_t)n, sizeof *grad);
    double *g = calloc((size_t)nd, sizeof *g), *gs = calloc((size_t)(nd / D), sizeof *gs);
    double *emb = calloc((size_t)ntp, sizeof *emb), *st = malloc((size_t)o.steps * sizeof *st);
    int *ops = malloc((size_t)2 * (size_t)o.micro * sizeof *ops);
    if (!act || !grad || !g || !gs || !emb || !st || !ops)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < n; i++)
        act[i] = grad[i] = 1.0 + (double)rank;
    int prev = stage > 0 ? stage - 1 : MPI_PROC_NULL, next = stage < P - 1 ? stage + 1 : MPI_PROC_NULL;
    int nops = pt_schedule(&o, stage, ops);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < o.steps; s++) {
        if (o.pcontrol)
            MPI_Pcontrol(1);
        double t0 = pt_now();
        int have_act = 0; /* the next forward's input came with the last exchange */
        for (int k = 0; k < nops; k++) {
            int op = ops[k], m = op >= 0 ? op : -1 - op, nxt = k + 1 < nops ? ops[k + 1] : 0;
            if (op >= 0) { /* forward */
                if (!have_act)
                    pt_recv_fwd(act, n, prev, 0, pp);
                have_act = 0;
                pt_layers(&o, pt_fwd_us(&o, rank, s, m, 0), act, ntp, tp);
                if (k + 1 < nops && nxt < 0 && !o.gpipe) /* send forward, receive backward */
                    pt_send_fwd_recv_bwd(act, grad, n, next, 0, 0, pp);
                else
                    pt_send_fwd(act, n, next, 0, pp);
            } else { /* backward: its gradient came with the last exchange unless it follows a backward */
                if (k == 0 || ops[k - 1] < 0 || o.gpipe)
                    pt_recv_bwd(grad, n, next, 0, pp);
                pt_layers(&o, 2 * pt_fwd_us(&o, rank, s, m, 0), grad, ntp, tp);
                if (k + 1 < nops && nxt >= 0) { /* send backward, receive forward */
                    pt_send_bwd_recv_fwd(grad, act, n, prev, 0, 0, pp);
                    have_act = 1;
                } else
                    pt_send_bwd(grad, n, prev, 0, pp);
            }
        }
        for (int i = 0; i < n; i++)
            g[i] = grad[i];
        if (D > 1 && o.rsag) {
            MPI_Reduce_scatter_block(g, gs, nd / D, MPI_DOUBLE, MPI_SUM, dp);
            MPI_Allgather(gs, nd / D, MPI_DOUBLE, g, nd / D, MPI_DOUBLE, dp);
        } else if (D > 1)
            MPI_Allreduce(MPI_IN_PLACE, g, n, MPI_DOUBLE, MPI_SUM, dp);
        if (embd != MPI_COMM_NULL)
            MPI_Allreduce(MPI_IN_PLACE, emb, ntp, MPI_DOUBLE, MPI_SUM, embd);
        st[s] = pt_now() - t0;
        if (o.print_steps && rank == 0)
            printf("PIPE_STEP step=%d step_us=%.2f\n", s, 1e6 * st[s]);
    }
    if (o.print_steps && rank == 0)
        fflush(stdout);
    int nst = o.steps - o.warm;
    int w0 = o.warm > 1; /* the first step (connections made, pages touched) not */
    qsort(st + w0, (size_t)(o.warm - w0), sizeof *st, pt_cmp);
    qsort(st + o.warm, (size_t)nst, sizeof *st, pt_cmp);
    double model = pt_model(&o, rank, 0), ideal = pt_model(&o, rank, 1);
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            printf("PIPE rank=%d dp=%d pp=%d tp=%d step_us=%.2f model_us=%.2f ideal_us=%.2f", rank, replica, stage, tpr,
                   1e6 * st[o.warm + nst / 2], model, ideal);
            if (o.warm)
                printf(" warm_us=%.2f", 1e6 * st[w0 + (o.warm - w0) / 2]);
            printf("\n");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(act);
    free(grad);
    free(g);
    free(gs);
    free(emb);
    free(st);
    free(ops);
    if (P > 2 && embd != MPI_COMM_NULL)
        MPI_Comm_free(&embd);
    MPI_Comm_free(&tp);
    MPI_Comm_free(&dp);
    MPI_Comm_free(&pp);
    MPI_Finalize();
    return 0;
}
