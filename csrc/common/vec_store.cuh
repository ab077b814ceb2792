#pragma once
// Vectorized stores of 16 consecutive outputs (one 16-element piece of the
// dequantize kernels) from fp32 values: one RNE rounding per element, then
// 16-byte stores (two for fp16 / bf16, four for fp32). `dst` must be 32-byte
// aligned for fp16 / bf16 and 64-byte aligned for fp32 (16-element pieces of a
// freshly allocated contiguous output whose row length is a multiple of 16).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace torchquant {

template <typename T>
__device__ __forceinline__ uint32_t pack2_rn(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2_rn<__half>(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);  // a in the low half
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}
template <>
__device__ __forceinline__ uint32_t pack2_rn<__nv_bfloat16>(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}

template <typename T>
__device__ __forceinline__ void store16(T* dst, const float (&v)[16]) {
  uint4* d = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int h = 0; h < 2; ++h)
    d[h] = make_uint4(pack2_rn<T>(v[8 * h + 0], v[8 * h + 1]), pack2_rn<T>(v[8 * h + 2], v[8 * h + 3]),
                      pack2_rn<T>(v[8 * h + 4], v[8 * h + 5]), pack2_rn<T>(v[8 * h + 6], v[8 * h + 7]));
}
template <>
__device__ __forceinline__ void store16<float>(float* dst, const float (&v)[16]) {
  float4* d = reinterpret_cast<float4*>(dst);
#pragma unroll
  for (int q = 0; q < 4; ++q) d[q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
}

}  // namespace torchquant
