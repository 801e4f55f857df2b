/* sigchain: an application with its own handler for the watchdog's
 * sampling signal (COLLSCOPE_HANG_SIGNAL, default SIGRTMIN+6), for
 * tests/status/watchdog.inc.sh.
 *
 *   sigchain [--sig N] [--count N] [--stall-ms MS]
 *
 * Installs a handler with sigaction() before MPI_Init, raises the signal
 * N times (default 5); after MPI_Init, rank 0 stalls MS milliseconds
 * outside MPI (default 0) while the others wait in MPI_Barrier (a hang for
 * a short watchdog timeout, whose stack samples use the same signal);
 * then forks a child that raises the signal once more (its copy of the
 * first handler must count it) and exits; then installs a second handler
 * with signal() and raises it N times more. Prints "SIGCHAIN rank=R
 * first=A second=B query=Q fork=F" (Q: 1 when sigaction() reports the
 * second handler as installed; F: 1 when the child counted its signal)
 * and exits 1 unless A = B = N and Q = F = 1. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t sigchain_first, sigchain_second;

static void sigchain_on_first(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    sigchain_first++;
}

static void sigchain_on_second(int sig)
{
    (void)sig;
    sigchain_second++;
}

int main(int argc, char **argv)
{
    int sig = SIGRTMIN + 6, count = 5, stall_ms = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sig"))
            sig = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--count"))
            count = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--stall-ms"))
            stall_ms = atoi(argv[i + 1]);
    }
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = sigchain_on_first;
    a.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&a.sa_mask);
    if (sigaction(sig, &a, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double v = rank, sum = 0;
    for (int i = 0; i < 50; i++)
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        raise(sig);
    if (rank == 0 && stall_ms > 0) {
        struct timespec ts = { stall_ms / 1000, (long)(stall_ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int forked = 0;
    pid_t child = fork();
    if (child == 0) {
        int before = sigchain_first;
        raise(sig);
        _exit(sigchain_first == before + 1 ? 0 : 1);
    }
    if (child > 0) {
        int st = 0;
        while (waitpid(child, &st, 0) < 0)
            ;
        forked = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    if (signal(sig, sigchain_on_second) == SIG_ERR) {
        perror("signal");
        return 1;
    }
    struct sigaction q;
    memset(&q, 0, sizeof q);
    sigaction(sig, NULL, &q);
    int query = !(q.sa_flags & SA_SIGINFO) && q.sa_handler == sigchain_on_second;
    for (int i = 0; i < count; i++)
        raise(sig);
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    printf("SIGCHAIN rank=%d first=%d second=%d query=%d fork=%d\n", rank, (int)sigchain_first, (int)sigchain_second,
           query, forked);
    fflush(stdout);
    int ok = sigchain_first == count && sigchain_second == count && query && forked;
    MPI_Finalize();
    return ok ? 0 : 1;
}
