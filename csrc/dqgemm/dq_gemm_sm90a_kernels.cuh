// Hopper (sm_90a) GEMM over an fp8_block weight (e4m3 codes + fp32 scales per block of K)
// with fp16 / bf16 activations, on warpgroup MMA with the weight converted in registers:
//   _fp8_block_gemm_sm90a   y[m, n] = sum_k x[m, k] * Wd[n, k] (+ bias[n]),
//                           Wd = T(float(w_q[n, k]) * w_scale[n, k / bs])   (T = x's dtype)
// i.e. exactly the weight dequantize_fp8_block(w_q, w_scale, bs, out_dtype=T) produces (one
// fp32 product, one round to nearest even), multiplied on the tensor cores with fp32
// accumulation, + bias in fp32, one rounding to T. This is the contract of the dequantize +
// matmul path it replaces (QuantLinear's prefill); it is NOT fp8_block_gemv's, whose products
// are exact (the scale applied to fp32 partial sums).
//
// Roles. The converted weight can only enter wgmma from registers as the A operand, so the
// weight is A and the activation B, as in the 2:4 kernel (sparse/sparse24_gemm_sm90a_kernels.cuh,
// whose producer, tile order and transposed epilogue this kernel shares): each CTA computes
// D[128 features, kBT tokens] and writes it transposed into y [M tokens, N features].
// Persistent grid, warpgroup 0 a TMA producer (setmaxnreg 40), warpgroups 1 and 2 consumers of
// 64 features each (setmaxnreg 232), kStages-deep ring with full / empty mbarriers, optional
// pairs of CTAs along the features multicasting the activation tile.
//
// One stage covers 64 of K:
//   A  128 rows x 64 B of e4m3 codes, TMA box {64 B, 128 rows}, 64-byte swizzle: byte c of row
//      r sits at r * 64 + 16 * ((c / 16) ^ ((r / 2) % 4)) + c % 16 (the stage is 1024-byte aligned);
//   B  kBT rows x 128 B of activations, TMA box {128 B, kBT / kCM rows}, 128-byte swizzle, the
//      K-major canonical layout; the j-th k16 step reads 32 bytes per row at start + 32 j.
// Consumers, per stage and k16 step j: thread (warp w, lane l = 4 g + t) of consumer warpgroup
// cw owns rows r0 = 64 cw + 16 w + g and r1 = r0 + 8, logical K {2t, 2t + 1} (registers 0 / 1
// for r0 / r1) and {2t + 8, 2t + 9} (registers 2 / 3): four 16-bit shared loads (row r0 and r1
// share the swizzle phase (g / 2) % 4, and the 16 words a warp reads lie in 16 distinct banks),
// then per pair cvt.rn.f16x2.e4m3x2 (exact), two fp32 products with the row's block scale, one
// packed round to T. The fragments of stage i are written while the wgmma group of stage i - 1
// runs (two register sets, the loop unrolled by two); a group is 4 wgmma.m64n{kBT}k16.
// The block scales (fp32, [N, ceil(K / bs)], bs % 16 == 0 so a k16 step never straddles two
// blocks) are read with __ldg one stage ahead into registers, once per block (bs % 64 == 0) or
// per k16 step; past K the block index is clamped, past N the row (those weights are TMA zero
// fill, their outputs never stored).
//
// Preconditions (the host side, dq_gemm_sm90a.cu, checks them): compute capability 9.0,
// K % 16 == 0 (16-byte TMA row strides), 16-byte aligned bases, M, N < 2^31 - 256, K < 2^26.
#pragma once

#include <type_traits>

#include "common/e4m3_hw.cuh"
#include "common/wgmma_operands.h"
#include "nvfp4/nvfp4_kernels.cuh"
#include "sparse/sparse24_gemm_sm90a_kernels.cuh"

namespace torchquant {
namespace sm90a {
namespace dqg {

// ------------------------------------------------------------------ configuration --
// AK_: weight bytes per row per stage, 64 (e4m3 codes) or 32 (packed e2m1 pairs).
template <int BT_, int STAGES_, int CM_, int AK_ = 64>
struct DqConfig {
  static constexpr int kBF = 128;  // features per tile: 2 consumer warpgroups x 64
  static constexpr int kBT = BT_;
  static constexpr int kKS = 64;   // logical K per stage
  static constexpr int kAK = AK_;  // weight bytes per row per stage
  static constexpr int kBK = 128;  // activation bytes per row per stage
  static constexpr int kStages = STAGES_;
  static constexpr int kCM = CM_;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerWarps = 8;
  static constexpr int kABytes = kBF * kAK;   // 8 KB (e4m3) or 4 KB (e2m1)
  static constexpr int kBBytes = kBT * kBK;   // 32 / 16 / 8 KB (kBT 256 / 128 / 64)
  static constexpr int kBBoxRows = kBT / kCM;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kAcc = kBT / 2;
  static constexpr int kBOffset = kStages * kABytes;
  static constexpr int kBarrierOffset = kBOffset + kStages * kBBytes;
  static constexpr int kSmemBytes = 1024 + kBarrierOffset + 128;
  static_assert(2 * kStages * 8 <= 128, "barrier area");
  static_assert(kSmemBytes <= 227 * 1024, "sm_90 opt-in shared memory per block");
  static_assert(kBT == 64 || kBT == 128 || kBT == 256, "tile width");
  static_assert(kCM == 1 || kCM == 2, "cluster size");
  static_assert(kBBoxRows <= 256 && kBBoxRows % 8 == 0, "TMA box rows");
  static_assert(kBOffset % 1024 == 0 && kBBytes % 1024 == 0, "stage buffers 1024-byte aligned");
  static_assert(kAK == 64 || kAK == 32, "weight bytes per stage row");
  static_assert(kStageBytes < (1 << 20), "mbarrier transaction count range");
};

struct DqArgs {
  int M, N, K;
  int num_f_tiles;   // ceil(N / 128)
  int num_t_tiles;   // ceil(M / kBT)
  int num_f_units;   // ceil(num_f_tiles / kCM)
  int num_units;     // num_f_units * num_t_tiles
  int num_kb;        // ceil(K / 64)
  int group_units;   // raster group height, in feature units
  void* out;         // [M, N] row-major, T
  const float* w_scale;  // fp8_block: [N, nb]
  int nb;                // scale blocks per row, ceil(K / bs)
  int spb;               // k16 steps per scale block, bs / 16
  // nvfp4: e4m3 block scales [N, K / 16] (one per k16 step and row; K % 64 == 0, so a stage's
  // four are one aligned 32-bit word), the fp32 global scale on the device, and whether rows
  // are 16-byte multiples (K % 256 == 0: four stages' scales per 16-byte load).
  const uint8_t* w_scale8;
  const float* global;
  int sc_row_bytes;
  int sc_wide4;
  const float* bias;     // fp32 [N] when has_bias, else any valid float
  int bias_step;
  int has_bias;
  // Split-K when the tile grid alone leaves SMs idle: a work unit is (split, tile unit), the
  // split index slowest; split s covers k-blocks [s * kb_per_split, min(num_kb, ...)) and
  // writes its fp32 sums (no bias, no rounding) to ws[s] [M, N]; dq_splitk_reduce_kernel adds
  // the splits in order, the bias, and rounds once. splits == 1: ws unused.
  int splits;
  int kb_per_split;
  float* ws;
  int vec_store;  // see OutView
  // The decode GEMVs launched with PDL (common/pdl.h, static_weight): the producer issues the
  // first unit's first ring stages of weight (and nvfp4's block scales) before its wait.
  int pdl_early = 0;
  // fp8_block (dq_gemm_sm90a_kernel, dq_gemv_sm90a_kernel<..., kTiled>): w_q and w_scale in the
  // tiled order (fp8/fp8_tiles.h; N % 16 == 0, K % 64 == 0): the weight through a 4-D map
  // (sm90a_host.h make_tmap_fp8_tiled), row n's scale of block b at 16 nb (n / 16) + 16 b + n % 16.
  int w_tiled = 0;
};

// fp8_block: where row n's block scales start in w_scale, and the step between its blocks
// (the row-major [N, nb] or the tiled [N / 16][nb][16], DqArgs::w_tiled).
__device__ __forceinline__ const float* fp8_scale_row(const DqArgs& p, int64_t n) {
  return p.w_tiled ? p.w_scale + (n >> 4) * 16 * p.nb + (n & 15) : p.w_scale + n * p.nb;
}

// Where an epilogue writes: y (T, + bias) or one split's fp32 slice of the workspace.
struct OutView {
  int M, N;
  void* out;
  int has_bias;
  int vec_store;  // 16-bit y, N % 8 == 0: 16-byte stores (sp24::sp_epilogue_vec)
};

// Work unit u -> (feature unit, token tile, k-block range); producer and consumers agree.
__device__ __forceinline__ void dq_unit_work(int u, const DqArgs& p, int& fu, int& tt, int& kb0,
                                             int& kb1, int& split) {
  const int tile_units = p.num_f_units * p.num_t_tiles;
  split = 0;
  if (p.splits > 1) {
    split = u / tile_units;
    u -= split * tile_units;
  }
  sp24::sp_unit_coords(u, p, fu, tt);
  kb0 = split * p.kb_per_split;
  kb1 = min(p.num_kb, kb0 + p.kb_per_split);
}

// ------------------------------------------------------------------ wgmma (A in registers) --
// D[64 x N] (+)= A[64 x 16] * B[N x 16]^T, TY (f16 or bf16) -> f32, N = 256 / 128 / 64; A from
// registers (the m16n8k16 A fragment of each warp's 16 rows), B K-major from shared memory
// (128-byte swizzle). One asm statement per shape, the element type spliced into its text.
#define TQ_WGMMA_RS_M64N256K16(TY) \
  asm volatile( \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " {" \
  TQ_WG_D128 "}, " \
  "{%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n" \
  : \
  TQ_WG_ACC128("f") \
  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate))
#define TQ_WGMMA_RS_M64N128K16(TY) \
  asm volatile( \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" \
  TQ_WG_D64 "}, " \
  "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n" \
  : \
  TQ_WG_ACC64("f") \
  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate))
#define TQ_WGMMA_RS_M64N64K16(TY) \
  asm volatile( \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" \
  TQ_WG_D32 "}, " \
  "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n" \
  : \
  TQ_WG_ACC32("f") \
  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate))

#define TQ_WGMMA_RS_M64N16K16(TY) \
  asm volatile( \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n16k16.f32." TY "." TY " {" \
  TQ_WG_D8 "}, " \
  "{%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n" \
  : \
  TQ_WG_ACC8_("f", 0) \
  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate))

template <class T, int kBT>
__device__ __forceinline__ void rs_wgmma(float (&d)[kBT / 2], const uint32_t (&a)[4],
                                         uint64_t desc_b, int accumulate) {
  static_assert(kBT == 256 || kBT == 128 || kBT == 64 || kBT == 16, "wgmma n");
  constexpr bool kF16 = std::is_same<T, __half>::value;
  if constexpr (kBT == 256) {
    if constexpr (kF16) TQ_WGMMA_RS_M64N256K16("f16"); else TQ_WGMMA_RS_M64N256K16("bf16");
  } else if constexpr (kBT == 128) {
    if constexpr (kF16) TQ_WGMMA_RS_M64N128K16("f16"); else TQ_WGMMA_RS_M64N128K16("bf16");
  } else if constexpr (kBT == 64) {
    if constexpr (kF16) TQ_WGMMA_RS_M64N64K16("f16"); else TQ_WGMMA_RS_M64N64K16("bf16");
  } else {
    if constexpr (kF16) TQ_WGMMA_RS_M64N16K16("f16"); else TQ_WGMMA_RS_M64N16K16("bf16");
  }
}
#undef TQ_WGMMA_RS_M64N16K16
#undef TQ_WGMMA_RS_M64N256K16
#undef TQ_WGMMA_RS_M64N128K16
#undef TQ_WGMMA_RS_M64N64K16

// The epilogue's element kind (float accumulators, + bias, one rounding): the 2:4 kernel's.
template <class T>
struct EpiEl;
template <>
struct EpiEl<__nv_bfloat16> {
  using El = sp24::ElBF16;
};
template <>
struct EpiEl<__half> {
  using El = sp24::ElF16;
};

// A consumer thread's part of a finished unit: with split-K its fp32 sums into the split's
// slice of the workspace (no bias, no rounding), otherwise y (+ bias, one rounding to T).
template <class T, int kBT>
__device__ __forceinline__ void dq_store(const float (&acc)[kBT / 2], const sp24::FeatParams& fp,
                                         const DqArgs& p, int split, int f0, int t_base, int lane) {
  using El = typename EpiEl<T>::El;
  if (p.splits > 1) {
    const OutView v{p.M, p.N, p.ws + static_cast<int64_t>(split) * p.M * p.N, 0, 0};
    if ((p.N & 1) == 0) {
      sp24::sp_epilogue<El, float, kBT, true>(acc, nullptr, fp, v, f0, t_base, lane);
    } else {
      sp24::sp_epilogue<El, float, kBT, false>(acc, nullptr, fp, v, f0, t_base, lane);
    }
  } else {
    const OutView v{p.M, p.N, p.out, p.has_bias, p.vec_store};
    if ((p.N & 1) == 0) {
      sp24::sp_epilogue<El, T, kBT, true>(acc, nullptr, fp, v, f0, t_base, lane);
    } else {
      sp24::sp_epilogue<El, T, kBT, false>(acc, nullptr, fp, v, f0, t_base, lane);
    }
  }
}

// Pins the A fragment registers (wgmma reads them asynchronously until wgmma.wait_group).
__device__ __forceinline__ void fence_frag(uint32_t (&a)[4][4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(a[j][r])::"memory");
}

__device__ __forceinline__ uint32_t lds_u16(uint32_t addr) {
  uint16_t v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr));
  return v;
}

// Two e4m3 codes (element 0 in the low byte) times the block scale s, rounded once to T:
// float(code) * s in fp32, then round to nearest even (dequantize_fp8_block's operations).
template <class T>
__device__ __forceinline__ uint32_t fp8x2_scaled(uint32_t two, float s) {
  const uint32_t h = e4m3x2_to_f16x2_hw(static_cast<uint16_t>(two));
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
  const float x = __fmul_rn(f.x, s), y = __fmul_rn(f.y, s);
  if constexpr (std::is_same<T, __half>::value) {
    const __half2 o = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&o);
  } else {
    const __nv_bfloat162 o = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&o);
  }
}

// ------------------------------------------------------------------ nvfp4 pieces --
__device__ __forceinline__ uint2 lds_u64(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr));
  return v;
}

__device__ __forceinline__ uint32_t prmt_b32(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}

// One byte b (bits 0..7, zero above) = two E2M1 codes, element 2i in the low nibble, into the
// 16-bit pair (low half = the low nibble) of T values e2m1 * 2^-14 (fp16) or e2m1 * 2^-126
// (bf16): the sign and the three magnitude bits placed where they make that number (the
// GEMV's decode, docs/nvfp4_gemv.md 2). One multiply puts two copies of b 12 bits apart, so
// the low and the high code need the same shift: mask the magnitudes of one shifted copy and
// the signs of a copy shifted further.
template <class T>
__device__ __forceinline__ uint32_t e2m1x2_decode(uint32_t b) {
  if constexpr (std::is_same<T, __half>::value) {
    const uint32_t t = b * 0x00200200u;  // b << 9 | b << 21
    return (t & 0x0E000E00u) | ((t << 3) & 0x80008000u);
  } else {
    const uint32_t t = b * 0x00040040u;  // b << 6 | b << 18
    return (t & 0x01C001C0u) | ((t << 6) & 0x80008000u);
  }
}

// Two e4m3 codes (bits 0..7: element 0, 8..15: element 1; the bits above are ignored) as the
// packed T pair, exactly: fp16 through cvt.rn.f16x2.e4m3x2 (every e4m3 value is an fp16 normal
// or zero); bf16 by re-seating sign and magnitude bits (the value times 2^-120, still exact) and
// one packed multiply by 2^120 (fp8_block_gemv's bf16 decode; its NaN codes decode to +-480
// there as here, fp16 gives NaN).
template <class T>
__device__ __forceinline__ uint32_t e4m3x2_exact(uint32_t s) {
  if constexpr (std::is_same<T, __half>::value) {
    return e4m3x2_to_f16x2_hw(static_cast<uint16_t>(s));
  } else {
    const uint32_t v = prmt_b32(s, 0u, 0x1404u);  // the two codes in the high bytes
    const uint32_t bits = ((v >> 4) & 0x07F007F0u) | (v & 0x80008000u);  // value * 2^-120
    __nv_bfloat162 r = *reinterpret_cast<const __nv_bfloat162*>(&bits);
    r = __hmul2(r, __bfloat162bfloat162(__ushort_as_bfloat16(0x7B80)));  // * 2^120
    return *reinterpret_cast<const uint32_t*>(&r);
  }
}

// e4m3x2_exact for bf16 by another route (the GEMV's default): the exact fp16 pair
// (cvt.rn.f16x2.e4m3x2), both halves widened to fp32 and packed to bf16 with one
// cvt.rn.bf16x2.f32 (exact: an e4m3 value has 4 significant bits and an exponent in bf16's
// normal range). Two conversions and two widening adds on the FMA pipe, against the re-seat's
// three integer ops and a packed multiply; 10-14 % faster in dq_gemv_sm90a_kernel. NaN codes
// give NaN here.
__device__ __forceinline__ uint32_t e4m3x2_bf16_via_f32(uint32_t s) {
  return f16x2_to_bf16x2_exact(e4m3x2_to_f16x2_hw(static_cast<uint16_t>(s)));
}

template <class T>
__device__ __forceinline__ uint32_t mul_x2(uint32_t a, uint32_t b) {
  if constexpr (std::is_same<T, __half>::value) {
    const __half2 r = __hmul2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
    return *reinterpret_cast<const uint32_t*>(&r);
  } else {
    const __nv_bfloat162 r = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&a),
                                     *reinterpret_cast<const __nv_bfloat162*>(&b));
    return *reinterpret_cast<const uint32_t*>(&r);
  }
}

// ------------------------------------------------------------------ consumer helpers --
// A consumer thread of the two 64-feature warpgroups (threads 128..383): warpgroup cw, its warp,
// lane = 4 g + t, and its rows r0 = 64 cw + 16 warp + g and r0 + 8 of the 128-feature tile (the
// m64 A fragment's); lane 0 (signal) arrives on the empty barriers for its warp.
struct ConsumerLane {
  int cw, warp, lane, g, t, row_in_tile;
  uint32_t signal;
  __device__ __forceinline__ explicit ConsumerLane(int wg)
      : cw(wg - 1),
        warp(static_cast<int>(threadIdx.x / 32) % 4),
        lane(static_cast<int>(threadIdx.x % 32)),
        g(lane >> 2),
        t(lane & 3),
        row_in_tile(cw * 64 + warp * 16 + g),
        signal(lane == 0 ? 1u : 0u) {}
};

// A unit's rows f0 and f0 + 8 clamped to N - 1 (rows past N are computed, never stored) and
// their bias (fp32, step 0 and any valid float when there is none).
struct FeatRows {
  int64_t fc0, fc1;
  sp24::FeatParams fp;
};

__device__ __forceinline__ FeatRows feat_rows(const DqArgs& p, int f0) {
  FeatRows r;
  r.fc0 = min(f0, p.N - 1);
  r.fc1 = min(f0 + 8, p.N - 1);
  r.fp = {};
  r.fp.b0 = __ldg(p.bias + r.fc0 * p.bias_step);
  r.fp.b1 = __ldg(p.bias + r.fc1 * p.bias_step);
  return r;
}

// ------------------------------------------------------------------ kernel --
// kFp4 = false: fp8_block (e4m3 codes, fp32 block scales; Cfg::kAK 64); true: nvfp4 (packed
// e2m1 pairs, e4m3 scales per 16, global scale; Cfg::kAK 32). kLayout: nvfp4's word layout
// (nvfp4/nvfp4_layout.h; each lane's byte of a word read by nvfp4::bf16_l1_adjacent (1, bf16) /
// nvfp4::f16_l2_adjacent (2, fp16) / nvfp4::bf16_l3_adjacent (3, bf16)).
template <class Cfg, class T, bool kFp4, int kLayout = nvfp4::kLayoutStd>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    dq_gemm_sm90a_kernel(const __grid_constant__ CUtensorMap tmap_w,
                         const __grid_constant__ CUtensorMap tmap_x, const DqArgs p) {
  static_assert(Cfg::kAK == (kFp4 ? 32 : 64), "weight bytes per stage row");
  static_assert(kLayout == nvfp4::kLayoutStd || (kFp4 && nvfp4::layout_fits<T, kLayout>()),
                "layout 1, 3 / 2: nvfp4 with bf16 / fp16 x");
#if defined(TQ_SM90A_ENABLED)
  constexpr int kStages = Cfg::kStages;
  constexpr int kCM = Cfg::kCM;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t sA = smem;                              // kStages x [128 x 64 B]
  const uint32_t sB = smem + Cfg::kBOffset;              // kStages x [kBT x 128 B]
  const uint32_t bar_full = smem + Cfg::kBarrierOffset;  // kStages x 8 B
  const uint32_t bar_empty = bar_full + kStages * 8;

  const int wg = threadIdx.x / 128;
  const uint32_t rank = kCM > 1 ? cluster_ctarank() : 0u;
  const int cluster = kCM > 1 ? static_cast<int>(cluster_id_x()) : static_cast<int>(blockIdx.x);
  const int nclusters = kCM > 1 ? static_cast<int>(num_clusters_x()) : static_cast<int>(gridDim.x);

  init_ring_barriers<kStages, Cfg::kConsumerWarps * kCM, kCM>(bar_full, bar_empty);

  if (wg == 0) {
    // ---------------------------------------------------------------- producer --
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmap_w);
      prefetch_tmap(&tmap_x);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cluster; u < p.num_units; u += nclusters) {
        int fu, tt, kb0, kb1, split;
        dq_unit_work(u, p, fu, tt, kb0, kb1, split);
        const int ft = fu * kCM + static_cast<int>(rank);
        // A wholly out-of-bounds box (a padding feature tile, an activation half past M) is
        // pointed at row 0: real bytes, the same transaction count, results never stored.
        const int f_row = ft < p.num_f_tiles ? ft * Cfg::kBF : 0;
        int t_row = tt * Cfg::kBT + static_cast<int>(rank) * Cfg::kBBoxRows;
        if (t_row >= p.M) t_row = 0;
        for (int kb = kb0; kb < kb1; ++kb) {
          mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
          const uint32_t full = bar_full + 8 * stage;
          mbar_arrive_expect_tx(full, Cfg::kStageBytes);
          if (!kFp4 && p.w_tiled)  // piece kb (kAK == 64) of the box's kBF / 16 tiles
            tma_load_4d(sA + stage * Cfg::kABytes, &tmap_w, 0, 0, kb, f_row / 16, full);
          else
            tma_load_2d(sA + stage * Cfg::kABytes, &tmap_w, kb * Cfg::kAK, f_row, full);
          const uint32_t b_dst = sB + stage * Cfg::kBBytes + rank * (Cfg::kBBoxRows * Cfg::kBK);
          tma_load_shared<kCM>(b_dst, &tmap_x, kb * Cfg::kBK, t_row, full);
          ring_advance<kStages>(stage, phase);
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers --
    setmaxnreg_inc<232>();
    const ConsumerLane cl(wg);
    const int lane = cl.lane, g = cl.g, t = cl.t, row_in_tile = cl.row_in_tile;  // r0; r1 = r0 + 8
    const uint32_t signal = cl.signal;
    // Byte offsets of this thread's two 16-bit pieces of step j in rows r0 / r1 of a stage:
    // r * 64 + 16 (j ^ swz) + 2t (+ 8); rows r0 and r1 = r0 + 8 share swz = (g / 2) % 4.
    // nvfp4 (32-byte rows, 32-byte swizzle: 16-byte half h of row r at 16 (h ^ ((r / 4) % 2))):
    // step j's two bytes per row are byte t of words 2j and 2j + 1, one 8-byte load per row
    // (byte offset 8j: half j / 2, offset 8 (j % 2)); swizzle phase (g / 4) % 2 for both rows.
    const uint32_t swz = kFp4 ? static_cast<uint32_t>((g >> 2) & 1) : static_cast<uint32_t>((g >> 1) & 3);
    const uint32_t off_r0 = kFp4 ? static_cast<uint32_t>(row_in_tile * 32)
                                 : static_cast<uint32_t>(row_in_tile * 64 + 2 * t);
    const uint32_t sel_t = 0x4440u | static_cast<uint32_t>(t);  // byte t, zeros above
    // layout 1 / 2 (bf16_l1_adjacent's / f16_l2_adjacent's per-lane constants)
    const uint32_t l1_rot = (t & 1) ? 13u : 0u, l1_sel = (t >> 1) ? 0x7632u : 0x5410u;
    const bool l1_odd = (t & 1) != 0;
    const uint32_t l3_rot = t == 1 ? 10u : t == 2 ? 13u : 0u;  // layout 3 (bf16_l3_adjacent)
    const bool l3_mul = t == 3;
    const uint32_t l2_sh = (t >> 1) ? 3u : 0u, l2_sel = (t & 1) ? 0x7632u : 0x5410u;
    const uint32_t l2_mask = (t >> 1) ? nvfp4::kL2MaskB : nvfp4::kL2MaskA;
    const uint32_t l2_mul = (t >> 1) ? nvfp4::kL2MulB : nvfp4::kL2MulA;
    float acc[Cfg::kAcc];
#pragma unroll
    for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = 0.f;

    auto release = [&](int s) { release_stage<kCM>(bar_empty + 8 * s, signal); };

    int stage = 0;
    uint32_t phase = 0;
    for (int u = cluster; u < p.num_units; u += nclusters) {
      int fu, tt, kb0, kb1, split;
      dq_unit_work(u, p, fu, tt, kb0, kb1, split);
      const int ft = fu * kCM + static_cast<int>(rank);
      const int t_base = tt * Cfg::kBT;
      const int f0 = ft * Cfg::kBF + row_in_tile;

      const FeatRows fr = feat_rows(p, f0);
      const sp24::FeatParams& fp = fr.fp;
      const int64_t fc0 = fr.fc0, fc1 = fr.fc1;
      const float* const srow0 = kFp4 ? nullptr : fp8_scale_row(p, fc0);
      const float* const srow1 = kFp4 ? nullptr : fp8_scale_row(p, fc1);
      const int sstep = p.w_tiled ? 16 : 1;  // between a row's block scales
      // nvfp4: the 4 scale bytes of a stage (one per k16 step) of rows r0 / r1, s4r0 / s4r1;
      // with 16-byte scale rows (sc_wide4) a 16-byte load covers 4 stages (kb0 % 4 == 0, the
      // host rounds kb_per_split up to a multiple of 4), the next group loaded 4 stages ahead.
      const uint8_t* const s8row0 = kFp4 ? p.w_scale8 + fc0 * p.sc_row_bytes : nullptr;
      const uint8_t* const s8row1 = kFp4 ? p.w_scale8 + fc1 * p.sc_row_bytes : nullptr;
      uint4 g4c0 = make_uint4(0, 0, 0, 0), g4c1 = g4c0, g4n0 = g4c0, g4n1 = g4c0;
      uint32_t s4n0 = 0, s4n1 = 0;
      if constexpr (kFp4) {
        if (p.sc_wide4) {
          const int ngrp = p.num_kb / 4;
          const int g0 = kb0 / 4, g1 = min(g0 + 1, ngrp - 1);
          g4c0 = __ldg(reinterpret_cast<const uint4*>(s8row0) + g0);
          g4c1 = __ldg(reinterpret_cast<const uint4*>(s8row1) + g0);
          g4n0 = __ldg(reinterpret_cast<const uint4*>(s8row0) + g1);
          g4n1 = __ldg(reinterpret_cast<const uint4*>(s8row1) + g1);
        } else {
          s4n0 = __ldg(reinterpret_cast<const uint32_t*>(s8row0) + kb0);
          s4n1 = __ldg(reinterpret_cast<const uint32_t*>(s8row1) + kb0);
        }
      }

      // Scales of the next stage to fetch: block of k16 step q = q / spb, walked incrementally.
      // Every __ldg here touches 8 rows' cache lines (one per g) in L1, the unit the stage's
      // TMA writes, wgmma operand reads and fragment loads already keep busy, so a block's
      // scale is loaded once: when spb % 4 == 0 (block_size a multiple of 64) a block spans
      // whole stages and its two values are loaded only at the stage where it starts;
      // otherwise (block_size 16, 32, 48, ...) once per k16 step.
      const bool wide = (p.spb & 3) == 0;
      int nblk = (4 * kb0) / p.spb, nrem = (4 * kb0) % p.spb;  // this split's first k16 step
      bool first = true;
      float sc[4][2];
      float sw0 = 0.f, sw1 = 0.f;
      auto fetch_scales = [&]() {
        if (wide) {
          if (nrem == 0 || first) {
            const int b = min(nblk, p.nb - 1);
            sw0 = __ldg(srow0 + b * sstep);
            sw1 = __ldg(srow1 + b * sstep);
          }
          first = false;
          nrem += 4;
          if (nrem == p.spb) {
            nrem = 0;
            ++nblk;
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            sc[j][0] = sw0;
            sc[j][1] = sw1;
          }
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int b = min(nblk, p.nb - 1);
            sc[j][0] = __ldg(srow0 + b * sstep);
            sc[j][1] = __ldg(srow1 + b * sstep);
            if (++nrem == p.spb) {
              nrem = 0;
              ++nblk;
            }
          }
        }
      };
      if constexpr (!kFp4) fetch_scales();

      // One stage: convert its A fragments into `a` (whose previous wgmma group has retired),
      // issue its 4 wgmma, keep one group in flight, release the stage before it.
      int prev = 0;
      auto do_stage = [&](int i, uint32_t (&a)[4][4]) {
        mbar_wait(bar_full + 8 * stage, phase);
        const uint32_t a_st = sA + stage * Cfg::kABytes + off_r0;
        if constexpr (kFp4) {
          // This stage's scale words, then the next stage's (or group's) loads.
          uint32_t s0w, s1w;
          if (p.sc_wide4) {
            if ((i & 3) == 0 && i > 0) {
              g4c0 = g4n0;
              g4c1 = g4n1;
              const int gn = min((kb0 + i) / 4 + 1, p.num_kb / 4 - 1);
              g4n0 = __ldg(reinterpret_cast<const uint4*>(s8row0) + gn);
              g4n1 = __ldg(reinterpret_cast<const uint4*>(s8row1) + gn);
            }
            s0w = g4c0.x;
            s1w = g4c1.x;
            g4c0 = make_uint4(g4c0.y, g4c0.z, g4c0.w, g4c0.x);
            g4c1 = make_uint4(g4c1.y, g4c1.z, g4c1.w, g4c1.x);
          } else {
            s0w = s4n0;
            s1w = s4n1;
            const int kn = min(kb0 + i + 1, p.num_kb - 1);
            s4n0 = __ldg(reinterpret_cast<const uint32_t*>(s8row0) + kn);
            s4n1 = __ldg(reinterpret_cast<const uint32_t*>(s8row1) + kn);
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint32_t base = a_st + 16u * ((static_cast<uint32_t>(j) >> 1) ^ swz) + 8u * (j & 1);
            const uint2 q0 = lds_u64(base), q1 = lds_u64(base + 8 * 32);
            // Scales of step j for rows r0, r1 -> packed factors {bs0, bs1} * 2^7 (fp16) or
            // * 2^119 (bf16), nvfp4_gemv's (A = e2m1 * bs * 2^-7 exactly), each broadcast to a pair.
            const uint32_t f = nvfp4::Ops<T>::scale_pair(prmt_b32(s0w, s1w, static_cast<uint32_t>(j | ((j + 4) << 4))));
            const uint32_t f0 = prmt_b32(f, f, 0x1010u), f1 = prmt_b32(f, f, 0x3232u);
            // This lane's codes 2t, 2t + 1 of a word as one 16-bit pair, for the weight's layout.
            auto pair_of = [&](uint32_t w) {
              if constexpr (kLayout == nvfp4::kLayoutBf16)
                return nvfp4::bf16_l1_adjacent(w, l1_rot, l1_odd, l1_sel);
              else if constexpr (kLayout == nvfp4::kLayoutBf16Adj)
                return nvfp4::bf16_l3_adjacent(w, l3_rot, l3_mul);
              else if constexpr (kLayout == nvfp4::kLayoutF16)
                return nvfp4::f16_l2_adjacent(w, l2_sh, l2_mask, l2_mul, l2_sel);
              else
                return e2m1x2_decode<T>(prmt_b32(w, 0u, sel_t));
            };
            a[j][0] = mul_x2<T>(pair_of(q0.x), f0);
            a[j][1] = mul_x2<T>(pair_of(q1.x), f1);
            a[j][2] = mul_x2<T>(pair_of(q0.y), f0);
            a[j][3] = mul_x2<T>(pair_of(q1.y), f1);
          }
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint32_t base = a_st + 16u * (static_cast<uint32_t>(j) ^ swz);
            const uint32_t lo0 = lds_u16(base), hi0 = lds_u16(base + 8);
            const uint32_t lo1 = lds_u16(base + 8 * 64), hi1 = lds_u16(base + 8 * 64 + 8);
            a[j][0] = fp8x2_scaled<T>(lo0, sc[j][0]);
            a[j][1] = fp8x2_scaled<T>(lo1, sc[j][1]);
            a[j][2] = fp8x2_scaled<T>(hi0, sc[j][0]);
            a[j][3] = fp8x2_scaled<T>(hi1, sc[j][1]);
          }
          fetch_scales();  // for stage i + 1 (clamped past the end: harmless reads)
        }
        __syncwarp();
        const uint32_t b0 = sB + stage * Cfg::kBBytes;
        sp24::fence_acc(acc);
        fence_frag(a);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          rs_wgmma<T, Cfg::kBT>(acc, a[j], make_smem_desc(b0 + 32 * j), (i != 0 || j != 0) ? 1 : 0);
        }
        wgmma_commit();
        sp24::fence_acc(acc);
        fence_frag(a);
        if (i > 0) {
          wgmma_wait<1>();
          sp24::fence_acc(acc);
          release(prev);
        }
        prev = stage;
        ring_advance<kStages>(stage, phase);
      };

      uint32_t fa[4][4], fb[4][4];
      const int nkb = kb1 - kb0;
      int i = 0;
      for (; i + 1 < nkb; i += 2) {
        do_stage(i, fa);
        do_stage(i + 1, fb);
      }
      if (i < nkb) do_stage(i, fa);
      wgmma_wait<0>();
      sp24::fence_acc(acc);
      release(prev);
      if constexpr (kFp4) {
        if (p.splits == 1) {
          // The weights carried 2^-7: y = acc * (2^7 * global), one rounding (the GEMV's).
          const float g7 = __fmul_rn(__ldg(p.global), 128.0f);
#pragma unroll
          for (int k = 0; k < Cfg::kAcc; ++k) acc[k] = __fmul_rn(acc[k], g7);
        }
      }
      dq_store<T, Cfg::kBT>(acc, fp, p, split, f0, t_base, lane);
      __syncwarp();
    }
  }

  if constexpr (kCM > 1) cluster_sync();
#else
  __trap();  // built for another target: the host refuses to launch on anything but sm_90
#endif
}

// ------------------------------------------------------------------ GEMV kernel --
// fp8_block_gemv's wgmma path (decode): dq_gemv_sm90a_kernel. Same roles as above (TMA
// producer warpgroup, two consumer warpgroups of 64 features, the weight the A operand from
// registers, 16 tokens the B operand), with fp8_block_gemv's contract instead of the
// dequantize path's: the codes enter wgmma as exact fp16 / bf16 values (e4m3x2_exact: no
// scale, no rounding, so every product is exact) and accumulate into a partial sum per scale
// block, which is flushed into the running sum as acc = fma(partial, scale, acc) with the
// row's block scale once the block's last wgmma has retired.
//
// Wide stages: 128 of K per stage, the codes as 128 rows x 128 B in a 128-byte swizzled TMA box
// (byte c of row r at r * 128 + 16 ((c / 16) ^ (r % 8)) + c % 16), the activations as two
// 16-row x 128-byte swizzled boxes (64 of K each). A weight row read in 64-byte pieces streams
// at ~75 % of the read ceiling, in 128-byte pieces at ~88 % (docs/fp8_gemv.md, the ring
// kernel; docs/sparse24_wgmma.md, the 2:4 decode tiles). A stage is consumed in two halves of
// 64 K (four k16 steps, one wgmma group each), each converted into one fragment register set,
// issued and waited for (why: at `half` below); the stage is released after its second half.
// Scale blocks are whole halves (block_size % 64 == 0); K % 128 == 0 (no stage reaches past
// K), checked on the host.
//
// kTiled: the tiled weight (fp8/fp8_tiles.h). TMA keeps a box's dimension order, so no map
// gives a 128-byte row from two 64-byte pieces 1 KB apart; a stage is instead two boxes of the
// 4-D map (sm90a_host.h make_tmap_fp8_tiled), pieces 2 kb and 2 kb + 1 of the feature tile's 8
// row tiles, each landing as 128 rows x 64 B with the 64-byte swizzle (byte c of row r of half
// h at 8192 h + r * 64 + 16 ((c / 16) ^ ((r / 2) % 4)) + c % 16). Half h of the stage is then
// its own 8 KB box; the A fragments come from the same bytes (the same products, sums and
// bits), and a warp's 16 words per load still lie in 16 distinct banks (rows 2i and 2i + 1
// half a bank row apart, the 4 row pairs in 4 chunk phases).
template <int STAGES_, int PER_SM_>
struct DqGemvConfig {
  static constexpr int kBF = 128;   // features per tile
  static constexpr int kBT = 16;    // tokens per tile (the wgmma N)
  static constexpr int kKS = 128;   // K per stage (= weight bytes per row per stage)
  static constexpr int kBBox = kBT * 128;  // one activation box: 16 rows x 64 of K (128 B)
  static constexpr int kStages = STAGES_;
  static constexpr int kPerSm = PER_SM_;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerWarps = 8;
  static constexpr int kProducerRegs = sp24::WgRegSplit<PER_SM_>::kProducer;
  static constexpr int kConsumerRegs = sp24::WgRegSplit<PER_SM_>::kConsumer;
  static constexpr int kABytes = kBF * kKS;   // 16 KB
  static constexpr int kBBytes = 2 * kBBox;   // 4 KB
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kAcc = kBT / 2;
  static constexpr int kBOffset = kStages * kABytes;
  static constexpr int kBarrierOffset = kBOffset + kStages * kBBytes;
  static constexpr int kBarrierBytes = (2 * kStages * 8 + 127) / 128 * 128;
  static constexpr int kSmemBytes = 1024 + kBarrierOffset + kBarrierBytes;
  static_assert(kSmemBytes <= 227 * 1024, "sm_90 opt-in shared memory per block");
  static_assert(kPerSm == 1 || (kPerSm == 2 && kSmemBytes + 1024 <= 114 * 1024),
                "two CTAs per SM: within half of the SM's 228 KB");
  static_assert(kBOffset % 1024 == 0 && kBBytes % 1024 == 0, "stage buffers 1024-byte aligned");
};

// Programmatic dependent launch of the two decode GEMVs below (common/pdl.h, PdlKernel::
// kHopperGemv; no-ops when launched without the attribute). Every CTA lets the next PDL kernel
// on the stream launch, then waits for its predecessor before anything reads global memory
// (x is the predecessor's output, and y or the split workspace may be memory it still reads).
// What overlaps the predecessor's tail is this grid's launch, its CTAs becoming resident and
// the barrier initialization above. With p.pdl_early (a static weight) the producer warpgroup
// (threads 0..127) waits later, after its setmaxnreg (which wants whole warps, none of them
// held at the wait): thread 0 in gemv_early_stages once the first stages' weight loads are out,
// the others (nvfp4: they load x) right after the setmaxnreg.
__device__ __forceinline__ void gemv_pdl_prologue(const DqArgs& p) {
  pdl_launch_dependents();
  if (!p.pdl_early || threadIdx.x >= 128) pdl_wait();
}

// Thread 0 with p.pdl_early: the weight part of the first min(kStages, stages of the unit)
// ring stages of this CTA's first unit (u = blockIdx.x), each slot's full barrier armed for the
// whole stage (expect_tx of the stage's TMA bytes, x included), then the PDL wait. The producer
// loop skips the arm and weight loads of those stages (gemv_stage_early) and issues only the
// rest; the first kStages slots are free, so their empty-barrier waits would pass at once.
// load_w(slot, kb, f_row, full) issues a stage's weight TMA.
template <int kStages, class LoadW>
__device__ __forceinline__ void gemv_early_stages(const DqArgs& p, uint32_t bar_full, int tx_bytes,
                                                  int bf, LoadW&& load_w) {
  if (!p.pdl_early) return;
  if (static_cast<int>(blockIdx.x) < p.num_units) {
    int fu, tt, kb0, kb1, split;
    dq_unit_work(blockIdx.x, p, fu, tt, kb0, kb1, split);
    const int pre = kb1 - kb0 < kStages ? kb1 - kb0 : kStages;
    for (int s = 0; s < pre; ++s) {
      const uint32_t full = bar_full + 8 * s;
      mbar_arrive_expect_tx(full, tx_bytes);
      load_w(s, kb0 + s, fu * bf, full);
    }
  }
  pdl_wait();
}

// Whether gemv_early_stages already armed stage kb of unit u and issued its weight (read from
// the parameter bank and the loop's own indices: no register held across the loop).
template <int kStages>
__device__ __forceinline__ bool gemv_stage_early(const DqArgs& p, int u, int kb, int kb0) {
  return p.pdl_early && u == static_cast<int>(blockIdx.x) && kb - kb0 < kStages;
}

// kViaF32 (bf16 only): e4m3x2_bf16_via_f32 instead of the re-seat (the default for bf16).
// kTiled: the tiled weight (see DqGemvConfig; the host passes its 4-D map and p.w_tiled).
template <class Cfg, class T, bool kViaF32 = false, bool kTiled = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kPerSm)
    dq_gemv_sm90a_kernel(const __grid_constant__ CUtensorMap tmap_w,
                         const __grid_constant__ CUtensorMap tmap_x, const DqArgs p) {
  static_assert(!kViaF32 || std::is_same<T, __nv_bfloat16>::value, "a bf16 variant");
#if defined(TQ_SM90A_ENABLED)
  constexpr int kStages = Cfg::kStages;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t sA = smem;                              // kStages x [128 x 128 B]
  const uint32_t sB = smem + Cfg::kBOffset;              // kStages x 2 x [16 x 128 B]
  const uint32_t bar_full = smem + Cfg::kBarrierOffset;  // kStages x 8 B
  const uint32_t bar_empty = bar_full + kStages * 8;
  const int wg = threadIdx.x / 128;

  init_ring_barriers<kStages, Cfg::kConsumerWarps, 1>(bar_full, bar_empty);
  gemv_pdl_prologue(p);

  if (wg == 0) {
    // ---------------------------------------------------------------- producer --
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmap_w);
      prefetch_tmap(&tmap_x);
      auto load_w = [&](int slot, int kb, int f_row, uint32_t full) {
        if constexpr (kTiled) {  // pieces 2 kb, 2 kb + 1 (64 B each) of row tiles f_row / 16 ..
          static_assert(Cfg::kKS == 128 && Cfg::kABytes == 2 * 8192, "two 64-byte pieces x 128 rows");
          tma_load_4d(sA + slot * Cfg::kABytes, &tmap_w, 0, 0, 2 * kb, f_row / 16, full);
          tma_load_4d(sA + slot * Cfg::kABytes + 8192, &tmap_w, 0, 0, 2 * kb + 1, f_row / 16, full);
        } else {
          tma_load_2d(sA + slot * Cfg::kABytes, &tmap_w, kb * Cfg::kKS, f_row, full);
        }
      };
      gemv_early_stages<kStages>(p, bar_full, Cfg::kStageBytes, Cfg::kBF, load_w);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = blockIdx.x; u < p.num_units; u += gridDim.x) {
        int fu, tt, kb0, kb1, split;
        dq_unit_work(u, p, fu, tt, kb0, kb1, split);
        const int f_row = fu * Cfg::kBF;   // < N: every feature tile holds a real row
        const int t_row = tt * Cfg::kBT;   // < M: rows past M are TMA zero fill
        for (int kb = kb0; kb < kb1; ++kb) {
          const uint32_t full = bar_full + 8 * stage;
          if (!gemv_stage_early<kStages>(p, u, kb, kb0)) {  // else armed, weight in flight
            mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
            mbar_arrive_expect_tx(full, Cfg::kStageBytes);
            load_w(stage, kb, f_row, full);
          }
          const uint32_t b_dst = sB + stage * Cfg::kBBytes;
          tma_load_2d(b_dst, &tmap_x, kb * 2 * Cfg::kKS, t_row, full);
          tma_load_2d(b_dst + Cfg::kBBox, &tmap_x, kb * 2 * Cfg::kKS + 128, t_row, full);
          ring_advance<kStages>(stage, phase);
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers --
    setmaxnreg_inc<Cfg::kConsumerRegs>();
    const ConsumerLane cl(wg);
    const int lane = cl.lane, g = cl.g, t = cl.t;
    const int row_in_tile = cl.row_in_tile;  // r0; r1 = r0 + 8 (same swizzle phase g)
    const uint32_t signal = cl.signal;
    // This thread's two 16-bit pieces of k16 step j (0..7) in row r0: bytes 2t, 2t + 1 and
    // 2t + 8, 2t + 9 of the step's 16, at r0 * 128 + 16 (j ^ g) + 2t (+ 8); row r1 at + 1024.
    // A warp's 16 words per load lie in 16 distinct banks (the 8 rows differ in j ^ g).
    // kTiled: step j of half h at 8192 h + r0 * 64 + 16 ((j % 4) ^ ((g / 2) % 4)) + 2t (+ 8);
    // row r1 (the same swizzle phase) at + 512.
    constexpr uint32_t kRowBytes = kTiled ? 64u : 128u;
    const uint32_t off_r0 = static_cast<uint32_t>(row_in_tile) * kRowBytes + 2u * static_cast<uint32_t>(t);
    const uint32_t swz = kTiled ? static_cast<uint32_t>((g >> 1) & 3) : static_cast<uint32_t>(g);
    const int sb = p.spb >> 2;  // 64-K halves per scale block
    auto release = [&](int s) { release_stage<1>(bar_empty + 8 * s, signal); };

    // The partial sums: written only by wgmma (each block's first group overwrites them) and
    // read by the flushes after wait<0>; set once, outside the unit loop, so no other write
    // reaches them while a group may be in flight (ptxas would otherwise wait for every group
    // at the end of each stage).
    float part[Cfg::kAcc];
#pragma unroll
    for (int c = 0; c < Cfg::kAcc; ++c) part[c] = 0.f;
    int stage = 0;
    uint32_t phase = 0;
    for (int u = blockIdx.x; u < p.num_units; u += gridDim.x) {
      int fu, tt, kb0, kb1, split;
      dq_unit_work(u, p, fu, tt, kb0, kb1, split);
      const int t_base = tt * Cfg::kBT;
      const int f0 = fu * Cfg::kBF + row_in_tile;

      const FeatRows fr = feat_rows(p, f0);
      const sp24::FeatParams& fp = fr.fp;
      const float* const srow0 = fp8_scale_row(p, fr.fc0);
      const float* const srow1 = fp8_scale_row(p, fr.fc1);
      const int sstep = p.w_tiled ? 16 : 1;  // between a row's block scales
      // The scale block being summed (rem: halves of it already issued) and its two scales.
      int rem = (2 * kb0) % sb;
      int blk = (2 * kb0) / sb;
      float cs0 = __ldg(srow0 + blk * sstep), cs1 = __ldg(srow1 + blk * sstep);
      float acc[Cfg::kAcc];
#pragma unroll
      for (int c = 0; c < Cfg::kAcc; ++c) acc[c] = 0.f;
      const int nh = 2 * (kb1 - kb0);

      // Half h (64 of K) of the current stage, q-th of the unit: convert, issue its group, wait
      // for it, and flush the partial sum when the half ends a scale block. Waiting for every
      // group costs the consumers ~100-200 cycles per half against the ~1000 cycles of DRAM
      // time a half's 8 KB is worth with two CTAs per SM; it keeps the flush (a non-wgmma
      // read of the accumulators) out of any group's flight, which ptxas otherwise enforces
      // by serializing every wgmma (C7514) or waiting at the end of each stage (C7517).
      uint32_t a[4][4];
      auto cvt = [](uint32_t two) {
        if constexpr (kViaF32) {
          return e4m3x2_bf16_via_f32(two);
        } else {
          return e4m3x2_exact<T>(two);
        }
      };
      auto half = [&](int q, int h) {
        const uint32_t a_st = sA + stage * Cfg::kABytes + off_r0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t base = kTiled ? a_st + 8192u * static_cast<uint32_t>(h) + 16u * (static_cast<uint32_t>(j) ^ swz)
                                       : a_st + 16u * (static_cast<uint32_t>(4 * h + j) ^ swz);
          a[j][0] = cvt(lds_u16(base));
          a[j][1] = cvt(lds_u16(base + 8 * kRowBytes));
          a[j][2] = cvt(lds_u16(base + 8));
          a[j][3] = cvt(lds_u16(base + 8 * kRowBytes + 8));
        }
        __syncwarp();
        const uint32_t b0 = sB + stage * Cfg::kBBytes + h * Cfg::kBBox;
        const bool blk_first = q == 0 || rem == 0;
        const bool blk_last = ++rem == sb || q + 1 == nh;
        sp24::fence_acc(part);
        fence_frag(a);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          rs_wgmma<T, Cfg::kBT>(part, a[j], make_smem_desc(b0 + 32 * j), (j != 0 || !blk_first) ? 1 : 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        sp24::fence_acc(part);
        fence_frag(a);
        if (blk_last) {
          // The block's partial sum is complete: acc += partial * scale (row r0: accumulators
          // 4c, 4c + 1; row r1: 4c + 2, 4c + 3), then the next block's scales.
#pragma unroll
          for (int c = 0; c < Cfg::kAcc; c += 4) {
            acc[c + 0] = fmaf(part[c + 0], cs0, acc[c + 0]);
            acc[c + 1] = fmaf(part[c + 1], cs0, acc[c + 1]);
            acc[c + 2] = fmaf(part[c + 2], cs1, acc[c + 2]);
            acc[c + 3] = fmaf(part[c + 3], cs1, acc[c + 3]);
          }
          rem = 0;
          ++blk;
          const int bn = min(blk, p.nb - 1);
          cs0 = __ldg(srow0 + bn * sstep);
          cs1 = __ldg(srow1 + bn * sstep);
        }
      };

      for (int s = 0; s < kb1 - kb0; ++s) {
        mbar_wait(bar_full + 8 * stage, phase);
        half(2 * s, 0);
        half(2 * s + 1, 1);
        release(stage);
        ring_advance<kStages>(stage, phase);
      }
      // The unit's last half ended a block: its sums are in acc.
      dq_store<T, Cfg::kBT>(acc, fp, p, split, f0, t_base, lane);
      __syncwarp();
    }
  }
#else
  __trap();  // built for another target: the host refuses to launch on anything but sm_90
#endif
}

// ------------------------------------------------------------------ nvfp4 GEMV kernel --
// nvfp4_gemv's wgmma path (decode, M = 1..16 per token tile): fp4_gemv_sm90a_kernel. The fp8
// GEMV's structure (a producer warpgroup, two consumer warpgroups of 64 features, the weight
// the A operand from registers, 16 tokens the B operand of m64n16k16) with nvfp4_gemv's
// contract and its mma kernel's decode (nvfp4::Ops: docs/nvfp4_gemv.md 2): each 32-bit word
// of 8 codes becomes four 16-bit pairs e2m1 * bs * 2^-7 (exact), so every product is exact
// and the whole K range accumulates in fp32 in the wgmma accumulators (no per-block flush:
// the block scale is inside A); the epilogue multiplies by 2^7 * global, adds the bias and
// rounds once.
//
// Stage (256 of K): the packed codes as one 128-row x 128-byte TMA box (128-byte swizzle:
// byte c of row r at r * 128 + 16 ((c / 16) ^ (r % 8)) + c % 16), the rows' 16 e4m3 block
// scales as a 128-row x 16-byte box (no swizzle), and x as four 16-row x 64-K boxes in the
// wgmma B layout (K-major, 128-byte swizzle). Thread (g, t) of a consumer warp reads bytes
// [32 t, 32 t + 32) of rows r0 and r1 = r0 + 8 (two 16-byte loads per row, conflict-free:
// the 8 rows of a warp sit in 8 distinct swizzle phases), i.e. physical codes
// [64 t, 64 t + 64): words i = 0..7, word i in scale block 4 t + i / 2 (byte i / 2 of the
// row's 32-bit scale word at r * 16 + 4 t). Decoded word i gives the pairs h0..h3; h0 / h1 are
// logical K {2t, 2t+1} / {2t+8, 2t+9} of k16 step 2i, h2 / h3 of step 2i + 1 (as in the mma
// kernel). So the logical K order inside a stage differs from the physical one, and x must
// be permuted to match (legal: K is a reduction axis); TMA cannot do that, so the producer
// warpgroup stages x itself: each thread loads 16-byte pieces of x (8 consecutive halves =
// one word's 8 codes), pairs them with nvfp4::x_pairs (the mma kernel's x pairing; for layout 3,
// whose decoded pairs are adjacent codes, x as it lies) and
// stores the four 4-byte pairs where the wgmma B layout wants them; then
// fence.proxy.async (generic-proxy stores read by wgmma's async proxy) and one arrival on
// the stage's full barrier (1 TMA arrival with its bytes + 128 producer arrivals). Rows of x
// past M are never staged: their B columns hold stale bytes that reach only D columns of
// tokens >= M, never stored. Preconditions (host): compute capability 9.0, K % 256 == 0
// (the scale rows' TMA stride is K / 16 bytes, a multiple of 16; no stage reaches past K).
template <int STAGES_, int PER_SM_>
struct Fp4GemvConfig {
  static constexpr int kBF = 128;          // features per tile
  static constexpr int kBT = 16;           // tokens per tile (the wgmma N)
  static constexpr int kKS = 256;          // K (codes) per stage
  static constexpr int kAK = 128;          // packed weight bytes per row per stage
  static constexpr int kSK = 16;           // scale bytes per row per stage
  static constexpr int kBBox = kBT * 128;  // one x box: 16 rows x 64 of K
  static constexpr int kStages = STAGES_;
  static constexpr int kPerSm = PER_SM_;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerWarps = 8;
  static constexpr int kProducerThreads = 128;
  static constexpr int kProducerRegs = sp24::WgRegSplit<PER_SM_>::kProducer;
  static constexpr int kConsumerRegs = sp24::WgRegSplit<PER_SM_>::kConsumer;
  static constexpr int kABytes = kBF * kAK;      // 16 KB
  static constexpr int kSBytes = kBF * kSK;      // 2 KB
  static constexpr int kBBytes = 4 * kBBox;      // 8 KB
  static constexpr int kTx = kABytes + kSBytes;  // the TMA's bytes per stage
  static constexpr int kAcc = kBT / 2;
  static constexpr int kSOffset = kStages * kABytes;
  static constexpr int kBOffset = kSOffset + kStages * kSBytes;
  static constexpr int kBarrierOffset = kBOffset + kStages * kBBytes;
  static constexpr int kBarrierBytes = (2 * kStages * 8 + 127) / 128 * 128;
  static constexpr int kSmemBytes = 1024 + kBarrierOffset + kBarrierBytes;
  static_assert(kSmemBytes <= 227 * 1024, "sm_90 opt-in shared memory per block");
  static_assert(kPerSm == 1 || (kPerSm == 2 && kSmemBytes + 1024 <= 114 * 1024),
                "two CTAs per SM: within half of the SM's 228 KB");
  static_assert(kBOffset % 1024 == 0 && kBBytes % 1024 == 0 && kBBox % 1024 == 0,
                "x boxes 1024-byte aligned (128-byte swizzle atoms)");
  static_assert(kTx < (1 << 20), "mbarrier transaction count range");
};

__device__ __forceinline__ uint4 lds_u128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

__device__ __forceinline__ uint32_t lds_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

__device__ __forceinline__ void sts_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

// Orders this thread's generic-proxy shared-memory stores before later async-proxy reads
// (wgmma operands) of the same bytes, once published through a barrier.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// kLayout: the weight's word layout (nvfp4/nvfp4_layout.h); layout 1 (bf16) / 2 (fp16) decodes
// each word with decode_e2m1_bf16_l1 / decode_e2m1_f16_l2 into the same four pairs.
template <class Cfg, class T, int kLayout = nvfp4::kLayoutStd>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kPerSm)
    fp4_gemv_sm90a_kernel(const __grid_constant__ CUtensorMap tmap_w,
                          const __grid_constant__ CUtensorMap tmap_s, const T* __restrict__ x,
                          const DqArgs p) {
#if defined(TQ_SM90A_ENABLED)
  using O = nvfp4::Ops<T>;
  static_assert(nvfp4::layout_fits<T, kLayout>(), "layout 1, 3 / 2 is a bf16 / fp16 decode order");
  constexpr int kStages = Cfg::kStages;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t sA = smem;                              // kStages x [128 x 128 B] codes
  const uint32_t sS = smem + Cfg::kSOffset;              // kStages x [128 x 16 B] scales
  const uint32_t sB = smem + Cfg::kBOffset;              // kStages x 4 x [16 x 128 B] x
  const uint32_t bar_full = smem + Cfg::kBarrierOffset;  // kStages x 8 B
  const uint32_t bar_empty = bar_full + kStages * 8;
  const int wg = threadIdx.x / 128;

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar_full + 8 * s, 1 + Cfg::kProducerThreads);
      mbar_init(bar_empty + 8 * s, Cfg::kConsumerWarps);
    }
    fence_barrier_init();
  }
  __syncthreads();
  gemv_pdl_prologue(p);

  if (wg == 0) {
    // ---------------------------------------------------------------- producer --
    setmaxnreg_dec<Cfg::kProducerRegs>();
    auto load_ws = [&](int slot, int kb, int f_row, uint32_t full) {
      tma_load_2d(sA + slot * Cfg::kABytes, &tmap_w, kb * Cfg::kAK, f_row, full);
      tma_load_2d(sS + slot * Cfg::kSBytes, &tmap_s, kb * Cfg::kSK, f_row, full);
    };
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmap_w);
      prefetch_tmap(&tmap_s);
      gemv_early_stages<kStages>(p, bar_full, Cfg::kTx, Cfg::kBF, load_ws);
    } else if (p.pdl_early) {
      pdl_wait();  // x below is the predecessor's output
    }
    // Thread (warp pw, lane pl) stages x row m = 4 pw + pl % 4 of the tile; per stage and j
    // = 0..3 the 8 halves of word i = 2 j + ih of weight-thread region tt (physical K
    // 64 tt + 8 i .. + 7). Its four pairs land in box j (k16 steps 4 j .. 4 j + 3), row m,
    // 16-byte unit (4 ih + pair) ^ (m % 8), 4-byte word tt: a warp's 32 stores of one pair
    // cover 8 units x 4 words, all 32 banks.
    const int pw = threadIdx.x >> 5, pl = threadIdx.x & 31;
    const int m = 4 * pw + (pl & 3);
    const int ih = (pl >> 2) & 1, tt = pl >> 3;
    uint32_t soff[4];
#pragma unroll
    for (int q = 0; q < 4; ++q)
      soff[q] = static_cast<uint32_t>(m * 128 + 16 * ((4 * ih + q) ^ (m & 7)) + 4 * tt);
    const int xoff = 64 * tt + 8 * ih;  // halves, + 16 j per piece
    int stage = 0;
    uint32_t phase = 0;
    for (int u = blockIdx.x; u < p.num_units; u += gridDim.x) {
      int fu, tile_t, kb0, kb1, split;
      dq_unit_work(u, p, fu, tile_t, kb0, kb1, split);
      const int f_row = fu * Cfg::kBF;  // < N: every feature tile holds a real row
      const int row = tile_t * Cfg::kBT + m;
      const bool live = row < p.M;
      const T* const xr = x + static_cast<int64_t>(live ? row : 0) * p.K + xoff;
      for (int kb = kb0; kb < kb1; ++kb) {
        // x's loads go out before the wait for the slot, so their latency overlaps it. (Loading
        // them a whole stage ahead instead, in 32 more producer registers, measured 2-5 %
        // slower: docs/nvfp4_gemv.md 20.)
        uint4 v[4];
        if (live) {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            v[j] = __ldg(reinterpret_cast<const uint4*>(xr + static_cast<int64_t>(kb) * Cfg::kKS + 16 * j));
        }
        mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
        const uint32_t full = bar_full + 8 * stage;
        if (threadIdx.x == 0) {
          if (!gemv_stage_early<kStages>(p, u, kb, kb0)) {  // else armed, weight and scales in flight
            mbar_arrive_expect_tx(full, Cfg::kTx);
            load_ws(stage, kb, f_row, full);
          }
        }
        if (live) {
          const uint32_t b = sB + stage * Cfg::kBBytes;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint4 pr = nvfp4::x_pairs<O, kLayout>(v[j]);
            const uint32_t bj = b + j * Cfg::kBBox;
            sts_u32(bj + soff[0], pr.x);
            sts_u32(bj + soff[1], pr.y);
            sts_u32(bj + soff[2], pr.z);
            sts_u32(bj + soff[3], pr.w);
          }
          fence_proxy_async_smem();
        }
        mbar_arrive_local(full, 1u);
        ring_advance<kStages>(stage, phase);
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers --
    setmaxnreg_inc<Cfg::kConsumerRegs>();
    const ConsumerLane cl(wg);  // rows r0 = cl.row_in_tile and r0 + 8 (same swizzle phase cl.g)
    const uint32_t offa0 = static_cast<uint32_t>(cl.row_in_tile * 128 + 16 * ((2 * cl.t) ^ cl.g));
    const uint32_t offa1 = static_cast<uint32_t>(cl.row_in_tile * 128 + 16 * ((2 * cl.t + 1) ^ cl.g));
    const uint32_t offs = static_cast<uint32_t>(cl.row_in_tile * 16 + 4 * cl.t);
    int stage = 0;
    uint32_t phase = 0;
    for (int u = blockIdx.x; u < p.num_units; u += gridDim.x) {
      int fu, tile_t, kb0, kb1, split;
      dq_unit_work(u, p, fu, tile_t, kb0, kb1, split);
      const int t_base = tile_t * Cfg::kBT;
      const int f0 = fu * Cfg::kBF + cl.row_in_tile;
      const sp24::FeatParams fp = feat_rows(p, f0).fp;
      // Read before the K loop: the epilogue's one global operand (not a round trip at the end).
      const float g7 = __fmul_rn(__ldg(p.global), 128.0f);
      float acc[Cfg::kAcc];
#pragma unroll
      for (int c = 0; c < Cfg::kAcc; ++c) acc[c] = 0.f;

      uint32_t fa[4][4], fb[4][4];
      int prev = 0;
      for (int s = 0; s < kb1 - kb0; ++s) {
        mbar_wait(bar_full + 8 * stage, phase);
        const uint32_t a_st = sA + stage * Cfg::kABytes;
        const uint32_t s_st = sS + stage * Cfg::kSBytes;
        const uint32_t sc0 = lds_u32(s_st + offs), sc1 = lds_u32(s_st + 128 + offs);
        // The stage's x descriptor; box q, k16 step j start 16 (q * kBBox + 32 j) bytes further,
        // an add to the start-address field (bits 0..13, address / 16) that cannot carry out of
        // it (shared memory ends below 2^18 bytes).
        const uint64_t d_st = make_smem_desc(sB + stage * Cfg::kBBytes);
        uint4 wl0, wl1;  // words 4 h .. 4 h + 3 of rows r0 / r1 (h = q / 2)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          uint32_t(&a)[4][4] = (q & 1) ? fb : fa;
          if ((q & 1) == 0) {
            const uint32_t off = (q == 0) ? offa0 : offa1;
            wl0 = lds_u128(a_st + off);
            wl1 = lds_u128(a_st + 1024 + off);
          }
          // Words 2q and 2q + 1 of both rows share scale block 4t + q: byte q of each row's
          // scale word -> the packed factors {bs0, bs1} * 2^7 (fp16) / * 2^119 (bf16).
          const uint32_t f = O::scale_pair(prmt_b32(sc0, sc1, static_cast<uint32_t>(q | ((q + 4) << 4))));
          const uint32_t fs0 = nvfp4::dup_lo(f), fs1 = nvfp4::dup_hi(f);
          // The group's words pass through a volatile asm placed after the previous group's
          // wait: otherwise the compiler may hoist this decode (register-only arithmetic on
          // words loaded at the top of the stage) above that wait, writing registers of a
          // group still in flight, and ptxas then serializes every wgmma (C7513).
          uint32_t wq0[2] = {(q & 1) ? wl0.z : wl0.x, (q & 1) ? wl0.w : wl0.y};
          uint32_t wq1[2] = {(q & 1) ? wl1.z : wl1.x, (q & 1) ? wl1.w : wl1.y};
          asm volatile("" : "+r"(wq0[0]), "+r"(wq0[1]), "+r"(wq1[0]), "+r"(wq1[1]));
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            uint32_t h0[4], h1[4];
            nvfp4::decode_word<O, kLayout>(wq0[e], h0);
            nvfp4::decode_word<O, kLayout>(wq1[e], h1);
            a[2 * e][0] = O::mul(h0[0], fs0);
            a[2 * e][1] = O::mul(h1[0], fs1);
            a[2 * e][2] = O::mul(h0[1], fs0);
            a[2 * e][3] = O::mul(h1[1], fs1);
            a[2 * e + 1][0] = O::mul(h0[2], fs0);
            a[2 * e + 1][1] = O::mul(h1[2], fs1);
            a[2 * e + 1][2] = O::mul(h0[3], fs0);
            a[2 * e + 1][3] = O::mul(h1[3], fs1);
          }
          __syncwarp();
          sp24::fence_acc(acc);
          fence_frag(a);
          wgmma_fence();
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            rs_wgmma<T, Cfg::kBT>(acc, a[j], d_st + static_cast<uint64_t>((q * Cfg::kBBox + 32 * j) >> 4),
                                  (s != 0 || q != 0 || j != 0) ? 1 : 0);
          }
          wgmma_commit();
          sp24::fence_acc(acc);
          fence_frag(a);
          // One group in flight: the previous one (the other register set) has retired (a
          // no-op for a unit's first group).
          wgmma_wait<1>();
          sp24::fence_acc(acc);
          // The previous stage's last group has retired: release it (a predicated arrive,
          // not a branch: a group still in flight across a branch also makes ptxas
          // serialize the wgmmas).
          if (q == 0) release_stage<1>(bar_empty + 8 * prev, s != 0 ? cl.signal : 0u);
        }
        prev = stage;
        ring_advance<kStages>(stage, phase);
      }
      wgmma_wait<0>();
      sp24::fence_acc(acc);
      release_stage<1>(bar_empty + 8 * prev, cl.signal);
      if (p.splits == 1) {
        // The weights carried 2^-7: y = acc * (2^7 * global), one rounding (the GEMV's).
#pragma unroll
        for (int c = 0; c < Cfg::kAcc; ++c) acc[c] = __fmul_rn(acc[c], g7);
      }
      dq_store<T, Cfg::kBT>(acc, fp, p, split, f0, t_base, cl.lane);
      __syncwarp();
    }
  }
#else
  __trap();  // built for another target: the host refuses to launch on anything but sm_90
#endif
}

// y[m, n] = T((ws[0][m, n] + ws[1][m, n] + ... + ws[S-1][m, n]) + bias[n]): the splits
// added in split order (deterministic), then the bias, each an fp32 add, one rounding.
// nvfp4 (global != nullptr): the sum is multiplied by 2^7 * global first, as the unsplit
// epilogue does.
template <class T>
__global__ void __launch_bounds__(256) dq_splitk_reduce_kernel(const float* __restrict__ ws,
                                                             const float* __restrict__ bias,
                                                             const float* __restrict__ global,
                                                             T* __restrict__ y, int64_t MN,
                                                             int N, int splits, int has_bias) {
  const float g7 = global != nullptr ? __fmul_rn(__ldg(global), 128.0f) : 1.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < MN;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = ws[i];
    for (int s = 1; s < splits; ++s) v = __fadd_rn(v, ws[s * MN + i]);
    if (global != nullptr) v = __fmul_rn(v, g7);
    if (has_bias) v = __fadd_rn(v, __ldg(bias + i % N));
    if constexpr (std::is_same<T, __half>::value) {
      y[i] = __float2half_rn(v);
    } else {
      y[i] = __float2bfloat16_rn(v);
    }
  }
}

}  // namespace dqg
}  // namespace sm90a
}  // namespace torchquant
