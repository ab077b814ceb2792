// Per-device properties, read once per device and cached in a table keyed by
// the device index (never one process-wide value: a process may drive GPUs
// of different generations). CUDA translation units only.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace torchquant {

struct DeviceCaps {
  int major = 0;
  int minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int max_smem_optin = 0;  // dynamic shared memory a block may opt into
  int smem_per_sm = 0;     // shared memory of one SM (all resident blocks together)
  // Peak DRAM bytes per SM per SM clock, x 10 (2 x memory clock x bus bytes / (SMs x SM clock),
  // from the device attributes; 0 where the driver reports no clocks). What a streaming kernel
  // has per byte in issue slots: H100 SXM 128 (3.35 TB/s over 132 SMs at 1.98 GHz), H200 ~185.
  int dram_bytes_per_sm_clk_x10 = 0;
  int cc() const { return major * 10 + minor; }
};

// An integer launch knob from the environment (tests and micro benchmarks
// force kernel shapes with these; read on every call): its atoi value, 0
// when unset or not a number.
inline int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

// A weight-count threshold knob in units of 2^20 weights: the knob's value times 2^20 when
// it is a positive number, else `dflt` (the rule's own threshold).
inline int64_t env_weights(const char* name, int64_t dflt) {
  const int v = env_int(name);
  return v > 0 ? int64_t{v} << 20 : dflt;
}

// Cards whose DRAM feeds each SM at most 15.0 bytes per SM clock (the H100 SXM's 12.8; not the
// H200's ~18.5): there the direct GEMVs (the int8 GEMV's stream shape, which spends more issue
// slots per weight byte than the ring / wgmma kernels' decode) win on the large grids; on the
// wider cards they lost (nvfp4: docs/nvfp4_gemv.md 29-35; fp8: docs/fp8_gemv.md "The direct
// GEMV"). 0 (no clocks reported) counts as not narrow.
constexpr int kNarrowDramMaxX10 = 150;
inline bool narrow_dram(const DeviceCaps& c) {
  return c.dram_bytes_per_sm_clk_x10 > 0 && c.dram_bytes_per_sm_clk_x10 <= kNarrowDramMaxX10;
}

inline const DeviceCaps& device_caps(int device) {
  constexpr int kMaxDevices = 64;
  static std::array<DeviceCaps, kMaxDevices> table;
  static std::array<std::once_flag, kMaxDevices> once;
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "torchquant: device index ", device,
              " out of range");
  std::call_once(once[device], [device] {
    cudaDeviceProp p;
    C10_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    DeviceCaps& c = table[device];
    c.major = p.major;
    c.minor = p.minor;
    c.sm_count = p.multiProcessorCount;
    c.l2_bytes = p.l2CacheSize;
    c.max_smem_optin = static_cast<int>(p.sharedMemPerBlockOptin);
    c.smem_per_sm = static_cast<int>(p.sharedMemPerMultiprocessor);
    int mem_khz = 0, bus_bits = 0, sm_khz = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess) {
      (void)cudaGetLastError();  // an attribute the driver lacks: leave the field 0
    } else if (mem_khz > 0 && bus_bits > 0 && sm_khz > 0 && c.sm_count > 0) {
      // double data rate: 2 transfers per memory clock of bus_bits / 8 bytes
      const double per_clk = 2.0 * mem_khz * (bus_bits / 8.0) / (double(c.sm_count) * sm_khz);
      c.dram_bytes_per_sm_clk_x10 = static_cast<int>(per_clk * 10.0 + 0.5);
    }
  });
  return table[device];
}

// Grids of at most one block per SM: the dynamic shared memory to ask for,
// raised above half an SM's so that no SM takes two of the blocks while
// others idle (measured on the H200: nvfp4 6144x4096 M = 8, 96 blocks of
// 104 KB, 15.0 us, 11.7 with this; results/h200/2026-12-02e_nvfp4_xres). `knob` names
// the environment variable that forces it: 1 on, -1 off, unset: on_default.
// Unchanged when the device cannot give a block that much.
inline int spread_smem(const DeviceCaps& caps, int64_t grid, int smem, const char* knob,
                       bool on_default) {
  const int v = env_int(knob);
  if (v == -1 || (v == 0 && !on_default) || grid > caps.sm_count || caps.smem_per_sm <= 0) return smem;
  const int one = caps.smem_per_sm / 2 + 1024;
  return one <= caps.max_smem_optin ? std::max(smem, one) : smem;
}

// Opts `kernel` in to `bytes` of dynamic shared memory on `device`, which must
// be the current device: a per-device function attribute, needed when the
// kernel's static plus dynamic shared memory exceeds the 48 KiB default. It is
// set whatever `bytes` is (a kernel with 48 KiB of dynamic memory and one
// static int needs it: skipping the call at <= 48 KiB made such launches fail
// with "invalid argument" on the H200). Remembers the largest value set per
// (kernel, device), so a repeated launch costs a lookup; monotone, so a
// concurrent smaller request never lowers it.
inline void allow_dynamic_smem(const void* kernel, int device, int bytes) {
  if (bytes <= 0) return;
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> set;
  std::lock_guard<std::mutex> lock(mu);
  int& cur = set[{kernel, device}];
  if (bytes > cur) {
    C10_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    cur = bytes;
  }
}

// Calls f(T{}) with T the CUDA type of a float dtype (float, __half,
// __nv_bfloat16): the kernels' template argument. The CUDA twin of the CPU
// kernels' dispatch_float_out (cpu/cpu_common.h).
template <typename F>
void dispatch_float_cuda(at::ScalarType t, const char* op, F&& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kHalf: f(__half{}); break;
    case at::kBFloat16: f(__nv_bfloat16{}); break;
    default: TORCH_CHECK(false, op, ": unsupported dtype ", t);
  }
}

}  // namespace torchquant
