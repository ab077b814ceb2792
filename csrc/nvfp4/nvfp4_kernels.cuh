// NVFP4 weight kernels: decode GEMV (tensor-core "mma" and scalar "fma"),
// quantize (amax reduction + block encode) and dequantize.
//
// What they compute (../shared/design/formats.md, csrc/cpu/nvfp4_cpu.cpp):
//   y[m, n] = global * sum_k x[m, k] * (e2m1[n, k] * float(bs[n, k / 16]))  (+ bias[n])
// x fp16/bf16 [M, K] row-major; w packed uint8 [N, K/2] (element 2j in the low
// nibble, code s<<3 | e<<1 | m); bs e4m3 [N, K/16]; global one fp32 read on
// the device (no host sync). K % 16 == 0. Output in x's dtype: fp32
// accumulation, then acc * global, then + bias, each rounded once in fp32,
// then one RNE rounding to fp16/bf16 (the CPU op's epilogue).
//
// Launch assumptions (checked on the host, nvfp4_gemv.cu): x 16-byte aligned;
// for the kAligned (wide-load) variants K % 64 == 0 (mma) / K % 32 == 0 (fma),
// w 16-byte aligned and block scales 4-byte (mma) / 2-byte (fma) aligned; the
// other variants need only w 8-byte aligned; M, N, K < 2^31. The mma kernel
// needs the host's staging bound (x rows * 32 * KS <= 1024). No host
// synchronization and no atomics in the GEMV: deterministic, graph-capturable.
//
// ---------------------------------------------------------------- decode --
// Hopper has no FP4 instructions. A 32-bit word holds 8 codes n0..n7 (n_j in
// bits 4j..4j+3 = element j of the word). It is decoded into four 16-bit
// pairs with integer ops only, no per-element conversion:
//   fp16: the fp16 number with sign s at bit 15 and the 3 magnitude bits
//         e1 e0 m at bits 11..9 is exactly e2m1 * 2^-14 (e sits in the two low
//         exponent bits, m in the top mantissa bit; e = 0 lands on the fp16
//         subnormals, which is exactly e2m1's e = 0 rule). Those bits are the
//         high byte c<<1 | s<<7 of the fp16, so one shift/mask pass builds the
//         high bytes of the 4 even codes (E) and the 4 odd codes (O) of a word,
//         and one prmt per pair drops two of them into the high bytes of a
//         half2 (low bytes from a zero register):
//           h0 = (n0, n2)  h1 = (n4, n6)  h2 = (n1, n3)  h3 = (n5, n7)
//         9 ALU ops + 2 shifts (IMAD-able) per 8 codes.
//   bf16: s at bit 15, magnitude bits at 8..6 is exactly e2m1 * 2^-126 (a
//         bf16 subnormal for e = 0; bf16 arithmetic keeps subnormals). The
//         magnitude straddles a byte, so pairs are formed by shifts/masks on
//         nibbles 16 bits apart: hp = (n_p, n_{p+4}), p = 0..3.
// The pairs are non-adjacent codes; the GEMV applies the same permutation to
// x (legal: k is a reduction axis), so no pair is ever re-assembled.
//
// Block scale fold: each pair is multiplied (one packed mul) by its e4m3
// block scale bs pre-multiplied by a power of two, giving
//   A = e2m1 * bs * 2^-7   exactly, in fp16 and in bf16:
// e2m1 (2 significant bits) * e4m3 (4) needs at most 6 bits; the value range
// 2^-17 .. 21 is normal in bf16 and, in fp16, either normal or a multiple of
// 2^-24 (the fp16 subnormal step), so the product is exact (no rounding, no
// overflow). Scale prefactors: fp16 bs * 2^7 (<= 57344, cvt e4m3x2 on sm_89+,
// bit re-seating elsewhere); bf16 bs * 2^119 (bits give bs * 2^-120, then
// exact multiplies by 2^120 and 2^119). The epilogue multiplies by 2^7 *
// global, one fp32 rounding, so y matches the CPU's acc * global exactly up to
// summation order. E4M3 NaN codes (0x7f/0xff; quantize never produces them)
// are read as +-480 by the bit path and as NaN by cvt: a precondition is
// finite block scales.
//
// ------------------------------------------------------- mma GEMV kernel --
// nvfp4_gemv_mma_kernel (sm_80+): mma.sync.m16n8k16.row.col.f32.{f16,bf16}
// with the weight as A (a warp owns 2 m16 tiles = 32 output columns) and x as
// B (n8 = 8 rows of x per n-tile, NT = 1 or 2 n-tiles = 8 or 16 rows), fp32
// accumulators. A 256-thread block = WN x KS warps: WN warps side by side in
// N (block tile 32 * WN columns) and KS warps splitting K; KS * WN = 8.
// __launch_bounds__(256, 2): <= 128 registers, two blocks (16 warps) per SM.
//
// K permutation. K is walked in chunks of KS steps; a warp's step is 256
// codes (LW = 8 words per lane): lane t of a quad owns the 64 codes
// [64t, 64t + 64) of the step for each of its 4 weight rows (rows g, g+8 of
// each m16 tile): two 16-byte loads per row (a quad covers 128 contiguous
// bytes of a row = one cache line per load instruction) and one 4-byte load
// of its 4 block scales. Word i (codes 64t + 8i .. +7) feeds k16 steps 2i
// (pairs h0, h1 as logical k {2t,2t+1} / {2t+8,2t+9}) and 2i+1 (pairs h2, h3).
// Every physical k is used once, and lane (g', t) of the B fragment carries x
// at the same physical k, so the sum is the dot product.
//
// x is staged through shared memory, permuted, once per block and chunk: all
// threads load x[8*NT rows][chunk] with coalesced 16-byte loads, apply the
// pair permutation above with 4 prmt per 8 halves, and store each 16-byte
// group (the B operands of word i for one lane: {b0,b1} of step 2i and of
// step 2i+1) to slot
//   s = ((((kw * LW + i) * NT + nt) * 8 + g') * 4 + t) ^ (i * 8 / LW)
// The XOR swizzle makes both the staging stores (8 consecutive groups per
// quarter warp) and the fragment loads (a warp reads 512 contiguous bytes per
// word) conflict-free. x is thus read from L2 once per block, shared by the
// WN column warps, and costs one LDS.128 per word per n-tile in the main
// loop. Chunks are double-buffered with one __syncthreads per chunk. Slots of
// k >= K are zero-filled (the weight there is zero too, and 0 * NaN would
// not be). Slots of x rows >= M are never written and are read anyway, and a
// 16-row tile with <= 8 rows still runs its second n-tile: garbage (even NaN)
// in a B column only reaches the D column of that x row (each mma output is
// its own dot product), and those columns are never stored. No predicate,
// no branch: a branch around the second n-tile made ptxas spill.
//
// Memory pattern / pipelining. With K % 64 == 0 (kAligned) the weight and
// its block scales stream through a per-warp cp.async ring of 2 stages (each
// 32 rows x 128 B of weight + the rows' 16 scales; see kMmaRingStageBytes).
// Otherwise weights use ld.global.nc.L1::no_allocate (read once); each half
// of a row's registers is refilled with the next chunk's data right after it
// is consumed, and scales (ld.global.nc, L1 allocate: the rest of their line
// belongs to the other KS warps and the next chunks) load half a chunk ahead.
// In both forms the next chunk's x is staged one 16-byte group at a time
// between words. After the K loop the
// KS partial accumulators are summed through shared memory in a fixed order
// (deterministic), and the kw = 0 warps apply the epilogue.
//
// ------------------------------------------------------- fma GEMV kernel --
// nvfp4_gemv_fma_kernel (any sm_75+): a warp owns 4 (MX <= 2) or 2 weight
// rows and MX rows of x (MX in {1,2,4,8}; M > MX takes more m-tiles in the
// grid). Lanes walk K
// in 32-code granules (16-byte weight loads, 2 block scales as one u16; K %
// 32 != 0 uses 16-code granules and 8-byte loads), decode with the fp16 path
// above for both x dtypes, fold the scale with one packed fp16 mul, widen to
// fp32 and accumulate with fp32 FMAs against fp32 x (products exact). A warp
// shuffle reduction ends each row. x is read through L1 (16-byte loads).
//
// ------------------------------------------------- quantize / dequantize --
// quantize: nvfp4_amax_kernel (max |w| per block, atomicMax on the bits of a
// non-negative float) then nvfp4_quantize_kernel, one thread per 16-element
// block, every step the CPU's fp32 operation in the CPU's order:
//   global = amax / 2688 (-> 1 when that is 0); bs = e4m3_rne(min(bamax / 6 / global, 448));
//   d = float(bs) * global; q = e2m1_rne(clamp(w / d, -6, 6)) (ties to even
//   code; sign kept: a negative value rounding to 0 is code 8, -0); bs == 0 -> codes 0.
// dequantize: one thread per byte, (e2m1 * float(bs)) * global in fp32 (the
// first product exact), one RNE rounding to the output dtype.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "common/dq_tile.cuh"
#include "common/e4m3_hw.cuh"
#include "common/ldg.h"
#include "common/mma.cuh"
#include "common/pdl_device.cuh"
#include "common/vec_store.cuh"
#include "common/warp_ring.cuh"
#include "nvfp4/nvfp4_layout.h"

namespace torchquant {
namespace nvfp4 {

// ------------------------------------------------------------ constants --
constexpr int kMmaWarps = 8;                 // warps per mma block (WN * KS)
constexpr int kMmaThreads = kMmaWarps * 32;  // 256
constexpr int kMmaMT = 2;                    // m16 tiles per warp: 32 output columns
constexpr int kMmaMaxStage = 4;              // 16-byte x groups staged per thread per chunk
// 32-bit words of weight per lane, per weight row, per chunk (LW): 8 = 64
// codes, two 16-byte loads and the 4 block scales as one u32. The kernel also
// supports LW = 4 (32 codes, one 16-byte load, a u16 of scales, half the
// weight registers) as a fallback should a compiler spill the NT = 2 variant;
// both are verified bit-level against the reference (docs/nvfp4_gemv.md).
__host__ __device__ constexpr int mma_lane_words(int nt) { return nt > 0 ? 8 : 8; }
// Codes per warp per chunk: 4 lanes x 8 codes per word.
__host__ __device__ constexpr int mma_step(int nt) { return 32 * mma_lane_words(nt); }
// Weight rows per warp in the fma kernel: 4 for MX <= 2, 2 for MX >= 4 (the
// MX x rows accumulators and the decoded rows then fit 128 registers).
__host__ __device__ constexpr int fma_rows(int mx) { return mx >= 4 ? 2 : 4; }
constexpr int kFmaWarps = 8;                 // warps per fma block
constexpr int kQuantThreads = 256;
constexpr int kDequantThreads = 256;

// Shared memory of the mma kernel for KS and NT: two x chunk buffers (one
// uint4 per (k-warp, word, n-tile, g', t)), or the KS-reduction buffer if
// that is larger (it reuses the same memory).
__host__ __device__ constexpr int mma_x_buffer_bytes(int ks, int nt) {
  return ks * mma_lane_words(nt) * nt * 32 * 16;
}
__host__ __device__ constexpr int mma_reduce_bytes(int ks, int nt) {
  return (ks - 1) * (kMmaWarps / ks) * kMmaMT * nt * 4 * 32 * 4;
}
__host__ __device__ constexpr int mma_smem_bytes(int ks, int nt) {
  return 2 * mma_x_buffer_bytes(ks, nt) > mma_reduce_bytes(ks, nt) ? 2 * mma_x_buffer_bytes(ks, nt)
                                                                    : mma_reduce_bytes(ks, nt);
}

// The aligned mma kernel (K % 64 == 0) streams each warp's 32 weight rows x
// 128 bytes per chunk through a per-warp cp.async ring of kMmaRingStages
// stages (common/warp_ring.cuh), placed after the x buffers.
constexpr int kMmaRingStages = 2;
// A stage: 32 rows x 128 B of weight, then the 32 rows' 16 block scales of
// the same 256 codes (row r at byte kMmaRingWeightBytes + 16 r).
constexpr int kMmaRingWeightBytes = kMmaMT * ring::kStageBytes;
constexpr int kMmaRingStageBytes = kMmaRingWeightBytes + 32 * 16;
constexpr int kMmaRingWarpBytes = kMmaRingStages * kMmaRingStageBytes;
__host__ __device__ constexpr int mma_ring_offset(int ks, int nt) {
  return (mma_smem_bytes(ks, nt) + 127) / 128 * 128;
}
__host__ __device__ constexpr int mma_smem_total(int ks, int nt, bool ring) {
  return ring ? mma_ring_offset(ks, nt) + kMmaWarps * kMmaRingWarpBytes : mma_smem_bytes(ks, nt);
}

struct GemvParams {
  const void* x;      // [M, K] fp16/bf16
  const uint8_t* w;   // [N, K/2] packed E2M1
  const uint8_t* s;   // [N, K/16] e4m3 block scales
  const float* gs;    // global scale, one fp32 on the device
  const void* bias;   // [N] in x's dtype, or nullptr
  void* y;            // [M, N] in x's dtype
  int M, N, K;
  int m_tiles;        // M tiles in the grid (blockIdx.x = n_block * m_tiles + m_tile)
  int tile_m;         // mma: rows of x per M tile (1 .. 8 * NT); fma: unused
  int ks;             // mma: warps splitting K per block (1, 2, 4, 8)
  int ks_log2;        // log2(ks): read from the parameter bank where needed, so
                      // no register holds it across the K loop
  // mma K split across blocks (kSplit kernels only): blockIdx.y takes chunks
  // [y * cps, y * cps + cps) and writes its fp32 sums (before the global
  // scale) to part[y][m][n]; nvfp4_splitk_reduce_kernel adds them in y order.
  int cps = 0;
  float* part = nullptr;
  // Launched with PDL (common/pdl.h), "smem": the first weight stages are copied before
  // the wait for the predecessor (otherwise nothing is loaded before it).
  int pdl_early = 0;
  // kXRes kernels: byte offset of the weight ring in shared memory (after the
  // resident x, or the K-split reduction if that is larger).
  int ring_off = 0;
  // kF16 kernels, tests only (TORCHQUANT_NVFP4_F16=2 with TORCHQUANT_TESTING=1): run the fp16
  // loop without the exactness check, so a test can tell which loop a block ran. Wrong for x
  // that fp16 cannot hold.
  int f16_unchecked = 0;
};

// kXRes (NT = 1, the aligned ring kernel): the tile's rows of x over the
// block's whole K range stay in shared memory, staged once before the K loop.
// Row r, 16-byte group v of the range (8 codes at 8 v; chunk c, k-warp kq,
// lane tq, word i, v = (c * KS + kq) * 32 + tq * 8 + i) sits at uint4
//   r * stride + (c * KS + kq) * 32 + i * 4 + tq,   stride = groups + 4,
// so lane (g, t) reads word i of its chunk at one 16-byte offset per i, a
// warp's read touches 4 consecutive uint4 per row, and the 4-uint4 pad puts
// consecutive rows on opposite bank halves.
template <typename I>
__host__ __device__ constexpr I mma_xres_stride(I groups_per_row) {
  return groups_per_row + 4;
}

// kXRes staging: 16-byte x loads each thread keeps in flight (TORCHQUANT_NVFP4_XRES_LOADS
// build flag, for A/B; default 16: the 4 rows x 8192 of K of a 4-row tile in one round).
#ifndef TORCHQUANT_NVFP4_XRES_LOADS
#define TORCHQUANT_NVFP4_XRES_LOADS 16
#endif
constexpr int kMmaXresLoads = TORCHQUANT_NVFP4_XRES_LOADS;

// ----------------------------------------------------------- primitives --
using dqt::prmt;  // common/dq_tile.cuh

// Low / high 16-bit half of a pair broadcast to both halves, written as a
// 16-bit unpack / repack rather than a byte permute: where the result feeds a
// packed multiply, ptxas folds it into that multiply's operand selector
// (.H0_H0 / .H1_H1) and issues no PRMT on the integer ALU (the bf16 x-resident
// loop: 755 -> 736 SASS instructions per chunk, PRMT 24 -> 8). Same values, same
// bits. A/B in one run, two builds (results/h200/2026-12-02f_decode_ab, us, PRMT
// broadcast / folded): 28672x8192 M = 1 / 2 / 4 / 8 43.5 / 42.8, 47.2 / 46.0,
// 50.4 / 49.6, 56.2 / 54.6; 128256x4096 M = 1 / 8 / 16 84.5 / 83.5, 108.7 / 106.1,
// 130.8 / 128.1. (Moving the decodes' right shifts to the FMA pipe as IMAD.HI as
// well lost 2-6 % in the same kind of A/B, here and in the fp8 kernel: not taken.)
__device__ __forceinline__ uint32_t dup_lo(uint32_t v) {
  uint32_t d;
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %1;\n mov.b32 %0, {l, l};\n}\n" : "=r"(d) : "r"(v));
  return d;
}
__device__ __forceinline__ uint32_t dup_hi(uint32_t v) {
  uint32_t d;
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %1;\n mov.b32 %0, {h, h};\n}\n" : "=r"(d) : "r"(v));
  return d;
}

// Streaming weight loads: ld_stream_v4 / ld_stream_v2 (common/ldg.h).

__device__ __forceinline__ uint32_t mul_f16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Exact bf16x2 multiply (sm_80+): fma with -0 keeps the sign of a zero product.
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d = 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
#endif
  return d;
}

// Packed bf16x2 maximum (sm_80+); a NaN half yields the other operand's half.
__device__ __forceinline__ uint32_t max_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d = 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
#endif
  return d;
}

// ---------------------------------------------------------- E2M1 decode --
// fp16 pairs, each half = e2m1 * 2^-14 exactly: h0 = (n0, n2), h1 = (n4, n6),
// h2 = (n1, n3), h3 = (n5, n7); n_j is bits 4j..4j+3 of w, low half first.
__device__ __forceinline__ void decode_e2m1_f16(uint32_t w, uint32_t (&h)[4]) {
  // High byte of the fp16 of each even code (low nibble of each byte):
  // magnitude bits 0..2 -> 1..3, sign bit 3 -> 7.
  const uint32_t e = ((w << 1) & 0x0E0E0E0Eu) | ((w << 4) & 0x80808080u);
  // ... and of each odd code (high nibble): magnitude 4..6 -> 1..3, sign stays at 7.
  const uint32_t o = ((w >> 3) & 0x0E0E0E0Eu) | (w & 0x80808080u);
  h[0] = prmt(e, 0u, 0x1404u);  // [0, e.b0, 0, e.b1]
  h[1] = prmt(e, 0u, 0x3424u);  // [0, e.b2, 0, e.b3]
  h[2] = prmt(o, 0u, 0x1404u);
  h[3] = prmt(o, 0u, 0x3424u);
}

// bf16 pairs, each half = e2m1 * 2^-126 exactly: h_p = (n_p, n_{p+4}).
// Magnitude bits of nibble p go to 6..8 (and 22..24), its sign to 15 (31).
// Per pair: mask the two nibbles, one multiply by 2^a + 2^b lays down a copy
// shifted by a (magnitude onto 6..8) and one shifted by b (sign onto 15) in
// disjoint bits, so the sum is their OR, and a mask keeps those 4 bits: 3
// instructions (LOP3, IMAD, LOP3) where two shifts and two merges took 4.
// Nibbles 2, 3, 6, 7 are first moved onto 0, 1, 4, 5 (w >> 8), so every
// shift is a left shift. 13 instructions per 8 codes instead of 15 (checked
// against the shift form on every nibble value at every position; the ring
// kernel's loop: 878 instead of 940 SASS instructions per chunk). H200 A/B in
// one build, run 2026-12-02c call 1, us, mask-multiply / shift form, two pairs:
// 28672x8192 M = 1 51.4, 51.1 / 52.6, 53.2; 128256x4096 M = 1 103.0, 105.0 /
// 105.9, 108.3, M = 8 111.5, 110.1 / 113.7, 115.9; 28672x8192 M = 8 equal.
__device__ __forceinline__ void decode_e2m1_bf16(uint32_t w, uint32_t (&h)[4]) {
  const uint32_t v = w >> 8;
  h[0] = ((w & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;  // 2^6 + 2^12
  h[1] = ((w & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;  // 2^2 + 2^8
  h[2] = ((v & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;
  h[3] = ((v & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;
}

// The same four bf16 pairs from a word in layout 1 (nvfp4_layout.h: the bits permuted so
// each pair needs one mover and one mask): 7 ALU ops + 1 IMAD per 8 codes against the 9 + 4
// above (the x-resident loop: 576 instead of 736 SASS instructions per chunk; docs/nvfp4_gemv.md 23).
__device__ __forceinline__ void decode_e2m1_bf16_l1(uint32_t w, uint32_t (&h)[4]) {
  h[0] = w & kBf16PairMask;
  h[1] = __funnelshift_l(w, w, 10) & kBf16PairMask;
  h[2] = __funnelshift_l(w, w, 13) & kBf16PairMask;
  h[3] = ((w & kL1MulMask) * kL1Mul) & kBf16PairMask;
}

// The same four fp16 pairs from a word in layout 2 (nvfp4_layout.h): 6 ALU ops + 3 IMAD per 8
// codes against decode_e2m1_f16's 8 + 3.
__device__ __forceinline__ void decode_e2m1_f16_l2(uint32_t w, uint32_t (&h)[4]) {
  h[0] = w & kF16PairMask;
  h[1] = (w * 8u) & kF16PairMask;  // w << 3 (IMAD on the FMA pipe)
  h[2] = ((w & kL2MaskA) * kL2MulA) & kF16PairMask;
  h[3] = ((w & kL2MaskB) * kL2MulB) & kF16PairMask;
}

// Layout 2, codes 2t and 2t + 1 of a word as one fp16 pair (the decoding GEMM's lane t; the same
// bits as e2m1x2_decode of byte t of the layout-0 word): half t % 2 of pairs h0, h2 (t < 2) or
// h1, h3 (t >= 2). Per lane: sh_a = t < 2 ? 0 : 3, mask_b / mul_b = t < 2 ? kL2MaskA / kL2MulA :
// kL2MaskB / kL2MulB, sel = t % 2 ? 0x7632 : 0x5410.
__device__ __forceinline__ uint32_t f16_l2_adjacent(uint32_t w, uint32_t sh_a, uint32_t mask_b,
                                                    uint32_t mul_b, uint32_t sel) {
  const uint32_t ha = (w << sh_a) & kF16PairMask;
  const uint32_t hb = ((w & mask_b) * mul_b) & kF16PairMask;
  return prmt(ha, hb, sel);
}

// Whether word layout L may serve activations of type T (1 and 3: bf16 only, 2: fp16 only).
template <class T, int L>
__host__ __device__ constexpr bool layout_fits() {
  return L == kLayoutStd ||
         ((L == kLayoutBf16 || L == kLayoutBf16Adj) && std::is_same_v<T, __nv_bfloat16>) ||
         (L == kLayoutF16 && std::is_same_v<T, __half>);
}

// Host side: go(element, layout constant) for x of fp16 (`half`) or bf16 and a packed weight in
// `layout` (0, or x's dtype's decode order: 1 or 3 bf16, 2 fp16); false, with nothing run, for any
// other pairing (the ops check the pairing first, with check_nvfp4_layout, and the launchers
// TORCH_CHECK this result, so no pairing can run as layout 0). The one dtype x layout dispatch of
// the launchers (nvfp4_gemv's mma kernel, the Hopper decoding GEMM and GEMV); kDecodeOrders =
// false instantiates layout 0 only (the fp8 GEMM's weights).
template <bool kDecodeOrders = true, class Go>
inline bool for_dtype_layout(bool half, int64_t layout, Go&& go) {
  using L0 = std::integral_constant<int, kLayoutStd>;
  if (layout == kLayoutStd) {
    if (half)
      go(__half{}, L0{});
    else
      go(__nv_bfloat16{}, L0{});
    return true;
  }
  if constexpr (kDecodeOrders) {
    if (half && layout == kLayoutF16) return go(__half{}, std::integral_constant<int, kLayoutF16>{}), true;
    if (!half && layout == kLayoutBf16) return go(__nv_bfloat16{}, std::integral_constant<int, kLayoutBf16>{}), true;
    if (!half && layout == kLayoutBf16Adj)
      return go(__nv_bfloat16{}, std::integral_constant<int, kLayoutBf16Adj>{}), true;
  }
  return false;
}

// One word into C's four pairs from a word in layout L (nvfp4_layout.h): the kernels' single
// switch between the decodes above (C = Ops<T>; layout 1 with bf16, 2 with fp16).
template <class C, int L>
__device__ __forceinline__ void decode_word(uint32_t w, uint32_t (&h)[4]) {
  if constexpr (L == kLayoutBf16 || L == kLayoutBf16Adj)  // layout 3: the same decode, other codes
    decode_e2m1_bf16_l1(w, h);
  else if constexpr (L == kLayoutF16)
    decode_e2m1_f16_l2(w, h);
  else
    C::decode(w, h);
}

// 8 consecutive x values (natural order) as the pairs decode_word<C, L> yields for a word of
// those 8 codes: layout 3's pairs are adjacent codes, x as it lies; the others permute.
template <class C, int L>
__device__ __forceinline__ uint4 x_pairs(uint4 v) {
  if constexpr (L == kLayoutBf16Adj)
    return v;
  else
    return C::pair_x(v);
}

// Layout 3, codes 2t and 2t + 1 of a word as one bf16 pair (low half code 2t): pair h_t of
// decode_e2m1_bf16_l1, i.e. one of its four movers per lane (rot = 0, 10, 13 for t = 0..2; the
// masked multiply for t = 3). The decoding wgmma GEMM's lane t (x in natural order). 4 ALU ops
// + 1 IMAD per word and lane, against layout 1's 6 + 1 (bf16_l1_adjacent, below).
__device__ __forceinline__ uint32_t bf16_l3_adjacent(uint32_t w, uint32_t rot, bool mul) {
  return (mul ? (w & kL1MulMask) * kL1Mul : __funnelshift_l(w, w, rot)) & kBf16PairMask;
}

// Layout 1, codes 2t and 2t + 1 of a word as one bf16 pair (low half code 2t): what lane t of
// the decoding wgmma GEMM needs (x arrives there by TMA in natural order), the same bits as
// e2m1x2_decode of byte t of the layout-0 word. Those codes sit in half t / 2 of pairs h0, h1
// (t even) or h2, h3 (t odd); one prmt joins the two halves. Per lane: rot_a = t odd ? 13 : 0,
// odd = t & 1, sel = t / 2 ? 0x7632 : 0x5410. 6 ALU ops + 1 IMAD per word and lane.
__device__ __forceinline__ uint32_t bf16_l1_adjacent(uint32_t w, uint32_t rot_a, bool odd, uint32_t sel) {
  const uint32_t ha = __funnelshift_l(w, w, rot_a) & kBf16PairMask;
  const uint32_t hb = (odd ? (w & kL1MulMask) * kL1Mul : __funnelshift_l(w, w, 10)) & kBf16PairMask;
  return prmt(ha, hb, sel);
}

// ------------------------------------------------------- scale decode --
// Two e4m3 codes (bits 0..7 and 8..15 of s) -> fp16x2 {bs0 * 2^7, bs1 * 2^7}.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2_x128(uint32_t s) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return mul_f16x2(e4m3x2_to_f16x2_hw(static_cast<uint16_t>(s)), 0x58005800u);  // exact, then * 2^7
#else
  // Move the codes to the high bytes and re-seat the fields: s<<15 |
  // (code & 0x7f)<<7 is the fp16 of bs * 2^-8 (e4m3 subnormals land on fp16
  // subnormals), then * 2^15.
  const uint32_t v = prmt(s, 0u, 0x1404u);
  const uint32_t bits = ((v >> 1) & 0x3F803F80u) | (v & 0x80008000u);
  return mul_f16x2(bits, 0x78007800u);
#endif
}

// Two e4m3 codes -> bf16x2 {bs0 * 2^119, bs1 * 2^119} (sm_80+).
__device__ __forceinline__ uint32_t e4m3x2_to_bf16x2_x2p119(uint32_t s) {
  const uint32_t v = prmt(s, 0u, 0x1404u);
  const uint32_t bits = ((v >> 4) & 0x07F007F0u) | (v & 0x80008000u);  // bs * 2^-120
  return mul_bf16x2(mul_bf16x2(bits, 0x7B807B80u), 0x7B007B00u);        // * 2^120 * 2^119
}

// ------------------------------------------------- per-dtype operations --
template <typename T>
struct Ops;

template <>
struct Ops<__half> {
  static __device__ __forceinline__ void decode(uint32_t w, uint32_t (&h)[4]) {
    decode_e2m1_f16(w, h);
  }
  // 8 consecutive x halves (r = x0x1, x2x3, x4x5, x6x7) -> the pairs that
  // match decode(): (x0,x2), (x4,x6), (x1,x3), (x5,x7).
  static __device__ __forceinline__ uint4 pair_x(uint4 r) {
    return make_uint4(prmt(r.x, r.y, 0x5410u), prmt(r.z, r.w, 0x5410u), prmt(r.x, r.y, 0x7632u),
                      prmt(r.z, r.w, 0x7632u));
  }
  static __device__ __forceinline__ uint32_t scale_pair(uint32_t s) {
    return e4m3x2_to_f16x2_x128(s);
  }
  static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) { return mul_f16x2(a, b); }
  static __device__ __forceinline__ void mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                             uint32_t a3, uint32_t b0, uint32_t b1) {
    mma_m16n8k16<__half>(d, a0, a1, a2, a3, b0, b1);
  }
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
  // 8 x halves (natural order) to fp32.
  static __device__ __forceinline__ void x_to_float(uint4 r, float (&f)[8]) {
    const uint32_t u[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      __half2 h;
      memcpy(&h, &u[j], sizeof(h));
      const float2 v = __half22float2(h);
      f[2 * j] = v.x;
      f[2 * j + 1] = v.y;
    }
  }
};

template <>
struct Ops<__nv_bfloat16> {
  static __device__ __forceinline__ void decode(uint32_t w, uint32_t (&h)[4]) {
    decode_e2m1_bf16(w, h);
  }
  // Pairs that match decode_e2m1_bf16: (x0,x4), (x1,x5), (x2,x6), (x3,x7).
  static __device__ __forceinline__ uint4 pair_x(uint4 r) {
    return make_uint4(prmt(r.x, r.z, 0x5410u), prmt(r.x, r.z, 0x7632u), prmt(r.y, r.w, 0x5410u),
                      prmt(r.y, r.w, 0x7632u));
  }
  static __device__ __forceinline__ uint32_t scale_pair(uint32_t s) {
    return e4m3x2_to_bf16x2_x2p119(s);
  }
  static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) {
    return mul_bf16x2(a, b);
  }
  static __device__ __forceinline__ void mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                             uint32_t a3, uint32_t b0, uint32_t b1) {
    mma_m16n8k16<__nv_bfloat16>(d, a0, a1, a2, a3, b0, b1);
  }
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) {
    __nv_bfloat16_raw r = v;
    return __uint_as_float(static_cast<uint32_t>(r.x) << 16);
  }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
  static __device__ __forceinline__ void x_to_float(uint4 r, float (&f)[8]) {
    const uint32_t u[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      f[2 * j] = __uint_as_float(u[j] << 16);
      f[2 * j + 1] = __uint_as_float(u[j] & 0xFFFF0000u);
    }
  }
};

// The epilogue, as the CPU op: (acc * global), then + bias, each one fp32
// rounding (no contraction), then RNE to T. `so` = 2^7 * global undoes the
// 2^-7 carried by the decoded weights (exact: a power of two).
template <typename T>
__device__ __forceinline__ T epilogue(float acc, float so, const T* bias, int n) {
  float v = __fmul_rn(acc, so);
  if (bias != nullptr) v = __fadd_rn(v, Ops<T>::to_float(bias[n]));
  return Ops<T>::from_float(v);
}

// ------------------------------------------- bf16 x through fp16 mma --
// A bf16 value converts to fp16 exactly when it is 0 or its magnitude lies in [2^-17, 2^16)
// (bf16 bits 0x3700 .. 0x477F): the exponent then fits fp16's normal range or its subnormal
// range down to where bf16's 8 significant bits still sit on multiples of 2^-24. For such
// x the fp16 mma computes the same exact products as the bf16 one (the decoded weight is
// exact in both: section "Block scale fold" above), with the cheaper fp16 decode. TypeTag
// names the mma type of a loop instance.
template <typename C>
struct TypeTag {
  using type = C;
};

// The range bookkeeping of bf16 x bound for fp16: amax = packed max of |x| (bf16x2), bmin =
// packed max of (|x| bits + 0x7FFF), which for |x| != 0 is the bf16 -(bits of |x| - 1): the
// largest of them belongs to the smallest nonzero |x|; for x = 0 it is NaN, which max ignores
// (as it ignores NaN x: NaN in, NaN out on both paths).
__device__ __forceinline__ void bf16x8_range(uint4 v, uint32_t& amax, uint32_t& bmin) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t a = u[j] & 0x7FFF7FFFu;
    amax = max_bf16x2(amax, a);
    bmin = max_bf16x2(bmin, a + 0x7FFF7FFFu);  // no carry between the halves: a <= 0x7FFF
  }
}

// 8 bf16 (natural order) -> 8 fp16, RNE: exact for values the caller's range check admitted.
__device__ __forceinline__ uint4 bf16x8_to_f16x8(uint4 v) {
  uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const __half2 h = __floats2half2_rn(__uint_as_float(u[j] << 16), __uint_as_float(u[j] & 0xFFFF0000u));
    memcpy(&u[j], &h, sizeof(h));
  }
  return make_uint4(u[0], u[1], u[2], u[3]);
}

// Every x seen by bf16x8_range converts to fp16 exactly: both halves of amax below 0x4780 (2^16)
// and both halves of bmin at or above 0x36FF (smallest nonzero |x| >= 0x3700 = 2^-17) or NaN
// (no nonzero x: 0x7FFF and any NaN pass the same test).
__device__ __forceinline__ bool bf16_range_fits_f16(uint32_t amax, uint32_t bmin) {
  return (amax & 0xFFFFu) < 0x4780u && (amax >> 16) < 0x4780u && (bmin & 0x7FFFu) >= 0x36FFu &&
         ((bmin >> 16) & 0x7FFFu) >= 0x36FFu;
}

// ------------------------------------------------------ mma GEMV kernel --
// Loads of the lane's 8 * LW codes starting at code kb of a row. `nv` = how
// many of its 16-code granules lie below K (0 .. LW / 2; all or nothing when
// kAligned, because K % (8 * LW) == 0 then), already 0 for a row >= N.
// Words [4q, 4q + 4): one 16-byte load, or two 8-byte granules.
template <int LW, bool kAligned>
__device__ __forceinline__ void mma_load_words(const uint8_t* row, int kb, int nv, int q,
                                               uint32_t (&w)[LW]) {
  if constexpr (kAligned) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (nv > 0) v = ld_stream_v4(row + kb / 2 + 16 * q);
    w[4 * q + 0] = v.x;
    w[4 * q + 1] = v.y;
    w[4 * q + 2] = v.z;
    w[4 * q + 3] = v.w;
  } else {
    const uint8_t* src = row + kb / 2 + 16 * q;
    uint2 v0 = make_uint2(0u, 0u), v1 = make_uint2(0u, 0u);
    if (nv > 2 * q) v0 = ld_stream_v2(src);
    if (nv > 2 * q + 1) v1 = ld_stream_v2(src + 8);
    w[4 * q + 0] = v0.x;
    w[4 * q + 1] = v0.y;
    w[4 * q + 2] = v1.x;
    w[4 * q + 3] = v1.y;
  }
}

// The lane's LW / 2 block scales as one word, block j in byte j: a u32
// (LW = 8) or u16 (LW = 4) load when kAligned, bytes otherwise.
template <int LW, bool kAligned>
__device__ __forceinline__ uint32_t mma_load_scales(const uint8_t* srow, int kb, int nv) {
  const uint8_t* src = srow + kb / 16;
  if constexpr (kAligned) {
    if (nv == 0) return 0u;
    if constexpr (LW == 8) {
      return __ldg(reinterpret_cast<const unsigned int*>(src));
    } else {
      return __ldg(reinterpret_cast<const unsigned short*>(src));
    }
  } else {
    uint32_t s = 0u;
#pragma unroll
    for (int j = 0; j < LW / 2; ++j)
      if (nv > j) s |= static_cast<uint32_t>(__ldg(src + j)) << (8 * j);
    return s;
  }
}

// Named barrier `id` (1..15) over `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// kSplit: K split across blocks (GemvParams::cps / part; instantiated for the
// aligned kernels only). kSplit = false compiles to the unsplit kernel.
// kGroupSync (A/B variant, host knob TORCHQUANT_NVFP4_GROUP_SYNC=1, aligned
// unsplit kernels only): each k-warp's WN column warps stage their own slice
// of x and meet at a named barrier of WN warps per chunk instead of the
// 8-warp __syncthreads (Nsight Compute: 0.82 barrier-stall cycles per issued
// instruction, docs/nvfp4_gemv.md 8b). Same slots, same staged values.
// kXRes: x resident in shared memory for the block's K range (layout above):
// staged once, no per-chunk staging and no per-chunk barrier (Nsight Compute,
// M = 1: 0.82 barrier-stall cycles per issued instruction, docs/nvfp4_gemv.md
// 8b). The same B values reach the same mma in the same order as the
// double-buffered kernel, so the results are the same bits.
// kF16 (bf16 x, kXRes only): x is staged as fp16 and the loop runs the fp16 decode and mma
// when every staged x value converts exactly (bf16_range_fits_f16, decided per block after
// staging); otherwise the block stages bf16 again and runs the bf16 loop, the same bits as
// the kernel without kF16. docs/nvfp4_gemv.md 22.
// kLayout (nvfp4_layout.h): the weight's word layout; layout 1 (bf16 x, kF16 = 0) / 2 (fp16 x)
// decodes with decode_e2m1_bf16_l1 / decode_e2m1_f16_l2 into the same pairs, so everything else
// is unchanged; layout 3 (bf16) decodes as layout 1 into adjacent-code pairs, and x is staged
// in natural order (x_pairs).
template <typename T, int NT, bool kAligned, bool kSplit = false, bool kGroupSync = false,
          bool kXRes = false, int kF16 = 0, int kLayout = kLayoutStd>
__global__ void __launch_bounds__(kMmaThreads, 2) nvfp4_gemv_mma_kernel(const GemvParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(!kXRes || (NT == 1 && kAligned && !kGroupSync), "kXRes: aligned one-n-tile ring kernel");
  static_assert(kF16 == 0 || (kXRes && std::is_same_v<T, __nv_bfloat16> && kF16 <= 1),
                "kF16: bf16 x resident");
  // kLayout 4 (kLayoutTiled): layout 3's words and scales stored per 16-row tile and 64-byte piece
  // (nvfp4_tiles.h), read by the ring form alone (one n-tile, wide loads, no group sync): its
  // producer takes each weight unit and scale word from the tiled place (ring::Producer kTiled;
  // the scale copies below), the stages hold what layout 3's do, so the bits are layout 3's.
  constexpr bool kTiled = kLayout == kLayoutTiled;
  constexpr int kWL = kTiled ? kLayoutBf16Adj : kLayout;  // the word layout the decode reads
  static_assert(!kTiled || (NT == 1 && kAligned && !kGroupSync), "layout 4: the ring kernel only");
  static_assert(layout_fits<T, kWL>() && (kWL == kLayoutStd || kF16 == 0),
                "layout 1, 3 / 2 is a bf16 / fp16 decode order (kF16 reads layout 0)");
  using O = Ops<T>;
  constexpr int LW = mma_lane_words(NT);  // weight words per lane, row and chunk
  constexpr int XS = 8 / LW;              // swizzle multiplier: slot ^ (i * XS)
  extern __shared__ uint4 smem[];         // 16-byte aligned dynamic shared memory
  pdl_launch_dependents();  // TORCHQUANT_PDL (common/pdl.h): the next GEMV may launch

  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int KS = p.ks, WN = kMmaWarps / KS;
  const int wn = warp % WN, kw = warp / WN;
  const int M = p.M, N = p.N, K = p.K;
  const int m_tile = blockIdx.x % p.m_tiles;
  const int n_block = blockIdx.x / p.m_tiles;
  const int m0 = m_tile * p.tile_m;
  const int rows = min(p.tile_m, M - m0);  // rows of x in this tile, >= 1
  const int col0 = (n_block * WN + wn) * (16 * kMmaMT);
  const int CK = mma_step(NT) * KS;  // codes per chunk
  const int nch_all = (K + CK - 1) / CK;
  const int cb = kSplit ? static_cast<int>(blockIdx.y) * p.cps : 0;  // first chunk
  const int nch = kSplit ? min(p.cps, nch_all - cb) : nch_all;       // >= 1 (host)
  const int K0 = cb * CK;  // first code of this block's K range
  const int buf_slots = KS * LW * NT * 32;

  // The warp's 4 weight rows: col0 + g + 8 r, r = 2 mt + h. Rows >= N are
  // never dereferenced (every load is predicated on rok).
  const size_t rb = static_cast<size_t>(K) / 2, sb = static_cast<size_t>(K) / 16;
  const uint8_t* const wbase = p.w + static_cast<size_t>(col0 + g) * rb;
  const uint8_t* const sbase = p.s + static_cast<size_t>(col0 + g) * sb;
  auto wrow = [&](int mt, int h) { return wbase + static_cast<size_t>(16 * mt + 8 * h) * rb; };
  auto srow = [&](int mt, int h) { return sbase + static_cast<size_t>(16 * mt + 8 * h) * sb; };
  bool rok[kMmaMT][2];
#pragma unroll
  for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) rok[mt][h] = col0 + 16 * mt + 8 * h + g < N;
  // First code of this lane's 8 * LW in chunk c; how many of its 16-code
  // granules lie below K; the same for row (mt, h) (0 if the row is >= N).
  auto lane_k = [&](int c) { return K0 + c * CK + 32 * LW * kw + 8 * LW * t; };
  auto granules = [&](int kb) { return min(LW / 2, max(0, (K - kb) >> 4)); };
  auto nv_of = [&](int nv, int mt, int h) { return rok[mt][h] ? nv : 0; };

  // x staging: 16-byte group u = tid + 256 j (j = 0..3) of the chunk: row r,
  // group kg (8 codes at c * CK + 8 kg) = word kg % LW of lane (kg / LW) % 4
  // of k-warp kg / (4 LW). One group is in flight per thread at a time.
  // Groups per row: 4 * LW * KS = 1 << sh (read from the parameter bank).
  const T* x = static_cast<const T*>(p.x);
  // kGroupSync: u = (wn * 32 + lane) + WN * 32 * j over this k-warp's rows x
  // 4 LW groups; kg = kw * 4 LW + u % (4 LW). rows / WN = rows * KS / 8 <= 4
  // groups per thread (the host's staging bound).
  auto stage_u = [&](int j) {
    return kGroupSync ? (wn * 32 + lane) + WN * 32 * j : tid + kMmaThreads * j;
  };
  auto stage_rk = [&](int u, int& r, int& kg) {
    if constexpr (kGroupSync) {
      constexpr int gsh = LW == 8 ? 5 : 4;  // 4 * LW groups per row and k-warp
      r = u >> gsh;
      kg = (kw << gsh) + (u & ((1 << gsh) - 1));
    } else {
      const int sh = (LW == 8 ? 5 : 4) + p.ks_log2;
      r = u >> sh;
      kg = u & ((1 << sh) - 1);
    }
  };
  auto stage_n = [&]() {  // groups staged by this thread's set
    int n = kGroupSync ? rows << (LW == 8 ? 5 : 4) : rows << ((LW == 8 ? 5 : 4) + p.ks_log2);
    // The layout-1 / 2 two-n-tile kernels with the K split across blocks sit at their 128
    // registers: held across the K loop, one of the four staging predicates (u < n) went to
    // local memory (4 bytes, an L1 load per chunk). Laundered, n is re-read per chunk and the
    // compare recomputed instead (+5 loop instructions of ~790, no spill).
    if constexpr (kWL != kLayoutStd && NT == 2 && kSplit) asm volatile("" : "+r"(n));
    return n;
  };
  auto stage_load = [&](int c, int j) {
    const int u = stage_u(j);
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (u < stage_n()) {
      int r, kg;
      stage_rk(u, r, kg);
      const int k = K0 + c * CK + 8 * kg;
      if (k < K) v = __ldg(reinterpret_cast<const uint4*>(x + static_cast<size_t>(m0 + r) * K + k));
    }
    return v;
  };
  auto stage_store = [&](int buf, int j, uint4 v) {
    const int u = stage_u(j);
    if (u < stage_n()) {
      int r, kg;
      stage_rk(u, r, kg);
      const int kq = kg / (4 * LW), tq = (kg / LW) & 3, i = kg % LW;
      const int slot = ((((kq * LW + i) * NT + (r >> 3)) * 8 + (r & 7)) * 4 + tq) ^ (i * XS);
      smem[buf * buf_slots + slot] = x_pairs<O, kWL>(v);
    }
  };

  // The per-chunk barrier: the whole block, or (kGroupSync) the WN warps of
  // this k-warp, the only ones that write and read its x slots.
  auto chunk_sync = [&]() {
    if constexpr (kGroupSync)
      named_barrier(1 + kw, WN * 32);
    else
      __syncthreads();
  };

  uint32_t W[kMmaMT][2][LW];
  uint32_t S[kMmaMT][2];
  float acc[kMmaMT][NT][4];

  // Weight ring (aligned K only: every 16-byte unit then lies entirely inside
  // or outside a row). Chunk c of this warp: bytes c * CK / 2 + 128 kw ..
  // + 128 of its 32 rows; lane (g, t) reads units 2t, 2t + 1 of rows
  // 8h + g of sub-stage mt: the same bytes the direct loads give it.
  constexpr bool kRing = kAligned && LW == 8;
  static_assert(!kRing || kMmaMT * 16 == 32, "ring stage holds 32 rows");
  // The block scales ride the ring with the weight (before 2026-12-01: one
  // dependent __ldg per row and chunk; measured A/B in run 2026-12-01_0314:
  // 28672x8192 M = 1 / 8: 53.8 / 58.8 us against 57.6 / 65.0, 4096x14336
  // M = 8: 35.5 against 40.8; M = 16 within 1 %).
  // Copy u (0..3) of a stage: rows 8u + lane / 4, 4-byte unit lane % 4, so a
  // quad reads a row's 16 contiguous bytes and one instruction touches 8
  // rows (a lane per row made 4x the L1/L2 requests: 128256x4096 M = 1 ran
  // 120 us against 110 with __ldg, run 2026-12-01_0310).
  const int srow0 = col0 + (lane >> 2), sunit = lane & 3;
  const int srows = N - srow0;  // copy u has a row iff 8u < srows
  // kTiled (layout 4: a tile's scales of a 128-code piece are one 128-byte run, row r at 8 r): row
  // col0 + 8u + lane / 4's word sunit of the chunk lies at tile col0 / 16 + u / 2, piece kc / 128 +
  // sunit / 2, byte 8 (8 (u % 2) + lane / 4) + 4 (sunit % 2); sring holds the parts fixed per lane.
  const uint8_t* const sring =
      kTiled ? p.s + static_cast<size_t>(col0 / 16) * K + 128 * (sunit >> 1) + 8 * (lane >> 2) + 4 * (sunit & 1)
             : p.s + static_cast<size_t>(srows > 0 ? srow0 : 0) * (static_cast<size_t>(K) / 16) + 4 * sunit;
  const uint32_t sdst0 = kMmaRingWeightBytes + 16 * (lane >> 2) + 4 * sunit;
  ring::Producer<1, 4 * kMmaMT, kTiled> prod;  // 32 rows: sub-stage mt = rows 16 mt ..
  uint32_t ring0 = 0, rd_off[2][2] = {{0u, 0u}, {0u, 0u}};
  int ring_slot = 0;
  if constexpr (kRing) {
    prod.init(p.w, col0, N, K / 2, lane);
    ring0 = ring::smem_u32addr(reinterpret_cast<const uint8_t*>(smem) +
                               (kXRes ? p.ring_off : mma_ring_offset(KS, NT))) +
            warp * kMmaRingWarpBytes;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int q = 0; q < 2; ++q) rd_off[h][q] = ring::unit_offset<1>(8 * h + g, 2 * t + q);
  }
  auto ring_issue = [&](int c, uint32_t stage) {
    prod.issue(stage, K0 / 2 + c * (CK / 2) + 128 * kw);
    // The warp's 16 block scales of the chunk for each of its 32 rows
    // (K % 64 == 0 keeps each 4-byte unit wholly inside or outside K).
    const int kc = K0 + c * CK + 256 * kw;  // first code of the warp's piece
    const uint32_t ssz = kc + 64 * sunit < K ? 4u : 0u;
    const size_t s8 = static_cast<size_t>(K) / 2;  // 8 rows of scales, bytes
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const uint8_t* const src =
          kTiled ? sring + kc + static_cast<size_t>(u >> 1) * K + 64 * (u & 1) : sring + kc / 16 + u * s8;
      ring::cp4_if(stage + sdst0 + 128 * u, src, ssz, 8 * u < srows);
    }
  };
#pragma unroll
  for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mt][nt][j] = 0.0f;

  bool use_f16 = false;   // kF16: this block's loop runs on fp16 (x staged exactly)
  // PDL (common/pdl.h): wait for the predecessor before loading anything, or ("smem")
  // after the first weight stages below are in flight.
  if (!p.pdl_early) pdl_wait();
  // Prologue: chunk 0's weights (ring: the first kMmaRingStages chunks) and
  // scales in flight, its x staged.
  if constexpr (kRing) {
#pragma unroll
    for (int st = 0; st < kMmaRingStages; ++st) {
      if (st < nch) ring_issue(st, ring0 + st * kMmaRingStageBytes);
      ring::commit();  // empty groups keep the count uniform
    }
  }
  {
    const int kb = lane_k(0), nv = granules(kb);
#pragma unroll
    for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if constexpr (!kRing) {  // the ring kernel copies weight and scales in the loop
#pragma unroll
          for (int q = 0; q < LW / 4; ++q)
            mma_load_words<LW, kAligned>(wrow(mt, h), kb, nv_of(nv, mt, h), q, W[mt][h]);
          S[mt][h] = mma_load_scales<LW, kAligned>(srow(mt, h), kb, nv_of(nv, mt, h));
        }
      }
    // PDL "smem": the first weight stages (and scales) above were issued before the wait;
    // x, the bias, the global scale and y wait for the predecessor here.
    if (p.pdl_early) pdl_wait();
    if constexpr (kXRes) {
      // Stages x as C's pairs; with C = fp16 for bf16 x (kF16), returns whether a value did not
      // convert exactly.
      auto xres_stage = [&](auto tag) {
        using C = typename decltype(tag)::type;
        constexpr bool kConv = !std::is_same_v<C, T>;
        uint32_t amax = 0u, bmin = 0x7FFF7FFFu;
        // Every row's groups of the block's K range: thread tid's groups (r, v), v = tid + 256 i,
        // walked row after row, kMmaXresLoads loads in flight per round, so staging takes
        // ceil(rows * groups per thread / kMmaXresLoads) round trips to L2 rather than one per 4
        // loads of each row (docs/nvfp4_gemv.md 21). A round ends early at the last group.
        const int per_row = nch * KS * 32;
        const int stride = mma_xres_stride(per_row);
        int r = tid < per_row ? 0 : rows, v = tid;  // the thread's next group
        while (r < rows) {
          const int r0 = r, v0 = v;
          uint4 val[kMmaXresLoads];
          int n = 0;
#pragma unroll
          for (int j = 0; j < kMmaXresLoads; ++j) {
            if (r >= rows) break;
            val[j] = make_uint4(0u, 0u, 0u, 0u);
            if (K0 + 8 * v < K)
              val[j] = __ldg(reinterpret_cast<const uint4*>(x + static_cast<size_t>(m0 + r) * K + K0 + 8 * v));
            n = j + 1;
            v += kMmaThreads;
            if (v >= per_row) {
              v = tid;
              ++r;
            }
          }
          r = r0;
          v = v0;
#pragma unroll
          for (int j = 0; j < kMmaXresLoads; ++j) {
            if (j >= n) break;
            uint4 xv = val[j];
            if constexpr (kConv) {
              bf16x8_range(xv, amax, bmin);
              xv = bf16x8_to_f16x8(xv);
            }
            smem[r * stride + (v >> 5) * 32 + (v & 7) * 4 + ((v >> 3) & 3)] = x_pairs<Ops<C>, kWL>(xv);
            v += kMmaThreads;
            if (v >= per_row) {
              v = tid;
              ++r;
            }
          }
        }
        return kConv && !bf16_range_fits_f16(amax, bmin);
      };
      if constexpr (kF16 != 0) {
        use_f16 = !__syncthreads_or(xres_stage(TypeTag<__half>{})) || p.f16_unchecked;
        if (!use_f16) xres_stage(TypeTag<T>{});  // every thread passed the barrier above
      } else {
        xres_stage(TypeTag<T>{});
      }
      __syncthreads();
    } else {
#pragma unroll
      for (int j = 0; j < kMmaMaxStage; ++j) stage_store(0, j, stage_load(0, j));
      chunk_sync();
    }
  }
  // The global scale for the epilogue, loaded now (after the wait, ahead of the K loop) so
  // that no block ends on an L2 round trip for it. Not in the layout-1 / 2 two-n-tile kernels
  // nor in any two-n-tile kernel built for sm_80..89: at their 128 registers the value would be
  // spilled across the loop (the sm_80 fp16 kernel with per-k-warp staging did); they load it
  // after.
#if __CUDA_ARCH__ < 900
  constexpr bool kPreHopper = true;
#else
  constexpr bool kPreHopper = false;
#endif
  constexpr bool kLateGs = NT == 2 && (kWL != kLayoutStd || kPreHopper);
  const float gscale = kSplit || kLateGs ? 0.0f : __ldg(p.gs);
  // kXRes: lane (g, t)'s row of x (rows g >= rows read the last row: their D
  // columns are never stored) and group t of its k-warp's words.
  const uint4* const xres =
      smem + (kXRes ? min(g, rows - 1) * mma_xres_stride(nch * KS * 32) + kw * (LW * 4) + t : 0);

  // The K loop, on C's decode and mma (C = T, or fp16 for kF16 blocks whose x staged exactly).
  auto kloop = [&](auto tag) {
    using OC = Ops<typename decltype(tag)::type>;
    for (int c = 0; c < nch; ++c) {
      const bool more = c + 1 < nch;
      if constexpr (kRing) {
        // Chunk c's stage has landed; copy it to registers, then refill the
        // slot with chunk c + kMmaRingStages.
        ring::wait_pending<kMmaRingStages - 1>();
        __syncwarp();
        const uint32_t st = ring0 + ring_slot * kMmaRingStageBytes;
#pragma unroll
        for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
              const uint4 v = ring::lds128(st + mt * ring::kStageBytes + rd_off[h][q]);
              W[mt][h][4 * q + 0] = v.x;
              W[mt][h][4 * q + 1] = v.y;
              W[mt][h][4 * q + 2] = v.z;
              W[mt][h][4 * q + 3] = v.w;
            }
#pragma unroll
        for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h)  // this lane's 4 block scales of row (mt, h)
            S[mt][h] = ring::lds32(st + kMmaRingWeightBytes + 16 * (16 * mt + 8 * h + g) + 4 * t);
        __syncwarp();  // every lane has read the slot before it is refilled
        if (c + kMmaRingStages < nch) ring_issue(c + kMmaRingStages, st);
        ring::commit();
        ring_slot = ring_slot + 1 == kMmaRingStages ? 0 : ring_slot + 1;
      }
      const int kb_next = lane_k(c + 1), nv_next = granules(kb_next);
      const uint4* xs = kXRes ? xres + c * (KS * LW * 4) : smem + (c & 1) * buf_slots + kw * (LW * NT * 32);
      uint4 xr;  // one 16-byte group of chunk c+1's x, bound for the other buffer
      // Block scales as packed pairs: blocks 0,1 (words 0..3) now; with LW = 8
      // blocks 2,3 at word 4. Then S is free for chunk c+1's.
      uint32_t SP[kMmaMT][2];
#pragma unroll
      for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          SP[mt][h] = OC::scale_pair(S[mt][h]);
          if (LW == 4 && more)
            S[mt][h] = mma_load_scales<LW, kAligned>(srow(mt, h), kb_next, nv_of(nv_next, mt, h));
        }

#pragma unroll
      for (int i = 0; i < LW; ++i) {
        // x group i / 2 of chunk c+1 (LW = 8: all four groups; LW = 4: groups
        // 0, 1 here, 2, 3 after the loop): loaded at even words, stored at odd.
        if (!kXRes && more && (i & 1) == 0) xr = stage_load(c + 1, i >> 1);
        if (LW == 8 && i == 4) {
#pragma unroll
          for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              SP[mt][h] = OC::scale_pair(S[mt][h] >> 16);
              if (!kRing && more)
                S[mt][h] = mma_load_scales<LW, kAligned>(srow(mt, h), kb_next, nv_of(nv_next, mt, h));
            }
        }
        // B fragments of word i: {b0, b1} of step 2i and of step 2i+1. Lanes of
        // x rows >= M may read slots never staged (garbage, even NaN): those
        // only reach D columns (x rows) that are never stored, since an mma
        // column depends on its own B column alone, so no predicate is needed.
        uint4 B[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          B[nt] = kXRes ? xs[i * 4] : xs[((i * NT + nt) * 32 + lane) ^ (i * XS)];
        // Word i lies in block i / 2 of the lane's codes: half (i / 2) & 1 of
        // the current scale pair.
#pragma unroll
        for (int mt = 0; mt < kMmaMT; ++mt) {
          uint32_t a[4], b[4];  // rows g and g + 8
          decode_word<OC, kWL>(W[mt][0][i], a);
          decode_word<OC, kWL>(W[mt][1][i], b);
          const uint32_t sa = ((i >> 1) & 1) ? dup_hi(SP[mt][0]) : dup_lo(SP[mt][0]);
          const uint32_t sbb = ((i >> 1) & 1) ? dup_hi(SP[mt][1]) : dup_lo(SP[mt][1]);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            a[j] = OC::mul(a[j], sa);
            b[j] = OC::mul(b[j], sbb);
          }
          // Both n-tiles always: a tile with <= 8 rows of x leaves n-tile 1 on
          // garbage B columns that are never stored. (Branching around it makes
          // ptxas keep more live across the branch and spill.)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            OC::mma(acc[mt][nt], a[0], b[0], a[1], b[1], B[nt].x, B[nt].y);
            OC::mma(acc[mt][nt], a[2], b[2], a[3], b[3], B[nt].z, B[nt].w);
          }
        }
        if (!kXRes && more && (i & 1) == 1) stage_store((c + 1) & 1, i >> 1, xr);
        if (!kRing && more && (i & 3) == 3) {
          // Refill the consumed 4 words of every row with chunk c+1 (prefetch
          // distance: one chunk).
#pragma unroll
          for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              mma_load_words<LW, kAligned>(wrow(mt, h), kb_next, nv_of(nv_next, mt, h), i >> 2,
                                           W[mt][h]);
        }
      }
      if (LW == 4 && more) {
#pragma unroll
        for (int j = 2; j < kMmaMaxStage; ++j) stage_store((c + 1) & 1, j, stage_load(c + 1, j));
      }
      if constexpr (!kXRes) chunk_sync();  // chunk c's buffer is free; chunk c+1's is complete
    }
  };
  if constexpr (kF16 != 0) {
    if (use_f16)
      kloop(TypeTag<__half>{});
    else
      kloop(TypeTag<T>{});
  } else {
    kloop(TypeTag<T>{});
  }
  if constexpr (kRing) ring::wait_pending<0>();
  if constexpr (kGroupSync || kXRes) __syncthreads();  // all k-warps are done with the x buffers

  // Sum the KS partials (fixed order: kw = 0, 1, ...) in the x buffers,
  // which every warp is done with (the loop ends with a barrier).
  if (KS > 1) {
    float* red = reinterpret_cast<float*>(smem);
    constexpr int kVals = kMmaMT * NT * 4;
    if (kw > 0) {
      float* dst = red + ((kw - 1) * WN + wn) * kVals * 32;
#pragma unroll
      for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int j = 0; j < 4; ++j) dst[((mt * NT + nt) * 4 + j) * 32 + lane] = acc[mt][nt][j];
    }
    __syncthreads();
    if (kw == 0) {
      for (int q = 1; q < KS; ++q) {
        const float* src = red + ((q - 1) * WN + wn) * kVals * 32;
#pragma unroll
        for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int j = 0; j < 4; ++j)
              acc[mt][nt][j] += src[((mt * NT + nt) * 4 + j) * 32 + lane];
      }
    }
  }

  if (kw == 0) {
    // kSplit: raw fp32 sums to this split's slice of the workspace (the
    // reduce kernel applies the epilogue); otherwise the epilogue here.
    const float so = __fmul_rn(kLateGs && !kSplit ? __ldg(p.gs) : gscale, 128.0f);
    const T* bias = static_cast<const T*>(p.bias);
    T* y = static_cast<T*>(p.y);
    float* part = kSplit ? p.part + static_cast<size_t>(blockIdx.y) * M * N : nullptr;
    // D fragment: c0, c1 -> weight row (output column) g, x rows 2t, 2t+1;
    // c2, c3 -> weight row g + 8.
#pragma unroll
    for (int mt = 0; mt < kMmaMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int n = col0 + 16 * mt + g + 8 * (j >> 1);
          const int mr = 8 * nt + 2 * t + (j & 1);  // row inside the tile
          const int m = m0 + mr;
          if (n < N && mr < rows) {
            if constexpr (kSplit)
              part[static_cast<size_t>(m) * N + n] = acc[mt][nt][j];
            else
              y[static_cast<size_t>(m) * N + n] = epilogue<T>(acc[mt][nt][j], so, bias, n);
          }
        }
  }
#endif  // __CUDA_ARCH__ >= 800
}

// ------------------------------------------------ direct GEMV (layout 3) --
// docs/nvfp4_gemv.md 27-28: the int8 GEMV's stream shape. A block owns 16 weight rows (one m16
// tile) and a tile of <= 8 x rows (the mma's n8; larger M loops over tiles); its 8 warps take the
// 64-byte pieces (128 codes) w, w + 8, ... of every row, so the block reads 512 contiguous bytes
// of each row per step, straight into registers. Lane (g, t) loads bytes 16t .. 16t + 15 of the
// piece of rows g and g + 8 (4 words, 32 codes each), the two block scales of those codes per row
// (2 bytes, L1-cached: the 8 warps read 64 contiguous scale bytes of a row per step) and, per
// word, the 8 x values of its codes for x row g of the tile (16 bytes, L1-cached; every block
// re-reads x). Layout 3 makes the decoded pairs adjacent codes, so those 16 bytes are the B
// fragments of the word's two m16n8k16 as loaded. U pieces are in flight per lane (the default
// build: kDirectU, 72 registers, three blocks (24 warps) per SM: the warps hide the decode; the
// other builds of nvfp4_gemv.cu direct_kernel hold more bytes in flight). The 8 warps' 16 x 8
// tiles are summed through shared memory in warp order (deterministic), then the epilogue.
// Needs K % 128 == 0, w 16-byte and w_scale 2-byte aligned, x 16-byte aligned (host).
constexpr int kDirectWarps = 8;
constexpr int kDirectThreads = kDirectWarps * 32;
constexpr int kDirectU = 2;  // the default: pieces of loads in flight per lane (H100: 2 beat 3, 4, 8)
constexpr int kDirectRows = 8;  // x rows per token tile

// Word q (codes 32t + 8q .. + 7 of a piece) of the direct kernels' rows g (wl) and g + 8 (wh):
// the layout-3 decode with the block scales folded (spl / sph: the piece's two bf16x2 scale pairs
// of each row, Ops::scale_pair), as the A fragments (a: row g, b: row g + 8) of the word's two
// m16n8k16.
__device__ __forceinline__ void direct_word_decode(uint32_t (&a)[4], uint32_t (&b)[4], uint32_t wl, uint32_t wh,
                                                   uint32_t spl, uint32_t sph, int q) {
  using O = Ops<__nv_bfloat16>;
  decode_word<O, kLayoutBf16Adj>(wl, a);
  decode_word<O, kLayoutBf16Adj>(wh, b);
  const uint32_t sa = (q >> 1) ? dup_hi(spl) : dup_lo(spl);
  const uint32_t sbb = (q >> 1) ? dup_hi(sph) : dup_lo(sph);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    a[j] = O::mul(a[j], sa);
    b[j] = O::mul(b[j], sbb);
  }
}

// The word's two m16n8k16 against x's 8 values xv of its codes.
__device__ __forceinline__ void direct_word_mma(float (&acc)[4], const uint32_t (&a)[4], const uint32_t (&b)[4],
                                                const uint4& xv) {
  using O = Ops<__nv_bfloat16>;
  O::mma(acc, a[0], b[0], a[1], b[1], xv.x, xv.y);  // pairs 0, 1: codes 0..3 of the word
  O::mma(acc, a[2], b[2], a[3], b[3], xv.z, xv.w);  // pairs 2, 3: codes 4..7
}

// Both, for one token tile.
__device__ __forceinline__ void direct_word_mma(float (&acc)[4], uint32_t wl, uint32_t wh, uint32_t spl,
                                                uint32_t sph, int q, const uint4& xv) {
  uint32_t a[4], b[4];
  direct_word_decode(a, b, wl, wh, spl, sph, q);
  direct_word_mma(acc, a, b, xv);
}

// The direct kernels' reduction: the 8 warps' [x row][weight row] tiles of a block of R weight rows
// and TR x rows summed in warp order (deterministic), then the epilogue, for x rows m0 .. m0 +
// rows - 1 of y (rows <= TR).
template <int R, int TR>
__device__ __forceinline__ void direct_sum_store(const float (&red)[kDirectWarps][TR][R], int tid,
                                                 int m0, int rows, int n0, int N, float so,
                                                 const __nv_bfloat16* bias, __nv_bfloat16* y) {
  const auto one = [&](unsigned i) {  // output i: x row i / R, weight row i % R
    const int ml = static_cast<int>(i / R), nl = static_cast<int>(i % R), n = n0 + nl;
    if (ml < rows && n < N) {
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < kDirectWarps; ++w) s += red[w][ml][nl];
      y[static_cast<size_t>(m0 + ml) * N + n] = epilogue<__nv_bfloat16>(s, so, bias, n);
    }
  };
  if constexpr (TR * R <= kDirectThreads) {
    if (tid < TR * R) one(static_cast<unsigned>(tid));
  } else {
#pragma unroll
    for (int i = tid; i < TR * R; i += kDirectThreads) one(static_cast<unsigned>(i));
  }
}

// kMinBlocks: the launch bounds' blocks per SM (3: <= 80 registers); kPipe: the next round's
// loads are issued before this round's decode (two register sets, twice the bytes in flight per
// warp at the same U); kXr: each piece's x (4 x 16 bytes per lane) is loaded with its weight in
// the round's issue, so the x loads' latency overlaps the weight's instead of standing before
// each word's mma, and only lanes of real x rows (g < rows) load it (the others hold zeros: their
// D columns are never stored). docs/nvfp4_gemv.md 33: on an H100 with the weight in L2 the x
// loads, not the decode, held this kernel's SM side to ~3.3 TB/s. kTiled: the weight and scales
// in layout 4 (nvfp4_tiles.h; N % 16 == 0): piece pc of the block's tile is one 1 KB run (row r at
// 64 r) and its scales one 128-byte line (row r at 8 r), so a weight load reads 4 whole lines and
// a scale load 1 (8 half lines and 8 lines in rows; docs/nvfp4_gemv.md 39-40). Same bytes into
// the same registers: the same bits.
template <int U, int kMinBlocks = 3, bool kPipe = false, bool kXr = false, bool kTiled = false>
__global__ void __launch_bounds__(kDirectThreads, kMinBlocks) nvfp4_gemv_direct_kernel(const GemvParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using O = Ops<__nv_bfloat16>;
  __shared__ float red[kDirectWarps][kDirectRows][16];
  pdl_launch_dependents();
  pdl_wait();  // everything this kernel reads may come from the kernel before
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int M = p.M, N = p.N, K = p.K;
  const int pieces = K / 128;
  const int n0 = blockIdx.x * 16;
  const bool v_lo = n0 + g < N, v_hi = n0 + g + 8 < N;  // rows past N: never loaded or stored
  const size_t rb = static_cast<size_t>(K) / 2, sb = static_cast<size_t>(K) / 16;
  const size_t tp = static_cast<size_t>(blockIdx.x) * pieces;  // kTiled: (tile, piece 0)'s index
  const uint8_t* const w_lo = kTiled ? p.w + tp * 1024 + 64 * g + 16 * t
                                     : p.w + static_cast<size_t>(v_lo ? n0 + g : 0) * rb + 16 * t;
  const uint8_t* const w_hi = kTiled ? w_lo + 512 : p.w + static_cast<size_t>(v_hi ? n0 + g + 8 : 0) * rb + 16 * t;
  const uint8_t* const s_lo = kTiled ? p.s + tp * 128 + 8 * g + 2 * t
                                     : p.s + static_cast<size_t>(v_lo ? n0 + g : 0) * sb + 2 * t;
  const uint8_t* const s_hi = kTiled ? s_lo + 64 : p.s + static_cast<size_t>(v_hi ? n0 + g + 8 : 0) * sb + 2 * t;
  constexpr int kWp = kTiled ? 1024 : 64, kSp = kTiled ? 128 : 8;  // a piece's stride
  // 2^7 * global: undoes the decode's 2^-7. On sm_80 it is loaded per token tile after the main
  // loop instead: held from here, it was the one value spilled (4 bytes) at build 8's 80 registers.
  // sm_90's code is unchanged (no spill there; its timings were taken with this load here).
#if __CUDA_ARCH__ >= 900
  const float so = __fmul_rn(__ldg(p.gs), 128.0f);
#endif
  const __nv_bfloat16* const bias = static_cast<const __nv_bfloat16*>(p.bias);
  __nv_bfloat16* const y = static_cast<__nv_bfloat16*>(p.y);
  for (int m0 = blockIdx.y * kDirectRows; m0 < M; m0 += gridDim.y * kDirectRows) {
    const int rows = min(kDirectRows, M - m0);
    // x row g of the tile (rows g >= rows read the tile's first row: their D columns are
    // never stored, an mma column depends on its own B column only)
    const __nv_bfloat16* const xrow =
        static_cast<const __nv_bfloat16*>(p.x) + static_cast<size_t>(m0 + (g < rows ? g : 0)) * K + 32 * t;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    uint4 wl[U], wh[U];
    uint32_t sl[U], sh[U];
    uint4 xr[kXr ? U : 1][4];  // kXr: the round's x
    const bool x_real = g < rows;
    // the round of U pieces at c (pieces past the row: not loaded)
    const auto issue = [&](int c, uint4* l, uint4* h, uint32_t* s0, uint32_t* s1) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int cc = c + kDirectWarps * u;
        const bool in = cc < pieces;
        const size_t pc = in ? static_cast<size_t>(cc) : 0;
        l[u] = ld_stream_v4_if(w_lo + kWp * pc, in && v_lo);
        h[u] = ld_stream_v4_if(w_hi + kWp * pc, in && v_hi);
        s0[u] = ld_u16_if(s_lo + kSp * pc, in && v_lo);
        s1[u] = ld_u16_if(s_hi + kSp * pc, in && v_hi);
        if constexpr (kXr) {
#pragma unroll
          for (int q = 0; q < 4; ++q) xr[u][q] = ld_cached_v4_if(xrow + 128 * pc + 8 * q, in && x_real);
        }
      }
    };
    uint4 wl_next[kPipe ? U : 1], wh_next[kPipe ? U : 1];  // kPipe: the next round's registers
    uint32_t sl_next[kPipe ? U : 1], sh_next[kPipe ? U : 1];
    if constexpr (kPipe) issue(warp, wl, wh, sl, sh);
    for (int c = warp; c < pieces; c += kDirectWarps * U) {
      if constexpr (kPipe) {
        issue(c + kDirectWarps * U, wl_next, wh_next, sl_next, sh_next);  // the next round, then decode this one
      } else {
        issue(c, wl, wh, sl, sh);  // issue U pieces, then consume them
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int cc = c + kDirectWarps * u;
        if (cc >= pieces) break;
        const uint32_t spl = O::scale_pair(sl[u]), sph = O::scale_pair(sh[u]);
        const uint32_t wlw[4] = {wl[u].x, wl[u].y, wl[u].z, wl[u].w};
        const uint32_t whw[4] = {wh[u].x, wh[u].y, wh[u].z, wh[u].w};
        const __nv_bfloat16* const xp = xrow + static_cast<size_t>(cc) * 128;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          // codes 32t + 8q .. + 7 of the piece: word q, block 2t + q / 2 of the piece's 8
          const uint4 xv = kXr ? xr[u][q] : __ldg(reinterpret_cast<const uint4*>(xp + 8 * q));
          direct_word_mma(acc, wlw[q], whw[q], spl, sph, q, xv);
        }
      }
      if constexpr (kPipe) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          wl[u] = wl_next[u];
          wh[u] = wh_next[u];
          sl[u] = sl_next[u];
          sh[u] = sh_next[u];
        }
      }
    }
#if __CUDA_ARCH__ < 900
    const float so = __fmul_rn(__ldg(p.gs), 128.0f);  // issued before the barrier: its latency overlaps it
#endif
    // D fragment: acc[0], acc[1] -> row g, x rows 2t, 2t + 1; acc[2], acc[3] -> row g + 8.
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp][2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[r];
    __syncthreads();
    direct_sum_store(red, tid, m0, rows, n0, N, so, bias, y);
    __syncthreads();  // red is rewritten by the next token tile
  }
#endif  // __CUDA_ARCH__ >= 800
}

// (2026-12-06d) The direct GEMV with kTiles m16 tiles per block (16 kTiles weight rows) and kNt
// token tiles of 8 x rows per pass: lane (g, t) loads the piece's 16 bytes of rows g, g + 8, ...,
// g + 8 (2 kTiles - 1) and their scales, and the piece's x (4 x 16 bytes per token tile, with the
// weight, as kXr above) once for all kTiles tiles' mma, so a block loads x once per 16 kTiles
// rows: kTiles times fewer x loads per weight byte, and kTiles times less x through L1 / L2 (at
// M = 8 on a 4096-wide x, 64 KB per block against the block's 32 kTiles KB of weight). Each word is
// decoded once for the kNt token tiles (M = 9..16 in one pass with kNt = 2, where the 16-row
// kernel reads and decodes the weight once per tile). docs/nvfp4_gemv.md 34 has the probe and the
// A/B. Otherwise as nvfp4_gemv_direct_kernel: the same pieces, order of sums per output and bits
// (kTiled as there: row g + 8 r in half r % 2 of tile r / 2's runs).
template <int kTiles, int U, int kMinBlocks, int kNt = 1, bool kTiled = false>
__global__ void __launch_bounds__(kDirectThreads, kMinBlocks) nvfp4_gemv_direct_rows_kernel(const GemvParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using O = Ops<__nv_bfloat16>;
  constexpr int kR = 2 * kTiles;          // weight rows per lane
  constexpr int kTR = kDirectRows * kNt;  // x rows per pass
  __shared__ float red[kDirectWarps][kTR][16 * kTiles];
  pdl_launch_dependents();
  pdl_wait();  // everything this kernel reads may come from the kernel before
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int M = p.M, N = p.N, K = p.K;
  const int pieces = K / 128;
  const int n0 = blockIdx.x * 16 * kTiles;
  // row g + 8 r of the block at w0 + 8 r rb (s0 + 8 r sb); bit r of valid: that row is < N (rows
  // past N are never loaded or stored)
  const size_t rb = static_cast<size_t>(K) / 2, sb = static_cast<size_t>(K) / 16;
  const size_t tp = static_cast<size_t>(n0 / 16) * pieces;  // kTiled: (first tile, piece 0)'s index
  const uint8_t* const w0 = kTiled ? p.w + tp * 1024 + 64 * g + 16 * t : p.w + static_cast<size_t>(n0 + g) * rb + 16 * t;
  const uint8_t* const s0 = kTiled ? p.s + tp * 128 + 8 * g + 2 * t : p.s + static_cast<size_t>(n0 + g) * sb + 2 * t;
  // row g + 8 r's offset, and a piece's stride
  const auto w_row = [&](int r) { return kTiled ? (r / 2) * static_cast<size_t>(pieces) * 1024 + (r % 2) * 512 : 8 * r * rb; };
  const auto s_row = [&](int r) { return kTiled ? (r / 2) * static_cast<size_t>(pieces) * 128 + (r % 2) * 64 : 8 * r * sb; };
  constexpr int kWp = kTiled ? 1024 : 64, kSp = kTiled ? 128 : 8;
  uint32_t valid = 0;
#pragma unroll
  for (int r = 0; r < kR; ++r) valid |= (n0 + g + 8 * r < N ? 1u : 0u) << r;
  const float so = __fmul_rn(__ldg(p.gs), 128.0f);  // 2^7 * global: undoes the decode's 2^-7
  const __nv_bfloat16* const bias = static_cast<const __nv_bfloat16*>(p.bias);
  __nv_bfloat16* const y = static_cast<__nv_bfloat16*>(p.y);
  for (int m0 = blockIdx.y * kTR; m0 < M; m0 += gridDim.y * kTR) {
    const int rows = min(kTR, M - m0);
    // x row 8 j + g of the pass for token tile j (rows past M read the pass's first row and hold
    // zeros: their D columns are never stored, an mma column depends on its own B column only)
    const __nv_bfloat16* xrow[kNt];
    bool x_real[kNt];
#pragma unroll
    for (int j = 0; j < kNt; ++j) {
      x_real[j] = 8 * j + g < rows;
      xrow[j] = static_cast<const __nv_bfloat16*>(p.x) +
                static_cast<size_t>(m0 + (x_real[j] ? 8 * j + g : 0)) * K + 32 * t;
    }
    float acc[kTiles][kNt][4] = {};
    uint4 w[U][kR], xr[U][kNt][4];
    uint32_t sc[U][kR];
    for (int c = warp; c < pieces; c += kDirectWarps * U) {
#pragma unroll
      for (int u = 0; u < U; ++u) {  // issue U pieces (pieces past the row: not loaded)
        const int cc = c + kDirectWarps * u;
        const bool in = cc < pieces;
        const size_t pc = in ? static_cast<size_t>(cc) : 0;
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          const bool ok = in && ((valid >> r) & 1u);
          w[u][r] = ld_stream_v4_if(w0 + w_row(r) + kWp * pc, ok);
          sc[u][r] = ld_u16_if(s0 + s_row(r) + kSp * pc, ok);
        }
#pragma unroll
        for (int j = 0; j < kNt; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) xr[u][j][q] = ld_cached_v4_if(xrow[j] + 128 * pc + 8 * q, in && x_real[j]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {  // then consume them
        if (c + kDirectWarps * u >= pieces) break;
        uint32_t sp[kR];
#pragma unroll
        for (int r = 0; r < kR; ++r) sp[r] = O::scale_pair(sc[u][r]);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
#pragma unroll
          for (int tt = 0; tt < kTiles; ++tt) {  // tile tt: rows g + 16 tt (lo) and g + 16 tt + 8 (hi)
            const uint4 lo = w[u][2 * tt], hi = w[u][2 * tt + 1];
            const uint32_t wl = q == 0 ? lo.x : q == 1 ? lo.y : q == 2 ? lo.z : lo.w;
            const uint32_t wh = q == 0 ? hi.x : q == 1 ? hi.y : q == 2 ? hi.z : hi.w;
            uint32_t a[4], b[4];
            direct_word_decode(a, b, wl, wh, sp[2 * tt], sp[2 * tt + 1], q);
#pragma unroll
            for (int j = 0; j < kNt; ++j) direct_word_mma(acc[tt][j], a, b, xr[u][j][q]);
          }
        }
      }
    }
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt)
#pragma unroll
      for (int j = 0; j < kNt; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          red[warp][8 * j + 2 * t + (r & 1)][16 * tt + g + 8 * (r >> 1)] = acc[tt][j][r];
    __syncthreads();
    direct_sum_store(red, tid, m0, rows, n0, N, so, bias, y);
    __syncthreads();  // red is rewritten by the next pass
  }
#endif  // __CUDA_ARCH__ >= 800
}

// The K split's second pass: y[m, n] = epilogue(sum over y-blocks s in
// order 0, 1, ... of part[s][m][n]) -- deterministic. One thread per output.
template <typename T>
__global__ void nvfp4_splitk_reduce_kernel(const float* __restrict__ part, int splits,
                                           const GemvParams p) {
  const size_t total = static_cast<size_t>(p.M) * p.N;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  float acc = part[i];
  for (int s = 1; s < splits; ++s) acc = __fadd_rn(acc, part[s * total + i]);
  const float so = __fmul_rn(__ldg(p.gs), 128.0f);
  const int n = static_cast<int>(i % static_cast<size_t>(p.N));
  static_cast<T*>(p.y)[i] = epilogue<T>(acc, so, static_cast<const T*>(p.bias), n);
}

// ------------------------------------------------------ fma GEMV kernel --
template <typename T, int MX, bool kAligned>
__global__ void __launch_bounds__(kFmaWarps * 32, 2) nvfp4_gemv_fma_kernel(const GemvParams p) {
  using O = Ops<T>;
  constexpr int R = fma_rows(MX);
  constexpr int GW = kAligned ? 4 : 2;  // words per lane per row per granule
  constexpr int GC = 8 * GW;            // codes per granule
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int M = p.M, N = p.N, K = p.K;
  const int m_tile = blockIdx.x % p.m_tiles;
  const int n_block = blockIdx.x / p.m_tiles;
  const int n0 = (n_block * kFmaWarps + warp) * R;
  if (n0 >= N) return;  // warp-uniform; no block-level barrier in this kernel
  const int m0 = m_tile * MX;
  const int mx = min(MX, M - m0);
  const int ngr = K / GC;  // exact: K % GC == 0 for both variants (host)
  const size_t rb = static_cast<size_t>(K) / 2, sb = static_cast<size_t>(K) / 16;
  const T* x = static_cast<const T*>(p.x) + static_cast<size_t>(m0) * K;

  float acc[MX][R];
#pragma unroll
  for (int m = 0; m < MX; ++m)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;

  uint32_t wv[R][GW], sv[R];
  auto load = [&](int gi) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const bool ok = gi < ngr && n0 + r < N;
      const uint8_t* row = p.w + static_cast<size_t>(ok ? n0 + r : 0) * rb;
      const uint8_t* srow = p.s + static_cast<size_t>(ok ? n0 + r : 0) * sb;
      if constexpr (kAligned) {
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        uint32_t s = 0u;
        if (ok) {
          v = ld_stream_v4(row + static_cast<size_t>(gi) * 16);
          s = __ldg(reinterpret_cast<const unsigned short*>(srow + static_cast<size_t>(gi) * 2));
        }
        wv[r][0] = v.x;
        wv[r][1] = v.y;
        wv[r][2] = v.z;
        wv[r][3] = v.w;
        sv[r] = s;
      } else {
        uint2 v = make_uint2(0u, 0u);
        uint32_t s = 0u;
        if (ok) {
          v = ld_stream_v2(row + static_cast<size_t>(gi) * 8);
          s = __ldg(srow + gi);
        }
        wv[r][0] = v.x;
        wv[r][1] = v.y;
        sv[r] = s;
      }
    }
  };

  // MX <= 2: the next granule is loaded while this one is consumed (the
  // math per granule is short). MX >= 4: enough math per granule that the
  // other warps hide the latency, and the registers go to the accumulators.
  constexpr bool kPrefetch = MX <= 2;
  int gi = lane;
  if (kPrefetch) load(gi);
  for (; gi < ngr; gi += 32) {
    uint32_t cw[R][GW], cs[R];
    if (!kPrefetch) load(gi);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      cs[r] = sv[r];
#pragma unroll
      for (int j = 0; j < GW; ++j) cw[r][j] = wv[r][j];
    }
    if (kPrefetch) load(gi + 32);

    uint32_t sp[R];
#pragma unroll
    for (int r = 0; r < R; ++r) sp[r] = e4m3x2_to_f16x2_x128(cs[r]);

#pragma unroll
    for (int wd = 0; wd < GW; ++wd) {
      // Decoded weights of word wd for the R rows, fp32, natural k order.
      float f[R][8];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        uint32_t h[4];
        decode_e2m1_f16(cw[r][wd], h);
        const uint32_t sc = (wd >> 1) ? dup_hi(sp[r]) : dup_lo(sp[r]);
        float2 fv[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t v = mul_f16x2(h[j], sc);
          __half2 hv;
          memcpy(&hv, &v, sizeof(hv));
          fv[j] = __half22float2(hv);
        }
        // h0 = (n0, n2), h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7).
        f[r][0] = fv[0].x;
        f[r][2] = fv[0].y;
        f[r][4] = fv[1].x;
        f[r][6] = fv[1].y;
        f[r][1] = fv[2].x;
        f[r][3] = fv[2].y;
        f[r][5] = fv[3].x;
        f[r][7] = fv[3].y;
      }
#pragma unroll
      for (int m = 0; m < MX; ++m) {
        if (m < mx) {  // warp-uniform
          float xf[8];
          O::x_to_float(
              __ldg(reinterpret_cast<const uint4*>(x + static_cast<size_t>(m) * K +
                                                   static_cast<size_t>(gi) * GC + 8 * wd)),
              xf);
#pragma unroll
          for (int r = 0; r < R; ++r)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[m][r] = fmaf(f[r][j], xf[j], acc[m][r]);
        }
      }
    }
  }

  // Butterfly reduction: every lane ends with every row's total.
#pragma unroll
  for (int m = 0; m < MX; ++m)
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int off = 16; off > 0; off >>= 1)
        acc[m][r] += __shfl_xor_sync(0xFFFFFFFFu, acc[m][r], off);

  const float so = __fmul_rn(__ldg(p.gs), 128.0f);
  const T* bias = static_cast<const T*>(p.bias);
  T* y = static_cast<T*>(p.y);
#pragma unroll
  for (int m = 0; m < MX; ++m)
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (lane == m * R + r && m < mx && n0 + r < N)
        y[static_cast<size_t>(m0 + m) * N + n0 + r] = epilogue<T>(acc[m][r], so, bias, n0 + r);
}

// ------------------------------------------------------ quantize helpers --
// Layout 0 <-> kLayout (nvfp4_layout.h), one 32-bit word per thread, grid-stride.
template <int kLayout, bool kInverse>
__global__ void nvfp4_relayout_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                      int64_t words) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += step)
    out[i] = kInverse ? word_from_layout(in[i], kLayout) : word_to_layout(in[i], kLayout);
}

// E4M3 (fn) code -> float, every code; 0x7f / 0xff -> NaN (torch's decode).
__device__ __forceinline__ float e4m3_to_float(uint32_t code) {
  const uint32_t e = (code >> 3) & 0xFu, m = code & 7u;
  float v;
  if (e == 15u && m == 7u) {
    v = __int_as_float(0x7FC00000);
  } else if (e == 0u) {
    v = static_cast<float>(m) * 0.001953125f;  // m * 2^-9, exact
  } else {
    v = __uint_as_float(((e + 120u) << 23) | (m << 20));  // (1 + m/8) * 2^(e-7)
  }
  return (code & 0x80u) ? -v : v;
}

// E4M3 encode, round to nearest even, of a finite t in [0, 448].
__device__ __forceinline__ uint32_t e4m3_encode_nonneg(float t) {
  if (t < 0.015625f) {  // below 2^-6: the subnormal grid, step 2^-9
    return static_cast<uint32_t>(__float2int_rn(t * 512.0f));  // 0..8; 8 is 2^-6 = code 0x08
  }
  const int e = static_cast<int>((__float_as_uint(t) >> 23) & 0xFFu) - 127;  // -6 .. 8
  const float scaled = t * __uint_as_float(static_cast<uint32_t>(127 + 3 - e) << 23);  // exact
  const int q = __float2int_rn(scaled);  // 8 .. 16; 16 carries into the exponent
  return static_cast<uint32_t>(((e + 7) << 3) + (q - 8));
}

// E2M1 encode of v in [-6, 6], ties to the even code; a negative value that
// rounds to zero keeps its sign, code 8 (the CPU's e2m1_encode).
__device__ __forceinline__ uint32_t e2m1_encode(float v) {
  const float a = fabsf(v);
  const uint32_t mag = static_cast<uint32_t>(a > 0.25f) + static_cast<uint32_t>(a >= 0.75f) +
                       static_cast<uint32_t>(a > 1.25f) + static_cast<uint32_t>(a >= 1.75f) +
                       static_cast<uint32_t>(a > 2.5f) + static_cast<uint32_t>(a >= 3.5f) +
                       static_cast<uint32_t>(a > 5.0f);
  const uint32_t neg = signbit(v) ? 8u : 0u;  // sign kept: a negative value rounding to 0 is -0
  return mag | neg;
}

// E2M1 code -> value, -0 for code 8.
__device__ __forceinline__ float e2m1_to_float(uint32_t code) {
  const uint32_t e = (code >> 1) & 3u, m = code & 1u;
  const float mag = e == 0u ? 0.5f * static_cast<float>(m)
                            : static_cast<float>((2u + m) << (e - 1u)) * 0.5f;
  return (code & 8u) ? -mag : mag;
}

template <typename TI>
__device__ __forceinline__ float load_as_float(const TI* p) {
  return static_cast<float>(*p);
}
template <>
__device__ __forceinline__ float load_as_float<__half>(const __half* p) {
  return __half2float(*p);
}
template <>
__device__ __forceinline__ float load_as_float<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}

template <typename TO>
__device__ __forceinline__ TO store_from_float(float v);
template <>
__device__ __forceinline__ float store_from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half store_from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 store_from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// max |w| over the tensor into *amax_bits (zero-initialized; the bits of a
// non-negative float order like the float).
template <typename TI>
__global__ void __launch_bounds__(kQuantThreads) nvfp4_amax_kernel(const TI* w, int64_t numel,
                                                                   unsigned int* amax_bits) {
  float m = 0.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += stride)
    m = fmaxf(m, fabsf(load_as_float(w + i)));
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, off));
  __shared__ float part[kQuantThreads / 32];
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float b = part[0];
    for (int i = 1; i < kQuantThreads / 32; ++i) b = fmaxf(b, part[i]);
    atomicMax(amax_bits, __float_as_uint(b));
  }
}

// One thread per 16-element block: scale, codes, and (thread 0) the global.
template <typename TI>
__global__ void __launch_bounds__(kQuantThreads)
    nvfp4_quantize_kernel(const TI* w, int64_t nblocks, int64_t K, const unsigned int* amax_bits,
                          uint8_t* packed, uint8_t* scale, float* global_out) {
  const float amax = __uint_as_float(*amax_bits);
  const float g0 = __fdiv_rn(amax, 2688.0f);
  const float global = g0 == 0.0f ? 1.0f : g0;  // all zero, or the scale underflows
  const int64_t bpr = K / 16;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < nblocks;
       b += stride) {
    if (b == 0) *global_out = global;
    const int64_t n = b / bpr, j = b - n * bpr;
    const TI* src = w + n * K + 16 * j;
    float v[16];
    float bamax = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      v[i] = load_as_float(src + i);
      bamax = fmaxf(bamax, fabsf(v[i]));
    }
    const float want = fminf(__fdiv_rn(__fdiv_rn(bamax, 6.0f), global), 448.0f);  // as the CPU
    const uint32_t bs = e4m3_encode_nonneg(want);
    const float bsf = e4m3_to_float(bs);
    uint32_t lo = 0u, hi = 0u;
    if (bsf != 0.0f) {
      const float d = __fmul_rn(bsf, global);
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        const uint32_t c = e2m1_encode(fminf(fmaxf(__fdiv_rn(v[i], d), -6.0f), 6.0f));
        if (i < 8)
          lo |= c << (4 * i);
        else
          hi |= c << (4 * (i - 8));
      }
    }
    uint8_t* dst = packed + n * (K / 2) + 8 * j;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      dst[i] = static_cast<uint8_t>(lo >> (8 * i));
      dst[4 + i] = static_cast<uint8_t>(hi >> (8 * i));
    }
    scale[b] = static_cast<uint8_t>(bs);
  }
}

// One thread per packed byte (two outputs).
template <typename TO>
__global__ void __launch_bounds__(kDequantThreads)
    nvfp4_dequantize_kernel(const uint8_t* packed, const uint8_t* scale, const float* gs,
                            int64_t N, int64_t K, TO* out) {
  const float global = __ldg(gs);
  const int64_t half_k = K / 2, nbytes = N * half_k;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nbytes;
       i += stride) {
    const int64_t n = i / half_k, jb = i - n * half_k;
    const float bs = e4m3_to_float(scale[n * (K / 16) + jb / 8]);
    const uint32_t byte = packed[i];
    TO* o = out + n * K + 2 * jb;
    o[0] = store_from_float<TO>(__fmul_rn(__fmul_rn(e2m1_to_float(byte & 15u), bs), global));
    o[1] = store_from_float<TO>(__fmul_rn(__fmul_rn(e2m1_to_float(byte >> 4), bs), global));
  }
}

// The same values as nvfp4_dequantize_kernel, one thread per 16-code piece
// (8 packed bytes, exactly one scale block, so the piece index is the scale
// index): an 8-byte load, the prmt decode of the GEMVs (e2m1 * 2^-14 as exact
// fp16), e2m1 * bs as one exact fp32 multiply by bs * 2^14, then * global
// (RNE), then 16-byte stores. Needs an 8-byte aligned `packed`.
template <typename TO>
__global__ void __launch_bounds__(kDequantThreads)
    nvfp4_dequantize_vec_kernel(const uint8_t* __restrict__ packed, const uint8_t* __restrict__ scale,
                                const float* __restrict__ gs, int64_t pieces, TO* __restrict__ out) {
  const float global = __ldg(gs);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pieces;
       i += stride) {
    const float bs = __fmul_rn(e4m3_to_float(__ldg(scale + i)), 16384.0f);  // exact (or NaN)
    const uint2 v = ld_stream_v2(packed + i * 8);
    const uint32_t words[2] = {v.x, v.y};
    float f[16];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      uint32_t h[4];
      decode_e2m1_f16(words[j], h);  // h0 = (n0, n2), h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7)
      float2 d[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        __half2 hh;
        memcpy(&hh, &h[q], sizeof(hh));
        d[q] = __half22float2(hh);
      }
      const float c[8] = {d[0].x, d[2].x, d[0].y, d[2].y, d[1].x, d[3].x, d[1].y, d[3].y};
#pragma unroll
      for (int e = 0; e < 8; ++e) f[8 * j + e] = __fmul_rn(__fmul_rn(c[e], bs), global);
    }
    store16<TO>(out + i * 16, f);
  }
}

// ============================================================ tile GEMM ====
// The nvfp4 format of the tiled GEMM in common/dq_tile.cuh (path "tile";
// K % 128 == 0, packed codes 16-byte and scales 8-byte aligned). Raw stage:
// BN rows x BK / 2 bytes of codes (pieces of 32 codes, row-major), then each
// row's BK / 16 block scales of the k tile (one 8- or 4-byte copy per row);
// rows past N zero-filled. Decode: a thread takes the 32 codes it copied and the row's two
// scales of them, decodes 8 codes per word (the GEMV's pair decode), folds the
// scale in with one packed multiply per pair (exact: e2m1 * bs * 2^-7, see
// section 2 of docs/nvfp4_gemv.md), puts the pairs back in k order and stores
// pieces 4p .. 4p + 3 of the row. The epilogue multiplies by 2^7 * global.
template <typename T, class CfgT>
struct TileFormat {
  using Cfg = CfgT;
  static constexpr bool kScaleAfter = false;
  static constexpr bool kGlobal = true;
  static constexpr int kFW = 1;
  static constexpr int kCodeBytes = Cfg::kBK / 2;                  // per row and k tile
  static constexpr int kScaleBytes = Cfg::kBK / 16;                // 8 (Small) / 4 (Wide)
  static constexpr int kRowPieces = kCodeBytes / 16;               // 32-code pieces per row
  static constexpr int kCopies = Cfg::kBN * kRowPieces / Cfg::kThreads;
  static constexpr int kRawStage = Cfg::kBN * (kCodeBytes + kScaleBytes);
  static_assert(Cfg::kBN <= Cfg::kThreads, "one scale copy per row");
  const uint8_t* src[kCopies];  // codes: row start + 16 * piece
  const uint8_t* ssrc;          // scales of row tid (tid < BN)
  uint32_t on;                  // bit i: copy i's row < N; bit 8: scale row < N

  __device__ __forceinline__ void init(const dqt::Args& a, int n0, int tid) {
    on = 0;
    const size_t row_bytes = static_cast<size_t>(a.K) / 2;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * Cfg::kThreads + tid;
      const int n = n0 + id / kRowPieces;
      const bool ok = n < a.N;
      on |= (ok ? 1u : 0u) << i;
      src[i] = a.w + (ok ? n : 0) * row_bytes + 16 * (id % kRowPieces);
    }
    const int ns = n0 + tid;
    const bool sok = tid < Cfg::kBN && ns < a.N;
    on |= (sok ? 1u : 0u) << 8;
    ssrc = a.wsc + static_cast<size_t>(sok ? ns : 0) * (a.K / 16);
  }
  __device__ __forceinline__ void issue(const dqt::Args& a, uint32_t raw, int kt, int tid) const {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool ok = (on >> i) & 1u;
      const int id = i * Cfg::kThreads + tid;
      dqt::cp16(raw + (id / kRowPieces) * kCodeBytes + 16 * (id % kRowPieces),
                ok ? src[i] + kt * kCodeBytes : a.w, ok ? 16u : 0u);
    }
    if (tid < Cfg::kBN) {
      const bool ok = (on >> 8) & 1u;
      const uint32_t dst = raw + Cfg::kBN * kCodeBytes + kScaleBytes * tid;
      const uint8_t* sp = ok ? ssrc + kt * kScaleBytes : a.wsc;
      if constexpr (kScaleBytes == 8)
        dqt::cp8(dst, sp, ok ? 8u : 0u);
      else
        dqt::cp4(dst, sp, ok ? 4u : 0u);
    }
  }
  __device__ __forceinline__ void decode(uint32_t raw, uint32_t wdec, int tid) const {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int id = i * Cfg::kThreads + tid, r = id / kRowPieces, p = id % kRowPieces;
      const uint4 v = ring::lds128(raw + r * kCodeBytes + 16 * p);
      uint32_t s2;  // the two e4m3 scales of this piece (blocks 2p, 2p + 1 of the tile)
      asm volatile("ld.shared.u16 %0, [%1];\n"
                   : "=r"(s2)
                   : "r"(raw + Cfg::kBN * kCodeBytes + kScaleBytes * r + 2 * p));
      const uint32_t sp = Ops<T>::scale_pair(s2);
      const uint32_t sc[2] = {dup_lo(sp), dup_hi(sp)};
      const uint32_t wv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        uint32_t h[4];
        Ops<T>::decode(wv[q], h);
#pragma unroll
        for (int j = 0; j < 4; ++j) h[j] = Ops<T>::mul(h[j], sc[q >> 1]);
        uint32_t o[4];
        if constexpr (std::is_same_v<T, __half>) {
          // h = (n0, n2), (n4, n6), (n1, n3), (n5, n7)
          o[0] = prmt(h[0], h[2], 0x5410u);
          o[1] = prmt(h[0], h[2], 0x7632u);
          o[2] = prmt(h[1], h[3], 0x5410u);
          o[3] = prmt(h[1], h[3], 0x7632u);
        } else {
          // h = (n0, n4), (n1, n5), (n2, n6), (n3, n7)
          o[0] = prmt(h[0], h[1], 0x5410u);
          o[1] = prmt(h[2], h[3], 0x5410u);
          o[2] = prmt(h[0], h[1], 0x7632u);
          o[3] = prmt(h[2], h[3], 0x7632u);
        }
        dqt::sts128(wdec + dqt::swz<Cfg>(r, 4 * p + q), o[0], o[1], o[2], o[3]);
      }
    }
  }
  __device__ __forceinline__ float scale(const dqt::Args&, int, int) const { return 1.f; }
};

}  // namespace nvfp4
}  // namespace torchquant
