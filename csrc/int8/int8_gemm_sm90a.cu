// _int8_gemm_sm90a: the Hopper wgmma INT8 GEMM behind int8_matmul(kernel="wgmma").
//
// Computes y = float(acc - a_zero[m] * w_colsum[n]) * (a_scale[m] * w_scale[n]) + float(bias[n])
// with acc = sum_k a_q[m,k] * w_q[n,k] exact in int32, bit-identical to the CPU int8_matmul
// (same validator, same epilogue order; see int8_gemm_sm90a_kernels.cuh for the kernel).
//
// Host side: validation (validate_int8_matmul first, so errors match every other backend; then
// the preconditions of this path: a CUDA device of compute capability exactly 9.0 and K % 16 == 0),
// the column sums when a zero point comes without them, the two TMA tensor maps (encoded with the
// driver's cuTensorMapEncodeTiled, reached through cudaGetDriverEntryPointByVersion, so nothing is
// linked against libcuda), the tile configuration (choose_config, which for small 64 x 64 grids
// also picks a cluster K split: split_64x64), the workspace split-K factor of the other
// configurations (choose_splits; a zeroed int32 workspace and per-tile counters are then allocated
// per call), and a persistent launch of at most one CTA per SM (cluster launch through
// cudaLaunchKernelEx when pairs of CTAs multicast W or a cluster splits K).
// No host synchronization: the op can be captured in a CUDA graph (the workspace and counters are
// zeroed by memsets recorded with the launch, so every replay starts from zero).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "common/checks.h"
#include "common/device.h"
#include "common/sm90a_host.h"
#include "int8/int8_gemm_sm90a_kernels.cuh"

namespace torchquant {
namespace sm90a {
namespace {

constexpr const char* kOp = "_int8_gemm_sm90a";

// 128 x 256 tiles, 4 stages (192 KB), pairs of CTAs along M multicasting the W tile.
using Cfg256c2 = GemmConfig<256, 4, 2>;
// 128 x 256 tiles, 4 stages, no cluster.
using Cfg256c1 = GemmConfig<256, 4, 1>;
// 128 x 128 tiles, 6 stages (192 KB), no cluster: twice the tiles for grids that cannot fill
// the GPU with 128 x 256 ones.
using Cfg128c1 = GemmConfig<128, 6, 1>;
// 64-row tiles (grids of at most one wave, choose_config): the two consumer warpgroups split
// the columns (m64n64k32 / m64n32k32 each) instead of stacking rows, so at M <= 64 no
// tensor-core work goes to zero-filled rows.
// 64 x 128: 8 stages of 24 KB (192 KB); 64 x 64: twice the CTAs, 12 stages of 16 KB (192 KB;
// against 8 stages, H200 run 12-02i call 4: 4096x4096 M = 64 / 128 9.7 / 9.8 -> 8.9 / 9.2 us,
// 4096x14336 M = 128 24.5 -> 22.7, never slower).
using Cfg64x128c1 = GemmConfig<128, 8, 1, 64>;
using Cfg64x64c1 = GemmConfig<64, 12, 1, 64>;
// The 64-row tiles with their K range split over a cluster of 2, 4 or 8 CTAs, the partial sums
// added through distributed shared memory (kernel header): grids of few tiles get up to 8x the
// SMs, with no workspace, memset or atomics. The partial buffer (16 / 32 KB) costs the 64 x 128
// tile its eighth stage.
using Cfg64x64k2 = GemmConfig<64, 12, 1, 64, 2>;
using Cfg64x64k4 = GemmConfig<64, 12, 1, 64, 4>;
using Cfg64x64k8 = GemmConfig<64, 12, 1, 64, 8>;
using Cfg64x128k2 = GemmConfig<128, 7, 1, 64, 2>;
using Cfg64x128k4 = GemmConfig<128, 7, 1, 64, 4>;
using Cfg64x128k8 = GemmConfig<128, 7, 1, 64, 8>;

enum class TileConfig {
  k128x256c2, k128x256c1, k128x128c1, k64x128c1, k64x64c1,
  k64x64k2, k64x64k4, k64x64k8, k64x128k2, k64x128k4, k64x128k8
};
constexpr TileConfig kAllConfigs[] = {
    TileConfig::k128x256c2, TileConfig::k128x256c1, TileConfig::k128x128c1, TileConfig::k64x128c1,
    TileConfig::k64x64c1,   TileConfig::k64x64k2,   TileConfig::k64x64k4,   TileConfig::k64x64k8,
    TileConfig::k64x128k2,  TileConfig::k64x128k4,  TileConfig::k64x128k8};

const char* config_name(TileConfig c) {
  switch (c) {
    case TileConfig::k128x256c2: return "128x256c2";
    case TileConfig::k128x256c1: return "128x256c1";
    case TileConfig::k128x128c1: return "128x128c1";
    case TileConfig::k64x128c1: return "64x128c1";
    case TileConfig::k64x64c1: return "64x64c1";
    case TileConfig::k64x64k2: return "64x64k2";
    case TileConfig::k64x64k4: return "64x64k4";
    case TileConfig::k64x64k8: return "64x64k8";
    case TileConfig::k64x128k2: return "64x128k2";
    case TileConfig::k64x128k4: return "64x128k4";
    case TileConfig::k64x128k8: return "64x128k8";
  }
  return "?";
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A 64 x 64 grid of `tiles` tiles (at most one per SM) over num_kb k-blocks: split each tile's K
// range over a cluster of 2 or 4 CTAs (partials added through distributed shared memory)?
// Measured on the H200 (results/h200/2026-12-02j_int8_cluster, call 2; cold L2, graph replay,
// bf16 out, us; unsplit 64x64c1 / k2 / k4 / k8, bf16 cuBLAS):
//   1024x8192  M = 64:  11.7 / 10.3 / 7.9 / 10.9 (10.4)   M = 128: 13.2 / 10.4 / 13.0 / 15.0 (11.1)
//              M = 256: 13.2 / 11.2 / 19.4 / 25.0 (13.4)
//   1024x4096  M = 64:  8.1 / 7.4 / 6.6 / 9.2 (8.2)       M = 128: 8.2 / 7.5 / 10.1 / 12.4 (8.6)
//   4096x14336 M = 64:  25.1 / 20.7 / 29.3 / 34.8 (36.6)  4096x4096 M = 64: 8.9 / 9.5 / 15.5 (12.3)
//   K = 2048 (16 k-blocks): 768x2048, 1536x2048, 2048x2048 M = 33..256: never faster (+-0.3,
//   up to +0.7 at 2048x2048).
// The split pays while it takes the grid to at most 64 CTAs (and up to 128 with >= 64
// k-blocks), each keeping >= 8 k-blocks; a grid of 128 CTAs in clusters of 4 or 8 ran past one
// wave (1024x8192 M = 128 at k4, M = 64 at k8). The 64 x 128 splits were never the best by more
// than 0.8 us (1024x8192 M = 128: 9.6 at k4), so only the 64 x 64 tile is split here.
TileConfig split_64x64(int64_t tiles, int64_t num_kb) {
  if (num_kb >= 32 && tiles * 4 <= 64) return TileConfig::k64x64k4;
  if (num_kb >= 32 && tiles * 2 <= 64) return TileConfig::k64x64k2;
  if (num_kb >= 64 && tiles * 2 <= 128) return TileConfig::k64x64k2;
  return TileConfig::k64x64c1;
}

// The one dispatch function of this op: which tile configuration runs a given shape.
// TORCHQUANT_INT8_WGMMA_TILE=<a config_name> forces one (tests, benchmarks).
TileConfig choose_config(int64_t M, int64_t N, int64_t K, const DeviceCaps& caps) {
  const int forced = tma::forced_index("TORCHQUANT_INT8_WGMMA_TILE", kAllConfigs, config_name, kOp);
  if (forced >= 0) return kAllConfigs[forced];
  // 64-row tiles (the two consumer warpgroups split the columns) whenever they fill at most one
  // wave: 64 x 64 if there is at most one such tile per SM, else 64 x 128. Measured on the H200
  // (results/h200/2026-12-02i_int8_bm64, cold L2, graph replay, bf16 out, us; the 128-row
  // choice / 64x128c1 / 64x64c1 (8 stages then) / bf16 cuBLAS):
  //   4096x4096  M = 64:  14.5 / 10.8 / 9.6 / 12.3    M = 256: 15.9 / 11.3 / 15.3 (2 waves) / 17.4
  //   6144x4096  M = 64:  15.4 / 11.7 / 10.8 / 17.0   M = 128: 15.8 / 11.9 / 16.1 (2 waves) / 17.2
  //   4096x14336 M = 64:  30.1 / 28.4 / 24.7 / 37.3   M = 128: 36.7 / 25.6 / 24.1 / 39.1
  //   2048x2048  M = 256: 10.3 / 7.1 / 6.3 / 6.9     M = 512: 10.4 / 7.8 / 9.7 (2 waves) / 9.1
  //   1024x4096  M = 512: 14.8 / 9.7 / 8.7 / 10.1
  //   14336x4096 M = 64:  24.4 / 19.9 / 19.9 (2 waves) / 34.5; M = 256: 36.1 / 38.8 (2 waves):
  //   past one wave the 128-row rule below keeps it.
  // A 128-row tile spends half its tensor work on TMA's zero fill when M <= 64, and these grids
  // were 16-48 CTAs, each taking ~0.45 us per 128-byte k-block: more, shorter tiles win.
  // One 64-row M tile (M <= 64) takes 64 x 128 tiles past one wave too: the 128-row tile would
  // spend half its tensor work on zero rows and take half as many units. H200, us, 64x128c1 /
  // the 128-row choice (128x128c1) / the gemv, bf16 out (results/h200/2026-12-03b_int8_gemv_ring,
  // calls 2-3): 28672x8192 M = 16 67.1-69.9 / 94.6-97.9 / 63.3-64.2, M = 32 63.8-64.5 / - /
  // 83.5-83.6; 128256x4096 M = 32 133.0-134.2 / - / 197.4-197.7.
  {
    const int64_t m64 = ceil_div(M, 64);
    const int64_t tiles64 = m64 * ceil_div(N, 64);
    if (tiles64 <= caps.sm_count) return split_64x64(tiles64, ceil_div(K, 128));
    if (m64 == 1 || m64 * ceil_div(N, 128) <= caps.sm_count) return TileConfig::k64x128c1;
  }
  const int64_t m_tiles = ceil_div(M, 128);
  // Fewer 128 x 256 tiles than SMs: the grid cannot fill the GPU; 128 x 128 tiles double the
  // number of CTAs (each still 2 consumer warpgroups, 6 stages deep).
  if (m_tiles * ceil_div(N, 256) < caps.sm_count) return TileConfig::k128x128c1;
  // An odd, small number of M tiles: the second CTA of the last cluster of every N column would
  // compute a padding tile (up to a third of the work at 3 M tiles); run without clusters.
  if (m_tiles % 2 == 1 && m_tiles < 16) return TileConfig::k128x256c1;
  // The large-GEMM path: 128 x 256 tiles, W tile shared by two M tiles through TMA multicast,
  // which cuts each CTA's L2 -> SM traffic from 48 KB to 32 KB per 128 of K.
  return TileConfig::k128x256c2;
}

// Split-K plan of one launch: k-blocks [s * kb_per_split, min(num_kb, (s + 1) * kb_per_split))
// for split s < splits.
struct SplitPlan {
  int splits;
  int kb_per_split;
};

// The second dispatch decision: into how many K ranges each tile is cut.
// units: tile units of the chosen config (ceil(ceil(M / kBM) / kCM) * ceil(N / kBN));
// num_kb: k-blocks of 128 bytes; max_units: tile units resident at once (resident CTAs / kCM).
// Why: a grid of fewer tile units than SMs leaves SMs idle while each CTA streams its W rows.
// Measured on the H200 (cold L2, graph replay, bf16 out, benchmarks/micro/env_ab.py --op int8,
// results/h200/2026-12-01_0535/ab_int8_split.csv), us unsplit / best split:
//   4096x14336 (32 units, 112 k-blocks) M = 33: 38.1 / 29.0 (S = 4), M = 64: 38.0 / 30.6,
//   M = 128: 38.6 / 36.0 (S = 2), but M = 256 (2 M tiles): 39.0 / 41.2;
//   K = 4096 (32 k-blocks): 4096x4096 M = 33..256: 14.2-15.3 unsplit, every split slower
//   (M = 64: 18.1 at S = 2, 18.9 at S = 4); 6144x4096 alike; 1024x4096 M = 33 13.5 / 11.9
//   (S = 8), M >= 64 slower.
// The zeroed workspace, the M x N int32 adds per split and the counter handshake cost a few us,
// repaid only by long K ranges at one M tile. So the rule splits one-M-tile grids (M <= 128) of
// fewer units than one wave when K >= 8192 (64 k-blocks): as many splits as one wave holds, each
// keeping >= 4 k-blocks, at most 16. Unsplit, a K = 4096 grid of 32 CTAs still takes ~14 us
// (4096x4096 M = 64: bf16 cuBLAS 12.5), a per-CTA k-loop rate (~0.4 us per 128-byte k-block)
// not explained yet.
// A variant that stored one plain [M, N] slice per split (no memset, no REDs) and had the last
// CTA sum the slices was bit-exact but slower (results/h200/2026-12-01_0612/ab.csv: 4096x4096
// M = 64 14.4 unsplit, 24.0 at S = 2; 4096x14336 M = 64 37.8 / 34.5 at S = 4, against 30.6 for
// the atomic form): the last CTA's S dependent L2 reloads per element sit on the critical path.
// Since 2026-12-02j the 64 x 64 grids of <= 64 tiles at K >= 8192 take the cluster K split
// instead (split_64x64: no workspace; 4096x14336 M = 64 20.7 us against 25.1), so without the
// knob this rule now fires only for a one-M-tile grid of 65 or 66 64 x 64 tiles (2 splits).
// TORCHQUANT_INT8_WGMMA_SPLITS=S (S >= 1) forces S splits, clamped to num_kb (1: no split; tests,
// benchmarks; ignored by the cluster-split configurations). Either way the plan is normalized so
// that no split is empty.
SplitPlan choose_splits(int64_t m_tiles, int64_t units, int64_t num_kb, int64_t max_units) {
  int64_t splits = 1;
  const char* env = std::getenv("TORCHQUANT_INT8_WGMMA_SPLITS");
  if (env != nullptr && env[0] != '\0') {
    const int forced = std::atoi(env);
    TORCH_CHECK(forced >= 1, kOp, ": TORCHQUANT_INT8_WGMMA_SPLITS='", env,
                "' is not a positive integer");
    splits = std::min<int64_t>(forced, num_kb);
  } else if (m_tiles == 1 && units < max_units && num_kb >= 64) {
    splits = std::max<int64_t>(1, std::min<int64_t>({max_units / units, num_kb / 4, 16}));
  }
  const int64_t per = ceil_div(num_kb, splits);
  splits = ceil_div(num_kb, per);  // no empty split
  TORCH_CHECK(units * splits <= std::numeric_limits<int>::max(), kOp, ": ", units, " tile units x ",
              splits, " splits overflow the work-unit index");
  return {static_cast<int>(splits), static_cast<int>(per)};
}

// 2-D map over a row-major int8 [rows, K] tensor: boxes of 128 bytes of K x box_rows rows,
// 128-byte swizzle, zero fill out of bounds.
CUtensorMap make_tmap(const void* base, int64_t rows, int64_t K, int box_rows) {
  return tma::make_tmap_2d(base, rows, K, 128, box_rows, CU_TENSOR_MAP_SWIZZLE_128B, kOp);
}

template <class Cfg, class OutT>
void launch(const at::Tensor& a, const at::Tensor& w, GemmArgs args, int device,
            const DeviceCaps& caps, cudaStream_t stream) {
  TORCH_CHECK(Cfg::kSmemBytes <= caps.max_smem_optin, kOp, ": needs ", Cfg::kSmemBytes,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  // A grid of one M tile without multicast loads only round_up(M, 8) rows of A per box instead of
  // kBM: TMA then does not zero-fill the tile's rows past M, which cost 3-12 % at decode M
  // (28672x8192 M = 16: 63.5 against 67.3 us; 128256x4096 M = 1: 125.5-133.9 against 141.7;
  // results/h200/2026-12-03c_int8_abox/call1). TORCHQUANT_INT8_WGMMA_ABOX=0 (measurement knob)
  // keeps the full box.
  args.a_box_rows = tma::token_box_rows(args.M, Cfg::kBM, Cfg::kCM == 1, "TORCHQUANT_INT8_WGMMA_ABOX");
  const CUtensorMap tmap_a = make_tmap(a.data_ptr(), args.M, args.K, args.a_box_rows);
  const CUtensorMap tmap_b = make_tmap(w.data_ptr(), args.N, args.K, Cfg::kBBoxRows);
  args.num_m_tiles = static_cast<int>(ceil_div(args.M, Cfg::kBM));
  args.num_n_tiles = static_cast<int>(ceil_div(args.N, Cfg::kBN));
  args.num_m_units = static_cast<int>(ceil_div(args.num_m_tiles, Cfg::kCM));
  args.num_kb = static_cast<int>(ceil_div(args.K, Cfg::kBK));
  // 16 M tiles per raster group: at K = 8192 the group's A rows (16 MB) and the W tiles the
  // resident CTAs are on (~8 x 2 MB) stay inside the 50-60 MB L2.
  args.group_units = std::max(1, 16 / Cfg::kCM);

  const int max_ctas =
      tma::resident_ctas(reinterpret_cast<const void*>(int8_gemm_sm90a_kernel<Cfg, OutT>),
                         Cfg::kThreads, Cfg::kSmemBytes, Cfg::kCluster, device, caps);
  const int tile_units = args.num_m_units * args.num_n_tiles;
  // A tile unit occupies kCM CTAs, so one wave holds max_ctas / kCM of them. A cluster K split
  // (kKS > 1) replaces the workspace split: its kKS CTAs share one tile unit.
  const SplitPlan plan =
      Cfg::kKS > 1 ? SplitPlan{1, args.num_kb}
                   : choose_splits(args.num_m_tiles, tile_units, args.num_kb, max_ctas / Cfg::kCM);
  args.splits = plan.splits;
  args.kb_per_split = plan.kb_per_split;
  args.num_units = tile_units * plan.splits;
  // Freed when this function returns: the caching allocator keeps the memory for the kernel
  // queued on this stream (as int8_matmul's mma split-K does).
  at::Tensor ws, counters;
  if (plan.splits > 1) {
    const at::TensorOptions opts = a.options().dtype(at::kInt);
    ws = at::zeros({args.M, args.N}, opts);
    counters = at::zeros({static_cast<int64_t>(args.num_m_units) * Cfg::kCM * args.num_n_tiles},
                         opts);
    args.ws = ws.data_ptr<int32_t>();
    args.counters = counters.data_ptr<int>();
  }
  const int clusters = std::min(args.num_units, max_ctas / Cfg::kCluster);

  tma::launch_clusters(int8_gemm_sm90a_kernel<Cfg, OutT>, clusters * Cfg::kCluster,
                       Cfg::kThreads, Cfg::kSmemBytes, Cfg::kCluster, stream, tmap_a, tmap_b,
                       args);
}

template <class OutT>
void launch_config(TileConfig c, const at::Tensor& a, const at::Tensor& w, const GemmArgs& args,
                   int device, const DeviceCaps& caps, cudaStream_t stream) {
  switch (c) {
    case TileConfig::k128x256c2: launch<Cfg256c2, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k128x256c1: launch<Cfg256c1, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k128x128c1: launch<Cfg128c1, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x128c1: launch<Cfg64x128c1, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x64c1: launch<Cfg64x64c1, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x64k2: launch<Cfg64x64k2, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x64k4: launch<Cfg64x64k4, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x64k8: launch<Cfg64x64k8, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x128k2: launch<Cfg64x128k2, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x128k4: launch<Cfg64x128k4, OutT>(a, w, args, device, caps, stream); break;
    case TileConfig::k64x128k8: launch<Cfg64x128k8, OutT>(a, w, args, device, caps, stream); break;
  }
}

at::Tensor int8_gemm_sm90a(const at::Tensor& a_q, const at::Tensor& a_scale,
                           const c10::optional<at::Tensor>& a_zero, const at::Tensor& w_q,
                           const at::Tensor& w_scale, const c10::optional<at::Tensor>& w_colsum,
                           const c10::optional<at::Tensor>& bias,
                           c10::optional<at::ScalarType> out_dtype) {
  const Int8MatmulShape sh =
      validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype);
  const int64_t M = sh.M, N = sh.N, K = sh.K;
  TORCH_CHECK(a_q.is_cuda(), kOp, ": operands must be CUDA tensors, got ", a_q.device());
  TORCH_CHECK(K % 16 == 0, kOp, ": K must be a multiple of 16 (the TMA copies need 16-byte row "
              "strides), got K = ", K, "; int8_matmul's 'mma' kernel takes any K");

  const c10::cuda::CUDAGuard device_guard(a_q.device());
  const int device = a_q.get_device();
  const DeviceCaps& caps = tma::require_sm90a(M, N, device, kOp);

  const at::Tensor a = tma::tma_ready(a_q);
  const at::Tensor w = tma::tma_ready(w_q);
  at::Tensor colsum;
  if (a_zero.has_value()) {
    colsum = w_colsum.has_value() ? *w_colsum : at::sum(w_q, {1}, false, at::kInt);
  }
  at::Tensor bias_f;
  if (bias.has_value()) {
    bias_f = bias->scalar_type() == at::kFloat ? *bias : bias->to(at::kFloat);  // exact widening
  }

  at::Tensor out = at::empty({M, N}, a_q.options().dtype(sh.out_dtype));

  GemmArgs args = {};
  args.M = static_cast<int>(M);
  args.N = static_cast<int>(N);
  args.K = static_cast<int>(K);
  args.out = out.data_ptr();
  args.a_scale = a_scale.data_ptr<float>();
  args.a_scale_step = a_scale.numel() == 1 ? 0 : 1;
  args.w_scale = w_scale.data_ptr<float>();
  args.w_scale_step = w_scale.numel() == 1 ? 0 : 1;
  // Absent operands point at a_scale's / w_scale's first element with step 0: the kernel loads
  // them unconditionally (valid memory, never out of bounds) and ignores the values.
  const int32_t* any_int = reinterpret_cast<const int32_t*>(args.a_scale);
  args.has_zero = a_zero.has_value() ? 1 : 0;
  args.a_zero = a_zero.has_value() ? a_zero->data_ptr<int32_t>() : any_int;
  args.a_zero_step = a_zero.has_value() && a_zero->numel() != 1 ? 1 : 0;
  args.colsum = a_zero.has_value() ? colsum.data_ptr<int32_t>() : any_int;
  args.colsum_step = a_zero.has_value() ? 1 : 0;
  args.has_bias = bias.has_value() ? 1 : 0;
  args.bias = bias.has_value() ? bias_f.data_ptr<float>() : args.w_scale;
  args.bias_step = bias.has_value() ? 1 : 0;
  // 16-byte stores of regrouped pairs (kernel header, epilogue_vec) for 16-bit outputs whose rows
  // hold whole 8-column groups (common/sm90a_host.h; TORCHQUANT_WGMMA_VEC=0: 4-byte pairs).
  args.vec_store = tma::wgmma_vec_store(sh.out_dtype, N, true);

  const TileConfig config = choose_config(M, N, K, caps);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_float_cuda(sh.out_dtype, kOp, [&](auto tag) {
    launch_config<decltype(tag)>(config, a, w, args, device, caps, stream);
  });
  return out;
}

}  // namespace
}  // namespace sm90a
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("_int8_gemm_sm90a", &torchquant::sm90a::int8_gemm_sm90a);
}
