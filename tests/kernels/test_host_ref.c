/* test_host_ref: the host reference backend of libcskernels: pack/unpack
 * of odd sizes and alignments and thousands of tiny buffers, ranges,
 * fused unpack with scale and cast, every bad-input error code (with the
 * output left untouched), the allreduce with ranks as threads, the
 * selector, and the pipeline. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cskernels.h"
#include "tests/kernels/ktest.h"

static cs_kern_ctx *ctx;

static uint32_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static int all_bytes(const void *p, int v, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i] != (unsigned char)v)
            return 0;
    return 1;
}

/* Buffers of sizes[] carved at odd offsets out of arena (guards between). */
static void carve(char *arena, size_t n, const size_t *sizes, void **bufs, uint64_t *seed)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        pos += 1 + lcg(seed) % 17; /* guard gap, odd alignments */
        bufs[i] = sizes[i] || lcg(seed) % 2 ? arena + pos : NULL;
        pos += sizes[i];
    }
}

static void test_pack_roundtrip(size_t n, size_t maxsize, uint64_t seed)
{
    size_t *sizes = malloc((n + 1) * sizeof *sizes), total = 0, arena_n = 0, i;
    void **bufs = malloc((n + 1) * sizeof *bufs), **outs = malloc((n + 1) * sizeof *outs);
    char *arena, *arena2, *packed, *want;
    cs_kern_table t = { bufs, sizes, n }, t2 = { outs, sizes, n };
    size_t got_total = 0;

    for (i = 0; i < n; i++) {
        sizes[i] = lcg(&seed) % (maxsize + 1);
        if (i % 7 == 0)
            sizes[i] = 0;
        if (i % 11 == 1)
            sizes[i] = 1;
        total += sizes[i];
        arena_n += sizes[i] + 18;
    }
    arena = malloc(arena_n + 1);
    arena2 = malloc(arena_n + 1);
    packed = malloc(total + 33);
    want = malloc(total + 1);
    for (i = 0; i < arena_n; i++)
        arena[i] = (char)lcg(&seed);
    memset(arena2, 0x5a, arena_n);
    carve(arena, n, sizes, bufs, &seed);
    seed ^= 99;
    carve(arena2, n, sizes, outs, &seed);
    for (i = 0, total = 0; i < n; i++) {
        if (sizes[i])
            memcpy(want + total, bufs[i], sizes[i]);
        total += sizes[i];
    }
    KT_RC(cs_kern_table_bytes(&t, &got_total), CS_KERN_OK, "table_bytes");
    KT_CHECK(got_total == total, "table_bytes %zu, want %zu", got_total, total);
    /* packed at an odd address, guard bytes after it */
    memset(packed, 0xee, total + 33);
    KT_RC(cs_kern_pack(ctx, &t, packed + 3), CS_KERN_OK, "pack");
    KT_CHECK(memcmp(packed + 3, want, total) == 0, "pack of %zu buffers (%zu bytes) differs", n, total);
    KT_CHECK(all_bytes(packed, 0xee, 3) && all_bytes(packed + 3 + total, 0xee, 30), "pack wrote outside");
    KT_RC(cs_kern_unpack(ctx, &t2, packed + 3), CS_KERN_OK, "unpack");
    {
        size_t bad = 0, guards = 0;
        char *prev_end = arena2;
        for (i = 0; i < n; i++) {
            if (!outs[i])
                continue;
            if (sizes[i] && memcmp(outs[i], bufs[i], sizes[i]) != 0)
                bad++;
            if (!all_bytes(prev_end, 0x5a, (size_t)((char *)outs[i] - prev_end)))
                guards++;
            prev_end = (char *)outs[i] + sizes[i];
        }
        KT_CHECK(bad == 0, "unpack: %zu of %zu buffers differ", bad, n);
        KT_CHECK(guards == 0, "unpack: %zu guard gaps overwritten", guards);
    }
    /* pack by ranges of odd lengths gives the same bytes */
    memset(packed, 0, total + 33);
    for (size_t lo = 0; lo < total;) {
        size_t hi = lo + 1 + lcg(&seed) % 1000;
        if (hi > total)
            hi = total;
        KT_RC(cs_kern_pack_range(ctx, &t, packed, lo, hi), CS_KERN_OK, "pack_range");
        lo = hi;
    }
    KT_CHECK(memcmp(packed, want, total) == 0, "pack by ranges differs");
    free(sizes);
    free(bufs);
    free(outs);
    free(arena);
    free(arena2);
    free(packed);
    free(want);
}

static void test_empty(void)
{
    char packed[4] = { 1, 2, 3, 4 };
    size_t z = 0;
    void *nb = NULL;
    cs_kern_table t0 = { NULL, NULL, 0 }, t1 = { &nb, &z, 1 };
    KT_RC(cs_kern_pack(ctx, &t0, NULL), CS_KERN_OK, "pack of no buffers, NULL packed");
    KT_RC(cs_kern_unpack(ctx, &t1, NULL), CS_KERN_OK, "unpack of one empty NULL buffer");
    KT_RC(cs_kern_pack(ctx, &t1, packed), CS_KERN_OK, "pack of one empty buffer");
    KT_CHECK(packed[0] == 1 && packed[3] == 4, "empty pack wrote");
    {
        char one = 'x', out = 0;
        void *b = &one, *o = &out;
        size_t s1 = 1;
        cs_kern_table ta = { &b, &s1, 1 }, tb = { &o, &s1, 1 };
        KT_RC(cs_kern_pack(ctx, &ta, packed + 1), CS_KERN_OK, "pack one byte");
        KT_CHECK(packed[1] == 'x' && packed[0] == 1 && packed[2] == 3, "one byte pack");
        KT_RC(cs_kern_unpack(ctx, &tb, packed + 1), CS_KERN_OK, "unpack one byte");
        KT_CHECK(out == 'x', "one byte unpack");
    }
}

static void test_errors(void)
{
    enum { N = 64 };
    char src[N], packed[N + 8];
    float fsrc[4] = { 1, 2, 3, 4 };
    void *bufs[3] = { src, src + 10, src + 20 };
    size_t sizes[3] = { 10, 10, 10 };
    cs_kern_table t = { bufs, sizes, 3 };
    size_t total;
    int rc;

    memset(src, 7, N);
#define UNTOUCHED() KT_CHECK(all_bytes(packed, 0xa5, sizeof packed), "output written on error")
    memset(packed, 0xa5, sizeof packed);
    KT_RC(cs_kern_pack(NULL, &t, packed), CS_KERN_EINVAL, "NULL ctx");
    KT_RC(cs_kern_pack(ctx, NULL, packed), CS_KERN_EINVAL, "NULL table");
    KT_RC(cs_kern_pack(ctx, &t, NULL), CS_KERN_EINVAL, "NULL packed");
    {
        cs_kern_table b = { NULL, sizes, 3 };
        KT_RC(cs_kern_pack(ctx, &b, packed), CS_KERN_EINVAL, "NULL bufs");
    }
    {
        cs_kern_table b = { bufs, NULL, 3 };
        KT_RC(cs_kern_pack(ctx, &b, packed), CS_KERN_EINVAL, "NULL sizes");
    }
    {
        void *b2[3] = { src, NULL, src };
        cs_kern_table b = { b2, sizes, 3 };
        KT_RC(cs_kern_pack(ctx, &b, packed), CS_KERN_EINVAL, "NULL buffer of size 10 (after a valid one)");
    }
    {
        size_t s2[3] = { 10, SIZE_MAX - 5, 10 };
        cs_kern_table b = { bufs, s2, 3 };
        KT_RC(cs_kern_pack(ctx, &b, packed), CS_KERN_EOVERFLOW, "sizes overflow size_t");
        KT_RC(cs_kern_table_bytes(&b, &total), CS_KERN_EOVERFLOW, "table_bytes overflow");
    }
    {
        cs_kern_table b = { bufs, sizes, (size_t)CS_KERN_MAX_BUFS + 1 };
        KT_RC(cs_kern_pack(ctx, &b, packed), CS_KERN_ETOOMANY, "more than CS_KERN_MAX_BUFS");
    }
    KT_RC(cs_kern_pack_range(ctx, &t, packed, 5, 4), CS_KERN_ERANGE, "range lo > hi");
    KT_RC(cs_kern_pack_range(ctx, &t, packed, 0, 31), CS_KERN_ERANGE, "range past the end");
    {
        void *fb[1] = { fsrc };
        size_t fs[1] = { 6 };
        cs_kern_table b = { fb, fs, 1 };
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_F32, packed, CS_KERN_BF16, 1.0f), CS_KERN_EELEMSIZE, "6 bytes of f32");
        fs[0] = 8;
        KT_RC(cs_kern_pack_cast(ctx, &b, (cs_kern_dtype)7, packed, CS_KERN_BF16, 1.0f), CS_KERN_EINVAL, "bad dtype");
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_F32, packed, CS_KERN_BF16, NAN), CS_KERN_EINVAL, "NaN scale");
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_F32, packed, CS_KERN_BF16, INFINITY), CS_KERN_EINVAL, "Inf scale");
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_F32, packed + 1, CS_KERN_BF16, 1.0f), CS_KERN_EALIGN,
              "odd bf16 packed");
        fb[0] = (char *)fsrc + 2;
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_F32, packed, CS_KERN_BF16, 1.0f), CS_KERN_EALIGN,
              "misaligned f32 buffer");
        fb[0] = fsrc;
        fs[0] = SIZE_MAX - 3; /* elements * 4 overflows */
        KT_RC(cs_kern_pack_cast(ctx, &b, CS_KERN_BF16, packed, CS_KERN_F32, 1.0f), CS_KERN_EOVERFLOW,
              "packed bytes overflow");
    }
    UNTOUCHED();
    /* unpack errors leave the user buffers untouched */
    memset(src, 0xa5, N);
    {
        size_t s2[3] = { 10, 10, 11 };
        cs_kern_table b = { bufs, s2, 3 };
        rc = cs_kern_unpack_cast(ctx, &b, CS_KERN_F16, packed, CS_KERN_F16, 0.5f);
        KT_RC(rc, CS_KERN_EELEMSIZE, "unpack_cast 11 bytes of f16");
        KT_CHECK(all_bytes(src, 0xa5, N), "unpack wrote on error");
    }
    {
        cs_kern_ctx *c2 = (cs_kern_ctx *)&c2;
        KT_RC(cs_kern_ctx_new((cs_kern_backend)5, &c2), CS_KERN_EINVAL, "bad backend");
        KT_CHECK(c2 == NULL, "failed ctx_new leaves *out NULL");
        KT_RC(cs_kern_ctx_new(CS_KERN_HOST, NULL), CS_KERN_EINVAL, "NULL ctx out");
    }
#undef UNTOUCHED
}

static void test_strerror(void)
{
    const char *seen[16];
    int n = 0;
    for (int rc = 0; rc > CS_KERN_ERR_LAST; rc--) {
        const char *m = cs_kern_strerror(rc);
        KT_CHECK(m && strcmp(m, "unknown error") != 0, "code %d has no message", rc);
        for (int k = 0; k < n; k++)
            KT_CHECK(strcmp(seen[k], m) != 0, "code %d shares its message", rc);
        seen[n++] = m;
    }
    KT_CHECK(strcmp(cs_kern_strerror(-100), "unknown error") == 0, "unknown code");
    KT_CHECK(strcmp(cs_kern_strerror(CS_KERN_OK), "success") == 0, "OK message");
}

/* Unpack fp32 packed into bf16 / fp16 / fp32 buffers with scale 1/8. */
static void test_unpack_cast(void)
{
    uint32_t pk[8] = { 0x3f800000u, 0x40000000u, 0x7f800000u, 0xff800000u,
                       0x7fc00000u, 0x7f800001u, 0xc1000000u, 0x00000001u };
    uint16_t bf[3], hf[3];
    uint32_t f[8];
    void *b1[1] = { bf }, *b2[1] = { hf }, *b3[1] = { f };
    size_t s1[1] = { 6 }, s3[1] = { 32 };
    cs_kern_table t1 = { b1, s1, 1 }, t2 = { b2, s1, 1 }, t3 = { b3, s3, 1 };

    KT_RC(cs_kern_unpack_cast(ctx, &t1, CS_KERN_BF16, pk, CS_KERN_F32, 0.125f), CS_KERN_OK, "unpack_cast to bf16");
    KT_CHECK(bf[0] == 0x3e00 && bf[1] == 0x3e80 && bf[2] == 0x7f80, "bf16 1/8, 2/8, Inf: %04x %04x %04x", bf[0], bf[1],
             bf[2]);
    KT_RC(cs_kern_unpack_cast(ctx, &t2, CS_KERN_F16, pk + 3, CS_KERN_F32, 0.125f), CS_KERN_OK, "unpack_cast to f16");
    KT_CHECK(hf[0] == 0xfc00 && hf[1] == 0x7e00 && hf[2] == 0x7e00, "f16 -Inf, NaN, sNaN->qNaN: %04x %04x %04x", hf[0],
             hf[1], hf[2]);
    /* a range writes only its elements */
    memset(f, 0xa5, sizeof f);
    KT_RC(cs_kern_unpack_cast_range(ctx, &t3, CS_KERN_F32, pk, CS_KERN_F32, 0.125f, 6, 8), CS_KERN_OK, "range cast");
    KT_CHECK(f[6] == 0xbf800000u, "-8/8 = %08x", f[6]);
    KT_CHECK(f[7] == 0x00000000u, "2^-149/8 rounds to +0: %08x", f[7]);
    KT_CHECK(all_bytes(f, 0xa5, 24), "range cast wrote outside its range");
    KT_RC(cs_kern_unpack_cast_range(ctx, &t3, CS_KERN_F32, pk, CS_KERN_F32, 0.125f, 6, 9), CS_KERN_ERANGE,
          "range past the end");
}

/* ---- allreduce with ranks as threads ---- */
enum { NR = 4, COUNT = 1000 };
static pthread_barrier_t bar;
static unsigned char ag_space[NR][256];

static int thread_allgather(const void *send, void *recv, size_t bytes, void *user)
{
    int rank = *(int *)user;
    memcpy(ag_space[rank], send, bytes);
    pthread_barrier_wait(&bar);
    for (int p = 0; p < NR; p++)
        memcpy((char *)recv + p * bytes, ag_space[p], bytes);
    pthread_barrier_wait(&bar);
    return 0;
}

static int ar_bad[NR];

static void *ar_rank(void *arg)
{
    int rank = (int)(intptr_t)arg, iter;
    cs_kern_ctx *c;
    cs_kern_peers pe;
    float out[COUNT];
    uint16_t outb[COUNT];

    cs_kern_ctx_new(CS_KERN_HOST, &c);
    if (cs_kern_peers_open(c, COUNT * 4, rank, NR, thread_allgather, &rank, &pe) != CS_KERN_OK) {
        ar_bad[rank]++;
        return NULL;
    }
    for (iter = 0; iter < 6; iter++) {
        cs_kern_ar_algo algo = iter % 2 ? CS_KERN_AR_TWOSHOT : CS_KERN_AR_ONESHOT;
        float *in = pe.bufs[rank];
        pthread_barrier_wait(&bar); /* nobody still reads our previous input: the end barrier ensures it */
        if (iter < 4) {
            for (int i = 0; i < COUNT; i++)
                in[i] = (float)(i * (rank + 1) + iter);
            if (cs_kern_allreduce(c, &pe, algo, out, COUNT, CS_KERN_F32, 0.5f) != CS_KERN_OK)
                ar_bad[rank]++;
            for (int i = 0; i < COUNT; i++)
                if (out[i] != (float)(i * 10 + 4 * iter) * 0.5f)
                    ar_bad[rank]++;
        } else {
            uint16_t *inb = pe.bufs[rank];
            for (int i = 0; i < COUNT; i++) /* bf16 of small integers: exact */
                inb[i] = (uint16_t)(((union {
                                        float f;
                                        uint32_t u;
                                    }){ .f = (float)(i % 64 - 32) })
                                        .u >>
                                    16);
            if (cs_kern_allreduce(c, &pe, algo, outb, COUNT - 3, CS_KERN_BF16, 0.25f) != CS_KERN_OK)
                ar_bad[rank]++;
            for (int i = 0; i < COUNT - 3; i++) {
                float want = (float)(i % 64 - 32); /* 4 ranks * x / 4 */
                if (outb[i] != (uint16_t)(((union {
                                              float f;
                                              uint32_t u;
                                          }){ .f = want })
                                              .u >>
                                          16))
                    ar_bad[rank]++;
            }
        }
    }
    cs_kern_peers_close(c, &pe, thread_allgather, &rank);
    cs_kern_ctx_free(c);
    return NULL;
}

static void test_allreduce(void)
{
    pthread_t th[NR];
    cs_kern_peers pe;
    float in[4] = { 1, 2, 3, 4 }, out[4];
    uint32_t flags[2][1024];

    pthread_barrier_init(&bar, NULL, NR);
    for (int r = 0; r < NR; r++)
        pthread_create(&th[r], NULL, ar_rank, (void *)(intptr_t)r);
    for (int r = 0; r < NR; r++) {
        pthread_join(th[r], NULL);
        KT_CHECK(ar_bad[r] == 0, "rank %d: %d wrong allreduce results", r, ar_bad[r]);
    }
    pthread_barrier_destroy(&bar);

    memset(&pe, 0, sizeof pe);
    memset(flags, 0, sizeof flags);
    pe.nranks = 2;
    pe.rank = 0;
    pe.capacity = sizeof in;
    pe.bufs[0] = in;
    pe.bufs[1] = in;
    pe.flags[0] = flags[0];
    pe.flags[1] = flags[1];
    KT_CHECK(cs_kern_signal_bytes() <= sizeof flags[0], "signal pad %zu bytes", cs_kern_signal_bytes());
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_NCCL, out, 4, CS_KERN_F32, 1.0f), CS_KERN_EINVAL, "algo NCCL");
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, out, 5, CS_KERN_F32, 1.0f), CS_KERN_ERANGE,
          "count > capacity");
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, out, SIZE_MAX / 2, CS_KERN_F32, 1.0f), CS_KERN_EOVERFLOW,
          "count overflows");
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, in, 4, CS_KERN_F32, 1.0f), CS_KERN_EINVAL,
          "out is our input");
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, (char *)out + 1, 3, CS_KERN_F32, 1.0f), CS_KERN_EALIGN,
          "misaligned out");
    pe.flags[1] = NULL;
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, out, 4, CS_KERN_F32, 1.0f), CS_KERN_EINVAL,
          "NULL signal pad");
    pe.nranks = CS_KERN_MAX_RANKS + 1;
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, out, 4, CS_KERN_F32, 1.0f), CS_KERN_ETOOMANY, "9 ranks");
    pe.nranks = 2;
    pe.rank = 2;
    KT_RC(cs_kern_allreduce(ctx, &pe, CS_KERN_AR_ONESHOT, out, 4, CS_KERN_F32, 1.0f), CS_KERN_EINVAL, "rank >= nranks");
    KT_CHECK(pe.epoch == 0, "epoch advanced by failed calls: %u", pe.epoch);
    KT_RC(cs_kern_peers_open(ctx, 16, 0, 9, thread_allgather, NULL, &pe), CS_KERN_ETOOMANY, "peers_open 9 ranks");
    KT_RC(cs_kern_peers_open(ctx, 16, 0, 2, NULL, NULL, &pe), CS_KERN_EINVAL, "peers_open without allgather");
}

static void test_select(void)
{
    cs_kern_ar_tuning tu = { 1000, 2000 };
    KT_CHECK(cs_kern_allreduce_select(8 << 10, 8, NULL) == CS_KERN_AR_ONESHOT, "8 KB on 8 ranks: one-shot");
    KT_CHECK(cs_kern_allreduce_select(256 << 10, 8, NULL) == CS_KERN_AR_ONESHOT, "256 KB on 8 ranks: one-shot");
    KT_CHECK(cs_kern_allreduce_select((256 << 10) + 1, 8, NULL) == CS_KERN_AR_TWOSHOT, "256 KB+1 on 8: two-shot");
    KT_CHECK(cs_kern_allreduce_select(1 << 20, 2, NULL) == CS_KERN_AR_ONESHOT, "1 MB on 2 ranks: one-shot");
    KT_CHECK(cs_kern_allreduce_select(8 << 20, 4, NULL) == CS_KERN_AR_TWOSHOT, "8 MB on 4: two-shot");
    KT_CHECK(cs_kern_allreduce_select((8 << 20) + 1, 4, NULL) == CS_KERN_AR_NCCL, "8 MB+1: NCCL");
    KT_CHECK(cs_kern_allreduce_select(64, 1, NULL) == CS_KERN_AR_NCCL, "1 rank: NCCL");
    KT_CHECK(cs_kern_allreduce_select(64, 9, NULL) == CS_KERN_AR_NCCL, "9 ranks: NCCL");
    KT_CHECK(cs_kern_allreduce_select(1000, 2, &tu) == CS_KERN_AR_ONESHOT, "tuned one-shot");
    KT_CHECK(cs_kern_allreduce_select(1001, 2, &tu) == CS_KERN_AR_TWOSHOT, "tuned two-shot");
    KT_CHECK(cs_kern_allreduce_select(2001, 2, &tu) == CS_KERN_AR_NCCL, "tuned NCCL");
}

/* ---- pipeline ---- */
struct comm_log {
    size_t calls, next_off, bad;
};

/* "Allreduce" of two identical ranks: doubles every bf16 element. */
static int comm_double(void *chunk, size_t bytes, size_t offset, void *stream, void *user)
{
    struct comm_log *lg = user;
    uint16_t *h = chunk;
    if (offset != lg->next_off || bytes % 2 || stream)
        lg->bad++;
    lg->next_off = offset + bytes;
    lg->calls++;
    for (size_t i = 0; i < bytes / 2; i++)
        if (h[i] & 0x7f80)
            h[i] = (uint16_t)(h[i] + 0x80); /* +1 in the exponent: x2 */
    return 0;
}

static int comm_fail(void *chunk, size_t bytes, size_t offset, void *stream, void *user)
{
    return offset > 0 ? -1 : 0;
}

static void test_pipeline(void)
{
    enum { NB = 37 };
    float *bufs_f[NB], *orig[NB];
    void *bufs[NB];
    size_t sizes[NB], total = 0;
    uint16_t *packed;
    uint64_t seed = 7;
    cs_kern_table t = { bufs, sizes, NB };
    struct comm_log lg = { 0, 0, 0 };
    cs_kern_pipeline p;
    size_t bad = 0;

    for (int i = 0; i < NB; i++) {
        size_t n = lcg(&seed) % 300;
        sizes[i] = n * 4;
        total += n;
        bufs_f[i] = malloc(sizes[i] + 4);
        orig[i] = malloc(sizes[i] + 4);
        for (size_t k = 0; k < n; k++)
            orig[i][k] = bufs_f[i][k] = (float)((int)(lcg(&seed) % 512) - 256) / 4.0f; /* exact in bf16 */
        bufs[i] = bufs_f[i];
    }
    packed = malloc(total * 2);
    memset(&p, 0, sizeof p);
    p.table = &t;
    p.user_type = CS_KERN_F32;
    p.packed = packed;
    p.packed_type = CS_KERN_BF16;
    p.scale = 0.5f;
    p.chunk_bytes = 998;
    p.comm = comm_double;
    p.user = &lg;
    KT_RC(cs_kern_pipeline_run(ctx, &p), CS_KERN_OK, "pipeline");
    KT_CHECK(lg.bad == 0 && lg.next_off == total * 2, "chunks out of order or gaps (%zu bad, end %zu of %zu)", lg.bad,
             lg.next_off, total * 2);
    KT_CHECK(lg.calls == (total * 2 + 997) / 998, "%zu comm calls for %zu bytes", lg.calls, total * 2);
    for (int i = 0; i < NB; i++)
        if (sizes[i] && memcmp(bufs_f[i], orig[i], sizes[i]) != 0)
            bad++;
    KT_CHECK(bad == 0, "pipeline: %zu buffers differ after x2 / 2", bad);
    p.chunk_bytes = 999;
    KT_RC(cs_kern_pipeline_run(ctx, &p), CS_KERN_EELEMSIZE, "odd chunk of bf16");
    p.chunk_bytes = 64;
    p.comm = comm_fail;
    KT_RC(cs_kern_pipeline_run(ctx, &p), CS_KERN_ECALLBACK, "comm error");
    p.comm = NULL;
    KT_RC(cs_kern_pipeline_run(ctx, &p), CS_KERN_EINVAL, "no comm callback");
    for (int i = 0; i < NB; i++) {
        free(bufs_f[i]);
        free(orig[i]);
    }
    free(packed);
}

int main(void)
{
    int rc = cs_kern_ctx_new(CS_KERN_HOST, &ctx);
    if (rc != CS_KERN_OK) {
        printf("FAIL: host context: %s\n", cs_kern_strerror(rc));
        return 1;
    }
    KT_CHECK(cs_kern_ctx_backend(ctx) == CS_KERN_HOST, "backend");
    test_strerror();
    test_empty();
    test_pack_roundtrip(5, 40, 1);
    test_pack_roundtrip(300, 5000, 2);
    test_pack_roundtrip(5000, 7, 3);             /* thousands of tiny buffers */
    test_pack_roundtrip(CS_KERN_MAX_BUFS, 2, 4); /* the most buffers allowed */
    test_errors();
    test_unpack_cast();
    test_allreduce();
    test_select();
    test_pipeline();
    cs_kern_ctx_free(ctx);
    return kt_done("test_host_ref");
}
