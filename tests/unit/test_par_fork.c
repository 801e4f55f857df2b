/* test_par_fork.c: the forked transport of the parallel analysis
 * (analyzer/par/par_fork.c) on big messages, linked with a stand-in of
 * cs_analysis_run_par that exchanges patterned bytes instead of analysing.
 *
 *   COLLSCOPE_PAR_TEST_MB=MB test_par_fork K
 *       K processes exchange about MB megabytes each way (par_standin.c)
 *   COLLSCOPE_PAR_TEST_KILL=R test_par_fork K
 *       the same with worker R stopped at once: the run fails naming it
 * Prints one "ok:" line per check that held and the error if the run
 * failed; exits 0 when it ran well, 3 when it failed (with no process
 * and no file descriptor left behind), 1 when something was left. */
#include "config.h"
#include "analyzer/par/par_fork.h"

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int test_par_fork_nfds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_par_fork K\n");
        return 2;
    }
    int k = atoi(argv[1]);
    if (k < 1 || k > 64)
        return 2;
    int before = test_par_fork_nfds();
    char err[1024];
    cs_source src = { .kind = CS_SOURCE_JOB, .arg = "unused", .path = "unused" };
    int rc = cs_par_fork_run(k, &src, 0, stderr, err, sizeof err);
    int after = test_par_fork_nfds();
    if (after != before) {
        fprintf(stderr, "FAIL: %d file descriptors before, %d after\n", before, after);
        return 1;
    }
    printf("ok: no file descriptor left open (%d)\n", after);
    errno = 0;
    if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD) {
        fprintf(stderr, "FAIL: a child process is left\n");
        return 1;
    }
    printf("ok: no child process left\n");
    if (rc != 0) {
        printf("error: %s\n", err);
        return 3;
    }
    return 0;
}
