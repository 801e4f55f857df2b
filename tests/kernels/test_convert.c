/* test_convert: fp32 <-> fp16 / bf16 conversions of the host reference
 * (through pack_cast / unpack_cast), checked against literal bit patterns
 * and against an independent rounding model in double arithmetic
 * (nearbyint in the default round-to-nearest-even mode). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cskernels.h"
#include "tests/kernels/ktest.h"

static cs_kern_ctx *ctx;

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Convert n fp32 bit patterns to dtype (bits in out), with scale. */
static int to_half(const uint32_t *in, uint16_t *out, size_t n, cs_kern_dtype t, float scale)
{
    void *bufs[1] = { (void *)in };
    size_t sizes[1] = { n * 4 };
    cs_kern_table tab = { bufs, sizes, 1 };
    return cs_kern_pack_cast(ctx, &tab, CS_KERN_F32, out, t, scale);
}

/* Convert n dtype patterns to fp32 bits. */
static int from_half(const uint16_t *in, uint32_t *out, size_t n, cs_kern_dtype t)
{
    void *bufs[1] = { out };
    size_t sizes[1] = { n * 4 };
    cs_kern_table tab = { bufs, sizes, 1 };
    return cs_kern_unpack_cast(ctx, &tab, CS_KERN_F32, in, t, 1.0f);
}

/* The model: format with p significand bits, exponents emin..emax. */
typedef struct fmt {
    int p, emin, emax, ebits;
} fmt;
static const fmt F16 = { 11, -14, 15, 5 }, BF16 = { 8, -126, 127, 8 };

static uint16_t ref_encode(double x, fmt f)
{
    uint16_t sign = signbit(x) ? (uint16_t)(1u << 15) : 0;
    double ax = fabs(x), q, r, maxv;
    int e, E, bias = (1 << (f.ebits - 1)) - 1;
    unsigned mbits = (unsigned)f.p - 1;

    if (isnan(x))
        return 0; /* not used for NaN */
    maxv = (2.0 - ldexp(1.0, 1 - f.p)) * ldexp(1.0, f.emax);
    if (isinf(x) || ax == 0.0)
        return (uint16_t)(sign | (isinf(x) ? ((1u << f.ebits) - 1u) << mbits : 0u));
    frexp(ax, &e);
    E = e - 1 < f.emin ? f.emin : e - 1;
    q = ldexp(1.0, E - (int)mbits); /* the unit in the last place */
    r = nearbyint(ax / q) * q;
    if (r > maxv)
        return (uint16_t)(sign | ((1u << f.ebits) - 1u) << mbits);
    if (r < ldexp(1.0, f.emin)) /* subnormal (or zero) */
        return (uint16_t)(sign | (uint16_t)(r / ldexp(1.0, f.emin - (int)mbits)));
    frexp(r, &e);
    E = e - 1;
    return (uint16_t)(sign | (unsigned)(E + bias) << mbits |
                      (uint16_t)((r / ldexp(1.0, E) - 1.0) * ldexp(1.0, (int)mbits)));
}

static double ref_decode(uint16_t h, fmt f)
{
    unsigned mbits = (unsigned)f.p - 1, emax_field = (1u << f.ebits) - 1u;
    unsigned e = (h >> mbits) & emax_field, m = h & ((1u << mbits) - 1u);
    int bias = (1 << (f.ebits - 1)) - 1;
    double v;

    if (e == emax_field)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, f.emin - (int)mbits);
    else
        v = ldexp(1.0 + ldexp((double)m, -(int)mbits), (int)e - bias);
    return (h & 0x8000u) ? -v : v;
}

struct lit {
    uint32_t in;
    uint16_t f16, bf16;
    const char *what;
};
static const struct lit lits[] = {
    { 0x3f800000u, 0x3c00, 0x3f80, "1.0" },
    { 0xbf800000u, 0xbc00, 0xbf80, "-1.0" },
    { 0x00000000u, 0x0000, 0x0000, "+0" },
    { 0x80000000u, 0x8000, 0x8000, "-0" },
    { 0x3f808000u, 0x3c04, 0x3f80, "bf16 tie 1+2^-8 -> even (down)" },
    { 0x3f818000u, 0x3c0c, 0x3f82, "bf16 tie 1+3*2^-8 -> even (up)" },
    { 0x3f808001u, 0x3c04, 0x3f81, "just above a bf16 tie" },
    { 0x3f801000u, 0x3c00, 0x3f80, "f16 tie 1+2^-11 -> even (down)" },
    { 0x3f803000u, 0x3c02, 0x3f80, "f16 tie 1+3*2^-11 -> even (up)" },
    { 0x477fe000u, 0x7bff, 0x4780, "65504 = f16 max" },
    { 0x477fefffu, 0x7bff, 0x4780, "just below 65520" },
    { 0x477ff000u, 0x7c00, 0x4780, "65520: f16 tie to Inf" },
    { 0x33800000u, 0x0001, 0x3380, "2^-24: smallest f16 subnormal" },
    { 0x33000000u, 0x0000, 0x3300, "2^-25: tie to zero" },
    { 0x33000001u, 0x0001, 0x3300, "just above 2^-25" },
    { 0x33c00000u, 0x0002, 0x33c0, "3*2^-25: tie to even 2" },
    { 0x387fc000u, 0x03ff, 0x3880, "largest f16 subnormal" },
    { 0x38800000u, 0x0400, 0x3880, "2^-14: smallest f16 normal" },
    { 0x7f7fffffu, 0x7c00, 0x7f80, "FLT_MAX: overflow to Inf" },
    { 0x7f7f7fffu, 0x7c00, 0x7f7f, "below the bf16 max tie" },
    { 0x7f7f8000u, 0x7c00, 0x7f80, "bf16 max tie to Inf" },
    { 0x00010000u, 0x0000, 0x0001, "bf16 smallest subnormal" },
    { 0x00008000u, 0x0000, 0x0000, "bf16 subnormal tie to zero" },
    { 0x00018000u, 0x0000, 0x0002, "bf16 subnormal tie to even 2" },
    { 0x7f800000u, 0x7c00, 0x7f80, "+Inf" },
    { 0xff800000u, 0xfc00, 0xff80, "-Inf" },
    { 0x7fc00000u, 0x7e00, 0x7fc0, "qNaN" },
    { 0xffc00000u, 0xfe00, 0xffc0, "-qNaN" },
    { 0x7f800001u, 0x7e00, 0x7fc0, "sNaN is quieted" },
    { 0x7fa00000u, 0x7f00, 0x7fe0, "sNaN with payload: quieted, payload kept" },
};

static uint32_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 32);
}

int main(void)
{
    size_t nl = sizeof lits / sizeof lits[0], i, n;
    uint32_t *in, *back;
    uint16_t *h16, *hb, *pat;
    uint64_t seed = 42;
    int rc;

    if (cs_kern_ctx_new(CS_KERN_HOST, &ctx) != CS_KERN_OK) {
        printf("FAIL: no host context\n");
        return 1;
    }
    /* 1. literal bit patterns */
    in = malloc(nl * 4);
    h16 = malloc(nl * 2);
    hb = malloc(nl * 2);
    for (i = 0; i < nl; i++)
        in[i] = lits[i].in;
    KT_RC(to_half(in, h16, nl, CS_KERN_F16, 1.0f), CS_KERN_OK, "to f16");
    KT_RC(to_half(in, hb, nl, CS_KERN_BF16, 1.0f), CS_KERN_OK, "to bf16");
    for (i = 0; i < nl; i++) {
        KT_CHECK(h16[i] == lits[i].f16, "f16 of %08x (%s): %04x, want %04x", lits[i].in, lits[i].what, h16[i],
                 lits[i].f16);
        KT_CHECK(hb[i] == lits[i].bf16, "bf16 of %08x (%s): %04x, want %04x", lits[i].in, lits[i].what, hb[i],
                 lits[i].bf16);
    }
    free(in);
    free(h16);
    free(hb);

    /* 2. every exponent with edge mantissas, and random patterns, against the model */
    n = 255 * 2 * 16 + (1u << 20);
    in = malloc(n * 4);
    h16 = malloc(n * 2);
    hb = malloc(n * 2);
    {
        static const uint32_t mant[16] = { 0,      1,      0x1000,  0x1001,   0x0fff,   0x3000,   0x2000,   0x8000,
                                           0x8001, 0x7fff, 0x18000, 0x7fffff, 0x7fe000, 0x7ff000, 0x400000, 0x7f8000 };
        size_t k = 0;
        for (uint32_t e = 0; e < 255; e++)
            for (uint32_t s = 0; s < 2; s++)
                for (int m = 0; m < 16; m++)
                    in[k++] = s << 31 | e << 23 | mant[m];
        while (k < n) {
            uint32_t u = lcg(&seed);
            if ((u & 0x7f800000u) == 0x7f800000u)
                u &= 0xbfffffffu; /* keep finite */
            in[k++] = u;
        }
    }
    KT_RC(to_half(in, h16, n, CS_KERN_F16, 1.0f), CS_KERN_OK, "bulk to f16");
    KT_RC(to_half(in, hb, n, CS_KERN_BF16, 1.0f), CS_KERN_OK, "bulk to bf16");
    {
        size_t bad16 = 0, badb = 0;
        for (i = 0; i < n; i++) {
            double x = (double)u2f(in[i]);
            uint16_t w16 = ref_encode(x, F16), wb = ref_encode(x, BF16);
            if (h16[i] != w16 && bad16++ < 5)
                fprintf(stderr, "f16 of %08x: %04x, model %04x\n", in[i], h16[i], w16);
            if (hb[i] != wb && badb++ < 5)
                fprintf(stderr, "bf16 of %08x: %04x, model %04x\n", in[i], hb[i], wb);
        }
        KT_CHECK(bad16 == 0, "%zu of %zu f16 conversions differ from the model", bad16, n);
        KT_CHECK(badb == 0, "%zu of %zu bf16 conversions differ from the model", badb, n);
    }

    /* 3. scale then cast: RNE(float(x * scale)); 1/3 is not a power of two */
    {
        float sc = 1.0f / 3.0f;
        size_t bad = 0;
        KT_RC(to_half(in, hb, n, CS_KERN_BF16, sc), CS_KERN_OK, "bulk to bf16 * 1/3");
        KT_RC(to_half(in, h16, n, CS_KERN_F16, sc), CS_KERN_OK, "bulk to f16 * 1/3");
        for (i = 0; i < n; i++) {
            float y = u2f(in[i]) * sc;
            if (hb[i] != ref_encode((double)y, BF16) || h16[i] != ref_encode((double)y, F16))
                bad++;
        }
        KT_CHECK(bad == 0, "%zu of %zu scaled conversions differ from the model", bad, n);
    }
    free(in);
    free(h16);
    free(hb);

    /* 4. decode every fp16 and bf16 pattern */
    pat = malloc(65536 * 2);
    back = malloc(65536 * 4);
    for (int t = 0; t < 2; t++) {
        fmt f = t ? BF16 : F16;
        cs_kern_dtype dt = t ? CS_KERN_BF16 : CS_KERN_F16;
        size_t bad = 0, badnan = 0;
        for (i = 0; i < 65536; i++)
            pat[i] = (uint16_t)i;
        rc = from_half(pat, back, 65536, dt);
        KT_RC(rc, CS_KERN_OK, "decode all patterns");
        for (i = 0; i < 65536; i++) {
            double want = ref_decode(pat[i], f);
            float got = u2f(back[i]);
            if (isnan(want)) {
                if (!isnan(got) || !(back[i] & 0x00400000u) || (back[i] >> 31) != (pat[i] >> 15u))
                    badnan++;
            } else if ((double)got != want || !signbit(got) != !signbit(want)) {
                bad++;
            }
        }
        KT_CHECK(bad == 0, "%s: %zu of 65536 decodes differ", t ? "bf16" : "f16", bad);
        KT_CHECK(badnan == 0, "%s: %zu NaN decodes not quiet NaN with their sign", t ? "bf16" : "f16", badnan);
    }
    /* round trip half -> f32 -> half is the identity except NaN quieting */
    for (int t = 0; t < 2; t++) {
        cs_kern_dtype dt = t ? CS_KERN_BF16 : CS_KERN_F16;
        uint16_t *again = malloc(65536 * 2);
        size_t bad = 0;
        for (i = 0; i < 65536; i++)
            pat[i] = (uint16_t)i;
        from_half(pat, back, 65536, dt);
        to_half(back, again, 65536, dt, 1.0f);
        for (i = 0; i < 65536; i++) {
            int nan = t ? ((pat[i] & 0x7f80) == 0x7f80 && (pat[i] & 0x7f))
                        : ((pat[i] & 0x7c00) == 0x7c00 && (pat[i] & 0x3ff));
            uint16_t want = nan ? (uint16_t)(pat[i] | (t ? 0x40 : 0x200)) : pat[i];
            if (again[i] != want)
                bad++;
        }
        KT_CHECK(bad == 0, "%s round trip: %zu of 65536 differ", t ? "bf16" : "f16", bad);
        free(again);
    }
    free(pat);
    free(back);

    /* 5. Inf and NaN through scale 1/world_size; Inf * 0 is NaN per IEEE */
    {
        uint32_t sp[4] = { 0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u };
        uint16_t o[4];
        KT_RC(to_half(sp, o, 4, CS_KERN_BF16, 0.125f), CS_KERN_OK, "specials * 1/8");
        KT_CHECK(o[0] == 0x7f80 && o[1] == 0xff80, "Inf kept: %04x %04x", o[0], o[1]);
        KT_CHECK((o[2] & 0x7fc0) == 0x7fc0 && (o[3] & 0x7fc0) == 0x7fc0, "NaN kept quiet: %04x %04x", o[2], o[3]);
        KT_RC(to_half(sp, o, 4, CS_KERN_BF16, 0.0f), CS_KERN_OK, "specials * 0");
        KT_CHECK((o[0] & 0x7f80) == 0x7f80 && (o[0] & 0x7f), "Inf * 0 is NaN: %04x", o[0]);
    }
    (void)f2u;
    cs_kern_ctx_free(ctx);
    return kt_done("test_convert");
}
