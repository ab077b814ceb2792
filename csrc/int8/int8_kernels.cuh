// INT8 W8A8 matmul kernels: y[M, N] = epilogue(A[M, K] @ W[N, K]^T), device code only.
//
// What they compute (identical to the CPU kernel, bit for bit):
//   acc[m,n] = sum_k a_q[m,k] * w_q[n,k]                      exact int32 (K <= 65536)
//   c        = acc - a_zero[m] * w_colsum[n]                   exact integer (int64 here, as on CPU)
//   y        = float(c) * (a_scale[m] * w_scale[n])            two fp32 roundings (__fmul_rn: no FMA)
//   y        = y + float(bias[n])                              one fp32 rounding (__fadd_rn)
//   out      = out_dtype(y)                                    round to nearest even
// The integer core is exact, so the summation order (tiles, split-K, warps)
// cannot change a single bit; only the epilogue rounds, and it runs the same
// fp32 operations in the same order as the CPU kernel.
//
// Two kernels, both on mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (sm_80+):
//
// 1. int8_mma_gemm_kernel (the "mma" path, prefill / large M).
//    Block tile BM x BN x 64, warps of WM x WN = 64 x 64 (or 32 x 64), a
//    STAGES-deep cp.async.cg ring in shared memory (16-byte chunks, zero-fill
//    past M, N and K), ldmatrix.x4 fragment loads, one __syncthreads per
//    k-tile. Shared layout per operand: rows of 64 bytes (4 chunks of 16 B);
//    chunk c of row r lives at r*64 + ((c ^ ((r >> 1) & 3)) << 4). The XOR
//    spreads the 8 rows an ldmatrix phase reads over all 8 16-byte bank groups
//    of a 128-byte line (rows r and r+2 would otherwise collide), so both the
//    cp.async stores and the ldmatrix loads are conflict-free.
//    Blocks are numbered in groups of kGroupM m-tiles (m fastest) so a wave of
//    CTAs shares its A rows and W rows in L2. Optional split-K over gridDim:
//    each split adds its int32 partial tile into a zeroed workspace with
//    integer atomics (exact, order-free), and the last split of a tile to
//    arrive (a per-tile counter) runs the epilogue from the workspace.
//    Epilogue: each warp stages one 16-row slice of its tile in shared memory
//    (row pitch WN + 8 elements: conflict-free fragment writes) and writes it
//    out as 16-byte row segments (full 128-byte lines along N).
//
// 2. int8_gemv_kernel (the "gemv" path, decode: M <= 32).
//    Weight-stationary: the weight is the mma A operand (16 output channels
//    per mma) and the activation the B operand (8 tokens per n8 tile), so the
//    weight is read from HBM exactly once for all M rows and never touches
//    shared memory. k is permuted inside each 64-byte chunk the same way for
//    both operands (the dot product does not care): lane (g, t) loads 16
//    contiguous bytes of weight rows g and g+8 and 16 contiguous bytes of
//    activation row g at the same k offset, and those three 16-byte loads are
//    exactly the fragments of two m16n8k32 mmas. One block = 16 output
//    channels x 8*MT8 tokens; its 8 warps split K in interleaved 64-byte
//    chunks (a block reads 512 contiguous bytes of each weight row per step),
//    each lane keeps kUnroll chunks of loads in flight, and the 8 partial
//    tiles are summed in shared memory. Weight loads bypass L1
//    (ld.global.nc.L1::no_allocate) so the activation, which every block
//    re-reads, stays in L1.
//
// K alignment: the fast loaders move 16-byte chunks, which needs K % 16 == 0
// and 16-byte aligned base pointers (kAligned = true). Otherwise the same
// kernels are instantiated with a word-granular loader (ld16_unaligned:
// 4-5 aligned 32-bit loads + funnel shifts per 16 bytes, masked at K) and
// synchronous shared-memory stores (kAligned = false): any K, any pointer,
// slower.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/ldg.h"
#include "common/pdl_device.cuh"

namespace torchquant {
namespace int8 {

// ------------------------------------------------------------------ epilogue --
enum BiasKind : int { kBiasNone = 0, kBiasF32 = 1, kBiasF16 = 2, kBiasBF16 = 3 };

struct Epilogue {
  const float* a_scale;
  int64_t a_scale_step;  // 0 when one element broadcasts, else 1
  const int32_t* a_zero;  // nullptr: symmetric activation
  int64_t a_zero_step;
  const float* w_scale;
  int64_t w_scale_step;
  const int32_t* w_colsum;  // non-null iff a_zero is
  const void* bias;         // nullptr or [N] of bias_kind
  int bias_kind;
};

__device__ __forceinline__ float bias_value(const Epilogue& e, int n) {
  switch (e.bias_kind) {
    case kBiasF32:
      return __ldg(static_cast<const float*>(e.bias) + n);
    case kBiasF16:
      return __half2float(static_cast<const __half*>(e.bias)[n]);
    case kBiasBF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(e.bias)[n]);
    default:
      return 0.0f;
  }
}

// The one fp32 epilogue, shared by every kernel, in two steps: the operands of output (m, n)
// (which the GEMV loads before its K loop, so that no block ends on a DRAM round trip for its
// scales), then the arithmetic. m < M and n < N are the caller's job (nothing here is read for
// an element outside the output).
struct EpiOperands {
  int64_t zero_colsum;  // a_zero[m] * w_colsum[n], 0 when symmetric
  float scale;          // a_scale[m] * w_scale[n], rounded once
  float bias;           // 0 when there is none (then not added)
};

__device__ __forceinline__ EpiOperands epilogue_operands(const Epilogue& e, int m, int n) {
  EpiOperands o;
  o.zero_colsum = e.a_zero != nullptr ? static_cast<int64_t>(__ldg(e.a_zero + m * e.a_zero_step)) *
                                            static_cast<int64_t>(__ldg(e.w_colsum + n))
                                      : 0;
  o.scale = __fmul_rn(__ldg(e.a_scale + m * e.a_scale_step), __ldg(e.w_scale + n * e.w_scale_step));
  o.bias = e.bias_kind != kBiasNone ? bias_value(e, n) : 0.0f;
  return o;
}

__device__ __forceinline__ float epilogue_apply(const Epilogue& e, const EpiOperands& o, int32_t acc) {
  const int64_t c = static_cast<int64_t>(acc) - o.zero_colsum;
  float y = __fmul_rn(__ll2float_rn(c), o.scale);
  if (e.bias_kind != kBiasNone) y = __fadd_rn(y, o.bias);
  return y;
}

__device__ __forceinline__ float epilogue_value(const Epilogue& e, int32_t acc, int m, int n) {
  return epilogue_apply(e, epilogue_operands(e, m, n), acc);
}

template <typename OutT>
__device__ __forceinline__ OutT from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Two adjacent outputs into shared memory (8-byte or 4-byte aligned store).
template <typename OutT>
__device__ __forceinline__ void store_pair(OutT* p, float a, float b);
template <>
__device__ __forceinline__ void store_pair<float>(float* p, float a, float b) {
  *reinterpret_cast<float2*>(p) = make_float2(a, b);
}
template <>
__device__ __forceinline__ void store_pair<__half>(__half* p, float a, float b) {
  *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b);
}
template <>
__device__ __forceinline__ void store_pair<__nv_bfloat16>(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}

// --------------------------------------------------------------- PTX helpers --
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define TQ_INT8_HAS_SM80 1
#else
#define TQ_INT8_HAS_SM80 0
#endif

// d += a (16x32, row) * b (32x8, col), s8 x s8 -> s32, exact.
__device__ __forceinline__ void mma_s8_16832(int32_t (&d)[4], uint32_t a0, uint32_t a1,
                                             uint32_t a2, uint32_t a3, uint32_t b0,
                                             uint32_t b1) {
#if TQ_INT8_HAS_SM80
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();
#endif
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr) {
#if TQ_INT8_HAS_SM80
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
#else
  __trap();
#endif
}

// 16 bytes global -> shared, bypassing L1; src_bytes = 0 writes zeros and
// reads nothing (the source address must still be a valid pointer).
__device__ __forceinline__ void cp_async_16(uint32_t smem_addr, const void* gptr, int src_bytes) {
#if TQ_INT8_HAS_SM80
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gptr),
               "r"(src_bytes)
               : "memory");
#else
  __trap();
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if TQ_INT8_HAS_SM80
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if TQ_INT8_HAS_SM80
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Predicated 16-byte global loads (zeros when !pred; nothing is read then).
// The predicate lives inside the asm so the compiler can never speculate the
// load past its bounds check.
__device__ __forceinline__ uint4 ldg16_stream(const void* p, bool pred) {
  return ld_stream_v4_if(p, pred);  // common/ldg.h
}

__device__ __forceinline__ uint4 ldg16_cached(const void* p, bool pred) {
  return ld_cached_v4_if(p, pred);  // common/ldg.h
}

// 16 bytes row[k .. k+15] with every byte at or past `k_end` (and every byte
// of an invalid row) read as 0, for any alignment of row + k: the fallback
// loader. It reads the 4 or 5 aligned 32-bit words that cover the range and
// funnel-shifts them into place. A word is read only if it holds at least one
// byte below k_end; such a word lies inside the same allocation block as that
// byte (blocks are 512-byte aligned multiples of 512), so nothing faults, and
// the bytes outside the range are shifted or masked away.
__device__ __forceinline__ uint4 ld16_unaligned(const int8_t* row, int k, int k_end, bool row_ok) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(row + k);
  const int mis = static_cast<int>(addr & 3u);
  const uint32_t* base = reinterpret_cast<const uint32_t*>(addr - mis);
  uint32_t w[5];
#pragma unroll
  for (int j = 0; j < 5; ++j) {
    const int first = k - mis + 4 * j;  // row index of the word's first byte
    const bool ok = row_ok && max(first, k) < k_end && (j < 4 || mis != 0);
    w[j] = ok ? __ldg(base + j) : 0u;
  }
  const int valid = row_ok ? min(max(k_end - k, 0), 16) : 0;
  uint32_t o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t v = __funnelshift_r(w[i], w[i + 1], 8 * mis);
    const int vb = min(max(valid - 4 * i, 0), 4);
    o[i] = vb >= 4 ? v : (v & ((1u << (8 * vb)) - 1u));
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// -------------------------------------------------------------- split-K ----
// Every split of a tile adds its partial into the zeroed int32 workspace,
// then bumps the tile's counter; the one that sees count == splits - 1 is
// last and reads the complete sums back (ld.cg: from L2, never a stale L1
// line). Integer addition is exact, so the result does not depend on the
// order the splits arrive in. Returns true in the block that must finish.
__device__ __forceinline__ bool splitk_arrive_is_last(int* counter, int splits, int* s_flag) {
  __threadfence();  // this thread's atomics are visible device-wide ...
  __syncthreads();  // ... for every thread of the block, before the count
  if (threadIdx.x == 0) *s_flag = (atomicAdd(counter, 1) == splits - 1) ? 1 : 0;
  __syncthreads();
  const bool last = *s_flag != 0;
  if (last) __threadfence();  // acquire: order the reads below after the count
  return last;
}

// ===================================================================== mma ====
struct GemmParams {
  const int8_t* A;  // [M, K]
  const int8_t* W;  // [N, K]
  void* out;        // [M, N] of OutT
  int M, N, K;
  Epilogue epi;
  int tiles_m, tiles_n;
  int group_m;       // m-tiles per rasterization group
  int ktiles;        // ceil(K / 64)
  int kt_per_split;  // k-tiles per split
  int splits;        // 1: no split-K
  int32_t* ws;       // [M, N] zeroed, splits > 1 only
  int* counters;     // [tiles_m * tiles_n] zeroed, splits > 1 only
  bool out_vec_ok;   // out 16-byte aligned and N * sizeof(OutT) % 16 == 0
};

template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_>
struct MmaConfig {
  static constexpr int BM = BM_, BN = BN_, BK = 64;
  static constexpr int kWarpsM = WARPS_M_, kWarpsN = WARPS_N_;
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;
  static constexpr int MT = WM / 16, NT = WN / 8;
  static constexpr int kStages = STAGES_;
  static constexpr int kMinBlocks = MIN_BLOCKS_;
  static constexpr int kStageBytes = (BM + BN) * BK;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kAChunks = BM * 4 / kThreads;  // 16-byte chunks per thread per k-tile
  static constexpr int kBChunks = BN * 4 / kThreads;
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile: whole m16 tiles and n8 pairs");
  static_assert(BM * 4 % kThreads == 0 && BN * 4 % kThreads == 0, "loader: whole chunks");
  static_assert(kStages >= 2, "a ring needs two stages");
  // Epilogue staging (16 rows x (WN + 8) per warp, fp32 worst case) reuses the ring.
  static_assert(kWarps * 16 * (WN + 8) * 4 <= kSmemBytes, "staging must fit the ring");
};

// L: big prefill tiles, one CTA (8 warps of 64x64) per SM, 96 KiB ring.
using MmaL = MmaConfig<128, 256, 2, 4, 4, 1>;
// M: 128x128, 4 warps of 64x64, two CTAs per SM, 64 KiB ring each.
using MmaM = MmaConfig<128, 128, 2, 2, 4, 2>;
// S: 64x128 for small M (and split-K), 4 warps of 32x64, 3 CTAs per SM (48 KiB ring each).
using MmaS = MmaConfig<64, 128, 2, 2, 4, 3>;

__device__ __forceinline__ uint32_t swz(int row, int chunk) {
  return static_cast<uint32_t>(row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4));
}

// The unaligned fallback (kAligned = false) holds its loads in registers
// instead of cp.async; it gives up occupancy rather than spill.
template <class Cfg, bool kAligned, typename OutT>
__global__ void __launch_bounds__(Cfg::kThreads, kAligned ? Cfg::kMinBlocks : 1)
    int8_mma_gemm_kernel(const GemmParams p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, WM = Cfg::WM, WN = Cfg::WN;
  constexpr int MT = Cfg::MT, NT = Cfg::NT, STAGES = Cfg::kStages;
  constexpr int kThreads = Cfg::kThreads;
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ int s_last;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  const int g = lane >> 2, t = lane & 3;

  // ---- which tile: split slowest, then groups of group_m m-tiles (m fastest)
  const int tiles = p.tiles_m * p.tiles_n;
  const int split = blockIdx.x / tiles;
  const int tile = blockIdx.x - split * tiles;
  const int per_group = p.group_m * p.tiles_n;
  const int grp = tile / per_group;
  const int first_m = grp * p.group_m;
  const int gsize = min(p.tiles_m - first_m, p.group_m);
  const int in_grp = tile - grp * per_group;
  const int tm = first_m + in_grp % gsize;
  const int tn = in_grp / gsize;
  const int m0 = tm * BM, n0 = tn * BN;

  const int kt_begin = split * p.kt_per_split;
  const int kt_end = min(p.ktiles, kt_begin + p.kt_per_split);
  const int nkt = kt_end - kt_begin;
  const int k_limit = min(p.K, kt_end * 64);

  const uint32_t smem_base = smem_u32(smem);

  // ---- global -> shared loader (one k-tile into one stage)
  auto load_tile = [&](int stage, int kt) {
    const int k0 = (kt_begin + kt) * 64;
    const uint32_t sA = smem_base + stage * Cfg::kStageBytes;
    const uint32_t sB = sA + BM * 64;
#pragma unroll
    for (int i = 0; i < Cfg::kAChunks; ++i) {
      const int id = tid + i * kThreads;
      const int r = id >> 2, c = id & 3;
      const int gm = m0 + r, gk = k0 + c * 16;
      const bool ok = gm < p.M && gk < k_limit;
      const int8_t* row = p.A + static_cast<int64_t>(ok ? gm : 0) * p.K;
      if constexpr (kAligned) {
        cp_async_16(sA + swz(r, c), row + (ok ? gk : 0), ok ? 16 : 0);
      } else {
        const uint4 v = ld16_unaligned(row, gk, k_limit, ok);
        *reinterpret_cast<uint4*>(smem + (sA - smem_base) + swz(r, c)) = v;
      }
    }
#pragma unroll
    for (int i = 0; i < Cfg::kBChunks; ++i) {
      const int id = tid + i * kThreads;
      const int r = id >> 2, c = id & 3;
      const int gn = n0 + r, gk = k0 + c * 16;
      const bool ok = gn < p.N && gk < k_limit;
      const int8_t* row = p.W + static_cast<int64_t>(ok ? gn : 0) * p.K;
      if constexpr (kAligned) {
        cp_async_16(sB + swz(r, c), row + (ok ? gk : 0), ok ? 16 : 0);
      } else {
        const uint4 v = ld16_unaligned(row, gk, k_limit, ok);
        *reinterpret_cast<uint4*>(smem + (sB - smem_base) + swz(r, c)) = v;
      }
    }
  };

  // ---- per-lane ldmatrix offsets (the swizzle only depends on row % 16)
  // A (x4): lanes 0-15 rows 0-15 of chunk 2kk, lanes 16-31 the same rows of
  // chunk 2kk+1 -> regs {rows 0-7 k0-15, rows 8-15 k0-15, rows 0-7 k16-31,
  // rows 8-15 k16-31} = the m16n8k32 A fragment.
  // B (x4): lanes 0-7 rows 0-7 chunk 2kk, 8-15 rows 0-7 chunk 2kk+1,
  // 16-23 rows 8-15 chunk 2kk, 24-31 rows 8-15 chunk 2kk+1 -> the B fragments
  // of two n8 tiles.
  const int a_row = lane & 15, a_cb = lane >> 4;
  const int b_row = (lane & 7) + ((lane >> 4) << 3), b_cb = (lane >> 3) & 1;
  uint32_t a_off[2], b_off[2];
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    a_off[kk] = swz(a_row, kk * 2 + a_cb);
    b_off[kk] = swz(b_row, kk * 2 + b_cb);
  }

  int32_t acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0;

  // ---- pipeline: STAGES-1 tiles in flight ahead of the one being computed
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nkt) load_tile(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < nkt; ++kt) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt landed
    __syncthreads();              // everyone's did; everyone is done with tile kt-1
    {
      const int pf = kt + STAGES - 1;  // refill the stage tile kt-1 used
      if (pf < nkt) load_tile(pf % STAGES, pf);
      cp_async_commit();
    }
    const int stage = kt % STAGES;
    const uint32_t sA = smem_base + stage * Cfg::kStageBytes + wm * WM * 64;
    const uint32_t sB = smem_base + stage * Cfg::kStageBytes + BM * 64 + wn * WN * 64;
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
      uint32_t af[MT][4];
      uint32_t bf[NT][2];
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) ldmatrix_x4(af[mi], sA + mi * 16 * 64 + a_off[kk]);
#pragma unroll
      for (int nj = 0; nj < NT / 2; ++nj) {
        uint32_t r[4];
        ldmatrix_x4(r, sB + nj * 16 * 64 + b_off[kk]);
        bf[2 * nj][0] = r[0];
        bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2];
        bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < NT; ++ni)
          mma_s8_16832(acc[mi][ni], af[mi][0], af[mi][1], af[mi][2], af[mi][3], bf[ni][0],
                       bf[ni][1]);
    }
  }

  // ---- split-K: add the partial, the last split of the tile finishes it
  const int wm0 = m0 + wm * WM, wn0 = n0 + wn * WN;
  if (p.splits > 1) {
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int ni = 0; ni < NT; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int m = wm0 + mi * 16 + g + ((r >> 1) << 3);
          const int n = wn0 + ni * 8 + 2 * t + (r & 1);
          if (m < p.M && n < p.N) atomicAdd(p.ws + static_cast<int64_t>(m) * p.N + n, acc[mi][ni][r]);
        }
    if (!splitk_arrive_is_last(p.counters + tile, p.splits, &s_last)) return;
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int ni = 0; ni < NT; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int m = wm0 + mi * 16 + g + ((r >> 1) << 3);
          const int n = wn0 + ni * 8 + 2 * t + (r & 1);
          acc[mi][ni][r] =
              (m < p.M && n < p.N) ? __ldcg(p.ws + static_cast<int64_t>(m) * p.N + n) : 0;
        }
  }

  // ---- epilogue: the ring is free once every warp is past its last ldmatrix
  cp_async_wait<0>();
  __syncthreads();
  constexpr int kPitch = WN + 8;  // elements; conflict-free pair stores (see header)
  constexpr int kVec = 16 / static_cast<int>(sizeof(OutT));
  constexpr int kChunksPerRow = WN / kVec;
  OutT* stage_out = reinterpret_cast<OutT*>(smem) + warp * 16 * kPitch;
  OutT* out = static_cast<OutT*>(p.out);
#pragma unroll
  for (int mi = 0; mi < MT; ++mi) {  // unrolled: acc[mi] must stay in registers
    const int r0 = wm0 + mi * 16 + g, r1 = r0 + 8;
#pragma unroll
    for (int ni = 0; ni < NT; ++ni) {
      const int n = wn0 + ni * 8 + 2 * t;
      const bool c0 = n < p.N, c1 = n + 1 < p.N;
      float v[4];
      v[0] = (r0 < p.M && c0) ? epilogue_value(p.epi, acc[mi][ni][0], r0, n) : 0.0f;
      v[1] = (r0 < p.M && c1) ? epilogue_value(p.epi, acc[mi][ni][1], r0, n + 1) : 0.0f;
      v[2] = (r1 < p.M && c0) ? epilogue_value(p.epi, acc[mi][ni][2], r1, n) : 0.0f;
      v[3] = (r1 < p.M && c1) ? epilogue_value(p.epi, acc[mi][ni][3], r1, n + 1) : 0.0f;
      store_pair<OutT>(stage_out + g * kPitch + ni * 8 + 2 * t, v[0], v[1]);
      store_pair<OutT>(stage_out + (g + 8) * kPitch + ni * 8 + 2 * t, v[2], v[3]);
    }
    __syncwarp();
    static_assert(16 * kChunksPerRow % 32 == 0, "whole copy-out rounds per warp");
#pragma unroll
    for (int i = 0; i < 16 * kChunksPerRow / 32; ++i) {
      const int c = lane + 32 * i;
      const int r = c / kChunksPerRow, cc = c % kChunksPerRow;
      const int m = wm0 + mi * 16 + r;
      const int n = wn0 + cc * kVec;
      if (m < p.M && n < p.N) {
        const OutT* src = stage_out + r * kPitch + cc * kVec;
        OutT* dst = out + static_cast<int64_t>(m) * p.N + n;
        if (p.out_vec_ok && n + kVec <= p.N) {
          *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
        } else {
#pragma unroll
          for (int j = 0; j < kVec; ++j)
            if (n + j < p.N) dst[j] = src[j];
        }
      }
    }
    __syncwarp();
  }
}

// ==================================================================== gemv ====
struct GemvParams {
  const int8_t* X;  // [M, K] activation
  const int8_t* W;  // [N, K] weight
  void* out;        // [M, N] of OutT
  int M, N, K;
  Epilogue epi;
  int chunks;            // ceil(K / 64)
  int chunks_per_split;  // 64-byte chunks per split (blockIdx.z)
  int splits;
  int32_t* ws;    // [M, N] zeroed, splits > 1 only
  int* counters;  // [gridDim.x * gridDim.y] zeroed, splits > 1 only
  int epi_early;  // 1: tiles of <= 16 tokens, unsplit, load the epilogue operands before the K loop
  int w_early;    // 1: static_weight under PDL, the first round of weight loads before the wait
};

constexpr int kGemvWarps = 8;
constexpr int kGemvThreads = 32 * kGemvWarps;

template <int kMT8, int kLoads = 0>
struct GemvShape {
  // Chunks of loads each lane keeps in flight: 4 x (2 weight + kMT8 activation)
  // 16-byte loads for up to 16 tokens, 3 x 6 for 32 -- as many as fit 128
  // registers, the budget of 2 blocks (16 warps) per SM. A warp then has
  // kUnroll KiB of weight in flight: 48-96 KiB per SM with 2-3 blocks.
  // kLoads overrides that count where the host's rules (int8_matmul.cu, gemv_loads) take it:
  //  * 6 for the 8-token tile (112 registers on sm_90 with the epilogue operands, no spills):
  //    grids of at most 2 blocks per SM, whose few warps need more bytes in flight each, and
  //    long rows;
  //  * 2 for the 16-token tile on long rows: 2 x (2 + 2) loads fit under 85 registers (72),
  //    so 3 blocks (24 warps) share an SM instead of 2.
  static_assert(kLoads == 0 || (kLoads == 6 && kMT8 == 1) || (kLoads == 2 && kMT8 == 2),
                "load depths built: 6 for the 8-token tile, 2 for the 16-token tile");
  static constexpr int kUnroll = kLoads > 0 ? kLoads : kMT8 >= 4 ? 3 : 4;
  static constexpr int kTokens = 8 * kMT8;
};

// (kUnroll 3, 5 and 6 for the 9..16-token tile lost to 4 on every shape measured, H200
// run 2026-12-02b call 1: 28672x8192 M = 16 68.9 / 67.7 / 65.4 against 63.7 us; 3 needs 90
// registers, so 2 blocks per SM still. For the 8-token tile 6 against 4, run 2026-12-03g
// call 3, us, M = 1 / 4 / 8: 4096x14336 (256 blocks) 16.4-16.5 / 16.4-16.5 / 16.9-17.0
// against 19.3-19.4 / 19.4 / 20.0; 28672x8192 (1792) 58.5-58.7 / 58.5 / 58.9 against
// 58.6-59.0 / 58.6-58.9 / 59.3-59.4; 128256x4096 (8016) 128.6-128.7 / 128.3-129.2 /
// 128.1-128.4 against 124.4-124.5 / 124.2-124.6 / 123.2-123.5: hence kLoads = 6 by the rule
// of int8_matmul.cu, gemv_loads. 2 for the 16-token tile: 2026-12-04c, same file.)
template <int kMT8, bool kAligned, typename OutT, int kLoads = 0>
__global__ void __launch_bounds__(kGemvThreads, kAligned ? 2 : 1)
    int8_gemv_kernel(const GemvParams p) {
  constexpr int kUnroll = GemvShape<kMT8, kLoads>::kUnroll;
  constexpr int kTokens = GemvShape<kMT8, kLoads>::kTokens;
  __shared__ int32_t red[kGemvWarps][kTokens][16];
  __shared__ int s_last;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * 16;
  const int m0 = blockIdx.y * kTokens;
  const int c_begin = blockIdx.z * p.chunks_per_split;
  const int c_end = min(p.chunks, c_begin + p.chunks_per_split);

  pdl_launch_dependents();  // common/pdl.h: the next decode kernel may launch

  // Lane (g, t): weight rows n0+g and n0+g+8, activation rows m0+g+8j.
  const bool v_lo = n0 + g < p.N, v_hi = n0 + g + 8 < p.N;
  const int8_t* w_lo = p.W + static_cast<int64_t>(v_lo ? n0 + g : 0) * p.K;
  const int8_t* w_hi = p.W + static_cast<int64_t>(v_hi ? n0 + g + 8 : 0) * p.K;
  uint4 wl[kUnroll], wh[kUnroll];
  // Chunk u of the round at chunk c (K % 16 == 0 when aligned: a chunk is all in or all out).
  const auto load_weight = [&](int c, int u) {
    const int cc = c + u * kGemvWarps;
    const int k = cc * 64 + t * 16;
    const bool in = cc < c_end;
    if constexpr (kAligned) {
      const bool kin = in && k < p.K;
      wl[u] = ldg16_stream(w_lo + (kin ? k : 0), kin && v_lo);
      wh[u] = ldg16_stream(w_hi + (kin ? k : 0), kin && v_hi);
    } else {
      wl[u] = ld16_unaligned(w_lo, k, p.K, in && v_lo);
      wh[u] = ld16_unaligned(w_hi, k, p.K, in && v_hi);
    }
  };
  const int c_first = c_begin + warp;
  // static_weight (common/pdl.h): the weight was written long before, so its first round may be
  // in flight while the kernel before this one finishes.
  if (p.w_early) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) load_weight(c_first, u);
  }
  pdl_wait();  // x, the scales, the split workspace and the output after the predecessor

  // Thread -> (token, channel) of the epilogue with the channel fastest: 16 consecutive outputs
  // per row. Where every output has its own thread (<= 16 tokens) and the block writes the
  // output itself (no K split), that thread loads its epilogue operands (scales, zero point x
  // column sum, bias) now: issued behind nothing, they arrive during the K loop, and the block
  // does not end on a DRAM round trip for its per-channel scales.
  constexpr int kOut = kTokens * 16;
  const bool epi_pre = kOut <= kGemvThreads && p.splits == 1 && p.epi_early;
  EpiOperands pre{0, 0.0f, 0.0f};
  if (epi_pre && tid < kOut && m0 + (tid >> 4) < p.M && n0 + (tid & 15) < p.N)
    pre = epilogue_operands(p.epi, m0 + (tid >> 4), n0 + (tid & 15));

  const int8_t* xrow[kMT8];
  bool vx[kMT8];
#pragma unroll
  for (int j = 0; j < kMT8; ++j) {
    const int m = m0 + g + 8 * j;
    vx[j] = m < p.M;
    xrow[j] = p.X + static_cast<int64_t>(vx[j] ? m : 0) * p.K;
  }

  int32_t acc[kMT8][4];
#pragma unroll
  for (int j = 0; j < kMT8; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[j][r] = 0;

  // One round: chunks c + u * 8 warps, u < kUnroll; the weight loads (unless the early round
  // already holds them), x's, then the mma.
  const auto round = [&](int c, bool load_w) {
    uint4 xv[kUnroll][kMT8];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (load_w) load_weight(c, u);
      const int cc = c + u * kGemvWarps;
      const int k = cc * 64 + t * 16;
      const bool in = cc < c_end;
      if constexpr (kAligned) {
        const bool kin = in && k < p.K;
#pragma unroll
        for (int j = 0; j < kMT8; ++j) xv[u][j] = ldg16_cached(xrow[j] + (kin ? k : 0), kin && vx[j]);
      } else {
#pragma unroll
        for (int j = 0; j < kMT8; ++j) xv[u][j] = ld16_unaligned(xrow[j], k, p.K, in && vx[j]);
      }
    }
    // Physical bytes t*16 + [0,4) / [4,8) are logical k t*4 / 16 + t*4 of the
    // first mma, bytes [8,12) / [12,16) those of the second, for A and B alike.
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < kMT8; ++j) {
        mma_s8_16832(acc[j], wl[u].x, wh[u].x, wl[u].y, wh[u].y, xv[u][j].x, xv[u][j].y);
        mma_s8_16832(acc[j], wl[u].z, wh[u].z, wl[u].w, wh[u].w, xv[u][j].z, xv[u][j].w);
      }
  };
  int c = c_first;
  if (p.w_early && c < c_end) {  // peeled, so the loop below is the same code with or without it
    round(c, false);
    c += kGemvWarps * kUnroll;
  }
  for (; c < c_end; c += kGemvWarps * kUnroll) round(c, true);

  // C fragment: acc[j][r] is channel n0 + g + 8*(r >> 1), token m0 + 8j + 2t + (r & 1).
#pragma unroll
  for (int j = 0; j < kMT8; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp][8 * j + 2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[j][r];
  __syncthreads();

  OutT* out = static_cast<OutT*>(p.out);
  if (p.splits == 1) {
    for (int idx = tid; idx < kOut; idx += kGemvThreads) {
      const int ml = idx >> 4, nl = idx & 15;
      const int m = m0 + ml, n = n0 + nl;
      if (m < p.M && n < p.N) {
        int32_t s = 0;
#pragma unroll
        for (int w = 0; w < kGemvWarps; ++w) s += red[w][ml][nl];
        // epi_pre: idx == tid, the one output of this thread, whose operands are in `pre`
        const EpiOperands o = epi_pre ? pre : epilogue_operands(p.epi, m, n);
        out[static_cast<int64_t>(m) * p.N + n] = from_float<OutT>(epilogue_apply(p.epi, o, s));
      }
    }
    return;
  }
  for (int idx = tid; idx < kOut; idx += kGemvThreads) {
    const int ml = idx >> 4, nl = idx & 15;
    const int m = m0 + ml, n = n0 + nl;
    if (m < p.M && n < p.N) {
      int32_t s = 0;
#pragma unroll
      for (int w = 0; w < kGemvWarps; ++w) s += red[w][ml][nl];
      atomicAdd(p.ws + static_cast<int64_t>(m) * p.N + n, s);
    }
  }
  if (!splitk_arrive_is_last(p.counters + blockIdx.y * gridDim.x + blockIdx.x, p.splits, &s_last))
    return;
  for (int idx = tid; idx < kOut; idx += kGemvThreads) {
    const int ml = idx >> 4, nl = idx & 15;
    const int m = m0 + ml, n = n0 + nl;
    if (m < p.M && n < p.N) {
      const int64_t o = static_cast<int64_t>(m) * p.N + n;
      out[o] = from_float<OutT>(epilogue_value(p.epi, __ldcg(p.ws + o), m, n));
    }
  }
}

}  // namespace int8
}  // namespace torchquant
