// FP8 (E4M3) block-scaled weight kernels: decode GEMV, quantize, dequantize.
//
// What they compute (see ../shared/design/formats.md):
//   y[m, n] = sum_k x[m, k] * float(w_q[n, k]) * w_scale[n, k / bs]  (+ bias[n])
// x fp16/bf16 [M, K] row-major, w_q e4m3 [N, K] row-major (K contiguous),
// w_scale fp32 [N, ceil(K / bs)], bs a multiple of 16 in [16, 256], K % 16 == 0.
// Products are exact (e4m3 -> fp16/bf16 is exact); accumulation is fp32.
// Each scale block's partial sum is formed on its own and then scaled
// (acc += partial * scale): folding the fp32 scale into the 4-bit-significand
// weight before the multiply would round, so it is never done.
//
// Launch assumptions (checked on the host, fp8_block_gemv.cu):
//   x and w_q base pointers 16-byte aligned (K % 16 == 0 then aligns every
//   row), M, N < 2^31, K < 2^26 (see block_of), grid <= 2^31 - 1 blocks.
//   No host synchronization, no atomics: results are deterministic and the
//   launch is graph-capturable.
//
// Weight decode (both kernels): the four codes of a 32-bit word w = [b0 b1
// b2 b3] are split into the odd pair (b1, b3), already in the high byte of
// each 16-bit lane, and the even pair (b0, b2), moved there by a left shift;
// masks and one shift re-seat the fields of each code b = s eeee mmm as
//   fp16: s<<15 | (b & 0x7f)<<7   = w * 2^-8    (e4m3 subnormals land on fp16
//   bf16: s<<15 | (b & 0x7f)<<4   = w * 2^-120   subnormals, also exact)
// and one packed multiply by 2^8 / 2^120 restores w exactly (a power of two,
// no rounding, the result is a normal number >= 2^-9). That is 5 ALU ops per
// 4 codes plus 2 IMAD shifts and 2 packed multiplies on the FMA pipe. The NaN
// codes 0x7f / 0xff are never produced by quantize_fp8_block; this decode
// reads them as +-480 (dequantize_fp8_block, which is not hot, keeps NaN).
// The mma kernels on sm_89+ use the hardware conversion instead (natural byte
// pairs, Act<T>::kNaturalPairs): fp16 one cvt.rn.f16x2.e4m3x2 per pair, bf16
// that pair widened to fp32 and packed with cvt.rn.bf16x2.f32 (exact, and
// faster than the re-seat: results/h200/2026-12-03g_ring_bf16, call 1).
//
// Kernels and memory pattern:
//  * fp8_gemv_mma_kernel (sm_80+): one warp = 16 output columns (the mma "M"
//    dimension) x 8 or 16 activation rows (mma "N", MT = 1 or 2 n-tiles);
//    the weight is the A operand, x the B operand, fp32 accumulators.
//    K is walked in 64-wide chunks; within a chunk the reduction axis is
//    permuted (legal: the same permutation is applied to x) so that every
//    lane reads its A fragments for the whole chunk with one contiguous load
//    per weight row and its B fragments with contiguous loads of x:
//      WK = 64 (bs % 64 == 0): lane t of a quad holds k = c0 + 16t .. +15
//        (one 16-byte load per row); mma step s uses k = c0 + 16t + 4s .. +3.
//      WK = 32 (bs % 32 == 0): two 32-wide windows, 8-byte loads.
//      WK = 16 (any bs):       four 16-wide windows, 4-byte loads.
//    A window never straddles a scale block (bs % WK == 0), so each window's
//    mma partial is flushed into the running total with its (column, block)
//    scale. KS warps of a block split the chunks (strided) and reduce through
//    shared memory; the grid covers 16-column tiles x 16-row M tiles.
//    Weight loads bypass L1 (ld.global.nc.L1::no_allocate) and run U = 4
//    chunks ahead (4 KB per warp in flight; 2 for WK = 16 with MT = 2); x
//    (small, reused by every block) is read through L1 one chunk ahead (just
//    in time for WK = 16 with MT = 2); scales are read with the weight.
//  * fp8_gemv_mma_cp_kernel (sm_80+, WK = 64, any M: 8- or 16-row tiles): the same fragments and
//    arithmetic, but the weight reaches the lanes through a per-warp cp.async
//    ring in shared memory (common/warp_ring.cuh) copied 4 rows x 128 bytes
//    per instruction: measured on the H200, the 8 rows x 64 bytes per warp
//    load above streams at only ~65-70 % of the read ceiling, 128-byte rows at
//    ~98 % (benchmarks/micro/stream_patterns.cu).
//  * fp8_gemv_fma_kernel (any sm_75+): one warp = 2 output columns x RM
//    activation rows; lanes split K in 16-element pieces (16-byte weight
//    loads, a warp covers 512 contiguous bytes per row), fp32 FMAs, a
//    16-element partial times its block scale, then a warp shuffle reduction.
//  * quantize: one warp per (row, scale block); dequantize: elementwise.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common/dq_tile.cuh"
#include "common/e4m3_hw.cuh"
#include "common/ldg.h"
#include "common/mma.cuh"
#include "common/pdl_device.cuh"
#include "common/vec_store.cuh"
#include "common/warp_ring.cuh"

namespace torchquant {
namespace fp8 {

// ------------------------------------------------------------ constants --
constexpr int kMmaMaxWarps = 16;       // KS <= 16 warps per block (512 threads)
constexpr int kMmaChunk = 64;          // K elements per chunk (16 bytes per lane-row)
// Chunks of weight in flight per warp (4 KB), and whether x is read one
// chunk ahead. The 16-wide window with 16 activation rows also keeps 8
// scales per chunk in registers; it reads x just in time (from L1/L2, a short
// latency the other resident warps cover) to stay spill-free under the
// 128-register budget.
constexpr int mma_prefetch(int wk, int mt) { return (wk == 16 && mt == 2) ? 2 : 4; }
constexpr bool mma_x_ahead(int wk, int mt) { return !(wk == 16 && mt == 2); }
// cp.async ring depth (x in registers): 2 stages x 2 KB of weight per warp. Fewer bytes in
// flight ran faster (results/h200/2026-12-04d_fp8_direct, calls 4-6, same-machine A/B of two
// builds, us): 6 stages against 4 lost 5-15 % (28672x8192 fp16 M = 1 68.4-68.8 vs 63.1-63.2),
// 3 against 4 won 1-7 % (M = 4 61.4-61.7 vs 63.1-63.6; bf16 128256x4096 M = 8 142.9-144.3 vs
// 151.9-152.4), 2 against 3 won again on most shapes (Llama-3-8B layer chain bf16 M = 1 65.7-66.1
// vs 68.5, M = 8 75.9-76.1 vs 78.5; 4096x4096 fp16 M = 8 6.8 vs 7.5) and lost up to 2 % on
// 28672x8192 bf16 M = 8 (68.3-68.4 vs 66.9-68.2) and the 16-row tile of 128256x4096 (M = 16
// 186.1-186.5 vs 182.4-182.5, a shape auto sends to the wgmma GEMV on sm_90). The one-wave
// grids keep 13-16 such warps per SM.
constexpr int kMmaCpStages = 2;
// A ring stage: 16 rows x 128 bytes of weight, then the 16 rows' scales of its
// two 64-k windows (fp8_gemv_mma_cp_kernel).
constexpr int kMmaCpStageBytes = 2048 + 16 * 2 * 4;
// With x in the ring (XR), each stage then holds 128 k of each activation row
// of the tile (bf16 / fp16: 256 bytes per row).
constexpr int kMmaCpXRowBytes = 256;
constexpr int kFmaWarps = 8;           // warps per block in the fma kernel
constexpr int kFmaCols = 2;            // output columns per warp in the fma kernel
constexpr int kFmaPrefetch = 2;        // 16-element pieces in flight per lane
constexpr int kQuantWarps = 8;         // warps per block in quantize
constexpr int kDequantThreads = 256;

// ----------------------------------------------------------- primitives --
// Streaming 16/8/4-byte loads of the weight. The 16-byte form skips L1 (each
// byte is used once); the narrow forms keep L1 allocation because the other
// half of their 32-byte sector is read by the next window of the same warp.
// ld_stream_v4 (the 16-byte form, with the L2 prefetch hint) is in common/ldg.h.
__device__ __forceinline__ uint2 ld_nc_v2(const void* p) {
  return __ldg(reinterpret_cast<const uint2*>(p));
}
__device__ __forceinline__ uint32_t ld_nc_u32(const void* p) {
  return __ldg(reinterpret_cast<const unsigned int*>(p));
}
__device__ __forceinline__ uint4 ld_nc_v4(const void* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

// Makes a per-lane pointer opaque to the optimizer. Without it ptxas
// rematerializes row pointers (param load, 64-bit multiply-add, lane index)
// before every load of the main loop, ~40 extra instructions per chunk; with
// it the pointer stays in two registers, which the budget has room for.
template <typename P>
__device__ __forceinline__ P* keep_in_register(P* p) {
  asm volatile("" : "+l"(p));
  return p;
}
__device__ __forceinline__ int keep_in_register(int v) {
  asm volatile("" : "+r"(v));
  return v;
}
__device__ __forceinline__ uint32_t keep_in_register(uint32_t v) {
  asm volatile("" : "+r"(v));
  return v;
}

// Scale-block index of element k (k % 8 == 0, k < 2^26), branch-free:
// floor(k / bs) = umulhi(k / 8, bmagic) with bmagic = ceil(2^32 / (bs / 8)).
// Exact: with a = k / 8 < 2^23, d = bs / 8 in [2, 32] and e = bmagic * d - 2^32
// in [0, d), a * bmagic / 2^32 = floor(a / d) + (a mod d + a * e / 2^32) / d,
// and a * e < 2^28 keeps the bracket below d. (An integer division would cost
// ~20 instructions per scale load.) The host computes bmagic and checks K.
__device__ __forceinline__ int block_of(int k, uint32_t bmagic) {
  return static_cast<int>(__umulhi(static_cast<uint32_t>(k) >> 3, bmagic));
}

// Field re-seating for two codes held in bits 8..15 and 24..31 (v) or, for
// the even pair, in bits 0..7 and 16..23 of w (read through w << 8 and w << 7
// / w << 4, which ptxas issues as IMAD shifts on the FMA pipe).
//   odd pair  (b1, b3): sign from w,      magnitude from w >> s
//   even pair (b0, b2): sign from w << 8, magnitude from w << (8 - s)
// with s = 1 for fp16 (4 -> 5 exponent bits) and 4 for bf16 (4 -> 8).
__device__ __forceinline__ uint32_t f16x2_mul_pow2(uint32_t h) {
  uint32_t r;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(h), "r"(0x5C005C00u));  // * 2^8
  return r;
}
__device__ __forceinline__ uint32_t bf16x2_mul_pow2(uint32_t h) {
  uint32_t r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(h), "r"(0x7B807B80u));  // * 2^120
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // fma with -0 is an exact multiply and keeps the sign of a zero product.
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(h), "r"(0x7B807B80u), "r"(0x80008000u));
#else
  r = 0u;  // unreachable: bf16 decode is only used by the sm_80+ mma kernel
#endif
  return r;
}
// Exact fp16x2 of codes (b0, b2) / (b1, b3) of w.
__device__ __forceinline__ uint32_t e4m3_even_to_f16x2(uint32_t w) {
  return f16x2_mul_pow2(((w << 8) & 0x80008000u) | ((w << 7) & 0x3F803F80u));
}
__device__ __forceinline__ uint32_t e4m3_odd_to_f16x2(uint32_t w) {
  return f16x2_mul_pow2((w & 0x80008000u) | ((w >> 1) & 0x3F803F80u));
}
// Exact bf16x2 of codes (b0, b2) / (b1, b3) of w (sm_80+).
__device__ __forceinline__ uint32_t e4m3_even_to_bf16x2(uint32_t w) {
  return bf16x2_mul_pow2(((w << 8) & 0x80008000u) | ((w << 4) & 0x07F007F0u));
}
__device__ __forceinline__ uint32_t e4m3_odd_to_bf16x2(uint32_t w) {
  return bf16x2_mul_pow2((w & 0x80008000u) | ((w >> 4) & 0x07F007F0u));
}

// fp16x2 / bf16x2 bits to two floats.
__device__ __forceinline__ float2 f16x2_to_float2(uint32_t u) {
  __half2 h;
  static_assert(sizeof(h) == sizeof(u), "half2 size");
  memcpy(&h, &u, sizeof(u));
  return __half22float2(h);
}
__device__ __forceinline__ float2 bf16x2_to_float2(uint32_t u) {
  return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xFFFF0000u));
}

// Four e4m3 codes (one 32-bit word, element 0 in the low byte) to floats.
__device__ __forceinline__ void e4m3x4_to_float(uint32_t w, float (&f)[4]) {
  const float2 e = f16x2_to_float2(e4m3_even_to_f16x2(w));  // b0, b2
  const float2 o = f16x2_to_float2(e4m3_odd_to_f16x2(w));   // b1, b3
  f[0] = e.x;
  f[1] = o.x;
  f[2] = e.y;
  f[3] = o.y;
}

template <typename T>
struct Act;  // per-activation-dtype helpers

template <>
struct Act<__half> {
  // Natural pairs (the mma fragment bookkeeping below): on sm_89+ the weight's byte pairs
  // (b0, b1) / (b2, b3) go through the hardware e4m3x2 -> f16x2 conversion (one instruction per
  // pair, against ~5 integer / packed ops for the re-seat), and x needs no byte permute.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && !defined(TORCHQUANT_FP8_NO_CVT)
  static constexpr bool kNaturalPairs = true;
#else
  static constexpr bool kNaturalPairs = false;
#endif
  static __device__ __forceinline__ uint32_t even2(uint32_t w) { return e4m3_even_to_f16x2(w); }
  static __device__ __forceinline__ uint32_t odd2(uint32_t w) { return e4m3_odd_to_f16x2(w); }
  static __device__ __forceinline__ uint32_t lo2(uint32_t w) {
    return e4m3x2_half_to_f16x2_hw<false>(w);
  }
  static __device__ __forceinline__ uint32_t hi2(uint32_t w) {
    return e4m3x2_half_to_f16x2_hw<true>(w);
  }
  static __device__ __forceinline__ float2 to_float2(uint32_t u) { return f16x2_to_float2(u); }
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
  // D += A * B, m16n8k16, fp16 inputs, fp32 accumulate.
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    mma_m16n8k16<__half>(d, a[0], a[1], a[2], a[3], b0, b1);
  }
};

template <>
struct Act<__nv_bfloat16> {
  // No e4m3 -> bf16 conversion in hardware. On sm_89+ natural pairs through fp16 and fp32
  // (common/e4m3_hw.cuh); before, the re-seat, with pairs two apart.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && !defined(TORCHQUANT_FP8_NO_CVT)
  static constexpr bool kNaturalPairs = true;
#else
  static constexpr bool kNaturalPairs = false;
#endif
  static __device__ __forceinline__ uint32_t even2(uint32_t w) { return e4m3_even_to_bf16x2(w); }
  static __device__ __forceinline__ uint32_t odd2(uint32_t w) { return e4m3_odd_to_bf16x2(w); }
  static __device__ __forceinline__ uint32_t lo2(uint32_t w) {
    return f16x2_to_bf16x2_exact(e4m3x2_half_to_f16x2_hw<false>(w));
  }
  static __device__ __forceinline__ uint32_t hi2(uint32_t w) {
    return f16x2_to_bf16x2_exact(e4m3x2_half_to_f16x2_hw<true>(w));
  }
  static __device__ __forceinline__ float2 to_float2(uint32_t u) { return bf16x2_to_float2(u); }
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    mma_m16n8k16<__nv_bfloat16>(d, a[0], a[1], a[2], a[3], b0, b1);
  }
};

// ============================================================ mma GEMV ====
//
// Fragment bookkeeping (PTX ISA, mma.m16n8k16 .f16/.bf16; g = lane / 4,
// t = lane % 4):
//   A (16x16, row = output column n0 + r, col = k position p):
//     a[0] = (row g,   p 2t, 2t+1)   a[1] = (row g+8, p 2t, 2t+1)
//     a[2] = (row g,   p 2t+8, 2t+9) a[3] = (row g+8, p 2t+8, 2t+9)
//   B (16x8, row = k position p, col = activation row m0 + g):
//     b[0] = (p 2t, 2t+1)            b[1] = (p 2t+8, 2t+9)
//   D (16x8): d[0], d[1] = (row g, col 2t, 2t+1); d[2], d[3] = (row g+8, ...)
// The k-permutation gives lane t, in mma step s, the four consecutive k
// values kb(s) .. kb(s)+3, which are the four bytes of word s of its weight
// registers for that row:
//   kb(s) = c0 + WK * (s / (WK/16)) + (WK/4) * t + 4 * (s % (WK/16))
// The even bytes (kb, kb+2) go to positions {2t, 2t+1} (a[0], a[1]) and the
// odd bytes (kb+1, kb+3) to {2t+8, 2t+9} (a[2], a[3]): decoding a byte pair
// already two apart saves a byte permute per pair on the weight. x is loaded
// k-contiguously (words 2s, 2s+1 of the lane's x registers hold kb..kb+3),
// so its B registers take the same pairing with one prmt each:
//   b[0] = (x[kb], x[kb+2]) = prmt 0x5410,  b[1] = (x[kb+1], x[kb+3]) = prmt 0x7632.
// With natural pairs (Act<T>::kNaturalPairs: sm_89+) the byte pair (kb, kb+1) goes to
// {2t, 2t+1} and (kb+2, kb+3) to {2t+8, 2t+9}, each through the hardware conversion, and x's
// words 2s, 2s+1 are b[0], b[1] as loaded. Either pairing is one bijection of the lane's four k
// values applied to A and B alike, so the mma sums the same products.
// The A fragment of one m16n8k16 in natural pairs (Act<T>::kNaturalPairs) from the words of
// rows g (wa) and g + 8 (wb) holding this lane's k kb .. kb + 3: the byte pair (kb, kb + 1) to
// positions {2t, 2t + 1}, (kb + 2, kb + 3) to {2t + 8, 2t + 9}.
template <typename T>
__device__ __forceinline__ void natural_a(uint32_t (&a)[4], uint32_t wa, uint32_t wb) {
  a[0] = Act<T>::lo2(wa);  // row g,   k kb,   kb+1
  a[1] = Act<T>::lo2(wb);  // row g+8, k kb,   kb+1
  a[2] = Act<T>::hi2(wa);  // row g,   k kb+2, kb+3
  a[3] = Act<T>::hi2(wb);  // row g+8, k kb+2, kb+3
}

template <int WK>
struct MmaWin {
  static_assert(WK == 16 || WK == 32 || WK == 64, "window");
  static constexpr int kWindows = kMmaChunk / WK;  // windows (and loads per row) per chunk
  static constexpr int kSteps = WK / 16;           // mma k-steps per window
  static constexpr int kLaneK = WK / 4;            // k values per lane per window
};

// Per-lane view of one weight row (A fragment row g or g+8): the row pointer
// already offset to the lane's first k, the limit such that window start kw
// holds data for this lane iff kw < klim (0 for a row beyond N), and the
// row's scales with their own limit (kw < kslim iff the window is inside K).
struct MmaRow {
  const uint8_t* w;
  const float* s;
  int klim;
  int kslim;
};

// Loads one chunk of two weight rows (4 words = this lane's 16 k values of
// each row, in mma-step order) and the scale of every window. Out-of-range
// pieces read nothing and give zeros (K % 16 == 0 makes each lane's piece
// entirely inside or entirely outside [0, K)); their scale is 0.
template <int WK>
__device__ __forceinline__ void mma_load_w(uint32_t (&wa)[4], uint32_t (&wb)[4],
                                           float (&sa)[MmaWin<WK>::kWindows],
                                           float (&sb)[MmaWin<WK>::kWindows], const MmaRow& ra,
                                           const MmaRow& rb, int c0, uint32_t bmagic) {
  using W = MmaWin<WK>;
#pragma unroll
  for (int j = 0; j < W::kWindows; ++j) {
    const int kw = c0 + j * WK;
    if constexpr (WK == 64) {
      uint4 va = make_uint4(0u, 0u, 0u, 0u), vb = va;
      if (kw < ra.klim) va = ld_stream_v4(ra.w + kw);
      if (kw < rb.klim) vb = ld_stream_v4(rb.w + kw);
      wa[0] = va.x; wa[1] = va.y; wa[2] = va.z; wa[3] = va.w;
      wb[0] = vb.x; wb[1] = vb.y; wb[2] = vb.z; wb[3] = vb.w;
    } else if constexpr (WK == 32) {
      uint2 va = make_uint2(0u, 0u), vb = va;
      if (kw < ra.klim) va = ld_nc_v2(ra.w + kw);
      if (kw < rb.klim) vb = ld_nc_v2(rb.w + kw);
      wa[2 * j] = va.x; wa[2 * j + 1] = va.y;
      wb[2 * j] = vb.x; wb[2 * j + 1] = vb.y;
    } else {
      uint32_t va = 0u, vb = 0u;
      if (kw < ra.klim) va = ld_nc_u32(ra.w + kw);
      if (kw < rb.klim) vb = ld_nc_u32(rb.w + kw);
      wa[j] = va;
      wb[j] = vb;
    }
    const int blk = block_of(kw, bmagic);
    float s_a = 0.f, s_b = 0.f;
    if (kw < ra.kslim) s_a = __ldg(ra.s + blk);
    if (kw < rb.kslim) s_b = __ldg(rb.s + blk);
    sa[j] = s_a;
    sb[j] = s_b;
  }
}

// Loads one chunk of x for one activation row (B fragment column g): 8 words
// = this lane's 16 k values, k-contiguous per window (words 2s, 2s+1 hold the
// k values of mma step s). xl is the row pointer offset to the lane's first
// k; klim as for the weight (0 for a row beyond M).
template <int WK>
__device__ __forceinline__ void mma_load_x(uint32_t (&dst)[8], const uint16_t* xl, int klim,
                                           int c0) {
  using W = MmaWin<WK>;
#pragma unroll
  for (int j = 0; j < W::kWindows; ++j) {
    const int kw = c0 + j * WK;
    const bool ok = kw < klim;
    if constexpr (WK == 64) {
      uint4 a = make_uint4(0u, 0u, 0u, 0u), b = a;
      if (ok) {
        const uint16_t* p = xl + kw;
        a = ld_nc_v4(p);
        b = ld_nc_v4(p + 8);
      }
      dst[0] = a.x; dst[1] = a.y; dst[2] = a.z; dst[3] = a.w;
      dst[4] = b.x; dst[5] = b.y; dst[6] = b.z; dst[7] = b.w;
    } else if constexpr (WK == 32) {
      uint4 a = make_uint4(0u, 0u, 0u, 0u);
      if (ok) a = ld_nc_v4(xl + kw);
      dst[4 * j] = a.x; dst[4 * j + 1] = a.y; dst[4 * j + 2] = a.z; dst[4 * j + 3] = a.w;
    } else {
      uint2 a = make_uint2(0u, 0u);
      if (ok) a = ld_nc_v2(xl + kw);
      dst[2 * j] = a.x;
      dst[2 * j + 1] = a.y;
    }
  }
}

// One chunk: per window, a fresh fp32 partial from kSteps mma steps, then
// acc += partial * scale of that window's block (row g uses sa, row g+8 sb).
// kPermuted: xv already holds the B fragments (the MT = 2 ring loop permutes them).
// Natural pairs (fp16 on sm_89+): xv's words are the B fragments either way.
template <typename T, int WK, int MT, bool kPermuted = false>
__device__ __forceinline__ void mma_chunk(const uint32_t (&wa)[4], const uint32_t (&wb)[4],
                                          const float (&sa)[MmaWin<WK>::kWindows],
                                          const float (&sb)[MmaWin<WK>::kWindows],
                                          const uint32_t (&xv)[MT][8], float (&acc)[MT][4]) {
  using W = MmaWin<WK>;
#pragma unroll
  for (int j = 0; j < W::kWindows; ++j) {
    float part[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) part[mt][0] = part[mt][1] = part[mt][2] = part[mt][3] = 0.f;
#pragma unroll
    for (int q = 0; q < W::kSteps; ++q) {
      const int s = j * W::kSteps + q;
      uint32_t a[4];
      if constexpr (Act<T>::kNaturalPairs) {
        natural_a<T>(a, wa[s], wb[s]);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) Act<T>::mma(part[mt], a, xv[mt][2 * s], xv[mt][2 * s + 1]);
      } else {
        a[0] = Act<T>::even2(wa[s]);  // row g,   k kb,   kb+2
        a[1] = Act<T>::even2(wb[s]);  // row g+8, k kb,   kb+2
        a[2] = Act<T>::odd2(wa[s]);   // row g,   k kb+1, kb+3
        a[3] = Act<T>::odd2(wb[s]);   // row g+8, k kb+1, kb+3
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          if constexpr (kPermuted) {
            Act<T>::mma(part[mt], a, xv[mt][2 * s], xv[mt][2 * s + 1]);
          } else {
            const uint32_t b0 = __byte_perm(xv[mt][2 * s], xv[mt][2 * s + 1], 0x5410);
            const uint32_t b1 = __byte_perm(xv[mt][2 * s], xv[mt][2 * s + 1], 0x7632);
            Act<T>::mma(part[mt], a, b0, b1);
          }
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      acc[mt][0] = fmaf(part[mt][0], sa[j], acc[mt][0]);
      acc[mt][1] = fmaf(part[mt][1], sa[j], acc[mt][1]);
      acc[mt][2] = fmaf(part[mt][2], sb[j], acc[mt][2]);
      acc[mt][3] = fmaf(part[mt][3], sb[j], acc[mt][3]);
    }
  }
}

// Where a thread of either mma kernel sits: grid.x = ceil(N / 16) * mtiles
// with the M tile fastest (weight tile n0 = 16 * (blockIdx.x / mtiles),
// activation rows from m0 = 8 * MT * (blockIdx.x % mtiles)); `ks` warps split
// K; lane (g, t) = (lane / 4, lane % 4) of the mma fragments.
struct MmaPlace {
  int lane, warp, ks, g, t, n0, m0;
};
template <int MT>
__device__ __forceinline__ MmaPlace mma_place(int mtiles) {
  const int lane = threadIdx.x & 31;
  const int mtile = blockIdx.x % mtiles;  // unsigned arithmetic, as blockIdx is
  const int ntile = blockIdx.x / mtiles;
  return {lane, static_cast<int>(threadIdx.x >> 5), static_cast<int>(blockDim.x >> 5), lane >> 2, lane & 3,
          ntile * 16, mtile * 8 * MT};
}

// The activation row of the B fragment this lane feeds, per n-tile of 8 rows
// (row m = m_lane + 8 mt): its pointer offset to the lane's first k `lk`, and
// the limit such that window start kw holds data for the lane iff kw < xlim
// (0 for a row beyond M, which then reads nothing).
template <int MT, typename T>
__device__ __forceinline__ void mma_x_rows(const T* x, int m_lane, int M, int K, int lk,
                                           const uint16_t* (&xl)[MT], int (&xlim)[MT]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int m = m_lane + mt * 8;
    xl[mt] = keep_in_register(reinterpret_cast<const uint16_t*>(x) +
                              static_cast<size_t>(m < M ? m : 0) * K + lk);
    xlim[mt] = keep_in_register(m < M ? K - lk : 0);
  }
}

// Epilogue of both mma kernels. Accumulator r = mt * 4 + i of lane (g, t) is
// output column n0 + g + 8 * (i / 2), activation row m0 + 8 * mt + 2t + (i % 2).
// With ks > 1 the warps' partials are summed through `red` (ks * MT * 4 * 32
// floats) in a fixed order (deterministic); every warp of the block must call it.
template <typename T, int MT>
__device__ __forceinline__ void mma_epilogue(const float (&acc)[MT][4], float* red, int ks, int warp,
                                             int lane, int n0, int m0, int M, int N,
                                             const T* __restrict__ bias, T* __restrict__ y) {
  auto store = [&](int r, int ln, float v) {
    const int mt = r >> 2, i = r & 3;
    const int n = n0 + (ln >> 2) + ((i >> 1) << 3);
    const int m = m0 + mt * 8 + 2 * (ln & 3) + (i & 1);
    if (n < N && m < M) {
      if (bias != nullptr) v += Act<T>::to_float(bias[n]);
      y[static_cast<size_t>(m) * N + n] = Act<T>::from_float(v);
    }
  };
  if (ks == 1) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 4; ++i) store(mt * 4 + i, lane, acc[mt][i]);
    return;
  }
  constexpr int R = MT * 4;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < 4; ++i) red[(warp * R + mt * 4 + i) * 32 + lane] = acc[mt][i];
  __syncthreads();
  for (int e = threadIdx.x; e < R * 32; e += blockDim.x) {
    float v = 0.f;
    for (int q = 0; q < ks; ++q) v += red[q * R * 32 + e];  // fixed order: deterministic
    store(e >> 5, e & 31, v);
  }
}

// grid.x = ceil(N / 16) * mtiles (M tile fastest, so the blocks that share a
// weight tile run together and the re-reads for M > 16 hit L2);
// block = KS warps (KS in 1..16), dynamic shared memory KS * MT * 4 * 32 floats.
// MT = 1 serves M <= 8 per tile, MT = 2 serves 16 rows per tile.
template <typename T, int WK, int MT>
__global__ void __launch_bounds__(kMmaMaxWarps * 32, 1)
    fp8_gemv_mma_kernel(const T* __restrict__ x, const uint8_t* __restrict__ w,
                        const float* __restrict__ ws, const T* __restrict__ bias,
                        T* __restrict__ y, int M, int N, int K, uint32_t bmagic, int nb,
                        int mtiles, int pdl_early) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using W = MmaWin<WK>;
  constexpr int U = mma_prefetch(WK, MT);
  extern __shared__ float red[];

  const auto [lane, warp, ks, g, t, n0, m0] = mma_place<MT>(mtiles);
  const int lk = t * W::kLaneK;  // this lane's first k inside a window

  // Rows of the A fragment this lane feeds; a row beyond N reads nothing.
  MmaRow ra, rb;
  {
    const bool okA = n0 + g < N, okB = n0 + g + 8 < N;
    ra.w = keep_in_register(w + static_cast<size_t>(okA ? n0 + g : 0) * K + lk);
    rb.w = keep_in_register(w + static_cast<size_t>(okB ? n0 + g + 8 : 0) * K + lk);
    ra.s = keep_in_register(ws + static_cast<size_t>(okA ? n0 + g : 0) * nb);
    rb.s = keep_in_register(ws + static_cast<size_t>(okB ? n0 + g + 8 : 0) * nb);
    ra.klim = keep_in_register(okA ? K - lk : 0);
    rb.klim = keep_in_register(okB ? K - lk : 0);
    ra.kslim = keep_in_register(okA ? K : 0);
    rb.kslim = keep_in_register(okB ? K : 0);
  }
  // Activation row of the B fragment this lane feeds, per n-tile of 8 rows.
  const uint16_t* xl[MT];
  int xlim[MT];
  mma_x_rows<MT>(x, m0 + g, M, K, lk, xl, xlim);

  // Chunks warp, warp + ks, warp + 2ks, ... (strided: the block's warps read
  // neighbouring 64-byte pieces of the same 16 rows at the same time).
  const int nchunks = (K + kMmaChunk - 1) / kMmaChunk;
  const int mine = warp < nchunks ? (nchunks - 1 - warp) / ks + 1 : 0;
  const int cstride = keep_in_register(ks * kMmaChunk);
  const int cfirst = keep_in_register(warp * kMmaChunk);
  bmagic = keep_in_register(bmagic);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.f;

  uint32_t wa[U][4], wb[U][4];
  float sa[U][W::kWindows], sb[U][W::kWindows];
  // x fragments, double-buffered by chunk parity when read one chunk ahead
  // (i0 steps by the even U, so the parity of chunk i0 + u is that of u and
  // every index below is a compile-time constant).
  constexpr bool XA = mma_x_ahead(WK, MT);
  static_assert(!XA || U % 2 == 0, "x double buffer needs an even prefetch depth");
  uint32_t xb[XA ? 2 : 1][MT][8];

#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u < mine) mma_load_w<WK>(wa[u], wb[u], sa[u], sb[u], ra, rb, cfirst + u * cstride, bmagic);
  }
  if (XA && mine > 0) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) mma_load_x<WK>(xb[0][mt], xl[mt], xlim[mt], cfirst);
  }

  for (int i0 = 0; i0 < mine; i0 += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u;
      if (i < mine) {  // warp-uniform
        const int c0 = cfirst + i * cstride;
        const int cur = XA ? (u & 1) : 0;
        if (XA) {
          if (i + 1 < mine) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              mma_load_x<WK>(xb[cur ^ 1][mt], xl[mt], xlim[mt], c0 + cstride);
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) mma_load_x<WK>(xb[0][mt], xl[mt], xlim[mt], c0);
        }
        mma_chunk<T, WK, MT>(wa[u], wb[u], sa[u], sb[u], xb[cur], acc);
        if (i + U < mine)
          mma_load_w<WK>(wa[u], wb[u], sa[u], sb[u], ra, rb, c0 + U * cstride, bmagic);
      }
    }
  }

  mma_epilogue<T, MT>(acc, red, ks, warp, lane, n0, m0, M, N, bias, y);
#else
  __trap();  // the host never launches this kernel below sm_80
#endif
}

// ================================================= mma GEMV, cp.async ====
// The WK = 64 path (block_size % 64 == 0) with the weight streamed through a
// per-warp shared-memory ring (common/warp_ring.cuh): each stage is 16 rows x
// 128 k, copied 4 rows x 128 bytes per instruction, S stages in flight, no
// registers held by bytes in flight. Each stage feeds two 64-k chunks to the
// same mma_chunk as the kernel above (the same arithmetic per chunk; with
// ks > 1 the chunks are spread over the warps in pairs, a different fp32 order).
// Warp `warp` of a block takes stages warp, warp + ks, ...
//
// The block scales ride the same ring: behind the 2048 bytes of weight, a
// stage holds the 16 rows' scales of its two 64-k windows (row r, window h at
// byte 2048 + 8r + 4h), one 4-byte cp.async per lane, committed with the
// stage's weight. (Read with __ldg in the loop, as before 2026-12-01, every
// stage waited on a dependent global load: one DRAM round trip per 8 stages
// at bs = 128 and an L1/L2 trip on the others, with ~3 warps per scheduler
// to hide it; Nsight Compute: 54 % issue-busy, 67 % of DRAM peak.) x is read
// one stage ahead into a second register buffer (it is small and shared by
// every block, so it comes from L1/L2), or with XR copied into the ring too:
// behind the scales, min(M, 8 MT) rows x 128 k (kMmaCpXRowBytes each), with
// the stage's weight (launch_mma_cp_t says when).
// Dynamic shared memory: ks * S * stage bytes of ring (kMmaCpStageBytes, plus
// min(M, 8 MT) * kMmaCpXRowBytes with XR), then the K-split reduction
// (ks * MT * 4 * 32 floats when ks > 1).
// kTiled: w and ws in the tiled order (fp8_tiles.h; N % 16 == 0): the producer reads each unit
// from its tiled place (ring::Producer's kTiled) and lane l's scale copy from tile + 16 block +
// l % 16, so a stage's 32 scale copies read one 64-byte run (16 rows' lines in the row-major
// order). Same stage contents: the same bits. Built without XR only.
template <typename T, int MT, int S, bool XR, bool kTiled = false>
__global__ void __launch_bounds__(kMmaMaxWarps * 32, 1)
    fp8_gemv_mma_cp_kernel(const T* __restrict__ x, const uint8_t* __restrict__ w,
                           const float* __restrict__ ws, const T* __restrict__ bias,
                           T* __restrict__ y, int M, int N, int K, uint32_t bmagic, int nb,
                           int mtiles, int pdl_early) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) uint8_t dsm[];
  pdl_launch_dependents();  // TORCHQUANT_PDL (common/pdl.h): the next GEMV may launch
  // Plain copies, not a structured binding: the lambdas below capture them (capturing a
  // structured binding is C++20; torch 2.11's extension build compiles as C++17).
  const MmaPlace pl = mma_place<MT>(mtiles);
  const int lane = pl.lane, warp = pl.warp, ks = pl.ks, g = pl.g, t = pl.t, n0 = pl.n0, m0 = pl.m0;
  const int lk = t * 16;

  static_assert(!(kTiled && XR), "the tiled ring kernel is built without XR");
  ring::Producer<4, 4, kTiled> prod;
  prod.init(w, n0, N, K, lane);
  // XR pins the copy state: otherwise ptxas rebuilt it from the lane index (an
  // S2R and ~30 instructions) inside every stage's copy branch. (Without XR the
  // registers are short: pinned, the MT = 2 kernel spilled.)
  if constexpr (XR) {
    prod.src = keep_in_register(prod.src);
    prod.jv = keep_in_register(prod.jv);
    prod.klim = keep_in_register(prod.klim);
    prod.dst = keep_in_register(prod.dst);
  }
  ring::Reader rd;
  rd.init(lane);
  // XR: a stage also holds x, rows m0 .. m0 + xrows - 1 (xrows = min(M, 8 MT),
  // the same for every block) x 128 k, 256 bytes per row behind the scales.
  const int xrows = XR ? min(M, 8 * MT) : 0;
  const uint32_t stage_bytes = keep_in_register(
      static_cast<uint32_t>(kMmaCpStageBytes + xrows * kMmaCpXRowBytes));
  const uint32_t ring0 = ring::smem_u32addr(dsm) + warp * (S * stage_bytes);
  float* red = reinterpret_cast<float*>(dsm + ks * (S * stage_bytes));

  // Scale copy: lane l copies window h = l / 16 of row n0 + l % 16.
  const int srow = n0 + (lane & 15), sh = lane >> 4;
  const bool srow_ok = srow < N;
  const float* sptr = keep_in_register(kTiled ? ws + static_cast<size_t>(n0) * nb + (lane & 15)
                                             : ws + static_cast<size_t>(srow_ok ? srow : 0) * nb);
  constexpr int kSb = kTiled ? 16 : 1;  // a scale block's stride
  uint32_t sdst = ring::kStageBytes + (lane & 15) * 8 + sh * 4;
  int skw0 = srow_ok ? 64 * sh : K;  // the lane's window offset; K: never in range
  if constexpr (XR) {
    sdst = keep_in_register(sdst);
    skw0 = keep_in_register(skw0);
  }
  bmagic = keep_in_register(bmagic);

  // XR copy side: lane l copies 16-byte unit xu = l % 16 (8 k values) of the
  // tile's rows xr0 + 2j (xr0 = l / 16), j < xjv, stored at unit xu ^ (row & 1)
  // of the row (the row parity is xr0's). Units at k >= K are zero-filled
  // (they meet zero-filled weight, but garbage x could be NaN).
  const int xu = lane & 15, xr0 = lane >> 4;
  const int rows_here = XR ? min(M - m0, 8 * MT) : 0;  // >= 1: m0 < M
  const int xjv = keep_in_register(rows_here > xr0 ? (rows_here - xr0 + 1) >> 1 : 0);
  const uint8_t* xsrc = keep_in_register(reinterpret_cast<const uint8_t*>(x) +
                                         (static_cast<size_t>(xjv > 0 ? m0 + xr0 : 0) * K + 8 * xu) * 2);
  const int xklim = keep_in_register(K - 8 * xu);
  const uint32_t xstride2 = static_cast<uint32_t>(K) * 4;  // two rows, bytes
  const uint32_t xdst =
      keep_in_register(static_cast<uint32_t>(kMmaCpStageBytes + xr0 * kMmaCpXRowBytes + ((xu ^ xr0) << 4)));
  auto issue_x = [&](uint32_t stage, int k0) {
    const bool kin = k0 < xklim;
    const uint8_t* p = xsrc + (kin ? 2 * k0 : 0);
#pragma unroll
    for (int j = 0; j < 4 * MT; ++j)
      ring::cp16ca_if(stage + xdst + 2 * kMmaCpXRowBytes * j, p + static_cast<uint64_t>(xstride2) * j,
                      kin ? 16u : 0u, j < xjv);
  };
  auto issue = [&](uint32_t stage, int k0, bool with_x) {
    prod.issue(stage, k0);
    const int kw = k0 + skw0;
    const bool ok = kw < K;  // (false for a row past N: skw0 = K)
    ring::cp4_if(stage + sdst, ok ? sptr + kSb * block_of(kw, bmagic) : sptr, ok ? 4u : 0u, true);
    if constexpr (XR) {
      if (with_x) issue_x(stage, k0);
    }
  };
  // XR read side: lane (g, t) reads row r = min(8 mt + g, xrows - 1) (a row
  // past the tile repeats a copied one; its mma column is never stored),
  // units 8h + 2t and 8h + 2t + 1 = k 64h + 16t .. + 15, swizzled by r & 1.
  uint32_t xa0[MT], xa1[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int r = XR ? min(8 * mt + g, xrows - 1) : 0;
    const uint32_t base = kMmaCpStageBytes + r * kMmaCpXRowBytes;
    xa0[mt] = base + ((2 * t + (r & 1)) << 4);
    xa1[mt] = base + ((2 * t + 1 - (r & 1)) << 4);
  }

  const uint16_t* xl[MT];
  int xlim[MT];
  if constexpr (!XR) mma_x_rows<MT>(x, m0 + g, M, K, lk, xl, xlim);

  float acc[MT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) acc[mt][0] = acc[mt][1] = acc[mt][2] = acc[mt][3] = 0.f;

  const int nst = (K + 127) / 128;
  const int mine = warp < nst ? (nst - 1 - warp) / ks + 1 : 0;
  const int kstride = ks * 128;
  int knext = warp * 128;  // byte (= k) offset of the next stage to copy
  // Launched with PDL (common/pdl.h) the kernel waits for its predecessor here, before the
  // first weight copy, or ("smem", pdl_early) after the S stages below are in flight.
  if (!pdl_early) pdl_wait();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    if (s < mine) issue(ring0 + s * stage_bytes, knext + s * kstride, !pdl_early);
    ring::commit();  // empty groups keep the count uniform
  }
  if constexpr (XR) {
    if (pdl_early) {  // x is the predecessor's output: copy it only after the wait
      pdl_wait();
#pragma unroll
      for (int s = 0; s < S; ++s)
        if (s < mine) issue_x(ring0 + s * stage_bytes, knext + s * kstride);
      ring::commit();
      ring::wait_pending<0>();  // the prologue's groups all complete (the loop's counts hold)
    }
  }
  knext += S * kstride;
  int kcur = warp * 128;
  int slot = 0;

  // A step reads stage `slot` (weight, scales and, with XR, x), refills it with
  // stage i + S, then runs its two chunks. take_stage waits for the slot's copies
  // and reads its weight and scales; it returns the slot's address.
  auto take_stage = [&](uint32_t (&wa)[2][4], uint32_t (&wb)[2][4], float (&sa)[2][1],
                        float (&sb)[2][1]) {
    ring::wait_pending<S - 1>();
    __syncwarp();
    const uint32_t stage = ring0 + slot * stage_bytes;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint4 a = rd.row_g(stage, h), b = rd.row_g8(stage, h);
      wa[h][0] = a.x; wa[h][1] = a.y; wa[h][2] = a.z; wa[h][3] = a.w;
      wb[h][0] = b.x; wb[h][1] = b.y; wb[h][2] = b.z; wb[h][3] = b.w;
    }
    const uint2 sga = ring::lds64(stage + ring::kStageBytes + g * 8);
    const uint2 sgb = ring::lds64(stage + ring::kStageBytes + (g + 8) * 8);
    sa[0][0] = __uint_as_float(sga.x); sa[1][0] = __uint_as_float(sga.y);
    sb[0][0] = __uint_as_float(sgb.x); sb[1][0] = __uint_as_float(sgb.y);
    return stage;
  };
  auto refill = [&](int i, uint32_t stage) {
    __syncwarp();  // every lane has read the slot before it is refilled
    if (i + S < mine) issue(stage, knext, true);
    ring::commit();
    knext += kstride;
    kcur += kstride;
    slot = slot + 1 == S ? 0 : slot + 1;
  };

  if constexpr (XR) {
    for (int i = 0; i < mine; ++i) {
      uint32_t wa[2][4], wb[2][4];
      float sa[2][1], sb[2][1];
      const uint32_t stage = take_stage(wa, wb, sa, sb);
      uint32_t xc[2][MT][8];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const uint4 p0 = ring::lds128(stage + xa0[mt] + 128 * h);
          const uint4 p1 = ring::lds128(stage + xa1[mt] + 128 * h);
          xc[h][mt][0] = p0.x; xc[h][mt][1] = p0.y; xc[h][mt][2] = p0.z; xc[h][mt][3] = p0.w;
          xc[h][mt][4] = p1.x; xc[h][mt][5] = p1.y; xc[h][mt][6] = p1.z; xc[h][mt][7] = p1.w;
        }
      refill(i, stage);
#pragma unroll
      for (int h = 0; h < 2; ++h) mma_chunk<T, 64, MT>(wa[h], wb[h], sa[h], sb[h], xc[h], acc);
    }
  } else {
    auto load_x = [&](uint32_t (&xb)[2][MT][8], int k0) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) mma_load_x<64>(xb[h][mt], xl[mt], xlim[mt], k0 + 64 * h);
    };
    if (pdl_early) pdl_wait();  // x, the bias and y after the predecessor
    if constexpr (MT == 1) {
      // Two x buffers: x of stage i + 1 is loaded at the top of stage i, into the buffer
      // stage i - 1 used.
      auto step = [&](int i, const uint32_t (&xc)[2][MT][8], uint32_t (&xn)[2][MT][8]) {
        if (i + 1 < mine) load_x(xn, kcur + kstride);
        uint32_t wa[2][4], wb[2][4];
        float sa[2][1], sb[2][1];
        const uint32_t stage = take_stage(wa, wb, sa, sb);
        refill(i, stage);
#pragma unroll
        for (int h = 0; h < 2; ++h) mma_chunk<T, 64, MT>(wa[h], wb[h], sa[h], sb[h], xc[h], acc);
      };
      uint32_t xb0[2][MT][8], xb1[2][MT][8];
      if (mine > 0) load_x(xb0, kcur);
      for (int i = 0; i < mine; i += 2) {
        step(i, xb0, xb1);
        if (i + 1 < mine) step(i + 1, xb1, xb0);
      }
    } else {
      // One x buffer: stage i first permutes its x into B fragments, then loads x of stage
      // i + 1 into the same registers. The first use of x(i) then waits only for loads issued
      // a stage earlier (in the two-buffer loop it also waits for x(i + 1)'s, which share the
      // scoreboard), and the permuted copy replaces the second buffer (124 registers instead
      // of 128). Measured against the two-buffer loop (results/h200/2026-12-02k_int8_smalln,
      // call 2, us, M = 16): 28672x8192 85.9 vs 88.2-89.8, 4096x14336 22.8 vs 23.8-24.3,
      // 4096x4096 10.2 vs 11.0-11.1; 128256x4096 181.2-182.2 vs 179.0-179.7. With 8-row tiles
      // the same loop was slower (28672x8192 M = 1 72.5-73.2 vs 64.9-65.0), so MT = 1 keeps two.
      uint32_t xb[2][MT][8];
      if (mine > 0) load_x(xb, kcur);
      for (int i = 0; i < mine; ++i) {
        const int kx = kcur + kstride;
        uint32_t wa[2][4], wb[2][4];
        float sa[2][1], sb[2][1];
        const uint32_t stage = take_stage(wa, wb, sa, sb);
        refill(i, stage);
        uint32_t bf[2][MT][8];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int s = 0; s < 4; ++s) {
              if constexpr (Act<T>::kNaturalPairs) {  // B fragments as loaded
                bf[h][mt][2 * s] = xb[h][mt][2 * s];
                bf[h][mt][2 * s + 1] = xb[h][mt][2 * s + 1];
              } else {
                bf[h][mt][2 * s] = __byte_perm(xb[h][mt][2 * s], xb[h][mt][2 * s + 1], 0x5410);
                bf[h][mt][2 * s + 1] = __byte_perm(xb[h][mt][2 * s], xb[h][mt][2 * s + 1], 0x7632);
              }
            }
        if (i + 1 < mine) load_x(xb, kx);
#pragma unroll
        for (int h = 0; h < 2; ++h)
          mma_chunk<T, 64, MT, true>(wa[h], wb[h], sa[h], sb[h], bf[h], acc);
      }
    }
  }
  ring::wait_pending<0>();

  mma_epilogue<T, MT>(acc, red, ks, warp, lane, n0, m0, M, N, bias, y);
#else
  __trap();  // the host never launches this kernel below sm_80
#endif
}

// ========================================================= direct GEMV ====
// The int8 GEMV's stream shape (docs/int8_gemm.md "Kernel 2"; the same shape as nvfp4's direct
// GEMV, docs/nvfp4_gemv.md 27-33) for block sizes that are multiples of 64 and K % 64 == 0, on
// sm_89+ (the hardware e4m3 conversion, natural pairs). A block owns 16 weight rows (one m16 tile)
// and one token tile of <= 8 x rows, or two (NT = 2, M = 9..16) (grid.x = ceil(N / 16) * mtiles,
// the token tile fastest); its 8 warps take the 64-byte pieces (64 k) w, w + 8, ... of every row,
// so the block reads 512 contiguous bytes of each of its rows per step, straight into registers (no
// shared memory ring). Lane (g, t) loads bytes 16t .. 16t + 15 of the piece of rows g and g + 8
// (four words: word j holds k 16t + 4j .. + 3, the lane's k of the piece's mma j), the two rows'
// block scales (fp32, L1-cached: the piece lies inside one block because 64 divides block_size) and
// x row g's 16 values of those k (two 16-byte L1-cached loads; lanes of rows past the tile load
// nothing and hold zeros, whose D columns are never stored). A round issues U pieces' weight,
// scales and x together (the nvfp4 direct GEMV's lesson: x loads issued with the weight overlap its
// latency instead of standing before each mma), then decodes and multiplies them: per word the byte
// pairs (k, k + 1) and (k + 2, k + 3) of rows g and g + 8 are a[0], a[2] and a[1], a[3] of one
// m16n8k16 (natural pairs, mma_chunk's bookkeeping), x's words as loaded are b[0], b[1]. Each
// piece's four mma sum into a fresh fp32 partial that one fmaf per output scales into the
// accumulator (mma_chunk's order per 64-k window). The 8 warps' 16 x 8 NT tiles are summed through
// shared memory in warp order (deterministic), then bias and the one rounding.
// pdl_early (static weights, common/pdl.h): the first round's weight and scale loads go out before
// griddepcontrol.wait, x's after it.
constexpr int kDirectWarps = 8;
constexpr int kDirectThreads = kDirectWarps * 32;
constexpr int kDirectRows = 8;  // x rows per token tile (the mma's n8)

// NT token tiles per pass (1: M <= 8 per block; 2: 16 x rows, each decoded weight word feeding
// both tiles' mma, so the weight streams once for M = 9..16 instead of once per tile).
// kTiled: the weight and scales stored per 16-row tile (fp8_block_tile, fp8_tiles.h; N % 16 ==
// 0): piece pc of the block's tile is one 1 KB run (row r at 64 r), so a warp's weight load reads
// 4 whole 128-byte lines (8 half lines of 8 rows in the row-major weight), and the tile's 16 scales
// of a block are one 64-byte run (row r at r), so a scale load reads 1 line (8 in rows): nvfp4's
// layout-4 lever (docs/nvfp4_gemv.md 39-40). Same bytes into the same registers: the same bits.
template <typename T, int U, int kMinBlocks, int NT = 1, bool kTiled = false>
__global__ void __launch_bounds__(kDirectThreads, kMinBlocks)
    fp8_gemv_direct_kernel(const T* __restrict__ x, const uint8_t* __restrict__ w,
                           const float* __restrict__ ws, const T* __restrict__ bias,
                           T* __restrict__ y, int M, int N, int K, uint32_t bmagic, int nb,
                           int mtiles, int pdl_early) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  constexpr int TR = kDirectRows * NT;  // x rows per block
  __shared__ float red[kDirectWarps][TR][16];
  pdl_launch_dependents();
  bool waited = pdl_early == 0;
  if (waited) pdl_wait();  // everything this kernel reads may come from the kernel before
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = static_cast<int>(blockIdx.x / mtiles) * 16;
  const int m0 = static_cast<int>(blockIdx.x % mtiles) * TR;
  const int rows = min(TR, M - m0);
  const int pieces = K >> 6;
  const bool v_lo = n0 + g < N, v_hi = n0 + g + 8 < N;  // rows past N: never loaded or stored
  // kTiled: the tile's bytes start where its rows' would (16 K bytes, 16 nb scales per tile)
  const uint8_t* const w_lo = kTiled ? w + static_cast<size_t>(n0) * K + 64 * g + 16 * t
                                     : w + static_cast<size_t>(v_lo ? n0 + g : 0) * K + 16 * t;
  const uint8_t* const w_hi = kTiled ? w_lo + 512 : w + static_cast<size_t>(v_hi ? n0 + g + 8 : 0) * K + 16 * t;
  const float* const s_lo = kTiled ? ws + static_cast<size_t>(n0) * nb + g
                                   : ws + static_cast<size_t>(v_lo ? n0 + g : 0) * nb;
  const float* const s_hi = kTiled ? s_lo + 8 : ws + static_cast<size_t>(v_hi ? n0 + g + 8 : 0) * nb;
  constexpr int kWp = kTiled ? 1024 : 64, kSb = kTiled ? 16 : 1;  // a piece's / a block's stride
  bool x_real[NT];
  const T* xrow[NT];  // x row g + 8 j of the block's rows
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    x_real[j] = g + 8 * j < rows;
    xrow[j] = x + static_cast<size_t>(x_real[j] ? m0 + g + 8 * j : 0) * K + 16 * t;
  }

  float acc[NT][4] = {};
  for (int c = warp; c < pieces; c += kDirectWarps * U) {
    uint4 wl[U], wh[U], xv[U][NT][2];
    float sl[U], sh[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {  // the round's weight and scales
      const int cc = c + kDirectWarps * u;
      const bool in = cc < pieces;
      const size_t pc = in ? static_cast<size_t>(cc) : 0;
      wl[u] = ld_stream_v4_if(w_lo + kWp * pc, in && v_lo);
      wh[u] = ld_stream_v4_if(w_hi + kWp * pc, in && v_hi);
      const int b = block_of(64 * static_cast<int>(pc), bmagic);
      sl[u] = in && v_lo ? __ldg(s_lo + kSb * b) : 0.f;
      sh[u] = in && v_hi ? __ldg(s_hi + kSb * b) : 0.f;
    }
    if (!waited) {  // pdl_early: x may be the kernel before's output
      pdl_wait();
      waited = true;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {  // the round's x
      const int cc = c + kDirectWarps * u;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const bool in = cc < pieces && x_real[j];
        const T* const xp = xrow[j] + 64 * static_cast<size_t>(in ? cc : 0);
        xv[u][j][0] = ld_cached_v4_if(xp, in);
        xv[u][j][1] = ld_cached_v4_if(xp + 8, in);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c + kDirectWarps * u >= pieces) break;
      const uint32_t lo[4] = {wl[u].x, wl[u].y, wl[u].z, wl[u].w};
      const uint32_t hi[4] = {wh[u].x, wh[u].y, wh[u].z, wh[u].w};
      float part[NT][4] = {};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint32_t a[4];
        natural_a<T>(a, lo[i], hi[i]);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const uint4& q = xv[u][j][i >> 1];  // x words 2i, 2i + 1 of the lane's 8
          Act<T>::mma(part[j], a, (i & 1) ? q.z : q.x, (i & 1) ? q.w : q.y);
        }
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        acc[j][0] = fmaf(part[j][0], sl[u], acc[j][0]);
        acc[j][1] = fmaf(part[j][1], sl[u], acc[j][1]);
        acc[j][2] = fmaf(part[j][2], sh[u], acc[j][2]);
        acc[j][3] = fmaf(part[j][3], sh[u], acc[j][3]);
      }
    }
  }
  if (!waited) pdl_wait();  // a warp with no piece (warp >= K / 64) still waits before storing
  // D fragment of tile j: acc[j][0], [1] -> row g, x rows 8j + 2t, + 1; [2], [3] -> row g + 8.
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp][8 * j + 2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[j][r];
  __syncthreads();
  if (tid < TR * 16) {  // output tid: x row tid / 16, weight row tid % 16
    const int ml = tid >> 4, nl = tid & 15, n = n0 + nl;
    if (ml < rows && n < N) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < kDirectWarps; ++q) s += red[q][ml][nl];  // warp order: deterministic
      if (bias != nullptr) s += Act<T>::to_float(bias[n]);
      y[static_cast<size_t>(m0 + ml) * N + n] = Act<T>::from_float(s);
    }
  }
#else
  __trap();  // the host launches this kernel only on sm_89+
#endif
}

// ============================================================ fma GEMV ====
// grid.x = ceil(N / (kFmaWarps * kFmaCols)) * mtiles (M tile fastest);
// block = kFmaWarps warps; RM activation rows per M tile.
template <typename T, int RM>
__global__ void __launch_bounds__(kFmaWarps * 32, 2)
    fp8_gemv_fma_kernel(const T* __restrict__ x, const uint8_t* __restrict__ w,
                        const float* __restrict__ ws, const T* __restrict__ bias,
                        T* __restrict__ y, int M, int N, int K, uint32_t bmagic, int nb,
                        int mtiles, int pdl_early) {
  constexpr int NC = kFmaCols, U = kFmaPrefetch;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int mtile = blockIdx.x % mtiles;
  const int cgroup = blockIdx.x / mtiles;
  const int n0 = (cgroup * kFmaWarps + warp) * NC;
  if (n0 >= N) return;  // whole warp; no block-level synchronization below
  const int m0 = mtile * RM;

  bool okc[NC];
  const uint8_t* wr[NC];
  const float* sr[NC];
#pragma unroll
  for (int c = 0; c < NC; ++c) {
    okc[c] = n0 + c < N;
    wr[c] = w + static_cast<size_t>(okc[c] ? n0 + c : n0) * K;
    sr[c] = ws + static_cast<size_t>(okc[c] ? n0 + c : n0) * nb;
  }
  const uint16_t* xr[RM];
  bool okm[RM];
#pragma unroll
  for (int m = 0; m < RM; ++m) {
    okm[m] = m0 + m < M;
    xr[m] = reinterpret_cast<const uint16_t*>(x) + static_cast<size_t>(okm[m] ? m0 + m : 0) * K;
  }

  const int pieces = K >> 4;               // 16-element pieces per row
  const int iters = (pieces + 31) >> 5;    // warp iterations over K

  float acc[RM][NC];
#pragma unroll
  for (int m = 0; m < RM; ++m)
#pragma unroll
    for (int c = 0; c < NC; ++c) acc[m][c] = 0.f;

  uint4 wbuf[U][NC];
  float sbuf[U][NC];
  auto load = [&](int slot, int it) {
    const int p = lane + 32 * it;
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const bool ok = okc[c] && p < pieces;
      wbuf[slot][c] = ok ? ld_stream_v4(wr[c] + 16 * p) : make_uint4(0u, 0u, 0u, 0u);
      sbuf[slot][c] = ok ? __ldg(sr[c] + block_of(16 * p, bmagic)) : 0.f;
    }
  };
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (u < iters) load(u, u);

  for (int i0 = 0; i0 < iters; i0 += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int it = i0 + u;
      if (it < iters) {
        const int p = lane + 32 * it;
        if (p < pieces) {
          float wf[NC][16];
#pragma unroll
          for (int c = 0; c < NC; ++c) {
            const uint32_t wv[4] = {wbuf[u][c].x, wbuf[u][c].y, wbuf[u][c].z, wbuf[u][c].w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              float f[4];
              e4m3x4_to_float(wv[q], f);
              wf[c][4 * q] = f[0];
              wf[c][4 * q + 1] = f[1];
              wf[c][4 * q + 2] = f[2];
              wf[c][4 * q + 3] = f[3];
            }
          }
#pragma unroll
          for (int m = 0; m < RM; ++m) {
            if (okm[m]) {  // warp-uniform
              const uint4 xa = ld_nc_v4(xr[m] + 16 * p);
              const uint4 xb = ld_nc_v4(xr[m] + 16 * p + 8);
              const uint32_t xw[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
              float part[NC];
#pragma unroll
              for (int c = 0; c < NC; ++c) part[c] = 0.f;
#pragma unroll
              for (int q = 0; q < 8; ++q) {
                const float2 xf = Act<T>::to_float2(xw[q]);
#pragma unroll
                for (int c = 0; c < NC; ++c) {
                  part[c] = fmaf(wf[c][2 * q], xf.x, part[c]);
                  part[c] = fmaf(wf[c][2 * q + 1], xf.y, part[c]);
                }
              }
#pragma unroll
              for (int c = 0; c < NC; ++c) acc[m][c] = fmaf(part[c], sbuf[u][c], acc[m][c]);
            }
          }
        }
        if (it + U < iters) load(u, it + U);
      }
    }
  }

  // Butterfly reduction: every lane ends with every sum; lane m * NC + c stores.
#pragma unroll
  for (int m = 0; m < RM; ++m)
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      float v = acc[m][c];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == m * NC + c && okm[m] && okc[c]) {
        if (bias != nullptr) v += Act<T>::to_float(bias[n0 + c]);
        y[static_cast<size_t>(m0 + m) * N + n0 + c] = Act<T>::from_float(v);
      }
    }
}

// ============================================================ quantize ====
// float -> e4m3 with round-to-nearest-even, the rounding torch's
// c10::Float8_e4m3fn conversion performs (the CPU path), so the codes are
// bit-identical. The input is already clamped to [-448, 448].
__device__ __forceinline__ uint8_t float_to_e4m3_rne(float f) {
  uint32_t b = __float_as_uint(f);
  const uint32_t sign = b & 0x80000000u;
  b ^= sign;
  uint32_t r;
  if (b >= 0x43F00000u) {          // >= 480: unreachable after the clamp
    r = 0x7Eu;
  } else if (b < 0x3C800000u) {    // < 2^-6: e4m3 subnormal range
    // Adding 2^14 leaves an ulp of 2^-9 (the e4m3 subnormal step), so the fp32
    // adder performs the round-to-nearest-even; the low bits are the code.
    r = __float_as_uint(__uint_as_float(b) + 16384.0f) - 0x46800000u;
  } else {
    // Re-bias the exponent (127 -> 7) and round the 20 dropped mantissa bits
    // to nearest, ties to even.
    const uint32_t odd = (b >> 20) & 1u;
    r = (b + 0xC407FFFFu + odd) >> 20;
  }
  return static_cast<uint8_t>((r & 0xFFu) | (sign >> 24));
}

// Exact e4m3 -> float, NaN codes (0x7f, 0xff) to NaN.
__device__ __forceinline__ float e4m3_to_float_exact(uint8_t b) {
  const uint32_t mag = b & 0x7Fu;
  float v;
  if (mag == 0x7Fu) {
    v = __uint_as_float(0x7FC00000u);
  } else if (mag < 8u) {
    v = static_cast<float>(mag) * 0.001953125f;  // m * 2^-9, exact
  } else {
    v = __uint_as_float((mag << 20) + (120u << 23));  // 2^(e-7) * (1 + m/8)
  }
  return (b & 0x80u) ? -v : v;
}

template <typename Tin>
__device__ __forceinline__ float load_as_float(const Tin* p);
template <>
__device__ __forceinline__ float load_as_float<float>(const float* p) { return __ldg(p); }
template <>
__device__ __forceinline__ float load_as_float<__half>(const __half* p) {
  return __half2float(__ldg(p));
}
template <>
__device__ __forceinline__ float load_as_float<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(__ldg(p));
}

// The scale of one block from each lane's partial amax and finiteness (the
// whole warp takes part): amax / 448, 1 when that is 0 (a zero block, or an
// amax so small that amax / 448 underflows), as on the CPU. A block holding
// NaN or Inf (only quantize_fp8_act can see one: the weight op checks on the
// host first) gets a NaN scale (`bad`), and its codes are NaN, so it poisons
// what it touches.
__device__ __forceinline__ float warp_block_scale(float amax, bool finite, bool& bad) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  bad = __any_sync(0xffffffffu, !finite);
  const float s0 = amax / 448.0f;
  return bad ? __int_as_float(0x7FC00000) : (s0 == 0.0f ? 1.0f : s0);
}

// e4m3_rne(clamp(v / s, -448, 448)), IEEE division as on the CPU.
__device__ __forceinline__ uint8_t e4m3_code(float v, float s) {
  return float_to_e4m3_rne(fminf(fmaxf(v / s, -448.0f), 448.0f));
}

// One warp per (row, block). scale = amax / 448 (1 when that is 0);
// q = e4m3_rne(clamp(w / scale, -448, 448)); the ragged last block uses the
// elements present. bs <= 256, so a lane holds at most 8 elements.
template <typename Tin>
__global__ void __launch_bounds__(kQuantWarps * 32)
    quantize_fp8_block_kernel(const Tin* __restrict__ w, uint8_t* __restrict__ q,
                              float* __restrict__ scale, int64_t N, int64_t K, int bs, int64_t nb,
                              int64_t s_row, int64_t s_blk) {
  const int lane = threadIdx.x & 31;
  const int64_t total = N * nb;
  for (int64_t task = static_cast<int64_t>(blockIdx.x) * kQuantWarps + (threadIdx.x >> 5);
       task < total; task += static_cast<int64_t>(gridDim.x) * kQuantWarps) {
    const int64_t n = task / nb, b = task % nb;
    const int64_t k0 = b * bs;
    const int len = static_cast<int>(K - k0 < bs ? K - k0 : bs);
    const Tin* src = w + n * K + k0;
    float v[8];
    float amax = 0.f;
    bool finite = true;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int k = lane + 32 * i;
      v[i] = k < len ? load_as_float(src + k) : 0.f;
      amax = fmaxf(amax, fabsf(v[i]));
      finite = finite && isfinite(v[i]);
    }
    bool bad;
    const float s = warp_block_scale(amax, finite, bad);
    if (lane == 0) scale[n * s_row + b * s_blk] = s;
    uint8_t* dst = q + n * K + k0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int k = lane + 32 * i;
      if (k < len) dst[k] = bad ? uint8_t{0x7F} : e4m3_code(v[i], s);
    }
  }
}

// Four consecutive elements of x as floats (8-byte load for fp16 / bf16,
// 16-byte for fp32; `p` aligned to that).
__device__ __forceinline__ void load4_as_float(const float* p, float (&v)[4]) {
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
}
__device__ __forceinline__ void load4_as_float(const __half* p, float (&v)[4]) {
  const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
  const float2 a = f16x2_to_float2(u.x), b = f16x2_to_float2(u.y);
  v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
}
__device__ __forceinline__ void load4_as_float(const __nv_bfloat16* p, float (&v)[4]) {
  const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
  const float2 a = bf16x2_to_float2(u.x), b = bf16x2_to_float2(u.y);
  v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
}

// quantize_fp8_act for block_size 128 with K % 128 == 0 and x aligned for the
// 4-element loads: the same values as quantize_fp8_block_kernel (the same
// amax, scale rule, IEEE division and e4m3 rounding per element), but each
// lane owns 4 consecutive elements, so a warp's block is one 256- or 512-byte
// load and one 128-byte store, and a warp walks several blocks.
template <typename Tin>
__global__ void __launch_bounds__(kQuantWarps * 32)
    quantize_fp8_act128_kernel(const Tin* __restrict__ x, uint8_t* __restrict__ q,
                               float* __restrict__ scale, int64_t M, int64_t K, int64_t s_row,
                               int64_t s_blk) {
  const int lane = threadIdx.x & 31;
  const int64_t nb = K >> 7, total = M * nb;
  for (int64_t task = static_cast<int64_t>(blockIdx.x) * kQuantWarps + (threadIdx.x >> 5);
       task < total; task += static_cast<int64_t>(gridDim.x) * kQuantWarps) {
    const int64_t m = task / nb, b = task - m * nb;
    const int64_t off = m * K + (b << 7) + 4 * lane;
    float v[4];
    load4_as_float(x + off, v);
    float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    const bool finite = isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]) && isfinite(v[3]);
    bool bad;
    const float s = warp_block_scale(amax, finite, bad);
    if (lane == 0) scale[m * s_row + b * s_blk] = s;
    uint32_t codes = 0x7F7F7F7Fu;
    if (!bad) {
      codes = 0u;
#pragma unroll
      for (int i = 0; i < 4; ++i) codes |= static_cast<uint32_t>(e4m3_code(v[i], s)) << (8 * i);
    }
    *reinterpret_cast<uint32_t*>(q + off) = codes;
  }
}

template <typename Tout>
__device__ __forceinline__ Tout float_to_out(float v);
template <>
__device__ __forceinline__ float float_to_out<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half float_to_out<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 float_to_out<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// out[n, k] = out_dtype(float(q[n, k]) * scale[n, k / bs]), one fp32 multiply
// and one rounding, as on the CPU.
template <typename Tout>
__global__ void __launch_bounds__(kDequantThreads)
    dequantize_fp8_block_kernel(const uint8_t* __restrict__ q, const float* __restrict__ scale,
                                Tout* __restrict__ out, int64_t N, int64_t K, int bs,
                                int64_t nb) {
  const int64_t total = N * K;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i / K, k = i % K;
    const float v = e4m3_to_float_exact(__ldg(q + i)) * __ldg(scale + n * nb + k / bs);
    out[i] = float_to_out<Tout>(v);
  }
}

// Two e4m3 codes (element 0 in the low byte of the 16-bit value) to floats,
// exact, NaN codes to NaN: the sm_89+ conversion instruction, else two
// scalar decodes.
__device__ __forceinline__ float2 e4m3x2_to_float2(uint32_t two) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return f16x2_to_float2(e4m3x2_half_to_f16x2_hw<false>(two));
#else
  return make_float2(e4m3_to_float_exact(static_cast<uint8_t>(two)),
                     e4m3_to_float_exact(static_cast<uint8_t>(two >> 8)));
#endif
}

// The same values as dequantize_fp8_block_kernel, one thread per 16-code
// piece: a 16-byte load, one scale per piece (bs % 16 == 0, so a piece never
// straddles two blocks), 16-byte stores. Needs K % 16 == 0 and a 16-byte
// aligned q; I is uint32_t when N * K / 16 < 2^32 (a 32-bit division per
// piece), else uint64_t.
template <typename Tout, typename I>
__global__ void __launch_bounds__(kDequantThreads)
    dequantize_fp8_block_vec_kernel(const uint8_t* __restrict__ q, const float* __restrict__ scale,
                                    Tout* __restrict__ out, I pieces, I pieces_per_row,
                                    I pieces_per_block, I nb) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < pieces;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    const I n = i / pieces_per_row, p = i - n * pieces_per_row;
    const float s = __ldg(scale + n * nb + p / pieces_per_block);
    const uint4 v = ld_stream_v4(q + static_cast<size_t>(i) * 16);
    const uint32_t words[4] = {v.x, v.y, v.z, v.w};
    float f[16];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 lo = e4m3x2_to_float2(words[j] & 0xFFFFu), hi = e4m3x2_to_float2(words[j] >> 16);
      f[4 * j + 0] = __fmul_rn(lo.x, s);
      f[4 * j + 1] = __fmul_rn(lo.y, s);
      f[4 * j + 2] = __fmul_rn(hi.x, s);
      f[4 * j + 3] = __fmul_rn(hi.y, s);
    }
    store16<Tout>(out + static_cast<size_t>(i) * 16, f);
  }
}

// ============================================================ tile GEMM ====
// The fp8 format of the tiled GEMM in common/dq_tile.cuh (path "tile", M past
// the GEMV's 16-row tiles). Raw stage: BN weight rows x BK bytes, 16-byte
// copies, row-major over the stage (Small: 4 rows x 128 bytes per warp
// instruction; Wide: 8 rows x 64 bytes), zero-filled past N and K. Decode: each thread turns the 16 codes it copied
// into 16 exact 16-bit values (the even / odd pair decode above, then two
// byte permutes back to k order) and stores them as pieces 2p, 2p + 1 of the
// row. The block scale is applied after the mma, FW k16 steps at a time
// (FW * 16 divides block_size, so a window never straddles two blocks).
template <typename T, int FW, class CfgT>
struct TileFormat {
  using Cfg = CfgT;
  static constexpr bool kScaleAfter = true;
  static constexpr bool kGlobal = false;
  static constexpr int kFW = FW;
  static_assert((Cfg::kBK / 16) % FW == 0, "a scale window never straddles a k tile");
  static constexpr int kRowPieces = Cfg::kBK / 16;                 // 16-code pieces per row
  static constexpr int kCopies = Cfg::kBN * kRowPieces / Cfg::kThreads;
  static constexpr int kRawStage = Cfg::kBN * Cfg::kBK;            // one byte per code
  const uint8_t* src[kCopies];  // row start + 16 * piece; row 0 past N
  uint32_t on;                  // bit i: row of copy i is < N

  __device__ __forceinline__ void init(const dqt::Args& a, int n0, int tid) {
    on = 0;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * Cfg::kThreads + tid;
      const int n = n0 + id / kRowPieces;
      const bool ok = n < a.N;
      on |= (ok ? 1u : 0u) << i;
      src[i] = a.w + static_cast<size_t>(ok ? n : 0) * a.K + 16 * (id % kRowPieces);
    }
  }
  __device__ __forceinline__ void issue(const dqt::Args& a, uint32_t raw, int kt, int tid) const {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * Cfg::kThreads + tid, p = id % kRowPieces;
      const bool ok = kt * Cfg::kBK + 16 * p < a.K && ((on >> i) & 1u);  // K % 16 == 0
      dqt::cp16(raw + (id / kRowPieces) * Cfg::kBK + 16 * p, ok ? src[i] + kt * Cfg::kBK : a.w,
                ok ? 16u : 0u);
    }
  }
  __device__ __forceinline__ void decode(uint32_t raw, uint32_t wdec, int tid) const {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * Cfg::kThreads + tid, r = id / kRowPieces, p = id % kRowPieces;
      const uint4 v = ring::lds128(raw + r * Cfg::kBK + 16 * p);
      const uint32_t wv[4] = {v.x, v.y, v.z, v.w};
      uint32_t o[8];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint32_t e = Act<T>::even2(wv[q]), d = Act<T>::odd2(wv[q]);  // (b0, b2), (b1, b3)
        o[2 * q] = dqt::prmt(e, d, 0x5410u);      // (b0, b1)
        o[2 * q + 1] = dqt::prmt(e, d, 0x7632u);  // (b2, b3)
      }
      dqt::sts128(wdec + dqt::swz<Cfg>(r, 2 * p), o[0], o[1], o[2], o[3]);
      dqt::sts128(wdec + dqt::swz<Cfg>(r, 2 * p + 1), o[4], o[5], o[6], o[7]);
    }
  }
  // Block scale of weight row n for the window starting at k (0 past N; the
  // last block past K: those products are all zero).
  __device__ __forceinline__ float scale(const dqt::Args& a, int n, int k) const {
    const int kb = min(k / a.bs, a.nb - 1);
    return n < a.N ? __ldg(reinterpret_cast<const float*>(a.wsc) + static_cast<size_t>(n) * a.nb + kb)
                   : 0.f;
  }
};

}  // namespace fp8
}  // namespace torchquant
