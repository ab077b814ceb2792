// How many clusters of 1, 2, 4, 8 CTAs the device holds at once for a kernel of 384 threads
// (one CTA per SM by its shared memory), at several dynamic shared-memory sizes: the GPC
// placement question behind the 2:4 wgmma K split (docs/sparse24_wgmma.md, last section).
// Also launches each configuration once and reads %smid / %clusterid per CTA to report how
// many distinct SMs a grid of that many clusters used in one go.
//   nvcc -arch=sm_90a -o cluster_occupancy benchmarks/micro/cluster_occupancy.cu && ./cluster_occupancy
#include <cuda_runtime.h>
#include <cstdio>
#include <set>
#include <vector>

__global__ void __launch_bounds__(384, 1) probe(int* sm_of_cta, long long* t0_of_cta) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    sm_of_cta[blockIdx.x] = static_cast<int>(sm);
    t0_of_cta[blockIdx.x] = t;
    smem[0] = 1;
    // Hold the SM for ~50 us so every CTA of one wave is resident together.
    long long now = t;
    while (now - t < 50000) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
  __syncthreads();
}

int main() {
  int dev = 0, sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  printf("SMs %d\n", sms);
  const int smem_kb[] = {100, 150, 190, 215, 227};
  for (int kb : smem_kb) {
    const int smem = kb * 1024;
    if (cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) {
      printf("smem %d KB: not allowed\n", kb);
      cudaGetLastError();
      continue;
    }
    cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    for (int cm : {1, 2, 4, 8}) {
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = cm;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      cfg.gridDim = dim3(cm * sms, 1, 1);
      cfg.blockDim = dim3(384, 1, 1);
      cfg.dynamicSmemBytes = smem;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      int clusters = -1;
      cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe, &cfg);
      // One launch of 128 CTAs in clusters of cm: how many start in the first ~25 us.
      const int ctas = 128;
      int* d_sm;
      long long* d_t;
      cudaMalloc(&d_sm, ctas * sizeof(int));
      cudaMalloc(&d_t, ctas * sizeof(long long));
      cfg.gridDim = dim3(ctas, 1, 1);
      cudaError_t le = cudaLaunchKernelEx(&cfg, probe, d_sm, d_t);
      cudaError_t se = cudaDeviceSynchronize();
      std::vector<int> sm(ctas);
      std::vector<long long> t(ctas);
      cudaMemcpy(sm.data(), d_sm, ctas * sizeof(int), cudaMemcpyDeviceToHost);
      cudaMemcpy(t.data(), d_t, ctas * sizeof(long long), cudaMemcpyDeviceToHost);
      long long tmin = t[0];
      for (long long v : t) tmin = v < tmin ? v : tmin;
      int first_wave = 0;
      std::set<int> sms_used;
      for (int i = 0; i < ctas; ++i) {
        if (t[i] - tmin < 25000) ++first_wave;
        sms_used.insert(sm[i]);
      }
      printf("smem %3d KB cluster %d: max active clusters %d (%s); 128 CTAs: %d started together, %zu SMs, launch %s\n",
             kb, cm, clusters, cudaGetErrorString(e), first_wave, sms_used.size(),
             cudaGetErrorString(le != cudaSuccess ? le : se));
      cudaFree(d_sm);
      cudaFree(d_t);
      cudaGetLastError();
    }
  }
  return 0;
}
