// Programmatic dependent launch (PDL, sm_90+), opt-in: TORCHQUANT_PDL=1.
//
// A decode GEMV launched with cudaLaunchAttributeProgrammaticStreamSerialization may start
// while the kernel before it on the stream is still finishing: its blocks issue their first
// weight (and block-scale) copies, then griddepcontrol.wait until that kernel has completed
// and its writes are visible, and only then read the activation, the bias or anything else
// and write the output. Each such kernel also calls griddepcontrol.launch_dependents at its
// start, so the next PDL kernel may launch once all of this one's blocks are resident.
// Between back-to-back decode projections this overlaps one kernel's ramp-up (first DRAM
// round trips) with the previous one's tail, and the launch gap disappears.
//
// Precondition the caller accepts by setting TORCHQUANT_PDL=1: the weight and its scales
// are not written by the kernels still running when the GEMV is launched (model weights
// written long before, as in inference; not a weight produced by the kernel just before).
// Activations, bias and outputs are always ordered. Only kernels that call pdl_wait()
// (common/pdl_device.cuh) before their first dependent read may be launched with
// pdl = true (launch_kernel below).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/device.h"

namespace torchquant {

// True when TORCHQUANT_PDL=1 and the device supports griddepcontrol (compute capability 9.0+).
inline bool pdl_requested(int device) {
  const char* v = std::getenv("TORCHQUANT_PDL");
  return v != nullptr && std::strcmp(v, "1") == 0 && device_caps(device).major >= 9;
}

// kernel<<<grid, block, smem, stream>>>(args...), through cudaLaunchKernelEx with the
// programmatic-serialization attribute when pdl is true.
template <typename... KArgs, typename... Args>
void launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                   cudaStream_t stream, bool pdl, Args&&... args) {
  if (!pdl) {
    kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  C10_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace torchquant
