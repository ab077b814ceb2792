// Host side shared by the sm_90a (TMA + wgmma) kernels: the driver's tensor-map encoder,
// reached through the runtime (cudaGetDriverEntryPointByVersion), so nothing links against
// libcuda; a helper that encodes a 2-D byte-addressed map; the copy that gives TMA an aligned
// base; and the persistent, optionally clustered launch (resident-CTA query and launch).
#pragma once

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "common/device.h"

namespace torchquant {
namespace tma {

// cuTensorMapEncodeTiled from the driver the runtime already loaded. `op` names the caller
// in the error message.
inline PFN_cuTensorMapEncodeTiled_v12000 encode_fn(const char* op) {
  // Thread-safe static initialization; a failed lookup throws and is retried on the next call.
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [op] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    TORCH_CHECK(e == cudaSuccess && q == cudaDriverEntryPointSuccess && p != nullptr, op,
                ": cannot get cuTensorMapEncodeTiled from the CUDA driver (",
                cudaGetErrorString(e), ")");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A 2-D map over a row-major tensor viewed as bytes: `rows` rows of `row_bytes` bytes (a
// multiple of 16, as the base address must be 16-byte aligned), boxes of box_bytes x box_rows,
// the given swizzle, zero fill out of bounds.
inline CUtensorMap make_tmap_2d(const void* base, int64_t rows, int64_t row_bytes, int box_bytes,
                                int box_rows, CUtensorMapSwizzle swizzle, const char* op) {
  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(row_bytes), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_bytes), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_fn(op)(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base),
                                   dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(r == CUDA_SUCCESS, op, ": cuTensorMapEncodeTiled failed (CUresult ", int(r),
              ") for a [", rows, ", ", row_bytes, "]-byte operand, box ", box_bytes, " x ",
              box_rows);
  return map;
}

// The tiled fp8_block weight (fp8/fp8_tiles.h: [N / 16][K / 64][16][64] bytes) as a 4-D map
// over (byte of a 64-byte piece, row of a tile, piece, tile), innermost first, with boxes of
// (64, 16, 1, box_tiles): one piece of box_tiles consecutive tiles. TMA writes a box in its
// dimension order, (tile, row, byte), which is the row-major weight's 2-D box of 64 bytes x
// 16 box_tiles rows at the same K offset, so with the same 64-byte swizzle shared memory
// holds the same bytes at the same addresses. Needs N % 16 == 0 and K % 64 == 0 (checked by
// the caller); tiles past N / 16 are zero-filled as the 2-D map's rows past N are.
inline CUtensorMap make_tmap_fp8_tiled(const void* base, int64_t N, int64_t K, int box_tiles,
                                       const char* op) {
  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  const cuuint64_t dims[4] = {64, 16, static_cast<cuuint64_t>(K / 64), static_cast<cuuint64_t>(N / 16)};
  const cuuint64_t strides[3] = {64, 1024, static_cast<cuuint64_t>(K / 64) * 1024};  // bytes, dims 1..3
  const cuuint32_t box[4] = {64, 16, 1, static_cast<cuuint32_t>(box_tiles)};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode_fn(op)(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void*>(base),
                                   dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(r == CUDA_SUCCESS, op, ": cuTensorMapEncodeTiled failed (CUresult ", int(r),
              ") for the tiled [", N, ", ", K, "] fp8 weight, box of ", box_tiles, " tiles");
  return map;
}

// The tile configuration an environment variable forces (tests, A/B measurements): the index
// in `all` of the value whose name(value) equals `env`'s string, or -1 when `env` is unset or
// empty; any other string is an error listing the names. Shared by the sm_90a GEMMs' and GEMVs'
// tile knobs (TORCHQUANT_INT8_WGMMA_TILE, TORCHQUANT_SP24_WGMMA_TILE, TORCHQUANT_DQ_WGMMA_TILE,
// TORCHQUANT_FP8_WGMMA_TILE, TORCHQUANT_NVFP4_WGMMA_TILE).
template <class E, size_t N, class NameFn>
inline int forced_index(const char* env, const E (&all)[N], NameFn name, const char* op) {
  const char* v = std::getenv(env);
  if (v == nullptr || v[0] == '\0') return -1;
  std::string names;
  for (size_t i = 0; i < N; ++i) {
    if (std::strcmp(v, name(all[i])) == 0) return static_cast<int>(i);
    names += i ? ", " : "";
    names += name(all[i]);
  }
  TORCH_CHECK(false, op, ": ", env, "='", v, "' is not one of ", names);
  return -1;
}

// The same over a list of names (the index is the tile's position in that list).
template <size_t N>
inline int forced_index(const char* env, const char* const (&names)[N], const char* op) {
  return forced_index(env, names, [](const char* n) { return n; }, op);
}

// Rows per TMA box of the operand that carries the tokens (M of them), out of a tile of
// `tile_rows`. With `cut` (the caller's grid has one token tile and no multicast) and M inside
// the tile, round_up(M, 8) rows instead, so TMA does not zero-fill the tile's rows past M; the
// stage rows past the box keep stale bytes, which reach only outputs of tokens >= M (never
// stored). The measurement knob `knob` = "0" keeps the whole tile (A/Bs, tests). Used by the
// int8 GEMM (its A boxes) and the 2:4 GEMM's decode tiles (their activation boxes).
inline int token_box_rows(int64_t M, int tile_rows, bool cut, const char* knob) {
  if (!cut || M > tile_rows) return tile_rows;
  const char* env = std::getenv(knob);
  if (env != nullptr && std::strcmp(env, "0") == 0) return tile_rows;
  return static_cast<int>(std::min<int64_t>(tile_rows, (M + 7) / 8 * 8));
}

// TMA needs a 16-byte aligned base address; a view with an odd storage offset gets a fresh copy.
inline at::Tensor tma_ready(const at::Tensor& t) {
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0) return t;
  return t.clone(at::MemoryFormat::Contiguous);
}

// The preconditions every sm_90a GEMM shares, after its op's validator: M and N inside the TMA's
// 32-bit coordinates (with a box of up to 256 rows past the last one), and a compute capability
// 9.0 device (the code is built for sm_90a only). `what` prefixes the capability message
// ("path 'wgmma' " for a path of a public op, "" for an internal op). Returns the caps of
// `device`.
inline const DeviceCaps& require_sm90a(int64_t M, int64_t N, int device, const char* op,
                                       const char* what = "") {
  TORCH_CHECK(M < (int64_t(1) << 31) - 256 && N < (int64_t(1) << 31) - 256, op,
              ": M and N must fit the TMA's 32-bit coordinates, got M = ", M, ", N = ", N);
  const DeviceCaps& caps = device_caps(device);
  TORCH_CHECK(caps.major == 9 && caps.minor == 0, op, ": ", what,
              "needs a compute capability 9.0 GPU (H100/H200; the code is built for sm_90a "
              "only), this device is sm_", caps.major, caps.minor);
  return caps;
}

// `cfg` for `ctas` CTAs of `threads` threads and `smem` bytes of dynamic shared memory, in
// clusters of `cm` CTAs along x when cm > 1 (through `attr`, which must outlive cfg's use).
inline void cluster_config(cudaLaunchConfig_t& cfg, cudaLaunchAttribute& attr, int ctas,
                           int threads, int smem, int cm, cudaStream_t stream) {
  cfg = {};
  cfg.gridDim = dim3(ctas, 1, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  if (cm > 1) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cm;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
}

// How many clusters of cm CTAs of `kernel` the occupancy calculator says the device holds at
// once, or 0 when it cannot say (its error is cleared). `kernel` must already be opted in to
// `smem` bytes of dynamic shared memory.
inline int max_active_clusters(const void* kernel, int threads, int smem, int cm,
                               const DeviceCaps& caps) {
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr;
  cluster_config(cfg, attr, cm * caps.sm_count, threads, smem, cm, nullptr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

// Once per device and kernel: opt `kernel` in to `smem` bytes of dynamic shared memory and find
// how many of its CTAs can be resident at once (per_sm per SM, capped by what the occupancy
// calculator says fits; with clusters of cm, what the GPCs can place). `device` must be the
// current device.
inline int resident_ctas(const void* kernel, int threads, int smem, int cm, int device,
                         const DeviceCaps& caps, int per_sm = 1) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto it = cache.find({kernel, device});
  if (it != cache.end()) return it->second;
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int ctas = caps.sm_count;
  if (per_sm > 1) {
    int fit = 0;
    C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, smem));
    ctas = caps.sm_count * std::max(1, std::min(per_sm, fit));
  }
  if (cm > 1) {
    const int clusters = max_active_clusters(kernel, threads, smem, cm, caps);
    ctas = clusters > 0 ? clusters * cm : (caps.sm_count / cm) * cm;  // unknown: every SM pairs up
  }
  const int value = std::max(ctas, cm);
  cache[{kernel, device}] = value;
  return value;
}

// Launches `kernel` on `ctas` CTAs (a multiple of cm) in clusters of cm along x.
template <class... Params, class... Args>
void launch_clusters(void (*kernel)(Params...), int ctas, int threads, int smem, int cm,
                     cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr;
  cluster_config(cfg, attr, ctas, threads, smem, cm, stream);
  C10_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Whether a wgmma GEMM's epilogue stores regrouped 16-byte pieces (int8_gemm_sm90a_kernels.cuh
// epilogue_vec, sparse24_gemm_sm90a_kernels.cuh sp_epilogue_vec): only for a 16-bit output whose
// rows hold whole 8-element groups (N % 8 == 0; outputs are fresh allocations, so row starts are
// then 16-byte aligned). by_default: the kernel's own choice, from same-build A/Bs on the H200
// (results/h200/2026-12-03_wgmma_epilogue): on for the int8 GEMMs (dense: up to 29 % faster,
// 2:4: 3-5 %), off for the 16-bit 2:4 GEMM and the fp8 / nvfp4 dequantizing GEMMs (level or
// slower). TORCHQUANT_WGMMA_VEC=1 / 0 forces it on / off wherever it applies (tests, A/B).
inline int wgmma_vec_store(at::ScalarType out_dtype, int64_t N, bool by_default) {
  if (c10::elementSize(out_dtype) != 2 || N % 8 != 0) return 0;
  const char* env = std::getenv("TORCHQUANT_WGMMA_VEC");
  if (env != nullptr && std::strcmp(env, "0") == 0) return 0;
  if (env != nullptr && std::strcmp(env, "1") == 0) return 1;
  return by_default ? 1 : 0;
}

}  // namespace tma
}  // namespace torchquant
