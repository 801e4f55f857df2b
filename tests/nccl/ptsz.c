/* ptsz: CUDA runtime calls of a program built for the per-thread default
 * stream (--default-stream per-thread): with CUDA_API_PER_THREAD_DEFAULT_STREAM
 * the header maps each call to its _ptsz/_ptds entry point
 * (tests/nccl/ptsz.sh). Prints the calls it made and the return code of a
 * launch of a function that is no kernel, which must pass through. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    enum { N = 4096 };
    static char host[N], back[N];
    void *dev = NULL;
    cudaStream_t s;
    cudaEvent_t ev;
    if (cudaMalloc(&dev, N) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
        cudaEventCreate(&ev) != cudaSuccess) {
        fprintf(stderr, "ptsz: no device\n");
        return 2;
    }
    memset(host, 7, N);
    int bad = 0;
    bad |= cudaMemcpy(dev, host, N, cudaMemcpyHostToDevice) != cudaSuccess;         /* _ptds */
    bad |= cudaMemset(dev, 1, N / 2) != cudaSuccess;                                /* _ptds */
    bad |= cudaMemsetAsync((char *)dev + N / 2, 3, N / 4, 0) != cudaSuccess;        /* _ptsz, stream 0 */
    bad |= cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, s) != cudaSuccess; /* _ptsz, stream s */
    bad |= cudaEventRecord(ev, s) != cudaSuccess;
    bad |= cudaStreamWaitEvent(0, ev, 0) != cudaSuccess; /* _ptsz */
    bad |= cudaStreamSynchronize(0) != cudaSuccess;      /* _ptsz */
    bad |= cudaStreamSynchronize(s) != cudaSuccess;      /* _ptsz */
    dim3 one = { 1, 1, 1 };
    cudaError_t lr = cudaLaunchKernel((const void *)main, one, one, NULL, 0, 0); /* _ptsz: no kernel */
    bad |= back[0] != 1 || back[N / 2] != 3 || back[N - 1] != 7;
    cudaStreamDestroy(s);
    cudaEventDestroy(ev);
    cudaFree(dev);
    printf("ptsz: launch rc %d, data %s\n", (int)lr, bad ? "WRONG" : "ok");
    printf("calls: cudaMalloc=1 cudaMemcpy_ptds=1 cudaMemset_ptds=1 cudaMemsetAsync_ptsz=1 "
           "cudaMemcpyAsync_ptsz=1 cudaStreamWaitEvent_ptsz=1 cudaStreamSynchronize_ptsz=2 "
           "cudaLaunchKernel_ptsz=1 cudaFree=1\n");
    return bad;
}
