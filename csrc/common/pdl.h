// Programmatic dependent launch (PDL, sm_90+) of the decode kernels; on by default there.
//
// A decode kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization may start
// while the kernel before it on the stream is still finishing: its blocks become resident
// as the predecessor's retire, ask L2 for their first weight bytes (common/pdl_device.cuh,
// prefetch_rows_l2), then griddepcontrol.wait until the predecessor has completed and its
// writes are visible; only then do they load anything into the SM (weights, scales, x,
// bias) or write. Each such kernel calls griddepcontrol.launch_dependents at its start, so
// the next one may launch once all of this one's blocks are resident. Between back-to-back
// decode projections the launch gap and the first DRAM round trips overlap the
// predecessor's tail.
//
// An L2 prefetch moves no data into the SM, and L2 is where every store lands, so nothing
// read after the wait can be stale whoever wrote the weight (even the kernel right before).
// TORCHQUANT_PDL (read per call):
//   unset or "1": PDL on compute capability 9.0+, L2 prefetch before the wait;
//   "0": launched without the attribute, as before 2026-12-02;
//   "smem": A/B only. The fp8 ring and nvfp4 mma GEMVs copy their first ring stages into
//     shared memory before the wait (the first form, measured 2026-12-02). That is correct
//     only when the weight and its scales were written long before the GEMV, not by the
//     kernel just before it: the predecessor's stores may not be visible before the wait.
// TORCHQUANT_PDL_L2_BYTES=n (A/B): bytes per weight row to prefetch (default: each
// kernel's first ring fill; 0: PDL without a prefetch).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/device.h"

namespace torchquant {

// How to launch a decode kernel: with PDL or not, and what it does before its wait.
struct PdlMode {
  bool on = false;
  int pre = 0;  // > 0: bytes per weight row to prefetch into L2; 0: none; -1: "smem"
};

inline PdlMode pdl_mode(int device, int l2_bytes_default) {
  PdlMode m;
  const char* v = std::getenv("TORCHQUANT_PDL");
  if (v != nullptr && std::strcmp(v, "0") == 0) return m;
  if (device_caps(device).major < 9) return m;
  m.on = true;
  if (v != nullptr && std::strcmp(v, "smem") == 0) {
    m.pre = -1;
    return m;
  }
  m.pre = l2_bytes_default;
  if (const char* b = std::getenv("TORCHQUANT_PDL_L2_BYTES"); b != nullptr && *b != '\0') {
    const long n = std::strtol(b, nullptr, 10);
    m.pre = n <= 0 ? 0 : static_cast<int>(std::min<long>(n, 1 << 20) & ~15L);
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
