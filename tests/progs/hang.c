/* hang: a training loop that goes wrong in one of the ways jobs hang or
 * fail, after some healthy steps, for collscope status and the in-flight
 * record.
 *
 *   hang --mode MODE [--rank R] [--steps N] [--after K]
 *
 * Every step: compute (1 ms), an allreduce on the world, a ring exchange
 * (MPI_Sendrecv with both neighbours). At step K (--after, default 3) rank
 * R (default 1):
 *   none      nothing: the job ends normally
 *   skip      skips the allreduce and waits in MPI_Recv from rank R+1 (tag
 *             9), which never sends: the others wait in the allreduce
 *   mismatch  calls MPI_Bcast (root 0) where the others call MPI_Allreduce
 *   deadlock2 ranks R and R+1 both receive from each other first (a cycle
 *             of two); the others wait in the allreduce
 *   deadlock3 ranks R, R+1, R+2 each receive from the next (a cycle of three)
 *   compute   spins in hang_spin_forever() outside any MPI call
 *   kill      raises SIGKILL on itself
 *   exit      calls exit(0) without MPI_Finalize
 * Prints "HANG rank=R step=K mode=MODE t=SECONDS" on stderr when it goes
 * wrong (t: CLOCK_REALTIME, when the hang starts). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void hang_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Never returns; its name is what a stack sample shows. */
__attribute__((noinline)) void hang_spin_forever(void)
{
    volatile unsigned long x = 0;
    for (;;)
        x++;
}

int main(int argc, char **argv)
{
    const char *mode = "none";
    int who = 1, steps = 1000000, after = 3;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--rank"))
            who = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--after"))
            after = atoi(argv[i + 1]);
    }
    if (!strcmp(mode, "none") && steps == 1000000)
        steps = 2 * after;
    double v = rank, sum = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int s = 0; s < steps; s++) {
        hang_sleep_ms(1);
        int bad = s == after && strcmp(mode, "none") != 0;
        int me = bad && rank == who;
        if (bad && (me || (!strcmp(mode, "deadlock2") && rank == (who + 1) % size) ||
                    (!strcmp(mode, "deadlock3") && (rank == (who + 1) % size || rank == (who + 2) % size)))) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            fprintf(stderr, "HANG rank=%d step=%d mode=%s t=%lld.%09ld\n", rank, s, mode, (long long)now.tv_sec,
                    now.tv_nsec);
            fflush(stderr);
        }
        if (me && !strcmp(mode, "skip")) {
            MPI_Recv(&v, 1, MPI_DOUBLE, (who + 1) % size, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me && !strcmp(mode, "mismatch")) {
            MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        } else if (me && !strcmp(mode, "compute")) {
            hang_spin_forever();
        } else if (me && !strcmp(mode, "kill")) {
            /* the others wait in the collective when it dies (an MPI
             * launcher may end them all at once after it) */
            hang_sleep_ms(500);
            raise(SIGKILL);
        } else if (me && !strcmp(mode, "exit")) {
            exit(0);
        } else if (bad && !strcmp(mode, "deadlock2") && (rank == who || rank == (who + 1) % size)) {
            int peer = rank == who ? (who + 1) % size : who;
            MPI_Recv(&v, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (bad && !strcmp(mode, "deadlock3") &&
                   (rank == who || rank == (who + 1) % size || rank == (who + 2) % size)) {
            int next = rank == (who + 2) % size ? who : (rank + 1) % size;
            MPI_Recv(&v, 1, MPI_DOUBLE, next, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double a = v, b = 0;
        MPI_Sendrecv(&a, 1, MPI_DOUBLE, right, 1, &b, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0)
        printf("HANG done steps=%d sum=%g\n", steps, sum);
    MPI_Finalize();
    return 0;
}
