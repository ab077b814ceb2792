// The tiled fp8_block weight (fp8_block_tile; fp8_block_gemv(..., tiled=True)): the same bytes as
// the row-major [N, K] e4m3 weight and [N, nb] fp32 block scales, stored per 16-row tile so that
// what the direct GEMV's warp loads together lies together (fp8_kernels.cuh fp8_gemv_direct_kernel,
// docs/fp8_gemv.md "The tiled weight"):
//
//   weight  [N / 16][K / 64][16][64] bytes: tile i, 64-byte piece p, row r: bytes 64 p .. 64 p + 63
//           of row 16 i + r. A piece of a tile is one 1 KB run.
//   scales  [N / 16][nb][16] floats: tile i, block b, row r: w_scale[16 i + r][b]. A block's 16
//           scales of a tile are one 64-byte run.
//
// Needs N % 16 == 0 and K % 64 == 0. Shapes and dtypes are kept ([N, K] e4m3, [N, nb] fp32), so
// every shape check of the row-major operands still applies. The permutation is a reshape and a
// transpose of whole elements, done with ATen on the tensors' own device (CPU and CUDA alike):
// exact both ways.
#pragma once

#include <ATen/ATen.h>

#include <tuple>

#include "common/checks.h"
#include "common/row_tiles.h"

namespace torchquant {
namespace fp8 {

constexpr int64_t kTilePiece = 64;  // bytes (codes) per piece of a row; tiles of kRowTileRows rows

// fp8_block_tile's operands: w_q e4m3 [N, K], w_scale fp32 [N, nb] (nb >= 1), both contiguous and
// on one device, N % 16 == 0, K % 64 == 0.
inline void validate_fp8_tile(const at::Tensor& w_q, const at::Tensor& w_scale, const char* op = "fp8_block_tile") {
  check_fp8_weight_pair(w_q, w_scale, op, "w_scale");
  const int64_t N = w_q.size(0), K = w_q.size(1);
  TORCH_CHECK(w_scale.size(0) == N && w_scale.size(1) >= 1, op, ": w_scale must be [N, nb] with N = ", N,
              " and nb >= 1 (quantize_fp8_block's scales), got ", shape_str(w_scale.sizes()));
  check_fp8_tiled_shape(N, K, op);
}

// Row-major -> tiled, or back (inverse): common/row_tiles.h's order with pieces of 64 weight bytes
// and of one scale (a block's). Returns new contiguous tensors of the same shapes.
inline std::tuple<at::Tensor, at::Tensor> tile(const at::Tensor& w_q, const at::Tensor& w_scale, bool inverse) {
  // As bytes: the permutation moves whole elements, and a byte copy needs no float8 kernel.
  const at::Tensor wt = tile_rows(w_q.view(at::kByte), kTilePiece, inverse).view(at::kFloat8_e4m3fn);
  return {wt, tile_rows(w_scale, 1, inverse)};
}

// The op (CPU and CUDA register this one function).
inline std::tuple<at::Tensor, at::Tensor> fp8_block_tile_op(const at::Tensor& w_q, const at::Tensor& w_scale,
                                                            bool inverse) {
  validate_fp8_tile(w_q, w_scale);
  return tile(w_q, w_scale, inverse);
}

}  // namespace fp8
}  // namespace torchquant
