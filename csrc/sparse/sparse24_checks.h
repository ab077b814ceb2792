// Validators and error texts of the 2:4 execution ops (sparse24_gemv,
// sparse24_int8_matmul), and the data-error texts of compress24 /
// decompress24, shared by the CPU (csrc/cpu/sparse24_exec_cpu.cpp) and CUDA
// (csrc/sparse/sparse24.cu) implementations so both raise the same words.
// Host-only. Candidates to move into csrc/common/checks.h (lead's call).
#pragma once

#include <ATen/ATen.h>

#include <climits>
#include <cstdint>

#include "common/checks.h"

namespace torchquant {

// ------------------------------------------------------ data errors ------
// The texts csrc/cpu/sparse24_cpu.cpp raises, verbatim: a CUDA caller sees
// the same message for the same bad group.
// The 2:4 sparse-wgmma GEMM splits K over a cluster (tile 16c1k) at decode sizes when its
// 128-feature tiles number at most a quarter of the SMs and K gives >= 8 stages (128 logical K
// per stage for the 16-bit kinds, 256 for int8). One rule for both modules: the "auto" path
// choice (sparse24.cu, auto_takes_sparse_wgmma) and the tile choice (sparse24_gemm_sm90a.cu,
// choose_sp_config), where the measurements are.
inline bool sparse24_ksplit_grid(int64_t N, int64_t K, int sm_count, bool int8) {
  const int64_t stage = int8 ? 256 : 128;
  return 4 * ((N + 127) / 128) <= sm_count && (K + stage - 1) / stage >= 8;
}

[[noreturn]] inline void sparse24_raise_too_many_nonzeros(int64_t row, int64_t group, int count) {
  TORCH_CHECK(false, "compress24: row ", row, ", group ", group, " (columns ", 4 * group, "..",
              4 * group + 3, ") has ", count,
              " nonzeros; a 2:4 tensor has at most 2 in every group of 4 along K "
              "(prune it with prune24 first)");
  abort();  // unreachable: TORCH_CHECK(false) throws
}

[[noreturn]] inline void sparse24_raise_bad_nibble(int64_t row, int64_t group, int nib) {
  TORCH_CHECK(false, "decompress24: meta of row ", row, ", group ", group, " is nibble ", nib,
              " (positions ", (nib & 3), " and ", (nib >> 2),
              "); a valid nibble has first position < second (corrupt or non-compress24 meta)");
  abort();
}

// Shared shape checks of a compressed weight (values [N, K/2], meta
// [N, ceil(K/8)]) against an activation's K.
inline void check_sparse24_weight(const at::Tensor& values, const at::Tensor& meta, int64_t K,
                                  const char* op, const char* vname, const char* mname) {
  check_dim(values, 2, op, vname);
  check_dim(meta, 2, op, mname);
  check_dtype(meta, at::kByte, op, mname);
  check_contiguous(values, op, vname);
  check_contiguous(meta, op, mname);
  TORCH_CHECK(values.size(1) * 2 == K, op, ": ", vname, " must be [N, K/2] = [N, ", K / 2,
              "] for K = ", K, ", got ", shape_str(values.sizes()));
  TORCH_CHECK(meta.size(0) == values.size(0) && meta.size(1) == (K + 7) / 8, op, ": ", mname,
              " must be [N, ceil(K/8)] = [", values.size(0), ", ", (K + 7) / 8, "], got ",
              shape_str(meta.sizes()));
}

// ----------------------------------------------------- sparse24_gemv ----
// x fp16/bf16 [M, K]; values [N, K/2] in x's dtype; meta uint8 [N, ceil(K/8)];
// bias [N] in x's dtype or None. K a multiple of 4; M, N, K below 2^31.
inline GemvShape validate_sparse24_gemv(const at::Tensor& x, const at::Tensor& values,
                                        const at::Tensor& meta,
                                        const c10::optional<at::Tensor>& bias) {
  const char* op = "sparse24_gemv";
  check_dim(x, 2, op, "x");
  TORCH_CHECK(is_half_or_bf16(x.scalar_type()), op, ": x must be float16 or bfloat16, got ",
              x.scalar_type());
  check_contiguous(x, op, "x");
  check_same_device(x, values, op, "values");
  check_same_device(x, meta, op, "meta");
  TORCH_CHECK(values.scalar_type() == x.scalar_type(), op, ": values dtype ",
              values.scalar_type(), " must match x dtype ", x.scalar_type());
  const int64_t M = x.size(0), K = x.size(1);
  TORCH_CHECK(values.dim() == 2, op, ": values must be 2-D, got shape ", shape_str(values.sizes()));
  const int64_t N = values.size(0);
  TORCH_CHECK(M > 0 && N > 0 && K > 0, op, ": empty operand (M = ", M, ", N = ", N, ", K = ", K,
              ")");
  TORCH_CHECK(K % 4 == 0, op, ": K must be a multiple of 4 (2:4 groups), got ", K);
  TORCH_CHECK(M < kMaxDim && N < kMaxDim && K < kMaxDim, op,
              ": M, N and K must be below 2^31 - 256");
  check_sparse24_weight(values, meta, K, op, "values", "meta");
  if (bias.has_value()) {
    check_bias(bias, x, N, op);
    TORCH_CHECK(bias->scalar_type() == x.scalar_type(), op, ": bias dtype ", bias->scalar_type(),
                " must match x dtype ", x.scalar_type());
  }
  return {M, N, K};
}

// ---------------------------------------------- sparse24_int8_matmul ----
// int8_matmul's arguments and epilogue with the weight in compressed 2:4
// form: w_values int8 [N, K/2], w_meta uint8 [N, ceil(K/8)]. w_colsum, when
// given, is sum_k of the DENSE weight row (= the sum of its kept values).
inline Int8MatmulShape validate_sparse24_int8_matmul(
    const at::Tensor& a_q, const at::Tensor& a_scale, const c10::optional<at::Tensor>& a_zero,
    const at::Tensor& w_values, const at::Tensor& w_meta, const at::Tensor& w_scale,
    const c10::optional<at::Tensor>& w_colsum, const c10::optional<at::Tensor>& bias,
    c10::optional<at::ScalarType> out_dtype) {
  const char* op = "sparse24_int8_matmul";
  check_dim(a_q, 2, op, "a_q");
  check_dtype(a_q, at::kChar, op, "a_q");
  check_contiguous(a_q, op, "a_q");
  check_dim(w_values, 2, op, "w_values");
  check_dtype(w_values, at::kChar, op, "w_values");
  const int64_t M = a_q.size(0), K = a_q.size(1), N = w_values.size(0);
  TORCH_CHECK(M > 0 && N > 0 && K > 0, op, ": empty operand (M = ", M, ", N = ", N, ", K = ", K,
              ")");
  TORCH_CHECK(K % 4 == 0, op, ": K must be a multiple of 4 (2:4 groups), got ", K);
  TORCH_CHECK(K <= kInt8MaxK, op, ": K = ", K, " exceeds ", kInt8MaxK,
              ", beyond which the int32 accumulator can overflow");
  TORCH_CHECK(M < kMaxDim && N < kMaxDim, op, ": M and N must be below 2^31 - 256");
  check_same_device(a_q, a_scale, op, "a_scale");
  check_same_device(a_q, w_values, op, "w_values");
  check_same_device(a_q, w_meta, op, "w_meta");
  check_same_device(a_q, w_scale, op, "w_scale");
  check_sparse24_weight(w_values, w_meta, K, op, "w_values", "w_meta");
  const at::ScalarType od =
      check_int8_epilogue(a_q, a_scale, a_zero, w_scale, w_colsum, bias, out_dtype, M, N, op);
  return {M, N, K, od};
}

}  // namespace torchquant
