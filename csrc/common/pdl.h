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
//     of weight and scales into shared memory before the wait (and the sm_90a decode GEMVs'
//     TMA producers issue theirs, the int8 and int8 2:4 GEMVs their first register loads).
//     Correct only when the weight and its scales were written long before the GEMV, not by
//     the kernel just before it (the predecessor's stores are guaranteed visible only after
//     the wait): model weights loaded once, as in inference;
//   unset: each kernel's measured default (pdl_default below: "1" for most, off for some);
//     then TORCHQUANT_PDL_HOPPER_GEMV=0/1 overrides it for the sm_90a decode GEMVs alone.
// The per-call form of "smem": fp8_block_gemv / nvfp4_gemv / int8_matmul / sparse24_int8_matmul
// take static_weight=True (the caller's promise that the weight and its block scales were not
// written by any kernel that may still be running when the GEMV launches;
// QuantLinear(static_weights=True) passes it). With it, a launch that is PDL under the rules
// above (unset or "1") also loads its first weight stages before the wait (the ring / mma GEMVs'
// copies, the Hopper GEMVs' TMA, the int8 GEMV's first round of 16-byte register loads and the
// int8 2:4 GEMV's first step, 2026-12-05c); "0" still turns PDL off. A weight the op copied
// itself (an unaligned view) was written by the kernel just before: no early loads of it in any
// mode, "smem" included.
// A kernel that was tried before the wait with only an L2 prefetch of its first weight
// bytes (cp.async.bulk.prefetch.L2, which is correct whoever wrote them) lost to no
// prefetch on every shape (results/h200/2026-12-02b_pdl, call 2: fused Llama-3-8B layer
// M = 1, fp8_block 78.0 / 84.6 us with 512 / 2048 bytes per row against 75.6 without).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "common/device.h"

namespace torchquant {

// The decode kernels that can be launched with PDL, for their defaults.
enum class PdlKernel {
  kFp8Ring,       // fp8_block ring GEMV (M <= 16, block size % 64 == 0) and direct GEMV
  kNvfp4Mma,      // nvfp4 mma GEMV, one M tile of <= 8 rows, K not split across blocks
  kNvfp4MmaMulti, // nvfp4 mma GEMV otherwise (16-row or several M tiles, or a K split)
  kInt8Gemv,      // int8_matmul "gemv"
  kInt8Quant,     // quantize_int8 per token (dynamic W8A8's first launch)
  kSp24Fma,       // bf16 / fp16 2:4 CUDA-core GEMV
  kSp24Int8Gemv,  // int8 2:4 dp4a GEMV
  kHopperGemv,    // the sm_90a decode GEMVs on TMA + wgmma (fp8_block and nvfp4 path "wgmma")
};

// With TORCHQUANT_PDL unset: "1" where it measured faster in a model-shaped chain. H200,
// 2026-12-02 (results/h200/2026-12-02b_pdl, call 3), fused Llama-3-8B layer through
// QuantLinear, us, without / with PDL ("1"): fp8_block M = 1 77.2 / 74.8, M = 8 85.0 / 84.2;
// nvfp4 69.5 / 67.8, 85.5 / 85.8; int8 72.6 / 69.7, 79.7 / 76.6; int8_sparse24 M = 1 57.2 /
// 54.1; sparse24 M = 1 74.3 / 79.0 (slower: off). One op back to back (benchmarks/micro/
// env_ab.py), nvfp4 lost where the GEMV has a 16-row tile, two M tiles or a K split:
// 14336x4096 M = 16 (tile 16, 112 blocks) 24.9 / 31.2, 4096x4096 M = 16 (two 8-row tiles)
// 12.0 / 14.9, M = 8 (K split in 2) 10.5 / 10.8, and won at M = 1 and 8 elsewhere
// (4096x4096 M = 1 8.1 / 7.2, 14336x4096 M = 8 19.6 / 19.2): kNvfp4MmaMulti stays off.
// fp8_block (all shapes, M = 1..16) was within -8 % .. +2 %, int8 -4 % .. +10 % (4096x4096
// M = 1 6.2 / 6.8 alone, yet the layer with that projection in it won 4 %).
// ("smem" was faster still for fp8_block and nvfp4, 67.6 and 65.2 at M = 1, but is correct
// only under its precondition, so it is never a default.)
// kHopperGemv stays off (results/h200/2026-12-04g_hopper_pdl, call 1, bf16, two rounds, us,
// off / on): the layer chain nvfp4 M = 4 65.7, 67.6 / 67.3, 68.0, M = 8 71.9, 72.4 / 72.9,
// 73.1, M = 16 and 32 level, fp8_block M = 16 83.2, 84.9 / 84.1, 84.1; one op back to back,
// fp8 14336x4096 M = 16 (112 CTAs) 23.2-23.5 / 27.9-28.1, 28672x8192 66.2-67.2 / 67.5-68.7,
// nvfp4 level. Not profiled; a plausible cause: these grids are persistent, so a CTA placed
// early on an SM still running the predecessor's tail keeps its fixed share of the units.
constexpr bool pdl_default(PdlKernel k) {
  switch (k) {
    case PdlKernel::kFp8Ring:
    case PdlKernel::kNvfp4Mma:
    case PdlKernel::kInt8Gemv:
    case PdlKernel::kInt8Quant:
    case PdlKernel::kSp24Int8Gemv:
      return true;
    default:
      return false;
  }
}

// What the op knows of when its weight and scales were written.
enum class WeightWritten {
  kJustBefore,  // the op copied them (alignment): never loaded before the wait
  kUnknown,     // static_weight=False: loaded early under TORCHQUANT_PDL=smem only
  kLongBefore,  // static_weight=True: loaded early whenever the launch is PDL
};

inline WeightWritten weight_written(bool static_weight, bool copied_by_op) {
  return copied_by_op ? WeightWritten::kJustBefore
                      : static_weight ? WeightWritten::kLongBefore : WeightWritten::kUnknown;
}

// How to launch a decode kernel: with PDL or not, and (the kernels that can) whether its first
// weight stages are loaded before the wait.
struct PdlMode {
  bool on = false;
  bool early = false;  // "smem", or static_weight
};

inline PdlMode pdl_mode(int device, PdlKernel k, WeightWritten w = WeightWritten::kUnknown) {
  PdlMode m;
  if (device_caps(device).major < 9) return m;
  // the kernels that can issue weight loads before the wait
  const bool can_early = k == PdlKernel::kFp8Ring || k == PdlKernel::kNvfp4Mma ||
                         k == PdlKernel::kNvfp4MmaMulti || k == PdlKernel::kHopperGemv ||
                         k == PdlKernel::kInt8Gemv || k == PdlKernel::kSp24Int8Gemv;
  const char* v = std::getenv("TORCHQUANT_PDL");
  if (v == nullptr || *v == '\0') {
    m.on = pdl_default(k);
    // A/B of one kind alone, the others at their defaults.
    const char* h = k == PdlKernel::kHopperGemv ? std::getenv("TORCHQUANT_PDL_HOPPER_GEMV") : nullptr;
    if (h != nullptr && *h != '\0') m.on = std::strcmp(h, "0") != 0;
  } else if (std::strcmp(v, "smem") == 0) {
    m.on = true;
    m.early = can_early;
  } else {
    m.on = std::strcmp(v, "0") != 0;
  }
  if (w == WeightWritten::kLongBefore && m.on && can_early) m.early = true;
  if (w == WeightWritten::kJustBefore) m.early = false;
  return m;
}

// Whether `kernel`, as it runs on the current device, contains griddepcontrol.wait. The wait
// and the trigger are compiled only into code for sm_90+ (common/pdl_device.cuh). A build
// without sm_90 code that runs on a Hopper from older PTX (TORCH_CUDA_ARCH_LIST="8.0+PTX",
// JIT-compiled by the driver) has neither, and launched with the attribute such a kernel could
// read its inputs before the kernel just before it had finished. The PTX version the running
// code was compiled from says which; cached per kernel and device (one driver query each).
inline bool kernel_has_pdl_wait(const void* kernel) {
  int dev = 0;
  C10_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(kernel, dev);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  cudaFuncAttributes a{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  const bool has = a.ptxVersion >= 90;
  if (!has) {
    TORCH_WARN_ONCE(
        "torchquant: this build has no sm_90 code for a decode kernel (it runs from compute_",
        a.ptxVersion, " PTX), so programmatic dependent launch is off for it; rebuild with 9.0 in "
        "TORCH_CUDA_ARCH_LIST for the faster launches");
  }
  known.emplace(key, has);
  return has;
}

// kernel<<<grid, block, smem, stream>>>(args...), through cudaLaunchKernelEx with the
// programmatic-serialization attribute when pdl is true and the kernel has the wait.
template <typename... KArgs, typename... Args>
void launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                   cudaStream_t stream, bool pdl, Args&&... args) {
  if (pdl && !kernel_has_pdl_wait(reinterpret_cast<const void*>(kernel))) pdl = false;
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
