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
// unit u ^ ((r & 1) << 2).  The swizzle makes both sides conflict-free: a copy
// phase (8 lanes) writes one full row, and a read phase (lanes of rows g and
// g + 1, 4 units each) lands in two different halves of the banks.
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

// 16-byte async copy; `ok` false zero-fills the destination and reads nothing.
__device__ __forceinline__ void cp16(uint32_t dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global" TQ_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(ok ? 16 : 0)
               : "memory");
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

// The copying side. Lane l copies unit l % 8 of rows 4j + l / 8, j = 0..3.
struct Producer {
  const uint8_t* src[4];  // row pointer + 16 * (l % 8); row 0 for a row past N
  uint32_t rows_ok;       // bit j: row 4j + l / 8 exists
  int klim;               // a stage at byte offset k0 has this lane's unit iff k0 < klim
  uint32_t dst;           // shared offset of this lane's unit inside a stage

  // Rows n0 .. n0 + 15 of a [N, row_bytes] matrix (row_bytes % 16 == 0).
  __device__ __forceinline__ void init(const uint8_t* base, int n0, int N, int row_bytes,
                                       int lane) {
    const int u = lane & 7, r0 = lane >> 3;
    rows_ok = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + 4 * j + r0;
      const bool ok = n < N;
      rows_ok |= static_cast<uint32_t>(ok) << j;
      src[j] = base + static_cast<size_t>(ok ? n : 0) * row_bytes + 16 * u;
    }
    klim = row_bytes - 16 * u;
    dst = r0 * kRowBytes + ((u ^ ((r0 & 1) << 2)) << 4);
  }
  // Copies bytes [k0, k0 + 128) of the 16 rows into the stage at `stage`.
  __device__ __forceinline__ void issue(uint32_t stage, int k0) const {
    const bool kin = k0 < klim;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      cp16(stage + dst + 512 * j, src[j] + (kin ? k0 : 0), kin && ((rows_ok >> j) & 1u));
  }
};

// The reading side: lane (g, t) = (lane / 4, lane % 4) reads bytes
// [64h + 16t, 64h + 16t + 16) of rows g and g + 8, h = 0, 1.
struct Reader {
  uint32_t off[2];  // half h, row g; row g + 8 is + 1024
  __device__ __forceinline__ void init(int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) off[h] = g * kRowBytes + (((4 * h + t) ^ ((g & 1) << 2)) << 4);
  }
  __device__ __forceinline__ uint4 row_g(uint32_t stage, int h) const { return lds128(stage + off[h]); }
  __device__ __forceinline__ uint4 row_g8(uint32_t stage, int h) const {
    return lds128(stage + off[h] + 8 * kRowBytes);
  }
};

}  // namespace ring
}  // namespace torchquant
