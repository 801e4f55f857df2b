/* test_log.c: the crash-safe log and its conversion to SQLite.
 * Multi-threaded writers, torn slots, a full disk (through the fault seam),
 * bounded memory on a long run, and exact counts after conversion. */
#include "config.h"
#include "tests/unit/check.h"
#include "libtrace/clock.h"
#include "libtrace/log.h"
#include "libtrace/ops.gen.h"
#include "libtrace/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NTHREADS = 4, PER_THREAD = 50000 };

static void *writer(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        cs_rec *r = cs_log_slot();
        if (!r)
            continue;
        memset(r, 0, sizeof *r);
        r->op = CS_OP_MPI_Allreduce;
        r->t0 = cs_clock_ticks();
        r->t1 = r->t0 + 10;
        r->bytes = t; /* which thread */
        r->seq = i;   /* which record */
        r->count = (uint32_t)(i * 7 + t);
        cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, 0));
    }
    return NULL;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static void test_threads_and_convert(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/threads.cslog", dir);
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.rank = 3;
    proto.pid = 4242;
    snprintf(proto.host, sizeof proto.host, "testhost");
    proto.ticks_per_ns = 1.0;
    CHECK(cs_log_open(path, &proto, err, sizeof err) == 0, "open: %s", err);
    pthread_t th[NTHREADS];
    for (uintptr_t t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, writer, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    /* A torn slot: claimed and filled, never committed. */
    cs_rec *torn = cs_log_slot();
    memset(torn, 0xab, sizeof *torn);
    torn->hdr = 0;
    cs_log_close();

    cs_logr *lr = cs_logr_open(path, err, sizeof err);
    CHECK(lr != NULL, "reader: %s", err);
    if (!lr)
        return;
    CHECK(cs_logr_closed(lr), "a closed log reads as closed");
    static uint8_t seen[NTHREADS][PER_THREAD];
    long spans = 0, calibs = 0, bad = 0;
    const cs_rec *r;
    while ((r = cs_logr_next(lr)) != NULL) {
        if (CS_REC_KIND(r->hdr) == CS_REC_CALIB) {
            calibs++;
            continue;
        }
        if (CS_REC_KIND(r->hdr) != CS_REC_SPAN || r->bytes >= NTHREADS || r->seq >= PER_THREAD ||
            r->count != r->seq * 7 + r->bytes) {
            bad++;
            continue;
        }
        seen[r->bytes][r->seq]++;
        spans++;
    }
    cs_logr_close(lr);
    CHECK(bad == 0, "%ld records were garbled or torn", bad);
    CHECK(spans == NTHREADS * PER_THREAD, "read %ld spans, wrote %d", spans, NTHREADS * PER_THREAD);
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            if (seen[t][i] != 1) {
                CHECK(0, "thread %d record %d seen %d times", t, i, seen[t][i]);
                t = NTHREADS;
                break;
            }
    CHECK(calibs >= 2, "calibration points: %ld", calibs);
    printf("ok: %d threads x %d spans written and read back exactly (%ld calibration points)\n", NTHREADS, PER_THREAD,
           calibs);

    char out[4096];
    CHECK(cs_store_convert_log(path, dir, out, err, sizeof err) == 0, "convert: %s", err);
    cs_store *st;
    CHECK(cs_store_open(out, CS_STORE_READ, &st, err, sizeof err) == 0, "open db: %s", err);
    if (st) {
        CHECK(cs_store_count_spans(st) == NTHREADS * PER_THREAD, "db holds %lld spans",
              (long long)cs_store_count_spans(st));
        cs_proc *p;
        int n;
        CHECK(cs_store_procs(st, &p, &n) == 0 && n == 1 && p[0].rank == 3 && p[0].pid == 4242 &&
                  strcmp(p[0].status, "closed") == 0 && strcmp(p[0].host, "testhost") == 0,
              "process row");
        free(p);
        cs_store_close(st);
        printf("ok: converted to %s with every span\n", out);
    }
}

static void test_full_disk(const char *dir)
{
    /* The second segment cannot be reserved: spans after the first 4 MiB
     * are dropped and counted; nothing crashes (no SIGBUS). */
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/full.cslog", dir);
    setenv("COLLSCOPE_TEST_ENOSPC_AFTER", "1", 1);
    cs_log_forget(); /* a fresh writer state in this process */
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.ticks_per_ns = 1.0;
    CHECK(cs_log_open(path, &proto, err, sizeof err) == 0, "open: %s", err);
    long written = 0;
    for (int i = 0; i < 200000; i++) {
        cs_rec *r = cs_log_slot();
        if (!r)
            continue;
        memset(r, 0, sizeof *r);
        r->seq = (uint32_t)i;
        cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, 0));
        written++;
    }
    uint64_t dropped = cs_log_header_ptr()->dropped;
    cs_log_close();
    unsetenv("COLLSCOPE_TEST_ENOSPC_AFTER");
    CHECK(written > 60000 && written < 66000, "written %ld: one 4 MiB segment holds about 65000", written);
    CHECK((long)dropped == 200000 - written, "dropped %llu, expected %ld", (unsigned long long)dropped,
          200000 - written);
    cs_logr *lr = cs_logr_open(path, err, sizeof err);
    long n = 0;
    const cs_rec *r;
    while (lr && (r = cs_logr_next(lr)) != NULL)
        n += CS_REC_KIND(r->hdr) == CS_REC_SPAN;
    if (lr)
        cs_logr_close(lr);
    CHECK(n == written, "read back %ld of %ld", n, written);
    printf("ok: full disk: %ld spans kept, %llu dropped and counted\n", written, (unsigned long long)dropped);
}

static void test_held_slot(const char *dir)
{
    /* A span slot claimed at a call's start stays writable while the call
     * writes more than a whole segment of other records (completions of a
     * huge MPI_Waitall, say): its segment must not be unmapped under it. */
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/held.cslog", dir);
    cs_log_forget();
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.ticks_per_ns = 1.0;
    CHECK(cs_log_open(path, &proto, err, sizeof err) == 0, "open: %s", err);
    for (int i = 0; i < 1000; i++) { /* end near a chunk boundary */
        cs_rec *r = cs_log_slot();
        cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, 0));
    }
    cs_rec *held = cs_log_hold();
    CHECK(held != NULL, "hold");
    for (int i = 0; i < 140000; i++) { /* two segments' worth */
        cs_rec *r = cs_log_slot();
        if (r)
            cs_log_commit(r, CS_REC_HDR(CS_REC_REQDONE, 0));
    }
    held->seq = 4242; /* still mapped: no SIGSEGV here */
    held->op = CS_OP_MPI_Waitall;
    cs_log_release(held, CS_REC_HDR(CS_REC_SPAN, 0));
    cs_log_close();
    cs_logr *lr = cs_logr_open(path, err, sizeof err);
    int found = 0;
    const cs_rec *r;
    while (lr && (r = cs_logr_next(lr)) != NULL)
        found += CS_REC_KIND(r->hdr) == CS_REC_SPAN && r->seq == 4242 && r->op == CS_OP_MPI_Waitall;
    if (lr)
        cs_logr_close(lr);
    CHECK(found == 1, "the held span was written once (found %d)", found);
    printf("ok: a slot held across two segments of other records stays valid\n");
}

static void test_memory_bounded(const char *dir)
{
    /* 6 M spans (384 MiB of log) from one thread: sealed segments are
     * unmapped, so the process's memory stays far below 64 MB. */
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/long.cslog", dir);
    cs_log_forget();
    cs_log_header proto;
    memset(&proto, 0, sizeof proto);
    proto.ticks_per_ns = 1.0;
    CHECK(cs_log_open(path, &proto, err, sizeof err) == 0, "open: %s", err);
    long before = rss_kb(), peak = before, written = 0;
    for (int i = 0; i < 6000000; i++) {
        cs_rec *r = cs_log_slot();
        if (r) {
            r->seq = (uint32_t)i;
            cs_log_commit(r, CS_REC_HDR(CS_REC_SPAN, 0));
            written++;
        }
        if ((i & 0xfffff) == 0) {
            long now = rss_kb();
            if (now > peak)
                peak = now;
        }
    }
    CHECK(cs_log_header_ptr()->dropped == 0 && written == 6000000, "wrote %ld, dropped %llu", written,
          (unsigned long long)cs_log_header_ptr()->dropped);
    cs_log_close();
    CHECK(peak - before < 32 * 1024, "memory grew by %ld kB while logging 384 MiB", peak - before);
    printf("ok: memory grew by %ld kB over a 384 MiB log\n", peak - before);
    unlink(path);
}

int main(void)
{
    char dir[] = "/tmp/cs-test-log.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    cs_clock_init(CS_CLOCK_AUTO);
    test_threads_and_convert(dir);
    test_full_disk(dir);
    test_held_slot(dir);
    test_memory_bounded(dir);
    if (failures) {
        fprintf(stderr, "%d checks failed (files in %s)\n", failures, dir);
        return 1;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return 0;
}
