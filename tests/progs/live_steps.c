/*
 * live_steps: a training-style loop for `collscope top`'s tests: each
 * step starts with MPI_Pcontrol(1) (a step marker, unless --no-markers),
 * "computes" by sleeping --work-us (a sleep, so that ranks sharing few
 * cores do not slow each other), then sums a small gradient with
 * MPI_Allreduce (--buckets of them). From step --slow-from on, rank
 * --slow-rank sleeps --slow-us more per step: it turns slow half-way.
 * --hang-at S: every rank blocks in an MPI_Recv nobody sends at step S.
 * --split: the ranks are also split in two halves, communicators named
 * "half0" and "half1", and each step (after the compute) sums the
 * gradient over its half too, with a reduction operation of its own;
 * --slow-comm C: from step --slow-from on, that operation sleeps --slow-us
 * once per call in half C (on every member that runs it): the calls of
 * one communicator turn slow, no rank's own work does. --slack-us U:
 * the ranks of half 0 compute U more per step (half 1 waits for them in
 * the world's calls, until its own calls take that time).
 * --pipe: a pipeline of two stages, the ranks' halves (communicators
 * "stage0" and "stage1"): each step, after the compute, each rank r of
 * stage 0 sends --msg-bytes (1024) to rank r + size/2 (MPI_Send), which
 * receives them (MPI_Irecv, MPI_Wait); then each stage sums over its own
 * ranks, then all over the world. --slow-stage G: from step --slow-from
 * on, every rank of stage G sleeps --slow-us more per step (a stage turns
 * slow). --slow-link R: from step --slow-from on, rank R of stage 0 sends
 * --slow-bytes instead (its link to its partner turns slow; no rank's
 * own work does).
 * --exit N: rank 0 exits with status N (after MPI_Finalize), having
 * printed "LIVE_STEPS_ERR exit=N" on stderr.
 *
 *   live_steps [--steps N] [--work-us U] [--buckets B] [--slow-rank R]
 *              [--slow-from S] [--slow-us U] [--no-markers] [--hang-at S]
 *              [--split [--slow-comm C] [--slack-us U]]
 *              [--pipe [--msg-bytes N] [--slow-stage G] [--slow-link R [--slow-bytes N]]] [--exit N]
 *
 * Rank 0 prints "LIVE_STEPS steps=N slow_rank=R slow_from=S" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static void nap(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (us > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

static long op_nap_us; /* the next call of the half's operation sleeps this long */

static void op_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    nap(op_nap_us);
    op_nap_us = 0;
    for (int i = 0; i < *len; i++)
        ((double *)inout)[i] += ((const double *)in)[i];
}

int main(int argc, char **argv)
{
    long steps = 300, work = 4000, slow_rank = -1, slow_from = -1, slow_us = 0, buckets = 2, hang_at = -1;
    long slow_comm = -1, exit_code = 0, slack = 0;
    long msg_bytes = 1024, slow_stage = -1, slow_link = -1, slow_bytes = 8 << 20;
    int markers = 1, split = 0, pipe = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *dst = NULL;
        if (strcmp(a, "--no-markers") == 0) {
            markers = 0;
            continue;
        }
        if (strcmp(a, "--split") == 0) {
            split = 1;
            continue;
        }
        if (strcmp(a, "--pipe") == 0) {
            pipe = 1;
            continue;
        }
        if (strcmp(a, "--steps") == 0)
            dst = &steps;
        else if (strcmp(a, "--work-us") == 0)
            dst = &work;
        else if (strcmp(a, "--buckets") == 0)
            dst = &buckets;
        else if (strcmp(a, "--slow-rank") == 0)
            dst = &slow_rank;
        else if (strcmp(a, "--slow-from") == 0)
            dst = &slow_from;
        else if (strcmp(a, "--slow-us") == 0)
            dst = &slow_us;
        else if (strcmp(a, "--hang-at") == 0)
            dst = &hang_at;
        else if (strcmp(a, "--slow-comm") == 0)
            dst = &slow_comm;
        else if (strcmp(a, "--exit") == 0)
            dst = &exit_code;
        else if (strcmp(a, "--slack-us") == 0)
            dst = &slack;
        else if (strcmp(a, "--msg-bytes") == 0)
            dst = &msg_bytes;
        else if (strcmp(a, "--slow-stage") == 0)
            dst = &slow_stage;
        else if (strcmp(a, "--slow-link") == 0)
            dst = &slow_link;
        else if (strcmp(a, "--slow-bytes") == 0)
            dst = &slow_bytes;
        if (!dst || i + 1 >= argc) {
            fprintf(stderr, "live_steps: bad argument '%s'\n", a);
            return 2;
        }
        *dst = strtol(argv[++i], NULL, 10);
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Op sum_op = MPI_OP_NULL;
    int color = 2 * rank / (size > 1 ? size : 2);
    if (split) {
        char name[16];
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
        snprintf(name, sizeof name, "half%d", color);
        MPI_Comm_set_name(half, name);
        MPI_Op_create(op_sum, 1, &sum_op);
    }
    MPI_Comm stage = MPI_COMM_NULL;
    char *act = NULL;
    long act_len = msg_bytes > slow_bytes ? msg_bytes : slow_bytes;
    if (pipe) {
        char name[16];
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &stage);
        snprintf(name, sizeof name, "stage%d", color);
        MPI_Comm_set_name(stage, name);
        act = calloc((size_t)act_len, 1);
        if (!act) {
            fprintf(stderr, "live_steps: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double grad[256], sum[256];
    for (int i = 0; i < 256; i++)
        grad[i] = rank + i;
    for (long s = 0; s < steps; s++) {
        if (markers)
            MPI_Pcontrol(1);
        nap(work);
        if (split && color == 0)
            nap(slack);
        if (rank == slow_rank && slow_from >= 0 && s >= slow_from)
            nap(slow_us);
        if (s == hang_at) {
            int x;
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (split) {
            op_nap_us = color == slow_comm && slow_from >= 0 && s >= slow_from ? slow_us : 0;
            MPI_Allreduce(grad, sum, 256, MPI_DOUBLE, sum_op, half);
        }
        if (pipe) {
            int later = slow_from >= 0 && s >= slow_from, partner = color == 0 ? rank + size / 2 : rank - size / 2;
            if (color == slow_stage && later)
                nap(slow_us);
            /* the message's length, known to both ends: the sender's */
            int sender = color == 0 ? rank : partner;
            long n = sender == slow_link && later ? slow_bytes : msg_bytes;
            if (partner >= 0 && partner < size) {
                if (color == 0) {
                    MPI_Send(act, (int)n, MPI_BYTE, partner, 7, MPI_COMM_WORLD);
                } else {
                    MPI_Request rq;
                    MPI_Irecv(act, (int)n, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &rq);
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                }
            }
            MPI_Allreduce(grad, sum, 256, MPI_DOUBLE, MPI_SUM, stage);
        }
        for (long b = 0; b < buckets; b++)
            MPI_Allreduce(grad, sum, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("LIVE_STEPS steps=%ld slow_rank=%ld slow_from=%ld\n", steps, slow_rank, slow_from);
    if (rank == 0 && exit_code)
        fprintf(stderr, "LIVE_STEPS_ERR exit=%ld\n", exit_code);
    if (split) {
        MPI_Op_free(&sum_op);
        MPI_Comm_free(&half);
    }
    if (pipe) {
        MPI_Comm_free(&stage);
        free(act);
    }
    MPI_Finalize();
    return rank == 0 ? (int)exit_code : 0;
}
