// Programmatic dependent launch (PDL, sm_90+) of the decode kernels.
//
// A decode kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization may start
// while the kernel before it on the stream is still finishing: its blocks become resident
// as the predecessor's retire and wait at griddepcontrol.wait until the predecessor has
// completed and its writes are visible; only then do they load anything or write. Each such
// kernel calls griddepcontrol.launch_dependents at its start, so the next one may launch
// once all of this one's blocks are resident. Between back-to-back decode projections the
// launch gap overlaps the predecessor's tail.
//
// TORCHQUANT_PDL (read per call):
//   "0": every kernel launched without the attribute;
//   "1": PDL for every decode kernel below, nothing loaded before the wait (always correct);
//   "smem": as "1", but the fp8_block ring and nvfp4 mma GEMVs copy their first ring stages
//     of weight and scales into shared memory before the wait. Correct only when the weight
//     and its scales were written long before the GEMV, not by the kernel just before it
//     (the predecessor's stores are guaranteed visible only after the wait): model weights
//     loaded once, as in inference;
//   unset: each kernel's measured default (pdl_default below).
// A kernel that was tried before the wait with only an L2 prefetch of its first weight
// bytes (cp.async.bulk.prefetch.L2, which is correct whoever wrote them) lost to no
// prefetch on every shape (results/h200/2026-12-02b_pdl, call 2: fused Llama-3-8B layer
// M = 1, fp8_block 78.0 / 84.6 us with 512 / 2048 bytes per row against 75.6 without).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/device.h"

namespace torchquant {

// The decode kernels that can be launched with PDL, for their defaults.
enum class PdlKernel { kFp8Ring, kNvfp4Mma, kInt8Gemv, kInt8Quant, kSp24Fma, kSp24Int8Gemv };

// With TORCHQUANT_PDL unset. Measured on the H200 (results/h200/2026-12-02b_pdl): see there.
constexpr bool pdl_default(PdlKernel k) {
  switch (k) {
    default:
      return false;
  }
}

// How to launch a decode kernel: with PDL or not, and (fp8 / nvfp4 ring kernels) whether
// the first ring stages are copied before the wait.
struct PdlMode {
  bool on = false;
  bool early = false;  // "smem"
};

inline PdlMode pdl_mode(int device, PdlKernel k) {
  PdlMode m;
  if (device_caps(device).major < 9) return m;
  const char* v = std::getenv("TORCHQUANT_PDL");
  if (v == nullptr || *v == '\0') {
    m.on = pdl_default(k);
  } else if (std::strcmp(v, "smem") == 0) {
    m.on = true;
    m.early = k == PdlKernel::kFp8Ring || k == PdlKernel::kNvfp4Mma;
  } else {
    m.on = std::strcmp(v, "0") != 0;
  }
  return m;
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
