#pragma once
// A tiled GEMM for quantized weights at batch sizes past the decode GEMVs
// (M = 17 .. a few hundred): y[M, N] = x[M, K] @ W^T with x fp16 / bf16 and W
// decoded once per block into shared memory, so one decode of each weight
// element serves all 64 activation rows of a block (the GEMVs decode it once
// per 16 rows).
//
// Block: 128 threads = 4 warps as 2 x 2, a 64 (rows of x) x 64 (weight rows)
// output tile, k tiles of 128. Per k tile:
//   * x[64, 128] arrives by cp.async (16-byte pieces, zero-filled past M / K)
//     into a 3-stage ring of swizzled [64][128] 16-bit tiles;
//   * the raw weight bytes of the 64 rows arrive by cp.async in the same
//     commit group (Format::issue, a 3-stage ring of raw bytes);
//   * the 128 threads decode the raw stage into one [64][128] 16-bit tile
//     (Format::decode: exact, the values are the weight's codes times at most
//     a power of two and the E4M3 block scale, see the formats);
//   * the 4 warps run mma.m16n8k16 on 32 x 32 warp tiles with ldmatrix
//     fragments (x is the A operand, the decoded weight the B operand).
// Two barriers per k tile: after the stage lands (the previous mma is done
// with the decoded tile, the decode may overwrite it) and after the decode.
//
// Tiles of 16-bit values: row r holds 128 values = 16 pieces of 16 bytes;
// piece c lives at r * 256 + 16 * (c ^ (r & 7)), so the 8 rows an ldmatrix
// phase reads hit 8 distinct bank groups.
//
// Epilogue: with one K split the block adds the bias in fp32 and rounds once
// to T; with S splits each writes its fp32 tile to a [S, M, N] workspace and
// dq_tile_reduce_kernel adds them in split order (deterministic, no atomics).
// Format::kScaleAfter formats (fp8 block scales: an fp32 scale per weight row
// and block of K) keep a second accumulator per FW k16 steps and add
// partial * scale into the running sum, as the GEMVs do; Format::kGlobal
// formats (nvfp4) multiply the sum by a global scale first.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common/ldg.h"
#include "common/mma.cuh"
#include "common/warp_ring.cuh"

namespace torchquant {
namespace dqt {

// Block shape. Small: 64 x 64 outputs, k tiles of 128, 4 warps (2 x 2) of
// 32 x 32, 3 stages, 2 blocks per SM. (A wide 64 x 256 block with k tiles of
// 64, 8 warps of 32 x 64 and 4 stages, which re-reads x 4x less, measured
// slower on every shape: results/h200/2026-12-01_1115, docs/tile_gemm.md.)
template <int BN_, int BK_, int WN_, int STAGES_, int MINB_>
struct TileCfg {
  static constexpr int kBM = 64;
  static constexpr int kBN = BN_;
  static constexpr int kBK = BK_;
  static constexpr int kWarpsN = WN_;
  static constexpr int kThreads = 64 * WN_;   // 2 x WN warps
  static constexpr int kWarpN = BN_ / WN_;    // columns per warp
  static constexpr int kJ = kWarpN / 8;       // n8 tiles per warp
  static constexpr int kPieces = BK_ / 8;     // 16-byte pieces per 16-bit tile row
  static constexpr int kRowBytes = BK_ * 2;
  static constexpr int kXTile = kBM * kRowBytes;
  static constexpr int kWTile = BN_ * kRowBytes;
  static constexpr int kStages = STAGES_;
  static constexpr int kMinBlocks = MINB_;
  static_assert(kPieces >= 8, "the swizzle needs >= 8 pieces per row");
  static_assert(kJ % 2 == 0, "n8 tiles come in ldmatrix.x4 pairs");
};
using SmallCfg = TileCfg<64, 128, 2, 3, 2>;

template <class Cfg>
__device__ __forceinline__ uint32_t swz(int row, int piece) {
  return static_cast<uint32_t>(row * Cfg::kRowBytes + ((piece ^ (row & 7)) << 4));
}
__device__ __forceinline__ void cp4(uint32_t dst, const void* src, uint32_t src_size) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_size)
               : "memory");
}
// cp.async of `bytes` in {4, 8, 16} (.ca) / 16 (.cg); src_size 0 zero-fills.
__device__ __forceinline__ void cp16(uint32_t dst, const void* src, uint32_t src_size) {
  asm volatile("cp.async.cg.shared.global" TQ_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void cp8(uint32_t dst, const void* src, uint32_t src_size) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void sts128(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d)
               : "memory");
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

template <typename T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

struct Args {
  const void* x;        // [M, K] T
  const uint8_t* w;     // format-specific weight bytes
  const uint8_t* wsc;   // format-specific scales (fp8: fp32 [N, nb]; nvfp4: e4m3 [N, K / 16])
  const float* global;  // nvfp4: the fp32 global scale (device); else null
  float gfactor;        // exact power of two the decode took out of the weight (nvfp4: 2^7)
  const void* bias;     // [N] T or null
  void* y;              // [M, N] T
  float* part;          // [splits, M, N] fp32 when splits > 1
  int M, N, K;
  int bs, nb;           // fp8: block size and blocks per row
  int mtiles;           // ceil(M / 64)
  int ktiles;           // ceil(K / 128)
  int kt_per_split;
};

// grid.x = ntiles * mtiles (the M tiles of one weight tile adjacent: their
// re-reads of the raw weight hit L2), grid.y = splits.
template <typename T, class Format>
__global__ void __launch_bounds__(Format::Cfg::kThreads, Format::Cfg::kMinBlocks)
    dq_tile_kernel(const Args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using Cfg = typename Format::Cfg;
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kBK = Cfg::kBK, kStages = Cfg::kStages;
  constexpr int kJ = Cfg::kJ, kThreads = Cfg::kThreads;
  extern __shared__ __align__(128) uint8_t smem[];
  uint8_t* xs = smem;                                  // kStages x kXTile
  uint8_t* wdec = smem + kStages * Cfg::kXTile;        // kWTile
  uint8_t* raw = wdec + Cfg::kWTile;                   // kStages x Format::kRawStage
  const uint32_t xs_s = ring::smem_u32addr(xs), wdec_s = ring::smem_u32addr(wdec),
                 raw_s = ring::smem_u32addr(raw);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp & 1, wn = warp >> 1;
  const int g = lane >> 2, t = lane & 3;
  const int mt = blockIdx.x % a.mtiles, nt = blockIdx.x / a.mtiles;
  const int m0 = mt * kBM, n0 = nt * kBN;
  const int kt0 = blockIdx.y * a.kt_per_split;
  const int kt1 = min(a.ktiles, kt0 + a.kt_per_split);
  const T* __restrict__ x = static_cast<const T*>(a.x);

  // x copies: piece id = i * kThreads + tid, row id / kPieces, piece id % kPieces.
  auto issue_x = [&](int stage, int kt) {
    constexpr int kCopies = kBM * Cfg::kPieces / kThreads;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * kThreads + tid, r = id / Cfg::kPieces, p = id % Cfg::kPieces;
      const int m = m0 + r, k = kt * kBK + p * 8;
      const bool ok = m < a.M && k < a.K;
      const T* src = ok ? x + static_cast<size_t>(m) * a.K + k : x;
      cp16(xs_s + stage * Cfg::kXTile + swz<Cfg>(r, p), src, ok ? 16u : 0u);
    }
  };

  Format fmt;
  fmt.init(a, n0, tid);

  // Prologue: stages 0 .. kStages - 2.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (kt0 + s < kt1) {
      issue_x(s, kt0 + s);
      fmt.issue(a, raw_s + s * Format::kRawStage, kt0 + s, tid);
    }
    ring::commit();
  }

  float acc[2][kJ][4];
  float part[Format::kScaleAfter ? 2 : 1][Format::kScaleAfter ? kJ : 1][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < kJ; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  for (int kt = kt0; kt < kt1; ++kt) {
    const int it = kt - kt0, stage = it % kStages;
    ring::wait_pending<kStages - 2>();
    __syncthreads();  // stage `it` is in for every thread; mma(it - 1) is done with wdec
    fmt.decode(raw_s + stage * Format::kRawStage, wdec_s, tid);
    {
      const int nk = kt + kStages - 1;
      const int ns = (it + kStages - 1) % kStages;
      if (nk < kt1) {
        issue_x(ns, nk);
        fmt.issue(a, raw_s + ns * Format::kRawStage, nk, tid);
      }
      ring::commit();
    }
    __syncthreads();  // wdec holds tile kt

    const uint32_t xa = xs_s + stage * Cfg::kXTile;
    // Scale windows of 1 or 2 k16 steps (fp8 block sizes that are not
    // multiples of 64): a partial unroll keeps the per-window scale loads from
    // spilling; the window position is still known at compile time. Formats
    // without windows (nvfp4) unroll fully.
    constexpr int kUnrollS = (!Format::kScaleAfter || Format::kFW >= 4) ? kBK / 16 : 2;
#pragma unroll kUnrollS
    for (int s = 0; s < kBK / 16; ++s) {
      uint32_t af[2][4], bf[kJ / 2][4];
#pragma unroll
      for (int i = 0; i < 2; ++i)
        ldsm_x4(af[i], xa + swz<Cfg>(wm * 32 + 16 * i + (lane & 15), 2 * s + (lane >> 4)));
#pragma unroll
      for (int jj = 0; jj < kJ / 2; ++jj)
        ldsm_x4(bf[jj], wdec_s + swz<Cfg>(wn * Cfg::kWarpN + 16 * jj + (lane & 7) + ((lane >> 4) << 3),
                                          2 * s + ((lane >> 3) & 1)));
      if constexpr (Format::kScaleAfter) {
        if (s % Format::kFW == 0) {
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < kJ; ++j)
#pragma unroll
              for (int r = 0; r < 4; ++r) part[i][j][r] = 0.f;
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < kJ; ++j)
            mma_m16n8k16<T>(part[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j >> 1][(j & 1) * 2],
                            bf[j >> 1][(j & 1) * 2 + 1]);
        if (s % Format::kFW == Format::kFW - 1) {
          // Scales of this window for the lane's 2 * kJ output columns.
          const int k = kt * kBK + (s - Format::kFW + 1) * 16;
          float sc[kJ][2];
#pragma unroll
          for (int j = 0; j < kJ; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) sc[j][e] = fmt.scale(a, n0 + wn * Cfg::kWarpN + 8 * j + 2 * t + e, k);
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < kJ; ++j)
#pragma unroll
              for (int r = 0; r < 4; ++r) acc[i][j][r] = fmaf(part[i][j][r], sc[j][r & 1], acc[i][j][r]);
        }
      } else {
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < kJ; ++j)
            mma_m16n8k16<T>(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j >> 1][(j & 1) * 2],
                            bf[j >> 1][(j & 1) * 2 + 1]);
      }
    }
  }
  ring::wait_pending<0>();

  const float gsc = Format::kGlobal ? __ldg(a.global) * a.gfactor : 1.f;
  const T* bias = static_cast<const T*>(a.bias);
  T* y = static_cast<T*>(a.y);
  // acc[i][j][r]: row m0 + 32 wm + 16 i + g + 8 (r / 2), column n0 + kWarpN wn + 8 j + 2 t + r % 2.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < kJ; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = m0 + wm * 32 + 16 * i + g + 8 * (r >> 1);
        const int n = n0 + wn * Cfg::kWarpN + 8 * j + 2 * t + (r & 1);
        if (m < a.M && n < a.N) {
          float v = acc[i][j][r];
          if (gridDim.y > 1) {
            a.part[(static_cast<size_t>(blockIdx.y) * a.M + m) * a.N + n] = v;
          } else {
            if constexpr (Format::kGlobal) v = __fmul_rn(v, gsc);
            if (bias != nullptr) v = __fadd_rn(v, to_f32<T>(bias[n]));
            y[static_cast<size_t>(m) * a.N + n] = from_f32<T>(v);
          }
        }
      }
#endif
}

// y = (sum over splits of part, in split order) [* global] [+ bias], each an
// fp32 rounding, then one rounding to T: the single-split epilogue's order.
template <typename T>
__global__ void dq_tile_reduce_kernel(const float* __restrict__ part, const float* __restrict__ global,
                                      float gfactor, const T* __restrict__ bias, T* __restrict__ y,
                                      int M, int N, int splits) {
  const size_t total = static_cast<size_t>(M) * N;
  const float gsc = global != nullptr ? __ldg(global) * gfactor : 1.f;
  for (size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float v = part[e];
    for (int s = 1; s < splits; ++s) v = __fadd_rn(v, part[s * total + e]);
    if (global != nullptr) v = __fmul_rn(v, gsc);
    if (bias != nullptr) v = __fadd_rn(v, to_f32<T>(bias[e % N]));
    y[e] = from_f32<T>(v);
  }
}

}  // namespace dqt
}  // namespace torchquant
