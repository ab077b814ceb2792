// Argument validation shared by the CPU and CUDA implementations.
//
// Every op validates through one function here, so a bad call raises the same
// clear Python exception (RuntimeError from TORCH_CHECK, ValueError-like
// messages) whichever backend it reaches, and before any kernel runs: no
// crash, no illegal memory access, no silent wrong answer.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "nvfp4/nvfp4_layout.h"

namespace torchquant {

// "[2, 3]" for an error message.
inline std::string shape_str(at::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

// Largest K for which |acc| + |z_a * colsum| <= 2 * K * 128 * 127 fits int32.
constexpr int64_t kInt8MaxK = 65536;

// M, N (and the 2:4 GEMV's K) of the ops whose launchers round tile and chunk counts up in int
// ((K + 2047) / 2048, (N + 63) / 64 ...): a margin below 2^31.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 256;

// A required tensor passed as None reaches an op as an undefined tensor once another operand
// has set the dispatch key; without this its dtype prints as UNKNOWN_SCALAR.
inline void check_defined(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK(t.defined(), op, ": ", name, " must be a tensor, got None");
}

inline void check_dim(const at::Tensor& t, int64_t dim, const char* op, const char* name) {
  check_defined(t, op, name);
  TORCH_CHECK(t.dim() == dim, op, ": ", name, " must be ", dim, "-D, got shape ", shape_str(t.sizes()));
}

inline void check_dtype(const at::Tensor& t, at::ScalarType want, const char* op, const char* name) {
  check_defined(t, op, name);
  TORCH_CHECK(t.scalar_type() == want, op, ": ", name, " must be ", want, ", got ",
              t.scalar_type());
}

inline void check_contiguous(const at::Tensor& t, const char* op, const char* name) {
  check_defined(t, op, name);
  TORCH_CHECK(t.is_contiguous(), op, ": ", name,
              " must be contiguous (call .contiguous() first), got strides ", shape_str(t.strides()));
}

inline void check_same_device(const at::Tensor& ref, const at::Tensor& t, const char* op,
                              const char* name) {
  check_defined(t, op, name);
  TORCH_CHECK(t.device() == ref.device(), op, ": ", name, " is on ", t.device(),
              " but the other operands are on ", ref.device());
}

inline bool is_half_or_bf16(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16;
}

inline bool is_float_type(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

// A per-row (length `rows`) or single-element vector of a given dtype.
inline void check_rowvec(const at::Tensor& t, int64_t rows, at::ScalarType dtype, const char* op,
                         const char* name) {
  check_dtype(t, dtype, op, name);
  TORCH_CHECK(t.numel() == 1 || (t.dim() == 1 && t.size(0) == rows), op, ": ", name,
              " must hold one element or be 1-D of length ", rows, ", got shape ", shape_str(t.sizes()));
  check_contiguous(t, op, name);
}

inline void check_bias(const c10::optional<at::Tensor>& bias, const at::Tensor& ref, int64_t n,
                       const char* op) {
  if (!bias.has_value()) return;
  const at::Tensor& b = *bias;
  check_same_device(ref, b, op, "bias");
  TORCH_CHECK(is_float_type(b.scalar_type()), op, ": bias must be float32, float16 or bfloat16, got ",
              b.scalar_type());
  TORCH_CHECK(b.dim() == 1 && b.size(0) == n, op, ": bias must be 1-D of length N = ", n,
              ", got shape ", shape_str(b.sizes()));
  check_contiguous(b, op, "bias");
}

// Rejects NaN and Inf in a tensor about to be quantized: a quantizer would
// turn them into a NaN scale or a saturated code, a silent wrong answer.
// Costs a device synchronization on CUDA, so it is used by the offline
// (weight) quantizers, not by the per-token activation path.
inline void check_finite(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK(at::isfinite(t).all().item<bool>(), op, ": ", name,
              " contains NaN or Inf; quantizing it would give a meaningless scale");
}

// ---------------------------------------------------------------- int8 ----
struct Int8MatmulShape {
  int64_t M, N, K;
  at::ScalarType out_dtype;
};

// The operands of the int8 epilogue (int8_matmul and sparse24_int8_matmul):
// per-token or per-tensor activation scale [M], per-channel weight scale [N],
// optional zero point [M] with the weight's column sums [N], bias, out_dtype.
// Returns the output dtype.
inline at::ScalarType check_int8_epilogue(const at::Tensor& a_q, const at::Tensor& a_scale,
                                          const c10::optional<at::Tensor>& a_zero,
                                          const at::Tensor& w_scale,
                                          const c10::optional<at::Tensor>& w_colsum,
                                          const c10::optional<at::Tensor>& bias,
                                          const c10::optional<at::ScalarType>& out_dtype,
                                          int64_t M, int64_t N, const char* op) {
  check_rowvec(a_scale, M, at::kFloat, op, "a_scale");
  check_rowvec(w_scale, N, at::kFloat, op, "w_scale");
  if (a_zero.has_value()) {
    check_same_device(a_q, *a_zero, op, "a_zero");
    check_rowvec(*a_zero, M, at::kInt, op, "a_zero");
  }
  if (w_colsum.has_value()) {
    check_same_device(a_q, *w_colsum, op, "w_colsum");
    check_dtype(*w_colsum, at::kInt, op, "w_colsum");
    TORCH_CHECK(w_colsum->dim() == 1 && w_colsum->size(0) == N, op,
                ": w_colsum must be 1-D of length N = ", N, ", got shape ", shape_str(w_colsum->sizes()));
    check_contiguous(*w_colsum, op, "w_colsum");
  }
  check_bias(bias, a_q, N, op);
  const at::ScalarType od = out_dtype.value_or(at::kFloat);
  TORCH_CHECK(is_float_type(od), op, ": out_dtype must be float32, float16 or bfloat16, got ", od);
  return od;
}

inline Int8MatmulShape validate_int8_matmul(const at::Tensor& a_q, const at::Tensor& a_scale,
                                            const c10::optional<at::Tensor>& a_zero,
                                            const at::Tensor& w_q, const at::Tensor& w_scale,
                                            const c10::optional<at::Tensor>& w_colsum,
                                            const c10::optional<at::Tensor>& bias,
                                            c10::optional<at::ScalarType> out_dtype) {
  const char* op = "int8_matmul";
  check_dim(a_q, 2, op, "a_q");
  check_dim(w_q, 2, op, "w_q");
  check_dtype(a_q, at::kChar, op, "a_q");
  check_dtype(w_q, at::kChar, op, "w_q");
  check_contiguous(a_q, op, "a_q");
  check_contiguous(w_q, op, "w_q");
  const int64_t M = a_q.size(0), K = a_q.size(1), N = w_q.size(0);
  TORCH_CHECK(w_q.size(1) == K, op, ": a_q is [M, K] = ", shape_str(a_q.sizes()), " and w_q [N, K] = ",
              shape_str(w_q.sizes()), ": their K differ");
  TORCH_CHECK(M > 0 && N > 0 && K > 0, op, ": empty operand (M = ", M, ", N = ", N, ", K = ", K,
              ")");
  TORCH_CHECK(K <= kInt8MaxK, op, ": K = ", K, " exceeds ", kInt8MaxK,
              ", beyond which the int32 accumulator can overflow");
  check_same_device(a_q, a_scale, op, "a_scale");
  check_same_device(a_q, w_q, op, "w_q");
  check_same_device(a_q, w_scale, op, "w_scale");
  const at::ScalarType od =
      check_int8_epilogue(a_q, a_scale, a_zero, w_scale, w_colsum, bias, out_dtype, M, N, op);
  return {M, N, K, od};
}

inline void validate_quantize_int8(const at::Tensor& x) {
  const char* op = "quantize_int8";
  check_dim(x, 2, op, "x");
  TORCH_CHECK(is_float_type(x.scalar_type()), op,
              ": x must be float32, float16 or bfloat16, got ", x.scalar_type());
  check_contiguous(x, op, "x");
  TORCH_CHECK(x.size(0) > 0 && x.size(1) > 0, op, ": x must be non-empty, got shape ", shape_str(x.sizes()));
}

// ----------------------------------------------------------------- fp8 ----
inline void check_block_size(int64_t block_size, const char* op) {
  TORCH_CHECK(block_size >= 16 && block_size <= 256 && block_size % 16 == 0, op,
              ": block_size must be a multiple of 16 in [16, 256], got ", block_size);
}

struct GemvShape {
  int64_t M, N, K;
};

inline GemvShape validate_fp8_block_gemv(const at::Tensor& x, const at::Tensor& w_q,
                                         const at::Tensor& w_scale, int64_t block_size,
                                         const c10::optional<at::Tensor>& bias,
                                         const char* op = "fp8_block_gemv") {
  check_block_size(block_size, op);
  check_dim(x, 2, op, "x");
  check_dim(w_q, 2, op, "w_q");
  check_dim(w_scale, 2, op, "w_scale");
  TORCH_CHECK(is_half_or_bf16(x.scalar_type()), op, ": x must be float16 or bfloat16, got ",
              x.scalar_type());
  check_dtype(w_q, at::kFloat8_e4m3fn, op, "w_q");
  check_dtype(w_scale, at::kFloat, op, "w_scale");
  check_contiguous(x, op, "x");
  check_contiguous(w_q, op, "w_q");
  check_contiguous(w_scale, op, "w_scale");
  check_same_device(x, w_q, op, "w_q");
  check_same_device(x, w_scale, op, "w_scale");
  const int64_t M = x.size(0), K = x.size(1), N = w_q.size(0);
  TORCH_CHECK(w_q.size(1) == K, op, ": x is [M, K] = ", shape_str(x.sizes()), " and w_q [N, K] = ",
              shape_str(w_q.sizes()), ": their K differ");
  TORCH_CHECK(M > 0 && N > 0 && K > 0, op, ": empty operand (M = ", M, ", N = ", N, ", K = ", K,
              ")");
  TORCH_CHECK(K % 16 == 0, op, ": K must be a multiple of 16, got ", K);
  const int64_t nb = (K + block_size - 1) / block_size;
  TORCH_CHECK(w_scale.size(0) == N && w_scale.size(1) == nb, op, ": w_scale must be [N, ceil(K / ",
              block_size, ")] = [", N, ", ", nb, "], got ", shape_str(w_scale.sizes()));
  if (bias.has_value()) {
    check_bias(bias, x, N, op);
    TORCH_CHECK(bias->scalar_type() == x.scalar_type(), op, ": bias dtype ", bias->scalar_type(),
                " must match x dtype ", x.scalar_type());
  }
  return {M, N, K};
}

// The tiled fp8 weight (fp8/fp8_tiles.h; fp8_block_gemv(..., tiled=True) and fp8_block_tile):
// whole 16-row tiles of 64-byte pieces.
inline void check_fp8_tiled_shape(int64_t N, int64_t K, const char* op) {
  TORCH_CHECK(N % 16 == 0 && K % 64 == 0, op,
              ": the tiled fp8 weight needs N % 16 == 0 and K % 64 == 0 (whole 16-row tiles of 64-byte "
              "pieces), got N = ", N, ", K = ", K);
}

// --------------------------------------------------------------- nvfp4 ----
inline GemvShape validate_nvfp4_gemv(const at::Tensor& x, const at::Tensor& w_packed,
                                     const at::Tensor& w_scale, const at::Tensor& global_scale,
                                     const c10::optional<at::Tensor>& bias,
                                     const char* op = "nvfp4_gemv") {
  check_dim(x, 2, op, "x");
  check_dim(w_packed, 2, op, "w_packed");
  check_dim(w_scale, 2, op, "w_scale");
  TORCH_CHECK(is_half_or_bf16(x.scalar_type()), op, ": x must be float16 or bfloat16, got ",
              x.scalar_type());
  check_dtype(w_packed, at::kByte, op, "w_packed");
  check_dtype(w_scale, at::kFloat8_e4m3fn, op, "w_scale");
  check_dtype(global_scale, at::kFloat, op, "global_scale");
  TORCH_CHECK(global_scale.numel() == 1, op, ": global_scale must hold one element, got shape ",
              shape_str(global_scale.sizes()));
  check_contiguous(x, op, "x");
  check_contiguous(w_packed, op, "w_packed");
  check_contiguous(w_scale, op, "w_scale");
  check_same_device(x, w_packed, op, "w_packed");
  check_same_device(x, w_scale, op, "w_scale");
  check_same_device(x, global_scale, op, "global_scale");
  const int64_t M = x.size(0), K = x.size(1), N = w_packed.size(0);
  TORCH_CHECK(K % 16 == 0, op, ": K must be a multiple of 16, got ", K);
  TORCH_CHECK(w_packed.size(1) * 2 == K, op, ": x is [M, K] = ", shape_str(x.sizes()),
              " so w_packed must be [N, K/2] = [N, ", K / 2, "], got ", shape_str(w_packed.sizes()));
  TORCH_CHECK(M > 0 && N > 0 && K > 0, op, ": empty operand (M = ", M, ", N = ", N, ", K = ", K,
              ")");
  TORCH_CHECK(w_scale.size(0) == N && w_scale.size(1) == K / 16, op,
              ": w_scale must be [N, K/16] = [", N, ", ", K / 16, "], got ", shape_str(w_scale.sizes()));
  if (bias.has_value()) {
    check_bias(bias, x, N, op);
    TORCH_CHECK(bias->scalar_type() == x.scalar_type(), op, ": bias dtype ", bias->scalar_type(),
                " must match x dtype ", x.scalar_type());
  }
  return {M, N, K};
}

inline void validate_weight_2d(const at::Tensor& w, const char* op, int64_t k_multiple) {
  check_dim(w, 2, op, "w");
  TORCH_CHECK(is_float_type(w.scalar_type()), op, ": w must be float32, float16 or bfloat16, got ",
              w.scalar_type());
  check_contiguous(w, op, "w");
  TORCH_CHECK(w.size(0) > 0 && w.size(1) > 0, op, ": w must be non-empty, got shape ", shape_str(w.sizes()));
  TORCH_CHECK(w.size(1) % k_multiple == 0, op, ": K = w.size(1) must be a multiple of ",
              k_multiple, ", got ", w.size(1));
}

// quantize_fp8_act: x [M, K] float32 / float16 / bfloat16, contiguous; M may
// be 0 (an empty batch), K may not.
inline void validate_quantize_fp8_act(const at::Tensor& x, int64_t block_size) {
  const char* op = "quantize_fp8_act";
  check_block_size(block_size, op);
  check_dim(x, 2, op, "x");
  TORCH_CHECK(is_float_type(x.scalar_type()), op, ": x must be float32, float16 or bfloat16, got ",
              x.scalar_type());
  check_contiguous(x, op, "x");
  TORCH_CHECK(x.size(1) > 0, op, ": x must have K > 0, got shape ", shape_str(x.sizes()));
}

inline at::ScalarType dequant_out_dtype(c10::optional<at::ScalarType> out_dtype, const char* op) {
  const at::ScalarType od = out_dtype.value_or(at::kFloat);
  TORCH_CHECK(is_float_type(od), op, ": out_dtype must be float32, float16 or bfloat16, got ", od);
  return od;
}

// A stored fp8_block weight (dequantize_fp8_block, fp8_block_tile): w_q e4m3 and its fp32 block
// scales, both 2-D, contiguous and on one device, w_q non-empty. The scales' shape is the caller's.
inline void check_fp8_weight_pair(const at::Tensor& w_q, const at::Tensor& scale, const char* op,
                                  const char* scale_name) {
  check_dim(w_q, 2, op, "w_q");
  check_dim(scale, 2, op, scale_name);
  check_dtype(w_q, at::kFloat8_e4m3fn, op, "w_q");
  check_dtype(scale, at::kFloat, op, scale_name);
  check_contiguous(w_q, op, "w_q");
  check_contiguous(scale, op, scale_name);
  check_same_device(w_q, scale, op, scale_name);
  TORCH_CHECK(w_q.size(0) > 0 && w_q.size(1) > 0, op, ": w_q must be non-empty, got shape ",
              shape_str(w_q.sizes()));
}

inline void validate_dequantize_fp8_block(const at::Tensor& w_q, const at::Tensor& scale,
                                          int64_t block_size) {
  const char* op = "dequantize_fp8_block";
  check_block_size(block_size, op);
  check_fp8_weight_pair(w_q, scale, op, "scale");
  const int64_t N = w_q.size(0), K = w_q.size(1), nb = (K + block_size - 1) / block_size;
  TORCH_CHECK(scale.size(0) == N && scale.size(1) == nb, op, ": scale must be [N, ceil(K / ",
              block_size, ")] = [", N, ", ", nb, "], got ", shape_str(scale.sizes()));
}

inline void validate_dequantize_nvfp4(const at::Tensor& w_packed, const at::Tensor& scale,
                                      const at::Tensor& global_scale) {
  const char* op = "dequantize_nvfp4";
  check_dim(w_packed, 2, op, "w_packed");
  check_dim(scale, 2, op, "scale");
  check_dtype(w_packed, at::kByte, op, "w_packed");
  check_dtype(scale, at::kFloat8_e4m3fn, op, "scale");
  check_dtype(global_scale, at::kFloat, op, "global_scale");
  TORCH_CHECK(global_scale.numel() == 1, op, ": global_scale must hold one element, got shape ",
              shape_str(global_scale.sizes()));
  check_contiguous(w_packed, op, "w_packed");
  check_contiguous(scale, op, "scale");
  check_same_device(w_packed, scale, op, "scale");
  check_same_device(w_packed, global_scale, op, "global_scale");
  const int64_t N = w_packed.size(0), K = w_packed.size(1) * 2;
  TORCH_CHECK(N > 0 && K > 0, op, ": w_packed must be non-empty, got shape ", shape_str(w_packed.sizes()));
  TORCH_CHECK(K % 16 == 0, op, ": K = 2 * w_packed.size(1) must be a multiple of 16, got ", K);
  TORCH_CHECK(scale.size(0) == N && scale.size(1) == K / 16, op, ": scale must be [N, K/16] = [",
              N, ", ", K / 16, "], got ", shape_str(scale.sizes()));
}

// nvfp4_gemv's layout argument (nvfp4/nvfp4_layout.h): 0 (formats.md), 1 (the bf16 decode
// order, bf16 x only), 2 (the fp16 decode order, fp16 x only) or 3 (the bf16 decode order on
// adjacent codes, bf16 x only); where tiled_ok (nvfp4_gemv, nvfp4_relayout and
// nvfp4_relayout_scale), also 4 (layout 3 tiled, bf16 x only).
inline void check_nvfp4_layout_value(int64_t layout, const char* op, bool tiled_ok = false) {
  TORCH_CHECK((layout >= 0 && layout < nvfp4::kNumLayouts) || (tiled_ok && layout == nvfp4::kLayoutTiled), op,
              ": layout must be 0 (formats.md packing), 1 (the bf16 decode order), 2 (the fp16 "
              "decode order) or 3 (the bf16 decode order on adjacent codes)",
              tiled_ok ? ", or 4 (layout 3 tiled)" : " (layout 4, tiled, is nvfp4_gemv's alone)", ", got ", layout);
}
// A layout the op's kernels read with x of this dtype (layouts 1, 3 and 4: bf16, 2: fp16).
inline void check_nvfp4_layout(int64_t layout, at::ScalarType x_dtype, const char* op, bool tiled_ok = false) {
  check_nvfp4_layout_value(layout, op, tiled_ok);
  if (layout == nvfp4::kLayoutStd) return;
  const bool bf16 = layout == nvfp4::kLayoutBf16 || layout == nvfp4::kLayoutBf16Adj || layout == nvfp4::kLayoutTiled;
  TORCH_CHECK(x_dtype == (bf16 ? at::kBFloat16 : at::kHalf), op, ": layout ", layout, " is the ",
              bf16 ? "bf16" : "fp16", " decode order and needs ", bf16 ? "bfloat16" : "float16",
              " x, got ", x_dtype, "; give other x the layout-0 weight (nvfp4_relayout(w_packed, ",
              layout, ", inverse=True))");
}

// A layout-4 operand's shape (nvfp4/nvfp4_tiles.h): N rows of a K-wide weight, N % 16 == 0 and
// K % 128 == 0.
inline void check_nvfp4_tiled_shape(int64_t N, int64_t K, const char* op) {
  TORCH_CHECK(N % nvfp4::kTileRows == 0 && K % 128 == 0, op,
              ": layout 4 (tiles of 16 rows x 128 codes) needs N % 16 == 0 and K % 128 == 0, got N = ", N,
              ", K = ", K, "; use layout 3 for other shapes");
}

// The relayout ops' shared checks (nvfp4_relayout, nvfp4_relayout_scale): a layout 0..4 and a
// contiguous 2-D operand of its dtype.
inline void check_nvfp4_relayout_operand(const at::Tensor& t, int64_t layout, at::ScalarType dtype,
                                         const char* op, const char* name) {
  check_nvfp4_layout_value(layout, op, /*tiled_ok=*/true);
  check_dim(t, 2, op, name);
  check_dtype(t, dtype, op, name);
  check_contiguous(t, op, name);
}

// nvfp4_relayout: a packed weight (uint8 [N, K/2], K % 16 == 0, contiguous) and a layout
// (4: N % 16 == 0 and K % 128 == 0 as well).
inline void validate_nvfp4_relayout(const at::Tensor& w_packed, int64_t layout) {
  const char* op = "nvfp4_relayout";
  check_nvfp4_relayout_operand(w_packed, layout, at::kByte, op, "w_packed");
  TORCH_CHECK(w_packed.size(1) % 8 == 0, op,
              ": K = 2 * w_packed.size(1) must be a multiple of 16, got ", w_packed.size(1) * 2);
  if (layout == nvfp4::kLayoutTiled) check_nvfp4_tiled_shape(w_packed.size(0), w_packed.size(1) * 2, op);
}

// ----------------------------------------------------------------- 2:4 ----
inline bool is_sparse24_dtype(at::ScalarType t) {
  return t == at::kChar || t == at::kHalf || t == at::kBFloat16 || t == at::kFloat;
}

inline void validate_sparse24_input(const at::Tensor& w, const char* op) {
  check_dim(w, 2, op, "w");
  TORCH_CHECK(is_sparse24_dtype(w.scalar_type()), op,
              ": w must be int8, float16, bfloat16 or float32, got ", w.scalar_type());
  check_contiguous(w, op, "w");
  TORCH_CHECK(w.size(0) > 0 && w.size(1) > 0, op, ": w must be non-empty, got shape ", shape_str(w.sizes()));
  TORCH_CHECK(w.size(1) % 4 == 0, op, ": K = w.size(1) must be a multiple of 4, got ", w.size(1));
}

inline int64_t validate_decompress24(const at::Tensor& values, const at::Tensor& meta) {
  const char* op = "decompress24";
  check_dim(values, 2, op, "values");
  check_dim(meta, 2, op, "meta");
  TORCH_CHECK(is_sparse24_dtype(values.scalar_type()), op,
              ": values must be int8, float16, bfloat16 or float32, got ", values.scalar_type());
  check_dtype(meta, at::kByte, op, "meta");
  check_contiguous(values, op, "values");
  check_contiguous(meta, op, "meta");
  check_same_device(values, meta, op, "meta");
  const int64_t N = values.size(0), K = values.size(1) * 2;
  TORCH_CHECK(N > 0, op, ": values must be non-empty, got shape ", shape_str(values.sizes()));
  TORCH_CHECK(K > 0 && K % 4 == 0, op, ": values must be [N, K/2] with K a multiple of 4, got ",
              shape_str(values.sizes()));
  TORCH_CHECK(meta.size(0) == N && meta.size(1) == (K + 7) / 8, op,
              ": meta must be [N, ceil(K/8)] = [", N, ", ", (K + 7) / 8, "], got ", shape_str(meta.sizes()));
  return K;
}

// Kernel-path names. "auto" is valid everywhere; every other name must be one
// the backend implements, so a typo or a CUDA-only path on CPU raises.
inline void check_kernel_name(const std::string& kernel, std::initializer_list<const char*> valid,
                              const char* op, const char* backend) {
  if (kernel == "auto") return;
  std::string names;
  for (const char* v : valid) {
    if (kernel == v) return;
    names += std::string(" '") + v + "'";
  }
  std::string shown;  // a NUL would end the Python message early
  for (const char c : kernel) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
  TORCH_CHECK(false, op, ": path '", shown, "' is not a ", backend,
              " path; valid here: 'auto'", names);
}

}  // namespace torchquant
