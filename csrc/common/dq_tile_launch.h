#pragma once
// Host side of the tiled dequantizing GEMM (common/dq_tile.cuh), shared by
// fp8_block_gemv and nvfp4_gemv: grid and K-split choice, the fp32 split
// workspace, the launch and the ordered reduce. Included only by .cu files.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/device.h"
#include "common/dq_tile.cuh"

namespace torchquant {
namespace dqt {

// K splits: none when the tiles fill `slots` (SMs times resident blocks);
// else enough to fill them, each split keeping >= 512 of K, at most 16.
// TORCHQUANT_TILE_SPLITS=S (read per call; tests and benchmarks) forces S
// (capped by the k tiles). Returns the count after rounding the k tiles per
// split up (no empty split).
inline int choose_splits(int64_t tiles, int ktiles, int64_t slots, int bk) {
  int splits = 1;
  if (const int forced = env_int("TORCHQUANT_TILE_SPLITS"); forced >= 1) {
    splits = std::min(forced, ktiles);
  } else if (tiles < slots) {
    const int64_t min_kt = std::max(1, 512 / bk);
    splits = static_cast<int>(std::min<int64_t>({slots / tiles, ktiles / min_kt, 16}));
    splits = std::max(splits, 1);
  }
  const int per = (ktiles + splits - 1) / splits;
  return (ktiles + per - 1) / per;
}

// Launches Format's kernel for `a`, whose operand, scale and shape fields the
// caller has filled (M, N, K, x, w, wsc, bias, y; global / gfactor for
// global-scale formats, bs / nb for block-scaled ones); this fills the grid
// fields and the split workspace (allocated from `like`'s caching allocator,
// so graph capture works). `op` names the op in errors.
template <typename T, class Format>
void launch_tile(Args a, int sm_count, cudaStream_t stream, const at::Tensor& like, const char* op) {
  using Cfg = typename Format::Cfg;
  const int64_t mtiles = (int64_t{a.M} + Cfg::kBM - 1) / Cfg::kBM;
  const int64_t ntiles = (int64_t{a.N} + Cfg::kBN - 1) / Cfg::kBN;
  const int64_t tiles = mtiles * ntiles;
  TORCH_CHECK(tiles <= std::numeric_limits<int>::max(), op, ": grid of ", tiles, " tiles is too large");
  a.mtiles = static_cast<int>(mtiles);
  a.ktiles = (a.K + Cfg::kBK - 1) / Cfg::kBK;
  const int splits = choose_splits(tiles, a.ktiles, int64_t{sm_count} * Cfg::kMinBlocks, Cfg::kBK);
  a.kt_per_split = (a.ktiles + splits - 1) / splits;
  at::Tensor part;
  if (splits > 1) {
    part = at::empty({splits, int64_t{a.M}, int64_t{a.N}}, like.options().dtype(at::kFloat));
    a.part = part.data_ptr<float>();
  }
  constexpr int smem = Cfg::kStages * Cfg::kXTile + Cfg::kWTile + Cfg::kStages * Format::kRawStage;
  auto kernel = dq_tile_kernel<T, Format>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), c10::cuda::current_device(), smem);
  kernel<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(splits)), Cfg::kThreads, smem,
           stream>>>(a);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (splits > 1) {
    const int64_t total = int64_t{a.M} * a.N;
    const int blocks = static_cast<int>(std::min<int64_t>((total + 255) / 256, int64_t{sm_count} * 8));
    dq_tile_reduce_kernel<T><<<blocks, 256, 0, stream>>>(
        a.part, Format::kGlobal ? a.global : nullptr, a.gfactor, static_cast<const T*>(a.bias),
        static_cast<T*>(a.y), a.M, a.N, splits);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

}  // namespace dqt
}  // namespace torchquant
