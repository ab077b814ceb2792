#pragma once
// L2 prefetch-size hint for the weight-streaming loads of the decode kernels.
//
// Measured on the H200 (benchmarks/micro/stream_patterns.cu): a warp load that
// covers 8 rows x 64 bytes (the mma A-operand pattern of the GEMVs) streams a
// 235 MB matrix at only ~63-70 % of the read ceiling whatever the bytes in
// flight, while 128 or 256 bytes per row per instruction reach ~98 %.  The
// `.L2::256B` qualifier asks L2 to fetch the whole 256-byte region on a miss,
// so the next windows of the same rows (read by the same warp a few loads
// later) are already on chip.  -DTORCHQUANT_L2_PREFETCH=0 / 128 / 256 picks it.
#ifndef TORCHQUANT_L2_PREFETCH
#define TORCHQUANT_L2_PREFETCH 256
#endif
#if TORCHQUANT_L2_PREFETCH == 256
#define TQ_L2_HINT ".L2::256B"
#elif TORCHQUANT_L2_PREFETCH == 128
#define TQ_L2_HINT ".L2::128B"
#else
#define TQ_L2_HINT ""
#endif

#include <stdint.h>

namespace torchquant {

// Streaming weight loads (every byte is used once, so L1 is skipped), with
// the L2 prefetch-size hint above. Shared by the fp8 and nvfp4 GEMVs.
__device__ __forceinline__ uint4 ld_stream_v4(const void* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate" TQ_L2_HINT ".v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}
__device__ __forceinline__ uint2 ld_stream_v2(const void* p) {
  uint2 r;
  asm("ld.global.nc.L1::no_allocate" TQ_L2_HINT ".v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}

}  // namespace torchquant
