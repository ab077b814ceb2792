// Layout 4's tiling (nvfp4_layout.h kLayoutTiled; docs/nvfp4_gemv.md 40), host side, any device.
//
// The direct GEMV's lane (g, t) loads 16 bytes of rows g and g + 8 of a 16-row tile per 64-byte
// piece, and 2 scale bytes of each: in the formats.md order one weight load touches 8 half lines
// (128-byte lines) and one scale load 8 lines for 64 bytes. Tiled, the tile's 16 rows x 64 bytes
// of a piece are one 1 KB run (row r at 64 r: rows 0..7 then 8..15, 4 whole lines per load) and
// its 16 rows x 8 scale bytes one 128-byte line (row r at 8 r). Pieces of a tile follow one
// another, tiles follow tiles:
//   weight [N, K/2]  -> [N/16][K/128][16][64] bytes
//   scales [N, K/16] -> [N/16][K/128][16][8]
// i.e. a view [N/16, 16, K/128, chunk] with its two middle axes swapped: same shape, same bytes.
// N % 16 == 0 and K % 128 == 0 (whole tiles and pieces).
#pragma once

#include <ATen/ATen.h>

#include "common/checks.h"
#include "common/row_tiles.h"
#include "nvfp4/nvfp4_layout.h"

namespace torchquant {
namespace nvfp4 {

static_assert(kTileRows == kRowTileRows, "layout 4's tiles are common/row_tiles.h's");

inline at::Tensor tile_weight(const at::Tensor& w_packed, bool inverse) {
  return tile_rows(w_packed, kTilePieceBytes, inverse);
}
inline at::Tensor tile_scales(const at::Tensor& w_scale, bool inverse) {
  return tile_rows(w_scale, kTilePieceScales, inverse);
}

// nvfp4_relayout(w, 4) on either backend: layout 3's words (`words(w, layout, inverse)`, the
// backend's word relayout), then the tiling; with inverse the tiling undone first.
template <class Words>
at::Tensor relayout_tiled(const at::Tensor& w_packed, bool inverse, Words&& words) {
  return inverse ? words(tile_weight(w_packed, true), kLayoutBf16Adj, true)
                 : tile_weight(words(w_packed, kLayoutBf16Adj, false), false);
}

// nvfp4_relayout_scale (CPU and CUDA): the scales for a weight in `layout`: a copy for the word
// layouts 0..3 (their scales are the formats.md ones), the tiling (or its inverse) for layout 4.
inline at::Tensor relayout_scale(const at::Tensor& w_scale, int64_t layout, bool inverse) {
  const char* op = "nvfp4_relayout_scale";
  check_nvfp4_relayout_operand(w_scale, layout, at::kFloat8_e4m3fn, op, "w_scale");
  if (layout != kLayoutTiled) return at::empty(w_scale.sizes(), w_scale.options()).copy_(w_scale);
  check_nvfp4_tiled_shape(w_scale.size(0), w_scale.size(1) * 16, op);
  return tile_scales(w_scale, inverse);
}

}  // namespace nvfp4
}  // namespace torchquant
