/* callsite_prog.c: MPI_Barrier from one line of code reached along
 * different stacks, for tests/mpi/callsite_cache.sh. The call sites that
 * the preload caches by where its wrapper is called from must still tell
 * these stacks apart: the same function at the same stack depth under
 * different callers (one frame up, or two), and recursion to varying
 * depths. Prints, for every barrier in order, the functions it expects
 * on the stack from `leaf` to `main`, one line each ("leaf via_a main").
 * usage: callsite_prog [STEPS] (default 40) */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

#define CS_NOIPA __attribute__((noinline, noipa))

static volatile int sink;

CS_NOIPA void leaf(int how)
{
    MPI_Barrier(MPI_COMM_WORLD);
    sink += how; /* no tail call below */
}
CS_NOIPA void via_a(void)
{
    leaf(1);
    sink++;
}
CS_NOIPA void via_b(void)
{
    leaf(2);
    sink++;
}
CS_NOIPA void mid(int how)
{
    leaf(how);
    sink++;
}
CS_NOIPA void outer_a(void)
{
    mid(3);
    sink++;
}
CS_NOIPA void outer_b(void)
{
    mid(4);
    sink++;
}
CS_NOIPA void rec(int d)
{
    if (d == 0)
        leaf(5);
    else
        rec(d - 1);
    sink++;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < steps; i++) {
        if (i % 2) {
            via_a();
            via_b();
            printf("leaf via_a main\nleaf via_b main\n");
        } else {
            via_b();
            via_a();
            printf("leaf via_b main\nleaf via_a main\n");
        }
        if (i % 3 == 0) {
            outer_a();
            printf("leaf mid outer_a main\n");
        } else {
            outer_b();
            printf("leaf mid outer_b main\n");
        }
        int d = (i * 7) % 4;
        rec(d);
        printf("leaf");
        for (int k = 0; k <= d; k++)
            printf(" rec");
        printf(" main\n");
    }
    MPI_Finalize();
    return 0;
}
