// Would the nvfp4 decode GEMV stream faster in the int8 GEMV's shape? (docs/nvfp4_gemv.md 26)
//
// The extension's nvfp4 mma GEMV copies each warp's 32 rows x 128 bytes per chunk through a
// two-stage shared-memory ring; without its decode that structure streams at 87-90 % of an
// H100's read ceiling, while the int8 GEMV (16 weight rows per block, eight warps interleaving
// 64-byte pieces of every row, straight into registers, U pieces in flight per lane) reaches
// 96-97 %. This probe builds the nvfp4 GEMV in the int8 GEMV's shape and times it, so the
// question is answered before a kernel is written for the extension:
//
//   block     256 threads, 16 weight rows (one m16 tile), 8 warps; warp w takes the 64-byte
//             pieces w, w + 8, ... of each row (128 codes each); lane (g, t) loads bytes
//             16t .. 16t + 15 of rows g and g + 8 (4 words = 32 codes of each row) with
//             the int8 GEMV's ldg16_stream (L1::no_allocate, .L2::256B hint) and
//             the two block scales of those codes per row (2 bytes, L1-cached loads);
//   decode    the layout-1 word decode of the extension (decode_e2m1_bf16_l1: 7 ALU ops + 1
//             IMAD per 8 codes), the block scale folded by one bf16x2 multiply per pair,
//             two m16n8k16 bf16 mma per word pair (rows g, g + 8);
//   x         token g of the n8 tile (M <= 8), 16 bytes per word straight from global memory
//             (L1-cached, every block re-reads it), in natural order: the probe defines its own
//             code order (pair p of word q of lane t = codes 32t + 8q + 2p, + 1 of the piece,
//             i.e. layout 1 applied to a word whose nibbles hold those codes in the order
//             n = (c0, c2, c4, c6, c1, c3, c5, c7)), so x needs no permute;
//   reduce    the 8 warps' 16 x 8 fp32 tiles through shared memory, fixed order, then
//             y = acc * 2^7 (the decode's 2^-7 undone; global scale 1), fp32 out.
//
// U = pieces of loads in flight per lane; "p" runs the same on a persistent grid (bps x SMs
// blocks looping over the tiles); "xs" is persistent and stages x once per block in shared
// memory as layout 1's pairs, decoding the words as the extension stores layout 1 (M <= 4).
// Every variant is checked against a host reference
// that decodes each word with the same bit operations (so the check is of the data movement,
// the mma fragments and the reduction; the layout-1 map itself is tested in
// tests/test_nvfp4_layout.py). Timing as benchmarks/timing.py: weight + scale copies rotated
// past 8x L2 (3x until 2026-12-06e, at least 4 copies), one CUDA graph, median of 7 replays, programmatic dependent launch; a pure read of
// the same bytes (read_kernel.cuh) first, in the same process.
//
// Build: nvcc -O3 -arch=sm_90 -I../../csrc -o nvfp4_direct_shape nvfp4_direct_shape.cu
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "graph_timing.cuh"
#include "int8/int8_kernels.cuh"
#include "nvfp4/nvfp4_kernels.cuh"
#include "read_kernel.cuh"

using namespace torchquant::nvfp4;

using torchquant::int8::ldg16_cached;  // x: L1-cached 16-byte loads
using torchquant::int8::ldg16_stream;  // weight: L1::no_allocate + the .L2::256B hint

// The 8 warps' [token][row] tiles of a block of R weight rows, summed in warp order and stored
// (x 2^7, undoing the decode's 2^-7; global scale 1); thread tid takes tid, tid + 256, ... of the
// [token][row] outputs (M <= 8).
template <int R>
__device__ __forceinline__ void sum_store(const float (&red)[8][8][R], int tid, int M, int N, int n0,
                                          float* __restrict__ out) {
  const auto one = [&](unsigned i) {
    const int ml = static_cast<int>(i / R), nl = static_cast<int>(i % R), n = n0 + nl;
    if (ml < M && n < N) {
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < 8; ++w) s += red[w][ml][nl];
      out[static_cast<size_t>(ml) * N + n] = s * 128.0f;
    }
  };
  if constexpr (8 * R <= 256) {  // (as the form before the loop: no registers added)
    if (tid < 8 * R) one(static_cast<unsigned>(tid));
  } else {
#pragma unroll
    for (int i = tid; i < 8 * R; i += 256) one(static_cast<unsigned>(i));
  }
}

// A 16-row block's lanes and rows (the 2026-12-07f forms): lane (g, t) of warp `warp`; the block's
// first output row n0 and the first row it reads a0 (hot_tiles > 0: tile blockIdx.x % hot_tiles,
// so the grid streams an L2-resident footprint); rows g and g + 8 as read (rlo, rhi; a row past N
// reads a0's row: its D rows are never stored); rb / sb: a row's weight / scale bytes.
struct Block16 {
  int tid, lane, warp, g, t, pieces, n0, a0;
  size_t rb, sb, rlo, rhi;
  __device__ __forceinline__ Block16(int N, int K, int hot_tiles)
      : tid(static_cast<int>(threadIdx.x)), lane(tid & 31), warp(tid >> 5), g(lane >> 2), t(lane & 3),
        pieces(K / 128), n0(static_cast<int>(blockIdx.x) * 16),
        a0((hot_tiles > 0 ? static_cast<int>(blockIdx.x) % hot_tiles : static_cast<int>(blockIdx.x)) * 16),
        rb(static_cast<size_t>(K) / 2), sb(static_cast<size_t>(K) / 16),
        rlo(n0 + g < N ? a0 + g : a0), rhi(n0 + g + 8 < N ? a0 + g + 8 : a0) {}
};

// A 16-row block's ending (the 2026-12-07f forms): each warp's D fragment (acc[0], acc[1]: row g,
// tokens 2t, 2t + 1; acc[2], acc[3]: row g + 8) into red, then the warp-ordered sums stored.
__device__ __forceinline__ void finish16(float (&red)[8][8][16], const float (&acc)[4], int tid, int M, int N,
                                         int n0, float* __restrict__ out) {
  const int warp = tid >> 5, g = (tid & 31) >> 2, t = tid & 3;
#pragma unroll
  for (int r = 0; r < 4; ++r) red[warp][2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[r];
  __syncthreads();
  sum_store(red, tid, M, N, n0, out);
}

// Word q (codes 32t + 8q .. + 7 of the piece) of rows g (wl) and g + 8 (wh) into acc: the layout-1
// decode, the block scales folded (spl / sph: the piece's two scale pairs of each row, as
// e4m3x2_to_bf16x2_x2p119 gives them), and the word's two m16n8k16 with x pairs xv.
__device__ __forceinline__ void word_mma(float (&acc)[4], uint32_t wl, uint32_t wh, uint32_t spl, uint32_t sph,
                                         int q, const uint4& xv) {
  uint32_t a[4], b[4];
  decode_e2m1_bf16_l1(wl, a);
  decode_e2m1_bf16_l1(wh, b);
  const uint32_t sa = (q >> 1) ? dup_hi(spl) : dup_lo(spl);
  const uint32_t sbb = (q >> 1) ? dup_hi(sph) : dup_lo(sph);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    a[j] = mul_bf16x2(a[j], sa);
    b[j] = mul_bf16x2(b[j], sbb);
  }
  torchquant::mma_m16n8k16<__nv_bfloat16>(acc, a[0], b[0], a[1], b[1], xv.x, xv.y);
  torchquant::mma_m16n8k16<__nv_bfloat16>(acc, a[2], b[2], a[3], b[3], xv.z, xv.w);
}

// word_mma without the scale fold (kSkel 5 below): the decode and the two mma alone.
__device__ __forceinline__ void word_mma_noscale(float (&acc)[4], uint32_t wl, uint32_t wh, const uint4& xv) {
  uint32_t a[4], b[4];
  decode_e2m1_bf16_l1(wl, a);
  decode_e2m1_bf16_l1(wh, b);
  torchquant::mma_m16n8k16<__nv_bfloat16>(acc, a[0], b[0], a[1], b[1], xv.x, xv.y);
  torchquant::mma_m16n8k16<__nv_bfloat16>(acc, a[2], b[2], a[3], b[3], xv.z, xv.w);
}

// W [N, K/2] bytes, S [N, K/16] e4m3, X [M, K] bf16, out [M, N] fp32. K % 128 == 0.
// kXs: a persistent grid (blocks loop over the 16-row tiles) that stages x once per block in
// shared memory, each group of 8 as layout 1's pairs (x_p, x_{p+4}) (Ops<bf16>::pair_x), and
// decodes the words as they lie (the layout-1 pairs (n_p, n_{p+4})): the extension's layout 1
// unchanged. Otherwise one block per tile and x straight from global memory in natural order
// (the probe's own code order above).
// kSkel: 1 = no decode and no scale multiply (each weight word goes to the mma as it lies, XORed
// with its scales so their loads stay): the load, x and mma side alone; 2 = also no x loads (the
// B registers are weight words); 3 = the weight and scale loads alone (XORed into the output, no
// mma); (2026-12-07f, splitting 2's gap to the correct form) 4 = the full decode and scale multiply
// with 2's B registers (no x loads); 5 = the decode without the scale multiply, x as the form
// loads it. Wrong results by design. kXn: x staged once per block in shared memory in natural order
// (16-byte copies, M x K bf16), then read with 16-byte LDS in place of the L1-cached global loads.
// kXp: only lanes whose B column is a real x row (g < M) load x; the others hold zeros (their D
// columns are never stored), so at M = 1 a warp's x load moves 64 bytes, not 512.
// kXr: the round's x (4 x 16 bytes per piece) is loaded with its weight in issue(), so the x
// loads' latency overlaps the weight's instead of sitting before each word's mma (x predicated as
// kXp).
// hot_tiles > 0: tile i reads the weight and scales of tile i % hot_tiles (its output stays row
// i's), so the whole grid runs on a footprint that stays in L2 (PROBE_HOT_MB below).
template <int U, bool kXs = false, bool kPers = kXs, int kMinBlocks = 2, bool kPipe = false, int kSkel = 0,
          bool kXn = false, bool kXp = false, bool kXr = false>
__global__ void __launch_bounds__(256, kMinBlocks)
    direct_gemv(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                int hot_tiles) {
  __shared__ float red[8][8][16];
  extern __shared__ uint4 xs[];  // kXs: M rows x K / 8 groups
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int pieces = K / 128;  // 64 bytes of a row each
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  if constexpr (kXs || kXn) {
    for (int i = tid; i < M * (K / 8); i += 256) {
      const uint4 v = *reinterpret_cast<const uint4*>(X + 8 * static_cast<size_t>(i));
      xs[i] = kXs ? Ops<__nv_bfloat16>::pair_x(v) : v;
    }
    __syncthreads();
  }
  const int tiles = (N + 15) / 16;
  for (int tile = blockIdx.x; tile < tiles; tile += kPers ? gridDim.x : tiles) {
  const int n0 = tile * 16;
  const int a0 = (hot_tiles > 0 ? tile % hot_tiles : tile) * 16;  // the rows read (<= n0)
  const bool v_lo = n0 + g < N, v_hi = n0 + g + 8 < N;
  const size_t rb = static_cast<size_t>(K) / 2, sb = static_cast<size_t>(K) / 16;
  const uint8_t* w_lo = W + (v_lo ? a0 + g : 0) * rb;
  const uint8_t* w_hi = W + (v_hi ? a0 + g + 8 : 0) * rb;
  const uint8_t* s_lo = S + (v_lo ? a0 + g : 0) * sb;
  const uint8_t* s_hi = S + (v_hi ? a0 + g + 8 : 0) * sb;
  const __nv_bfloat16* xrow = X + static_cast<size_t>(g < M ? g : 0) * K;
  const uint4* xsrow = xs + static_cast<size_t>(g < M ? g : 0) * (K / 8);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  uint4 wl[U], wh[U];
  uint32_t sl[U], sh[U];
  uint4 xr[kXr ? U : 1][4];
  // the round of U pieces at c into the registers given (pieces past the row: not loaded)
  const auto issue = [&](int c, uint4* l, uint4* h, uint32_t* s0, uint32_t* s1) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int cc = c + 8 * u;
      const bool in = cc < pieces;
      const int pc = in ? cc : 0;
      if constexpr (kXr) {
#pragma unroll
        for (int q = 0; q < 4; ++q) xr[u][q] = ldg16_cached(xrow + pc * 128 + 32 * t + 8 * q, in && g < M);
      }
      l[u] = ldg16_stream(w_lo + pc * 64 + 16 * t, in && v_lo);
      h[u] = ldg16_stream(w_hi + pc * 64 + 16 * t, in && v_hi);
      s0[u] = torchquant::ld_u16_if(s_lo + pc * 8 + 2 * t, in && v_lo);
      s1[u] = torchquant::ld_u16_if(s_hi + pc * 8 + 2 * t, in && v_hi);
    }
  };
  // kPipe: the next round's loads are issued before this round's decode (two register sets)
  uint4 nl[kPipe ? U : 1], nh[kPipe ? U : 1];
  uint32_t nsl[kPipe ? U : 1], nsh[kPipe ? U : 1];
  if constexpr (kPipe) issue(warp, wl, wh, sl, sh);
  for (int c = warp; c < pieces; c += 8 * U) {
    if constexpr (kPipe) {
      issue(c + 8 * U, nl, nh, nsl, nsh);
    } else {
      issue(c, wl, wh, sl, sh);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int cc = c + 8 * u;
      if (cc >= pieces) break;
      constexpr bool kScaled = kSkel == 0 || kSkel == 4;
      const uint32_t spl = kScaled ? e4m3x2_to_bf16x2_x2p119(sl[u]) : 0u;
      const uint32_t sph = kScaled ? e4m3x2_to_bf16x2_x2p119(sh[u]) : 0u;
      const uint32_t wlw[4] = {wl[u].x, wl[u].y, wl[u].z, wl[u].w};
      const uint32_t whw[4] = {wh[u].x, wh[u].y, wh[u].z, wh[u].w};
      const __nv_bfloat16* xp = xrow + cc * 128 + 32 * t;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        // codes 32t + 8q .. + 8: pairs p = 0..3 (kXs: layout 1's (x_p, x_{p+4}))
        uint4 xv;
        if constexpr (kSkel == 2 || kSkel == 3 || kSkel == 4) {
          xv = make_uint4(wlw[q], whw[q], wlw[q] ^ 1u, whw[q] ^ 1u);
        } else {
          xv = kXr ? xr[u][q]
               : (kXs || kXn) ? xsrow[cc * 16 + 4 * t + q] : ldg16_cached(xp + 8 * q, !kXp || g < M);
        }
        if constexpr (kSkel == 3) {
          acc[0] += __uint_as_float((wlw[q] ^ sl[u]) & 0x007fffffu);
          acc[2] += __uint_as_float((whw[q] ^ sh[u]) & 0x007fffffu);
        } else if constexpr (kSkel == 5) {  // the decode alone, the scales XORed in (their loads stay)
          word_mma_noscale(acc, wlw[q] ^ sl[u], whw[q] ^ sh[u], xv);
        } else if constexpr (kSkel == 1 || kSkel == 2) {  // each weight word as its four A / B registers
          const uint32_t wa = wlw[q] ^ sl[u], wb = whw[q] ^ sh[u];
          torchquant::mma_m16n8k16<__nv_bfloat16>(acc, wa, wb, wa, wb, xv.x, xv.y);
          torchquant::mma_m16n8k16<__nv_bfloat16>(acc, wa, wb, wa, wb, xv.z, xv.w);
        } else {
          word_mma(acc, wlw[q], whw[q], spl, sph, q, xv);
        }
      }
    }
    if constexpr (kPipe) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        wl[u] = nl[u];
        wh[u] = nh[u];
        sl[u] = nsl[u];
        sh[u] = nsh[u];
      }
    }
  }
  // D fragment: acc[0], acc[1] -> row g, tokens 2t, 2t + 1; acc[2], acc[3] -> row g + 8.
#pragma unroll
  for (int r = 0; r < 4; ++r) red[warp][2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[r];
  __syncthreads();
  sum_store(red, tid, M, N, n0, out);
  __syncthreads();  // red is reused by the next tile
  }
}

// (2026-12-07f) direct_gemv's kXr form with its per-piece overhead taken out. The SASS of U=1xr's
// loop holds ~171 instructions per piece, of which the decode, the scale fold, the mma and the
// loads are ~116; the rest is per-piece address arithmetic (64-bit products of the selected piece
// index), the zero fills of the predicated loads (CS2R) and their predicates. Here every load of a
// full round is unpredicated: rows past N read the tile's first row (a valid row; their D rows
// are never stored), lanes of x rows past M read x row 0 (their D columns are never stored), and
// a warp's pieces are counted up front, so the rounds of U run with no bounds test and the last
// count % U pieces one by one. Pointers advance by constants (the loads' offsets within a round
// are immediates). Same pieces, same order of sums per output as U=Uxr: the same bits.
// kXq (call 4): the x loads predicated to lanes of real x rows (g < M) as U=Uxr's, but with no
// zero fill (the other lanes' registers are left as they are: their D columns are never stored),
// since call 2 found the unpredicated x loads 6 us slower at M = 4 with the weight in L2.
__device__ __forceinline__ uint4 ldg16_cached_nofill(const void* p, bool pred) {
  uint4 r;
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n @q ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n}\n"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p), "r"(static_cast<int>(pred)));
  return r;
}
// kScT / kWT (call 4; docs/nvfp4_gemv.md 39): call 2's split priced each load instruction by
// the 128-byte lines it touches (the x loads, one line per x row, cost 27.9 / 30.0 / 38.0 / 55.1
// us hot without the decode at M = 1 / 2 / 4 / 8). The weight loads touch 8 lines each (8 rows x
// 64 bytes) and the scale loads 8 lines each for 64 bytes, so a piece costs
// 16 + 16 line touches before its x. Here the operands are stored per 16-row tile and piece:
// kScT: the tile's 16 rows x 8 scale bytes of the piece in one 128-byte line (row r at 8 r), so
// a piece's two scale loads touch one line each; kWT: its 16 rows x 64 weight bytes as two
// 512-byte runs (rows 0..7, then 8..15; row g at 64 g, lane t's 16 bytes at 16 t), so each weight
// load reads 4 whole lines. N % 16 == 0 (the host skips other N).
template <int U, int kMinBlocks, bool kXq = false, bool kScT = false, bool kWT = false>
__global__ void __launch_bounds__(256, kMinBlocks)
    direct_gemv_lean(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                     const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                     int hot_tiles) {
  __shared__ float red[8][8][16];
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  const Block16 b(N, K, hot_tiles);
  const int tid = b.tid, warp = b.warp, g = b.g, t = b.t, pieces = b.pieces, n0 = b.n0, a0 = b.a0;
  const size_t rb = b.rb, sb = b.sb, rlo = b.rlo, rhi = b.rhi;
  const size_t tp = static_cast<size_t>(a0 / 16) * pieces + warp;  // tiled: (tile, piece) index
  const uint8_t* wl_p = kWT ? W + tp * 1024 + 64 * g + 16 * t : W + rlo * rb + 16 * t + 64 * warp;
  const uint8_t* wh_p = kWT ? wl_p + 512 : W + rhi * rb + 16 * t + 64 * warp;
  const uint8_t* sl_p = kScT ? S + tp * 128 + 8 * g + 2 * t : S + rlo * sb + 2 * t + 8 * warp;
  const uint8_t* sh_p = kScT ? sl_p + 64 : S + rhi * sb + 2 * t + 8 * warp;
  constexpr int kW = kWT ? 8 * 1024 : 512, kS = kScT ? 8 * 128 : 64;  // a warp's next piece
  const __nv_bfloat16* xp = X + static_cast<size_t>(g < M ? g : 0) * K + 32 * t + 128 * warp;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  const auto round = [&](auto n_const) {
    constexpr int V = decltype(n_const)::value;
    uint4 wl[V], wh[V], xv[V][4];
    uint32_t sl[V], sh[V];
#pragma unroll
    for (int u = 0; u < V; ++u) {
      wl[u] = torchquant::ld_stream_v4(wl_p + kW * u);
      wh[u] = torchquant::ld_stream_v4(wh_p + kW * u);
      sl[u] = __ldg(reinterpret_cast<const unsigned short*>(sl_p + kS * u));
      sh[u] = __ldg(reinterpret_cast<const unsigned short*>(sh_p + kS * u));
#pragma unroll
      for (int q = 0; q < 4; ++q)
        xv[u][q] = kXq ? ldg16_cached_nofill(xp + 1024 * u + 8 * q, g < M)
                       : __ldg(reinterpret_cast<const uint4*>(xp + 1024 * u + 8 * q));
    }
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const uint32_t spl = e4m3x2_to_bf16x2_x2p119(sl[u]), sph = e4m3x2_to_bf16x2_x2p119(sh[u]);
      const uint32_t wlw[4] = {wl[u].x, wl[u].y, wl[u].z, wl[u].w};
      const uint32_t whw[4] = {wh[u].x, wh[u].y, wh[u].z, wh[u].w};
#pragma unroll
      for (int q = 0; q < 4; ++q) word_mma(acc, wlw[q], whw[q], spl, sph, q, xv[u][q]);
    }
    wl_p += kW * V;
    wh_p += kW * V;
    sl_p += kS * V;
    sh_p += kS * V;
    xp += 1024 * V;
  };
  int left = warp < pieces ? (pieces - warp + 7) / 8 : 0;  // this warp's pieces: warp, warp + 8, ...
  for (; left >= U; left -= U) round(std::integral_constant<int, U>{});
  for (; left > 0; --left) round(std::integral_constant<int, 1>{});
  finish16(red, acc, tid, M, N, n0, out);
}

// (2026-12-07f, after call 4; not yet run) The tiled scales' gain without a storage change: each
// warp takes its P8 = K / 1024 pieces contiguously (warp w: pieces w P8 .. w P8 + P8 - 1, not every
// 8th), so a row's scales for all of them are one run of 8 P8 bytes, loaded once per warp before
// the loop (lane (g, t): bytes 2 P8 t .. of rows g and g + 8; 2 loads per warp, touching 16 lines,
// where the interleaved form's 2 loads per piece touch 16 lines each piece); piece j's 2 bytes
// of a row reach lane (g, t) by two shuffles from lane (g, 4 j / P8) and a select. The weight and
// x loads are the lean form's with predicated x (q), at a pointer step of one piece. K == 1024 P8.
template <int P8, int U, int kMinBlocks>
__global__ void __launch_bounds__(256, kMinBlocks)
    direct_gemv_contig(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                       const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                       int hot_tiles) {
  static_assert(P8 == 4 || P8 == 8, "a lane's scale bytes: 8 or 16 (with 4, a piece's 8 would span two lanes)");
  static_assert(P8 % U == 0, "whole rounds");
  constexpr int SW = P8 / 2;  // 32-bit words of scales per lane per row
  __shared__ float red[8][8][16];
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  const Block16 b(N, K, hot_tiles);
  const int tid = b.tid, lane = b.lane, warp = b.warp, g = b.g, t = b.t, n0 = b.n0;
  const size_t rb = b.rb, sb = b.sb, rlo = b.rlo, rhi = b.rhi;
  const int c0 = warp * P8;
  const uint8_t* wl_p = W + rlo * rb + 16 * t + 64 * c0;
  const uint8_t* wh_p = W + rhi * rb + 16 * t + 64 * c0;
  const __nv_bfloat16* xp = X + static_cast<size_t>(g < M ? g : 0) * K + 32 * t + 128 * c0;
  uint32_t scl[SW], sch[SW];
  {
    const uint8_t* sl = S + rlo * sb + 8 * c0 + 2 * P8 * t;
    const uint8_t* sh = S + rhi * sb + 8 * c0 + 2 * P8 * t;
    if constexpr (SW == 4) {
      const uint4 a = __ldg(reinterpret_cast<const uint4*>(sl)), b = __ldg(reinterpret_cast<const uint4*>(sh));
      scl[0] = a.x; scl[1] = a.y; scl[2] = a.z; scl[3] = a.w;
      sch[0] = b.x; sch[1] = b.y; sch[2] = b.z; sch[3] = b.w;
    } else {
      const uint2 a = __ldg(reinterpret_cast<const uint2*>(sl)), b = __ldg(reinterpret_cast<const uint2*>(sh));
      scl[0] = a.x; scl[1] = a.y;
      sch[0] = b.x; sch[1] = b.y;
    }
  }
  // piece j's two scale bytes of a row (byte 8 j + 2 t of the run): word (8 j + 2 t) / 4 of the
  // run, held by lane t' = 4 j / P8 as its word (8 j % (2 P8)) / 4 + t / 2
  const auto scale_of = [&](const uint32_t (&r)[SW], int j) -> uint32_t {
    const int src = (lane & ~3) | (4 * j / P8);
    const int w0 = (8 * j % (2 * P8)) / 4;
    const uint32_t lo = __shfl_sync(0xffffffffu, r[w0], src);
    const uint32_t hi = __shfl_sync(0xffffffffu, r[w0 + 1], src);
    const uint32_t v = (t >> 1) ? hi : lo;
    return (t & 1) ? v >> 16 : v & 0xffffu;
  };
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int j0 = 0; j0 < P8; j0 += U) {
    uint4 wl[U], wh[U], xv[U][4];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      wl[u] = torchquant::ld_stream_v4(wl_p + 64 * (j0 + u));
      wh[u] = torchquant::ld_stream_v4(wh_p + 64 * (j0 + u));
#pragma unroll
      for (int q = 0; q < 4; ++q) xv[u][q] = ldg16_cached_nofill(xp + 128 * (j0 + u) + 8 * q, g < M);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint32_t spl = e4m3x2_to_bf16x2_x2p119(scale_of(scl, j0 + u));
      const uint32_t sph = e4m3x2_to_bf16x2_x2p119(scale_of(sch, j0 + u));
      const uint32_t wlw[4] = {wl[u].x, wl[u].y, wl[u].z, wl[u].w};
      const uint32_t whw[4] = {wh[u].x, wh[u].y, wh[u].z, wh[u].w};
#pragma unroll
      for (int q = 0; q < 4; ++q) word_mma(acc, wlw[q], whw[q], spl, sph, q, xv[u][q]);
    }
  }
  finish16(red, acc, tid, M, N, n0, out);
}

// (2026-12-07f, after call 2: the lean form was no faster, so the instruction count is not the
// cap; the split put ~8 us of 35 hot on the decode, ~4 on the x loads) direct_gemv_lean with
// (kPipe) the next round's weight, scales and x loaded before this round's decode, so each warp's
// load latency overlaps its own decode instead of other warps' only (two register sets; the last
// round re-loads itself, a pointer select instead of a predicate), and (kAcc) the word's mma
// spread over kAcc accumulators (word q into acc[q % kAcc], summed at the end: a different
// order of fp32 sums, checked against the same bound), so the 8 mma of a piece are not one chain.
template <int U, int kMinBlocks, bool kPipe, int kAcc>
__global__ void __launch_bounds__(256, kMinBlocks)
    direct_gemv_lean2(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                      const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                      int hot_tiles) {
  __shared__ float red[8][8][16];
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  const Block16 b(N, K, hot_tiles);
  const int tid = b.tid, warp = b.warp, g = b.g, t = b.t, pieces = b.pieces, n0 = b.n0;
  const size_t rb = b.rb, sb = b.sb, rlo = b.rlo, rhi = b.rhi;
  const uint8_t* wl_p = W + rlo * rb + 16 * t + 64 * warp;
  const uint8_t* wh_p = W + rhi * rb + 16 * t + 64 * warp;
  const uint8_t* sl_p = S + rlo * sb + 2 * t + 8 * warp;
  const uint8_t* sh_p = S + rhi * sb + 2 * t + 8 * warp;
  const __nv_bfloat16* xp = X + static_cast<size_t>(g < M ? g : 0) * K + 32 * t + 128 * warp;
  float acc[kAcc][4] = {};
  struct Set {
    uint4 wl[U], wh[U], xv[U][4];
    uint32_t sl[U], sh[U];
  };
  // round loads at the pointers + `ahead` pieces of this warp (0 or U)
  const auto load = [&](Set& st, int ahead, auto v_const) {
    constexpr int V = decltype(v_const)::value;
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const int a = ahead + u;
      st.wl[u] = torchquant::ld_stream_v4(wl_p + 512 * a);
      st.wh[u] = torchquant::ld_stream_v4(wh_p + 512 * a);
      st.sl[u] = __ldg(reinterpret_cast<const unsigned short*>(sl_p + 64 * a));
      st.sh[u] = __ldg(reinterpret_cast<const unsigned short*>(sh_p + 64 * a));
#pragma unroll
      for (int q = 0; q < 4; ++q) st.xv[u][q] = __ldg(reinterpret_cast<const uint4*>(xp + 1024 * a + 8 * q));
    }
  };
  const auto compute = [&](const Set& st, auto v_const) {
    constexpr int V = decltype(v_const)::value;
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const uint32_t spl = e4m3x2_to_bf16x2_x2p119(st.sl[u]), sph = e4m3x2_to_bf16x2_x2p119(st.sh[u]);
      const uint32_t wlw[4] = {st.wl[u].x, st.wl[u].y, st.wl[u].z, st.wl[u].w};
      const uint32_t whw[4] = {st.wh[u].x, st.wh[u].y, st.wh[u].z, st.wh[u].w};
#pragma unroll
      for (int q = 0; q < 4; ++q) word_mma(acc[(4 * u + q) % kAcc], wlw[q], whw[q], spl, sph, q, st.xv[u][q]);
    }
  };
  const auto advance = [&](int v) {
    wl_p += 512 * v;
    wh_p += 512 * v;
    sl_p += 64 * v;
    sh_p += 64 * v;
    xp += 1024 * v;
  };
  using CU = std::integral_constant<int, U>;
  using C1 = std::integral_constant<int, 1>;
  int left = warp < pieces ? (pieces - warp + 7) / 8 : 0;
  const int full = left / U;
  if constexpr (kPipe) {
    if (full > 0) {
      Set cur, nxt;
      load(cur, 0, CU{});
#pragma unroll 2  // (so the two sets alternate instead of being copied)
      for (int r = 0; r < full; ++r) {
        load(nxt, r + 1 < full ? U : 0, CU{});  // the last round re-loads itself
        compute(cur, CU{});
        cur = nxt;
        advance(U);
      }
    }
  } else {
    for (int r = 0; r < full; ++r) {
      Set cur;
      load(cur, 0, CU{});
      compute(cur, CU{});
      advance(U);
    }
  }
  for (left -= full * U; left > 0; --left) {
    Set cur;
    load(cur, 0, C1{});
    compute(cur, C1{});
    advance(1);
  }
#pragma unroll
  for (int j = 1; j < kAcc; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[0][r] += acc[j][r];
  finish16(red, acc[0], tid, M, N, n0, out);
}

// (2026-12-06c; T = 4 added 2026-12-06d) T m16 tiles per block, 16 T weight rows: lane (g, t) loads
// the piece's bytes of rows g, g + 8, ..., g + 8 (2T - 1), and each x load (made with the round's
// weight, predicated to g < M, as kXr) feeds all T tiles' mma, so the x loads per weight byte fall
// by T: docs/nvfp4_gemv.md 33 found them the SM side's cap (4.3 TB/s from L2 without them, 3.4
// with). U pieces in flight per lane hold T x U KB of weight per warp. hot_tiles as above, per
// 16-row tile.
template <int T, int U, int kMinBlocks>
__global__ void __launch_bounds__(256, kMinBlocks)
    direct_gemv_rows(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                  const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                  int hot_tiles) {
  __shared__ float red[8][8][16 * T];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int pieces = K / 128;
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  const int n0 = blockIdx.x * 16 * T;
  // rows read: block blockIdx.x % (hot_tiles / T) (the host keeps hot_tiles a multiple of 4, so
  // each 16-row tile j of the block reads tile (T blockIdx.x + j) % hot_tiles, as direct_gemv)
  const int a0 = hot_tiles > 0 ? (blockIdx.x % (hot_tiles / T)) * 16 * T : n0;
  const uint32_t rb = static_cast<uint32_t>(K) / 2, sb = static_cast<uint32_t>(K) / 16;
  const uint8_t* wb = W + static_cast<size_t>(a0 + g) * rb + 16 * t;  // row g; row g + 8 r at + 8 r rb
  const uint8_t* sbp = S + static_cast<size_t>(a0 + g) * sb + 2 * t;
  uint32_t valid = 0;  // bit r: row n0 + g + 8 r < N
#pragma unroll
  for (int r = 0; r < 2 * T; ++r) valid |= (n0 + g + 8 * r < N ? 1u : 0u) << r;
  const __nv_bfloat16* xrow = X + static_cast<size_t>(g < M ? g : 0) * K + 32 * t;
  float acc[T][4] = {};
  uint4 w[U][2 * T], xr[U][4];
  uint32_t sc[U][2 * T];
  for (int c = warp; c < pieces; c += 8 * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int cc = c + 8 * u;
      const bool in = cc < pieces;
      const int pc = in ? cc : 0;
#pragma unroll
      for (int q = 0; q < 4; ++q) xr[u][q] = ldg16_cached(xrow + pc * 128 + 8 * q, in && g < M);
#pragma unroll
      for (int r = 0; r < 2 * T; ++r) {
        const bool ok = in && ((valid >> r) & 1u);
        w[u][r] = ldg16_stream(wb + static_cast<size_t>(8 * r) * rb + pc * 64, ok);
        sc[u][r] = torchquant::ld_u16_if(sbp + static_cast<size_t>(8 * r) * sb + pc * 8, ok);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c + 8 * u >= pieces) break;
      uint32_t sp[2 * T];
#pragma unroll
      for (int r = 0; r < 2 * T; ++r) sp[r] = e4m3x2_to_bf16x2_x2p119(sc[u][r]);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint4 xv = xr[u][q];
#pragma unroll
        for (int tt = 0; tt < T; ++tt) {
          const uint4 vl = w[u][2 * tt], vh = w[u][2 * tt + 1];
          const uint32_t wl = q == 0 ? vl.x : q == 1 ? vl.y : q == 2 ? vl.z : vl.w;
          const uint32_t wh = q == 0 ? vh.x : q == 1 ? vh.y : q == 2 ? vh.z : vh.w;
          word_mma(acc[tt], wl, wh, sp[2 * tt], sp[2 * tt + 1], q, xv);
        }
      }
    }
  }
#pragma unroll
  for (int tt = 0; tt < T; ++tt)
#pragma unroll
    for (int r = 0; r < 4; ++r) red[warp][2 * t + (r & 1)][16 * tt + g + 8 * (r >> 1)] = acc[tt][r];
  __syncthreads();
  sum_store(red, tid, M, N, n0, out);
}

// (2026-12-06e) x held in registers for the whole launch. A persistent block of NW warps splits
// each row's K / 128 pieces among its warps, kNp per warp (K == 128 NW kNp), so each lane loads the
// x of its kNp pieces once, before the loop (kNp x 4 x 16 bytes, predicated to lanes of real x
// rows), and then streams 16 T-row tiles (the block's tiles blockIdx.x, + gridDim.x, ...) with no
// x loads at all: section 33's "nox" form, made correct. kPf: the next tile's weight and scales
// are loaded before this tile's decode (two register sets). Each tile's NW partial [token][row]
// tiles are summed in warp order through a double-buffered shared array (one barrier per tile).
template <int NW, int kNp, int T, int kMinBlocks, bool kPf>
__global__ void __launch_bounds__(NW * 32, kMinBlocks)
    direct_gemv_xreg(const uint8_t* __restrict__ W, const uint8_t* __restrict__ S,
                     const __nv_bfloat16* __restrict__ X, int M, int N, int K, float* __restrict__ out,
                     int hot_tiles) {
  constexpr int R = 16 * T;
  __shared__ float red[2][NW][8][R];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  const int tiles = (N + R - 1) / R;
  const uint32_t rb = static_cast<uint32_t>(K) / 2, sb = static_cast<uint32_t>(K) / 16;
  const __nv_bfloat16* xrow = X + static_cast<size_t>(g < M ? g : 0) * K + 32 * t;
  uint4 xr[kNp][4];
#pragma unroll
  for (int j = 0; j < kNp; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) xr[j][q] = ldg16_cached(xrow + (warp + NW * j) * 128 + 8 * q, g < M);
  const auto issue = [&](int tile, uint4 (&w)[kNp][2 * T], uint32_t (&sc)[kNp][2 * T]) {
    const int n0 = tile * R;
    const int a0 = hot_tiles > 0 ? (tile % (hot_tiles / T)) * R : n0;
    const uint8_t* wb = W + static_cast<size_t>(a0 + g) * rb + 16 * t;
    const uint8_t* sbp = S + static_cast<size_t>(a0 + g) * sb + 2 * t;
#pragma unroll
    for (int j = 0; j < kNp; ++j) {
      const int pc = warp + NW * j;
#pragma unroll
      for (int r = 0; r < 2 * T; ++r) {
        const bool ok = tile < tiles && n0 + g + 8 * r < N;
        w[j][r] = ldg16_stream(wb + static_cast<size_t>(8 * r) * rb + pc * 64, ok);
        sc[j][r] = torchquant::ld_u16_if(sbp + static_cast<size_t>(8 * r) * sb + pc * 8, ok);
      }
    }
  };
  uint4 w[kNp][2 * T];
  uint32_t sc[kNp][2 * T];
  int tile = blockIdx.x;
  if constexpr (kPf) issue(tile, w, sc);
  for (int it = 0; tile < tiles; tile += gridDim.x, ++it) {
    uint4 wn[kNp][2 * T];
    uint32_t scn[kNp][2 * T];
    if constexpr (kPf)
      issue(tile + gridDim.x, wn, scn);
    else
      issue(tile, w, sc);
    float acc[T][4] = {};
#pragma unroll
    for (int j = 0; j < kNp; ++j) {
      uint32_t sp[2 * T];
#pragma unroll
      for (int r = 0; r < 2 * T; ++r) sp[r] = e4m3x2_to_bf16x2_x2p119(sc[j][r]);
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int tt = 0; tt < T; ++tt) {
          const uint4 vl = w[j][2 * tt], vh = w[j][2 * tt + 1];
          const uint32_t wl = q == 0 ? vl.x : q == 1 ? vl.y : q == 2 ? vl.z : vl.w;
          const uint32_t wh = q == 0 ? vh.x : q == 1 ? vh.y : q == 2 ? vh.z : vh.w;
          word_mma(acc[tt], wl, wh, sp[2 * tt], sp[2 * tt + 1], q, xr[j][q]);
        }
    }
    const int buf = it & 1;
#pragma unroll
    for (int tt = 0; tt < T; ++tt)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[buf][warp][2 * t + (r & 1)][16 * tt + g + 8 * (r >> 1)] = acc[tt][r];
    __syncthreads();  // (the next write of red[buf] is two tiles on, past the next barrier)
    for (int i = tid; i < 8 * R; i += NW * 32) {
      const int ml = i / R, nl = i % R, n = tile * R + nl;
      if (ml < M && n < N) {
        float s = 0.f;
#pragma unroll
        for (int v = 0; v < NW; ++v) s += red[buf][v][ml][nl];
        out[static_cast<size_t>(ml) * N + n] = s * 128.0f;
      }
    }
    if constexpr (kPf) {
#pragma unroll
      for (int j = 0; j < kNp; ++j)
#pragma unroll
        for (int r = 0; r < 2 * T; ++r) {
          w[j][r] = wn[j][r];
          sc[j][r] = scn[j][r];
        }
    }
  }
}

// ---- host reference: the same bit operations ----
static uint32_t rotl(uint32_t w, int s) { return (w << s) | (w >> (32 - s)); }
static float bf16_bits(uint32_t h16) {
  uint32_t f = h16 << 16;
  float v;
  std::memcpy(&v, &f, 4);
  return v;
}
static float e4m3_value(uint8_t c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  const float v = e == 0 ? std::ldexp(m / 8.0f, -6) : std::ldexp(1.0f + m / 8.0f, e - 7);
  return s ? -v : v;
}

using Fn = void (*)(const uint8_t*, const uint8_t*, const __nv_bfloat16*, int, int, int, float*, int);
struct Variant {
  const char* name;
  Fn fn;
  bool xs, pers;
  bool skel = false;  // not checked (wrong by design)
  bool xn = false;    // x in shared memory, natural order
  int rows = 16;       // weight rows per block (direct_gemv_rows: 16 T)
  int threads = 256;   // block size (direct_gemv_xreg: 32 NW)
  int pieces = 0;      // direct_gemv_xreg: the K / 128 it is built for (other K: not run)
  bool wt = false;     // the weight stored per 16-row tile and piece (direct_gemv_lean kWT)
  bool st = false;     // the scales stored so (kScT)
};

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  const std::vector<ProbeShape> shapes = probe_setup(argc, argv, 128, prop);
  const int sms = prop.multiProcessorCount;
  // U = pieces in flight per lane
  // "xs": persistent, x in shared memory, layout 1 as the extension stores it (M <= 4)
  // "p": the natural-order form on a persistent grid (x still from global memory)
  std::vector<Variant> vars = {{"U=2", direct_gemv<2>, false, false},
                               {"U=3", direct_gemv<3>, false, false},
                               {"U=4", direct_gemv<4>, false, false},
                               {"U=8", direct_gemv<8>, false, false},
                               {"U=2p", direct_gemv<2, false, true>, false, true},
                               {"U=4p", direct_gemv<4, false, true>, false, true},
                               {"U=2xs", direct_gemv<2, true>, true, true},
                               {"U=4xs", direct_gemv<4, true>, true, true},
                               {"U=8xs", direct_gemv<8, true>, true, true},
                               // (2026-12-05i) load depth against occupancy on the faster card:
                               // /b = launch bounds' minimum blocks per SM; "pipe" issues the
                               // next round's loads before decoding this one (two register sets)
                               {"U=3/3", direct_gemv<3, false, false, 3>, false, false},
                               {"U=6", direct_gemv<6>, false, false},
                               {"U=2pipe", direct_gemv<2, false, false, 2, true>, false, false},
                               {"U=2pipe/3", direct_gemv<2, false, false, 3, true>, false, false},
                               {"U=3pipe", direct_gemv<3, false, false, 2, true>, false, false},
                               {"U=4pipe", direct_gemv<4, false, false, 2, true>, false, false},
                               // (2026-12-06c) the load / x / mma side alone, for PROBE_HOT_MB
                               {"U=2skel", direct_gemv<2, false, false, 2, false, 1>, false, false, true},
                               {"U=3pipeskel", direct_gemv<3, false, false, 2, true, 1>, false, false, true},
                               {"U=2nox", direct_gemv<2, false, false, 2, false, 2>, false, false, true},
                               {"U=2ld", direct_gemv<2, false, false, 2, false, 3>, false, false, true},
                               {"U=4ld", direct_gemv<4, false, false, 2, false, 3>, false, false, true},
                               {"U=2xn", direct_gemv<2, false, false, 2, false, 0, true>, false, false, false, true},
                               {"U=4xn", direct_gemv<4, false, false, 2, false, 0, true>, false, false, false, true},
                               {"U=2xp", direct_gemv<2, false, false, 2, false, 0, false, true>, false, false},
                               {"U=3/3xp", direct_gemv<3, false, false, 3, false, 0, false, true>, false, false},
                               {"U=4xp", direct_gemv<4, false, false, 2, false, 0, false, true>, false, false},
                               {"U=2pipexp", direct_gemv<2, false, false, 2, true, 0, false, true>, false, false},
                               {"U=6xp", direct_gemv<6, false, false, 2, false, 0, false, true>, false, false},
                               {"U=3pipexp", direct_gemv<3, false, false, 2, true, 0, false, true>, false, false},
                               {"U=1xr", direct_gemv<1, false, false, 3, false, 0, false, true, true>, false, false},
                               {"U=2xr", direct_gemv<2, false, false, 2, false, 0, false, true, true>, false, false},
                               {"U=3xr", direct_gemv<3, false, false, 2, false, 0, false, true, true>, false, false},
                               {"U=2xr/3", direct_gemv<2, false, false, 3, false, 0, false, true, true>, false, false},
                               // (2026-12-07f) nox's gap to U=1xr, split: xrskel = no decode, x with
                               // the weight; dnox = decode and scale fold, no x loads; xrnos = decode
                               // without the scale fold, x with the weight (all unchecked)
                               {"U=1nox", direct_gemv<1, false, false, 3, false, 2>, false, false, true},
                               {"U=1xrskel", direct_gemv<1, false, false, 3, false, 1, false, true, true>, false, false, true},
                               {"U=1dnox", direct_gemv<1, false, false, 3, false, 4>, false, false, true},
                               {"U=1xrnos", direct_gemv<1, false, false, 3, false, 5, false, true, true>, false, false, true},
                               {"U=2xrskel/3", direct_gemv<2, false, false, 3, false, 1, false, true, true>, false, false, true},
                               {"U=2dnox/3", direct_gemv<2, false, false, 3, false, 4>, false, false, true},
                               {"U=2xrnos/3", direct_gemv<2, false, false, 3, false, 5, false, true, true>, false, false, true},
                               // (2026-12-07f) U=Uxr without the per-piece overhead (checked)
                               {"L1/3", direct_gemv_lean<1, 3>, false, false},
                               {"L2/3", direct_gemv_lean<2, 3>, false, false},
                               {"L2/2", direct_gemv_lean<2, 2>, false, false},
                               {"L3/2", direct_gemv_lean<3, 2>, false, false},
                               {"L4/2", direct_gemv_lean<4, 2>, false, false},
                               // (2026-12-07f, call 4) lean with the x loads predicated, no zero fill
                               {"L1q/3", direct_gemv_lean<1, 3, true>, false, false},
                               {"L2q/3", direct_gemv_lean<2, 3, true>, false, false},
                               {"L2q/2", direct_gemv_lean<2, 2, true>, false, false},
                               // (2026-12-07f, call 4) tiled scales (S), tiled weight and scales (WS)
                               {"L1qS/3", direct_gemv_lean<1, 3, true, true>, false, false, false, false, 16, 256, 0, false, true},
                               {"L2qS/3", direct_gemv_lean<2, 3, true, true>, false, false, false, false, 16, 256, 0, false, true},
                               {"L1qWS/3", direct_gemv_lean<1, 3, true, true, true>, false, false, false, false, 16, 256, 0, true, true},
                               {"L2qWS/3", direct_gemv_lean<2, 3, true, true, true>, false, false, false, false, 16, 256, 0, true, true},
                               {"L2qWS/2", direct_gemv_lean<2, 2, true, true, true>, false, false, false, false, 16, 256, 0, true, true},
                               // (2026-12-07f, after call 4) contiguous pieces per warp, scales by shuffle
                               // (C<P8>: built for K = 1024 P8; the last field is K / 128)
                               {"C8U1/3", direct_gemv_contig<8, 1, 3>, false, false, false, false, 16, 256, 64},
                               {"C8U2/3", direct_gemv_contig<8, 2, 3>, false, false, false, false, 16, 256, 64},
                               {"C8U2/2", direct_gemv_contig<8, 2, 2>, false, false, false, false, 16, 256, 64},
                               {"C4U1/3", direct_gemv_contig<4, 1, 3>, false, false, false, false, 16, 256, 32},
                               {"C4U2/3", direct_gemv_contig<4, 2, 3>, false, false, false, false, 16, 256, 32},
                               {"C4U2/2", direct_gemv_contig<4, 2, 2>, false, false, false, false, 16, 256, 32},
                               // (2026-12-07f, call 3) LP: the lean form software-pipelined; A<n>: n accumulators
                               {"LP1/3", direct_gemv_lean2<1, 3, true, 1>, false, false},
                               {"LP1/2", direct_gemv_lean2<1, 2, true, 1>, false, false},
                               {"LP2/2", direct_gemv_lean2<2, 2, true, 1>, false, false},
                               {"L1A2/3", direct_gemv_lean2<1, 3, false, 2>, false, false},
                               {"L1A4/3", direct_gemv_lean2<1, 3, false, 4>, false, false},
                               {"LP1A2/3", direct_gemv_lean2<1, 3, true, 2>, false, false},
                               {"LP1A4/2", direct_gemv_lean2<1, 2, true, 4>, false, false},
                               // (2026-12-06c) 32 rows per block, x loaded once for both tiles
                               {"R32U1/3", direct_gemv_rows<2, 1, 3>, false, false, false, false, 32},
                               {"R32U1/2", direct_gemv_rows<2, 1, 2>, false, false, false, false, 32},
                               {"R32U2/2", direct_gemv_rows<2, 2, 2>, false, false, false, false, 32},
                               // (2026-12-06d) 64 rows per block: a quarter of the x loads
                               {"R64U1/2", direct_gemv_rows<4, 1, 2>, false, false, false, false, 64},
                               {"R64U1/1", direct_gemv_rows<4, 1, 1>, false, false, false, false, 64},
                               {"R64U2/1", direct_gemv_rows<4, 2, 1>, false, false, false, false, 64},
                               // (2026-12-06e) x in registers, persistent: XR<warps>x<pieces per warp>,
                               // T<tiles per step>, pf = next tile's loads before this tile's decode
                               {"XR16x2pf", direct_gemv_xreg<16, 2, 1, 1, true>, false, true, false, false, 16, 512, 32},
                               {"XR16x2", direct_gemv_xreg<16, 2, 1, 1, false>, false, true, false, false, 16, 512, 32},
                               {"XR8x4pf", direct_gemv_xreg<8, 4, 1, 2, true>, false, true, false, false, 16, 256, 32},
                               {"XR8x4", direct_gemv_xreg<8, 4, 1, 2, false>, false, true, false, false, 16, 256, 32},
                               {"XR16x2T2pf", direct_gemv_xreg<16, 2, 2, 1, true>, false, true, false, false, 32, 512, 32},
                               {"XR16x4", direct_gemv_xreg<16, 4, 1, 1, false>, false, true, false, false, 16, 512, 64},
                               {"XR16x4pf", direct_gemv_xreg<16, 4, 1, 1, true>, false, true, false, false, 16, 512, 64},
                               {"XR32x2pf", direct_gemv_xreg<32, 2, 1, 1, true>, false, true, false, false, 16, 1024, 64}};
  // PROBE_VARIANTS=name,name,...: only those (default: every one)
  if (const char* only = std::getenv("PROBE_VARIANTS")) {
    const std::string list = std::string(",") + only + ",";
    std::vector<Variant> kept;
    for (const Variant& v : vars)
      if (list.find(std::string(",") + v.name + ",") != std::string::npos) kept.push_back(v);
    vars = kept;
  }
  const double warm_ms = std::getenv("WARM_MS") ? std::atof(std::getenv("WARM_MS")) : 30.0;
  // PROBE_HOT_MB=m: one copy of the operands, and every block reads one of the first tiles that
  // fit in m MB (hot_tiles), so each replay streams the grid's full byte count from L2, not DRAM:
  // the SM-side rate of a variant (its decode, loads and mma) with DRAM taken out.
  const double hot_mb = std::getenv("PROBE_HOT_MB") ? std::atof(std::getenv("PROBE_HOT_MB")) : 0.0;
  unsigned* sink;
  CK(cudaMalloc(&sink, 64));
  for (const ProbeShape& sh : shapes) {
    const size_t wbytes = static_cast<size_t>(sh.N) * sh.K / 2, sbytes = static_cast<size_t>(sh.N) * sh.K / 16;
    const size_t bytes = wbytes + sbytes;
    const int hot_tiles =
        hot_mb > 0 ? std::max(4, static_cast<int>(hot_mb * 1e6 / (64.0 * (sh.K / 2 + sh.K / 16))) * 4) : 0;
    const size_t copies =
        hot_tiles > 0 ? 1 : std::max<size_t>(4, 8 * static_cast<size_t>(prop.l2CacheSize) / bytes + 1);
    std::vector<uint8_t> hw(wbytes), hs(sbytes);
    for (size_t j = 0; j < wbytes; ++j) hw[j] = static_cast<uint8_t>((j * 2654435761u) >> 13);
    for (size_t j = 0; j < sbytes; ++j) hs[j] = static_cast<uint8_t>(0x30 + ((j * 40503u) >> 7) % 0x20);
    std::vector<uint8_t*> w(copies), s(copies), w_t(copies, nullptr), s_t(copies, nullptr);
    bool tiled = false;
    for (const Variant& v : vars) tiled = tiled || v.wt || v.st;
    tiled = tiled && sh.N % 16 == 0;
    std::vector<uint8_t> hwt, hst;
    if (tiled) {  // per 16-row tile T and piece p: weight [T][p][2][8 rows][64 B], scales [T][p][16 rows][8 B]
      const int pieces = sh.K / 128;
      hwt.resize(wbytes);
      hst.resize(sbytes);
      for (int T = 0; T < sh.N / 16; ++T)
        for (int pc = 0; pc < pieces; ++pc)
          for (int r = 0; r < 16; ++r) {
            const size_t tpi = static_cast<size_t>(T) * pieces + pc;
            std::memcpy(&hwt[tpi * 1024 + (r / 8) * 512 + (r % 8) * 64],
                        &hw[static_cast<size_t>(T * 16 + r) * (sh.K / 2) + pc * 64], 64);
            std::memcpy(&hst[tpi * 128 + r * 8], &hs[static_cast<size_t>(T * 16 + r) * (sh.K / 16) + pc * 8], 8);
          }
    }
    for (size_t i = 0; i < copies; ++i) {
      CK(cudaMalloc(&w[i], wbytes));
      CK(cudaMalloc(&s[i], sbytes));
      CK(cudaMemcpy(w[i], hw.data(), wbytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(s[i], hs.data(), sbytes, cudaMemcpyHostToDevice));
      if (tiled) {
        CK(cudaMalloc(&w_t[i], wbytes));
        CK(cudaMalloc(&s_t[i], sbytes));
        CK(cudaMemcpy(w_t[i], hwt.data(), wbytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(s_t[i], hst.data(), sbytes, cudaMemcpyHostToDevice));
      }
    }
    const int Mmax = 8;
    std::vector<uint16_t> hx(static_cast<size_t>(Mmax) * sh.K);
    for (size_t j = 0; j < hx.size(); ++j) {
      const float v = static_cast<float>(static_cast<int>((j * 7919u + 13) % 2001) - 1000) / 1000.0f;
      uint32_t f;
      std::memcpy(&f, &v, 4);
      hx[j] = static_cast<uint16_t>(f >> 16);  // truncated to bf16
    }
    __nv_bfloat16* x;
    float* out;
    CK(cudaMalloc(&x, hx.size() * 2));
    CK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&out, static_cast<size_t>(Mmax) * sh.N * 4));
    const int reps = static_cast<int>(std::max<size_t>(copies, 8));
    if (hot_tiles > 0) {
      std::printf("\n== %dx%d hot: %d tiles of 16 rows (%.2f MB) read by %d blocks, %.2f MB per launch\n",
                  sh.N, sh.K, hot_tiles, hot_tiles * 16.0 * (sh.K / 2 + sh.K / 16) / 1e6, (sh.N + 15) / 16,
                  bytes / 1e6);
    } else {  // pure read of the weight and scale bytes (one buffer per copy would double the
       // allocations; the weight copies stand for both, timed at wbytes + sbytes)
      std::vector<uint8_t*> rbuf(copies);
      for (size_t i = 0; i < copies; ++i) CK(cudaMalloc(&rbuf[i], bytes));
      const size_t n16 = bytes / 16;
      const double us = graph_median_us(reps, [&](int r, cudaStream_t st) {
        const uint4* p = reinterpret_cast<const uint4*>(rbuf[r % copies]);
        size_t n = n16;
        void* args[] = {(void*)&p, (void*)&n, (void*)&sink};
        launch_ex((const void*)read_kernel<8, 2, true>, dim3(2 * sms), dim3(512), 0, st, args, true);
      }, warm_ms);
      for (auto p : rbuf) CK(cudaFree(p));
      std::printf("\n== %dx%d (%.2f MB weight + scales, %zu copies): pure read %.2f us (%.3f TB/s)\n",
                  sh.N, sh.K, bytes / 1e6, copies, us, bytes / us * 1e-6);
    }
    for (int M : {1, 2, 4, 8}) {
     for (int l1 = 0; l1 < 2; ++l1) {  // 0: the probe's natural order; 1: layout 1 (xs variants)
      if (l1 && M > 4) continue;
      // host reference (double), rows sampled: every 97th row and the last
      std::vector<int> rows;
      for (int n = 0; n < sh.N; n += 97) rows.push_back(n);
      rows.push_back(sh.N - 1);
      std::vector<double> ref(rows.size() * M), mag(rows.size() * M);
      for (size_t ri = 0; ri < rows.size(); ++ri) {
        const int n = hot_tiles > 0 ? (rows[ri] / 16 % hot_tiles) * 16 + rows[ri] % 16 : rows[ri];
        for (int pc = 0; pc < sh.K / 128; ++pc)
          for (int t = 0; t < 4; ++t)
            for (int q = 0; q < 4; ++q) {
              uint32_t wd;
              std::memcpy(&wd, &hw[static_cast<size_t>(n) * (sh.K / 2) + pc * 64 + 16 * t + 4 * q], 4);
              const uint32_t h[4] = {wd & kBf16PairMask, rotl(wd, 10) & kBf16PairMask,
                                     rotl(wd, 13) & kBf16PairMask,
                                     ((wd & kL1MulMask) * kL1Mul) & kBf16PairMask};
              const uint8_t sc = hs[static_cast<size_t>(n) * (sh.K / 16) + pc * 8 + 2 * t + (q >> 1)];
              const double sv = static_cast<double>(e4m3_value(sc)) * std::ldexp(1.0, 126);
              for (int p = 0; p < 4; ++p)
                for (int hi = 0; hi < 2; ++hi) {
                  const double wv = bf16_bits(hi ? h[p] >> 16 : h[p] & 0xFFFF) * sv;  // e2m1 * bs
                  const int k = pc * 128 + 32 * t + 8 * q + (l1 ? p + 4 * hi : 2 * p + hi);
                  for (int m = 0; m < M; ++m) {
                    const double xv = bf16_bits(hx[static_cast<size_t>(m) * sh.K + k]);
                    ref[ri * M + m] += wv * xv;
                    mag[ri * M + m] += std::fabs(wv * xv);
                  }
                }
            }
      }
      for (const Variant& v : vars) {
        if (v.xs != (l1 == 1)) continue;
        const size_t smem = (v.xs || v.xn) ? static_cast<size_t>(M) * sh.K * 2 : 0;
        if (smem > 64 * 1024) continue;  // xn at large M x K: not run
        if (v.pieces && v.pieces != sh.K / 128) continue;  // xreg: built for one K
        if ((v.wt || v.st) && !tiled) continue;              // tiled operands: N % 16 == 0
        CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024));
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, v.fn, v.threads, smem));
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, v.fn));
        const int tiles = (sh.N + v.rows - 1) / v.rows;
        const int grid = v.pers ? std::min(tiles, bps * sms) : tiles;
        auto one = [&](int r, cudaStream_t st) {
          const uint8_t* wp = v.wt ? w_t[r % copies] : w[r % copies];
          const uint8_t* sp = v.st ? s_t[r % copies] : s[r % copies];
          int Mv = M, Nv = sh.N, Kv = sh.K;
          int hv = hot_tiles;
          void* args[] = {(void*)&wp, (void*)&sp, (void*)&x,   (void*)&Mv,
                          (void*)&Nv, (void*)&Kv, (void*)&out, (void*)&hv};
          launch_ex((const void*)v.fn, dim3(grid), dim3(v.threads), smem, st, args, true);
        };
        CK(cudaMemset(out, 0xff, static_cast<size_t>(M) * sh.N * 4));  // NaN poison
        one(0, 0);
        CK(cudaDeviceSynchronize());
        std::vector<float> got(static_cast<size_t>(M) * sh.N);
        CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
        double worst = 0;  // |err| / (sum |terms|): fp32 accumulation of K terms
        for (size_t ri = 0; ri < rows.size(); ++ri)
          for (int m = 0; m < M; ++m) {
            const double e = std::fabs(got[static_cast<size_t>(m) * sh.N + rows[ri]] - ref[ri * M + m]) /
                             std::max(mag[ri * M + m], 1e-30);
            worst = std::isnan(e) ? 1e30 : std::max(worst, e);
          }
        const double bound = sh.K * std::ldexp(1.0, -23);  // K u32 (fp32 sums, exact products)
        const double us = graph_median_us(reps, one, warm_ms);
        std::printf("M=%d %-5s regs %3d  %d blocks/SM  grid %6d  %8.2f us  %6.3f TB/s  err %.1e %s\n", M,
                    v.name, fa.numRegs, bps, grid, us, bytes / us * 1e-6, worst,
                    v.skel ? "(skel: unchecked)" : worst <= bound ? "ok" : "WRONG");
      }
     }
    }
    for (auto p : w) CK(cudaFree(p));
    for (auto p : s) CK(cudaFree(p));
    for (auto p : w_t) if (p) CK(cudaFree(p));
    for (auto p : s_t) if (p) CK(cudaFree(p));
    CK(cudaFree(x));
    CK(cudaFree(out));
  }
  return 0;
}
