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

// The per-warp cp.async weight rings (common/warp_ring.cuh: the fp8 GEMV's ring kernel and the
// nvfp4 mma GEMV) copy without it. Each of their copies is a whole 128-byte line, and the same
// row's next line is copied one or two stages later, so the 256-byte fetch only pulled it in
// early. Same-machine A/B of two builds (results/h200/2026-12-04e_depth, calls 3 and 4, us,
// cold L2, hint / none): fp8 28672x8192 fp16 M = 1 61.4, 62.8 / 60.0, 60.0, M = 4 61.5, 62.2 /
// 61.2, 61.0; 128256x4096 M = 1 128.5, 128.3 / 124.4, 124.6; bf16 M = 1 62.1, 62.0 / 61.8, 61.5;
// the fp8 Llama-3-8B layer chain M = 1 65.1, 65.0 / 63.6, 64.0; nvfp4 128256x4096 M = 8 106.5,
// 106.5 / 102.5, 102.8, M = 1 84.0, 83.5 / 82.8, 82.9, 28672x8192 M = 1 43.2, 42.5 / 42.4, 42.4.
// The int8 GEMV's direct 16-byte loads keep the hint: without it 28672x8192 M = 1 took 62.1
// instead of 57.0 us (call 4). -DTORCHQUANT_RING_L2_PREFETCH=256 / 128 puts it back.
#ifndef TORCHQUANT_RING_L2_PREFETCH
#define TORCHQUANT_RING_L2_PREFETCH 0
#endif
#if TORCHQUANT_RING_L2_PREFETCH == 256
#define TQ_RING_L2_HINT ".L2::256B"
#elif TORCHQUANT_RING_L2_PREFETCH == 128
#define TQ_RING_L2_HINT ".L2::128B"
#else
#define TQ_RING_L2_HINT ""
#endif

#include <stdint.h>

// L2 eviction priority of the same streaming loads (ld_stream_v4 / v2 and the int8 GEMV's
// ldg16_stream): -DTORCHQUANT_STREAM_L2_EVICT_FIRST=1 gives them an evict-first cache policy
// (createpolicy + .L2::cache_hint; the plain .L2::evict_first qualifier is for 32-byte loads
// only), so the once-read weight is what L2 replaces first and x, the scales and the outputs
// stay resident. Off: it measured level (H200, results/h200/2026-12-05_layout call 3, two builds,
// two rounds, us, off / on: int8 28672x8192 M = 1 57.6-57.9 / 57.7-57.8, M = 8 58.7-59.1 /
// 58.7-59.0, the fused Llama-3-8B layer M = 1 68.6-69.0 / 68.8-69.7). Kept as the A/B switch
// (benchmarks/micro/ab_builds.sh).
// Each load's asm takes TQ_STREAM_POLICY after its cache qualifiers, TQ_STREAM_POLICY_OPERAND(n)
// after its address (n: the policy's operand number) and TQ_STREAM_POLICY_ARG after its last input;
// with the flag off all three are empty, so the asm is the plain load.
#ifndef TORCHQUANT_STREAM_L2_EVICT_FIRST
#define TORCHQUANT_STREAM_L2_EVICT_FIRST 0
#endif
#if TORCHQUANT_STREAM_L2_EVICT_FIRST
#define TQ_STREAM_POLICY ".L2::cache_hint"
#define TQ_STREAM_POLICY_OPERAND(n) ", %" #n
#define TQ_STREAM_POLICY_ARG , "l"(::torchquant::stream_l2_policy())
#else
#define TQ_STREAM_POLICY ""
#define TQ_STREAM_POLICY_OPERAND(n) ""
#define TQ_STREAM_POLICY_ARG
#endif

namespace torchquant {

#if TORCHQUANT_STREAM_L2_EVICT_FIRST
// Not volatile: the same value every call, so the compiler may hoist it out of the loops.
__device__ __forceinline__ uint64_t stream_l2_policy() {
  uint64_t pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
#endif

// Streaming weight loads (every byte is used once, so L1 is skipped), with
// the L2 prefetch-size hint above. Shared by the fp8 and nvfp4 GEMVs.
__device__ __forceinline__ uint4 ld_stream_v4(const void* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate" TQ_STREAM_POLICY TQ_L2_HINT ".v4.u32 {%0, %1, %2, %3}, [%4]"
      TQ_STREAM_POLICY_OPERAND(5) ";"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p) TQ_STREAM_POLICY_ARG);
  return r;
}
// ld_stream_v4 predicated inside the asm (zeros when !pred, and nothing is read), so the
// compiler can never speculate the load past its bounds check (the int8 GEMV's ldg16_stream and
// nvfp4's direct GEMV).
__device__ __forceinline__ uint4 ld_stream_v4_if(const void* p, bool pred) {
  uint4 r;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n"
      " mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @p ld.global.nc.L1::no_allocate" TQ_STREAM_POLICY TQ_L2_HINT ".v4.u32 {%0,%1,%2,%3}, [%4]"
      TQ_STREAM_POLICY_OPERAND(6) ";\n}\n"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p), "r"(static_cast<int>(pred)) TQ_STREAM_POLICY_ARG);
  return r;
}
// A read-only, L1-cached 16-byte load (16-byte aligned), predicated the same way (0 when !pred).
__device__ __forceinline__ uint4 ld_cached_v4_if(const void* p, bool pred) {
  uint4 r;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n"
      " mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @p ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n}\n"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p), "r"(static_cast<int>(pred)));
  return r;
}
// A read-only, L1-cached 2-byte load, predicated the same way (0 when !pred).
__device__ __forceinline__ uint32_t ld_u16_if(const void* p, bool pred) {
  unsigned short v;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n mov.b16 %0, 0;\n"
      " @p ld.global.nc.u16 %0, [%1];\n}\n"
      : "=h"(v)
      : "l"(p), "r"(static_cast<int>(pred)));
  return v;
}
__device__ __forceinline__ uint2 ld_stream_v2(const void* p) {
  uint2 r;
  asm("ld.global.nc.L1::no_allocate" TQ_STREAM_POLICY TQ_L2_HINT ".v2.u32 {%0, %1}, [%2]"
      TQ_STREAM_POLICY_OPERAND(3) ";"
      : "=r"(r.x), "=r"(r.y)
      : "l"(p) TQ_STREAM_POLICY_ARG);
  return r;
}

}  // namespace torchquant
