/* kineto_gen.c: write per-rank PyTorch profiler (Kineto) traces of a given
 * size, fast, for bench/import_bench.sh:
 *
 *     kineto_gen DIR [--ranks 8] [--mb 100] [--late-rank 3] [--gzip] [--launches]
 *
 * DIR/rankN.json (or .json.gz): an NCCL-style job, steps of a top-level CPU
 * op with nested children, GEMM kernels, an allreduce on default_pg
 * (record_param_comms with Seq, its NCCL kernel linked by External id),
 * until the file holds about MB megabytes; the late rank computes 2 ms
 * longer each step. --launches: each kernel also has its cudaLaunchKernel
 * (cuda_runtime, on the main thread, the kernel's correlation id), as real
 * traces have and as HTA needs to put kernels in their steps. Prints the
 * files' total size in bytes. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

typedef struct kg_out {
    FILE *f;
    gzFile gz;
    int64_t bytes;
} kg_out;

static void kg_put(kg_out *o, const char *s, size_t n)
{
    if (o->gz)
        gzwrite(o->gz, s, (unsigned)n);
    else
        fwrite(s, 1, n, o->f);
    o->bytes += (int64_t)n;
}

/* One complete event: the common part, then args (a JSON object body, or NULL). */
static void kg_event(kg_out *o, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t ts_ns,
                     int64_t dur_ns, const char *args)
{
    char b[2048];
    int n = snprintf(b, sizeof b,
                     "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld,\n"
                     "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld%s%s%s\n  },\n",
                     cat, name, (long long)pid, (long long)tid, (long long)(ts_ns / 1000), (long long)(ts_ns % 1000),
                     (long long)(dur_ns / 1000), (long long)(dur_ns % 1000), args ? ",\n    \"args\": {\n      " : "",
                     args ? args : "", args ? "\n    }" : "");
    kg_put(o, b, (size_t)n);
}

static int kg_rank(const char *dir, int rank, int ranks, int64_t target, int late, int gz, int launches, int64_t *total)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.json%s", dir, rank, gz ? ".gz" : "");
    kg_out o = { NULL, NULL, 0 };
    if (gz)
        o.gz = gzopen(path, "wb1");
    else
        o.f = fopen(path, "w");
    if (!o.f && !o.gz) {
        fprintf(stderr, "kineto_gen: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char b[4096];
    int n = snprintf(b, sizeof b,
                     "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
                     "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, "
                     "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
                     "\"backend_config\": \"cuda:nccl\", \"pg_size\": %d, \"ranks\": [",
                     rank, ranks, ranks);
    kg_put(&o, b, (size_t)n);
    for (int r = 0; r < ranks; r++) {
        n = snprintf(b, sizeof b, "%s%d", r ? ", " : "", r);
        kg_put(&o, b, (size_t)n);
    }
    static const char head_end[] = "]}]},\n  \"traceEvents\": [\n";
    kg_put(&o, head_end, strlen(head_end));
    int64_t pid = 4000 + rank, t = 1000000000, ext = 1;
    for (int64_t step = 1; o.bytes < target; step++) {
        int64_t s0 = t;
        int64_t c = 5000000 + (rank == late ? 2000000 : 0);
        /* compute: a top-level op with 40 children and a GEMM kernel each */
        kg_event(&o, "cpu_op", "aten::linear", pid, pid, t, c, "\"External id\": 1, \"Ev Idx\": 1");
        for (int i = 0; i < 40; i++) {
            int64_t ct = t + 1000 + i * (c / 41);
            snprintf(b, sizeof b,
                     "\"External id\": %lld, \"Ev Idx\": %lld, \"Input Dims\": [[1024, 1024], [1024]], "
                     "\"Input type\": [\"float\", \"float\"], \"Fwd thread id\": 1, \"Sequence number\": %lld",
                     (long long)ext, (long long)ext, (long long)ext);
            kg_event(&o, "cpu_op", "aten::addmm", pid, pid, ct, c / 50, b);
            snprintf(b, sizeof b,
                     "\"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, "
                     "\"correlation\": %lld, \"registers per thread\": 96, \"grid\": [8, 1, 1], \"block\": [256, 1, 1]",
                     (long long)ext, (long long)(ext + 100000));
            kg_event(&o, "kernel", "ampere_sgemm_128x64_nn", 0, 7, ct + 2000, c / 60, b);
            if (launches) {
                snprintf(b, sizeof b, "\"External id\": %lld, \"correlation\": %lld", (long long)ext,
                         (long long)(ext + 100000));
                kg_event(&o, "cuda_runtime", "cudaLaunchKernel", pid, pid, ct + 10, 5000, b);
            }
            ext++;
        }
        t += c;
        /* the allreduce: the others wait for the late rank in its kernel */
        int64_t arrive = t, last = s0 + 5000000 + (late >= 0 && late < ranks ? 2000000 : 0);
        int64_t end = last + 1000000;
        snprintf(b, sizeof b,
                 "\"External id\": %lld, \"Collective name\": \"allreduce\", \"dtype\": \"Float\", "
                 "\"In msg nelems\": 4194304, \"Out msg nelems\": 4194304, \"Group size\": %d, "
                 "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
                 "\"Process Group Ranks\": \"[0, ...]\", \"Seq\": %lld",
                 (long long)ext, ranks, (long long)step);
        kg_event(&o, "cpu_op", "record_param_comms", pid, pid, arrive, end - arrive, b);
        if (launches) {
            snprintf(b, sizeof b, "\"External id\": %lld, \"device\": 0, \"stream\": 7, \"correlation\": %lld",
                     (long long)ext, (long long)(ext + 100000));
            kg_event(&o, "cuda_runtime", "cudaLaunchKernel", pid, pid, arrive + 1000, 5000, b);
        }
        kg_event(&o, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 7,
                 arrive, end - arrive, b);
        ext++;
        t = end + 10000;
        snprintf(b, sizeof b, "ProfilerStep#%lld", (long long)step);
        kg_event(&o, "user_annotation", b, pid, pid, s0, t - s0, "\"External id\": 0");
    }
    /* the last event without its comma */
    kg_event(&o, "user_annotation", "end", pid, pid, t, 1, NULL);
    n = snprintf(b, sizeof b,
                 "  {\"ph\": \"i\", \"name\": \"Record Window End\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", "
                 "\"ts\": %lld}\n  ],\n  \"traceName\": \"rank%d.json\",\n  \"displayTimeUnit\": \"ms\",\n"
                 "  \"baseTimeNanoseconds\": 1700000000000000000\n}\n",
                 (long long)(t / 1000), rank);
    kg_put(&o, b, (size_t)n);
    int bad = o.gz ? gzclose(o.gz) != Z_OK : fclose(o.f) != 0;
    if (bad) {
        fprintf(stderr, "kineto_gen: %s: write error\n", path);
        return -1;
    }
    *total += o.bytes;
    return 0;
}

int main(int argc, char **argv)
{
    static const char usage[] = "usage: kineto_gen DIR [--ranks N] [--mb MB] [--late-rank R] [--gzip] [--launches]\n";
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        fputs(usage, stderr);
        return 2;
    }
    const char *dir = argv[1];
    int ranks = 8, late = 3, gz = 0, launches = 0;
    double mb = 100;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--late-rank") && i + 1 < argc)
            late = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gzip"))
            gz = 1;
        else if (!strcmp(argv[i], "--launches"))
            launches = 1;
        else {
            fprintf(stderr, "kineto_gen: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (ranks < 1 || ranks > 4096 || !(mb > 0)) {
        fprintf(stderr, "kineto_gen: --ranks 1..4096 and --mb > 0\n");
        return 2;
    }
    mkdir(dir, 0755);
    int64_t total = 0;
    for (int r = 0; r < ranks; r++)
        if (kg_rank(dir, r, ranks, (int64_t)(mb * 1e6), late, gz, launches, &total) != 0)
            return 1;
    printf("%lld\n", (long long)total);
    return 0;
}
