/* convert.h: fp32 <-> fp16 / bf16 conversions shared by both backends.
 * Plain integer arithmetic on the IEEE bit patterns, so the host reference
 * and the CUDA kernels give the same bits. Internal (not installed).
 * Rules: round to nearest, ties to even; subnormals kept (no flush to zero);
 * overflow gives +-Inf; NaN stays NaN, quieted, with its sign and upper
 * payload bits. */
#ifndef CS_KERN_CONVERT_H
#define CS_KERN_CONVERT_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CS_KERN__HD __host__ __device__ __forceinline__
#else
#define CS_KERN__HD static inline
#endif

CS_KERN__HD uint32_t cs_kern__f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

CS_KERN__HD float cs_kern__u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* fp32 bits -> bf16 bits. */
CS_KERN__HD uint16_t cs_kern__f32_to_bf16(uint32_t u)
{
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, keep sign */
        return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* bf16 bits -> fp32 bits (exact). */
CS_KERN__HD uint32_t cs_kern__bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u |= 0x00400000u;
    return u;
}

/* fp32 bits -> fp16 bits. */
CS_KERN__HD uint16_t cs_kern__f32_to_f16(uint32_t u)
{
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x03ffu));
    if (a >= 0x477ff000u) /* >= 65520: Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) /* normal: >= 2^-14 */
        return (uint16_t)(sign | ((a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13));
    if (a <= 0x33000000u) /* <= 2^-25: zero */
        return (uint16_t)sign;
    { /* subnormal result */
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14..24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
}

/* fp16 bits -> fp32 bits (exact). */
CS_KERN__HD uint32_t cs_kern__f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu, m = (uint32_t)h & 0x3ffu;
    if (e == 31u)
        return sign | 0x7f800000u | (m << 13) | (m ? 0x00400000u : 0u);
    if (e == 0u) {
        if (m == 0u)
            return sign;
        e = 113u;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        return sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    return sign | ((e + 112u) << 23) | (m << 13);
}

/* x * scale in fp32, except that a NaN passes through unchanged (quieted),
 * so that no backend's NaN canonicalisation shows. */
CS_KERN__HD uint32_t cs_kern__scale_bits(uint32_t u, float scale)
{
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return u | 0x00400000u;
    if (scale == 1.0f)
        return u;
    return cs_kern__f2u(cs_kern__u2f(u) * scale);
}

#endif
