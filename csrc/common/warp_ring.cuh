#pragma once
// A per-warp shared-memory ring that streams a 16-row tile of a row-major
// byte matrix (the mma A operand of the decode GEMVs) 128 bytes per row per
// stage, with cp.async (no registers hold the bytes in flight).
//
// Why: the mma fragment gives the 4 lanes of a quad one row, so a direct
// 16-byte register load covers 8 rows x 64 bytes per warp instruction.  On the
// H200 that pattern streams a 235 MB matrix at only ~63-70 % of the read
// ceiling, with any number of bytes in flight, while 128 bytes per row per
// instruction reaches ~98 % (benchmarks/micro/stream_patterns.cu, results in
// benchmarks/results/h200/stream_patterns.txt).  Here the copy instructions
// cover 4 rows x 128 bytes (8 lanes per row) and each lane then reads its mma
// pieces from shared memory.
//
// Stage layout (2048 bytes): row r at r * 128; its 16-byte unit u stored at
// unit u ^ ((r & 1) * SW).  The swizzle makes both sides conflict-free: a copy
// phase (8 lanes) writes one full row, and a read phase (8 lanes: the quads of
// rows g and g + 1) lands in disjoint banks when the quad reads units
// {4h + t} (SW = 4, the fp8 kernel) or {2t + q} (SW = 1, the nvfp4 kernel).
#include <stdint.h>

#include "common/ldg.h"

namespace torchquant {
namespace ring {

constexpr int kRows = 16;
constexpr int kRowBytes = 128;
constexpr int kStageBytes = kRows * kRowBytes;

__device__ __forceinline__ uint32_t smem_u32addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// kBytes-byte async copy through L1 (.ca; .cg takes only 16 bytes), issued
// only when `on`; src_size 0 zero-fills the destination and reads nothing.
// cp4_if: the 4-byte scale copies; cp16ca_if: 16 bytes of data that every
// warp of the SM re-reads, such as the activations.
template <int kBytes>
__device__ __forceinline__ void cp_ca_if(uint32_t dst, const void* src, uint32_t src_size, bool on) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n"
      " @p cp.async.ca.shared.global [%0], [%1], %4, %2;\n}\n" ::"r"(dst),
      "l"(src), "r"(src_size), "r"(static_cast<uint32_t>(on)), "n"(kBytes)
      : "memory");
}
__device__ __forceinline__ void cp4_if(uint32_t dst, const void* src, uint32_t src_size, bool on) {
  cp_ca_if<4>(dst, src, src_size, on);
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ uint2 lds64(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  return v;
}

// Shared offset of unit u of row r inside a stage.
template <int SW>
__device__ __forceinline__ uint32_t unit_offset(int r, int u) {
  return static_cast<uint32_t>(r * kRowBytes + ((u ^ ((r & 1) * SW)) << 4));
}

__device__ __forceinline__ void cp16ca_if(uint32_t dst, const void* src, uint32_t src_size, bool on) {
  cp_ca_if<16>(dst, src, src_size, on);
}

// 16-byte async copy issued only when `on` (a skipped copy leaves the
// destination as it was); no L2 prefetch hint (TQ_RING_L2_HINT, common/ldg.h).
__device__ __forceinline__ void cp16_if(uint32_t dst, const void* src, uint32_t src_size, bool on) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n"
      " @p cp.async.cg.shared.global" TQ_RING_L2_HINT " [%0], [%1], 16, %2;\n}\n" ::"r"(dst),
      "l"(src), "r"(src_size), "r"(static_cast<uint32_t>(on))
      : "memory");
}

// The copying side for a stage of 4J rows. Lane l copies unit l % 8 of rows
// 4j + l / 8, j = 0 .. J-1 (one base pointer and a stride, so the copy state
// costs a handful of registers whatever J is).
//
// Rows past N are not copied at all: their slots keep whatever the stage held
// (older rows, or never-written memory). That is harmless by construction in
// both users: an mma output row depends on its own A row only, and rows >= N
// are never stored. Units past the row end (the K tail) are zero-filled, since
// those bytes meet x = 0 and an fp8 garbage NaN times 0 would not vanish.
// Cost per stage: one address (a wide multiply-add), one compare and one copy
// per row: 35 SASS instructions per nvfp4 stage (32 rows, 8 copies per lane;
// 104 when each row selected a pointer and a size, before 2026-12-01).
//
// kTiled (fp8/fp8_tiles.h, nvfp4 layout 4: rows stored per 16-row tile as 64-byte pieces, a piece
// of the tile one 1 KB run; N % 16 == 0, n0 % 16 == 0): the same units land in the same places,
// read from the tiled order. Unit u of row 16 i + r at stage byte k0 lies at tile i + 16 k0 + 1024
// (u / 4) + 64 r + 16 (u % 4), so src holds the first tile, half and row offsets, the stage offset
// is 16 k0, rows 4j + l / 8 lie 256 (j % 4) further in tile j / 4 (stride: one tile's bytes); each
// copy instruction still reads 4 whole 128-byte lines.
template <int SW, int J, bool kTiled = false>
struct Producer {
  const uint8_t* src;  // row n0 + l / 8 (or row 0 past N), + 16 * (l % 8); kTiled: as above
  uint32_t stride;     // one row, bytes (< 2^31); kTiled: one 16-row tile, bytes (< 2^31)
  int jv;              // rows 4j + l / 8 with j < jv exist (0 .. J)
  int klim;            // a stage at byte offset k0 has this lane's unit iff k0 < klim
  uint32_t dst;        // shared offset of this lane's unit in row l / 8

  // Rows n0 .. n0 + 4J - 1 of a [N, row_bytes] matrix (row_bytes % 16 == 0,
  // 16-byte aligned base).
  __device__ __forceinline__ void init(const uint8_t* base, int n0, int N, int row_bytes,
                                       int lane) {
    const int u = lane & 7, r0 = lane >> 3;
    const int left = N - n0 - r0;  // rows 4j + r0 < N  <=>  j < ceil(left / 4)
    jv = left <= 0 ? 0 : min(J, (left + 3) >> 2);
    if constexpr (kTiled) {  // n0 % 16 == 0: the tile's bytes start where its rows' would
      src = base + static_cast<size_t>(n0) * row_bytes + 1024 * (u >> 2) + 64 * r0 + 16 * (u & 3);
      stride = 16 * static_cast<uint32_t>(row_bytes);
    } else {
      src = base + static_cast<size_t>(left > 0 ? n0 + r0 : 0) * row_bytes + 16 * u;
      stride = static_cast<uint32_t>(row_bytes);
    }
    klim = row_bytes - 16 * u;
    dst = unit_offset<SW>(r0, u);  // rows 4j + r0 share r0's parity
  }
  // Copies bytes [k0, k0 + 128) of the 4J rows into the stage at `stage`.
  __device__ __forceinline__ void issue(uint32_t stage, int k0) const {
    const bool kin = k0 < klim;  // kTiled too: the unit's byte of the row is k0 + 16 u
    const uint32_t size = kin ? 16u : 0u;  // 0: zero-fill, read nothing
    const uint8_t* p;
    if constexpr (kTiled)
      p = src + (kin ? 16 * static_cast<size_t>(k0) : 0);
    else
      p = src + (kin ? k0 : 0);
#pragma unroll
    for (int j = 0; j < J; ++j) {  // one independent IMAD.WIDE.U32 per row address
      const uint64_t off = kTiled ? static_cast<uint64_t>(stride) * static_cast<uint32_t>(j >> 2) + 256 * (j & 3)
                                  : static_cast<uint64_t>(stride) * static_cast<uint32_t>(4 * j);
      cp16_if(stage + dst + 512 * j, p + off, size, j < jv);
    }
  }
};

// The fp8 reading side (SW = 4): lane (g, t) = (lane / 4, lane % 4) reads
// bytes [64h + 16t, 64h + 16t + 16) of rows g and g + 8, h = 0, 1.
struct Reader {
  uint32_t off[2];  // half h, row g; row g + 8 is + 1024
  __device__ __forceinline__ void init(int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) off[h] = unit_offset<4>(g, 4 * h + t);
  }
  __device__ __forceinline__ uint4 row_g(uint32_t stage, int h) const { return lds128(stage + off[h]); }
  __device__ __forceinline__ uint4 row_g8(uint32_t stage, int h) const {
    return lds128(stage + off[h] + 8 * kRowBytes);
  }
};

}  // namespace ring
}  // namespace torchquant
