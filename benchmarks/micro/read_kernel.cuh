// The pure-read kernel shared by the standalone probes (read_floor.cu, int8_gemv_shapes.cu):
// grid-stride 16-byte loads (ld.global.nc, L1 no-allocate), D stages of G loads per thread in
// registers, refilled as consumed, XOR of what it read into a store that never happens;
// kPdl: griddepcontrol.launch_dependents first and griddepcontrol.wait before the first load
// (launch it with programmatic stream serialization).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

__device__ __forceinline__ uint4 ld_nc(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// D stages x G loads of 16 bytes per thread: D * G * 512 bytes in flight per warp.
template <int D, int G, bool kPdl>
__global__ void read_kernel(const uint4* __restrict__ p, size_t n16, unsigned* out) {
  if constexpr (kPdl) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
  const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t nt = gridDim.x * (size_t)blockDim.x;
  const size_t step = nt * G;                    // 16-byte units per stage over the grid
  const size_t stages = (n16 + step - 1) / step;
  uint4 v[D][G];
  auto addr = [&](size_t j, int i) {
    const size_t u = j * step + i * nt + t;
    return p + (u < n16 ? u : n16 - 1);
  };
#pragma unroll
  for (int d = 0; d < D; ++d)
#pragma unroll
    for (int i = 0; i < G; ++i) v[d][i] = ld_nc(addr(d, i));
  unsigned acc = 0;
  for (size_t j = 0; j < stages; j += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      if (j + d < stages) {
#pragma unroll
        for (int i = 0; i < G; ++i) acc ^= v[d][i].x + v[d][i].y + v[d][i].z + v[d][i].w;
      }
      if (j + d + D < stages) {
#pragma unroll
        for (int i = 0; i < G; ++i) v[d][i] = ld_nc(addr(j + d + D, i));
      }
    }
  }
  if (acc == 0x9e3779b9u) out[0] = acc;
}
