// CUDA implementations of nvfp4_gemv, quantize_nvfp4 and dequantize_nvfp4
// (schemas in ../torchquant.cpp, format in ../shared/design/formats.md, CPU
// semantics in ../cpu/nvfp4_cpu.cpp, device code and memory pattern in
// nvfp4_kernels.cuh, design and predictions in docs/nvfp4_gemv.md).
//
// nvfp4_gemv: y[M, N] = global * x[M, K] @ (e2m1 * bs)[N, K]^T (+ bias), output
// in x's dtype, fp32 accumulation, epilogue (acc * global) + bias in fp32
// with one final rounding. Paths: "mma" (tensor cores, sm_80+), "fma"
// (scalar, any sm_75+), "tile" (the tiled GEMM, sm_80+, K % 128 == 0) and
// "wgmma" (sm_90 with torchquant._C_sm90a, K % 256 == 0: the Hopper decode
// GEMV, docs/nvfp4_gemv.md 20); `choose_nvfp4_gemv_kernel` below is the one
// place that picks between them. The global scale is read by the kernel from
// device memory and every launch goes on the current stream: no host
// synchronization, so the op can be captured in a CUDA graph.
//
// quantize_nvfp4 (offline): validation, a finiteness check (one host sync,
// acceptable here), an amax reduction kernel, then one encode kernel,
// bit-identical to the CPU op. dequantize_nvfp4: one elementwise kernel,
// bit-identical to the CPU op.
//
// Launch assumptions enforced here: M, N, K < 2^31 and grids < 2^31 blocks;
// x 16-byte aligned (an odd view gets a one-off aligned copy); the wide
// (kAligned) weight loads are used only when K and the weight / scale base
// pointers allow them, the 8-byte-granule variants otherwise (a weight base
// that is not even 8-byte aligned, possible only for an unusual view, is
// copied).

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "common/checks.h"
#include "common/device.h"
#include "common/dq_tile_launch.h"
#include "common/pdl.h"
#include "common/sm90a_op.h"
#include "nvfp4/nvfp4_kernels.cuh"
#include "nvfp4/nvfp4_tiles.h"

namespace torchquant {
namespace {

constexpr const char* kGemvOp = "nvfp4_gemv";
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

enum class Nvfp4GemvKernel { kFma, kMma, kTile, kWgmma };

// M above this (and K % 128 == 0) runs the tiled GEMM (common/dq_tile.cuh),
// which decodes each weight element once per 64 rows of x instead of once
// per 16 (the mma GEMV's M tiles). Measured on the H200
// (results/h200/2026-12-01_1043/tile_vs_gemv.csv, cold L2, us, tile / mma
// GEMV): M = 64: 28672x8192 187.8 / 230.6, 14336x4096 50.7 / 61.1,
// 4096x14336 48.0 / 58.9, 4096x4096 20.4 / 21.6; M = 32 the GEMV wins
// (120.0 / 182.9, 35.1 / 48.5): the two cross near M = 48.
constexpr int64_t kTileMinM = 48;

// -------------------------------------------------------------------------
// choose_nvfp4_gemv_kernel: the one dispatch decision for nvfp4_gemv.
//
//   compute capability | M, N, K | kernel | why
//   -------------------+---------+--------+-----------------------------------
//   < 7.5              | -       | error  | below torch's CUDA 13 floor; the
//                      |         |        | fma kernel's loads need sm_70+ and
//                      |         |        | is only built/tested for sm_75+
//   7.5 (sm_75)        | any     | fma    | mma.m16n8k16 with fp16/bf16 inputs
//                      |         |        | needs sm_80 (and bf16 math too)
//   >= 8.0             | any     | mma    | the weight stream is the cost; the
//                      |         |        | decode (~11 integer ops per 8 codes)
//                      |         |        | is paid once per weight and shared
//                      |         |        | by up to 16 rows of x in one mma,
//                      |         |        | while the fma path also spends a
//                      |         |        | widening + one FFMA per code per x
//                      |         |        | row: it is issue-bound from M = 1
//                      |         |        | (~33 instructions per 8 codes vs
//                      |         |        | ~20) and falls further behind as M
//                      |         |        | grows. No shape needs the fallback:
//                      |         |        | the mma kernel takes any M (8/16-row
//                      |         |        | tiles), any N (masked 32-column warp
//                      |         |        | tiles), any K % 16 == 0 (16-code
//                      |         |        | granules when K % 64 != 0).
//   >= 8.0             | M > 48, | tile   | decodes each weight once per 64
//                      | K % 128 |        | rows of x (kTileMinM below)
//   9.0 + _C_sm90a     | M 5..32,| wgmma  | TMA + warpgroup MMA, flat in M up
//                      | K % 256 |        | to 16 tokens (kWgmmaMinM below)
//   9.0 + _C_sm90a     | M 5..8, | mma    | x resident, where its grid is one
//                      | K % 256 |        | wave of <= 1 block per SM, unsplit
//                      |         |        | (kXresMinM below)
//   layout 1/2/3,      | as above| mma    | where the rule says fma or tile:
//   >= 8.0             |         |        | those read layout 0 only
//                      |         |        | (docs/nvfp4_gemv.md 23)
//   layout 3, >= 8.0   | M <= 16,| direct | 16 rows x 8 tokens per block (32 or
//                      | K % 128,|        | 64 rows at M >= 4 on larger grids),
//                      | K<=4096 |        | the int8 GEMV's stream, on grids of
//                      |         |        | SMs .. 3 x SMs blocks; also long rows
//                      |         |        | (K <= 16384, <= 2 x SMs blocks) at
//                      |         |        | M <= 8 on cards of <= 15 DRAM bytes
//                      |         |        | per SM clock (H100), M = 4..8 on the
//                      |         |        | others (H200); on the former, larger
//                      |         |        | grids (K <= 8192), on the latter at
//                      |         |        | M = 5..8 those of SMs + 1 .. 2 x SMs
//                      |         |        | 64-row blocks (K <= 4096). nvfp4_gemv_cuda
//                      |         |        | routes it before this rule, by
//                      |         |        | direct_rule;
//                      |         |        | build by direct_build
//                      |         |        | (docs/nvfp4_gemv.md 27-34)
//   layout 4, >= 8.0   | every M,| direct | layout 3 tiled (nvfp4_tiles.h): the
//                      | N % 16, |        | direct builds direct_build picks,
//                      | K % 128 |        | the only kernels that read it
//                      |         |        | (docs/nvfp4_gemv.md 40)
// The mma launch shape (n-tiles, K-split) is picked in mma_config below.
// -------------------------------------------------------------------------
// Measured exception (H200, cold L2, graph replay, 2026-11-30), M = 1: with
// the weight streamed through the cp.async ring (K % 64 == 0) mma matched or
// beat fma from 14336x4096 up (28672x8192: 56.2 vs 56.6 us; 128256x4096:
// 108 vs 127 us) but lost on 4096x4096 (8.5 vs 7.8 us); the register-load mma
// kernel (K % 64 != 0) lost to fma everywhere (28672x8192: 80 vs 57 us). So
// M = 1 takes fma below 32M weights or when K % 64 != 0. Re-measured with the mma
// kernel's single-tile launches under programmatic dependent launch (common/pdl.h, on by
// default since 2026-12-02): alone, back to back, mma beat fma at 4096x4096 (run
// 2026-12-02c call 4: 7.17 vs 7.88 us), but with the threshold at 16M (mma for the o
// projection) the fused Llama-3-8B layer through QuantLinear ran 68.3 us against 66.0 at
// 32M (call 5 vs call 3; the other formats moved by +0.3..1.1 us between those runs), so
// the threshold stayed then.
// Now (2026-12-02e), with x resident in shared memory and one block per SM on small
// grids (docs/nvfp4_gemv.md 12, results/h200/2026-12-02e_nvfp4_xres call 5, us, fma / mma):
// 4096x4096 7.8 / 6.7, 1024x4096 7.3 / 5.1, 1024x8192 12.1 / 8.0, 6144x4096 10.15 / 10.3;
// the fused layer 56.2-57.2 / 55.3-55.6 with the threshold at 4M (o and qkv projections on
// mma). Below 4M weights fma is unmeasured against the new kernel, so it stays there.
constexpr int64_t kMmaM1MinWeights = int64_t{4} << 20;

// sm_90 with torchquant._C_sm90a, K % 256 == 0: the Hopper decode GEMV (path "wgmma",
// fp4_gemv_sm90a_kernel: TMA stages, the decoded weight as the wgmma A operand, 16 tokens per
// tile) from M = kWgmmaMinM to kWgmmaMaxM. Its time is nearly flat in M within a 16-token
// tile, the mma kernel's climbs:
// H200 (results/h200/2026-12-04f_nvfp4_wgmma, call 1), bf16, us, mma (auto then) / wgmma:
//   M = 1:  28672x8192 42.8 / 48.3, 128256x4096 84.5 / 94.5, 14336x4096 13.8 / 16.2,
//           4096x4096 6.6 / 9.0 (the x-resident mma kernel wins);
//   M = 4:  28672x8192 49.9 / 48.7, 128256x4096 101.0 / 98.9, 28672x4096 27.7 / 27.5, but
//           14336x4096 15.2 / 16.4, 6144x4096 10.1 / 11.5, 4096x14336 16.4 / 18.1,
//           4096x4096 7.8 / 9.1;
//   M = 8:  28672x8192 54.2 / 49.3, 28672x4096 30.3 / 28.2, 14336x4096 18.3 / 16.6,
//           4096x14336 22.3 / 18.9, 4096x4096 10.4 / 9.4, 6144x4096 11.7 / 11.7;
//   M = 16: 28672x8192 65.6 / 51.0, 28672x4096 36.8 / 28.6, 14336x4096 23.9 / 17.2,
//           4096x14336 28.2 / 19.4, 6144x4096 15.9 / 12.0, 4096x4096 11.7 / 9.5
// (fp16 alike: 28672x8192 M = 8 53.0 / 47.0, M = 16 64.9 / 48.5). So from M = 5 on. With two
// 16-token tiles it still wins (call 2, us, auto = mma GEMV / wgmma): 28672x8192 M = 17 111.6 /
// 90.8, M = 32 113.0 / 93.7; 14336x4096 M = 32 33.2 / 26.3; 4096x14336 33.2 / 28.3; 4096x4096
// 14.4 / 11.9; with three (M = 48) too (170.2 / 136.3), but there the dequantizing wgmma GEMM
// that QuantLinear runs is faster (124.6), so the op's rule stops at two tiles as well.
// TORCHQUANT_NVFP4_WGMMA_MIN_M=m moves the threshold (33: never; A/B of a model's layers).
constexpr int64_t kWgmmaMinM = 5;
constexpr int64_t kWgmmaMaxM = 32;  // = torchquant.nn.dispatch.NVFP4_GEMV_WGMMA_MAX_M (tested)

// Except at M = kXresMinM..kXresMaxM, where the mma kernel with x resident in shared memory runs
// a one-tile grid that is unsplit and has at most one block per SM (mma_xres_one_wave, below
// mma_config): there it beat the wgmma GEMV. H200, bf16, layout 1, us, x-resident mma / wgmma
// (results/h200/2026-12-05e calls 2-5): M = 5: 6144x4096 9.2 / 11.1, 8192x4096 9.3 / 12.0,
// 8192x8192 15.1 / 20.5; M = 8: 9.8 / 11.2, 9.8 / 12.0, 16.9-17.1 / 18.4 (the wgmma GEMV with
// its K split of 0c5a184). Where the mma grid splits K (4096x4096 9.3 / 9.1, 4096x14336) or
// has more blocks than SMs (10240x8192 M = 8 30.6 / 28.7, 14336x4096, 28672x*), the resident
// x lost, and the wgmma GEMV stays. TORCHQUANT_NVFP4_XRES=-1 (no x residency) restores the
// plain threshold.
constexpr int64_t kXresMinM = 5;
constexpr int64_t kXresMaxM = 8;

// The mma kernel's launch shape (mma_config, below choose_nvfp4_gemv_kernel, says how it is chosen).
struct MmaConfig {
  int nt = 1;
  int ks = 1;
  int tile_m = 8;
  int64_t m_tiles = 1;
  int64_t n_blocks = 1;
  int splits = 1;  // K split across blocks (grid.y); 1 = none
  int cps = 0;     // chunks per split when splits > 1
  bool group_sync = false;  // per-k-warp x staging (kGroupSync), unsplit aligned kernels
  bool xres = false;        // x resident in shared memory (kXRes), aligned one-n-tile kernels
  int xres_bytes = 0;       // its size per block
};
MmaConfig mma_config(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K);
bool mma_xres_one_wave(const MmaConfig& c, const DeviceCaps& caps);

// layouts 1, 2 (nvfp4_layout.h; the caller has checked sm_80+): the same rule, except that the
// kernels which read layout 0 only (fma, tile) give way to mma.
// mma_cfg: where the rule had to work out the mma kernel's launch shape (M = 5..8 above), it is
// left there, so the launch does not compute it a second time.
Nvfp4GemvKernel choose_nvfp4_gemv_kernel(const DeviceCaps& caps, int64_t M, int64_t N,
                                         int64_t K, bool have_wgmma, int64_t layout,
                                         std::optional<MmaConfig>& mma_cfg) {
  TORCH_CHECK(caps.cc() >= 75, kGemvOp, ": needs compute capability 7.5 or newer, this device is sm_",
              caps.cc());
  const bool decode_order = layout != nvfp4::kLayoutStd;
  if (caps.cc() < 80) return Nvfp4GemvKernel::kFma;  // no m16n8k16 fp16/bf16 mma
  if (M > kTileMinM && K % 128 == 0 && !decode_order) return Nvfp4GemvKernel::kTile;
  if (have_wgmma && caps.major == 9 && caps.minor == 0 && K % 256 == 0 && M <= kWgmmaMaxM) {
    const int knob = env_int("TORCHQUANT_NVFP4_WGMMA_MIN_M");
    if (M >= (knob > 0 ? knob : kWgmmaMinM)) {
      if (M >= kXresMinM && M <= kXresMaxM) {
        mma_cfg = mma_config(caps, M, N, K);
        if (mma_xres_one_wave(*mma_cfg, caps)) return Nvfp4GemvKernel::kMma;
      }
      return Nvfp4GemvKernel::kWgmma;
    }
  }
  // TORCHQUANT_NVFP4_M1_MMA_MIN=W: the threshold in units of 2^20 weights (A/B knob).
  const int64_t m1_min = env_weights("TORCHQUANT_NVFP4_M1_MMA_MIN", kMmaM1MinWeights);
  if (M == 1 && (K % 64 != 0 || N * K < m1_min) && !decode_order)
    return Nvfp4GemvKernel::kFma;                     // measured faster at M = 1 (above)
  return Nvfp4GemvKernel::kMma;                       // every shape
}

// ------------------------------------------------------- mma launch shape --
// tile_m: rows of x per M tile (<= 16; NT = 1 n-tile of 8 rows for tiles of
// <= 8 rows, else 2). KS (warps splitting K in a 256-thread block; WN = 8 / KS
// column warps share each staged chunk of x): for a tile size, the smallest
// KS, i.e. the most x sharing and the longest per-warp K streams, such that
//   * every SM gets at least one block (blocks >= SMs), and
//   * the grid is one wave of 2 blocks per SM (<= 128 registers each), or an
//     exact number of waves, or its last wave is at least half full, or it is
//     >= 4 waves long, so no small tail wave streams alone at the end;
// subject to the x staging bound (tile rows * 4 * LW * KS <= 1024 16-byte
// groups per chunk, at most 4 per thread: rows * KS <= 32) and to each warp
// owning at least one step (256 codes) of K.
// The tile: the largest of min(M, 16), then half as many rows, ... down to
// M / 4 rows (more M tiles, each re-reading its weight tile, mostly from L2:
// the M tiles of a column block are adjacent in the grid) whose grid has at
// least 0.45 blocks per SM; if none does, the one with the most blocks.
// Measured on the H200 (cold L2, bf16, benchmarks/micro/env_ab.py with this knob,
// results/h200/2026-12-01_0136/tile_sweep.csv): with
// 16-row tiles only, 4096x4096 took 8.5 / 13.9 / 24.1 us at M = 1 / 8 / 16
// (the staging bound left KS = 2 and 32 blocks at M = 16); per tile size, us:
//   4096x4096   M=16: tile 16 22.4, 8 13.0, 4 16.0    M=2: 2 8.7, 1 13.5
//   1024x4096   M=16: 16 21.4, 8 11.6, 4 7.7          M=8: 8 11.6, 4 7.6, 2 7.1
//   14336x4096  M=16: 16 27.2, 8 29.8                 M=8: 8 20.2, 4 29.2
//   4096x14336  M=16: 16 70.5, 8 36.7, 4 48.2         M=2: 2 21.3, 1 34.5
//   4096x4096   M=8:  tile 8 12.9 (64 blocks), 4 15.0 (256 blocks)
// (a first rule, "split while blocks < SMs", took 128 -> 256 blocks at M = 2
// and lost 50 %). The threshold sits between the 32 blocks that lose and
// the 64 that win at 4096x4096; it picks the fastest tile of every row above
// but 1024x4096 M = 8 (tile 4, 7.6 vs 7.1 us).
//   28672 x 8192, M <= 16: tile min(M, 16), KS = 2 (224 blocks, one wave);
//   128256 x 4096, M <= 8: KS = 1 (501 blocks, 1.9 waves); 4096 x 4096,
//   M = 1: KS = 8 (128 blocks, 8 warps each).
MmaConfig mma_config_one_pass(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K) {
  using namespace nvfp4;
  const int64_t sms = std::max(1, caps.sm_count);
  const int64_t slots = 2 * sms;
  // One tile size: its n-tiles, M tiles and KS.
  auto evaluate = [&](int tile) {
    MmaConfig c;
    c.tile_m = tile;
    c.nt = tile <= 8 ? 1 : 2;
    c.m_tiles = (M + tile - 1) / tile;
    const int64_t rows = std::min<int64_t>(M, tile);
    const int64_t lw = mma_lane_words(c.nt);
    const int64_t steps = (K + mma_step(c.nt) - 1) / mma_step(c.nt);
    auto cols_for = [](int ks) { return int64_t{16} * kMmaMT * (kMmaWarps / ks); };  // per block
    auto blocks_for = [&](int ks) { return (N + cols_for(ks) - 1) / cols_for(ks) * c.m_tiles; };
    int chosen = 0, largest = 1;
    for (int ks = 1; ks <= kMmaWarps; ks *= 2) {
      if (rows * 4 * lw * ks > static_cast<int64_t>(kMmaThreads) * kMmaMaxStage) break;
      if (ks > 1 && ks > steps) break;
      largest = ks;
      const int64_t blocks = blocks_for(ks);
      if (blocks < sms) continue;
      const double waves = static_cast<double>(blocks) / static_cast<double>(slots);
      const double frac = waves - std::floor(waves);
      if (waves <= 1.0 || frac == 0.0 || frac >= 0.5 || waves >= 4.0) {
        chosen = ks;
        break;
      }
    }
    c.ks = chosen != 0 ? chosen : largest;
    // Tiles of <= 4 rows (the x-resident kernel), where some KS >= 2 (up to the wave rule's)
    // gives a one-wave grid (<= 2 blocks per SM): the KS whose busiest SM has the fewest rows
    // (ceil(blocks / SMs) blocks of cols_for(KS) rows), the smallest on a tie (longer per-warp
    // K streams, a shorter K-split reduction). It halves KS where that leaves every block an
    // SM of its own at no more rows per SM. H200 (2026-12-04 call 4, bf16, us, this / the
    // wave rule alone): 6144x4096 M = 1 / 2 / 4 (KS 4, 96 blocks, against 8, 192) 9.0 / 10.1,
    // 9.4 / 10.7, 10.2 / 11.5; 14336x4096 (KS 2 against 4) 14.1 / 15.6, 14.4 / 16.0, 15.2 /
    // 16.8. Not taken where it lost in the same run: KS = 1 (28672x4096 M = 1 28.3 / 24.7,
    // 28672x8192 46.5 / 42.5) and tiles of 8 or 16 rows (6144x4096 M = 16 19.0 / 16.1,
    // 14336x4096 M = 8 20.5 / 18.6). TORCHQUANT_NVFP4_KS_RULE=waves keeps the wave rule.
    const char* rule = std::getenv("TORCHQUANT_NVFP4_KS_RULE");
    if (rows <= 4 && !(rule != nullptr && std::strcmp(rule, "waves") == 0)) {
      int64_t best_rows = -1;
      for (int ks = 2; ks <= largest; ks *= 2) {
        const int64_t blocks = blocks_for(ks);
        if (blocks > slots) continue;
        const int64_t rows_per_sm = (blocks + sms - 1) / sms * cols_for(ks);
        if (best_rows < 0 || rows_per_sm < best_rows) {
          best_rows = rows_per_sm;
          c.ks = ks;
        }
      }
    }
    // Test/sweep knob: a forced K-split, taken when legal for this tile.
    if (const int fks = env_int("TORCHQUANT_NVFP4_KS");
        fks >= 1 && fks <= largest && (fks & (fks - 1)) == 0)
      c.ks = fks;
    c.n_blocks = blocks_for(c.ks) / c.m_tiles;
    return c;
  };
  if (const int forced = env_int("TORCHQUANT_NVFP4_TILE_M"); forced >= 1 && forced <= 16)
    return evaluate(forced);
  const int first = static_cast<int>(std::min<int64_t>(M, 16));
  const int64_t min_tile = std::max<int64_t>(1, (M + 3) / 4);
  const int64_t enough = (45 * sms + 99) / 100;
  MmaConfig best;
  int64_t best_blocks = -1;
  for (int tile = first; tile >= 1 && (tile == first || tile >= min_tile); tile /= 2) {
    const MmaConfig c = evaluate(tile);
    const int64_t blocks = c.n_blocks * c.m_tiles;
    if (blocks >= enough) return c;
    if (blocks > best_blocks) {
      best = c;
      best_blocks = blocks;
    }
  }
  return best;
}

// Two refinements of the one-pass shape, both measured on the H200 (cold L2,
// graph replay, bf16, benchmarks/micro/env_ab.py; results/h200/2026-12-01_0512
// and _0535, ab_nvfp4_split.csv / ab_nvfp4_gs.csv):
//
// K split across blocks (grid.y = S block rows, each over ceil(chunks / S)
// chunks of K, fp32 sums to a [S, M, N] workspace; a second kernel adds them
// in split order, deterministic, and applies the epilogue; aligned ring
// kernels only). It pays where the x-staging bound leaves few blocks with
// long K streams; it costs a second launch and a pipeline fill per split, so
// short streams lose. us at S = 1 (one pass) / 2 / 4, run 0535:
//   blocks, chunks  shape       M
//    32,  4         1024x8192   1   10.5 /  8.6 /  7.6
//    64,  4         1024x8192   8   11.3 /  9.5 / 12.3   (4096x4096 M=8: 11.7 / 10.6 / 10.7)
//    64, 14         4096x14336  8   31.8 / 25.0 / 23.0
//    64, 16         8192x8192   16  41.2 / 29.8 / 25.5
//    80, 16         10240x8192  16  44.5 / 40.0 / 36.1
//   128, 28         8192x28672  8   77.1 / 60.2 / 65.7
//   128, 14         4096x14336  16  31.8 / 30.1 / 32.4
//   128,  8         8192x8192   8   23.3 / 23.5 / 27.7
//   128,  7         4096x14336  1   20.9 / 23.8 / 27.7   (M = 2, 4 alike)
//   128,  4         4096x4096   16  11.9 / 13.2 / 15.5
//    96,  4         6144x4096   8   12.9 / 14.3 / 14.9
//    64,  2         1024x4096   8    7.1 /  7.4 /  7.4   (run 0512)
//   >= 160 blocks: neutral to 30 % slower, but for 10240x8192 M <= 4 (-3..5 %)
//                  and 8192x28672 M = 4 (-7 %).
// Rule: split when the grid is at most half the SMs and every block streams
// >= 4 chunks, or at most one block per SM with >= 12 chunks; S is the
// largest power of two with >= 2 chunks per split and at most 1.25 waves of
// 2 blocks per SM. It never splits a row where splitting lost; where it
// won, it takes the best S or one within 3 % of it, but for 1024x8192 M = 1
// (S = 2: 8.6 us; that shape runs the fma kernel by default at M = 1).
// TORCHQUANT_NVFP4_SPLITK=S forces S (1 = never split; tests, env_ab.py).
//
// Per-k-warp x staging with named barriers (kGroupSync): each k-warp's WN
// column warps stage only their slice of x and meet at a barrier of WN warps
// instead of the block barrier. With KS >= 2 at tiles of >= 8 rows it was
// faster (A/B pairs in one build, us, default / group sync): 28672x8192
// M = 8 58.4 / 57.2, M = 16 70.1 / 68.9; 14336x4096 M = 8 20.1 / 19.6,
// M = 16 26.5 / 25.0 (run 0512); 4096x4096 M = 16 12.4 / 11.9, 6144x4096
// M = 8 13.4 / 12.9, 28672x4096 M = 16 39.2 / 38.8 (run 0535). With KS = 1
// (one k-group: 128256x4096) it lost 1-1.5 % (M = 8 110.9 / 112.2, M = 16
// 133.1 / 134.8) and at M = 1 it was equal to 2 % slower, so it is taken for
// tile_m >= 8 and KS >= 2. TORCHQUANT_NVFP4_GROUP_SYNC=1 / -1 forces it
// on / off.
// Grids of at most one block per SM get more than half an SM's shared memory
// (common/device.h spread_smem; TORCHQUANT_NVFP4_SPREAD=1 / -1 forces it).
constexpr bool kSpreadDefault = true;

// Shared memory of the kXRes kernel: the resident x (or the K-split
// reduction, which reuses it, if larger), then the weight ring.
int64_t xres_ring_offset(int64_t xres_bytes, int ks) {
  return (std::max<int64_t>(xres_bytes, nvfp4::mma_reduce_bytes(ks, 1)) + 127) / 128 * 128;
}
int64_t xres_smem_total(int64_t xres_bytes, int ks) {
  return xres_ring_offset(xres_bytes, ks) + nvfp4::kMmaWarps * nvfp4::kMmaRingWarpBytes;
}

// One M tile of 5..8 rows (one n-tile), K unsplit, at most one block per SM.
bool one_tile_one_wave(const MmaConfig& c, int64_t sms) {
  return c.nt == 1 && c.tile_m > 4 && c.m_tiles == 1 && c.splits == 1 && c.n_blocks <= sms;
}

MmaConfig mma_config(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K) {
  MmaConfig c = mma_config_one_pass(caps, M, N, K);
  const int64_t sms = std::max(1, caps.sm_count);
  const int64_t ck = static_cast<int64_t>(nvfp4::mma_step(c.nt)) * c.ks;  // codes per chunk
  const int64_t chunks = (K + ck - 1) / ck;
  const int64_t blocks = c.n_blocks * c.m_tiles;
  int64_t want = env_int("TORCHQUANT_NVFP4_SPLITK");
  if (want <= 0) {  // the rule
    want = 1;
    if ((2 * blocks <= sms && chunks >= 4) || (blocks <= sms && chunks >= 12))
      while (4 * blocks * want * 2 <= 5 * 2 * sms && 2 * want * 2 <= chunks) want *= 2;
  }
  want = std::min<int64_t>(want, 65535);  // grid.y limit
  const int64_t cps = (chunks + want - 1) / want;
  const int64_t splits = (chunks + cps - 1) / cps;  // every split has >= 1 chunk
  if (splits >= 2) {
    c.splits = static_cast<int>(splits);
    c.cps = static_cast<int>(cps);
  }
  const int gs = env_int("TORCHQUANT_NVFP4_GROUP_SYNC");
  c.group_sync = gs == 1 || (gs == 0 && c.tile_m >= 8 && c.ks >= 2);
  // x resident in shared memory (kXRes; one n-tile, so tiles of <= 8 rows):
  // the tile's rows over the block's K range, staged once. Taken for tiles
  // of <= 4 rows wherever it fits a block's shared memory, even where that
  // leaves one block per SM. Measured (results/h200/2026-12-02e_nvfp4_xres, us,
  // double-buffered / resident, both with spread_smem): 28672x8192
  // M = 1 / 2 / 3 / 4 51.5 / 43.2, 51.5 / 47.2, 53.8 / 49.0, 54.6 / 50.6
  // (M = 3, 4: 64 KB, one block per SM); 8192x8192 M = 4 24.6 / 21.4;
  // 128256x4096 M = 1 / 2 / 4 101.7 / 85.6, 102.3 / 91.3, 103.1 / 98.1;
  // 4096x14336 M = 1 / 2 / 4 19.2 / 13.8, 20.0 / 14.7, 21.7 / 16.5;
  // 6144x4096 M = 1 / 4 12.8 / 10.2, 14.1 / 11.5; but 4096x4096 M = 8
  // (split in two, 128 blocks) 10.5 / 11.9, and no 8-row tile gained.
  // Tiles of 5..8 rows take it too where the grid is one M tile, unsplit, with at most one
  // block per SM (one_tile_one_wave), so the resident x costs no occupancy the grid could use.
  // Measured (results/h200/2026-12-05e, bf16, layout 1, us, resident / not): M = 5 6144x4096
  // 9.2 / 11.2, 8192x4096 9.3 / 12.1, 8192x8192 15.1 / 22.7; M = 8 9.8 / 11.2, 9.8 / 12.1,
  // 16.9 / 21.8; outside that shape of grid it lost or tied (10240x8192, 160 blocks, M = 8
  // 30.6 / 27.2; 4096x14336, split, 22.6 / 21.2; 28672x8192 51.3 / 51.7).
  if (c.nt == 1) {
    const int64_t rows = std::min<int64_t>(M, c.tile_m);
    const int64_t per_row = (c.splits > 1 ? c.cps : chunks) * c.ks * 32;  // 16-byte groups
    const int64_t bytes = rows * nvfp4::mma_xres_stride(per_row) * 16;
    const bool fits = xres_smem_total(bytes, c.ks) <= std::max(caps.max_smem_optin, 48 * 1024);
    const int xr = env_int("TORCHQUANT_NVFP4_XRES");
    if (fits && xr != -1 && (xr == 1 || rows <= 4 || one_tile_one_wave(c, sms))) {
      c.xres = true;
      c.xres_bytes = static_cast<int>(bytes);
      c.group_sync = false;
    }
  }
  return c;
}

// choose_nvfp4_gemv_kernel's M = 5..8 exception: mma_config gives the x-resident kernel a one-tile,
// unsplit grid of at most one block per SM.
bool mma_xres_one_wave(const MmaConfig& c, const DeviceCaps& caps) {
  return c.xres && one_tile_one_wave(c, std::max(1, caps.sm_count));
}


template <typename T, int NT, bool kAligned, bool kSplit = false, bool kGroupSync = false,
          bool kXRes = false, int kF16 = 0, int kLayout = nvfp4::kLayoutStd>
void launch_mma_t(nvfp4::GemvParams prm, const MmaConfig& c, const DeviceCaps& caps, int device,
                  cudaStream_t stream, WeightWritten written) {
  const int64_t blocks = c.n_blocks * c.m_tiles;
  TORCH_CHECK(blocks <= kIntMax && c.m_tiles <= kIntMax, kGemvOp, ": grid of ", blocks,
              " blocks is too large");
  const int need = kXRes ? static_cast<int>(xres_smem_total(c.xres_bytes, c.ks))
                         : nvfp4::mma_smem_total(c.ks, NT, /*ring=*/kAligned);
  int smem =
      spread_smem(caps, blocks * (kSplit ? c.splits : 1), need, "TORCHQUANT_NVFP4_SPREAD", kSpreadDefault);
  // Occupancy sweep knob: at least this many bytes of dynamic shared memory, so fewer
  // blocks fit an SM (docs/nvfp4_gemv.md section 16; measurements only).
  if (const int pad = env_int("TORCHQUANT_NVFP4_SMEM_MIN"); pad > smem) smem = pad;
  prm.ring_off = kXRes ? static_cast<int>(xres_ring_offset(c.xres_bytes, c.ks)) : 0;
  TORCH_CHECK(smem <= std::max(caps.max_smem_optin, 48 * 1024), kGemvOp, ": needs ", smem,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  auto* kernel =
      nvfp4::nvfp4_gemv_mma_kernel<T, NT, kAligned, kSplit, kGroupSync, kXRes, kF16, kLayout>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), device, smem);
  prm.m_tiles = static_cast<int>(c.m_tiles);
  prm.tile_m = c.tile_m;
  prm.ks = c.ks;
  prm.ks_log2 = c.ks == 1 ? 0 : c.ks == 2 ? 1 : c.ks == 4 ? 2 : 3;
  at::Tensor part;  // K split: fp32 partial sums, freed after both launches (stream-ordered)
  const int splits = kSplit ? c.splits : 1;
  if (splits > 1) {
    part = at::empty({splits, prm.M, prm.N},
                     at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device));
    prm.part = part.data_ptr<float>();
    prm.cps = c.cps;
  }
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(splits));
  const bool single = splits == 1 && c.tile_m <= 8 && c.m_tiles == 1;
  const PdlMode pdl = pdl_mode(device, single ? PdlKernel::kNvfp4Mma : PdlKernel::kNvfp4MmaMulti,
                               written);  // common/pdl.h
  prm.pdl_early = pdl.early ? 1 : 0;
  launch_kernel(kernel, grid, dim3(nvfp4::kMmaThreads), static_cast<size_t>(smem), stream, pdl.on,
                prm);
  if (splits > 1) {
    const int64_t outs = static_cast<int64_t>(prm.M) * prm.N;
    constexpr int kThreads = 256;
    nvfp4::nvfp4_splitk_reduce_kernel<T>
        <<<static_cast<unsigned>((outs + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            prm.part, splits, prm);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// Wide loads (kAligned): per lane and row, 4 * LW bytes of weight as 16-byte
// loads and LW / 2 scale bytes as one u32 (LW = 8) or u16 (LW = 4). That
// needs K % (8 * LW) == 0 and bases aligned to 16 and LW / 2 bytes.
bool mma_wide_ok(int nt, int64_t K, const void* w, const void* s) {
  const int lw = nvfp4::mma_lane_words(nt);
  return K % (8 * lw) == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(s) % static_cast<uintptr_t>(lw / 2) == 0;
}

// bf16 x in the x-resident kernel (kF16): the block stages x as fp16 and runs the fp16 decode
// (11 instructions per 8 codes against bf16's 13, docs/nvfp4_gemv.md 2) and mma when every
// value of its x converts exactly, else it stages x again as bf16 and runs the bf16 loop.
// TORCHQUANT_NVFP4_F16 (read per call): 1 on for every x-resident bf16 tile, unset or -1 off
// (the default); 2 (tests only: honoured with TORCHQUANT_TESTING=1, else as 1) as 1 without the
// exactness check, wrong for x fp16 cannot hold.
// H200, cold L2, us (results/h200/2026-12-04i_f16s call 2, bf16, two rounds, on / off):
// faster where x fits fp16's exact range (28672x8192 M = 1 41.2-41.6 / 42.3-42.7, M = 2
// 44.8-44.9 / 46.8-47.2; small layers level), slower where it does not: x = gelu(1.5 randn),
// an FFN down projection's input, 28672x8192 M = 4 53.1-53.3 / 47.5-47.9 (every block stages
// twice), and the Llama-3-8B layer chain at M = 2 / 4 61.8-62.2 / 60.2-60.4, 69.3-69.5 /
// 65.5-66.1. Real activations leave the range often (all-MiniLM-L6-v2: 2-96 % of the FFN output
// projections' rows fit, benchmarks/micro/act_range.py), hence off by default. A scaled form (x
// times a power of two per block, no reload; 2026-12-04h) measured no faster than off at M = 1
// and slower at M >= 3 and in the chain, and was removed. docs/nvfp4_gemv.md 22.

// L: the weight layout (nvfp4_layout.h); layouts 1 (bf16) and 2 (fp16) run every form with their
// decode, the x-resident one without kF16 (bf16 x through the fp16 decode reads layout 0 only).
// c: mma_config for this call's M, N, K.
template <typename T, int L = nvfp4::kLayoutStd>
void launch_mma(const nvfp4::GemvParams& prm, const MmaConfig& c, const DeviceCaps& caps,
                int device, cudaStream_t stream, WeightWritten written) {
  const bool aligned = mma_wide_ok(c.nt, prm.K, prm.w, prm.s);
  if (aligned && c.xres) {  // x resident in shared memory (mma_config: it fits)
    // The x-resident kernel with kF16 = F, unsplit or with the K split across blocks.
    auto xres = [&](auto f16, const nvfp4::GemvParams& p) {
      constexpr int F = decltype(f16)::value;
      if (c.splits > 1)
        launch_mma_t<T, 1, true, true, false, true, F, L>(p, c, caps, device, stream, written);
      else
        launch_mma_t<T, 1, true, false, false, true, F, L>(p, c, caps, device, stream, written);
    };
    if constexpr (std::is_same_v<T, __nv_bfloat16> && L == nvfp4::kLayoutStd) {
      const int knob = env_int("TORCHQUANT_NVFP4_F16");  // the comment above
      if (knob == 1 || knob == 2) {  // bf16 x through the fp16 decode and mma where exact
        nvfp4::GemvParams p16 = prm;
        // the unchecked loop only with TORCHQUANT_TESTING=1 too, so a stray 2 cannot give a
        // user wrong answers (without it 2 works as 1)
        p16.f16_unchecked = knob == 2 && env_int("TORCHQUANT_TESTING") == 1 ? 1 : 0;
        xres(std::integral_constant<int, 1>{}, p16);
        return;
      }
    }
    xres(std::integral_constant<int, 0>{}, prm);
    return;
  }
  if (aligned && c.splits > 1) {  // K split across blocks (aligned ring kernels only)
    if (c.nt == 1)
      launch_mma_t<T, 1, true, true, false, false, 0, L>(prm, c, caps, device, stream, written);
    else
      launch_mma_t<T, 2, true, true, false, false, 0, L>(prm, c, caps, device, stream, written);
  } else if (aligned && c.group_sync) {  // per-k-warp x staging (mma_config)
    if (c.nt == 1)
      launch_mma_t<T, 1, true, false, true, false, 0, L>(prm, c, caps, device, stream, written);
    else
      launch_mma_t<T, 2, true, false, true, false, 0, L>(prm, c, caps, device, stream, written);
  } else if (c.nt == 1) {
    if (aligned)
      launch_mma_t<T, 1, true, false, false, false, 0, L>(prm, c, caps, device, stream, written);
    else
      launch_mma_t<T, 1, false, false, false, false, 0, L>(prm, c, caps, device, stream, written);
  } else {
    if (aligned)
      launch_mma_t<T, 2, true, false, false, false, 0, L>(prm, c, caps, device, stream, written);
    else
      launch_mma_t<T, 2, false, false, false, false, 0, L>(prm, c, caps, device, stream, written);
  }
}

// ------------------------------------------------------- fma launch shape --
// MX rows of x per pass (one weight load and decode serve MX rows); M > 8
// adds M tiles to the grid (adjacent, so re-reads of a weight row hit L2).
template <typename T, int MX, bool kAligned>
void launch_fma_t(nvfp4::GemvParams prm, cudaStream_t stream) {
  const int64_t m_tiles = (static_cast<int64_t>(prm.M) + MX - 1) / MX;
  constexpr int64_t kRowsPerBlock = nvfp4::kFmaWarps * nvfp4::fma_rows(MX);
  const int64_t blocks = (prm.N + kRowsPerBlock - 1) / kRowsPerBlock * m_tiles;
  TORCH_CHECK(blocks <= kIntMax, kGemvOp, ": grid of ", blocks, " blocks is too large");
  prm.m_tiles = static_cast<int>(m_tiles);
  prm.ks = 1;
  prm.ks_log2 = 0;
  nvfp4::nvfp4_gemv_fma_kernel<T, MX, kAligned>
      <<<static_cast<unsigned>(blocks), nvfp4::kFmaWarps * 32, 0, stream>>>(prm);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T, bool kAligned>
void launch_fma_a(const nvfp4::GemvParams& prm, cudaStream_t stream) {
  if (prm.M == 1)
    launch_fma_t<T, 1, kAligned>(prm, stream);
  else if (prm.M == 2)
    launch_fma_t<T, 2, kAligned>(prm, stream);
  else if (prm.M <= 4)
    launch_fma_t<T, 4, kAligned>(prm, stream);
  else
    launch_fma_t<T, 8, kAligned>(prm, stream);
}

template <typename T>
void launch_fma(const nvfp4::GemvParams& prm, bool aligned, cudaStream_t stream) {
  if (aligned)
    launch_fma_a<T, true>(prm, stream);
  else
    launch_fma_a<T, false>(prm, stream);
}

bool aligned_to(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// The GEMV kernels' operands (every other field zero or its default; the launches set their own).
nvfp4::GemvParams gemv_params(const at::Tensor& x, const void* w, const void* s,
                              const at::Tensor& global_scale, const std::optional<at::Tensor>& bias,
                              at::Tensor& y, int64_t M, int64_t N, int64_t K) {
  nvfp4::GemvParams prm{};
  prm.x = x.data_ptr();
  prm.w = static_cast<const uint8_t*>(w);
  prm.s = static_cast<const uint8_t*>(s);
  prm.gs = global_scale.data_ptr<float>();
  prm.bias = bias.has_value() ? bias->data_ptr() : nullptr;
  prm.y = y.data_ptr();
  prm.M = static_cast<int>(M);
  prm.N = static_cast<int>(N);
  prm.K = static_cast<int>(K);
  return prm;
}

// The direct GEMV's load depth (nvfp4_kernels.cuh): U pieces per lane per round, blocks per
// SM, next round issued before the decode, x loaded with the weight. TORCHQUANT_NVFP4_DIRECT
// forces one (1..15 below; the A/B of docs/nvfp4_gemv.md 29-30 and 33-34, up to the int8 GEMV's
// 96 KB per SM in flight: 6 x 1 KB per warp, 16 warps). Unforced, direct_build picks 7, 8, 10, 12,
// 13, 14 or 15.
using DirectKernel = void (*)(const nvfp4::GemvParams);
struct DirectBuild {
  DirectKernel fn;
  int tiles;   // m16 tiles (16 weight rows each) per block
  int nt = 1;  // token tiles of 8 x rows per pass
};
constexpr int kDirectBuilds = 15;
constexpr int kDirectSmallGrid = 7;  // x with the weight, U = 2, 2 blocks per SM: <= 2 x SMs blocks
constexpr int kDirectLargeGrid = 8;  // x with the weight, U = 2, 3 blocks per SM: larger grids
// direct_rule's bounds (its comment below has the measurements)
constexpr int64_t kDirectMaxM = 8;
constexpr int64_t kDirectPassMaxM = 2 * nvfp4::kDirectRows;  // one pass of two token tiles
constexpr int64_t kDirectMaxK = 4096;
constexpr int64_t kDirectLongMaxK = 16384;
constexpr int64_t kDirectWideMaxK = 8192;
constexpr int64_t kDirectLongWideMinM = 4;  // long rows on wide cards: M = 4..8
constexpr int64_t kDirectRows64WideMinM = 5;  // larger grids on wide cards: M = 5..8, one 64-row wave
DirectBuild direct_kernel(int variant) {
  switch (variant) {
    case 2: return {nvfp4::nvfp4_gemv_direct_kernel<3, 3>, 1};        // 72 KB per SM
    case 3: return {nvfp4::nvfp4_gemv_direct_kernel<4, 2>, 1};        // 64 KB
    case 4: return {nvfp4::nvfp4_gemv_direct_kernel<2, 2, true>, 1};  // 64 KB
    case 5: return {nvfp4::nvfp4_gemv_direct_kernel<6, 2>, 1};        // 96 KB
    case 6: return {nvfp4::nvfp4_gemv_direct_kernel<3, 2, true>, 1};  // 96 KB
    case kDirectSmallGrid: return {nvfp4::nvfp4_gemv_direct_kernel<2, 2, false, true>, 1};  // 32 KB, x
    case kDirectLargeGrid: return {nvfp4::nvfp4_gemv_direct_kernel<2, 3, false, true>, 1};  // 48 KB, x
    case 9: return {nvfp4::nvfp4_gemv_direct_kernel<3, 2, false, true>, 1};  // 48 KB + x, 2 blocks
    // (2026-12-06d) 32 / 64 weight rows per block, x loaded once for all of them
    case 10: return {nvfp4::nvfp4_gemv_direct_rows_kernel<2, 1, 3>, 2};  // 32 rows, U = 1: 48 KB
    case 11: return {nvfp4::nvfp4_gemv_direct_rows_kernel<2, 2, 2>, 2};  // 32 rows, U = 2: 64 KB
    case 12: return {nvfp4::nvfp4_gemv_direct_rows_kernel<4, 1, 2>, 4};  // 64 rows, U = 1: 64 KB
    // 16 x rows per pass (M = 9..16 with one read and decode of the weight)
    case 13: return {nvfp4::nvfp4_gemv_direct_rows_kernel<1, 1, 2, 2>, 1, 2};  // 16 rows, U = 1
    case 14: return {nvfp4::nvfp4_gemv_direct_rows_kernel<2, 1, 2, 2>, 2, 2};  // 32 rows, U = 1
    case 15: return {nvfp4::nvfp4_gemv_direct_rows_kernel<1, 2, 2, 2>, 1, 2};  // 16 rows, U = 2
    default: return {nvfp4::nvfp4_gemv_direct_kernel<nvfp4::kDirectU, 3>, 1};  // 48 KB
  }
}
// Layout 4's builds (the weight and scales tiled: nvfp4_tiles.h): those direct_build picks,
// reading the tiled order; {nullptr} for the others (forced A/B builds of layout 3 only).
DirectBuild direct_kernel_tiled(int variant) {
  switch (variant) {
    case kDirectSmallGrid: return {nvfp4::nvfp4_gemv_direct_kernel<2, 2, false, true, true>, 1};
    case kDirectLargeGrid: return {nvfp4::nvfp4_gemv_direct_kernel<2, 3, false, true, true>, 1};
    case 10: return {nvfp4::nvfp4_gemv_direct_rows_kernel<2, 1, 3, 1, true>, 2};
    case 12: return {nvfp4::nvfp4_gemv_direct_rows_kernel<4, 1, 2, 1, true>, 4};
    case 13: return {nvfp4::nvfp4_gemv_direct_rows_kernel<1, 1, 2, 2, true>, 1, 2};
    case 14: return {nvfp4::nvfp4_gemv_direct_rows_kernel<2, 1, 2, 2, true>, 2, 2};
    case 15: return {nvfp4::nvfp4_gemv_direct_rows_kernel<1, 2, 2, 2, true>, 1, 2};
    default: return {nullptr, 0};
  }
}
// Which build runs a grid of `blocks` blocks. Builds 7 and 8 load each piece's x with its weight
// (docs/nvfp4_gemv.md 33: with the weight in L2 the x loads, one before each word's mma, held the
// kernel's SM side to ~3.3 TB/s on an H100, 4.3 without them). A grid that fits 2 blocks per SM
// takes build 7 (2 blocks per SM); a larger one build 8 (3 blocks per SM), each the faster of the
// two on every grid of its side below. H100, path direct, two rounds, us, M = 1 / 2 / 4 / 8
// (results/h100/2026-12-06c call 7), the build picked before (1 above 2 x SMs blocks, else 3, or
// 4 where K > 4096) / 7 / 8:
//   4096x4096 (256 blocks)   build 3 5.6 / 5.8 / 6.1 / 6.5,           7: 5.2 / 5.3 / 5.6 / 6.2
//   4096x14336 (256)         build 4 14.8 / 15.2-15.3 / 15.7 / 17.2-17.3, 7: 13.6-13.7 / 13.8 /
//                              14.2 / 17.1-17.2 (U = 3, build 9: level with 7)
//   6144x4096 (384)          build 1 7.0 / 7.4-7.5 / 8.2 / 8.9,       8: 6.6-6.7 / 6.7 / 7.2 / 8.1
//   14336x4096 (896)         build 1 14.5-14.6 / 15.4-15.5 / 16.2-16.3 / 17.9-18.1, 8: 13.8-13.9 /
//                              14.1 / 15.0 / 17.7-17.8
//   28672x4096 (1792)        build 1 24.9-25.0 / 26.2-26.3 / 27.5-27.6 / 30.7, 8: 24.3-24.4 /
//                              24.5-24.6 / 25.6-25.7 / 31.3
//   28672x8192 (1792)        build 1 46.9 / 48.5-49.0 / 52.0-53.1 / 58.9-59.1, 8: 45.3-45.5 /
//                              46.1-46.4 / 47.4-48.4 / 56.1-56.4 (92 % of the 3.165 TB/s ceiling)
// The earlier A/Bs (12-05j, 12-06b call 7: build 3 on 256 blocks, 4 on the long rows, 1 above)
// are in those runs' folders.
// Builds 10-12 (docs/nvfp4_gemv.md 34) load x once per 32 or 64 weight rows: at M = 8 a block
// of 16 rows moves twice its weight bytes in x through L1 / L2. On grids of more than 3 x SMs
// blocks of 16 rows they win from M = 4 (to 8, one token tile; M > 8 not measured): build 12 (64
// rows) where its grid is at most 4 x SMs blocks, build 10 (32 rows, 3 blocks per SM) above.
// H100, path direct, two rounds, us, M = 2 / 4 / 6 / 8 (results/h100/2026-12-06d call 2; the
// 64-row grid in x SMs):
//   14336x4096 (1.7)    8: 14.1 / 15.1-15.2 / 16.2 / 17.5-17.6
//                      10: 14.4-14.6 / 15.2-15.3 / 15.6-15.7 / 16.2-16.3
//                      12: 14.0-14.1 / 14.3 / 14.4 / 14.5
//   28672x4096 (3.4)    8: 24.6 / 25.8-26.0 / 28.2-28.4 / 30.9-31.0
//                      10: 24.5-24.7 / 25.1-25.2 / 25.5-25.7 / 26.3-26.5
//                      12: 25.4 / 25.5-25.9 / 25.9-26.0 / 26.3-26.5
//   28672x8192 (3.4)    8: 46.0 / 47.8-47.9 / 51.4-51.6 / 57.4-57.6
//                      10: 48.9-49.3 / 50.2-50.6 / 52.0-53.1 / 53.2-54.0
//                      12: 47.4-47.5 / 48.0-48.2 / 49.0-49.3 / 49.6-49.9
//   128256x4096 (15.2)  8: 101.3-102.3 / 106.5-107.6 / 117.2-118.0 / 129.2-132.6
//                      10: 101.5-102.0 / 103.2-103.8 / 105.2-105.3 / 107.1-108.4
//                      12: 104.4-104.9 / 106.1-106.5 / 108.3-108.8 / 110.0-110.7
// (build 11, 32 rows at U = 2, lost to 10 or 12 on each; at M = 1 build 8 stays level or faster:
// 28672x8192 45.5-45.7 / 47.7-48.1 / 47.3-47.5.) Between 3.4 and 15.2 x SMs the boundary is not
// measured. On the one-wave grids (<= 3 x SMs of 16 rows) the row builds lost everywhere (4096x4096
// M = 8: 7.5-7.6 / 8.7 / 10.0-10.4). The H200 has the same SMs and clocks, but whether these builds
// win there too is not measured (its A/B: results/h200/2026-12-06d/call11.sh).
constexpr int64_t kDirectRowsMinM = 4;
// Layout 4 (tiled operands) takes the row builds from M = 5: at M = 4 build 8 beat them there
// (H100, path direct, forced builds, us, results/h100/2026-12-07g call 3, build 8 / the row build
// direct_build picks: 28672x8192 47.8 / 49.7 (12), 14336x4096 14.3 / 14.9 (12), 128256x4096
// 100.9 / 102.4 (10)); at M = 8 the picks stand (50.7 / 50.7, 15.5 / 15.4, 110.2 / 105.0).
constexpr int64_t kDirectRowsMinMTiled = 5;
constexpr int kDirectRows32 = 10;
constexpr int kDirectRows64 = 12;
constexpr int64_t kDirectRows64MaxGrid = 4;  // x SMs blocks of 64 rows
// M = 9..16 (builds 13-15: both token tiles in one pass, each word decoded once) take build 15 (16
// rows, U = 2) on grids of <= 2 x SMs blocks of 16 rows, else build 13 (16 rows, U = 1) up to M =
// 12 on grids of <= 3 x SMs and build 14 (32 rows) above: the fastest of the three on each layer
// measured (H100, path direct, two rounds, us, M = 9 / 12 / 16, results/h100/2026-12-06d call 9,
// builds 7 (a pass per token tile) / 13 / 14 / 15):
//   4096x4096 (256 blocks)   9.4-9.6 / 10.1 / 10.9-11.0   8.0-8.2 / 9.0 / 10.7   8.8-9.0 / 9.2 / 9.9
//                            15: 6.9-7.0 / 7.4-7.5 / 8.7
//   6144x4096 (384)          13.4-13.5 / 14.0-14.2 / 15.8   13: 8.3-8.4 / 9.2 / 10.9
//                            14: 9.3 / 9.8 / 10.4   15: 11.9-12.1 / 13.1 / 15.3
//   4096x14336 (256)         27.4-27.5 / 28.0-28.1 / 30.5   15: 18.1-18.4 / 19.9-20.0 / 23.7
//   14336x4096 (896)         29.1-29.2 / 30.0-30.1 / 33.1-33.2   14: 17.7-17.8 / 18.6-18.7 / 20.2
//   28672x4096, 28672x8192, 128256x4096: 14 fastest of the four, slower than the wgmma GEMV
//     (28672x8192 59.4-59.7 / 63.8 / 68.8-69.0 against 53.5-55.0).
constexpr int kDirectPassBuild16 = 15;  // <= 2 x SMs blocks
constexpr int kDirectPassBuild16U1 = 13;  // <= 3 x SMs blocks, M <= 12
constexpr int kDirectPassBuild32 = 14;
constexpr int64_t kDirectPassU1MaxM = 12;
int direct_build(const DeviceCaps& caps, int64_t M, int64_t N, bool tiled) {
  const int v = env_int("TORCHQUANT_NVFP4_DIRECT");
  if (v >= 1 && v <= kDirectBuilds) return v;
  const int64_t sms = caps.sm_count;
  if (M > nvfp4::kDirectRows && M <= kDirectPassMaxM) {  // one pass of two token tiles
    const int64_t b16 = (N + 15) / 16;
    if (b16 <= 2 * sms) return kDirectPassBuild16;
    return b16 <= 3 * sms && M <= kDirectPassU1MaxM ? kDirectPassBuild16U1 : kDirectPassBuild32;
  }
  const int64_t blocks = (N + 15) / 16 * ((M + nvfp4::kDirectRows - 1) / nvfp4::kDirectRows);
  if (blocks > 3 * sms && M >= (tiled ? kDirectRowsMinMTiled : kDirectRowsMinM) &&
      M <= nvfp4::kDirectRows)  // one token tile
    return (N + 63) / 64 <= kDirectRows64MaxGrid * sms ? kDirectRows64 : kDirectRows32;
  return blocks > 2 * sms ? kDirectLargeGrid : kDirectSmallGrid;
}

// Layout 3 under path "auto": the direct GEMV where it beat layout 1's GEMVs on the cards
// measured (and so layout 3's own mma / wgmma GEMVs, the same kernels with x unpermuted), else
// the rule of choose_nvfp4_gemv_kernel. bf16, us, layout 1 auto / direct (U = 2, 3 blocks per SM):
//   H100 (results/h100/2026-12-05h call 8): faster at M = 1..4 on every layer but 4096x14336
//     (28672x8192 M = 1 54.3 / 48.6, M = 4 55.2 / 52.3; 128256x4096 111.6 / 103.3, 115.3 /
//     109.7; 6144x4096 8.9 / 7.1 .. 9.3 / 7.9), and at M = 8 on the 4096-feature layers
//     (4096x4096 9.9 / 7.9, 6144x4096 10.0 / 8.9, 14336x4096 20.6 / 18.0) but not the large ones
//     (28672x8192 54.6 / 59.2, 128256x4096 112.9 / 123); 2026-12-05j call 1 again: 28672x8192
//     M = 1 51.4-52.7 (mma GEMV, either layout) / 47.2, 128256x4096 107 / 102.5;
//   H200 (results/h200/2026-12-05i call 1): faster only where the grid is one wave of 3 blocks
//     per SM, 4096x4096 (256 blocks) M = 1 / 4 / 8 6.3 / 6.0, 6.9 / 6.8, 9.2 / 7.4 and 6144x4096
//     (384) 8.4 / 6.4, 8.9 / 7.3, 9.6 / 8.2; slower on 14336x4096 (896 blocks) 13.2 / 13.9 at M = 1,
//     28672x8192 40.5 / 42.5, 128256x4096 82 / 97-101 and on the long rows of 4096x14336 (256
//     blocks) 12.7 / 15.8.
//   H100 (results/h100/2026-12-06b call 7, two rounds, us): the long rows of 4096x14336 on build 4
//     (direct_build) 14.7-14.9 / 15.6-15.7 / 17.1 at M = 1 / 4 / 8 against the ring / wgmma GEMVs'
//     15.8-16.1 / 17.9-18.3 / 19.2-19.5 (2026-12-06 call 3); the larger grids at M = 1..4, direct /
//     the ring kernels of layout 3: 28672x4096 (1792 blocks) 25.2 / 27.8-27.9, 26.3-26.5 /
//     27.9-28.1, 27.4 / 28.1-28.2, 27.6 / 29.2; 28672x8192 (1792) 47.1 / 51.5 .. 51.0 / 52.3-52.8;
//     but 14336x4096 (896 blocks, 2.3 waves of 3 blocks per SM) 14.8-14.9 / 15.0-15.1 at M = 1 and
//     15.4-15.6 / 15.1-15.2, 15.9 / 15.2-15.3, 16.0-16.1 / 15.5 at M = 2 / 3 / 4.
// What separates the cards is DRAM bytes per SM clock (the H200 has 1.4x the H100's over the same
// 132 SMs at the same clock: fewer issue slots to decode each byte in, where the direct GEMV
// spends more of them than the ring kernels' mma decode). So:
//   * grids of SMs .. 3 x SMs blocks of 16 rows: M <= 8, K <= 4096 (both cards; measured at 1.9
//     and 2.9 blocks per SM; fewer blocks than SMs unmeasured);
//   * on cards of at most 15.0 DRAM bytes per SM clock (the H100 SXM's 12.8; the H200's ~18.5
//     keeps the ring kernels), also: long rows (4096 < K <= 16384) on grids of SMs .. 2 x SMs
//     blocks at M <= 8 (measured at K = 14336 on build 4; build 7 since; the H200 at M = 4..8 since
//     2026-12-06e, below); larger grids at M <= 8 with K <= 8192 (until build 8, M = 2..4 only
//     from 10 x SMs blocks: build 1 lost at 6.8 x SMs; until builds 10 / 12, M <= 4);
//   * M = 9..16 on the one-wave grids with K <= 4096 (the H100 from 2026-12-06d, the H200 from
//     2026-12-06e; measurements below).
//   H100, builds 7 / 8 (results/h100/2026-12-06c call 8, two rounds, us, M = 1 / 2 / 4 / 8, direct /
//     the ring and wgmma GEMVs): 14336x4096 (896 blocks) 13.8 / 15.0, 14.1-14.2 / 15.1, 15.0-15.1 /
//     15.5, 17.8 / 19.0-19.4; 28672x4096 24.2-24.4 / 27.8-27.9 .. 25.5-25.7 / 29.1-29.3, but M = 8
//     31.3 / 30.5-30.8; 28672x8192 45.3-45.7 / 51.4-51.6 .. 47.4-47.7 / 52.5-52.8, M = 8 56.4-57.0 /
//     53.0-53.3; 128256x4096 100.4-101.3 / 107.5-107.6 .. 104.0-105.1 / 111.4-111.5, M = 8
//     126.8-127.0 / 111.7-112.4. So M <= 4 on every larger grid; M = 8 stayed with the wgmma GEMV
//     (one grid of the four won there, 14336x4096; M = 5..7 not measured).
//   H100, builds 10 / 12 at M = 4..8 (direct_build; results/h100/2026-12-06d call 2, same process,
//     two rounds, us): path auto (the wgmma GEMV at M >= 5) at M = 5 / 6 / 8 against direct_build's
//     pick at M = 6 / 8: 14336x4096 19.0-19.7 / 18.7-18.8 / 19.3 against 12: 14.4 / 14.5;
//     28672x4096 29.9-30.1 / 29.8-29.9 / 30.1-30.3 against 12: 25.9-26.0 / 26.3-26.5; 28672x8192
//     52.3-52.5 / 52.6-52.9 / 53.9-54.0 against 12: 49.0-49.3 / 49.6-49.9; 128256x4096
//     110.0-111.5 / 111.0-112.6 / 112.8 against 10: 105.2-105.3 / 107.1-108.4. So on those cards
//     every larger grid with K <= 8192 takes the direct GEMV at M <= 8 (M = 5 and 7: not timed on
//     the direct builds; they lie between M = 4 and 6 / 6 and 8 on every grid above).
//   H100, M = 9..16 (builds 13-15, one pass of two token tiles; results/h100/2026-12-06d call 9,
//     two rounds, us, M = 9 / 12 / 16, direct_build's pick / path auto, the wgmma GEMV): 4096x4096
//     6.9-7.0 / 7.4-7.5 / 8.7 against 9.8 / 9.9-10.0 / 10.1; 6144x4096 8.3-8.4 / 9.2 / 10.4 against
//     11.7 / 11.8 / 11.8-11.9; but 4096x14336 18.1-18.4 / 19.9-20.0 / 23.7 against 19.1-19.2 /
//     19.4 / 19.7-19.9 and 28672x4096 (1792 blocks) 31.5-31.7 / 34.1 / 37.9-38.2 against 30.7-30.8 /
//     30.5-30.6 / 31.0-31.1 (14336x4096 won at M = 9 and 12, 17.7-18.7 against 20.2-20.5, and tied
//     at 16: not taken, one larger grid of four). So on those cards also M = 9..16 on the one-wave
//     grids with K <= 4096.
//   H200 (results/h200/2026-12-06e call 4, run by ../h100/2026-12-06e/call4.sh and 12-06d's H200
//     driver call11.sh: the rotation past 8x L2,
//     same process, two rounds, us, path auto / the ring and wgmma GEMVs / the direct GEMV at every
//     M): M = 16 on the one-wave grids 4096x4096 9.3 / 9.3 / 9.1, 6144x4096 11.4 / 11.4 / 10.7 (and
//     builds 15 / 13 at M = 9: 7.1 / 8.7, the wgmma GEMV ~9.3 / 11.4 at any M there), but 4096x14336
//     16.9 / 17.0 / 24.2 and the larger grids slower (14336x4096 .. 128256x4096: 16.0-16.1 ..
//     93.8-94.2 against 20.5-20.7 .. 160.0-160.7); the long rows of 4096x14336 (build
//     7) at M = 1 / 4 / 8 12.0-12.1 / 12.0-12.1 / 12.9, 14.5 / 14.4 / 13.3-13.4, 16.4 / 16.4-16.5 /
//     15.7; the larger grids mixed: M = 4 direct faster on 28672x4096 (23.7 / 24.9-25.1), 28672x8192
//     (42.9-43.3 / 43.7-43.8), 128256x4096 (88.5-90.7 / 91.8-93.4) but not 14336x4096 (13.4 / 12.8-
//     12.9); M = 8 slower on 28672x8192 (45.3-46.4 / 44.6-45.8) and 128256x4096 (100.6-104.4 /
//     92.6-94.0); M = 1 slower everywhere (28672x8192 40.4-40.5 / 38.7-38.9). So on every card M =
//     9..16 on the one-wave grids with K <= 4096, and on wide cards the long rows at M = 4..8 (M = 2
//     and 3 not timed: the ring kernel won by 0.8 at M = 1, the direct GEMV by 1.1 at M = 4); the
//     wide cards' larger grids keep the ring / wgmma GEMVs, but for one class (2026-12-06j): at
//     M = 5..8 (where auto's alternative is the wgmma GEMV, not the ring kernel) with K <= 4096 on
//     grids of SMs + 1 .. 2 x SMs blocks of 64 rows (direct_build's build 12, two blocks per SM at
//     most): 14336x4096 (224 such blocks) M = 6 / 8 13.6 / 13.9 against the wgmma GEMV's 15.4-15.6
//     at M = 8 in the same process; the grids past 2 x SMs were level (28672x4096, 448 blocks:
//     24.8-24.9 / 24.9-25.1) or slower (28672x8192, 128256x4096), and the grids of one 64-row wave
//     keep the x-resident mma kernel of the M = 5..8 rule (8192x4096 9.7 against the wgmma
//     GEMV's 11.9, results/h200/2026-12-06i).
// TORCHQUANT_NVFP4_DIRECT_MAX_M=m: M <= m with no shape condition (-1: never), for the A/B.
bool direct_rule(const DeviceCaps& caps, int64_t M, int64_t N, int64_t K) {
  if (caps.cc() < 80 || K % 128 != 0) return false;
  if (const int knob = env_int("TORCHQUANT_NVFP4_DIRECT_MAX_M"); knob != 0) return M <= knob;
  const int64_t blocks = (N + 15) / 16, sms = caps.sm_count;
  if (blocks < sms) return false;
  const bool narrow = narrow_dram(caps);
  if (M > kDirectMaxM)  // M = 9..16, one pass of builds 13 / 15 (direct_build), both cards
    return M <= kDirectPassMaxM && blocks <= 3 * sms && K <= kDirectMaxK;
  if (blocks <= 3 * sms) {
    if (K <= kDirectMaxK) return M <= kDirectMaxM;
    return blocks <= 2 * sms && K <= kDirectLongMaxK && M <= kDirectMaxM && (narrow || M >= kDirectLongWideMinM);
  }
  if (narrow) return K <= kDirectWideMaxK && M <= kDirectMaxM;
  const int64_t blocks64 = (N + 63) / 64;
  return K <= kDirectMaxK && M >= kDirectRows64WideMinM && M <= kDirectMaxM && blocks64 > sms &&
         blocks64 <= 2 * sms;
}

// The direct GEMV on a layout-3 weight (nvfp4_kernels.cuh, docs/nvfp4_gemv.md 27-34). Blocks of 16
// (32, 64: builds 10-12, 14) weight rows x token tiles of 8 (16: builds 13-15; the grid's y, looped
// past 65535 tiles); misaligned views are copied (x and w to 16 bytes, the scales to 2).
at::Tensor run_direct(const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& w_scale,
                      const at::Tensor& global_scale, const std::optional<at::Tensor>& bias,
                      int64_t M, int64_t N, int64_t K, int device, const DeviceCaps& caps,
                      bool static_weight, bool tiled = false) {
  const at::Tensor x = aligned_to(x_in.data_ptr(), 16) ? x_in : x_in.clone();
  const at::Tensor w = aligned_to(w_in.data_ptr(), 16) ? w_in : w_in.clone();
  const at::Tensor sc = aligned_to(w_scale.data_ptr(), 2) ? w_scale : w_scale.clone();
  at::Tensor y = at::empty({M, N}, x.options());
  const nvfp4::GemvParams prm = gemv_params(x, w.data_ptr(), sc.data_ptr(), global_scale, bias, y, M, N, K);
  const int variant = direct_build(caps, M, N, tiled);
  const DirectBuild build = tiled ? direct_kernel_tiled(variant) : direct_kernel(variant);
  TORCH_CHECK(build.fn != nullptr, kGemvOp, ": TORCHQUANT_NVFP4_DIRECT=", variant,
              " has no layout-4 (tiled) build; those are 7, 8, 10 and 12-15");
  const int64_t rows = 16 * int64_t{build.tiles};
  const int64_t token_tiles = (M + nvfp4::kDirectRows * build.nt - 1) / (nvfp4::kDirectRows * build.nt);
  const dim3 grid(static_cast<unsigned>((N + rows - 1) / rows),
                  static_cast<unsigned>(std::min<int64_t>(token_tiles, 65535)));
  // The weight copied just above was written by the kernel just before (common/pdl.h); the
  // kernel waits for its predecessor before its first load in every case.
  const PdlMode pdl = pdl_mode(device, PdlKernel::kNvfp4Mma,
                               weight_written(static_weight, w.data_ptr() != w_in.data_ptr()));
  launch_kernel(build.fn, grid,
                dim3(nvfp4::kDirectThreads), 0,
                c10::cuda::getCurrentCUDAStream(), pdl.on, prm);
  return y;
}

// Layout 4 on path "mma": the ring kernel's tiled form (nvfp4_gemv_mma_kernel with kLayout 4: the
// stages layout 3's operands give, copied from the tiled places; docs/nvfp4_gemv.md 41), which
// exists for one n-tile of <= 8 x rows per M tile with wide loads, x-resident or staged, with or
// without the K split across blocks (no group sync: the block-wide barrier, the same bits).
template <typename T>
void launch_mma_tiled(const nvfp4::GemvParams& prm, const MmaConfig& c, const DeviceCaps& caps, int device,
                      cudaStream_t stream, WeightWritten written) {
  constexpr int L = nvfp4::kLayoutTiled;
  if (c.xres && c.splits > 1)
    launch_mma_t<T, 1, true, true, false, true, 0, L>(prm, c, caps, device, stream, written);
  else if (c.xres)
    launch_mma_t<T, 1, true, false, false, true, 0, L>(prm, c, caps, device, stream, written);
  else if (c.splits > 1)
    launch_mma_t<T, 1, true, true, false, false, 0, L>(prm, c, caps, device, stream, written);
  else
    launch_mma_t<T, 1, true, false, false, false, 0, L>(prm, c, caps, device, stream, written);
}

at::Tensor run_mma_tiled(const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& s_in,
                         const at::Tensor& global_scale, const std::optional<at::Tensor>& bias, int64_t M,
                         int64_t N, int64_t K, int device, const DeviceCaps& caps, bool static_weight) {
  MmaConfig c = mma_config(caps, M, N, K);
  c.group_sync = false;  // the block-wide staging barrier instead: the same staged values and bits
  TORCH_CHECK(c.nt == 1, kGemvOp,
              ": layout 4 on path 'mma' runs the ring kernel, whose M tiles hold at most 8 x rows; this "
              "call's launch shape has tiles of ", c.tile_m, " (M = ", M,
              "). Use path 'direct' or 'auto', which read layout 4 at every M");
  // 16-byte copies of the weight and 4-byte copies of the scales: aligned bases (odd views copied)
  const at::Tensor x = aligned_to(x_in.data_ptr(), 16) ? x_in : x_in.clone();
  const at::Tensor w = aligned_to(w_in.data_ptr(), 16) ? w_in : w_in.clone();
  const at::Tensor sc = aligned_to(s_in.data_ptr(), 4) ? s_in : s_in.clone();
  at::Tensor y = at::empty({M, N}, x.options());
  nvfp4::GemvParams prm = gemv_params(x, w.data_ptr(), sc.data_ptr(), global_scale, bias, y, M, N, K);
  const WeightWritten written =
      weight_written(static_weight, w.data_ptr() != w_in.data_ptr() || sc.data_ptr() != s_in.data_ptr());
  launch_mma_tiled<__nv_bfloat16>(prm, c, caps, device, c10::cuda::getCurrentCUDAStream(), written);
  return y;
}

at::Tensor nvfp4_gemv_cuda(const at::Tensor& x_in, const at::Tensor& w_in,
                           const at::Tensor& w_scale, const at::Tensor& global_scale,
                           const std::optional<at::Tensor>& bias, c10::string_view kernel_sv,
                           int64_t layout, bool static_weight) {
  const GemvShape shape = validate_nvfp4_gemv(x_in, w_in, w_scale, global_scale, bias);
  check_nvfp4_layout(layout, x_in.scalar_type(), kGemvOp, /*tiled_ok=*/true);
  const std::string kernel(kernel_sv.data(), kernel_sv.size());
  check_kernel_name(kernel, {"fma", "mma", "tile", "wgmma", "direct"}, kGemvOp, "CUDA");
  TORCH_CHECK(x_in.is_cuda(), kGemvOp, ": x must be a CUDA tensor, got ", x_in.device());
  const int64_t M = shape.M, N = shape.N, K = shape.K;
  // K below 2^26 as fp8_block_gemv's and the wgmma path's (a 64M-element row; the mma GEMV's
  // chunk count (K + 2047) / 2048 is an int)
  TORCH_CHECK(M < kMaxDim && N < kMaxDim, kGemvOp, ": M and N must each be below 2^31 - 256, got M = ", M,
              ", N = ", N);
  TORCH_CHECK(K < (int64_t{1} << 26), kGemvOp, ": K = ", K, " must be below 2^26");

  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const int device = x_in.get_device();
  const DeviceCaps& caps = device_caps(device);
  if (layout == nvfp4::kLayoutTiled) {  // read by the direct GEMV (auto, every M) and the ring kernel
    TORCH_CHECK(kernel == "auto" || kernel == "direct" || kernel == "mma", kGemvOp, ": layout 4 (tiled) "
                "runs on paths 'direct' and 'mma' only (auto takes 'direct'), got path '", kernel,
                "'; nvfp4_relayout(w_packed, 4, inverse=True) and nvfp4_relayout_scale(w_scale, 4, "
                "inverse=True) give the layout-0 operands the other paths read");
    TORCH_CHECK(caps.cc() >= 80, kGemvOp, ": layout 4 runs on the mma kernels, which need mma.sync "
                "m16n8k16 bf16 (compute capability 8.0+); this device is sm_", caps.cc(),
                ". Use layout 0 (nvfp4_relayout(w_packed, 4, inverse=True), nvfp4_relayout_scale(w_scale, "
                "4, inverse=True))");
    check_nvfp4_tiled_shape(N, K, kGemvOp);
    if (kernel == "mma")
      return run_mma_tiled(x_in, w_in, w_scale, global_scale, bias, M, N, K, device, caps, static_weight);
    return run_direct(x_in, w_in, w_scale, global_scale, bias, M, N, K, device, caps, static_weight,
                      /*tiled=*/true);
  }
  if (kernel == "direct") {
    TORCH_CHECK(layout == nvfp4::kLayoutBf16Adj, kGemvOp, ": path 'direct' reads layout 3 "
                "(nvfp4_relayout(w_packed, 3)) or 4, got layout ", layout);
    TORCH_CHECK(caps.cc() >= 80, kGemvOp, ": path 'direct' needs mma.sync m16n8k16 bf16 (compute "
                "capability 8.0+); this device is sm_", caps.cc(),
                ". Use layout 0 (nvfp4_relayout(w_packed, 3, inverse=True))");
    TORCH_CHECK(K % 128 == 0, kGemvOp, ": path 'direct' needs K % 128 == 0 (whole 64-byte "
                "pieces of every row), got K = ", K, "; path 'mma' reads layout 3 at K % 16 == 0");
    return run_direct(x_in, w_in, w_scale, global_scale, bias, M, N, K, device, caps, static_weight);
  }
  if (layout == nvfp4::kLayoutBf16Adj && kernel == "auto" && direct_rule(caps, M, N, K))
    return run_direct(x_in, w_in, w_scale, global_scale, bias, M, N, K, device, caps, static_weight);
  if (layout != nvfp4::kLayoutStd) {
    // Layouts 1, 2 and 3 (nvfp4_layout.h) are read by the mma kernel and the Hopper wgmma GEMV
    // (layout 3 by the direct kernel as well, above).
    TORCH_CHECK(kernel == "auto" || kernel == "mma" || kernel == "wgmma", kGemvOp, ": layout ",
                layout, " (a decode order) runs on paths 'mma' and 'wgmma', got path '", kernel,
                "'; nvfp4_relayout(w_packed, ", layout, ", inverse=True) gives the layout-0 weight "
                "the other paths read");
    TORCH_CHECK(caps.cc() >= 80, kGemvOp, ": layout ", layout,
                " needs the mma kernel (compute capability 8.0+); this device is sm_", caps.cc(),
                ". Use layout 0 (nvfp4_relayout(w_packed, ", layout, ", inverse=True))");
  }

  // The Hopper decode GEMV (TMA + warpgroup MMA, dq_gemm_sm90a_kernels.cuh) lives in
  // torchquant._C_sm90a, built when 9.0 is in the arch list; it checks the capability and
  // K % 256 itself.
  const auto wgmma_op = find_sm90a_op("torchquant::_nvfp4_gemv_sm90a");
  std::optional<MmaConfig> mma_cfg;  // the mma launch shape, if the rule worked it out
  Nvfp4GemvKernel path =
      choose_nvfp4_gemv_kernel(caps, M, N, K, wgmma_op.has_value(), layout, mma_cfg);
  if (kernel == "fma") path = Nvfp4GemvKernel::kFma;
  if (kernel == "mma") {
    TORCH_CHECK(caps.cc() >= 80, kGemvOp,
                ": kernel 'mma' needs mma.sync.m16n8k16 with fp16/bf16 inputs (compute "
                "capability 8.0+); this device is sm_",
                caps.cc(), ". Use kernel='fma' or 'auto'");
    path = Nvfp4GemvKernel::kMma;
  }
  if (kernel == "tile") {
    TORCH_CHECK(caps.cc() >= 80, kGemvOp,
                ": kernel 'tile' needs mma.sync.m16n8k16, ldmatrix and cp.async (compute "
                "capability 8.0+); this device is sm_",
                caps.cc(), ". Use kernel='fma' or 'auto'");
    TORCH_CHECK(K % 128 == 0, kGemvOp, ": kernel 'tile' needs K % 128 == 0 (8 whole scale "
                "blocks per k tile), got K = ", K, "; use kernel 'mma' or 'auto'");
    path = Nvfp4GemvKernel::kTile;
  }
  if (kernel == "wgmma") {
    TORCH_CHECK(wgmma_op.has_value(), kGemvOp,
                ": path 'wgmma' needs torchquant._C_sm90a (a build with 9.0 in "
                "TORCH_CUDA_ARCH_LIST) and a compute capability 9.0 GPU; this device is sm_",
                caps.cc());
    path = Nvfp4GemvKernel::kWgmma;
  }
  if (path == Nvfp4GemvKernel::kWgmma) {
    return wgmma_op
        ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const at::Tensor&, const c10::optional<at::Tensor>&, int64_t, bool)>()
        .call(x_in, w_in, w_scale, global_scale, bias, layout, static_weight);
  }
  if (path == Nvfp4GemvKernel::kTile) {
    // 16-byte copies of the codes and 8-byte copies of the scales need those
    // bases aligned (K % 128 == 0 then aligns every row); odd views are copied.
    const at::Tensor x = aligned_to(x_in.data_ptr(), 16) ? x_in : x_in.clone();
    const at::Tensor w = aligned_to(w_in.data_ptr(), 16) ? w_in : w_in.clone();
    const at::Tensor sc = aligned_to(w_scale.data_ptr(), 8) ? w_scale : w_scale.clone();
    at::Tensor y = at::empty({M, N}, x.options());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    // The tiled GEMM (common/dq_tile.cuh, launch in dq_tile_launch.h): 64 x 64
    // output tiles, K split over blocks when the tiles leave SMs idle, the
    // splits' fp32 tiles summed in order before 2^7 * global and the bias.
    dqt::Args a{};
    a.x = x.data_ptr();
    a.w = static_cast<const uint8_t*>(w.data_ptr());
    a.wsc = static_cast<const uint8_t*>(sc.data_ptr());
    a.global = global_scale.data_ptr<float>();
    a.gfactor = 128.f;  // the decode's e2m1 * bs * 2^-7
    a.bias = bias.has_value() ? bias->data_ptr() : nullptr;
    a.y = y.data_ptr();
    a.M = static_cast<int>(M);
    a.N = static_cast<int>(N);
    a.K = static_cast<int>(K);
    if (x.scalar_type() == at::kHalf)
      dqt::launch_tile<__half, nvfp4::TileFormat<__half, dqt::SmallCfg>>(a, caps.sm_count, stream, x, kGemvOp);
    else
      dqt::launch_tile<__nv_bfloat16, nvfp4::TileFormat<__nv_bfloat16, dqt::SmallCfg>>(a, caps.sm_count,
                                                                                        stream, x, kGemvOp);
    return y;
  }

  // x: 16-byte loads of 8 elements (K % 16 == 0 aligns every row given an
  // aligned base). w: 8-byte granules need an 8-byte aligned base.
  const at::Tensor x = aligned_to(x_in.data_ptr(), 16) ? x_in : x_in.clone();
  const at::Tensor w = aligned_to(w_in.data_ptr(), 8) ? w_in : w_in.clone();
  const void* wp = w.data_ptr();
  const void* sp = w_scale.data_ptr();
  // Wide fma variant: 16 B of weight + 2 B of scales per lane and row (32
  // codes); needs K % 32 == 0 and the bases aligned to the access sizes (the
  // mma kernel's rule is in mma_wide_ok).
  const bool fma_aligned = K % 32 == 0 && aligned_to(wp, 16) && aligned_to(sp, 2);

  at::Tensor y = at::empty({M, N}, x.options());
  nvfp4::GemvParams prm = gemv_params(x, wp, sp, global_scale, bias, y, M, N, K);
  prm.m_tiles = 1;
  prm.tile_m = 8;
  prm.ks = 1;
  prm.ks_log2 = 0;
  // For the mma GEMV's early loads (common/pdl.h): a weight copied just above was written by the
  // kernel just before.
  const WeightWritten written = weight_written(static_weight, wp != w_in.data_ptr());

  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool half = x.scalar_type() == at::kHalf;
  if (path == Nvfp4GemvKernel::kMma) {
    const MmaConfig c = mma_cfg ? *mma_cfg : mma_config(caps, M, N, K);
    const bool ran = nvfp4::for_dtype_layout(half, layout, [&](auto elem, auto layout_c) {
      launch_mma<decltype(elem), decltype(layout_c)::value>(prm, c, caps, device, stream, written);
    });
    TORCH_CHECK(ran, kGemvOp, ": no mma kernel reads layout ", layout, " with ", x.scalar_type(), " x");
  } else {
    if (half)
      launch_fma<__half>(prm, fma_aligned, stream);
    else
      launch_fma<__nv_bfloat16>(prm, fma_aligned, stream);
  }
  return y;
}

// ------------------------------------------------------------ quantize ----
std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_nvfp4_cuda(const at::Tensor& w) {
  const char* op = "quantize_nvfp4";
  validate_weight_2d(w, op, 16);  // the CPU op's sequence: shape, then finiteness
  const c10::cuda::CUDAGuard device_guard(w.device());
  check_finite(w, op, "w");  // offline op: the host sync is acceptable
  const int64_t N = w.size(0), K = w.size(1);
  at::Tensor packed = at::empty({N, K / 2}, w.options().dtype(at::kByte));
  at::Tensor scale = at::empty({N, K / 16}, w.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor global = at::empty({}, w.options().dtype(at::kFloat));
  at::Tensor amax_bits = at::zeros({1}, w.options().dtype(at::kInt));
  const DeviceCaps& caps = device_caps(w.get_device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();

  const int64_t numel = N * K, nblocks = N * (K / 16);
  const int64_t t = nvfp4::kQuantThreads;
  const unsigned amax_grid = static_cast<unsigned>(
      std::min<int64_t>((numel + t - 1) / t, static_cast<int64_t>(std::max(1, caps.sm_count)) * 8));
  const unsigned quant_grid =
      static_cast<unsigned>(std::min<int64_t>((nblocks + t - 1) / t, int64_t{1} << 20));
  auto* amax = reinterpret_cast<unsigned int*>(amax_bits.data_ptr<int>());
  auto* pp = packed.data_ptr<uint8_t>();
  auto* sp = static_cast<uint8_t*>(scale.data_ptr());
  float* gp = global.data_ptr<float>();

  auto run = [&](auto tag) {
    using TI = decltype(tag);
    const TI* src = static_cast<const TI*>(w.data_ptr());
    nvfp4::nvfp4_amax_kernel<TI><<<amax_grid, nvfp4::kQuantThreads, 0, stream>>>(src, numel, amax);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    nvfp4::nvfp4_quantize_kernel<TI><<<quant_grid, nvfp4::kQuantThreads, 0, stream>>>(
        src, nblocks, K, amax, pp, sp, gp);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  dispatch_float_cuda(w.scalar_type(), "quantize_nvfp4", run);
  return {packed, scale, global};
}

// ---------------------------------------------------------- dequantize ----
at::Tensor dequantize_nvfp4_cuda(const at::Tensor& w_packed, const at::Tensor& scale,
                                 const at::Tensor& global_scale,
                                 std::optional<at::ScalarType> out_dtype) {
  const char* op = "dequantize_nvfp4";
  validate_dequantize_nvfp4(w_packed, scale, global_scale);
  const at::ScalarType od = dequant_out_dtype(out_dtype, op);
  const c10::cuda::CUDAGuard device_guard(w_packed.device());
  const int64_t N = w_packed.size(0), K = w_packed.size(1) * 2;
  at::Tensor out = at::empty({N, K}, w_packed.options().dtype(od));
  if (out.numel() == 0) return out;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const auto* pp = w_packed.data_ptr<uint8_t>();
  const auto* sp = static_cast<const uint8_t*>(scale.data_ptr());
  const float* gp = global_scale.data_ptr<float>();
  // K % 16 == 0 (validated): with an 8-byte aligned packed pointer, one thread
  // per 16-code piece; otherwise one thread per byte (same values).
  const bool by16 = reinterpret_cast<uintptr_t>(pp) % 8 == 0;
  const int64_t items = by16 ? N * (K / 16) : N * (K / 2);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(
      (items + nvfp4::kDequantThreads - 1) / nvfp4::kDequantThreads, int64_t{1} << 20));
  dispatch_float_cuda(od, op, [&](auto tag) {
    using O = decltype(tag);
    O* o = static_cast<O*>(out.data_ptr());
    if (by16) {
      nvfp4::nvfp4_dequantize_vec_kernel<O><<<grid, nvfp4::kDequantThreads, 0, stream>>>(pp, sp, gp, items, o);
    } else {
      nvfp4::nvfp4_dequantize_kernel<O><<<grid, nvfp4::kDequantThreads, 0, stream>>>(pp, sp, gp, N, K, o);
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// ------------------------------------------------------------ relayout ----
at::Tensor nvfp4_relayout_cuda(const at::Tensor& w_in, int64_t layout, bool inverse) {
  validate_nvfp4_relayout(w_in, layout);
  const c10::cuda::CUDAGuard device_guard(w_in.device());
  if (layout == nvfp4::kLayoutTiled) return nvfp4::relayout_tiled(w_in, inverse, nvfp4_relayout_cuda);
  // Words are 4-byte groups from each row's start; K % 16 == 0 makes the flat byte array's
  // groups those words. A view whose base is not 4-byte aligned is copied first.
  const at::Tensor w = aligned_to(w_in.data_ptr(), 4) ? w_in : w_in.clone();
  at::Tensor out = at::empty_like(w, w.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t words = w.numel() / 4;
  if (layout == nvfp4::kLayoutStd || words == 0) return out.copy_(w);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  constexpr int kThreads = 256;
  const unsigned grid =
      static_cast<unsigned>(std::min<int64_t>((words + kThreads - 1) / kThreads, int64_t{1} << 20));
  const auto* src = reinterpret_cast<const uint32_t*>(w.data_ptr<uint8_t>());
  auto* dst = reinterpret_cast<uint32_t*>(out.data_ptr<uint8_t>());
  auto go = [&](auto layout_c) {
    constexpr int L = decltype(layout_c)::value;
    if (inverse)
      nvfp4::nvfp4_relayout_kernel<L, true><<<grid, kThreads, 0, stream>>>(src, dst, words);
    else
      nvfp4::nvfp4_relayout_kernel<L, false><<<grid, kThreads, 0, stream>>>(src, dst, words);
  };
  if (layout == nvfp4::kLayoutBf16)
    go(std::integral_constant<int, nvfp4::kLayoutBf16>{});
  else if (layout == nvfp4::kLayoutBf16Adj)
    go(std::integral_constant<int, nvfp4::kLayoutBf16Adj>{});
  else
    go(std::integral_constant<int, nvfp4::kLayoutF16>{});
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor nvfp4_relayout_scale_cuda(const at::Tensor& w_scale, int64_t layout, bool inverse) {
  const c10::cuda::CUDAGuard device_guard(w_scale.device());
  return nvfp4::relayout_scale(w_scale, layout, inverse);
}

}  // namespace

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("nvfp4_gemv", &nvfp4_gemv_cuda);
  m.impl("nvfp4_relayout", &nvfp4_relayout_cuda);
  m.impl("nvfp4_relayout_scale", &nvfp4_relayout_scale_cuda);
  m.impl("quantize_nvfp4", &quantize_nvfp4_cuda);
  m.impl("dequantize_nvfp4", &dequantize_nvfp4_cuda);
}

}  // namespace torchquant
