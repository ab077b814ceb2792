// Host side of TMA (cp.async.bulk.tensor) for the sm_90a kernels: the driver's tensor-map
// encoder, reached through the runtime (cudaGetDriverEntryPointByVersion), so nothing links
// against libcuda, and one helper that encodes a 2-D byte-addressed map.
#pragma once

#include <c10/util/Exception.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

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

}  // namespace tma
}  // namespace torchquant
