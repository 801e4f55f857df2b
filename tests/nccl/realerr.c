/* realerr: CUDA runtime and NCCL calls on a machine without a GPU, with
 * the real libraries. Prints each call's return code; tests/nccl/realerr.sh
 * runs it untraced and traced and compares. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>

int main(void)
{
    int n = -1, v = 0;
    void *p = NULL;
    char host[64] = { 0 };
    printf("cudaGetDeviceCount %d\n", (int)cudaGetDeviceCount(&n));
    printf("cudaMalloc %d\n", (int)cudaMalloc(&p, 1024));
    printf("cudaMemcpy %d\n", (int)cudaMemcpy(host, host + 32, 16, cudaMemcpyHostToHost));
    printf("cudaMemsetAsync %d\n", (int)cudaMemsetAsync(p, 0, 16, 0));
    printf("cudaStreamSynchronize %d\n", (int)cudaStreamSynchronize(0));
    printf("cudaDeviceSynchronize %d\n", (int)cudaDeviceSynchronize());
    printf("cudaFree %d\n", (int)cudaFree(p));
    printf("cudaGetLastError %d\n", (int)cudaGetLastError());
    printf("ncclGetVersion %d\n", (int)ncclGetVersion(&v));
    ncclUniqueId id;
    printf("ncclGetUniqueId %d\n", (int)ncclGetUniqueId(&id));
    ncclComm_t c = NULL;
    printf("ncclCommInitRank %d\n", (int)ncclCommInitRank(&c, 1, id, 0));
    printf("ncclGroupStart %d\n", (int)ncclGroupStart());
    printf("ncclAllReduce %d\n", (int)ncclAllReduce(host, host, 4, ncclFloat32, ncclSum, c, 0));
    printf("ncclGroupEnd %d\n", (int)ncclGroupEnd());
    printf("ncclAllReduce-nullcomm %d\n", (int)ncclAllReduce(host, host, 4, ncclFloat32, ncclSum, NULL, 0));
    printf("ncclCommDestroy %d\n", (int)ncclCommDestroy(c));
    return 0;
}
