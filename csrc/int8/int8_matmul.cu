// CUDA implementations of int8_matmul and quantize_int8
// (TORCH_LIBRARY_IMPL(torchquant, CUDA)): argument checks, the dispatch
// heuristic and the launches. The kernels are in int8_kernels.cuh (matmul)
// and quantize_int8_kernels.cuh; see those headers for what each computes,
// its launch assumptions and its memory pattern. docs/int8_gemm.md has the
// design notes and the predicted numbers.
//
// int8_matmul paths (kernel=):
//   "gemv"  weight-stationary mma.sync decode kernel, meant for M <= 32; any
//           M works (it re-reads the weight once per 32 rows).
//   "mma"   tiled mma.sync m16n8k32 GEMM with a cp.async ring, three tile
//           shapes and split-K, chosen by choose_int8_kernel below.
//   "wgmma" Hopper warpgroup-MMA GEMM fed by TMA (sm_90 only; it lives in
//           torchquant._C_sm90a as torchquant::_int8_gemm_sm90a and is
//           reached through the dispatcher). K % 16 == 0.
//   "auto"  choose_int8_kernel.
// Both need sm_80+ (m16n8k32 with s8 operands is an sm_80 shape); on an older
// GPU every call raises a clear error (use the CPU op or torch._int_mm there).
// Any M, N and K (1 <= K <= 65536): K % 16 == 0 with 16-byte aligned a_q and
// w_q takes the 16-byte loaders; anything else runs the same kernels with a
// word-granular loader (correct, several times slower), so no forced path
// ever has to refuse a shape.
//
// Costs outside the kernel, all stream-ordered (CUDA-graph safe, no sync):
//   a_zero given without w_colsum: one at::sum over w_q (reads N*K bytes
//     again: as much traffic as a decode GEMV; pass w_colsum to avoid it);
//   split-K (only when there are fewer output tiles than SMs): two memsets
//     (an int32 [M, N] workspace and one counter per tile).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/checks.h"
#include "common/device.h"
#include "common/pdl.h"
#include "common/sm90a_op.h"
#include "int8/int8_kernels.cuh"
#include "int8/quantize_int8_kernels.cuh"

namespace torchquant {
namespace int8 {
namespace {

constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Largest M the decode kernel takes under "auto": up to 32 tokens fit one
// pass (4 n8 tiles of activation per 16 weight rows), so the weight streams
// from HBM exactly once. Past that the tiled GEMM's 64-row tile wastes less.
constexpr int64_t kGemvMaxM = 32;
// On sm_90 with the wgmma GEMM (torchquant._C_sm90a), every M <= 32 goes to wgmma where the gemv
// would split K over blocks (N < 16 x SMs, K >= 2048): that split's zeroed workspace and atomics
// put a floor under the gemv, while the wgmma GEMM's 64-row tiles with their cluster K split need
// no workspace (and cost the same at M = 1 as at M = 64). H200, cold L2, graph replay, us, wgmma
// against the gemv, bf16 cuBLAS in brackets (results/h200/2026-12-02k_int8_smalln/call1 for
// M = 1 / 8 / 16; 2026-12-02j_int8_cluster/call6 for M = 17 / 32):
//   768x2048   M = 1 / 8 / 16: 5.4 / 5.4 / 5.4 vs 6.1 / 6.1 / 6.4 (7.3 / 6.9 / 5.9); M = 17 / 32: 5.4 vs 7.3 / 7.4
//   2048x2048  5.7 / 5.7 / 5.8 vs 6.5 / 6.9 / 7.3 (6.1);  M = 17 / 32: 5.8 vs 8.2 / 8.6 (6.4)
//   1536x2048  5.6 vs 6.4 / 6.6 / 7.1 (6.0-7.9);  1024x4096 6.3-6.4 vs 6.5 / 6.8 / 7.3 (7.7-7.9)
//   1024x8192  7.6-8.7 vs 7.6 / 7.9 / 8.4 (9.7-9.9): level within the run's noise at M <= 8
// Elsewhere the gemv keeps M <= 32 (2048x768, where it does not split: 2.3 vs 4.1 at M = 1;
// 4096x4096 7.0 vs 11.2); at M = 17 it won on 9 of the other 12 sweep shapes with the wgmma tiles
// of then (28672x8192 73.6 vs 98.6), wgmma on 14336x4096 (19.2 vs 22.8), 10240x8192 and
// 128256x4096 (153.3 vs 159.6).

// And at M = 17..32 the gemv runs its 32-token pass, whose cost grows with M (x loads, 122
// registers: 2 blocks per SM), while the wgmma GEMM's one 64-row tile costs the same from M = 1 to
// 64 (since 2026-12-03b it keeps 64 x 128 tiles past one wave, int8_gemm_sm90a.cu). So on sm_90
// wgmma took M = 17..32 where N >= 10240, and M = 25..32 where N >= 6144 (2026-12-03b; the rule
// of today is below these numbers). H200, cold L2, graph replay, us, gemv / wgmma, bf16
// cuBLAS in brackets (results/h200/2026-12-03b_int8_gemv_ring/call4; M = 24 from
// 2026-12-02j_int8_cluster/call6, same tiles there):
//   M = 17: 28672x8192 75.1-75.9 / 64.2-70.5 (111.0); 128256x4096 160.9-165.3 / 134.8-137.4;
//           57344x8192 143.2-144.7 / 125.0; 14336x4096 23.1-23.5 / 19.1; 10240x8192 31.8 / 28.8;
//           28672x4096 40.0-41.3 / 34.3-36.4; but 6144x4096 12.2 / 13.3, 8192x8192 24.2 / 25.2,
//           8192x28672 67.1-69.0 / 74.7, 4096x14336 20.2 / 25.9, 4096x4096 7.5 / 10.7
//   M = 24: 6144x4096 12.7 / 12.7, 8192x8192 25.0 / 24.1, 8192x28672 71.0 / 76.3
//   M = 32: 28672x8192 85.9 / 62.6-66.0 (112.9); 128256x4096 194.9-200.3 / 130.8-131.5;
//           8192x28672 79.7-82.5 / 69.3-69.9; 8192x8192 27.6-27.9 / 23.6; 6144x4096 14.2 / 12.0;
//           but 4096x4096 8.3 / 9.0, 4096x14336 22.6 / 22.6, 2048x768 3.2 / 4.1
// Since 2026-12-03c the wgmma GEMM loads only round_up(M, 8) rows of A per TMA box
// (int8_gemm_sm90a.cu), which took 3-12 % off its decode times, and the lines moved. Same
// process, gemv / wgmma, bf16 cuBLAS in brackets (results/h200/2026-12-03c_int8_abox/call2):
//   M = 17..24: wgmma now also wins at 6144x4096 (12.2-13.2 / 10.0-10.2) and 8192x8192
//           (24.0-25.8 / 21.1-21.7), level at 4096x14336 (20.4-21.0 / 20.0-20.2); the gemv keeps
//           4096x4096 (7.4-8.0 / 8.5-8.6) and 2048x768 (3.0 / 4.0).
//   M = 13..16, K >= 8192 and N x K >= 10240 x 8192: 28672x8192 M = 16 64.4-64.7 / 62.6-62.8
//           (107.8), M = 13 61.1-61.9 / 60.3; 10240x8192 M = 16 26.7-26.9 / 25.0-25.2;
//           8192x28672 M = 16 62.9-63.5 / 59.8-59.9; 57344x8192 M = 16 121.9-122.5 / 120.8-121.2
//           (but M = 13 116.2-117.6 / 117.5-121.6).
//   M = 13..16 elsewhere the gemv wins or ties: 8192x8192 M = 16 21.1-21.2 / 21.5-21.7,
//           4096x14336 18.0-18.1 / 20.1, 128256x4096 124.6-128.1 / 128.1-128.6, 28672x4096 and
//           14336x4096 level; at M = 12 it wins 28672x8192 (60.2-61.2 / 62.6-62.8).
constexpr int64_t kWgmmaBatchMinN = 6144;
constexpr int64_t kWgmmaDecodeMinM = 13;
constexpr int64_t kWgmmaDecodeMinK = 8192;
constexpr int64_t kWgmmaDecodeMinNK = int64_t{10240} * 8192;
bool batch_prefers_wgmma(int64_t M, int64_t N, int64_t K) {
  if (M > 16 && M <= kGemvMaxM) return N >= kWgmmaBatchMinN;
  return M >= kWgmmaDecodeMinM && M <= 16 && K >= kWgmmaDecodeMinK && N * K >= kWgmmaDecodeMinNK;
}

enum class Int8Kernel { kGemv, kMmaL, kMmaM, kMmaS, kWgmma };

struct Int8Plan {
  Int8Kernel kernel;
  int gemv_mt8;  // gemv: token tiles of 8 per block (1, 2 or 4)
  int splits;    // split-K factor (1 = none)
};

// =============================================================== dispatch ====
// The gemv's plan for M tokens: token tiles of 8 per block and its K split over blocks.
// Blocks are 16 weight rows x up to 32 tokens with K split over 8 warps.
// Split K over blocks too only when there are fewer blocks than SMs
// (N < 16 * SMs): below that, part of the chip (and of the HBM
// bandwidth it can pull) would sit idle. Each split keeps >= 16 chunks
// (1 KiB of every weight row) so the atomics stay a small extra.
Int8Plan gemv_plan(int64_t M, int64_t N, int64_t chunks, int64_t sms) {
  Int8Plan p{Int8Kernel::kGemv, M <= 8 ? 1 : (M <= 16 ? 2 : 4), 1};
  const int64_t blocks = cdiv(N, 16) * cdiv(M, 8 * p.gemv_mt8);
  if (blocks < sms && chunks >= 32) {
    p.splits = static_cast<int>(std::min<int64_t>({cdiv(2 * sms, blocks), chunks / 16, 16}));
  }
  return p;
}

// choose_int8_kernel: the one place that decides which CUDA kernel runs
// int8_matmul, from the device's capabilities and the problem shape.
// `forced` is "" for kernel="auto", else "gemv" or "mma".
Int8Plan choose_int8_kernel(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K, bool aligned,
                            bool have_wgmma, const std::string& forced) {
  // Below sm_80: neither kernel can run. Both are built on
  // mma.m16n8k32.s8 (an sm_80 shape) and the module is compiled for sm_80+.
  TORCH_CHECK(caps.cc() >= 80, "int8_matmul: the CUDA kernels need compute capability 8.0 or newer "
              "(mma.sync m16n8k32 with int8 operands); this GPU is sm_", caps.cc(),
              ". Run the op on CPU tensors instead.");
  const int64_t sms = caps.sm_count;
  const int64_t ktiles = cdiv(K, 64);

  if (forced == "wgmma") {
    TORCH_CHECK(have_wgmma && caps.cc() == 90, "int8_matmul: kernel 'wgmma' needs an sm_90 GPU and "
                "a build with torchquant._C_sm90a (9.0 in TORCH_CUDA_ARCH_LIST); this GPU is sm_",
                caps.cc(), have_wgmma ? "" : " and the sm_90a module is not loaded");
    TORCH_CHECK(K % 16 == 0, "int8_matmul: kernel 'wgmma' needs K % 16 == 0 (TMA row strides), got K = ",
                K, "; use kernel 'mma'");
    return {Int8Kernel::kWgmma, 0, 1};
  }
  // Hopper, M > 32: warpgroup MMA fed by TMA (torchquant::_int8_gemm_sm90a,
  // in the sm_90a module) runs the tensor cores at their full rate, which
  // mma.sync cannot reach on sm_90. Measured on the H200 (cold L2, graph
  // replay): M = 2048, 28672x8192: 638 us (1507 TOP/s) against 167-674 us
  // for the mma tiles; M = 64: 92 / 23 / 14.5 us against 109 / 54 / 35 us
  // for the mma tiles at 28672x8192 / 14336x4096 / 4096x4096 (with the
  // 64-row wgmma tiles of 2026-12-02i: 80 / 20 / 8.9). At M <= 32 the
  // gemv kernel below streams the weight faster (28672x8192 M = 8: 58.3-58.7
  // vs 60.0-62.4 us), except where it would split K over blocks (see
  // kGemvMaxM) and on the wide shapes of M = 13..32 (batch_prefers_wgmma).
  if (forced.empty() && have_wgmma && caps.cc() == 90 && K % 16 == 0) {
    if (M > kGemvMaxM || gemv_plan(M, N, ktiles, sms).splits > 1 || batch_prefers_wgmma(M, N, K)) {
      return {Int8Kernel::kWgmma, 0, 1};
    }
  }
  bool gemv;
  if (forced == "gemv") {
    gemv = true;
  } else if (forced == "mma") {
    gemv = false;
  } else {
    // M <= 32 (decode, small batches): the weight (N*K bytes) is the whole
    // cost and the arithmetic is ~2*M ops per weight byte, far below what the
    // tensor cores do per byte of HBM bandwidth. gemv streams the weight once
    // with no shared-memory staging, at the HBM roofline.
    // M > 32: enough reuse of each weight byte that a tiled GEMM with
    // shared-memory operand reuse wins.
    gemv = M <= kGemvMaxM;
  }

  if (gemv) return gemv_plan(M, N, ktiles, sms);

  // Tiled GEMM. Unaligned K / pointers: the word-load fallback uses only the
  // small tile (its loaders are the bottleneck, not the tile shape).
  const int64_t tiles_l = cdiv(M, 128) * cdiv(N, 256);
  const int64_t tiles_m = cdiv(M, 128) * cdiv(N, 128);
  const int64_t tiles_s = cdiv(M, 64) * cdiv(N, 128);
  if (aligned && M >= 256 && tiles_l >= 2 * sms &&
      caps.max_smem_optin >= MmaL::kSmemBytes + 1024) {
    // Large prefill: 128x256 tiles (8 warps of 64x64, one CTA per SM) move
    // the least shared-memory and L2 traffic per mma; with >= 2 waves the
    // wave-quantization loss stays <= ~1/3 of one wave.
    return {Int8Kernel::kMmaL, 0, 1};
  }
  if (aligned && M >= 128 && tiles_m >= sms) {
    // Medium: 128x128 tiles (4 warps of 64x64, two CTAs per SM), same warp
    // tile as L, twice the tiles, at least one CTA per SM.
    return {Int8Kernel::kMmaM, 0, 1};
  }
  // Small M (33..255) or few tiles: 64x128 tiles (4 warps of 32x64, three
  // CTAs per SM). These shapes are weight-bandwidth bound; if there are still
  // fewer tiles than SMs, split K so every SM streams weight, each split
  // keeping >= 4 k-tiles (256 of K).
  Int8Plan p{Int8Kernel::kMmaS, 0, 1};
  if (tiles_s < sms && ktiles >= 8) {
    p.splits = static_cast<int>(std::min<int64_t>({cdiv(sms, tiles_s), ktiles / 4, 16}));
  }
  return p;
}

// ================================================================ launches ====
template <class Cfg, bool kAligned, typename OutT>
void launch_mma(const GemmParams& p, int device, cudaStream_t stream) {
  auto kernel = int8_mma_gemm_kernel<Cfg, kAligned, OutT>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), device, Cfg::kSmemBytes);
  const int64_t grid = static_cast<int64_t>(p.tiles_m) * p.tiles_n * p.splits;
  TORCH_CHECK(grid <= INT_MAX, "int8_matmul: problem too large (", grid, " tiles)");
  kernel<<<static_cast<unsigned>(grid), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class Cfg, typename OutT>
void run_mma(GemmParams p, bool aligned, int device, cudaStream_t stream, const at::Tensor& like) {
  p.tiles_m = static_cast<int>(cdiv(p.M, Cfg::BM));
  p.tiles_n = static_cast<int>(cdiv(p.N, Cfg::BN));
  // 16 m-tiles per rasterization group: a wave of ~132-264 CTAs then covers
  // <= 16 m-tiles x ~8-16 n-tiles, so its A rows and W rows are fetched from
  // HBM about once and re-read from L2 (the square-ish group minimizes the
  // bytes a wave touches).
  p.group_m = 16;
  p.ktiles = static_cast<int>(cdiv(p.K, 64));
  const int splits = std::max(1, p.splits);
  p.kt_per_split = static_cast<int>(cdiv(p.ktiles, splits));
  p.splits = static_cast<int>(cdiv(p.ktiles, p.kt_per_split));  // no empty split
  at::Tensor ws, counters;
  if (p.splits > 1) {
    ws = at::zeros({p.M, p.N}, like.options().dtype(at::kInt));
    counters = at::zeros({static_cast<int64_t>(p.tiles_m) * p.tiles_n}, like.options().dtype(at::kInt));
    p.ws = ws.data_ptr<int32_t>();
    p.counters = counters.data_ptr<int>();
  }
  if (aligned) {
    launch_mma<Cfg, true, OutT>(p, device, stream);
  } else {
    if constexpr (std::is_same_v<Cfg, MmaS>) {
      launch_mma<Cfg, false, OutT>(p, device, stream);
    } else {
      TORCH_CHECK(false, "int8_matmul: internal error: unaligned operands need the S tile");
    }
  }
  // ws / counters are freed here; the caching allocator keeps the memory
  // reserved for this stream until the kernel has run.
}

// Loads in flight per lane for aligned gemv grids (GemvShape kLoads; 0 = the tile's default).
//
// 8-token tile: 6 chunks instead of 4 when its grid is one wave of at most 2 blocks per SM (few
// warps, each needing more bytes in flight; H200, 2026-12-03g call 3: 4096x14336 M = 1 16.4 vs
// 19.4 us), or when each warp streams at least 16 chunks (K >= 8192 unsplit). On larger grids
// the deep loads won only at K = 8192 and lost at K = 4096, 8 chunks per warp (2026-12-03h
// calls 1 and 2, us, auto / deep, M = 1 and 8: 128256x8192 246.8 / 242.8, 244.5 / 241.0;
// 57344x8192 113.6 / 112.3, 112.5 / 112.4; 28672x8192 58.7 / 58.5, 59.6 / 59.0; but
// 128256x4096 124.4 / 127.8, 28672x4096 30.4 / 33.6, 14336x4096 16.6 / 18.9).
// TORCHQUANT_INT8_GEMV_DEEP (read per call): 1 for every 8-token aligned grid, -1 never.
//
// 16-token tile: 2 chunks instead of 4 for 15..16 tokens on long unsplit rows (>= 16 chunks
// per warp) in grids of at least 4 waves of 3 blocks per SM: the smaller register set lets 3
// blocks share an SM (24 warps x 2 KiB in flight against 16 x 4 KiB), which pays only where the
// activation loads are many (their L1 / L2 latency sits in every batch) and the grid is deep
// enough that waves of 3 round well. H200, results/h200/2026-12-04c_int8_sched, extension A/B in
// one process, us, 2 / 4. Call 3: 28672x8192 (1792 blocks) M = 16 62.3-62.6 / 64.7-65.1 but
// M = 9 60.6-61.0 / 59.6; 8192x28672 (512 blocks, 1.3 waves of 3) M = 16 71.8-72.3 / 62.4.
// Call 4 (another machine): M = 16 28672x8192 63.3-63.4 / 63.5-63.6, 57344x8192 121.6-121.9 /
// 122.3-122.4, 128256x8192 264.3-269.1 / 272.1-274.7; M = 14 mixed (28672x8192 62.3-62.4 /
// 63.0-63.1, 57344x8192 119.9-121.2 / 118.8-120.1); M = 10..12 4 faster on every shape.
// TORCHQUANT_INT8_GEMV_LOADS16 (read per call): 2 or 4 forces it.
int gemv_loads(int mt8, int64_t M, int64_t blocks, int sm_count, int chunks_per_split) {
  const bool long_rows = chunks_per_split >= 16 * kGemvWarps;
  if (mt8 == 1) {
    const int forced = env_int("TORCHQUANT_INT8_GEMV_DEEP");
    if (forced == 1 || forced == -1) return forced == 1 ? 6 : 0;
    return blocks <= 2 * int64_t{sm_count} || long_rows ? 6 : 0;
  }
  if (mt8 == 2) {
    const int forced = env_int("TORCHQUANT_INT8_GEMV_LOADS16");
    if (forced == 2 || forced == 4) return forced == 2 ? 2 : 0;
    return long_rows && M >= 15 && blocks >= 12 * int64_t{sm_count} ? 2 : 0;
  }
  return 0;
}

template <int kMT8, typename OutT>
void run_gemv(GemvParams p, bool aligned, int splits, int sm_count, cudaStream_t stream,
              const at::Tensor& like, bool static_weight) {
  constexpr int kTokens = GemvShape<kMT8>::kTokens;
  const int64_t gx = cdiv(p.N, 16), gy = cdiv(p.M, kTokens);
  TORCH_CHECK(gy <= 65535, "int8_matmul: kernel 'gemv' takes at most ", 65535LL * kTokens,
              " rows, got M = ", p.M, "; use kernel 'mma' or 'auto'");
  p.chunks = static_cast<int>(cdiv(p.K, 64));
  // TORCHQUANT_INT8_GEMV_EPI (read per call): -1 loads the epilogue operands after the K loop
  // (int8_kernels.cuh, int8_gemv_kernel), as every tile does with more than 16 tokens.
  p.epi_early = env_int("TORCHQUANT_INT8_GEMV_EPI") == -1 ? 0 : 1;
  // Whole rounds of 8 warps per split, so the warps of a block stay balanced.
  const int64_t per = cdiv(cdiv(p.chunks, std::max(1, splits)), kGemvWarps) * kGemvWarps;
  p.chunks_per_split = static_cast<int>(per);
  p.splits = static_cast<int>(cdiv(p.chunks, per));
  at::Tensor ws, counters;
  if (p.splits > 1) {
    ws = at::zeros({p.M, p.N}, like.options().dtype(at::kInt));
    counters = at::zeros({gx * gy}, like.options().dtype(at::kInt));
    p.ws = ws.data_ptr<int32_t>();
    p.counters = counters.data_ptr<int>();
  }
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(p.splits));
  // common/pdl.h; the op never copies the weight (unaligned rows are read as they lie)
  const PdlMode pdl = pdl_mode(c10::cuda::current_device(), PdlKernel::kInt8Gemv,
                               weight_written(static_weight, false));
  p.w_early = pdl.early ? 1 : 0;
  const int loads = aligned ? gemv_loads(kMT8, p.M, gx * gy * p.splits, sm_count, p.chunks_per_split) : 0;
  if constexpr (kMT8 == 1) {
    if (loads == 6) {
      launch_kernel(int8_gemv_kernel<1, true, OutT, 6>, grid, dim3(kGemvThreads), 0, stream,
                    pdl.on, p);
      return;
    }
  }
  if constexpr (kMT8 == 2) {
    if (loads == 2) {
      launch_kernel(int8_gemv_kernel<2, true, OutT, 2>, grid, dim3(kGemvThreads), 0, stream,
                    pdl.on, p);
      return;
    }
  }
  if (aligned) {
    launch_kernel(int8_gemv_kernel<kMT8, true, OutT>, grid, dim3(kGemvThreads), 0, stream, pdl.on, p);
  } else {
    launch_kernel(int8_gemv_kernel<kMT8, false, OutT>, grid, dim3(kGemvThreads), 0, stream, pdl.on, p);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

at::Tensor int8_matmul_cuda(const at::Tensor& a_q, const at::Tensor& a_scale,
                            const c10::optional<at::Tensor>& a_zero, const at::Tensor& w_q,
                            const at::Tensor& w_scale, const c10::optional<at::Tensor>& w_colsum,
                            const c10::optional<at::Tensor>& bias,
                            c10::optional<at::ScalarType> out_dtype, c10::string_view kernel,
                            bool static_weight) {
  const char* op = "int8_matmul";
  const Int8MatmulShape sh =
      validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype);
  const std::string kname(kernel.data(), kernel.size());
  check_kernel_name(kname, {"gemv", "mma", "wgmma"}, op, "CUDA");
  TORCH_CHECK(a_q.is_cuda(), op, ": expected CUDA tensors, a_q is on ", a_q.device());
  const int64_t M = sh.M, N = sh.N, K = sh.K;
  TORCH_CHECK(M <= INT_MAX && N <= INT_MAX, op, ": M and N must be below 2^31, got M = ", M,
              ", N = ", N);

  c10::cuda::CUDAGuard device_guard(a_q.device());
  const int device = a_q.get_device();
  const DeviceCaps& caps = device_caps(device);
  const bool aligned = K % 16 == 0 && aligned16(a_q.data_ptr()) && aligned16(w_q.data_ptr());
  // The Hopper kernel lives in torchquant._C_sm90a; it is there when that
  // module was built and imported (torchquant/__init__.py imports it).
  const auto wgmma_op = find_sm90a_op("torchquant::_int8_gemm_sm90a");
  const bool have_wgmma = wgmma_op.has_value();
  const Int8Plan plan =
      choose_int8_kernel(caps, M, N, K, aligned, have_wgmma, kname == "auto" ? "" : kname);
  if (plan.kernel == Int8Kernel::kWgmma) {
    return wgmma_op->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                                      const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                                      const c10::optional<at::Tensor>&, c10::optional<at::ScalarType>)>()
        .call(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype);
  }
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();

  // Zero-point correction needs the weight's column sums; computing them here
  // reads the whole weight once more (see the header comment).
  at::Tensor colsum;
  if (a_zero.has_value()) {
    colsum = w_colsum.has_value() ? *w_colsum : at::sum(w_q, {1}, false, at::kInt).contiguous();
  }

  Epilogue epi{};
  epi.a_scale = a_scale.data_ptr<float>();
  epi.a_scale_step = a_scale.numel() == 1 ? 0 : 1;
  epi.a_zero = a_zero.has_value() ? a_zero->data_ptr<int32_t>() : nullptr;
  epi.a_zero_step = (a_zero.has_value() && a_zero->numel() == 1) ? 0 : 1;
  epi.w_scale = w_scale.data_ptr<float>();
  epi.w_scale_step = w_scale.numel() == 1 ? 0 : 1;
  epi.w_colsum = a_zero.has_value() ? colsum.data_ptr<int32_t>() : nullptr;
  epi.bias = bias.has_value() ? bias->data_ptr() : nullptr;
  epi.bias_kind = kBiasNone;
  if (bias.has_value()) {
    const at::ScalarType bt = bias->scalar_type();
    epi.bias_kind = bt == at::kFloat ? kBiasF32 : (bt == at::kHalf ? kBiasF16 : kBiasBF16);
  }

  at::Tensor out = at::empty({M, N}, a_q.options().dtype(sh.out_dtype));
  const int out_elem = static_cast<int>(out.element_size());

  if (plan.kernel == Int8Kernel::kGemv) {
    GemvParams p{};
    p.X = a_q.data_ptr<int8_t>();
    p.W = w_q.data_ptr<int8_t>();
    p.out = out.data_ptr();
    p.M = static_cast<int>(M);
    p.N = static_cast<int>(N);
    p.K = static_cast<int>(K);
    p.epi = epi;
    dispatch_float_cuda(sh.out_dtype, op, [&](auto tag) {
      using OutT = decltype(tag);
      switch (plan.gemv_mt8) {
        case 1:
          run_gemv<1, OutT>(p, aligned, plan.splits, caps.sm_count, stream, a_q, static_weight);
          break;
        case 2:
          run_gemv<2, OutT>(p, aligned, plan.splits, caps.sm_count, stream, a_q, static_weight);
          break;
        default:
          run_gemv<4, OutT>(p, aligned, plan.splits, caps.sm_count, stream, a_q, static_weight);
          break;
      }
    });
    return out;
  }

  GemmParams p{};
  p.A = a_q.data_ptr<int8_t>();
  p.W = w_q.data_ptr<int8_t>();
  p.out = out.data_ptr();
  p.M = static_cast<int>(M);
  p.N = static_cast<int>(N);
  p.K = static_cast<int>(K);
  p.epi = epi;
  p.splits = plan.splits;
  p.out_vec_ok = aligned16(out.data_ptr()) && (N * out_elem) % 16 == 0;
  dispatch_float_cuda(sh.out_dtype, op, [&](auto tag) {
    using OutT = decltype(tag);
    switch (plan.kernel) {
      case Int8Kernel::kMmaL:
        run_mma<MmaL, OutT>(p, aligned, device, stream, a_q);
        break;
      case Int8Kernel::kMmaM:
        run_mma<MmaM, OutT>(p, aligned, device, stream, a_q);
        break;
      default:
        run_mma<MmaS, OutT>(p, aligned, device, stream, a_q);
        break;
    }
  });
  return out;
}

// ================================================================ quantize ====
template <typename T>
void run_quantize(const at::Tensor& x, bool per_row, bool symmetric, const DeviceCaps& caps,
                  at::Tensor& q, at::Tensor& scale, at::Tensor& zero, cudaStream_t stream) {
  const int64_t R = x.size(0), C = x.size(1);
  const T* xp = reinterpret_cast<const T*>(x.data_ptr());
  int8_t* qp = q.data_ptr<int8_t>();
  float* sp = scale.data_ptr<float>();
  int32_t* zp = zero.data_ptr<int32_t>();
  constexpr int V = Vec16<T>::V;
  if (per_row) {
    TORCH_CHECK(R <= INT_MAX, "quantize_int8: at most 2^31 - 1 rows, got ", R);
    const bool vec = aligned16(xp) && (C * static_cast<int64_t>(sizeof(T))) % 16 == 0;
    const unsigned grid = static_cast<unsigned>(R);
    const bool pdl = pdl_mode(c10::cuda::current_device(), PdlKernel::kInt8Quant).on;  // common/pdl.h
#define TQ_Q_ROWS(SYM, VEC)                                                                   \
  launch_kernel(quantize_rows_kernel<T, SYM, VEC>, dim3(grid), dim3(kQuantThreads), 0, stream, pdl, \
                xp, qp, sp, zp, C)
    if (symmetric) {
      if (vec) TQ_Q_ROWS(true, true); else TQ_Q_ROWS(true, false);
    } else {
      if (vec) TQ_Q_ROWS(false, true); else TQ_Q_ROWS(false, false);
    }
#undef TQ_Q_ROWS
    return;
  }
  // Per tensor: ~4 vectors per thread per block, at most 4 blocks per SM
  // (and kQuantMaxPartials) for the reduction; the apply pass folds them all.
  const int64_t n = R * C;
  const bool vec = aligned16(xp);
  const int64_t per_block = static_cast<int64_t>(kQuantThreads) * V * 4;
  const int nb = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>({cdiv(n, per_block), 4 * caps.sm_count, kQuantMaxPartials})));
  at::Tensor partial = at::empty({nb, 4}, x.options().dtype(at::kFloat));
  float4* pp = reinterpret_cast<float4*>(partial.data_ptr<float>());
#define TQ_Q_TENSOR(SYM, VEC)                                                               \
  do {                                                                                      \
    quantize_tensor_reduce_kernel<T, SYM, VEC><<<nb, kQuantThreads, 0, stream>>>(xp, n, pp); \
    C10_CUDA_KERNEL_LAUNCH_CHECK();                                                         \
    quantize_tensor_apply_kernel<T, SYM, VEC>                                               \
        <<<nb, kQuantThreads, 0, stream>>>(xp, n, pp, nb, qp, sp, zp);                      \
    C10_CUDA_KERNEL_LAUNCH_CHECK();                                                         \
  } while (0)
  if (symmetric) {
    if (vec) TQ_Q_TENSOR(true, true); else TQ_Q_TENSOR(true, false);
  } else {
    if (vec) TQ_Q_TENSOR(false, true); else TQ_Q_TENSOR(false, false);
  }
#undef TQ_Q_TENSOR
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_int8_cuda(const at::Tensor& x, bool per_row,
                                                                  bool symmetric) {
  validate_quantize_int8(x);
  TORCH_CHECK(x.is_cuda(), "quantize_int8: expected a CUDA tensor, got ", x.device());
  c10::cuda::CUDAGuard device_guard(x.device());
  const DeviceCaps& caps = device_caps(x.get_device());
  const int64_t R = x.size(0), C = x.size(1);
  at::Tensor q = at::empty({R, C}, x.options().dtype(at::kChar));
  at::Tensor scale = per_row ? at::empty({R}, x.options().dtype(at::kFloat))
                             : at::empty({}, x.options().dtype(at::kFloat));
  at::Tensor zero = per_row ? at::empty({R}, x.options().dtype(at::kInt))
                            : at::empty({}, x.options().dtype(at::kInt));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_float_cuda(x.scalar_type(), "quantize_int8", [&](auto tag) {
    run_quantize<decltype(tag)>(x, per_row, symmetric, caps, q, scale, zero, stream);
  });
  return {q, scale, zero};
}

}  // namespace
}  // namespace int8
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("int8_matmul", &torchquant::int8::int8_matmul_cuda);
  m.impl("quantize_int8", &torchquant::int8::quantize_int8_cuda);
}
