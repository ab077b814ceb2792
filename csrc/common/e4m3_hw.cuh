// The sm_89+ hardware conversion of e4m3 codes (cvt.rn.f16x2.e4m3x2), in one place for every
// kernel that decodes with it: the fp8 GEMVs and dequantize (fp8/fp8_kernels.cuh), the dequantizing
// wgmma GEMM and GEMV (dqgemm/dq_gemm_sm90a_kernels.cuh), the nvfp4 block-scale decode
// (nvfp4/nvfp4_kernels.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <cstring>

namespace torchquant {

// Two e4m3 codes (element 0 in the low byte of `two`) as the fp16 pair of the same values
// (low byte -> low half). Exact: every e4m3 value is an fp16 normal or zero; the NaN codes give
// NaN. Needs sm_89+: compiled for an older target it returns 0, and the callers there take
// another decode.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2_hw(uint16_t two) {
  uint32_t h = 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(two));
#endif
  return h;
}

// The same for the codes in the low (kHi false) or high (kHi true) 16 bits of a 32-bit word,
// taken as a half of the register (where both halves of a word of four codes are converted,
// ptxas then reads each half in place; a 16-bit value of its own is better served above).
template <bool kHi>
__device__ __forceinline__ uint32_t e4m3x2_half_to_f16x2_hw(uint32_t w) {
  uint32_t h = 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (kHi) {
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.rn.f16x2.e4m3x2 %0, hi; }" : "=r"(h) : "r"(w));
  } else {
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.rn.f16x2.e4m3x2 %0, lo; }" : "=r"(h) : "r"(w));
  }
#endif
  return h;
}

// An fp16 pair as the bf16 pair of the same values: both halves widened to fp32, then packed
// with cvt.rn.bf16x2.f32. Exact for values that fit bf16, as every e4m3 value does (4
// significant bits, exponents inside bf16's normal range): after the conversions above, the bf16
// decode of fp8 weights that needs no integer re-seat.
__device__ __forceinline__ uint32_t f16x2_to_bf16x2_exact(uint32_t h) {
  __half2 v;
  static_assert(sizeof(v) == sizeof(h), "half2 size");
  std::memcpy(&v, &h, sizeof(h));
  const float2 f = __half22float2(v);
  const __nv_bfloat162 r = __floats2bfloat162_rn(f.x, f.y);
  uint32_t u;
  std::memcpy(&u, &r, sizeof(u));
  return u;
}

}  // namespace torchquant
