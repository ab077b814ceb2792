// Device side of programmatic dependent launch (common/pdl.h): the wait and the trigger are
// no-ops when the kernel was launched without the attribute, and all of this compiles to
// nothing below sm_90.
#pragma once

#include <stdint.h>

namespace torchquant {

// Blocks until the grids this one depends on have completed and their writes are visible.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next PDL kernel on the stream launch once every block of this grid has called it
// (or exited).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Asks L2 to fetch [p, p + bytes) (p 16-byte aligned, bytes a multiple of 16, inside one
// allocation). Nothing reaches the SM, so this is safe before pdl_wait() whoever writes
// those bytes: L2 is the point of coherence of device memory, a store that lands after
// the prefetch updates the line, and the loads after the wait read it from there.
__device__ __forceinline__ void prefetch_l2_bulk(const void* p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// The same for the 128-byte line holding p (any alignment).
__device__ __forceinline__ void prefetch_l2_line(const void* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory");
#endif
}

// Before pdl_wait(): bytes [lo, hi) of `rows` rows, row r at base + r * stride (base,
// stride and lo 16-byte aligned, hi - lo a multiple of 16), into L2 in 128-byte pieces,
// thread `tid` of `nthreads` taking pieces round robin. The first bytes a decode GEMV
// streams, fetched while the kernel before it finishes.
__device__ __forceinline__ void prefetch_rows_l2(const uint8_t* base, size_t stride, int rows,
                                                 int lo, int hi, int tid, int nthreads) {
  if (rows <= 0 || hi <= lo) return;
  const int pieces = (hi - lo + 127) >> 7;
  for (int i = tid; i < rows * pieces; i += nthreads) {
    const int r = i % rows, off = lo + 128 * (i / rows);
    prefetch_l2_bulk(base + static_cast<size_t>(r) * stride + off,
                     static_cast<uint32_t>(min(128, hi - off)));
  }
}

}  // namespace torchquant
