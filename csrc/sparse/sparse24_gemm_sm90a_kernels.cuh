// Hopper (sm_90a) GEMM over a 2:4 weight in compress24's form, on sparse warpgroup MMA
// (wgmma.mma_async.sp), for the two torchquant ops
//   _sparse24_int8_gemm_sm90a   W8A8, int8_matmul's epilogue (bit-identical to the CPU op:
//                               exact int32 accumulation, the same fp32 operations in order)
//   _sparse24_gemm_sm90a        fp16 / bf16 activations and weight, fp32 accumulation,
//                               + bias in fp32, one rounding to the activation's dtype
// y[m, n] = sum_k x[m, k] * W[n, k], W = decompress24(values, meta), never decompressed.
//
// Roles. The sparse operand of wgmma.sp is A, so the weight is A and the activation is B:
// each CTA computes D[feature, token] = W[128 features, :] . X[kBT tokens, :]^T and the
// epilogue writes it transposed into y [M tokens, N features]. Everything else follows the
// dense kernel (int8/int8_gemm_sm90a_kernels.cuh, whose PTX wrappers this file reuses):
// persistent grid, warpgroup 0 a TMA producer (setmaxnreg 40), warpgroups 1 and 2 consumers
// of 64 features each (setmaxnreg 232), a ring of kStages stages with full / empty mbarriers,
// optional pairs of CTAs along the features that multicast the shared activation tile.
//
// One stage covers kAK = 64 stored bytes of every weight row:
//   int8    64 kept values = 128 logical K;  activation 128 B = 128 K;  2 x wgmma ...k64.s8
//   16-bit  32 kept values =  64 logical K;  activation 128 B =  64 K;  2 x wgmma ...k32.{f16,bf16}
// so both element kinds move the same bytes per stage:
//   A    128 rows x 64 B   values, TMA box {64 B, 128 rows}, 64-byte swizzle (K-major canonical
//        SW64 layout: rows 64 B apart, 8-row groups 512 B apart = descriptor SBO); the j-th wgmma
//        of the stage reads 32 stored bytes per row at start + 32 j;
//   meta 128 rows x 16 B   compress24's uint8 [N, K/8] rows as they are, TMA box {16 B, 128 rows},
//        no swizzle, starting at the 16-byte boundary at or below kb * (logical K per stage / 8)
//        (a box start off a 16-byte boundary faulted). The 16-bit stage's 8 bytes are the first
//        (even kb) or second (odd kb) half of the box: each 16 bytes are read twice;
//   B    kBT rows x 128 B  activations, TMA box {128 B, kBT / kCM rows}, 128-byte swizzle, as the
//        dense kernel's operands; the j-th wgmma reads 64 bytes per row at start + 64 j.
// The decode tiles (16 / 32 / 64 tokens) use wide stages instead: kAK = 128 stored bytes per row
// (int8 256 logical K, 16-bit 128), four wgmma per stage:
//   A    128 rows x 128 B, TMA box {128 B, 128 rows}, 128-byte swizzle (the dense kernel's
//        descriptor); wgmma j reads 32 stored bytes per row at start + 32 j;
//   meta 128 rows x the kind's bytes per stage (int8 32, 16-bit 16), TMA box of that width,
//        rows packed at that stride (each meta byte is loaded once);
//   B    two 128-byte swizzled boxes of kBT rows x 128 B (or round_up(M, 8) rows when the grid
//        has one token tile: SpArgs::stage_tx), kBT x 128 B apart; wgmma j reads 64 bytes per
//        row of box j / 2 at + 64 (j % 2).
// The 64-byte rows of the prefill stages stream at ~75 % of the read ceiling in decode, the
// 128-byte rows at ~87 % (docs/sparse24_wgmma.md).
// Two more decode variants of the 16-token tile: two CTAs per SM (PER_SM_ = 2: 4 stages, 80
// registers at launch, consumers at 96), and the K range of a unit split over a cluster
// (KSPLIT_: one unit per cluster, rank 0 adds the other ranks' partial sums from their shared
// memory; see SpConfig and the end of the consumer loop).
//
// Metadata registers (one 32-bit register per thread and wgmma; the thread-to-metadata maps
// are those CUTLASS's sm_90 sparse GMMA traits state, ELayout_64x64 and ELayout_64x32):
//   int8 (m64nNk64): thread (warp w, lane l) of a consumer warpgroup supplies the 32 logical K
//     [32 h, 32 h + 32) of the wgmma's K range of row 16 w + l / 4 + 8 (l & 1), h = (l >> 1) & 1:
//     8 nibbles = 4 consecutive bytes of that meta row (nibble i = group i, low nibble first,
//     compress24's order), i.e. one 32-bit word of the stage's 16-byte meta row: word 2 j + h.
//   16-bit (m64nNk32, sparsity selector 0): rows 16 w + l / 4 (low half) and + 8 (high half),
//     logical K [16 (l & 1), + 16) of the wgmma: the 16-bit half (l & 1) of word j of each row.
//   A sparse wgmma reads its metadata register while it runs: the k-loop double-buffers the
//   registers by stage parity and keeps each set unchanged until the wait that retires its
//   group (fence_regs).
//   Zero-filled rows (features past N; a padding tile) would give nibble 0b0000, which the ISA
//   calls undefined; every zero nibble is turned into 0b0100 (positions 0 and 1) first. Their
//   values are zero and their outputs are never stored. compress24 never writes a zero nibble
//   (its positions satisfy p0 < p1), so real metadata passes through unchanged.
//
// Epilogue: thread (w, l) holds D rows (features) r = 16 w + l / 4 and r + 8 and columns
// (tokens) 8 j + 2 (l % 4) + {0, 1}. Neighbouring features live in lanes l and l ^ 4, so one
// shuffle per row and j gives each thread two adjacent features of one token: the even-row
// thread keeps token 2 (l % 4), the odd-row one token 2 (l % 4) + 1, and each stores one pair
// (8 tokens x 16 contiguous bytes per bf16 store instruction). Per-feature operands (w_scale,
// colsum, bias) are loaded into registers and per-token ones (a_scale, a_zero) staged in a
// double-buffered shared block, both at the start of each tile.
//
// Preconditions (checked by the host side, sparse24_gemm_sm90a.cu): compute capability 9.0,
// K % 128 == 0 (16-byte TMA row strides of the meta), 16-byte aligned bases, M, N < 2^31 - 256.
#pragma once

#include "common/warp_ring.cuh"  // ring::lds128
#include "common/wgmma_operands.h"
#include "int8/int8_gemm_sm90a_kernels.cuh"

namespace torchquant {
namespace sm90a {
namespace sp24 {

// ------------------------------------------------------------------ configuration --
// The register split of a 384-thread CTA of one producer and two consumer warpgroups, kPerSm
// CTAs per SM (1, or 2 for the decode tiles): the producer drops to 40 registers, the consumers
// rise to 232 / 96. A CTA is given the launch bound's maximum per thread at launch (ptxas
// allocates it for a kernel with setmaxnreg: 168 / 80); setmaxnreg.inc only redistributes that
// pool, so the producer's and the consumers' counts must fit in it, or the inc never returns.
// Shared by this kernel's SpConfig and the dequantizing GEMV's DqGemvConfig.
template <int kPerSm>
struct WgRegSplit {
  static constexpr int kProducer = 40;
  static constexpr int kConsumer = kPerSm == 1 ? 232 : 96;
  static constexpr int kLaunch = 65536 / (kPerSm * 384) / 8 * 8;
  static_assert(128 * kProducer + 256 * kConsumer <= 384 * kLaunch,
                "setmaxnreg redistributes the CTA's launch allocation");
};

// BT_: tokens per tile (the wgmma N: 256, 128, or 64 / 32 / 16 for decode and small batches);
// STAGES_: ring depth; CM_: CTAs per cluster along the features, which share (multicast) the
// activation tile.
// AK_: stored weight bytes per row per stage, 64 (the prefill tiles) or 128 (the decode tiles:
// "wide" stages, see below).
// PER_SM_: CTAs resident per SM (1, or 2 for the decode tiles: then the launch bound halves
// the register file per CTA and the consumers raise theirs to 96 instead of 232).
// KSPLIT_: a cluster of SpArgs::ks CTAs (2..8, chosen at launch) shares each tile unit, rank r
// streaming k-blocks [r num_kb / ks, (r + 1) num_kb / ks); rank 0 adds the other ranks' fp32 /
// int32 partial sums, read from their shared memory, in rank order, and alone runs the
// epilogue. One unit per cluster (the host launches num_units clusters): for small grids
// (choose_sp_config), which one CTA per tile would leave mostly idle.
template <int BT_, int STAGES_, int CM_, int AK_ = 64, int PER_SM_ = 1, bool KSPLIT_ = false>
struct SpConfig {
  static constexpr int kBF = 128;   // features per tile: 2 consumer warpgroups x 64
  static constexpr int kBT = BT_;
  static constexpr int kAK = AK_;   // stored weight bytes per row per stage
  static constexpr bool kWide = kAK == 128;
  static constexpr int kBK = 2 * kAK;  // activation bytes per row per stage (both kinds)
  static constexpr int kBHalves = kBK / 128;  // 128-byte swizzled activation boxes per stage
  // Meta bytes per row per stage buffer: the TMA box width of the 64-byte stages (16, of which
  // a 16-bit stage reads one half); the wide stages size it for int8 (32) and load exactly the
  // element kind's share (int8 32, 16-bit 16: kAK x El::kLogicalPerByte / 8).
  static constexpr int kMK = kWide ? 32 : 16;
  static constexpr int kStages = STAGES_;
  static constexpr int kCM = CM_;
  static constexpr int kThreads = 384;
  static constexpr int kPerSm = PER_SM_;
  static constexpr bool kKSplit = KSPLIT_;
  static constexpr int kProducerRegs = WgRegSplit<PER_SM_>::kProducer;
  static constexpr int kConsumerRegs = WgRegSplit<PER_SM_>::kConsumer;
  static constexpr int kConsumerWarps = 8;
  static constexpr int kABytes = kBF * kAK;          // 8 KB (16 KB wide)
  static constexpr int kMBytes = kBF * kMK;          // 2 KB (4 KB wide)
  static constexpr int kBBytes = kBT * kBK;          // kBT x 128 B (x 256 B wide)
  static constexpr int kBBoxRows = kBT / kCM;
  static constexpr int kStageBytes = kABytes + kMBytes + kBBytes;  // bytes landing per stage
  // Tiles of <= 64 tokens without a cluster load only round_up(M, 8) activation rows per stage
  // when the grid has one token tile (the host sizes the box and SpArgs::stage_tx); the rows past the box are
  // never written and reach only D columns of tokens >= M, which are never stored.
  static constexpr bool kCutBox = kBT <= 64 && kCM == 1;
  static_assert(kAK == 64 || (kAK == 128 && kCutBox), "wide stages: decode tiles only");
  static constexpr int kAcc = kBT / 2;               // accumulators per consumer thread
  // After the 1024-byte aligned base: A stages, meta stages, B stages (each stage buffer
  // 1024-byte aligned), 2 x kStages mbarriers (128-byte multiples reserved), two buffers of per-token
  // epilogue operands (a_scale, a_zero: 2 x kBT x 4 bytes each).
  static constexpr int kMetaOffset = kStages * kABytes;
  static constexpr int kBOffset = kMetaOffset + kStages * kMBytes;
  static constexpr int kBarrierOffset = kBOffset + kStages * kBBytes;
  static constexpr int kBarrierBytes = (2 * kStages * 8 + 127) / 128 * 128;
  static constexpr int kParamsOffset = kBarrierOffset + kBarrierBytes;
  static constexpr int kParamsBytes = 2 * 2 * kBT * 4;
  static constexpr int kSmemBytes = 1024 + kParamsOffset + kParamsBytes;
  static_assert(kSmemBytes <= 227 * 1024, "sm_90 opt-in shared memory per block");
  static_assert(kPerSm == 1 || (kPerSm == 2 && kCutBox && kSmemBytes + 1024 <= 114 * 1024),
                "two CTAs per SM: decode tiles within half of the SM's 228 KB");
  static_assert(kBT == 16 || kBT == 32 || kBT == 64 || kBT == 128 || kBT == 256, "tile width");
  // The partial sums of a K-split rank (kAcc 32-bit words per consumer thread) go where the
  // drained A stages were.
  static_assert(!kKSplit || (kCM == 1 && kPerSm == 1 && kWide && 256 * kAcc * 4 <= kStages * kABytes),
                "cluster K split: one-CTA decode tiles, partials within the A stages");
  static_assert(kCM == 1 || kCM == 2, "cluster size");
  static_assert(kBBoxRows <= 256 && kBBoxRows % 8 == 0, "TMA box rows");
  static_assert(kMetaOffset % 1024 == 0 && kBOffset % 1024 == 0 && kBBytes % 1024 == 0,
                "stage buffers stay 1024-byte aligned");
  static_assert(kStageBytes < (1 << 20), "mbarrier transaction count range");
};

// Everything the kernel needs besides the three tensor maps. M counts tokens (rows of x and
// y), N features (rows of the weight, columns of y), K the logical (dense) reduction length.
struct SpArgs {
  int M, N, K;
  int num_f_tiles;   // ceil(N / 128)
  int num_t_tiles;   // ceil(M / kBT)
  int num_f_units;   // ceil(num_f_tiles / kCM): a unit is kCM feature tiles x one token tile
  int num_units;     // num_f_units * num_t_tiles
  int num_kb;        // stages per tile: K / (logical K per stage)
  int group_units;   // raster group height, in feature units
  void* out;         // [M, N] row-major, OutT
  // Epilogue operands: every pointer valid (an absent one points at a present one with step
  // 0); the flags say whether to use them. The 16-bit op uses bias only.
  const float* a_scale;   // per token
  const int32_t* a_zero;  // per token, read only when has_zero
  const float* w_scale;   // per feature
  const int32_t* colsum;  // per feature, read only when has_zero
  const float* bias;      // per feature, fp32
  int a_scale_step;
  int a_zero_step;
  int w_scale_step;
  int colsum_step;
  int bias_step;
  int has_zero;
  int has_bias;
  int vec_store;  // 16-bit output, N % 8 == 0: 16-byte stores (sp_epilogue_vec)
  int stage_tx;   // bytes landing per stage (Cfg::kCutBox configurations; the others use
                  // Cfg::kStageBytes): A + meta + the activation boxes' rows (tma::token_box_rows)
  int ks;         // Cfg::kKSplit: CTAs per cluster sharing a unit's K range (2..8); else unused
};

// ------------------------------------------------------------------ sparse wgmma --
// D[64 x N] (+)= A[64 x K logical, 2:4 sparse: 64 x K/2 stored] * B[N x K]^T, N the tile's
// tokens (256 / 128 / 64 / 32 / 16): s8 x s8 -> s32 (K = 64) or f16 / bf16 -> f32 (K = 32, unit
// scales, no transposes). A and B are shared-memory descriptors, meta the thread's metadata
// register (sparsity selector 0); accumulate == 0 overwrites D. NAME's accumulator count is
// NACC = N / 2, and the A / B / meta / accumulate operands follow as %NACC .. %NACC + 3.
#define TQ_SP_WGMMA(NAME, SHAPE, ACC_T, C, NACC, DLIST, ACCLIST, IA, IB, IE, IP, TAIL)       \
  __device__ __forceinline__ void NAME(ACC_T (&d)[NACC], uint64_t desc_a, uint64_t desc_b,   \
                                       uint32_t meta, int accumulate) {                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" IP ", 0;\n"                            \
                 "wgmma.mma_async.sp.sync.aligned." SHAPE " {" DLIST "}, "                   \
                 "%" IA ", %" IB ", %" IE ", 0, p" TAIL ";\n}\n"                              \
                 : ACCLIST                                                                   \
                 : "l"(desc_a), "l"(desc_b), "r"(meta), "r"(accumulate));                    \
  }
#define TQ_SP_F16_TAIL ", 1, 1, 0, 0"
TQ_SP_WGMMA(wgmma_sp_m64n256k64_s8, "m64n256k64.s32.s8.s8", int, "r", 128, TQ_WG_D128,
            TQ_WG_ACC128("r"), "128", "129", "130", "131", "")
TQ_SP_WGMMA(wgmma_sp_m64n128k64_s8, "m64n128k64.s32.s8.s8", int, "r", 64, TQ_WG_D64,
            TQ_WG_ACC64("r"), "64", "65", "66", "67", "")
TQ_SP_WGMMA(wgmma_sp_m64n64k64_s8, "m64n64k64.s32.s8.s8", int, "r", 32, TQ_WG_D32,
            TQ_WG_ACC32("r"), "32", "33", "34", "35", "")
TQ_SP_WGMMA(wgmma_sp_m64n32k64_s8, "m64n32k64.s32.s8.s8", int, "r", 16, TQ_WG_D16,
            TQ_WG_ACC16("r"), "16", "17", "18", "19", "")
TQ_SP_WGMMA(wgmma_sp_m64n16k64_s8, "m64n16k64.s32.s8.s8", int, "r", 8, TQ_WG_D8,
            TQ_WG_ACC8_("r", 0), "8", "9", "10", "11", "")
TQ_SP_WGMMA(wgmma_sp_m64n256k32_f16, "m64n256k32.f32.f16.f16", float, "f", 128, TQ_WG_D128,
            TQ_WG_ACC128("f"), "128", "129", "130", "131", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n128k32_f16, "m64n128k32.f32.f16.f16", float, "f", 64, TQ_WG_D64,
            TQ_WG_ACC64("f"), "64", "65", "66", "67", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n64k32_f16, "m64n64k32.f32.f16.f16", float, "f", 32, TQ_WG_D32,
            TQ_WG_ACC32("f"), "32", "33", "34", "35", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n32k32_f16, "m64n32k32.f32.f16.f16", float, "f", 16, TQ_WG_D16,
            TQ_WG_ACC16("f"), "16", "17", "18", "19", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n16k32_f16, "m64n16k32.f32.f16.f16", float, "f", 8, TQ_WG_D8,
            TQ_WG_ACC8_("f", 0), "8", "9", "10", "11", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n256k32_bf16, "m64n256k32.f32.bf16.bf16", float, "f", 128, TQ_WG_D128,
            TQ_WG_ACC128("f"), "128", "129", "130", "131", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n128k32_bf16, "m64n128k32.f32.bf16.bf16", float, "f", 64, TQ_WG_D64,
            TQ_WG_ACC64("f"), "64", "65", "66", "67", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n64k32_bf16, "m64n64k32.f32.bf16.bf16", float, "f", 32, TQ_WG_D32,
            TQ_WG_ACC32("f"), "32", "33", "34", "35", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n32k32_bf16, "m64n32k32.f32.bf16.bf16", float, "f", 16, TQ_WG_D16,
            TQ_WG_ACC16("f"), "16", "17", "18", "19", TQ_SP_F16_TAIL)
TQ_SP_WGMMA(wgmma_sp_m64n16k32_bf16, "m64n16k32.f32.bf16.bf16", float, "f", 8, TQ_WG_D8,
            TQ_WG_ACC8_("f", 0), "8", "9", "10", "11", TQ_SP_F16_TAIL)
#undef TQ_SP_F16_TAIL
#undef TQ_SP_WGMMA

// Element kinds: the accumulator type, the logical K per stored weight byte, and the sparse
// wgmma for a tile of kBT tokens (the wrapper of that width: NAME's m64n<kBT>k<K> variant).
#define TQ_SP_ELEMENT(NAME, ACC, INT, PER_BYTE, KSHAPE, KIND)                             \
  struct NAME {                                                                          \
    using Acc = ACC;                                                                     \
    static constexpr bool kInt = INT;                                                    \
    static constexpr int kLogicalPerByte = PER_BYTE; /* logical K per stored weight byte */ \
    template <int kBT>                                                                   \
    static __device__ __forceinline__ void mma(Acc (&d)[kBT / 2], uint64_t a, uint64_t b, \
                                               uint32_t e, int acc) {                    \
      if constexpr (kBT == 256) {                                                        \
        wgmma_sp_m64n256##KSHAPE##_##KIND(d, a, b, e, acc);                              \
      } else if constexpr (kBT == 128) {                                                 \
        wgmma_sp_m64n128##KSHAPE##_##KIND(d, a, b, e, acc);                              \
      } else if constexpr (kBT == 64) {                                                  \
        wgmma_sp_m64n64##KSHAPE##_##KIND(d, a, b, e, acc);                               \
      } else if constexpr (kBT == 32) {                                                  \
        wgmma_sp_m64n32##KSHAPE##_##KIND(d, a, b, e, acc);                               \
      } else {                                                                           \
        wgmma_sp_m64n16##KSHAPE##_##KIND(d, a, b, e, acc);                               \
      }                                                                                  \
    }                                                                                    \
  };
TQ_SP_ELEMENT(ElS8, int, true, 2, k64, s8)
TQ_SP_ELEMENT(ElF16, float, false, 1, k32, f16)
TQ_SP_ELEMENT(ElBF16, float, false, 1, k32, bf16)
#undef TQ_SP_ELEMENT

// Pins float accumulators (the int version is fence_acc in the dense header).
template <int kN>
__device__ __forceinline__ void fence_acc(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int kN>
__device__ __forceinline__ void fence_acc(int (&d)[kN]) {
  ::torchquant::sm90a::fence_acc(d);
}

// Descriptor of a K-major operand stored as 64-byte swizzled rows (the weight values):
// start >> 4, LBO 1 (unused with a swizzle), SBO 512 B (the next 8-row group), swizzle mode 2
// (64-byte) in bits 62-63; every stage buffer is 1024-byte aligned, so base offset 0.
__device__ __forceinline__ uint64_t make_desc_sw64(uint32_t saddr) {
  return static_cast<uint64_t>((saddr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(512 >> 4) << 32) | (static_cast<uint64_t>(2) << 62);
}

// Every zero nibble (positions 0 and 0, undefined for the tensor cores; only zero-filled rows
// past N have them) becomes 0b0100 (positions 0 and 1). Other nibbles are unchanged.
__device__ __forceinline__ uint32_t fix_zero_nibbles(uint32_t e) {
  uint32_t nz = e | (e >> 1);
  nz |= nz >> 2;
  nz &= 0x11111111u;  // bit 4 i set iff nibble i != 0
  return e | (((~nz) & 0x11111111u) << 2);
}

// Pins metadata registers (see the k-loop): the compiler keeps them unchanged and live up to here.
__device__ __forceinline__ void fence_regs(uint32_t (&e)[4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(e[j])::"memory");
}

__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

// The two metadata registers of one stage for this thread (see the header comment).
template <class El>
__device__ __forceinline__ void stage_meta(uint32_t meta_stage, int row_in_tile, int lane,
                                           uint32_t& e0, uint32_t& e1) {
  if constexpr (El::kInt) {
    // Row 16 w + l / 4 + 8 (l & 1) of this warpgroup; word 2 j + h of its 16-byte meta row.
    const uint32_t base = meta_stage + 16u * static_cast<uint32_t>(row_in_tile + 8 * (lane & 1)) +
                          4u * static_cast<uint32_t>((lane >> 1) & 1);
    e0 = lds32(base);
    e1 = lds32(base + 8);
  } else {
    // Rows r (low half) and r + 8 (high half); word j, half (l & 1), of each row.
    const uint32_t r0 = meta_stage + 16u * static_cast<uint32_t>(row_in_tile);
    const uint32_t r1 = r0 + 16u * 8u;
    const uint32_t sel = (lane & 1) ? 0x7632u : 0x5410u;
    e0 = __byte_perm(lds32(r0), lds32(r1), sel);
    e1 = __byte_perm(lds32(r0 + 4), lds32(r1 + 4), sel);
  }
  e0 = fix_zero_nibbles(e0);
  e1 = fix_zero_nibbles(e1);
}

using ring::lds128;

// The four metadata registers of one wide stage (128 stored bytes per row: four wgmma) for
// this thread. The stage buffer holds exactly this element kind's meta bytes per row (int8
// 32, 16-bit 16), rows packed at that stride. The thread-to-metadata maps are those of
// stage_meta, with wgmma j in place of j = 0, 1.
template <class El>
__device__ __forceinline__ void stage_meta_wide(uint32_t meta_stage, int row_in_tile, int lane,
                                                uint32_t (&e)[4]) {
  if constexpr (El::kInt) {
    // Row 16 w + l / 4 + 8 (l & 1); wgmma j reads word 2 j + h, h = (l >> 1) & 1.
    const uint32_t row = meta_stage + 32u * static_cast<uint32_t>(row_in_tile + 8 * (lane & 1));
    const uint4 lo = lds128(row);
    const uint4 hi = lds128(row + 16);
    const bool h = ((lane >> 1) & 1) != 0;
    e[0] = h ? lo.y : lo.x;
    e[1] = h ? lo.w : lo.z;
    e[2] = h ? hi.y : hi.x;
    e[3] = h ? hi.w : hi.z;
  } else {
    // Rows r (low half) and r + 8 (high half); wgmma j reads word j, half (l & 1), of each.
    const uint32_t r0 = meta_stage + 16u * static_cast<uint32_t>(row_in_tile);
    const uint4 a = lds128(r0);
    const uint4 b = lds128(r0 + 16u * 8u);
    const uint32_t sel = (lane & 1) ? 0x7632u : 0x5410u;
    e[0] = __byte_perm(a.x, b.x, sel);
    e[1] = __byte_perm(a.y, b.y, sel);
    e[2] = __byte_perm(a.z, b.z, sel);
    e[3] = __byte_perm(a.w, b.w, sel);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) e[j] = fix_zero_nibbles(e[j]);
}

// Unit u -> (feature unit, token tile): groups of `group_units` feature units, the feature unit
// running fastest inside a group, so CTAs working at the same time share one activation tile
// and the group's weight rows stay in L2 while the group walks across the tokens.
// Any Args with group_units, num_t_tiles and num_f_units (SpArgs, and the dequantizing GEMM's).
template <class Args>
__device__ __forceinline__ void sp_unit_coords(int u, const Args& p, int& fu, int& tt) {
  const int per_group = p.group_units * p.num_t_tiles;
  const int g = u / per_group;
  const int first = g * p.group_units;
  const int rows = min(p.num_f_units - first, p.group_units);
  const int r = u - g * per_group;
  fu = first + r % rows;
  tt = r / rows;
}

// Per-feature epilogue operands of one consumer thread (its features f and f + 8).
struct FeatParams {
  float ws0, ws1;
  int cs0, cs1;
  float b0, b1;
};

// Per-token operands of one tile, staged in shared memory (clamped to M - 1 past the edge).
template <int kBT>
struct TokParams {
  float a_scale[kBT];
  int a_zero[kBT];
};

// int8_matmul's epilogue for one element, in the CPU op's order: c = acc - z * colsum in int64,
// s = a_scale * w_scale, y = float(c) * s, then + bias (only with a bias), each rounded once.
__device__ __forceinline__ float sp_dequant(int acc, int z, int cs, float as, float ws, float b,
                                            bool has_bias) {
  const long long c = static_cast<long long>(acc) - static_cast<long long>(z) * cs;
  float y = __fmul_rn(__ll2float_rn(c), __fmul_rn(as, ws));
  if (has_bias) y = __fadd_rn(y, b);
  return y;
}

// The four outputs one thread stores for column group j of its tile: features (fa, fa + 1) and
// (fa + 8, fa + 9), fa = f0 with its lowest bit cleared, for one token, t_base + 2 (lane % 4) +
// 8 j + (1 for odd feature rows); a_* / b_* are the first / second feature pair, lo / hi the
// even / odd feature. Every lane must call it (a warp shuffle regroups the pairs).
template <class El, int kBT>
__device__ __forceinline__ void sp_pair_values(const typename El::Acc (&acc)[kBT / 2],
                                               const TokParams<kBT>* tp, const FeatParams& fp,
                                               bool has_bias, int j, int lane, float& a_lo,
                                               float& a_hi, float& b_lo, float& b_hi) {
  const bool odd = ((lane >> 2) & 1) != 0;  // odd feature row: keeps the odd token of a pair
  const int l = 2 * (lane & 3) + 8 * j;      // token within the tile (even)
  float v00, v01, v10, v11;  // (feature f0 | f0 + 8) x (token l | l + 1)
  if constexpr (El::kInt) {
    const float2 as = *reinterpret_cast<const float2*>(&tp->a_scale[l]);
    const int2 az = *reinterpret_cast<const int2*>(&tp->a_zero[l]);
    v00 = sp_dequant(acc[4 * j + 0], az.x, fp.cs0, as.x, fp.ws0, fp.b0, has_bias);
    v01 = sp_dequant(acc[4 * j + 1], az.y, fp.cs0, as.y, fp.ws0, fp.b0, has_bias);
    v10 = sp_dequant(acc[4 * j + 2], az.x, fp.cs1, as.x, fp.ws1, fp.b1, has_bias);
    v11 = sp_dequant(acc[4 * j + 3], az.y, fp.cs1, as.y, fp.ws1, fp.b1, has_bias);
  } else {
    v00 = acc[4 * j + 0];
    v01 = acc[4 * j + 1];
    v10 = acc[4 * j + 2];
    v11 = acc[4 * j + 3];
    if (has_bias) {
      v00 = __fadd_rn(v00, fp.b0);
      v01 = __fadd_rn(v01, fp.b0);
      v10 = __fadd_rn(v10, fp.b1);
      v11 = __fadd_rn(v11, fp.b1);
    }
  }
  // Lane l ^ 4 holds the neighbouring feature (f0 ^ 1) for the same two tokens.
  const float ra = __shfl_xor_sync(0xffffffffu, odd ? v00 : v01, 4);
  const float rb = __shfl_xor_sync(0xffffffffu, odd ? v10 : v11, 4);
  a_lo = odd ? ra : v00;
  a_hi = odd ? v01 : ra;
  b_lo = odd ? rb : v10;
  b_hi = odd ? v11 : rb;
}

// sp_epilogue for 16-bit outputs when N % 8 == 0 (p.vec_store; same values and bits). There a
// warp's store instruction writes 8 features (16 bytes) of each of 8 tokens: half of each 32-byte
// sector, the other half following in the next instruction. Here the 8 words (a and b pair of
// two column groups, j = 2J and 2J + 1) of the 4 lanes that share a token (lane bits 3 and 4:
// feature pairs 0, 2, 4, 6 of the warp's 16 features) are transposed among them
// (lane_transpose4<8>): lane i then holds features 8 (i % 2) .. + 7 of the warp's 16 for the
// token of group 2J + i / 2 and stores them with one 16-byte store, whole sectors per row.
// N % 8 == 0 keeps each 8-feature group wholly inside or outside the row and 16-byte aligned.
template <class El, class OutT, int kBT, class Args>
__device__ __forceinline__ void sp_epilogue_vec(const typename El::Acc (&acc)[kBT / 2],
                                                const TokParams<kBT>* tp, const FeatParams& fp,
                                                const Args& p, int f0, int t_base, int lane) {
  static_assert(sizeof(OutT) == 2 && kBT % 16 == 0, "16-bit output, pairs of column groups");
  const bool has_bias = p.has_bias != 0;
  const int i = (lane >> 3) & 3;  // this lane's feature pair: 16 w + 2 i (and + 8)
  const int fblk = f0 - (lane >> 2) + 8 * (i & 1);  // first of the 8 features it stores
  const int tok0 = t_base + 2 * (lane & 3) + ((lane >> 2) & 1);
  OutT* const out = static_cast<OutT*>(p.out);
#pragma unroll
  for (int jp = 0; jp < kBT / 16; ++jp) {
    uint32_t x[4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float a_lo, a_hi, b_lo, b_hi;
      sp_pair_values<El, kBT>(acc, tp, fp, has_bias, 2 * jp + h, lane, a_lo, a_hi, b_lo, b_hi);
      x[2 * h] = pack_out(out, a_lo, a_hi);
      x[2 * h + 1] = pack_out(out, b_lo, b_hi);
    }
    lane_transpose4<8>(x, i);
    const int t = tok0 + 8 * (2 * jp + (i >> 1));
    if (t < p.M && fblk < p.N) {
      __stcs(reinterpret_cast<uint4*>(out + static_cast<int64_t>(t) * p.N + fblk),
             make_uint4(x[0], x[1], x[2], x[3]));
    }
  }
}

// Writes one consumer warpgroup's 64 features x kBT tokens, transposed into y [M, N]:
// f0 = this thread's first feature (the second is f0 + 8), tokens t_base + [0, kBT).
// tp (the per-token operands) is read by the int8 epilogue only; Args is any struct with M,
// N, out, has_bias and vec_store (SpArgs, and the dequantizing GEMM's OutView).
template <class El, class OutT, int kBT, bool kPairs, class Args>
__device__ __forceinline__ void sp_epilogue(const typename El::Acc (&acc)[kBT / 2],
                                            const TokParams<kBT>* tp, const FeatParams& fp,
                                            const Args& p, int f0, int t_base, int lane) {
  if constexpr (sizeof(OutT) == 2 && kPairs) {
    if (p.vec_store) {
      sp_epilogue_vec<El, OutT, kBT>(acc, tp, fp, p, f0, t_base, lane);
      return;
    }
  }
  const bool odd = ((lane >> 2) & 1) != 0;
  const bool has_bias = p.has_bias != 0;
  const int tl = 2 * (lane & 3);
  // The pair this thread stores: features (fa, fa + 1) with fa even, one token per j.
  const int fa = odd ? f0 - 1 : f0;
  const int fb = fa + 8;
  OutT* const out = static_cast<OutT*>(p.out);
#pragma unroll
  for (int j = 0; j < kBT / 8; ++j) {
    float a_lo, a_hi, b_lo, b_hi;
    sp_pair_values<El, kBT>(acc, tp, fp, has_bias, j, lane, a_lo, a_hi, b_lo, b_hi);
    const int t = t_base + tl + 8 * j + (odd ? 1 : 0);
    if (t < p.M) {
      OutT* const row = out + static_cast<int64_t>(t) * p.N;
      if constexpr (kPairs) {
        if (fa < p.N) store_pair(row + fa, a_lo, a_hi);
        if (fb < p.N) store_pair(row + fb, b_lo, b_hi);
      } else {
        if (fa < p.N) store_one(row + fa, a_lo);
        if (fa + 1 < p.N) store_one(row + fa + 1, a_hi);
        if (fb < p.N) store_one(row + fb, b_lo);
        if (fb + 1 < p.N) store_one(row + fb + 1, b_hi);
      }
    }
  }
}

// A 32-bit accumulator as the int bits st_shared_v2 / ld_dsmem_v2 move, and back.
__device__ __forceinline__ int acc_bits(int v) { return v; }
__device__ __forceinline__ int acc_bits(float v) { return __float_as_int(v); }
template <class T>
__device__ __forceinline__ T acc_from_bits(int v);
template <>
__device__ __forceinline__ int acc_from_bits<int>(int v) { return v; }
template <>
__device__ __forceinline__ float acc_from_bits<float>(int v) { return __int_as_float(v); }

// ------------------------------------------------------------------ kernel --
template <class Cfg, class El, class OutT>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kPerSm)
    sparse24_gemm_sm90a_kernel(const __grid_constant__ CUtensorMap tmap_v,
                               const __grid_constant__ CUtensorMap tmap_m,
                               const __grid_constant__ CUtensorMap tmap_x, const SpArgs p) {
#if defined(TQ_SM90A_ENABLED)
  constexpr int kStages = Cfg::kStages;
  constexpr int kCM = Cfg::kCM;
  constexpr int kMetaStep = Cfg::kAK * El::kLogicalPerByte / 8;  // meta bytes per row per stage
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t sA = smem;                              // kStages x [128 x 64 B]
  const uint32_t sM = smem + Cfg::kMetaOffset;           // kStages x [128 x 16 B]
  const uint32_t sB = smem + Cfg::kBOffset;              // kStages x [kBT x 128 B]
  const uint32_t bar_full = smem + Cfg::kBarrierOffset;  // kStages x 8 B
  const uint32_t bar_empty = bar_full + kStages * 8;     // kStages x 8 B

  const int wg = threadIdx.x / 128;
  constexpr bool kClustered = kCM > 1 || Cfg::kKSplit;
  const uint32_t rank = kCM > 1 ? cluster_ctarank() : 0u;
  const int cluster = kClustered ? static_cast<int>(cluster_id_x()) : static_cast<int>(blockIdx.x);
  const int nclusters = kClustered ? static_cast<int>(num_clusters_x()) : static_cast<int>(gridDim.x);
  // This CTA's k-blocks: all of them, or its rank's share of a K-split cluster's.
  const int krank = Cfg::kKSplit ? static_cast<int>(cluster_ctarank()) : 0;
  const int kb_begin = Cfg::kKSplit ? krank * p.num_kb / p.ks : 0;
  const int kb_end = Cfg::kKSplit ? (krank + 1) * p.num_kb / p.ks : p.num_kb;

  init_ring_barriers<kStages, Cfg::kConsumerWarps * kCM, kCM>(bar_full, bar_empty);

  if (wg == 0) {
    // ---------------------------------------------------------------- producer --
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmap_v);
      prefetch_tmap(&tmap_m);
      prefetch_tmap(&tmap_x);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cluster; u < p.num_units; u += nclusters) {
        int fu, tt;
        sp_unit_coords(u, p, fu, tt);
        const int ft = fu * kCM + static_cast<int>(rank);
        // A wholly out-of-bounds box (a padding feature tile when kCM == 2 and the tile count
        // is odd, or an activation half past M) is pointed at row 0 instead: real bytes, the
        // same transaction count, results never stored.
        const int f_row = ft < p.num_f_tiles ? ft * Cfg::kBF : 0;
        int t_row = tt * Cfg::kBT + static_cast<int>(rank) * Cfg::kBBoxRows;
        if (t_row >= p.M) t_row = 0;
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
          const uint32_t full = bar_full + 8 * stage;
          mbar_arrive_expect_tx(full, Cfg::kCutBox ? static_cast<uint32_t>(p.stage_tx)
                                                   : static_cast<uint32_t>(Cfg::kStageBytes));
          tma_load_2d(sA + stage * Cfg::kABytes, &tmap_v, kb * Cfg::kAK, f_row, full);
          if constexpr (Cfg::kWide) {
            // Wide stage: the element kind's kMetaStep meta bytes per row (a 16-byte multiple),
            // then the activations as kBHalves 128-byte swizzled boxes, kBT rows apart.
            tma_load_2d(sM + stage * Cfg::kMBytes, &tmap_m, kb * kMetaStep, f_row, full);
#pragma unroll
            for (int h = 0; h < Cfg::kBHalves; ++h) {
              tma_load_2d(sB + stage * Cfg::kBBytes + h * (Cfg::kBT * 128), &tmap_x,
                          kb * Cfg::kBK + 128 * h, t_row, full);
            }
            ring_advance<kStages>(stage, phase);
            continue;
          }
          // The meta box starts at a 16-byte boundary (a TMA box start off one raised an
          // illegal-instruction error on the H200): the 16-bit stage's 8 bytes are the first
          // or second half of it, the consumers pick by k-block parity.
          tma_load_2d(sM + stage * Cfg::kMBytes, &tmap_m, (kb * kMetaStep) & ~15, f_row, full);
          const uint32_t b_dst = sB + stage * Cfg::kBBytes + rank * (Cfg::kBBoxRows * Cfg::kBK);
          tma_load_shared<kCM>(b_dst, &tmap_x, kb * Cfg::kBK, t_row, full);
          ring_advance<kStages>(stage, phase);
        }
        if constexpr (Cfg::kKSplit) break;  // one unit per cluster
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers --
    setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int cw = wg - 1;                    // features [64 cw, 64 cw + 64) of the tile
    const int warp = (threadIdx.x / 32) % 4;  // 16-feature slice of the warpgroup's 64
    const int lane = threadIdx.x % 32;
    const int row_in_tile = cw * 64 + warp * 16 + (lane >> 2);  // this thread's first D row
    const uint32_t signal = lane == 0;
    typename El::Acc acc[Cfg::kAcc];
#pragma unroll
    for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = 0;

    auto release = [&](int s) { release_stage<kCM>(bar_empty + 8 * s, signal); };

    const int ct = static_cast<int>(threadIdx.x) - 128;  // consumer thread 0..255
    TokParams<Cfg::kBT>* const tok_bufs = reinterpret_cast<TokParams<Cfg::kBT>*>(
        smem_raw + (smem - smem_u32(smem_raw)) + Cfg::kParamsOffset);

    int stage = 0;
    uint32_t phase = 0;
    int iter = 0;
    for (int u = cluster; u < p.num_units; u += nclusters, ++iter) {
      int fu, tt;
      sp_unit_coords(u, p, fu, tt);
      const int ft = fu * kCM + static_cast<int>(rank);
      const int t_base = tt * Cfg::kBT;
      const int f0 = ft * Cfg::kBF + row_in_tile;

      // Epilogue operands now (clamped indices, always in bounds), used after the k-loop.
      float tok_as = 0.f;
      int tok_z = 0;
      if (El::kInt && ct < Cfg::kBT) {
        const int64_t tc = min(t_base + ct, p.M - 1);
        tok_as = __ldg(p.a_scale + tc * p.a_scale_step);
        tok_z = p.has_zero ? __ldg(p.a_zero + tc * p.a_zero_step) : 0;
      }
      FeatParams fp;
      {
        const int64_t fc0 = min(f0, p.N - 1), fc1 = min(f0 + 8, p.N - 1);
        fp.ws0 = El::kInt ? __ldg(p.w_scale + fc0 * p.w_scale_step) : 0.f;
        fp.ws1 = El::kInt ? __ldg(p.w_scale + fc1 * p.w_scale_step) : 0.f;
        fp.cs0 = p.has_zero ? __ldg(p.colsum + fc0 * p.colsum_step) : 0;
        fp.cs1 = p.has_zero ? __ldg(p.colsum + fc1 * p.colsum_step) : 0;
        fp.b0 = __ldg(p.bias + fc0 * p.bias_step);
        fp.b1 = __ldg(p.bias + fc1 * p.bias_step);
      }

      // The metadata registers of a sparse wgmma are read while it runs, like its accumulators:
      // they must not be rewritten before a wgmma.wait_group that retires it (CUTLASS's sm_90
      // sparse mainloop waits for every group before reloading them, K_PIPE_MMAS = 0). Here
      // they are double-buffered by stage parity instead (the loop body is step() with the two
      // arrays swapped), and each array is pinned live (fence_regs) until the wait that retires
      // its group, so stage i + 1's loads never land in registers stage i still reads, and one
      // group stays in flight. Without it a 64-token tile gave wrong outputs in a few percent of
      // the elements (results/h200/2026-12-03d_sp24_decode, call 2).
      int prev = 0;
      uint32_t e_even[4] = {0u, 0u, 0u, 0u};
      uint32_t e_odd[4] = {0u, 0u, 0u, 0u};
      auto step = [&](int i, uint32_t(&e)[4], uint32_t(&e_old)[4]) {
        mbar_wait(bar_full + 8 * stage, phase);
        __syncwarp();  // reconverge after the spin before the .aligned wgmma instructions
        const uint32_t a0 = sA + stage * Cfg::kABytes + cw * (64 * Cfg::kAK);
        const uint32_t b0 = sB + stage * Cfg::kBBytes;
        if constexpr (Cfg::kWide) {
          // 128-byte swizzled weight rows (the dense kernel's descriptor); wgmma j reads the
          // 32 stored bytes at + 32 j and the 64 activation bytes at + 64 (j % 2) of box j / 2.
          stage_meta_wide<El>(sM + stage * Cfg::kMBytes, row_in_tile, lane, e);
          fence_acc(acc);
          wgmma_fence();
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            El::template mma<Cfg::kBT>(acc, make_smem_desc(a0 + 32 * j),
                                       make_smem_desc(b0 + (j >> 1) * (Cfg::kBT * 128) + 64 * (j & 1)),
                                       e[j], (i | j) != 0);
          }
        } else {
          stage_meta<El>(sM + stage * Cfg::kMBytes + ((i * kMetaStep) & 15), row_in_tile, lane, e[0],
                         e[1]);
          fence_acc(acc);
          wgmma_fence();
          El::template mma<Cfg::kBT>(acc, make_desc_sw64(a0), make_smem_desc(b0), e[0], i != 0);
          El::template mma<Cfg::kBT>(acc, make_desc_sw64(a0 + 32), make_smem_desc(b0 + 64), e[1], 1);
        }
        wgmma_commit();
        fence_acc(acc);
        fence_regs(e);
        if (i > 0) {
          wgmma_wait<1>();  // retires stage i - 1's group: its stage and its metadata registers
          fence_acc(acc);
          fence_regs(e_old);
          release(prev);
        }
        prev = stage;
        ring_advance<kStages>(stage, phase);
      };
      // i counts this CTA's stages (the first overwrites the accumulators); the producer
      // loads k-blocks kb_begin + i.
      const int n_kb = kb_end - kb_begin;
      int i = 0;
      for (; i + 1 < n_kb; i += 2) {
        step(i, e_even, e_odd);
        step(i + 1, e_odd, e_even);
      }
      if (i < n_kb) step(i, e_even, e_odd);
      wgmma_wait<0>();
      fence_acc(acc);
      fence_regs(e_even);
      fence_regs(e_odd);
      if (!Cfg::kKSplit || n_kb > 0) release(prev);
      // K split: rank 0's sums plus the other ranks' (the epilogue reads these then; the
      // accumulators themselves are only read after the wait, as in the other tiles, which
      // keeps ptxas from serializing the wgmma).
      typename El::Acc red[Cfg::kAcc];
      if constexpr (Cfg::kKSplit) {
        // Ranks > 0 publish their partial sums where their A stages were (drained: every load
        // has landed and, after the barrier, both warpgroups' wgmma have read it); rank 0 adds
        // them in rank order (the same bits on every run), one rank's at a time, and alone
        // goes on to the epilogue. The producer warpgroup takes part in both cluster barriers
        // (see below).
        constexpr int kPairs = Cfg::kAcc / 2;
        const uint32_t mine = sA + 8u * static_cast<uint32_t>(ct);
        if (krank != 0) {
          consumer_bar_sync();
#pragma unroll
          for (int q = 0; q < kPairs; ++q) {
            st_shared_v2(mine + 2048u * q, acc_bits(acc[2 * q]), acc_bits(acc[2 * q + 1]));
          }
        }
        cluster_sync();  // 1: the partials are visible across the cluster
        if (krank == 0) {
#pragma unroll
          for (int q = 0; q < Cfg::kAcc; ++q) red[q] = acc[q];
#pragma unroll 1
          for (int d = 1; d < p.ks; ++d) {
            int px[kPairs], py[kPairs];
#pragma unroll
            for (int q = 0; q < kPairs; ++q) {
              ld_dsmem_v2(mine + 2048u * q, static_cast<uint32_t>(d), px[q], py[q]);
            }
#pragma unroll
            for (int q = 0; q < kPairs; ++q) {
              red[2 * q] += acc_from_bits<typename El::Acc>(px[q]);
              red[2 * q + 1] += acc_from_bits<typename El::Acc>(py[q]);
            }
          }
        }
        cluster_sync();  // 2: rank 0 has read every partial; the other ranks may exit
        if (krank != 0) break;  // one unit per cluster
      }
      // Publish this tile's token operands (double-buffered by unit parity, as the dense
      // kernel's column operands: the buffer written here was last read two units ago).
      TokParams<Cfg::kBT>& tp = tok_bufs[iter & 1];
      if (El::kInt && ct < Cfg::kBT) {
        tp.a_scale[ct] = tok_as;
        tp.a_zero[ct] = tok_z;
      }
      consumer_bar_sync();
      const typename El::Acc(&sums)[Cfg::kAcc] = Cfg::kKSplit ? red : acc;
      if ((p.N & 1) == 0) {
        sp_epilogue<El, OutT, Cfg::kBT, true>(sums, &tp, fp, p, f0, t_base, lane);
      } else {
        sp_epilogue<El, OutT, Cfg::kBT, false>(sums, &tp, fp, p, f0, t_base, lane);
      }
      __syncwarp();
      // One unit per cluster: no second pass, so nothing after the reduction's adds feeds
      // another wgmma (a loop back edge there made ptxas serialize every wgmma of the tile).
      if constexpr (Cfg::kKSplit) break;
    }
  }

  if constexpr (kCM > 1) cluster_sync();
  if constexpr (Cfg::kKSplit) {
    // The producer warpgroup's side of the consumers' two cluster barriers (one unit per
    // cluster, so each consumer thread reaches them exactly once).
    if (wg == 0) {
      cluster_sync();
      cluster_sync();
    }
  }
#else
  __trap();  // built for another target: the host refuses to launch on anything but sm_90
#endif
}

}  // namespace sp24
}  // namespace sm90a
}  // namespace torchquant
