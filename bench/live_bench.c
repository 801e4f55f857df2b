/* live_bench.c: what following a job's logs costs (analyzer/live,
 * docs/live.md), on logs already written (bench/log_gen):
 *
 *   live_bench DIR [REFRESHES]
 *   live_bench --follow DIR INTERVAL
 *
 * prints the first refresh (every record read: the rate at which the
 * follower reads records, so the calls per second of a whole job it keeps
 * up with on one core), then REFRESHES (default 20) refreshes with nothing
 * new (the cost of a refresh itself at this many ranks): wall and CPU time
 * of each, and the bytes of log read. --follow: while the logs are being
 * written, a refresh every INTERVAL seconds until every process closed its
 * log: per refresh the records read, its wall and CPU time, and in all the
 * largest refresh and the CPU share of the follower. */
#include "config.h"
#include "analyzer/live/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double lb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double lb_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static int lb_follow(const char *dir, double interval)
{
    char err[1024];
    cs_live *l = cs_live_new(dir, NULL, err, sizeof err);
    if (!l) {
        fprintf(stderr, "live_bench: %s\n", err);
        return 1;
    }
    double start = lb_now(), cstart = lb_cpu(), tmax = 0;
    unsigned long long last = 0, most = 0;
    int n = 0;
    for (;;) {
        double a = lb_now(), ca = lb_cpu();
        if (cs_live_poll(l, err, sizeof err) != 0) {
            fprintf(stderr, "live_bench: %s\n", err);
            return 1;
        }
        double b = lb_now() - a, cb = lb_cpu() - ca;
        unsigned long long bytes = (unsigned long long)cs_live_bytes_read(l);
        printf("refresh %d: %zu logs, %.2f M records read in %.1f ms (CPU %.1f ms)%s\n", ++n, cs_live_nproc(l),
               (double)(bytes - last) / 64 / 1e6, b * 1e3, cb * 1e3, cs_live_behind(l) ? ", behind" : "");
        if (bytes - last > most)
            most = bytes - last;
        last = bytes;
        if (b > tmax)
            tmax = b;
        if (cs_live_nproc(l) && cs_live_nclosed(l) == cs_live_nproc(l) && !cs_live_behind(l))
            break;
        double left = interval - (lb_now() - a);
        if (left > 0)
            usleep((useconds_t)(left * 1e6));
    }
    double all = lb_now() - start;
    printf("followed %.1f s: %d refreshes, the largest %.1f ms (%.2f M records), the follower's CPU %.1f %% of one "
           "core\n",
           all, n, tmax * 1e3, (double)most / 64 / 1e6, (lb_cpu() - cstart) / all * 100);
    cs_live_free(l);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--follow") == 0)
        return lb_follow(argv[2], atof(argv[3]));
    if (argc < 2) {
        fprintf(stderr, "usage: live_bench DIR [REFRESHES]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20;
    char err[1024];
    cs_live *l = cs_live_new(argv[1], NULL, err, sizeof err);
    if (!l) {
        fprintf(stderr, "live_bench: %s\n", err);
        return 1;
    }
    double t0 = lb_now(), c0 = lb_cpu();
    if (cs_live_poll(l, err, sizeof err) != 0) {
        fprintf(stderr, "live_bench: %s\n", err);
        return 1;
    }
    double t1 = lb_now(), c1 = lb_cpu();
    unsigned long long bytes = (unsigned long long)cs_live_bytes_read(l);
    printf("first refresh: %zu logs, %.1f MiB of records read in %.3f s (CPU %.3f s): %.1f M records/s\n",
           cs_live_nproc(l), (double)bytes / 1048576.0, t1 - t0, c1 - c0, (double)bytes / 64.0 / (t1 - t0) / 1e6);
    double tmax = 0;
    for (int i = 0; i < n; i++) {
        double a = lb_now();
        if (cs_live_poll(l, err, sizeof err) != 0) {
            fprintf(stderr, "live_bench: %s\n", err);
            return 1;
        }
        double b = lb_now() - a;
        if (b > tmax)
            tmax = b;
    }
    double t2 = lb_now(), c2 = lb_cpu();
    printf("refresh with nothing new: %.3f ms mean, %.3f ms max, CPU %.3f ms each (%d refreshes)\n",
           (t2 - t1) / n * 1e3, tmax * 1e3, (c2 - c1) / n * 1e3, n);
    FILE *devnull = fopen("/dev/null", "w");
    double t3 = lb_now();
    for (int i = 0; i < n && devnull; i++) {
        cs_live_frame(l, devnull, 80, 24, CS_LIVE_BY_STRAGGLER);
        cs_live_metrics(l, devnull);
    }
    double t4 = lb_now();
    if (devnull)
        fclose(devnull);
    printf("frame (80x24, sorted) and metrics text: %.3f ms each\n", (t4 - t3) / n * 1e3);
    cs_live_free(l);
    return 0;
}
