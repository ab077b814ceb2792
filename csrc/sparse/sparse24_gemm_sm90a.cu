// _sparse24_int8_gemm_sm90a and _sparse24_gemm_sm90a: the Hopper sparse-wgmma GEMMs behind
// sparse24_int8_matmul(path="wgmma") and sparse24_gemv(path="wgmma") (kernel:
// sparse24_gemm_sm90a_kernels.cuh). Same semantics, validation and messages as those ops;
// the weight stays in compress24's form (values [N, K/2] + meta [N, K/8]).
//
// Host side: the shared validators first, then this path's preconditions (a compute
// capability 9.0 device; K % 128 == 0, because TMA needs 16-byte row strides and the meta
// rows are K / 8 bytes), the column sums when a zero point comes without them, three TMA
// maps (values, meta, activations), the tile configuration (choose_sp_config) and a persistent
// launch of at most one CTA per SM (cluster launch when pairs of CTAs multicast the
// activation tile). No host synchronization: graph-capturable.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <cstdlib>

#include "common/checks.h"
#include "common/device.h"
#include "common/sm90a_host.h"
#include "sparse/sparse24_checks.h"
#include "sparse/sparse24_gemm_sm90a_kernels.cuh"

namespace torchquant {
namespace sm90a {
namespace sp24 {
namespace {

// 128 features x 256 tokens, 5 stages (210 KB), pairs of CTAs along the features
// multicasting the activation tile (each loads 128 of its 256 rows).
using Cfg256c2 = SpConfig<256, 5, 2>;
// 128 x 256, 5 stages, no cluster.
using Cfg256c1 = SpConfig<256, 5, 1>;
// 128 x 128, 8 stages (208 KB), no cluster: twice the tiles for grids that cannot fill the
// GPU with 128 x 256 ones.
using Cfg128c1 = SpConfig<128, 8, 1>;
// Decode and small batches: 128 features x 64 / 32 / 16 tokens with wide stages (128 stored
// bytes per weight row: 16 KB of values, 4 KB of meta, 16 / 8 / 4 KB of activations, or
// round_up(M, 8) rows of them with one token tile), 6 / 7 / 8 stages (216 / 196 / 192 KB).
// H200, 28672x8192 bf16 at M = 8, us (results/h200/2026-12-03d_sp24_decode): 64-byte stages
// 80.2 (74 % of the read ceiling), wide 68.9: the 64-byte rows of a 64-byte box stream like
// the fp8 GEMV's 64-byte pattern (docs/fp8_gemv.md, the cp.async ring). 64c1n is the 64-token
// tile with the prefill tiles' 64-byte stages (8 KB values, 2 KB meta, 8 KB activations), 10
// stages (180 KB): measured beside the wide one, forced only.
using Cfg64c1 = SpConfig<64, 6, 1, 128>;
using Cfg64n = SpConfig<64, 10, 1>;
using Cfg32c1 = SpConfig<32, 7, 1, 128>;
using Cfg16c1 = SpConfig<16, 8, 1, 128>;
// The 16-token wide tile with two CTAs per SM (4 stages, ~100 KB each). A one-CTA-per-SM grid
// of 224 units (28672 features) leaves 40 SMs idle in its second pass, whose 92 CTAs each
// stream at ~33 GB/s; with two CTAs per SM every unit is resident at once.
using Cfg16x2 = SpConfig<16, 4, 1, 128, 2>;
// The 16-token wide tile with its K range split over a cluster of 2..8 CTAs (one unit per
// cluster; the kernel header): small grids (16-bit kinds, at most a quarter as many feature
// tiles as SMs: layers of <= 4224 features on an H200) would otherwise stream on a fraction
// of the SMs.
using Cfg16k = SpConfig<16, 8, 1, 128, 1, true>;

enum class SpTile { k256c2, k256c1, k128c1, k64c1, k64n, k32c1, k16c1, k16x2, k16k };
constexpr SpTile kAllTiles[] = {SpTile::k256c2, SpTile::k256c1, SpTile::k128c1,
                                SpTile::k64c1,  SpTile::k64n,   SpTile::k32c1,
                                SpTile::k16c1,  SpTile::k16x2,  SpTile::k16k};

const char* tile_name(SpTile t) {
  switch (t) {
    case SpTile::k256c2: return "256c2";
    case SpTile::k256c1: return "256c1";
    case SpTile::k128c1: return "128c1";
    case SpTile::k64c1: return "64c1";
    case SpTile::k64n: return "64c1n";
    case SpTile::k32c1: return "32c1";
    case SpTile::k16c1: return "16c1";
    case SpTile::k16x2: return "16c1x2";
    case SpTile::k16k: return "16c1k";
  }
  return "?";
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// tma::max_active_clusters, cached per kernel, cluster size and device (the K-split launch asks
// for up to three sizes per call). The kernel is opted in to its shared memory by
// tma::resident_ctas, which launch() calls first.
int active_clusters(const void* kernel, int threads, int smem, int cm, int device,
                    const DeviceCaps& caps) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, int>, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(kernel, cm, device);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  return cache[key] = tma::max_active_clusters(kernel, threads, smem, cm, caps);
}

// The one dispatch function of these ops: which tile configuration runs a shape (M tokens,
// N features). TORCHQUANT_SP24_WGMMA_TILE=256c2|256c1|128c1|64c1|64c1n|32c1|16c1|16c1x2|16c1k forces
// one (tests, benchmarks).
// The rule mirrors the dense int8 wgmma kernel's (int8_gemm_sm90a.cu). Measured for this kernel
// on the H200 (2026-12-01, M = 2048, us, 256c2 / 128c1): int8 28672x8192 559 / 800,
// 14336x4096 151 / 211, 4096x4096 43.7 / 62.0; bf16 1052 / 1756, 263 / 399, 76.5 / 114.
// Clusters of 4 (each CTA loading a quarter of the x tile) were no faster (int8 28672x8192
// 561, 4096x4096 60.5) and gave wrong 16-bit results in one forced test; not kept.
SpTile choose_sp_config(int64_t M, int64_t N, int64_t K, bool int8, const DeviceCaps& caps,
                        const char* op) {
  const int forced = tma::forced_index("TORCHQUANT_SP24_WGMMA_TILE", kAllTiles, tile_name, op);
  if (forced >= 0) return kAllTiles[forced];
  const int64_t f_tiles = ceil_div(N, 128);
  // Up to 128 tokens a 256-token tile is at least half padding. H200 (2026-12-01_sp24,
  // 28672x8192, us, 256c2 / 128c1): M = 64 int8 130.2 / 76.6, bf16 233.2 / 146.7;
  // M = 128 int8 83.2 / 59.5, bf16 151.2 / 116.8.
  // The narrowest tile that holds M (tensor work is a small share of a decode tile's time);
  // up to 128 tokens a grid of fewer 128-feature tiles than half the SMs keeps 64-token
  // tiles (twice the units). H200 (2026-12-03d call 2, us): 28672x8192 bf16 M = 8 16c1 73.3 /
  // 32c1 74.1 / 64c1 75.0 / 128c1 182; M = 32 32c1 69.7 / 64c1 72.4; M = 64 64c1 76.4 / 128c1
  // 141; M = 96 64c1 157 / 128c1 121.5; 4096x4096 M = 96 64c1 14.8 / 128c1 22.8, 14336x4096
  // M = 96 40.8 / 34.2.
  // Two CTAs per SM (16c1x2, 4 stages) when the 128-feature tiles are more than one per SM but
  // at most two: then one CTA per SM runs them in two passes and the second leaves SMs idle.
  // H200 (2026-12-03e call 1, us, 16c1 / 16c1x2): 28672x8192 (224 tiles) bf16 M = 8 71.9 /
  // 68.2, M = 16 72.5 / 68.4, int8 M = 1 / 8 / 16 42.4 / 39.6, 43.0 / 40.0, 45.4 / 40.6;
  // elsewhere level or slower: 57344x8192 (448) bf16 133.0 / 133.6, 128256x4096 (1002) M = 16
  // 146.8 / 151.4, 14336x4096 (112) 20.9 / 20.9.
  // 16-bit kinds, at most a quarter as many feature tiles as SMs (so a split in two stays on
  // half of them, see launch()) and at least 4 stages for each of two ranks: the cluster K
  // split (16c1k). H200 (2026-12-03e call 5, bf16, M = 8, us, 16c1 / 16c1k with 2 / 4 / 8
  // ranks / mma.sp): 4096x4096 (32 tiles) 11.5 / 9.4 / 13.7 / 17.9 / 10.6; 4096x14336 (32)
  // 31.9 / 21.7 / 28.3 / 31.1 / 25.5; 1024x4096 (8) 10.9 / 8.0 / 6.5 / 6.7 / 6.8; with more
  // tiles the split gained nothing (6144x4096, 48 tiles, 2 ranks: 12.4 / 12.2; 8192x8192, 64:
  // 23.9 / 23.8). int8 too since 2026-12-03g (call 1, M = 8 / 16, us, 16c1 / 16c1k with 2
  // ranks): 4096x14336 17.4 / 14.5, 17.7 / 14.5; 4096x4096 7.7 / 7.5, 7.9 / 7.6; 1024x4096
  // 6.8 / 6.1, 6.9 / 6.2; and not past the quarter (6144x4096, 48 tiles: 8.1 / 9.0). Its
  // 4-rank split lost on 4096x4096 (11.0, 2026-12-03e), where launch() keeps 2 ranks.
  if (M <= 16 && sparse24_ksplit_grid(N, K, caps.sm_count, int8)) return SpTile::k16k;
  if (M <= 16)
    return f_tiles > caps.sm_count && f_tiles <= 2 * caps.sm_count ? SpTile::k16x2 : SpTile::k16c1;
  if (M <= 32) return SpTile::k32c1;
  if (M <= 64) return SpTile::k64c1;
  if (M <= 128) return 2 * f_tiles <= caps.sm_count ? SpTile::k64c1 : SpTile::k128c1;
  if (f_tiles * ceil_div(M, 256) < caps.sm_count) return SpTile::k128c1;
  if (f_tiles % 2 == 1 && f_tiles < 16) return SpTile::k256c1;
  return SpTile::k256c2;
}

// The three operands as TMA sees them (byte rows), in bytes per element of the activation.
struct SpOperands {
  const void* values;  // [N, K / 2] elements
  const void* meta;    // [N, K / 8] bytes
  const void* x;       // [M, K] elements
  int elem_bytes;      // 1 (int8) or 2 (fp16 / bf16)
};

template <class Cfg, class El, class OutT>
void launch(const SpOperands& o, SpArgs args, int device, const DeviceCaps& caps,
            cudaStream_t stream, const char* op) {
  TORCH_CHECK(Cfg::kSmemBytes <= caps.max_smem_optin, op, ": needs ", Cfg::kSmemBytes,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  const int64_t K = args.K;
  // One token tile of a kCutBox configuration: TMA loads round_up(M, 8) activation rows per
  // stage instead of the tile's kBT (the rest would be zero fill, never stored).
  // TORCHQUANT_SP24_WGMMA_BOX=0 keeps the whole box (A/B measurements, tests).
  const int box_rows =
      tma::token_box_rows(args.M, Cfg::kBBoxRows, Cfg::kCutBox, "TORCHQUANT_SP24_WGMMA_BOX");
  // Logical K per stage and meta bytes per row per stage (the wide stages load exactly these;
  // the 64-byte ones a 16-byte box, of which the 16-bit kind reads one half).
  const int logical = Cfg::kAK * El::kLogicalPerByte;
  const int meta_box = Cfg::kWide ? logical / 8 : Cfg::kMK;
  args.stage_tx = Cfg::kABytes + Cfg::kBF * meta_box + Cfg::kBHalves * box_rows * 128;
  const CUtensorMap tmap_v = tma::make_tmap_2d(
      o.values, args.N, K / 2 * o.elem_bytes, Cfg::kAK, Cfg::kBF,
      Cfg::kWide ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B, op);
  const CUtensorMap tmap_m = tma::make_tmap_2d(o.meta, args.N, K / 8, meta_box, Cfg::kBF,
                                               CU_TENSOR_MAP_SWIZZLE_NONE, op);
  const CUtensorMap tmap_x = tma::make_tmap_2d(o.x, args.M, K * o.elem_bytes, 128, box_rows,
                                               CU_TENSOR_MAP_SWIZZLE_128B, op);
  args.num_f_tiles = static_cast<int>(ceil_div(args.N, Cfg::kBF));
  args.num_t_tiles = static_cast<int>(ceil_div(args.M, Cfg::kBT));
  args.num_f_units = static_cast<int>(ceil_div(args.num_f_tiles, Cfg::kCM));
  args.num_units = args.num_f_units * args.num_t_tiles;
  // K % 128 == 0 (check_path); a wide int8 stage covers 256 logical K, and TMA zero-fills the
  // last one's columns past K (zero values, zero meta nibbles made valid, zero activations).
  args.num_kb = static_cast<int>(ceil_div(K, logical));
  args.group_units = std::max(1, 16 / Cfg::kCM);

  const int max_ctas =
      tma::resident_ctas(reinterpret_cast<const void*>(sparse24_gemm_sm90a_kernel<Cfg, El, OutT>),
                         Cfg::kThreads, Cfg::kSmemBytes, Cfg::kCM, device, caps, Cfg::kPerSm);
  if constexpr (Cfg::kKSplit) {
    // One unit per cluster of ks CTAs: the largest of 2, 4, 8 that keeps the grid within half
    // the SMs (measured: past that the split lost, e.g. 32 tiles x 4 ranks; choose_sp_config),
    // gives each rank >= 4 stages, and whose clusters the occupancy calculator can place all
    // at once (TORCHQUANT_SP24_KSPLIT=2|4|8 forces it).
    const void* kfn = reinterpret_cast<const void*>(sparse24_gemm_sm90a_kernel<Cfg, El, OutT>);
    args.ks = 2;
    while (args.ks < 8 && 2 * args.ks * args.num_units <= caps.sm_count / 2 &&
           args.num_kb >= 2 * args.ks * 4 &&
           args.num_units <= active_clusters(kfn, Cfg::kThreads, Cfg::kSmemBytes, 2 * args.ks,
                                             device, caps)) {
      args.ks *= 2;
    }
    if (const char* env = std::getenv("TORCHQUANT_SP24_KSPLIT")) {
      if (env[0] != '\0') {
        const int v = std::atoi(env);
        TORCH_CHECK(v == 2 || v == 4 || v == 8, op, ": TORCHQUANT_SP24_KSPLIT='", env,
                    "' is not one of 2, 4, 8");
        TORCH_CHECK(v <= args.num_kb, op, ": TORCHQUANT_SP24_KSPLIT=", v, " needs at least ", v,
                    " k-blocks, K gives ", args.num_kb);
        args.ks = v;
      }
    }
    // (Forced onto a short K the tile degenerates to one rank per cluster.)
    args.ks = std::max(1, std::min(args.ks, args.num_kb));
    tma::launch_clusters(sparse24_gemm_sm90a_kernel<Cfg, El, OutT>, args.num_units * args.ks,
                         Cfg::kThreads, Cfg::kSmemBytes, args.ks, stream, tmap_v, tmap_m, tmap_x,
                         args);
    return;
  }
  args.ks = 1;
  const int clusters = std::min(args.num_units, max_ctas / Cfg::kCM);
  tma::launch_clusters(sparse24_gemm_sm90a_kernel<Cfg, El, OutT>, clusters * Cfg::kCM,
                       Cfg::kThreads, Cfg::kSmemBytes, Cfg::kCM, stream, tmap_v, tmap_m, tmap_x,
                       args);
}

template <class El, class OutT>
void launch_tile(SpTile t, const SpOperands& o, const SpArgs& args, int device,
                 const DeviceCaps& caps, cudaStream_t stream, const char* op) {
  switch (t) {
    case SpTile::k256c2: launch<Cfg256c2, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k256c1: launch<Cfg256c1, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k128c1: launch<Cfg128c1, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k64c1: launch<Cfg64c1, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k64n: launch<Cfg64n, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k32c1: launch<Cfg32c1, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k16c1: launch<Cfg16c1, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k16x2: launch<Cfg16x2, El, OutT>(o, args, device, caps, stream, op); break;
    case SpTile::k16k: launch<Cfg16k, El, OutT>(o, args, device, caps, stream, op); break;
  }
}

// This path's own preconditions, after the op's validator.
const DeviceCaps& check_path(const at::Tensor& lead, int64_t M, int64_t N, int64_t K,
                             const char* op) {
  TORCH_CHECK(lead.is_cuda(), op, ": operands must be CUDA tensors, got ", lead.device());
  TORCH_CHECK(K % 128 == 0, op, ": path 'wgmma' needs K % 128 == 0 (TMA copies the meta rows, "
              "K / 8 bytes, which must be a multiple of 16), got K = ", K,
              "; path 'mma' takes K % 32 == 0");
  return tma::require_sm90a(M, N, lead.get_device(), op, "path 'wgmma' ");
}

at::Tensor sparse24_int8_gemm_sm90a(const at::Tensor& a_q, const at::Tensor& a_scale,
                                    const c10::optional<at::Tensor>& a_zero,
                                    const at::Tensor& w_values, const at::Tensor& w_meta,
                                    const at::Tensor& w_scale,
                                    const c10::optional<at::Tensor>& w_colsum,
                                    const c10::optional<at::Tensor>& bias,
                                    c10::optional<at::ScalarType> out_dtype) {
  const char* op = "sparse24_int8_matmul";
  const Int8MatmulShape s = validate_sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta,
                                                          w_scale, w_colsum, bias, out_dtype);
  const c10::cuda::CUDAGuard device_guard(a_q.device());
  const DeviceCaps& caps = check_path(a_q, s.M, s.N, s.K, op);
  const int device = a_q.get_device();

  const at::Tensor x = tma::tma_ready(a_q);
  const at::Tensor values = tma::tma_ready(w_values);
  const at::Tensor meta = tma::tma_ready(w_meta);
  at::Tensor colsum;
  if (a_zero.has_value()) {
    colsum = w_colsum.has_value() ? *w_colsum : at::sum(w_values, {1}, false, at::kInt).contiguous();
  }
  at::Tensor bias_f;
  if (bias.has_value()) bias_f = bias->to(at::kFloat).contiguous();  // exact widening

  at::Tensor y = at::empty({s.M, s.N}, a_q.options().dtype(s.out_dtype));
  SpArgs args = {};
  args.M = static_cast<int>(s.M);
  args.N = static_cast<int>(s.N);
  args.K = static_cast<int>(s.K);
  args.out = y.data_ptr();
  args.a_scale = a_scale.data_ptr<float>();
  args.a_scale_step = a_scale.numel() == 1 ? 0 : 1;
  args.w_scale = w_scale.data_ptr<float>();
  args.w_scale_step = w_scale.numel() == 1 ? 0 : 1;
  const int32_t* any_int = reinterpret_cast<const int32_t*>(args.a_scale);
  args.has_zero = a_zero.has_value() ? 1 : 0;
  args.a_zero = a_zero.has_value() ? a_zero->data_ptr<int32_t>() : any_int;
  args.a_zero_step = a_zero.has_value() && a_zero->numel() != 1 ? 1 : 0;
  args.colsum = a_zero.has_value() ? colsum.data_ptr<int32_t>() : any_int;
  args.colsum_step = a_zero.has_value() ? 1 : 0;
  args.has_bias = bias.has_value() ? 1 : 0;
  args.bias = bias.has_value() ? bias_f.data_ptr<float>() : args.w_scale;
  args.bias_step = bias.has_value() ? 1 : 0;
  args.vec_store = tma::wgmma_vec_store(s.out_dtype, s.N, true);

  const SpOperands o{values.data_ptr(), meta.data_ptr(), x.data_ptr(), 1};
  const SpTile tile = choose_sp_config(s.M, s.N, s.K, true, caps, op);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_float_cuda(s.out_dtype, op, [&](auto tag) {
    launch_tile<ElS8, decltype(tag)>(tile, o, args, device, caps, stream, op);
  });
  return y;
}

at::Tensor sparse24_gemm_sm90a(const at::Tensor& x_in, const at::Tensor& values_in,
                               const at::Tensor& meta_in, const c10::optional<at::Tensor>& bias) {
  const char* op = "sparse24_gemv";
  const GemvShape s = validate_sparse24_gemv(x_in, values_in, meta_in, bias);
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = check_path(x_in, s.M, s.N, s.K, op);
  const int device = x_in.get_device();

  const at::Tensor x = tma::tma_ready(x_in);
  const at::Tensor values = tma::tma_ready(values_in);
  const at::Tensor meta = tma::tma_ready(meta_in);
  at::Tensor bias_f;
  if (bias.has_value()) bias_f = bias->to(at::kFloat).contiguous();  // exact widening

  at::Tensor y = at::empty({s.M, s.N}, x.options());
  SpArgs args = {};
  args.M = static_cast<int>(s.M);
  args.N = static_cast<int>(s.N);
  args.K = static_cast<int>(s.K);
  args.out = y.data_ptr();
  args.has_zero = 0;
  args.has_bias = bias.has_value() ? 1 : 0;
  // The 16-bit epilogue reads only the bias; every other pointer needs to be valid memory.
  const float* any_float = reinterpret_cast<const float*>(values.data_ptr());
  args.a_scale = any_float;
  args.w_scale = any_float;
  args.a_zero = reinterpret_cast<const int32_t*>(any_float);
  args.colsum = reinterpret_cast<const int32_t*>(any_float);
  args.bias = bias.has_value() ? bias_f.data_ptr<float>() : any_float;
  args.bias_step = bias.has_value() ? 1 : 0;
  args.vec_store = tma::wgmma_vec_store(x.scalar_type(), s.N, false);

  const SpOperands o{values.data_ptr(), meta.data_ptr(), x.data_ptr(), 2};
  const SpTile tile = choose_sp_config(s.M, s.N, s.K, false, caps, op);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (x.scalar_type() == at::kHalf) {
    launch_tile<ElF16, __half>(tile, o, args, device, caps, stream, op);
  } else {
    launch_tile<ElBF16, __nv_bfloat16>(tile, o, args, device, caps, stream, op);
  }
  return y;
}

}  // namespace
}  // namespace sp24
}  // namespace sm90a
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("_sparse24_int8_gemm_sm90a", &torchquant::sm90a::sp24::sparse24_int8_gemm_sm90a);
  m.impl("_sparse24_gemm_sm90a", &torchquant::sm90a::sp24::sparse24_gemm_sm90a);
}
