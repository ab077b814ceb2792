// CUDA implementations of fp8_block_gemv, quantize_fp8_block and
// dequantize_fp8_block (schemas in ../torchquant.cpp, formats in
// ../shared/design/formats.md, device code and memory pattern in
// fp8_kernels.cuh).
//
// fp8_block_gemv: y[M, N] = x[M, K] @ (w_q[N, K] * w_scale[N, K / bs])^T
// (+ bias), output in x's dtype, fp32 accumulation, bias added in fp32 before
// the one final rounding. Paths: "mma" (tensor cores, sm_80+) and "fma"
// (scalar, any sm_75+); `choose_fp8_gemv_kernel` below is the one place that
// picks between them. Every launch goes on the current stream with no host
// synchronization, so the op can be captured in a CUDA graph.
//
// Launch assumptions enforced here: x and w_q base pointers 16-byte aligned
// (an unusual view that is not gets a one-off aligned copy), M, N, K below
// 2^31, the grid below 2^31 blocks.

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>  // the current stream, without cuBLAS/cuSPARSE headers
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>

#include "common/checks.h"
#include "common/device.h"
#include "common/dq_tile_launch.h"
#include "common/pdl.h"
#include "common/sm90a_op.h"
#include "fp8/fp8_kernels.cuh"
#include "fp8/fp8_tiles.h"

namespace torchquant {
namespace {

constexpr const char* kGemvOp = "fp8_block_gemv";

enum class Fp8GemvKernel { kFma, kMma, kTile, kWgmma, kDirect };

// M above this runs the tiled GEMM (measured, see choose_fp8_gemv_kernel).
constexpr int64_t kTileMinM = 48;

// -------------------------------------------------------------------------
// choose_fp8_gemv_kernel: the one dispatch decision for fp8_block_gemv.
//
//   capability  shape                      kernel  why
//   < sm_80     any                        fma     mma.m16n8k16 with fp16/bf16
//                                                  inputs needs sm_80
//   >= sm_80    M == 1, block_size % 64 == 0 mma   the cp.async-ring kernel. Until
//                                                  2026-12-01 fma won on 4096 <= N <=
//                                                  65536 with K <= 4096 or N >= 3K;
//                                                  with the block scales in the ring
//                                                  and x one stage ahead (run 0128,
//                                                  H200, cold L2) mma wins or ties:
//                                                  28672x8192 72.0 vs 75.8 us,
//                                                  128256x4096 139.5 vs 165.8,
//                                                  14336x4096 21.4 vs 21.7; 4096x4096
//                                                  9.4 vs 9.2 (within run-to-run
//                                                  spread)
//   >= sm_80    M == 1, block_size % 64 != 0 fma   only the 64-wide window has the ring;
//                                                  the register-load mma kernel lost to
//                                                  fma at M = 1 everywhere (28672x8192
//                                                  at bs = 128 before the ring: 127 vs
//                                                  74.6 us)
//   >= sm_80    M >= 2                     mma     fma pays one FFMA per weight per
//                                                  row and turns issue-bound (M = 16:
//                                                  fma 550 us vs mma 132 us at
//                                                  28672x8192); mma keeps the
//                                                  instructions per weight byte flat
//   sm_90 with  9 <= M <= 16, bs % 64 == 0, wgmma   dq_gemv_sm90a_kernel (_C_sm90a):
//   _C_sm90a    K % 128 == 0, N / 128 >= SMs / 2    TMA-fed 128-wide stages, the weight
//               (or >= SMs / 4 with N * K >= 64M);  decoded once for 16 tokens. H200
//               or 5 <= M <= 8 and N * K >= 256M
//                                                  (results/h200/2026-12-03f_fp8_wgmma_gemv
//                                                  call 2, fp16, M = 16, us, wgmma /
//                                                  mma): 28672x8192 65.6 / 87.4,
//                                                  128256x4096 144.5 / 184.2,
//                                                  14336x4096 22.5 / 24.3, 10240x8192
//                                                  35.4 / 42.5, 8192x28672 71.0 / 86.6;
//                                                  smaller layers split K over a second
//                                                  launch and lose (4096x4096 10.9 /
//                                                  9.6, 4096x14336 25.6 / 21.8). At
//                                                  M <= 8 the ring kernel is as fast or
//                                                  faster (28672x8192 M = 1 62.8 / 66.3)
//                                                  except on the largest layers from
//                                                  M ~ 5 (call 3, fp16, M = 8: 57344x8192
//                                                  132.9 / 144.1, 128256x4096 138.6 /
//                                                  150.6; M = 4 level: 137.1 / 137.9)
//   sm_89+,     M <= 8, bs % 64 == 0,      direct  fp8_gemv_direct_kernel, the int8 GEMV's
//   <= 15.0 B   K % 64 == 0, ceil(N / 16)           stream shape (direct_rule below; H100,
//   DRAM / SM   >= 8 x SMs                          results/h100/2026-12-06f call 2, bf16,
//   clock (H100; the H200 keeps the kernels below: slower there, 2026-12-06i)
//                                                  us, auto / direct: 28672x8192 M = 1
//                                                  86.5 / 78.8, M = 8 88.8 / 81.0;
//                                                  128256x4096 179.1 / 174.0; smaller
//                                                  grids lose or tie)
//   sm_89+      M = 9..16, as above, SMs <  direct  the same, two token tiles per block
//               ceil(N / 16) <= 2 x SMs             (H100, 2026-12-06f call 4: 4096x4096
//                                                  M = 9..16 9.4-9.6 / 8.6-8.8)
//   tiled=True  the direct GEMV's, the ring       direct, the tiled forms only (fp8_tiles.h);
//   (sm_80+)    kernel's and the wgmma GEMV's     mma or  auto's direct window widened at
//               tiled forms: direct on narrow-    wgmma   M <= 8 (direct_rule: measured on
//               DRAM cards at M <= 8 and SMs <            the H100, 2026-12-07i); the wgmma
//               ceil(N / 16), at M = 9..16 in the         GEMV (since 12-08) only where the
//               window above; wgmma on wide-DRAM          H200's rows would take it
//               cards where the rows take it; else the ring
//
// The mma path takes every legal shape: any M (16-row tiles), any N (masked
// 16-column tiles), any K % 16 == 0 (masked tail), every block size (the
// k-window is 64, 32 or 16, whichever divides it), so no shape bucket falls
// back to fma on sm_80+.
// -------------------------------------------------------------------------
// Path "direct" (fp8_gemv_direct_kernel, fp8_kernels.cuh): sm_89+ (the hardware e4m3
// conversion), block_size % 64 == 0, K % 64 == 0 (whole 64-wide pieces of one scale block).
// The forced path checks the two conditions apart, each with its own message.
constexpr int kDirectMinCc = 89;
bool direct_shape_ok(int64_t K, int64_t block_size) { return block_size % 64 == 0 && K % 64 == 0; }
bool direct_possible(const DeviceCaps& caps, int64_t K, int64_t block_size) {
  return caps.cc() >= kDirectMinCc && direct_shape_ok(K, block_size);
}

// Where auto takes the direct GEMV, on cards of at most 15.0 DRAM bytes per SM clock only
// (below the rule): M <= 8 on grids of at least 8 x SMs blocks of 16 rows.
// Measured on an H100 (results/h100/2026-12-06f call 2: path auto against direct, the
// Llama-3 decode layers, bf16, M = 1..8, cold L2, us; the direct column build 1, U = 2 / 3
// blocks per SM, then the builds on four of them): direct won on the larger grids, 28672x8192
// (1792 blocks) 86.5-88.8 / 79.7-82.5 (build 3, U = 4 / 2 blocks: 78.8 at M = 1, 81.0 at
// M = 8: 97 % of that card's 3.17 TB/s read ceiling), 28672x4096 44.3-45.2 / 42.0-43.0,
// 128256x4096 179.1-185.4 / 174.6-183.4 (build 3 174.0 / 181.6; auto's M = 8 is the wgmma
// GEMV); 6144x4096 (384 blocks, one wave of build 1) by 0.2-0.6; and lost on 4096x4096 (7.8-8.0
// / 8.5-9.4; build 2 8.1-8.3), 4096x14336 (22.0-22.7 / 23.9-26.0) and 14336x4096 (896 blocks,
// 22.7-23.2 / 23.6-25.2; build 3 level, 22.8 / 23.7 at M = 1 / 8). fp16 alike (28672x8192
// 85.6 / 79.1). The fused Llama-3-8B layer with direct on every projection lost (M = 1 / 8
// 86.9 / 92.4 against 85.4 / 88.1 us), so the rule takes only the grids that won by more than
// the spread. The H200 has not timed it; its int8 GEMV, of the same stream shape, is the
// fastest int8 decode kernel there too (docs/int8_gemm.md).
// M = 9..16 (two token tiles per block, build 4) on grids of more than SMs and at most 2 x SMs
// blocks: H100, results/h100/2026-12-06f call 4, bf16, us, auto (the ring kernel's 16-row
// tile) / direct, M = 9 / 12 / 16, two runs alike: 4096x4096 (256 blocks) 9.4 / 9.5 / 9.6 against
// 8.6 / 8.6 / 8.8; 4096x14336 (256) 24.5 / 24.6 / 25.1 against 24.1 / 24.2 / 24.6; the next
// grid measured, 6144x4096 (384 blocks), lost (13.2-13.8 / 14.0-14.9), as did every larger one
// (28672x8192 M = 16 90.0 / 95.8-99.6: there the wgmma GEMV streams once for 16 rows at no
// cost in issue slots). Smaller grids (fewer blocks than SMs) are not measured and keep the
// mma GEMV, whose K split fills the SMs.
// Only on cards of at most 15.0 DRAM bytes per SM clock (the H100 SXM's 12.8), as nvfp4's
// direct GEMV on its larger grids: the H200 (~18.5: the same SMs and clock, 1.4x the DRAM
// bandwidth) ran every branch of this rule slower than the kernels it replaced
// (results/h200/2026-12-06i call 1, read ceiling 4.48 TB/s, bf16, two rounds, us, auto with
// the rule / TORCHQUANT_FP8_DIRECT=-1): 28672x8192 M = 1 / 2 / 4 / 8 64.8-64.9 / 65.0-65.1 /
// 65.9-66.3 / 69.2 against 61.8 / 61.3-61.4 / 61.8 / 65.2; 128256x4096 143.7-143.9 ..
// 160.5-185.0 against 126.8-127.1 .. 136.0-136.6; 57344x8192 124.3-125.0 .. 133.3-135.2
// against 120.8-120.9 .. 130.2-130.9; 28672x4096 34.9-35.0 .. 38.0-38.7 against 31.8-32.0 ..
// 34.0-34.5 (builds 1 and 2 no better: 28672x8192 M = 1 64.4-64.5 / 70.0-70.2); the M = 9..16
// window 4096x4096 7.9 / 8.1 at M = 9 but 8.4 / 8.3 at 16, 4096x14336 21.0-21.2 / 19.5-19.6
// and 22.1-22.4 / 20.6.
// The tiled weight (fp8_block_tile; `tiled`: the choice between the direct GEMV's and the ring
// kernel's tiled forms, the only two that read it): at M <= 8 every grid of more than SMs
// blocks. H100 (results/h100/2026-12-07i_call8 and _call9, bf16, cold L2, two rounds, us, tiled
// direct / tiled ring): 28672x8192 (1792 blocks) M = 1 / 8 77.4-77.7 / 84.7-84.8, 77.8-78.1 /
// 85.8-85.9; 128256x4096 170.9-171.7 / 179.7-180.2, 177.2-177.4 / 183.2-183.6; 57344x8192
// 152.8-153.1 / 166.1-168.5; 28672x4096 39.8-40.0 / 43.6-44.3; 14336x4096 21.5-21.6 / 23.4;
// 8192x8192 24.1 / 25.0-25.1; 6144x4096 (384) 11.0-11.2 / 11.3-11.6; 4096x14336 (256) 21.6-21.8
// / 22.1-22.5; 4096x4096 (256) 7.5-7.7 / 7.6-7.8; lost on 1024x4096 (64 blocks: the ring's K
// split fills the SMs) 4.7-5.0 / 3.8-4.1. The tiled direct GEMV at M = 1 on 28672x8192 read
// 98.7 % of that card's 3.17 TB/s ceiling (the row-major one 97.3 %, 78.6 us). M = 9..16 keeps
// the row-major rule's window, which the same runs bear out: 4096x4096 7.8 / 9.1, 4096x14336
// 22.2-22.5 / 23.1-23.5 inside it; 6144x4096 12.7-13.5 / 12.4-12.7, 28672x4096 44.6-45.6 /
// 43.8-44.9, 14336x4096 25.7 / 24.4-24.5, 28672x8192 85.9 / 84.6-84.7 and larger past it (one
// exception, 8192x8192 (512 blocks) 25.2-25.6 / 25.9-26.2, left to the ring: within 3 %).
// TORCHQUANT_FP8_DIRECT (read per call): 1 takes it wherever it can run at M <= 16, -1 never.
bool direct_rule(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K, int64_t block_size,
                 bool tiled = false) {
  if (M > 16 || !direct_possible(caps, K, block_size)) return false;
  const int knob = env_int("TORCHQUANT_FP8_DIRECT");
  if (knob != 0) return knob == 1;
  if (!narrow_dram(caps)) return false;
  const int64_t blocks = (N + 15) / 16, sms = caps.sm_count;
  if (M <= 8) return tiled ? blocks > sms : blocks >= 8 * sms;
  return blocks > sms && blocks <= 2 * sms;
}

Fp8GemvKernel choose_fp8_gemv_kernel(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K,
                                     int64_t block_size, bool have_wgmma) {
  if (caps.cc() < 80) return Fp8GemvKernel::kFma;  // no m16n8k16 fp16/bf16 mma
  if (direct_rule(caps, M, N, K, block_size)) return Fp8GemvKernel::kDirect;
  if (have_wgmma && caps.cc() == 90 && M <= 16 && block_size % 64 == 0 && K % 128 == 0) {
    const int64_t tiles = (N + 127) / 128;  // 128-feature tiles
    const bool wide = tiles * 2 >= caps.sm_count || (tiles * 4 >= caps.sm_count && N * K >= (int64_t{1} << 26));
    // Sweep knob: TORCHQUANT_FP8_WGMMA_M5_MIN=W moves the M = 5..8 threshold to W * 2^20
    // weights (unset: 256M, the rule above).
    const int64_t m5_min = env_weights("TORCHQUANT_FP8_WGMMA_M5_MIN", int64_t{1} << 28);
    if ((M >= 9 && wide) || (M >= 5 && N * K >= m5_min)) return Fp8GemvKernel::kWgmma;
  }
  // M > kTileMinM: the tiled GEMM (common/dq_tile.cuh) decodes each weight
  // element once per 64 rows of x instead of once per 16. Measured on the
  // H200 (results/h200/2026-12-01_1043/tile_vs_gemv.csv, cold L2, us, tile /
  // mma GEMV): M = 64: 28672x8192 239 / 286, 14336x4096 64.2 / 78.0,
  // 4096x14336 59.9 / 77.2, 4096x4096 23.6 / 26.6; M = 32: the GEMV wins
  // (153 / 237, 46.5 / 62.8): its 16-row tiles cost ceil(M / 16) passes
  // while the 64-row tile's cost is flat up to 64, so they cross near 48.
  if (M > kTileMinM) return Fp8GemvKernel::kTile;
  if (M == 1 && block_size % 64 != 0) return Fp8GemvKernel::kFma;  // measured (above)
  return Fp8GemvKernel::kMma;                       // every shape, every block size
}

// Warps one SM keeps resident with the mma kernel: __launch_bounds__(512, 1)
// caps it at 128 registers, so 64K registers hold 16 warps.
constexpr int kMmaWarpsPerSm = 16;

// K-split for the mma kernel: the largest power of two (<= 16 warps per block)
// such that every warp of the grid can be resident at once (one wave: every
// warp streams an equal share, no tail wave), and each warp still has at
// least two chunks. Large N needs no split (KS = 1, one warp per 16 columns,
// possibly several waves of short-lived single-warp blocks); small N splits K
// so there are enough warps, and so enough bytes in flight, to fill the GPU.
int choose_ksplit(int64_t tasks, int64_t chunks, int sm_count, bool ring = false) {
  // Tuning knob for benchmarks/sweep_gemv.py: TORCHQUANT_FP8_KSPLIT=1|2|4|8|16
  // overrides the heuristic (read per call; unset in normal use).
  if (const int forced = env_int("TORCHQUANT_FP8_KSPLIT"); forced >= 1) {
    int ks = 1;
    while (ks * 2 <= std::min(forced, fp8::kMmaMaxWarps) && chunks >= ks * 2) ks *= 2;
    return ks;
  }
  const int64_t slots = static_cast<int64_t>(sm_count) * kMmaWarpsPerSm;
  int ks = 1;
  while (ks < fp8::kMmaMaxWarps && tasks * ks * 2 <= slots && chunks >= ks * 4) ks *= 2;
  // Measured floor (H200 sweep, benchmarks/sweep_gemv.py, 2026-11-30): one
  // resident wave of single-warp blocks leaves too few bytes in flight on the
  // large shapes; splitting K over at least K/1024 warps (4 at K = 4096, 8 at
  // K = 8192) was fastest at every M = 2..16 (28672x8192: 127-133 -> 99-111
  // us; 14336x4096: 31-34 -> 29-33; 128256x4096: 239-260 -> 206-237).
  // The cp.async ring kernel (WK = 64) keeps its weight in flight in shared
  // memory (2 stages x 2 KB per warp) and needs no floor (read-pattern
  // microbenchmark: KS = 1..8 all within a few % at 28672x8192).
  if (ring) return ks;
  int floor_ks = 1;
  while (floor_ks * 2 <= 8 && chunks >= floor_ks * 2 * 16) floor_ks *= 2;
  return std::max(ks, floor_ks);
}

// Multiplier for the kernels' branch-free block index (fp8_kernels.cuh,
// block_of): ceil(2^32 / (block_size / 8)); block_size / 8 is in [2, 32].
uint32_t block_magic(int64_t block_size) {
  const uint64_t d = static_cast<uint64_t>(block_size / 8);
  return static_cast<uint32_t>(((uint64_t{1} << 32) + d - 1) / d);
}

bool aligned16(const at::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

struct GemvArgs {
  const void* x;
  const uint8_t* w;
  const float* ws;
  const void* bias;
  void* y;
  int M, N, K, bs, nb;
  uint32_t bmagic;
  // When the weight and scales were written, for the ring GEMV's early loads (common/pdl.h).
  WeightWritten written = WeightWritten::kUnknown;
  bool tiled = false;  // w and ws in the tiled order (fp8_tiles.h): the direct and ring kernels only
};

// Every GEMV kernel takes the same arguments: checks the grid, opts in to the
// shared memory (a no-op up to 48 KiB) and launches on `stream`; pdl.on: with the
// programmatic-serialization attribute (only for kernels that call pdl_wait(),
// common/pdl.h), pdl.early: the kernel's pdl_early argument.
template <typename T>
void launch_gemv_kernel(void (*kernel)(const T*, const uint8_t*, const float*, const T*, T*, int,
                                       int, int, uint32_t, int, int, int),
                        const GemvArgs& a, int64_t blocks, int threads, size_t smem, int mtiles,
                        cudaStream_t stream, PdlMode pdl = {}) {
  TORCH_CHECK(blocks <= std::numeric_limits<int>::max(), kGemvOp, ": grid of ", blocks,
              " blocks is too large");
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), c10::cuda::current_device(),
                     static_cast<int>(smem));
  launch_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(threads), smem, stream, pdl.on,
                static_cast<const T*>(a.x), a.w, a.ws, static_cast<const T*>(a.bias),
                static_cast<T*>(a.y), a.M, a.N, a.K, a.bmagic, a.nb, mtiles, pdl.early ? 1 : 0);
}

template <typename T, int WK, int MT>
void launch_mma_t(const GemvArgs& a, int ks, int mtiles, cudaStream_t stream) {
  const size_t smem = ks > 1 ? static_cast<size_t>(ks) * MT * 4 * 32 * sizeof(float) : 0;
  launch_gemv_kernel<T>(fp8::fp8_gemv_mma_kernel<T, WK, MT>, a, (a.N + 15) / 16 * int64_t{mtiles},
                        ks * 32, smem, mtiles, stream);
}

// The ring kernel with MT 8-row n-tiles (MT = 1 for M <= 8, else 2; see
// launch_mma_w): ks warps x S stages of ring (2 KB of weight + scales each,
// and with XR the tile's activation rows: 256 bytes per row), then the
// K-split sums.
//
// XR (x through the ring), TORCHQUANT_FP8_XRING (read per call): unset or 5, the default, the
// narrow rule: M <= 2 and K split over 16 warps with at most kXrMaxStages stages each (N up to
// ~2100 at K <= 16384: small layers such as 2048x4096 and 1024x4096; until 2026-12-04d a K split
// of 8+, which also took 4096x4096, Llama-3-8B's o projection); 1, the wide rule: any M and a K
// split of 4+ warps (K <= 1024 ks); 2 / 3 / 4 force that ring depth S with XR where it is built
// and a block can have that much shared memory (else as 1); 0 or -1: never (x loaded into
// registers one stage ahead, S = kMmaCpStages = 2).
// Why x through the ring: Nsight Compute's stall sampling (results/h200/2026-12-02g_fp8_xring)
// put 22 % of the warps' time at M = 1 on the first use of x, whose register loads share a
// scoreboard with the next stage's x loads issued just before it; the short rings expose it.
// Measured on the H200 (us, cold L2, XR by the rule / off):
// * 2026-12-02h_fp8_xr, the wide rule: the op alone wins at 4096x4096 M = 1 / 8 / 16, 7.4 /
//   8.4 / 10.6 vs 8.9 / 9.2 / 11.0, and 6144x4096 M = 8, 10.4 vs 12.6, but the Llama-3-8B layer
//   chain (benchmarks/micro/pdl_ab.py, each GEMV fed by the one before, PDL) lost at M = 1
//   (76.1 / 75.8 vs 74.1 / 74.8) and M = 8 (86.5 / 88.7 vs 83.4 / 83.8); again in
//   2026-12-03h_knobs call 2 (bf16 M = 1 72.6-72.7 vs 71.4-71.5, M = 8 82.7-82.9 vs 80.6-80.7).
//   Longer rings lose alone too: 4096x14336 (14 stages per warp) M = 8 / 16 21.5 / 28.1 vs
//   19.8 / 23.5; 28672x8192 (K split 1) M = 1 77.3 vs 65.4.
// * 2026-12-03h_knobs calls 5 and 6, the narrow rule (which takes only the chain's o
//   projection): the chain wins at M = 1 (bf16 69.8-70.7 vs 71.5-72.1, fp16 66.9-67.1 vs
//   67.7-68.2) and M = 2 (76.2 / 76.8 vs 76.6 / 77.4) but loses at M = 4 (82.5 vs 79.1) and
//   M = 8 (84.1-84.3 vs 80.6-81.2), although the op alone wins at M = 2..8 (4096x4096 bf16 M = 4
//   7.5 vs 8.3, fp16 M = 8 7.5 vs 8.0) and loses at M = 16 (10.0 vs 9.5; 4096x8192 18.1 vs
//   15.1). Hence M <= 2. Alone at M = 1: 4096x4096 fp16 6.8-6.9 vs 7.6, bf16 7.1 vs 8.2-8.3;
//   2048x4096 4.6 vs 4.9; 1024x4096 3.9 vs 4.1.
// * 2026-12-04d_fp8_direct call 7, after the x-in-registers ring went from 4 stages to 2 (below):
//   XR now loses on the K split of 8 (4096x4096 M = 1 / 2 fp16 6.8 vs 6.2-6.4, bf16 7.1 vs 6.7;
//   4096x8192 fp16 11.7-11.9 vs 11.0-11.1) and still wins on the K split of 16 (2048x4096 fp16
//   4.6 vs 4.8, bf16 4.9 vs 5.2; 1024x4096 3.8 vs 3.9-4.0, bf16 4.2 vs 4.3); the layer chain is
//   level (M = 1 65.5-65.9 either way). Hence a K split of 16.
// * 2026-12-04i_f16s calls 4-5: the K split of 4 (6144x4096, 5120x4096, 6144x2048, 8192x4096) with
//   XR (the narrow rule plus every split of exactly 4, a knob value tried and removed): alone it
//   wins at M = 8 only (bf16 6144x4096 9.6-9.8 vs 10.6-10.7, 5120x4096 9.4 vs 10.4) and loses at
//   M = 1 / 2 / 4 / 16 (6144x4096 11.7 vs 9.8-10.0, M = 16 15.7 vs 13.4) and on 8192x4096 at
//   every M (M = 8 12.5 vs 11.4); the layer chain at M = 8 was level in bf16 (74.8 vs 74.6-75.0)
//   and 0.4 us faster in fp16 (72.9-73.1 vs 73.3-73.5). No rule taken.
// Its S: the deepest ring that leaves every SM room for the blocks the grid gives it in one
// wave (at most kMmaWarpsPerSm warps by registers; each block also costs 1 KB of reserved
// shared memory): MT = 1 tries S = 4 then 3, MT = 2 S = 3 then 2; if none fits, XR stays off.
constexpr int kXrMaxStages = 8;
constexpr int kXrNarrow = 5;            // TORCHQUANT_FP8_XRING's value for the narrow rule
constexpr int kXrDefault = kXrNarrow;   // unset or empty
constexpr int kXrNarrowMaxM = 2;        // the narrow rule's largest M
constexpr int kXrNarrowMinKs = 16;      // the narrow rule's smallest K split (8 before 2026-12-04d)

template <typename T, int MT>
void launch_mma_cp_t(const GemvArgs& a, int ks, int mtiles, const DeviceCaps& caps,
                     cudaStream_t stream) {
  // A tiled weight (fp8_tiles.h): the ring kernel's tiled form, x in registers (no XR build).
  const int64_t blocks = (a.N + 15) / 16 * int64_t{mtiles};
  const size_t red = ks > 1 ? static_cast<size_t>(ks) * MT * 4 * 32 * sizeof(float) : 0;
  const size_t xbytes = static_cast<size_t>(std::min(a.M, 8 * MT)) * fp8::kMmaCpXRowBytes;
  const int64_t per_sm =
      std::min<int64_t>((blocks + caps.sm_count - 1) / caps.sm_count, kMmaWarpsPerSm / ks);
  auto smem_of = [&](int S, bool xr) {
    return static_cast<size_t>(ks) * S * (fp8::kMmaCpStageBytes + (xr ? xbytes : 0)) + red;
  };
  auto fits = [&](int S) {
    const size_t sm = smem_of(S, true);
    return sm <= static_cast<size_t>(caps.max_smem_optin) &&
           static_cast<size_t>(per_sm) * (sm + 1024) <= static_cast<size_t>(caps.smem_per_sm);
  };
  constexpr int kS0 = MT == 1 ? 4 : 3, kS1 = MT == 1 ? 3 : 2;  // the XR depths built
  const char* xr_env = std::getenv("TORCHQUANT_FP8_XRING");
  const int forced = xr_env == nullptr || *xr_env == '\0' ? kXrDefault : std::atoi(xr_env);
  const bool narrow = forced == kXrNarrow;
  int S = 0;
  if (a.tiled)
    S = 0;
  else if ((forced == kS0 || forced == kS1) &&
      smem_of(forced, true) <= static_cast<size_t>(caps.max_smem_optin))
    S = forced;
  else if (forced >= 1 && ks >= (narrow ? kXrNarrowMinKs : 4) && (!narrow || a.M <= kXrNarrowMaxM) &&
           (a.K + 127) / 128 <= int64_t{kXrMaxStages} * ks)
    S = fits(kS0) ? kS0 : fits(kS1) ? kS1 : 0;
  auto go = [&](auto kernel, size_t smem) {
    launch_gemv_kernel<T>(kernel, a, blocks, ks * 32, smem, mtiles, stream,
                          pdl_mode(c10::cuda::current_device(), PdlKernel::kFp8Ring, a.written));
  };
  if (a.tiled)
    go(fp8::fp8_gemv_mma_cp_kernel<T, MT, fp8::kMmaCpStages, false, true>, smem_of(fp8::kMmaCpStages, false));
  else if (S == kS0)
    go(fp8::fp8_gemv_mma_cp_kernel<T, MT, kS0, true>, smem_of(kS0, true));
  else if (S == kS1)
    go(fp8::fp8_gemv_mma_cp_kernel<T, MT, kS1, true>, smem_of(kS1, true));
  else
    go(fp8::fp8_gemv_mma_cp_kernel<T, MT, fp8::kMmaCpStages, false>,
       smem_of(fp8::kMmaCpStages, false));
}

template <typename T, int WK>
void launch_mma_w(const GemvArgs& a, const DeviceCaps& caps, cudaStream_t stream) {
  const int sm_count = caps.sm_count;
  // M <= 8: one n-tile of 8 rows (MT = 1). Otherwise 16-row tiles (MT = 2);
  // M > 16 loops over tiles in the grid, each tile re-reading the weight
  // (mostly from L2: the tiles of one column block are adjacent in the grid).
  const int MT = a.M <= 8 ? 1 : 2;
  const int64_t mtiles = a.M <= 8 ? 1 : (a.M + 15) / 16;
  const int64_t ntiles = (a.N + 15) / 16;
  const int64_t chunks = (a.K + fp8::kMmaChunk - 1) / fp8::kMmaChunk;
  TORCH_CHECK(mtiles <= std::numeric_limits<int>::max(), kGemvOp, ": M = ", a.M, " too large");
  if constexpr (WK == 64) {
    // Block sizes that are multiples of 64 stream the weight through the
    // cp.async ring kernel (fp8_kernels.cuh), 16 rows x 128 of K per stage,
    // with one 8-row n-tile (M <= 8) or two (MT = 2: 16-row M tiles).
    // Measured on the H200 (cold L2, graph replay), 28672x8192: M = 2 / 4 /
    // 8 in 78 / 84 / 89 us against 99-111 us for the register-prefetch
    // kernel (2026-11-30); with the scales and x in the ring (run 0136) M = 1
    // / 2 / 8 in 68.5 / 68.8 / 71.8 us. M = 9..16 (A/B in one build, run
    // 2026-12-01_0512, ring MT = 2 against the register kernel): 28672x8192
    // M = 9 / 16: 87.3 / 91.5 against 104.1 / 106.7 us; 128256x4096: 168.1 /
    // 178.6 against 224.3 / 232.4; 14336x4096: 27.4 / 28.3 against 32.2 /
    // 32.4. (Earlier forms lost: MT = 2 before the scales and x moved into
    // the ring, 131 vs 105 us; 8-row M tiles re-reading the weight from L2,
    // 114.2 vs 106.1 us, run 0146.)
    // TORCHQUANT_FP8_REG_KERNEL=1 (read per call; tests and env_ab.py) runs
    // the register-prefetch kernel instead, as the other block sizes do.
    if (a.tiled || env_int("TORCHQUANT_FP8_REG_KERNEL") != 1) {
      const int ks = choose_ksplit(ntiles * mtiles, chunks, sm_count, /*ring=*/true);
      if (MT == 1)
        launch_mma_cp_t<T, 1>(a, ks, static_cast<int>(mtiles), caps, stream);
      else
        launch_mma_cp_t<T, 2>(a, ks, static_cast<int>(mtiles), caps, stream);
      return;
    }
  }
  const int ks = choose_ksplit(ntiles * mtiles, chunks, sm_count);
  if (MT == 1)
    launch_mma_t<T, WK, 1>(a, ks, static_cast<int>(mtiles), stream);
  else
    launch_mma_t<T, WK, 2>(a, ks, static_cast<int>(mtiles), stream);
}

// Path "direct": one block per 16 weight rows and token tile of <= 8 rows (the token tile
// fastest, so the blocks of one weight tile run together and the re-reads for M > 8 hit L2).
// Which build: U pieces of loads in flight per lane, at most kMinBlocks blocks per SM by the
// launch bounds, NT token tiles of 8 rows per block. TORCHQUANT_FP8_DIRECT_BUILD (read per call;
// tests and A/B runs) forces one: 1 = U 2 / 3 blocks (68-70 registers), 2 = U 3 / 2 blocks, 3 =
// U 4 / 2 blocks (106-110 registers; the default at M <= 8: fastest on the grids direct_rule
// takes, the rule's comment), all one token tile (M > 8: one block per 8 rows, each re-reading
// the weight tile); 4 = two token tiles, U 2 / 2 blocks (the default at M > 8: the weight
// streams once for 16 rows), 5 = two token tiles, U 1 / 3 blocks. A tiled weight (a.tiled) runs
// each build's kTiled form: same pieces, sums and bits, other load addresses.
template <typename T, bool kTiled>
void launch_direct_t(const GemvArgs& a, cudaStream_t stream) {
  int build = env_int("TORCHQUANT_FP8_DIRECT_BUILD");
  if (build < 1 || build > 5) build = a.M <= 8 ? 3 : 4;
  const int rows = build >= 4 ? 2 * fp8::kDirectRows : fp8::kDirectRows;
  const int64_t mtiles = (a.M + rows - 1) / rows;
  TORCH_CHECK(mtiles <= std::numeric_limits<int>::max(), kGemvOp, ": M = ", a.M, " too large");
  const int64_t blocks = (a.N + 15) / 16 * mtiles;
  const PdlMode pdl = pdl_mode(c10::cuda::current_device(), PdlKernel::kFp8Ring, a.written);
  const int m = static_cast<int>(mtiles);
  auto go = [&](auto kernel) {
    launch_gemv_kernel<T>(kernel, a, blocks, fp8::kDirectThreads, 0, m, stream, pdl);
  };
  switch (build) {
    case 1: go(fp8::fp8_gemv_direct_kernel<T, 2, 3, 1, kTiled>); break;
    case 2: go(fp8::fp8_gemv_direct_kernel<T, 3, 2, 1, kTiled>); break;
    case 3: go(fp8::fp8_gemv_direct_kernel<T, 4, 2, 1, kTiled>); break;
    case 4: go(fp8::fp8_gemv_direct_kernel<T, 2, 2, 2, kTiled>); break;
    default: go(fp8::fp8_gemv_direct_kernel<T, 1, 3, 2, kTiled>); break;
  }
}

template <typename T>
void launch_direct(const GemvArgs& a, cudaStream_t stream) {
  if (a.tiled)
    launch_direct_t<T, true>(a, stream);
  else
    launch_direct_t<T, false>(a, stream);
}

template <typename T>
void launch_mma(const GemvArgs& a, const DeviceCaps& caps, cudaStream_t stream) {
  // The k-window: the widest of 64 / 32 / 16 that divides block_size, so a
  // window never straddles two scale blocks (each window's partial is scaled
  // on its own) and the weight loads are as wide as possible (16 / 8 / 4 B).
  if (a.bs % 64 == 0)
    launch_mma_w<T, 64>(a, caps, stream);
  else if (a.bs % 32 == 0)
    launch_mma_w<T, 32>(a, caps, stream);
  else
    launch_mma_w<T, 16>(a, caps, stream);
}

// The tiled GEMM (common/dq_tile.cuh; grid, K splits and the ordered reduce
// in dq_tile_launch.h) with a scale window of FW k16 steps.
template <typename T, int FW>
void launch_tile_t(const GemvArgs& g, int sm_count, cudaStream_t stream, const at::Tensor& like) {
  dqt::Args a{};
  a.x = g.x;
  a.w = g.w;
  a.wsc = reinterpret_cast<const uint8_t*>(g.ws);
  a.gfactor = 1.f;
  a.bias = g.bias;
  a.y = g.y;
  a.M = g.M;
  a.N = g.N;
  a.K = g.K;
  a.bs = g.bs;
  a.nb = g.nb;
  dqt::launch_tile<T, fp8::TileFormat<T, FW, dqt::SmallCfg>>(a, sm_count, stream, like, kGemvOp);
}

template <typename T>
void launch_tile(const GemvArgs& a, int sm_count, cudaStream_t stream, const at::Tensor& like) {
  // The scale window: the widest of 128 / 64 / 32 / 16 (the k tile is 128)
  // that divides block_size.
  if (a.bs % 128 == 0)
    launch_tile_t<T, 8>(a, sm_count, stream, like);
  else if (a.bs % 64 == 0)
    launch_tile_t<T, 4>(a, sm_count, stream, like);
  else if (a.bs % 32 == 0)
    launch_tile_t<T, 2>(a, sm_count, stream, like);
  else
    launch_tile_t<T, 1>(a, sm_count, stream, like);
}

template <typename T, int RM>
void launch_fma_t(const GemvArgs& a, cudaStream_t stream) {
  const int64_t mtiles = (a.M + RM - 1) / RM;
  const int64_t cols_per_block = fp8::kFmaWarps * fp8::kFmaCols;
  launch_gemv_kernel<T>(fp8::fp8_gemv_fma_kernel<T, RM>, a,
                        (a.N + cols_per_block - 1) / cols_per_block * mtiles, fp8::kFmaWarps * 32,
                        0, static_cast<int>(mtiles), stream);
}

template <typename T>
void launch_fma(const GemvArgs& a, cudaStream_t stream) {
  // Rows of x per pass: one weight load and decode serve RM rows.
  if (a.M == 1)
    launch_fma_t<T, 1>(a, stream);
  else if (a.M == 2)
    launch_fma_t<T, 2>(a, stream);
  else if (a.M <= 4)
    launch_fma_t<T, 4>(a, stream);
  else
    launch_fma_t<T, 8>(a, stream);
}

at::Tensor fp8_block_gemv_cuda(const at::Tensor& x_in, const at::Tensor& w_in,
                               const at::Tensor& w_scale, int64_t block_size,
                               const std::optional<at::Tensor>& bias,
                               c10::string_view kernel_sv, bool static_weight, bool tiled) {
  const GemvShape shape = validate_fp8_block_gemv(x_in, w_in, w_scale, block_size, bias);
  const std::string kernel(kernel_sv);
  check_kernel_name(kernel, {"fma", "mma", "tile", "wgmma", "direct"}, kGemvOp, "CUDA");
  TORCH_CHECK(x_in.is_cuda(), kGemvOp, ": x must be a CUDA tensor, got ", x_in.device());
  const int64_t M = shape.M, N = shape.N, K = shape.K;
  TORCH_CHECK(M < kMaxDim && N < kMaxDim, kGemvOp, ": M and N must each be below 2^31 - 256, got M = ", M,
              ", N = ", N);
  // The kernels' branch-free scale-block index is exact for K < 2^26 (a
  // 64M-element weight row; far beyond any layer).
  TORCH_CHECK(K < (int64_t{1} << 26), kGemvOp, ": K = ", K, " must be below 2^26");

  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = device_caps(x_in.get_device());

  // The Hopper kernel (warpgroup MMA fed by TMA) lives in torchquant._C_sm90a, built when 9.0
  // is in the arch list; it checks the capability, block_size % 64 and K % 128 itself.
  const auto wgmma_op = find_sm90a_op("torchquant::_fp8_block_gemv_sm90a");
  const bool have_wgmma = wgmma_op.has_value();
  Fp8GemvKernel path = choose_fp8_gemv_kernel(caps, M, N, K, block_size, have_wgmma);
  if (tiled) {
    // fp8_tiles.h: read by the direct GEMV, the ring kernel (path "mma" at block_size % 64 == 0)
    // and the wgmma GEMV (sm_90), at every M. Auto: the direct GEMV where direct_rule takes the
    // tiled weight; else on a wide-DRAM card (the H200) the wgmma GEMV where the row-major rule
    // takes it (M = 9..16 on wide layers, 5..8 on the largest: there it beats the ring kernel by
    // 25 % on the row-major weight); else the ring kernel (on narrow-DRAM cards the tiled ring
    // kernel was measured ahead of the row-major auto at M = 9..16, H100 28672x8192 M = 16
    // 84.6-84.7 against 87.0-87.6 us; the tiled wgmma GEMV is not timed there).
    TORCH_CHECK(kernel == "auto" || kernel == "direct" || kernel == "mma" || kernel == "wgmma", kGemvOp,
                ": a tiled weight (tiled=True) runs on paths 'direct', 'mma' and 'wgmma' only, got path '", kernel,
                "'; fp8_block_tile(w_q, w_scale, inverse=True) gives the row-major operands the other paths read");
    check_fp8_tiled_shape(N, K, kGemvOp);
    TORCH_CHECK(block_size % 64 == 0, kGemvOp,
                ": a tiled weight needs block_size % 64 == 0 (whole 64-wide pieces of one scale block), got "
                "block_size = ", block_size);
    TORCH_CHECK(caps.cc() >= 80, kGemvOp,
                ": a tiled weight runs on the mma kernels (compute capability 8.0+); this device is sm_", caps.cc(),
                ". fp8_block_tile(w_q, w_scale, inverse=True) gives the row-major operands the fma kernel reads");
    if (kernel == "auto")
      path = direct_rule(caps, M, N, K, block_size, /*tiled=*/true)       ? Fp8GemvKernel::kDirect
             : path == Fp8GemvKernel::kWgmma && !narrow_dram(caps) ? Fp8GemvKernel::kWgmma
                                                                   : Fp8GemvKernel::kMma;
  }
  if (kernel == "fma") path = Fp8GemvKernel::kFma;
  if (kernel == "mma") {
    TORCH_CHECK(caps.cc() >= 80, kGemvOp,
                ": kernel 'mma' needs mma.sync.m16n8k16 with fp16/bf16 inputs (compute "
                "capability 8.0+); this device is sm_",
                caps.cc(), ". Use kernel='fma' or 'auto'");
    path = Fp8GemvKernel::kMma;
  }
  if (kernel == "tile") {
    TORCH_CHECK(caps.cc() >= 80, kGemvOp,
                ": kernel 'tile' needs mma.sync.m16n8k16, ldmatrix and cp.async (compute "
                "capability 8.0+); this device is sm_",
                caps.cc(), ". Use kernel='fma' or 'auto'");
    path = Fp8GemvKernel::kTile;
  }
  if (kernel == "wgmma") {
    TORCH_CHECK(have_wgmma, kGemvOp,
                ": path 'wgmma' needs torchquant._C_sm90a (a build with 9.0 in "
                "TORCH_CUDA_ARCH_LIST) and a compute capability 9.0 GPU; this device is sm_",
                caps.cc());
    path = Fp8GemvKernel::kWgmma;
  }
  if (kernel == "direct") {
    TORCH_CHECK(direct_shape_ok(K, block_size), kGemvOp,
                ": path 'direct' needs block_size % 64 == 0 and K % 64 == 0 (whole 64-wide pieces of "
                "one scale block), got block_size = ", block_size, ", K = ", K, "; path 'mma' takes both");
    TORCH_CHECK(caps.cc() >= kDirectMinCc, kGemvOp,
                ": path 'direct' needs the hardware e4m3 conversion (compute capability 8.9+); this "
                "device is sm_", caps.cc(), ". Use path='mma' or 'auto'");
    path = Fp8GemvKernel::kDirect;
  }
  if (path == Fp8GemvKernel::kWgmma) {
    return wgmma_op
        ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t,
                           const c10::optional<at::Tensor>&, bool, bool)>()
        .call(x_in, w_in, w_scale, block_size, bias, static_weight, tiled);
  }

  // 16-byte vector loads need 16-byte aligned bases (K % 16 == 0 then aligns
  // every row). A fresh allocation always is; only an odd view is copied.
  const at::Tensor x = aligned16(x_in) ? x_in : x_in.clone();
  const at::Tensor w = aligned16(w_in) ? w_in : w_in.clone();

  at::Tensor y = at::empty({M, N}, x.options());
  GemvArgs a;
  a.x = x.data_ptr();
  a.w = static_cast<const uint8_t*>(w.data_ptr());
  a.ws = w_scale.data_ptr<float>();
  a.bias = bias.has_value() ? bias->data_ptr() : nullptr;
  a.y = y.data_ptr();
  a.M = static_cast<int>(M);
  a.N = static_cast<int>(N);
  a.K = static_cast<int>(K);
  a.bs = static_cast<int>(block_size);
  a.bmagic = block_magic(block_size);
  a.nb = static_cast<int>((K + block_size - 1) / block_size);
  // A weight copied just above was written by the kernel just before: no early loads of it.
  a.written = weight_written(static_weight, w.data_ptr() != w_in.data_ptr());
  a.tiled = tiled;

  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool half = x.scalar_type() == at::kHalf;
  if (path == Fp8GemvKernel::kTile) {
    if (half)
      launch_tile<__half>(a, caps.sm_count, stream, x);
    else
      launch_tile<__nv_bfloat16>(a, caps.sm_count, stream, x);
  } else if (path == Fp8GemvKernel::kDirect) {
    if (half)
      launch_direct<__half>(a, stream);
    else
      launch_direct<__nv_bfloat16>(a, stream);
  } else if (path == Fp8GemvKernel::kMma) {
    if (half)
      launch_mma<__half>(a, caps, stream);
    else
      launch_mma<__nv_bfloat16>(a, caps, stream);
  } else {
    if (half)
      launch_fma<__half>(a, stream);
    else
      launch_fma<__nv_bfloat16>(a, stream);
  }
  return y;
}

// ------------------------------------------------------------ quantize ----
// checks.h has no dedicated validator for this op; this is the sequence the
// CPU implementation must share so that errors match (block size, then the
// weight, then finiteness).
void validate_quantize_fp8_block_inputs(const at::Tensor& w, int64_t block_size) {
  const char* op = "quantize_fp8_block";
  check_block_size(block_size, op);
  validate_weight_2d(w, op, 1);
}

// Quantizes the rows of x in blocks of block_size along K (one warp per
// (row, block)). `scale_by_block`: the scale tensor is [rows, nb] stored
// column-major (strides (1, rows)), the layout of torch._scaled_mm's 1 x 128
// blockwise activation scales; otherwise row-major [rows, nb].
std::tuple<at::Tensor, at::Tensor> quantize_fp8_rows(const at::Tensor& x, int64_t block_size,
                                                     bool scale_by_block, const char* op) {
  const int64_t N = x.size(0), K = x.size(1);
  const int64_t nb = (K + block_size - 1) / block_size;
  at::Tensor q = at::empty({N, K}, x.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor s = scale_by_block ? at::empty({nb, N}, x.options().dtype(at::kFloat)).t()
                                : at::empty({N, nb}, x.options().dtype(at::kFloat));
  const int64_t tasks = N * nb;
  if (tasks == 0) return {q, s};
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  auto* qp = static_cast<uint8_t*>(q.data_ptr());
  float* sp = s.data_ptr<float>();
  const int bs = static_cast<int>(block_size);
  const int64_t s_row = s.stride(0), s_blk = s.stride(1);
  const int64_t warps_blocks = (tasks + fp8::kQuantWarps - 1) / fp8::kQuantWarps;
  const dim3 block(fp8::kQuantWarps * 32);
  // Block size 128 over whole blocks, x aligned for 4-element loads: lanes own
  // 4 consecutive elements (the activation path of the w8a8 prefill).
  const bool by4 = block_size == 128 && K % 128 == 0 &&
                   reinterpret_cast<uintptr_t>(x.data_ptr()) % (4 * x.element_size()) == 0;
  dispatch_float_cuda(x.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    if (by4) {
      const dim3 grid(static_cast<unsigned>(std::min<int64_t>(warps_blocks, int64_t{1} << 13)));
      fp8::quantize_fp8_act128_kernel<T><<<grid, block, 0, stream>>>(xp, qp, sp, N, K, s_row, s_blk);
    } else {
      const dim3 grid(static_cast<unsigned>(std::min<int64_t>(warps_blocks, int64_t{1} << 20)));
      fp8::quantize_fp8_block_kernel<T><<<grid, block, 0, stream>>>(xp, qp, sp, N, K, bs, nb, s_row, s_blk);
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {q, s};
}

std::tuple<at::Tensor, at::Tensor> quantize_fp8_block_cuda(const at::Tensor& w_in,
                                                           int64_t block_size) {
  const char* op = "quantize_fp8_block";
  validate_quantize_fp8_block_inputs(w_in, block_size);
  const c10::cuda::CUDAGuard device_guard(w_in.device());
  check_finite(w_in, op, "w");  // offline op: the host sync is acceptable
  return quantize_fp8_rows(w_in, block_size, false, op);
}

// Online (activation) quantization: no host sync, so a block with NaN or Inf
// gets a NaN scale instead of an error (see fp8_kernels.cuh).
std::tuple<at::Tensor, at::Tensor> quantize_fp8_act_cuda(const at::Tensor& x, int64_t block_size) {
  validate_quantize_fp8_act(x, block_size);
  const c10::cuda::CUDAGuard device_guard(x.device());
  return quantize_fp8_rows(x, block_size, true, "quantize_fp8_act");
}

// ---------------------------------------------------------- dequantize ----
at::Tensor dequantize_fp8_block_cuda(const at::Tensor& w_q, const at::Tensor& scale,
                                     int64_t block_size,
                                     std::optional<at::ScalarType> out_dtype) {
  const char* op = "dequantize_fp8_block";
  validate_dequantize_fp8_block(w_q, scale, block_size);
  const at::ScalarType od = dequant_out_dtype(out_dtype, op);
  const c10::cuda::CUDAGuard device_guard(w_q.device());
  const int64_t N = w_q.size(0), K = w_q.size(1);
  const int64_t nb = (K + block_size - 1) / block_size;
  at::Tensor out = at::empty({N, K}, w_q.options().dtype(od));
  const int64_t total = N * K;
  if (total == 0) return out;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const auto* qp = static_cast<const uint8_t*>(w_q.data_ptr());
  const float* sp = scale.data_ptr<float>();
  const int bs = static_cast<int>(block_size);
  // K % 16 == 0 and a 16-byte aligned w_q: one thread per 16-code piece
  // (block_size % 16 == 0, so a piece has one scale), with 32-bit index
  // arithmetic when every scale index fits (a 32-bit division per piece);
  // otherwise one thread per element (same values).
  const bool by16 = K % 16 == 0 && reinterpret_cast<uintptr_t>(qp) % 16 == 0;
  const int64_t pieces = total / 16;
  const bool idx32 = N * nb < (int64_t{1} << 32) && pieces < (int64_t{1} << 31);
  dispatch_float_cuda(od, op, [&](auto tag) {
    using O = decltype(tag);
    O* o = static_cast<O*>(out.data_ptr());
    auto by_piece = [&](auto idx) {
      using I = decltype(idx);
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(
          (pieces + fp8::kDequantThreads - 1) / fp8::kDequantThreads, int64_t{1} << 20));
      fp8::dequantize_fp8_block_vec_kernel<O, I><<<grid, fp8::kDequantThreads, 0, stream>>>(
          qp, sp, o, static_cast<I>(pieces), static_cast<I>(K / 16), static_cast<I>(bs / 16),
          static_cast<I>(nb));
    };
    if (!by16) {
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(
          (total + fp8::kDequantThreads - 1) / fp8::kDequantThreads, int64_t{1} << 20));
      fp8::dequantize_fp8_block_kernel<O><<<grid, fp8::kDequantThreads, 0, stream>>>(qp, sp, o, N, K, bs, nb);
    } else if (idx32) {
      by_piece(uint32_t{0});
    } else {
      by_piece(uint64_t{0});
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("fp8_block_gemv", &fp8_block_gemv_cuda);
  m.impl("quantize_fp8_block", &quantize_fp8_block_cuda);
  m.impl("quantize_fp8_act", &quantize_fp8_act_cuda);
  m.impl("dequantize_fp8_block", &dequantize_fp8_block_cuda);
  m.impl("fp8_block_tile", &fp8::fp8_block_tile_op);
}

}  // namespace torchquant
