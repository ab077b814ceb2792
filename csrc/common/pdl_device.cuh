// Device side of programmatic dependent launch (common/pdl.h): the wait and the trigger are
// no-ops when the kernel was launched without the attribute, and all of this compiles to
// nothing below sm_90.
#pragma once

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

}  // namespace torchquant
