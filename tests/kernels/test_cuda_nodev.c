/* test_cuda_nodev: on a machine without a usable GPU, the CUDA backend is
 * compiled in (ENODEV, not ENOBACKEND), fails cleanly, and the host
 * backend of the same library still works. Skips where a GPU is present
 * (tests/gpu/kernels.sh covers that case). */
#include "config.h"

#include <cuda_runtime_api.h>
#include <string.h>

#include "kernels/cskernels.h"
#include "tests/kernels/ktest.h"

int main(void)
{
    cs_kern_ctx *ctx = (cs_kern_ctx *)&ctx, *host;
    int n = 0;
    char a[5] = "abcd", b[3] = "xy", packed[8] = { 0 };
    void *bufs[2] = { a, b };
    size_t sizes[2] = { 4, 2 };
    cs_kern_table t = { bufs, sizes, 2 };

    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        printf("SKIP: a CUDA device is present; this test checks the no-device path\n");
        return 77;
    }
    KT_RC(cs_kern_ctx_new(CS_KERN_CUDA, &ctx), CS_KERN_ENODEV, "CUDA context without a device");
    KT_CHECK(ctx == NULL, "failed context left non-NULL");
    KT_RC(cs_kern_ctx_new(CS_KERN_HOST, &host), CS_KERN_OK, "host context in the CUDA build");
    KT_RC(cs_kern_pack(host, &t, packed), CS_KERN_OK, "host pack in the CUDA build");
    KT_CHECK(memcmp(packed, "abcdxy", 6) == 0, "host pack gave %.6s", packed);
    cs_kern_ctx_free(host);
    cs_kern_ctx_free(NULL);
    return kt_done("test_cuda_nodev");
}
