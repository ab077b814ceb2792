// _fp8_block_gemm_sm90a: the Hopper dequantizing GEMM (kernel: dq_gemm_sm90a_kernels.cuh),
// y = x @ dequantize_fp8_block(w_q, w_scale, block_size, out_dtype=x.dtype)^T (+ bias), fp32
// accumulation, one rounding. QuantLinear's fp8_block prefill calls it instead of
// dequantize_fp8_block + F.linear on sm_90 (the same weight values, no bf16 copy of the
// weight in memory).
//
// Host side: fp8_block_gemv's validator (same messages, under this op's name), this path's
// preconditions (compute capability 9.0, M / N / K ranges), two TMA maps (codes, activations),
// the tile configuration (choose_dq_config) and a persistent launch of at most one CTA per SM,
// in clusters of two when the pair shares the activation tile. No host synchronization.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/checks.h"
#include "common/device.h"
#include "common/pdl.h"
#include "common/sm90a_host.h"
#include "dqgemm/dq_gemm_sm90a_kernels.cuh"

namespace torchquant {
namespace sm90a {
namespace dqg {
namespace {

constexpr const char* kOp = "fp8_block_gemm";

// The tiles (fp8_block; nvfp4 stages hold 32 instead of 64 weight bytes per row, so its
// 256-token tiles fit 6 stages): 128 features x 256 tokens, 5 stages (200 KB), pairs along
// the features multicasting x (256c2) or single CTAs (256c1); 128 x 128, 8 stages (192 KB):
// small M, and grids with fewer 128 x 256 tiles than SMs; 128 x 64, 8 stages (128 KB):
// M <= 64, half the activation traffic of a 128-token tile.
template <bool kFp4, int BT, int CM>
using TileCfg = DqConfig<BT, BT == 256 ? (kFp4 ? 6 : 5) : 8, CM, kFp4 ? 32 : 64>;

enum class DqTile { k256c2, k256c1, k128c1, k64c1 };
constexpr const char* kDqTileNames[] = {"256c2", "256c1", "128c1", "64c1"};  // DqTile's order

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The one dispatch function of this op: the tile configuration for M tokens x N features.
// TORCHQUANT_DQ_WGMMA_TILE=256c2|256c1|128c1|64c1 forces one (tests, benchmarks). Above
// M = 128 the rule is the 2:4 kernel's (same CTA structure and tiles); 64c1 / 128c1 for
// M <= 64 / 128 (64c1 arrived with the scale-load fix and has not been timed against 128c1
// on its own). H200 (results/h200/2026-12-01_dq_wgmma, call 1, fp8, us): 28672x8192
// M = 2048 256c2 1745, 256c1 1776, 128c1 2463; M = 512 256c2 460, 256c1 448, 128c1 602.
DqTile choose_dq_config(int64_t M, int64_t N, const DeviceCaps& caps, const char* op) {
  const int forced = tma::forced_index("TORCHQUANT_DQ_WGMMA_TILE", kDqTileNames, op);
  if (forced >= 0) return static_cast<DqTile>(forced);
  const int64_t f_tiles = ceil_div(N, 128);
  if (M <= 64) return DqTile::k64c1;
  if (M <= 128) return DqTile::k128c1;
  if (f_tiles * ceil_div(M, 256) < caps.sm_count) return DqTile::k128c1;
  if (f_tiles % 2 == 1 && f_tiles < 16) return DqTile::k256c1;
  return DqTile::k256c2;
}

// Split-K factor for a grid of `units` tile units of `num_kb` k-blocks (64 of K each). A split
// costs an fp32 [M, N] slice written and read back plus a second launch, so it is used only
// where the tile grid leaves more than half the SMs idle: the largest power of two keeping
// units * S within the SMs and every split at least 8 k-blocks (512 of K) long.
// TORCHQUANT_DQ_WGMMA_SPLITS=S forces S (1 = never; tests, benchmarks).
// The forced S (clamped to num_kb), or 0 when TORCHQUANT_DQ_WGMMA_SPLITS is unset or empty.
int forced_splits(int64_t num_kb, const char* op) {
  const char* env = std::getenv("TORCHQUANT_DQ_WGMMA_SPLITS");
  if (env == nullptr || env[0] == '\0') return 0;
  const int v = std::atoi(env);
  TORCH_CHECK(v >= 1 && v <= 64, op, ": TORCHQUANT_DQ_WGMMA_SPLITS='", env,
              "' must be an integer in [1, 64]");
  return static_cast<int>(std::min<int64_t>(v, num_kb));
}

// The rule alone (no environment): callers that already read the knob use this.
int split_rule(int64_t units, int64_t num_kb, const DeviceCaps& caps) {
  if (2 * units > caps.sm_count) return 1;
  int S = 1;
  while (units * (2 * S) <= caps.sm_count && num_kb / (2 * S) >= 8) S *= 2;
  return S;
}

int choose_splits(int64_t units, int64_t num_kb, const DeviceCaps& caps, const char* op) {
  if (const int forced = forced_splits(num_kb, op)) return forced;
  return split_rule(units, num_kb, caps);
}

// Split-K, shared by the GEMM and the GEMV launches. With args.splits > 1: the fp32
// [splits, M, N] workspace (every element of every split is written: no zeroing), and a work
// unit per (split, tile unit). The caller keeps the tensor alive until both launches are queued.
at::Tensor split_workspace(DqArgs& args, const at::Tensor& like) {
  at::Tensor ws;
  if (args.splits > 1) {
    ws = at::empty({args.splits, args.M, args.N}, like.options().dtype(at::kFloat));
    args.ws = ws.data_ptr<float>();
    args.num_units *= args.splits;
  }
  return ws;
}

// The second launch of a split run: dq_splitk_reduce_kernel adds the splits into y (`global`:
// nvfp4's global scale, else nullptr). Nothing when there is one split.
template <class T>
void reduce_splits(const DqArgs& args, const float* global, const DeviceCaps& caps,
                   cudaStream_t stream) {
  if (args.splits <= 1) return;
  const int64_t MN = static_cast<int64_t>(args.M) * args.N;
  const int blocks = static_cast<int>(std::min<int64_t>(ceil_div(MN, 256), 8 * caps.sm_count));
  dq_splitk_reduce_kernel<T><<<blocks, 256, 0, stream>>>(args.ws, args.bias, global,
                                                        static_cast<T*>(args.out), MN, args.N,
                                                        args.splits, args.has_bias);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class Cfg, class T, bool kFp4, int kLayout = nvfp4::kLayoutStd>
void launch(const void* w, const void* x, DqArgs args, int device, const DeviceCaps& caps,
            cudaStream_t stream, const at::Tensor& like, const char* op) {
  TORCH_CHECK(Cfg::kSmemBytes <= caps.max_smem_optin, op, ": needs ", Cfg::kSmemBytes,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  const int64_t K = args.K;
  // The weight as TMA sees it: N rows of K (e4m3) or K / 2 (packed e2m1) bytes; the stage box
  // is one swizzle row wide (64 B: 64-byte swizzle; 32 B: 32-byte swizzle). The tiled fp8
  // weight: the 4-D map whose box lands as the same 64 B x kBF rows.
  static_assert(Cfg::kBF % 16 == 0, "whole 16-row tiles per feature tile");
  const CUtensorMap tmap_w =
      !kFp4 && args.w_tiled
          ? tma::make_tmap_fp8_tiled(w, args.N, K, Cfg::kBF / 16, op)
          : tma::make_tmap_2d(w, args.N, kFp4 ? K / 2 : K, Cfg::kAK, Cfg::kBF,
                              kFp4 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_64B, op);
  const CUtensorMap tmap_x = tma::make_tmap_2d(x, args.M, K * 2, Cfg::kBK, Cfg::kBBoxRows,
                                               CU_TENSOR_MAP_SWIZZLE_128B, op);
  args.num_f_tiles = static_cast<int>(ceil_div(args.N, Cfg::kBF));
  args.num_t_tiles = static_cast<int>(ceil_div(args.M, Cfg::kBT));
  args.num_f_units = static_cast<int>(ceil_div(args.num_f_tiles, Cfg::kCM));
  args.num_units = args.num_f_units * args.num_t_tiles;
  args.num_kb = static_cast<int>(ceil_div(K, Cfg::kKS));
  args.group_units = std::max(1, 16 / Cfg::kCM);
  const int S0 = choose_splits(args.num_units, args.num_kb, caps, op);
  args.kb_per_split = static_cast<int>(ceil_div(args.num_kb, S0));
  // nvfp4 with 16-byte scale rows loads 4 stages' scales at once from a split's first stage:
  // splits start at multiples of 4 stages.
  if (kFp4 && args.sc_wide4) args.kb_per_split = static_cast<int>(ceil_div(args.kb_per_split, 4) * 4);
  args.splits = static_cast<int>(ceil_div(args.num_kb, args.kb_per_split));  // none empty
  const at::Tensor ws = split_workspace(args, like);

  const auto kernel = dq_gemm_sm90a_kernel<Cfg, T, kFp4, kLayout>;
  const int max_ctas = tma::resident_ctas(reinterpret_cast<const void*>(kernel), Cfg::kThreads,
                                          Cfg::kSmemBytes, Cfg::kCM, device, caps);
  const int clusters = std::min(args.num_units, max_ctas / Cfg::kCM);
  tma::launch_clusters(kernel, clusters * Cfg::kCM, Cfg::kThreads, Cfg::kSmemBytes, Cfg::kCM,
                       stream, tmap_w, tmap_x, args);
  reduce_splits<T>(args, kFp4 ? args.global : nullptr, caps, stream);
}

// Launches tile t of the format's kernel for x's dtype (fp16 or bf16); layout: nvfp4's word
// layout (1 or 3: bf16 x, 2: fp16 x; checked by the op, and refused here for any other pairing).
template <bool kFp4>
void launch_for(const at::Tensor& x, DqTile t, const void* w, const DqArgs& args, int device,
                const DeviceCaps& caps, const char* op, int64_t layout = nvfp4::kLayoutStd) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  auto go = [&](auto elem, auto layout_c) {
    using T = decltype(elem);
    constexpr int L = decltype(layout_c)::value;
    switch (t) {
      case DqTile::k256c2: return launch<TileCfg<kFp4, 256, 2>, T, kFp4, L>(w, x.data_ptr(), args, device, caps, stream, x, op);
      case DqTile::k256c1: return launch<TileCfg<kFp4, 256, 1>, T, kFp4, L>(w, x.data_ptr(), args, device, caps, stream, x, op);
      case DqTile::k128c1: return launch<TileCfg<kFp4, 128, 1>, T, kFp4, L>(w, x.data_ptr(), args, device, caps, stream, x, op);
      case DqTile::k64c1: return launch<TileCfg<kFp4, 64, 1>, T, kFp4, L>(w, x.data_ptr(), args, device, caps, stream, x, op);
    }
  };
  TORCH_CHECK(nvfp4::for_dtype_layout<kFp4>(x.scalar_type() == at::kHalf, layout, go), op,
              ": no decoding GEMM reads layout ", layout, " with ", x.scalar_type(), " x");
}

// This path's preconditions after the op's validator (`what`: require_sm90a's message prefix).
const DeviceCaps& check_path(const at::Tensor& x, const GemvShape& s, const char* op,
                             const char* what = "") {
  TORCH_CHECK(x.is_cuda(), op, ": x must be a CUDA tensor, got ", x.device());
  TORCH_CHECK(s.K < (int64_t(1) << 26), op, ": K = ", s.K, " must be below 2^26");
  return tma::require_sm90a(s.M, s.N, x.get_device(), op, what);
}

// The fields both ops fill the same way: shape, output, bias (fp32, or `any_float` with step
// 0 when there is none: the pointer must be valid memory), no split yet.
DqArgs base_args(const GemvShape& s, const at::Tensor& y, const at::Tensor& bias_f, bool has_bias,
                 const float* any_float) {
  DqArgs args = {};
  args.M = static_cast<int>(s.M);
  args.N = static_cast<int>(s.N);
  args.K = static_cast<int>(s.K);
  args.out = y.data_ptr();
  args.has_bias = has_bias ? 1 : 0;
  args.bias = has_bias ? bias_f.data_ptr<float>() : any_float;
  args.bias_step = has_bias ? 1 : 0;
  args.splits = 1;
  args.vec_store = tma::wgmma_vec_store(y.scalar_type(), s.N, false);
  return args;
}

// What both fp8_block ops launch with: x and the codes with TMA-ready bases, y, and the
// arguments (shape, output, bias widened to fp32, scales).
struct Fp8Launch {
  at::Tensor x, w, bias_f, y;
  DqArgs args;
};

Fp8Launch fp8_launch_args(const at::Tensor& x_in, const at::Tensor& w_in,
                          const at::Tensor& w_scale, int64_t block_size,
                          const c10::optional<at::Tensor>& bias, const GemvShape& s) {
  Fp8Launch l;
  l.x = tma::tma_ready(x_in);
  l.w = tma::tma_ready(w_in);
  if (bias.has_value()) l.bias_f = bias->to(at::kFloat).contiguous();  // exact widening
  l.y = at::empty({s.M, s.N}, l.x.options());
  l.args = base_args(s, l.y, l.bias_f, bias.has_value(), w_scale.data_ptr<float>());
  l.args.w_scale = w_scale.data_ptr<float>();
  l.args.nb = static_cast<int>(ceil_div(s.K, block_size));
  l.args.spb = static_cast<int>(block_size / 16);
  return l;
}

// What both nvfp4 ops launch with: x, the packed codes and the block scales with TMA-ready
// (16-byte aligned) bases, y, and the arguments (shape, output, bias widened to fp32, the scale
// rows, the global scale on the device).
struct Nvfp4Launch {
  at::Tensor x, w, w_scale, bias_f, y;
  DqArgs args;
};

Nvfp4Launch nvfp4_launch_args(const at::Tensor& x_in, const at::Tensor& w_in,
                              const at::Tensor& w_scale_in, const at::Tensor& global_scale,
                              const c10::optional<at::Tensor>& bias, const GemvShape& s) {
  Nvfp4Launch l;
  l.x = tma::tma_ready(x_in);
  l.w = tma::tma_ready(w_in);
  l.w_scale = tma::tma_ready(w_scale_in);
  if (bias.has_value()) l.bias_f = bias->to(at::kFloat).contiguous();  // exact widening
  l.y = at::empty({s.M, s.N}, l.x.options());
  l.args = base_args(s, l.y, l.bias_f, bias.has_value(), global_scale.data_ptr<float>());
  l.args.w_scale8 = static_cast<const uint8_t*>(l.w_scale.data_ptr());
  l.args.global = global_scale.data_ptr<float>();
  l.args.sc_row_bytes = static_cast<int>(s.K / 16);
  return l;
}

at::Tensor fp8_block_gemm_sm90a(const at::Tensor& x_in, const at::Tensor& w_in,
                                const at::Tensor& w_scale, int64_t block_size,
                                const c10::optional<at::Tensor>& bias, bool tiled) {
  const GemvShape s = validate_fp8_block_gemv(x_in, w_in, w_scale, block_size, bias, kOp);
  if (tiled) check_fp8_tiled_shape(s.N, s.K, kOp);
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = check_path(x_in, s, kOp);
  const int device = x_in.get_device();
  Fp8Launch l = fp8_launch_args(x_in, w_in, w_scale, block_size, bias, s);
  l.args.w_tiled = tiled ? 1 : 0;
  launch_for<false>(l.x, choose_dq_config(s.M, s.N, caps, kOp), l.w.data_ptr(), l.args, device,
                    caps, kOp);
  return l.y;
}

// _fp8_block_gemv_sm90a: fp8_block_gemv's path "wgmma" (the public op reaches it through the
// dispatcher, fp8_block_gemv.cu), dq_gemv_sm90a_kernel: fp8_block_gemv's contract (exact
// products, fp32 sums per scale block times the block's scale, + bias, one rounding) on
// 128-feature x 16-token tiles with 128-wide K stages; any M runs (ceil(M / 16) token tiles),
// the dispatch sends decode here. Preconditions beyond the op's: compute capability 9.0,
// block_size % 64 == 0, K % 128 == 0.
//
// Tiles (TORCHQUANT_FP8_WGMMA_TILE=16x1|16x2|16x2s3 forces one; tests, A/B):
//   16x2  two CTAs per SM, 5 stages each (consumers at 96 registers): it was faster than 16x1
//         on every shape of the H200 A/B (results/h200/2026-12-03f_fp8_wgmma_gemv, call 2,
//         us, 16x1 / 16x2, fp16, M = 1 and 16: 28672x8192 73.8 / 65.2, 74.6 / 65.0;
//         128256x4096 142.5 / 134.7, 145.5 / 140.5; 57344x8192 141.9 / 127.5; 14336x4096
//         22.4 / 20.3, 22.7 / 20.8; bf16 28672x8192 92.4 / 78.2), including grids of fewer
//         units than SMs;
//   16x2s3  the same with 3 stages (61 KB instead of 101 KB per CTA);
//   16x1  one CTA per SM, 10 stages.
// Unset: 16x2s3 when the grid has more CTAs than SMs, else 16x2 (choose_gemv_tile).
// Split-K (choose_splits) where the units fill at most half the SMs.
using GemvCfg1 = DqGemvConfig<10, 1>;
using GemvCfg2 = DqGemvConfig<5, 2>;
using GemvCfg2s3 = DqGemvConfig<3, 2>;

enum class GemvTile { k16x1, k16x2, k16x2s3 };
constexpr const char* kGemvTileNames[] = {"16x1", "16x2", "16x2s3"};  // GemvTile's order

// The GEMV's K split: split_rule's (which keeps units x S within the SMs, one CTA each), or
// more where nearly every SM then holds two CTAs, which the GEMV tiles run side by side: the
// largest S with units x S <= 2 x SMs, taken when units x S > 1.75 x SMs, every split keeps
// >= 1536 of K, and the grid has one token tile (M <= 16). A forced TORCHQUANT_DQ_WGMMA_SPLITS
// (gemv_grid) bypasses both. H200, path wgmma, bf16, us, M = 8 (16 alike; results/h200/
// 2026-12-05e, calls 4-5): nvfp4 8192x8192 (64 tiles) S = 2 20.4-20.7 -> 4 18.2-18.4;
// 8192x28672 2 -> 4 59.9-60.1 -> 45.5; 10240x8192 (80 tiles) 1 -> 3 28.7-28.8 -> 21.3-21.5;
// 4096x14336 4 -> 8 (1792 of K per split) 18.3-18.4 -> 16.8; fp8 10240x8192 M = 16 39.2 -> 30.3.
// Where it does not apply the split measured no better: 4096x11008 (S = 8 would split 1376 of
// K) 4 14.1 / 8 15.2; 4096x4096 4 9.2 / 8 10.1; 8192x4096 2 11.8 / 4 12.7; 14336x4096 (224
// CTAs at S = 2, not > 1.75 x SMs) 1 16.0 / 2 17.4; and grids between one and two CTAs per SM
// lost to the one-CTA grid beside them (4096x14336 S = 6, 192 CTAs: 19.4 against S = 4's 18.3).
int gemv_splits(int64_t units, int64_t t_tiles, int64_t K, int s0, const DeviceCaps& caps) {
  if (t_tiles != 1 || units <= 0) return s0;
  const int64_t s = 2 * int64_t{caps.sm_count} / units;
  if (s > s0 && 4 * units * s > 7 * int64_t{caps.sm_count} && K / s >= 1536) return static_cast<int>(s);
  return s0;
}

// The grid of a GEMV launch (fp8_block's or nvfp4's; every tile of both is 128 features x 16
// tokens, with `stage_k` of K per stage: 128 or 256): tiles, K splits, and units = tiles x
// splits (the CTAs it wants).
void gemv_grid(DqArgs& args, const DeviceCaps& caps, const char* op, int stage_k) {
  static_assert(GemvCfg1::kBF == 128 && GemvCfg2::kBF == 128 && GemvCfg2s3::kBF == 128 &&
                    GemvCfg1::kBT == 16 && GemvCfg2::kBT == 16 && GemvCfg2s3::kBT == 16 &&
                    GemvCfg1::kKS == GemvCfg2::kKS && GemvCfg2::kKS == GemvCfg2s3::kKS,
                "one grid for every GEMV tile");
  args.num_f_tiles = static_cast<int>(ceil_div(args.N, 128));
  args.num_t_tiles = static_cast<int>(ceil_div(args.M, 16));
  args.num_f_units = args.num_f_tiles;
  args.num_units = args.num_f_units * args.num_t_tiles;
  args.num_kb = static_cast<int>(args.K / stage_k);
  args.group_units = 16;
  // split_rule counts 64-K blocks (each split at least 512 of K); a split here is whole
  // stages.
  const int64_t kb64 = (stage_k / 64) * int64_t{args.num_kb};
  const int forced = forced_splits(kb64, op);
  const int S0 = forced ? forced
                        : gemv_splits(args.num_units, args.num_t_tiles, args.K,
                                      split_rule(args.num_units, kb64, caps), caps);
  args.kb_per_split = static_cast<int>(ceil_div(args.num_kb, std::min(S0, args.num_kb)));
  args.splits = static_cast<int>(ceil_div(args.num_kb, args.kb_per_split));  // none empty
}

// The ring depth of the two-CTA tile. Each SM holds up to two CTAs, i.e. up to 10 stages x
// 16 KB of weight in flight at 5 stages. Where the grid puts two CTAs on an SM, 3 stages each
// streamed faster; where it has at most one CTA per SM, that CTA's 5 stages did. H200, two
// machines (results/h200/2026-12-04e_depth, calls 1 and 2), cold L2, us, 5 / 3 stages:
//   more CTAs than SMs: 28672x8192 (224) fp16 M = 8 65.9, 65.2 / 64.5, 63.2; M = 16 66.8,
//   65.4 / 64.5, 63.5; bf16 M = 16 69.1, 68.3 / 66.9, 66.0; 57344x8192 (448) fp16 M = 8
//   129.6, 129.8 / 124.3, 126.9; 128256x4096 (1002) fp16 M = 16 139.6, 139.0 / 137.8, 137.2,
//   bf16 143.0, 141.0 / 140.3, 138.2;
//   at most one per SM: 14336x4096 (112) fp16 M = 8 20.7, 20.7 / 21.5, 21.5; 8192x28672 (64
//   tiles x 2 splits) fp16 M = 16 67.3 / 69.6; 10240x8192 (80) level (35.0 / 35.4).
// 4 stages sat between (call 1); 2 stages lost everywhere (call 2: 28672x8192 fp16 M = 16
// 65.4; 14336x4096 26.9; 8192x28672 85.8).
// True where the grid (feature tiles x token tiles x K splits) has more CTAs than SMs, so two
// CTAs share an SM: there the two-CTA tiles of both GEMVs take their shallower ring.
bool gemv_ctas_share_sms(const DqArgs& grid, const DeviceCaps& caps) {
  return int64_t{grid.num_units} * grid.splits > caps.sm_count;
}

GemvTile choose_gemv_tile(const DqArgs& grid, const DeviceCaps& caps, const char* op) {
  const int forced = tma::forced_index("TORCHQUANT_FP8_WGMMA_TILE", kGemvTileNames, op);
  if (forced >= 0) return static_cast<GemvTile>(forced);
  return gemv_ctas_share_sms(grid, caps) ? GemvTile::k16x2s3 : GemvTile::k16x2;
}

// bf16's conversion: through fp32 (e4m3x2_bf16_via_f32), or the re-seat (e4m3x2_exact) when
// TORCHQUANT_FP8_WGMMA_BF16=reseat (A/B, tests; tile 16x2 only). H200 A/B (call 3, us, re-seat /
// f32, M = 1 and 16): 28672x8192 78.5 / 67.6, 78.7 / 68.0; 128256x4096 155.8 / 140.0, 164.4 /
// 142.1; 14336x4096 27.0 / 23.3; 10240x8192 45.5 / 40.3; 8192x28672 78.3 / 72.1.
bool bf16_reseat(const char* op) {
  const char* env = std::getenv("TORCHQUANT_FP8_WGMMA_BF16");
  if (env == nullptr || env[0] == '\0' || std::strcmp(env, "f32") == 0) return false;
  TORCH_CHECK(std::strcmp(env, "reseat") == 0, op, ": TORCHQUANT_FP8_WGMMA_BF16='", env,
              "' is not one of f32, reseat");
  return true;
}

// kTiled: the tiled weight (args.w_tiled; two 4-D boxes of 64-byte pieces per stage).
template <class Cfg, class T, bool kViaF32 = false, bool kTiled = false>
void launch_gemv(const void* w, const void* x, DqArgs args, int device, const DeviceCaps& caps,
                 cudaStream_t stream, const at::Tensor& like, const char* op, WeightWritten written) {
  TORCH_CHECK(Cfg::kSmemBytes <= caps.max_smem_optin, op, ": needs ", Cfg::kSmemBytes,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  const int64_t K = args.K;
  const CUtensorMap tmap_w =
      kTiled ? tma::make_tmap_fp8_tiled(w, args.N, K, Cfg::kBF / 16, op)
             : tma::make_tmap_2d(w, args.N, K, Cfg::kKS, Cfg::kBF, CU_TENSOR_MAP_SWIZZLE_128B, op);
  const CUtensorMap tmap_x = tma::make_tmap_2d(x, args.M, K * 2, 128, Cfg::kBT,
                                               CU_TENSOR_MAP_SWIZZLE_128B, op);
  // args carries gemv_grid's tiles and splits.
  const at::Tensor ws = split_workspace(args, like);
  const auto kernel = dq_gemv_sm90a_kernel<Cfg, T, kViaF32, kTiled>;
  const int max_ctas = tma::resident_ctas(reinterpret_cast<const void*>(kernel), Cfg::kThreads,
                                          Cfg::kSmemBytes, 1, device, caps, Cfg::kPerSm);
  const PdlMode pdl = pdl_mode(device, PdlKernel::kHopperGemv, written);  // common/pdl.h
  args.pdl_early = pdl.early ? 1 : 0;
  launch_kernel(kernel, dim3(std::min(args.num_units, max_ctas)), dim3(Cfg::kThreads),
                Cfg::kSmemBytes, stream, pdl.on, tmap_w, tmap_x, args);
  reduce_splits<T>(args, nullptr, caps, stream);
}

at::Tensor fp8_block_gemv_sm90a(const at::Tensor& x_in, const at::Tensor& w_in,
                                const at::Tensor& w_scale, int64_t block_size,
                                const c10::optional<at::Tensor>& bias, bool static_weight,
                                bool tiled) {
  constexpr const char* op = "fp8_block_gemv";
  const GemvShape s = validate_fp8_block_gemv(x_in, w_in, w_scale, block_size, bias, op);
  if (tiled) check_fp8_tiled_shape(s.N, s.K, op);
  TORCH_CHECK(block_size % 64 == 0, op, ": path 'wgmma' needs block_size % 64 == 0 (a scale "
              "block is whole 64-wide wgmma groups), got ", block_size,
              "; path 'mma' takes every block size");
  TORCH_CHECK(s.K % 128 == 0, op, ": path 'wgmma' needs K % 128 == 0 (its stages are 128 wide), "
              "got K = ", s.K, "; path 'mma' takes K % 16 == 0");
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = check_path(x_in, s, op, "path 'wgmma' ");
  const int device = x_in.get_device();
  const Fp8Launch l = fp8_launch_args(x_in, w_in, w_scale, block_size, bias, s);
  const at::Tensor& x = l.x;
  const at::Tensor& w = l.w;
  DqArgs args = l.args;
  args.w_tiled = tiled ? 1 : 0;
  gemv_grid(args, caps, op, GemvCfg2::kKS);
  const GemvTile tile = choose_gemv_tile(args, caps, op);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // (a weight copied for TMA alignment was written by the kernel just before)
  const WeightWritten written = weight_written(static_weight, w.data_ptr() != w_in.data_ptr());
  // kViaF32: bf16's default conversion (fp16 has its own, exact in one instruction).
  auto go_tiles = [&](auto elem, auto via_f32, auto tiled_c) {
    using T = decltype(elem);
    constexpr bool kViaF32 = decltype(via_f32)::value;
    constexpr bool kTiled = decltype(tiled_c)::value;
    switch (tile) {
      case GemvTile::k16x1:
        return launch_gemv<GemvCfg1, T, kViaF32, kTiled>(w.data_ptr(), x.data_ptr(), args, device,
                                                         caps, stream, x, op, written);
      case GemvTile::k16x2s3:
        return launch_gemv<GemvCfg2s3, T, kViaF32, kTiled>(w.data_ptr(), x.data_ptr(), args, device,
                                                           caps, stream, x, op, written);
      case GemvTile::k16x2:
        break;
    }
    launch_gemv<GemvCfg2, T, kViaF32, kTiled>(w.data_ptr(), x.data_ptr(), args, device, caps, stream,
                                              x, op, written);
  };
  auto go = [&](auto elem, auto via_f32) {
    if (tiled) {
      go_tiles(elem, via_f32, std::true_type{});
    } else {
      go_tiles(elem, via_f32, std::false_type{});
    }
  };
  if (x.scalar_type() == at::kHalf) {
    go(__half{}, std::false_type{});
  } else if (bf16_reseat(op)) {
    TORCH_CHECK(!tiled, op, ": TORCHQUANT_FP8_WGMMA_BF16=reseat (an A/B knob) is built for the "
                "row-major weight only; unset it for a tiled one");
    launch_gemv<GemvCfg2, __nv_bfloat16, false>(w.data_ptr(), x.data_ptr(), args, device, caps,
                                                stream, x, op, written);
  } else {
    go(__nv_bfloat16{}, std::true_type{});
  }
  return l.y;
}

// _nvfp4_gemm_sm90a: nvfp4_gemv's contract (y = global * sum x * (e2m1 * bs) + bias, exact
// products, fp32 accumulation; the GEMV's validation under the name nvfp4_gemm) on the same
// wgmma kernel, for K % 64 == 0.
at::Tensor nvfp4_gemm_sm90a(const at::Tensor& x_in, const at::Tensor& w_in,
                            const at::Tensor& w_scale_in, const at::Tensor& global_scale,
                            const c10::optional<at::Tensor>& bias, int64_t layout) {
  constexpr const char* op = "nvfp4_gemm";
  const GemvShape s = validate_nvfp4_gemv(x_in, w_in, w_scale_in, global_scale, bias, op);
  check_nvfp4_layout(layout, x_in.scalar_type(), op);
  TORCH_CHECK(s.K % 64 == 0, op, ": K must be a multiple of 64 on this path (a stage is 64 of K "
              "and its 4 block scales one aligned 32-bit word), got K = ", s.K,
              "; nvfp4_gemv takes K % 16 == 0");
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = check_path(x_in, s, op);
  const int device = x_in.get_device();

  Nvfp4Launch l = nvfp4_launch_args(x_in, w_in, w_scale_in, global_scale, bias, s);
  l.args.sc_wide4 = s.K % 256 == 0 ? 1 : 0;
  launch_for<true>(l.x, choose_dq_config(s.M, s.N, caps, op), l.w.data_ptr(), l.args, device, caps, op,
                   layout);
  return l.y;
}

// _nvfp4_gemv_sm90a: nvfp4_gemv's path "wgmma" (the public op reaches it through the
// dispatcher, nvfp4_gemv.cu), fp4_gemv_sm90a_kernel: nvfp4_gemv's contract (exact products
// e2m1 * bs * 2^-7 in the 16-bit A operand, fp32 accumulation, * 2^7 * global, + bias, one
// rounding) on 128-feature x 16-token tiles with 256-wide K stages (docs/nvfp4_gemv.md 20);
// any M runs (ceil(M / 16) token tiles). Preconditions beyond the op's: compute capability
// 9.0, K % 256 == 0.
//
// Tiles (TORCHQUANT_NVFP4_WGMMA_TILE=16x2s3|16x2s4|16x1 forces one; tests, A/B): two CTAs per
// SM with 3 or 4 stages of 26 KB (18 KB of it by TMA), or one CTA with 8. Unset: 16x2s3 when
// the grid has more CTAs than SMs, else 16x2s4 (the fp8 GEMV's measured rule: shallower rings
// where two CTAs share an SM).
using Fp4GemvCfg3 = Fp4GemvConfig<3, 2>;
using Fp4GemvCfg4 = Fp4GemvConfig<4, 2>;
using Fp4GemvCfg1 = Fp4GemvConfig<8, 1>;

enum class Fp4GemvTile { k16x2s3, k16x2s4, k16x1 };
constexpr const char* kFp4GemvTileNames[] = {"16x2s3", "16x2s4", "16x1"};  // Fp4GemvTile's order

Fp4GemvTile choose_fp4_gemv_tile(const DqArgs& grid, const DeviceCaps& caps, const char* op) {
  const int forced = tma::forced_index("TORCHQUANT_NVFP4_WGMMA_TILE", kFp4GemvTileNames, op);
  if (forced >= 0) return static_cast<Fp4GemvTile>(forced);
  return gemv_ctas_share_sms(grid, caps) ? Fp4GemvTile::k16x2s3 : Fp4GemvTile::k16x2s4;
}

template <class Cfg, class T, int L>
void launch_fp4_gemv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& sc, DqArgs args,
                     int device, const DeviceCaps& caps, cudaStream_t stream, const char* op,
                     WeightWritten written) {
  TORCH_CHECK(Cfg::kSmemBytes <= caps.max_smem_optin, op, ": needs ", Cfg::kSmemBytes,
              " bytes of shared memory per block, the device allows ", caps.max_smem_optin);
  const int64_t K = args.K;
  const CUtensorMap tmap_w = tma::make_tmap_2d(w.data_ptr(), args.N, K / 2, Cfg::kAK, Cfg::kBF,
                                               CU_TENSOR_MAP_SWIZZLE_128B, op);
  const CUtensorMap tmap_s = tma::make_tmap_2d(sc.data_ptr(), args.N, K / 16, Cfg::kSK, Cfg::kBF,
                                               CU_TENSOR_MAP_SWIZZLE_NONE, op);
  const at::Tensor ws = split_workspace(args, x);
  const auto kernel = fp4_gemv_sm90a_kernel<Cfg, T, L>;
  const int max_ctas = tma::resident_ctas(reinterpret_cast<const void*>(kernel), Cfg::kThreads,
                                          Cfg::kSmemBytes, 1, device, caps, Cfg::kPerSm);
  const PdlMode pdl = pdl_mode(device, PdlKernel::kHopperGemv, written);  // common/pdl.h
  args.pdl_early = pdl.early ? 1 : 0;
  launch_kernel(kernel, dim3(std::min(args.num_units, max_ctas)), dim3(Cfg::kThreads),
                Cfg::kSmemBytes, stream, pdl.on, tmap_w, tmap_s, static_cast<const T*>(x.data_ptr()),
                args);
  reduce_splits<T>(args, args.global, caps, stream);
}

at::Tensor nvfp4_gemv_sm90a(const at::Tensor& x_in, const at::Tensor& w_in,
                            const at::Tensor& w_scale_in, const at::Tensor& global_scale,
                            const c10::optional<at::Tensor>& bias, int64_t layout, bool static_weight) {
  constexpr const char* op = "nvfp4_gemv";
  const GemvShape s = validate_nvfp4_gemv(x_in, w_in, w_scale_in, global_scale, bias, op);
  check_nvfp4_layout(layout, x_in.scalar_type(), op);
  TORCH_CHECK(s.K % 256 == 0, op, ": path 'wgmma' needs K % 256 == 0 (its stages are 256 wide "
              "and each row's block scales one TMA row of K / 16 bytes, a multiple of 16), got "
              "K = ", s.K, "; path 'mma' takes K % 16 == 0");
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = check_path(x_in, s, op, "path 'wgmma' ");
  const int device = x_in.get_device();

  // x's 16-byte loads by the producer need an aligned base (K % 256 then aligns every row).
  const Nvfp4Launch l = nvfp4_launch_args(x_in, w_in, w_scale_in, global_scale, bias, s);
  const at::Tensor& x = l.x;
  const at::Tensor& w = l.w;
  const at::Tensor& w_scale = l.w_scale;
  DqArgs args = l.args;
  static_assert(Fp4GemvCfg3::kBF == 128 && Fp4GemvCfg4::kBF == 128 && Fp4GemvCfg1::kBF == 128 &&
                    Fp4GemvCfg3::kBT == 16 && Fp4GemvCfg4::kBT == 16 && Fp4GemvCfg1::kBT == 16 &&
                    Fp4GemvCfg3::kKS == Fp4GemvCfg4::kKS && Fp4GemvCfg4::kKS == Fp4GemvCfg1::kKS,
                "gemv_grid's tile for every nvfp4 GEMV configuration");
  gemv_grid(args, caps, op, Fp4GemvCfg3::kKS);
  const Fp4GemvTile tile = choose_fp4_gemv_tile(args, caps, op);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // (codes or scales copied for TMA alignment were written by the kernel just before)
  const WeightWritten written = weight_written(
      static_weight, w.data_ptr() != w_in.data_ptr() || w_scale.data_ptr() != w_scale_in.data_ptr());
  auto go = [&](auto elem, auto layout_c) {
    using T = decltype(elem);
    constexpr int L = decltype(layout_c)::value;
    switch (tile) {
      case Fp4GemvTile::k16x2s3:
        return launch_fp4_gemv<Fp4GemvCfg3, T, L>(x, w, w_scale, args, device, caps, stream, op, written);
      case Fp4GemvTile::k16x2s4:
        return launch_fp4_gemv<Fp4GemvCfg4, T, L>(x, w, w_scale, args, device, caps, stream, op, written);
      case Fp4GemvTile::k16x1:
        return launch_fp4_gemv<Fp4GemvCfg1, T, L>(x, w, w_scale, args, device, caps, stream, op, written);
    }
  };
  TORCH_CHECK(nvfp4::for_dtype_layout(x.scalar_type() == at::kHalf, layout, go), op,
              ": no decoding GEMV reads layout ", layout, " with ", x.scalar_type(), " x");
  return l.y;
}

}  // namespace
}  // namespace dqg
}  // namespace sm90a
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("_fp8_block_gemm_sm90a", &torchquant::sm90a::dqg::fp8_block_gemm_sm90a);
  m.impl("_nvfp4_gemm_sm90a", &torchquant::sm90a::dqg::nvfp4_gemm_sm90a);
  m.impl("_fp8_block_gemv_sm90a", &torchquant::sm90a::dqg::fp8_block_gemv_sm90a);
  m.impl("_nvfp4_gemv_sm90a", &torchquant::sm90a::dqg::nvfp4_gemv_sm90a);
}
