// Rows stored per 16-row tile, host side, any device: the order nvfp4's layout 4 (nvfp4/nvfp4_tiles.h)
// and the tiled fp8_block weight (fp8/fp8_tiles.h) share. Each row of a [N, C] matrix is cut into
// pieces of `chunk` elements; the tiled order holds tile i's piece p as rows 16 i .. 16 i + 15 of
// that piece one after another, pieces of a tile in order, tiles in order: a view
// [N/16, 16, C/chunk, chunk] with its two middle axes swapped. Same shape, same elements.
#pragma once

#include <ATen/ATen.h>

namespace torchquant {

constexpr int64_t kRowTileRows = 16;  // rows per tile (the decode GEMVs' m16 tile)

// [N, C] (N % 16 == 0, C % chunk == 0, contiguous) to the tiled order, or back with inverse. A copy.
inline at::Tensor tile_rows(const at::Tensor& a, int64_t chunk, bool inverse) {
  const int64_t N = a.size(0), C = a.size(1), P = C / chunk, T = N / kRowTileRows;
  const at::Tensor v = inverse ? a.view({T, P, kRowTileRows, chunk}) : a.view({T, kRowTileRows, P, chunk});
  return v.transpose(1, 2).contiguous().view({N, C});
}

}  // namespace torchquant
