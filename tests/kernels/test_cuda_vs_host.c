/* test_cuda_vs_host: the CUDA backend against the host reference, on a GPU
 * (skips without one; run by tests/gpu/kernels.sh). Same inputs through both
 * backends, results compared bit for bit: pack / unpack with odd sizes and
 * alignments and thousands of tiny buffers, fused scale and cast, one-shot
 * and two-shot allreduce with peers simulated as separate buffers of one
 * device, and the two-stream pipeline. */
#include "config.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cskernels.h"
#include "tests/kernels/ktest.h"

static cs_kern_ctx *hctx, *dctx;

static uint32_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

#define CUDA_OK(call) KT_CHECK((call) == cudaSuccess, "%s failed", #call)

/* A host arena and its device mirror; pointers map between the two. */
typedef struct arena {
    char *h, *d;
    size_t n;
} arena;

static void arena_new(arena *a, size_t n, uint64_t *seed)
{
    a->n = n;
    a->h = malloc(n);
    for (size_t i = 0; i < n; i++)
        a->h[i] = (char)lcg(seed);
    CUDA_OK(cudaMalloc((void **)&a->d, n));
    CUDA_OK(cudaMemcpy(a->d, a->h, n, cudaMemcpyHostToDevice));
}

static void arena_free(arena *a)
{
    free(a->h);
    cudaFree(a->d);
}

static void *dev_of(const arena *a, void *h)
{
    return h ? a->d + ((char *)h - a->h) : NULL;
}

/* Device arena equals the host arena? */
static int arena_same(const arena *a)
{
    char *back = malloc(a->n);
    int same;
    cudaMemcpy(back, a->d, a->n, cudaMemcpyDeviceToHost);
    same = memcmp(back, a->h, a->n) == 0;
    free(back);
    return same;
}

/* nbufs buffers of user elements of esize bytes at offsets aligned to esize
 * (plus odd offsets when esize is 1), packed at packed_off; pack with cast
 * in both backends, compare; then unpack with scale and cast, compare. */
static void mt_case(size_t nbufs, size_t maxn, size_t esize, cs_kern_dtype ut, cs_kern_dtype pt, float scale,
                    size_t packed_off, uint64_t seed)
{
    size_t *sizes = malloc(nbufs * sizeof *sizes), total = 0, pos = 0, i, psz = esize == 1 ? 1 : cs_kern_dtype_size(pt);
    void **hb = malloc(nbufs * sizeof *hb), **db = malloc(nbufs * sizeof *db);
    cs_kern_table ht = { hb, sizes, nbufs }, dt = { db, sizes, nbufs };
    arena user, pk;
    int rc;

    for (i = 0; i < nbufs; i++) {
        sizes[i] = (lcg(&seed) % (maxn + 1)) * esize;
        if (i % 13 == 0)
            sizes[i] = 0;
        total += sizes[i] / esize;
    }
    arena_new(&user, total * esize + nbufs * 24 + 64, &seed);
    arena_new(&pk, total * psz + packed_off + 64, &seed);
    for (i = 0; i < nbufs; i++) {
        pos += esize * (lcg(&seed) % 4) + (esize == 1 ? lcg(&seed) % 16 : 0);
        hb[i] = user.h + pos;
        db[i] = dev_of(&user, hb[i]);
        pos += sizes[i];
    }
    if (esize > 1) { /* finite random values in range for the casts */
        for (i = 0; i < nbufs; i++)
            for (size_t k = 0; k < sizes[i] / esize; k++) {
                if (ut == CS_KERN_F32) {
                    float f = ((float)(int)(lcg(&seed) % 2000001) - 1e6f) / (float)(1 + lcg(&seed) % 999);
                    memcpy((char *)hb[i] + 4 * k, &f, 4);
                } else {
                    uint16_t h = (uint16_t)(lcg(&seed) & (ut == CS_KERN_F16 ? 0xfbffu : 0xff7fu));
                    memcpy((char *)hb[i] + 2 * k, &h, 2);
                }
            }
        cudaMemcpy(user.d, user.h, user.n, cudaMemcpyHostToDevice);
    }
    if (esize == 1) {
        KT_RC(cs_kern_pack(hctx, &ht, pk.h + packed_off), CS_KERN_OK, "host pack");
        rc = cs_kern_pack(dctx, &dt, pk.d + packed_off);
    } else {
        KT_RC(cs_kern_pack_cast(hctx, &ht, ut, pk.h + packed_off, pt, 1.0f), CS_KERN_OK, "host pack_cast");
        rc = cs_kern_pack_cast(dctx, &dt, ut, pk.d + packed_off, pt, 1.0f);
    }
    KT_RC(rc, CS_KERN_OK, "cuda pack");
    KT_RC(cs_kern_ctx_sync(dctx), CS_KERN_OK, "sync");
    KT_CHECK(arena_same(&pk), "packed differs: %zu bufs, esize %zu, types %d->%d, offset %zu", nbufs, esize, ut, pt,
             packed_off);
    /* unpack into the user arena (scaled), compare the whole arena with guards */
    if (esize == 1) {
        memset(pk.h + packed_off, 0x3c, total); /* new contents to unpack */
        cudaMemcpy(pk.d, pk.h, pk.n, cudaMemcpyHostToDevice);
        KT_RC(cs_kern_unpack(hctx, &ht, pk.h + packed_off), CS_KERN_OK, "host unpack");
        rc = cs_kern_unpack(dctx, &dt, pk.d + packed_off);
    } else {
        KT_RC(cs_kern_unpack_cast(hctx, &ht, ut, pk.h + packed_off, pt, scale), CS_KERN_OK, "host unpack_cast");
        rc = cs_kern_unpack_cast(dctx, &dt, ut, pk.d + packed_off, pt, scale);
    }
    KT_RC(rc, CS_KERN_OK, "cuda unpack");
    KT_RC(cs_kern_ctx_sync(dctx), CS_KERN_OK, "sync");
    KT_CHECK(arena_same(&user), "unpacked arena differs: %zu bufs, esize %zu, types %d->%d", nbufs, esize, pt, ut);
    arena_free(&user);
    arena_free(&pk);
    free(sizes);
    free(hb);
    free(db);
}

/* ---- allreduce: n simulated ranks, each its own context and stream ---- */
static void ar_case(int n, size_t count, cs_kern_dtype dt, cs_kern_ar_algo algo, float scale, int iters, uint64_t seed)
{
    size_t es = cs_kern_dtype_size(dt), bytes = count * es;
    cs_kern_ctx *rc_[CS_KERN_MAX_RANKS];
    cudaStream_t st[CS_KERN_MAX_RANKS];
    cs_kern_peers pe[CS_KERN_MAX_RANKS];
    void *outs[CS_KERN_MAX_RANKS];
    char *hin = malloc(n * bytes + 1), *hout = malloc(bytes + 1), *want = malloc(bytes + 1);
    float *acc = malloc(count * sizeof(float) + 4), *tmp = malloc(count * sizeof(float) + 4);
    int r, it, bad = 0;

    memset(pe, 0, sizeof pe);
    for (r = 0; r < n; r++) {
        CUDA_OK(cudaMalloc(&pe[0].bufs[r], bytes + 16));
        CUDA_OK(cudaMalloc((void **)&pe[0].flags[r], cs_kern_signal_bytes()));
        CUDA_OK(cudaMemset(pe[0].flags[r], 0, cs_kern_signal_bytes()));
        CUDA_OK(cudaMalloc(&outs[r], bytes + 16));
        CUDA_OK(cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking));
        cs_kern_ctx_new(CS_KERN_CUDA, &rc_[r]);
        cs_kern_ctx_set_stream(rc_[r], st[r]);
    }
    for (r = 0; r < n; r++) {
        memcpy(&pe[r], &pe[0], sizeof pe[0]);
        pe[r].nranks = n;
        pe[r].rank = r;
        pe[r].capacity = bytes + 16;
    }
    for (it = 0; it < iters; it++) {
        /* inputs */
        for (size_t i = 0; i < (size_t)n * count; i++) {
            float f = ((float)(int)(lcg(&seed) % 20001) - 1e4f) / 64.0f;
            if (dt == CS_KERN_F32) {
                memcpy(hin + i * 4, &f, 4);
            } else {
                void *b1[1] = { &f };
                size_t s1[1] = { 4 };
                cs_kern_table t1 = { b1, s1, 1 };
                cs_kern_pack_cast(hctx, &t1, CS_KERN_F32, hin + i * 2, dt, 1.0f);
            }
        }
        for (r = 0; r < n; r++)
            CUDA_OK(cudaMemcpy(pe[r].bufs[r], hin + r * bytes, bytes, cudaMemcpyHostToDevice));
        /* expected: decode each rank's input, sum in rank order, scale, round */
        for (r = 0; r < n; r++) {
            void *b1[1] = { tmp };
            size_t s1[1] = { count * 4 };
            cs_kern_table t1 = { b1, s1, 1 };
            cs_kern_unpack_cast(hctx, &t1, CS_KERN_F32, hin + r * bytes, dt, 1.0f);
            for (size_t i = 0; i < count; i++)
                acc[i] = r == 0 ? tmp[i] : acc[i] + tmp[i];
        }
        {
            void *b1[1] = { acc };
            size_t s1[1] = { count * 4 };
            cs_kern_table t1 = { b1, s1, 1 };
            cs_kern_pack_cast(hctx, &t1, CS_KERN_F32, want, dt, scale);
        }
        for (r = 0; r < n; r++)
            KT_RC(cs_kern_allreduce(rc_[r], &pe[r], algo, outs[r], count, dt, scale), CS_KERN_OK, "cuda allreduce");
        for (r = 0; r < n; r++)
            CUDA_OK(cudaStreamSynchronize(st[r]));
        for (r = 0; r < n; r++) {
            cudaMemcpy(hout, outs[r], bytes, cudaMemcpyDeviceToHost);
            if (memcmp(hout, want, bytes) != 0)
                bad++;
        }
    }
    KT_CHECK(bad == 0, "allreduce %s n=%d count=%zu dtype=%d: %d wrong outputs",
             algo == CS_KERN_AR_ONESHOT ? "one-shot" : "two-shot", n, count, dt, bad);
    for (r = 0; r < n; r++) {
        cudaFree(pe[0].bufs[r]);
        cudaFree(pe[0].flags[r]);
        cudaFree(outs[r]);
        cs_kern_ctx_free(rc_[r]);
        cudaStreamDestroy(st[r]);
    }
    free(hin);
    free(hout);
    free(want);
    free(acc);
    free(tmp);
}

/* ---- pipeline: comm doubles the chunk in place on the comm stream ---- */
static cs_kern_ctx *comm_ctx;

static int comm_double(void *chunk, size_t bytes, size_t offset, void *stream, void *user)
{
    void *b1[1] = { chunk };
    size_t s1[1] = { bytes };
    cs_kern_table t1 = { b1, s1, 1 };
    if (cs_kern_ctx_set_stream(comm_ctx, stream) != CS_KERN_OK)
        return -1;
    return cs_kern_unpack_cast(comm_ctx, &t1, CS_KERN_F32, chunk, CS_KERN_F32, 2.0f) == CS_KERN_OK ? 0 : -1;
}

static void pipe_case(size_t nbufs, size_t chunk_bytes, uint64_t seed)
{
    size_t *sizes = malloc(nbufs * sizeof *sizes), total = 0, i;
    void **hb = malloc(nbufs * sizeof *hb), **db = malloc(nbufs * sizeof *db);
    cs_kern_table dt = { db, sizes, nbufs };
    cudaStream_t a, b;
    cs_kern_pipeline p;
    arena user;
    void *packed;

    for (i = 0; i < nbufs; i++) {
        sizes[i] = (lcg(&seed) % 5000) * 4;
        total += sizes[i];
    }
    arena_new(&user, total + 16, &seed);
    for (i = 0; i < user.n / 4; i++) { /* small integers: exact in bf16 */
        float f = (float)((int)(lcg(&seed) % 256) - 128);
        memcpy(user.h + 4 * i, &f, 4);
    }
    cudaMemcpy(user.d, user.h, user.n, cudaMemcpyHostToDevice);
    for (i = 0, total = 0; i < nbufs; i++) {
        hb[i] = user.h + total;
        db[i] = dev_of(&user, hb[i]);
        total += sizes[i];
    }
    CUDA_OK(cudaMalloc(&packed, total / 2 + 16));
    CUDA_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cs_kern_ctx_set_stream(dctx, a);
    memset(&p, 0, sizeof p);
    p.table = &dt;
    p.user_type = CS_KERN_F32;
    p.packed = packed;
    p.packed_type = CS_KERN_BF16;
    p.scale = 0.5f;
    p.chunk_bytes = chunk_bytes;
    p.comm_stream = b;
    p.comm = comm_double;
    KT_RC(cs_kern_pipeline_run(dctx, &p), CS_KERN_OK, "cuda pipeline");
    CUDA_OK(cudaStreamSynchronize(a));
    KT_CHECK(arena_same(&user), "pipeline (%zu bufs, chunk %zu): x2 then /2 changed the data", nbufs, chunk_bytes);
    cs_kern_ctx_set_stream(dctx, NULL);
    cudaStreamSynchronize(b);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(packed);
    arena_free(&user);
    free(sizes);
    free(hb);
    free(db);
}

int main(void)
{
    int n = 0, rc;

    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    rc = cs_kern_ctx_new(CS_KERN_CUDA, &dctx);
    if (rc != CS_KERN_OK) {
        printf("FAIL: CUDA context: %s\n", cs_kern_strerror(rc));
        return 1;
    }
    cs_kern_ctx_new(CS_KERN_HOST, &hctx);
    cs_kern_ctx_new(CS_KERN_CUDA, &comm_ctx);

    /* plain bytes: odd sizes and offsets, tiny and large buffers */
    mt_case(1, 1, 1, 0, 0, 1.0f, 0, 1);
    mt_case(7, 100, 1, 0, 0, 1.0f, 3, 2);
    mt_case(300, 70000, 1, 0, 0, 1.0f, 1, 3);
    mt_case(5000, 9, 1, 0, 0, 1.0f, 5, 4); /* thousands of tiny buffers */
    mt_case(CS_KERN_MAX_BUFS, 3, 1, 0, 0, 1.0f, 0, 5);
    mt_case(3, 8 << 20, 1, 0, 0, 1.0f, 16, 6); /* tens of MB */
    /* casts with scale */
    mt_case(200, 3000, 4, CS_KERN_F32, CS_KERN_BF16, 0.125f, 0, 7);
    mt_case(200, 3000, 4, CS_KERN_F32, CS_KERN_F16, 1.0f / 3.0f, 2, 8);
    mt_case(200, 3000, 2, CS_KERN_BF16, CS_KERN_F32, 0.25f, 4, 9);
    mt_case(200, 3000, 2, CS_KERN_F16, CS_KERN_F32, 0.5f, 8, 10);
    mt_case(4000, 5, 2, CS_KERN_BF16, CS_KERN_F16, 1.0f, 2, 11);
    mt_case(50, 9000, 4, CS_KERN_F32, CS_KERN_F32, 0.125f, 4, 12);
    { /* NaN, Inf, subnormals */
        uint32_t sp[8] = { 0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u,
                           0x00000001u, 0x807fffffu, 0x477ff000u, 0x3f808000u };
        uint16_t hh[8], dh[8];
        void *dsp, *ddh;
        void *b1[1] = { sp }, *b2[1];
        size_t s1[1] = { 32 };
        cs_kern_table t1 = { b1, s1, 1 }, t2 = { b2, s1, 1 };
        for (int ty = CS_KERN_F16; ty <= CS_KERN_BF16; ty++) {
            cudaMalloc(&dsp, 32);
            cudaMalloc(&ddh, 16);
            cudaMemcpy(dsp, sp, 32, cudaMemcpyHostToDevice);
            b2[0] = dsp;
            cs_kern_pack_cast(hctx, &t1, CS_KERN_F32, hh, (cs_kern_dtype)ty, 0.5f);
            KT_RC(cs_kern_pack_cast(dctx, &t2, CS_KERN_F32, ddh, (cs_kern_dtype)ty, 0.5f), CS_KERN_OK, "specials");
            cudaMemcpy(dh, ddh, 16, cudaMemcpyDeviceToHost);
            KT_CHECK(memcmp(hh, dh, 16) == 0, "specials to dtype %d differ", ty);
            cudaFree(dsp);
            cudaFree(ddh);
        }
    }
    /* allreduce, simulated peers */
    for (int algo = CS_KERN_AR_ONESHOT; algo <= CS_KERN_AR_TWOSHOT; algo++)
        for (int nr = 2; nr <= 8; nr *= 2) {
            ar_case(nr, 1, CS_KERN_F32, algo, 1.0f, 2, 20);
            ar_case(nr, 1001, CS_KERN_F32, algo, 1.0f / nr, 3, 21);
            ar_case(nr, 65543, CS_KERN_BF16, algo, 1.0f / nr, 3, 22);
            ar_case(nr, 262144, CS_KERN_F16, algo, 0.5f, 2, 23);
        }
    /* pipeline */
    pipe_case(40, 1 << 16, 30);
    pipe_case(300, 1000, 31);
    pipe_case(5, 0, 32);
    cs_kern_ctx_free(comm_ctx);
    cs_kern_ctx_free(hctx);
    cs_kern_ctx_free(dctx);
    KT_CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess, "CUDA errors at the end");
    return kt_done("test_cuda_vs_host");
}
