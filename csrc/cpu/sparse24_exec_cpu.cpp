// CPU kernels for the 2:4 execution ops over compress24's layout (values
// [N, K/2] + meta uint8 [N, ceil(K/8)], see csrc/cpu/sparse24_cpu.cpp):
//
// sparse24_gemv: y[m, n] = sum_k x[m, k] * w[n, k] + bias[n], x fp16/bf16,
//   output in x's dtype. The weight is decompressed on the fly: group g of
//   row n contributes values[n, 2g] * x[m, 4g + pos0] and
//   values[n, 2g + 1] * x[m, 4g + pos1]. Each product of two fp16/bf16
//   numbers is exact in fp32; the sum is accumulated in fp32 in increasing
//   group order (pos0 term, then pos1 term), then bias is added in fp32 and
//   the result rounded once to x's dtype. The CUDA kernels accumulate in
//   another order; both are within reference.fp32_accum_bound of the float64
//   result. Meta is trusted (produced by compress24): a nibble with
//   pos0 >= pos1 is not rejected here (decompress24 is the validating op).
//
// sparse24_int8_matmul: int8_matmul (csrc/cpu/int8_cpu.cpp) with the weight
//   as compressed 2:4 int8: acc[m, n] = sum over kept values v at position k
//   of a_q[m, k] * v, exact in int32 (K <= 65536), then int8_matmul's
//   epilogue in the same order: c = acc - a_zero[m] * w_colsum[n] (int64),
//   s = a_scale[m] * w_scale[n], y = float(c) * s, y = y + float(bias[n]),
//   each a separately rounded fp32 operation, out = out_dtype(y). w_colsum
//   defaults to the row sums of the kept values. Bit-identical to
//   int8_matmul over decompress24(w_values, w_meta), and to the CUDA op.
//
// Rows of the weight run in parallel (at::parallel_for over N); x is widened
// to fp32 once.
#include <torch/library.h>

#include <vector>

#include "common/checks.h"
#include "cpu/cpu_common.h"
#include "sparse/sparse24_checks.h"

TQ_NO_FP_CONTRACT

namespace torchquant {
namespace cpu {
namespace {

// Row n of a compressed 2:4 weight (values [N, K/2], meta [N, ceil(K/8)]),
// decoded once per row: for group g its two kept values as W and their K
// indices (the nibble pos0 | pos1 << 2, low nibble for even g).
template <typename W, typename V>
void decode_row24(const V* vrow, const uint8_t* mrow, int64_t G, W* w0, W* w1, int64_t* k0,
                  int64_t* k1) {
  for (int64_t g = 0; g < G; ++g) {
    const int nib = (g % 2) ? (mrow[g / 2] >> 4) : (mrow[g / 2] & 0xF);
    k0[g] = 4 * g + (nib & 3);
    k1[g] = 4 * g + (nib >> 2);
    w0[g] = static_cast<W>(vrow[2 * g]);
    w1[g] = static_cast<W>(vrow[2 * g + 1]);
  }
}

template <typename T>
void sparse24_gemv_impl(const float* x, const T* values, const uint8_t* meta, const float* bias,
                        int64_t M, int64_t N, int64_t K, T* y) {
  const int64_t G = K / 4, MB = ceil_div(K, 8);
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, K * M / 16));
  at::parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    // Row n decoded once: for group g the two weights and their K indices.
    std::vector<float> w0(G), w1(G);
    std::vector<int64_t> k0(G), k1(G);
    for (int64_t n = b; n < e; ++n) {
      decode_row24(values + n * (K / 2), meta + n * MB, G, w0.data(), w1.data(), k0.data(), k1.data());
      const float bn = bias != nullptr ? bias[n] : 0.0f;
      for (int64_t m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float acc = 0.0f;
        for (int64_t g = 0; g < G; ++g) {
          acc = acc + w0[g] * xr[k0[g]];
          acc = acc + w1[g] * xr[k1[g]];
        }
        y[m * N + n] = from_float<T>(acc + bn);
      }
    }
  });
}

at::Tensor sparse24_gemv_cpu(const at::Tensor& x, const at::Tensor& values, const at::Tensor& meta,
                             const c10::optional<at::Tensor>& bias, c10::string_view kernel) {
  const char* op = "sparse24_gemv";
  const GemvShape s = validate_sparse24_gemv(x, values, meta, bias);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  const at::Tensor xf = x.to(at::kFloat).contiguous();  // exact widening
  at::Tensor bf;
  if (bias.has_value()) bf = bias->to(at::kFloat).contiguous();
  at::Tensor y = at::empty({s.M, s.N}, x.options());
  const float* bp = bias.has_value() ? bf.data_ptr<float>() : nullptr;
  if (x.scalar_type() == at::kHalf) {
    sparse24_gemv_impl<c10::Half>(xf.data_ptr<float>(), values.data_ptr<c10::Half>(),
                                  meta.data_ptr<uint8_t>(), bp, s.M, s.N, s.K,
                                  y.data_ptr<c10::Half>());
  } else {
    sparse24_gemv_impl<c10::BFloat16>(xf.data_ptr<float>(), values.data_ptr<c10::BFloat16>(),
                                      meta.data_ptr<uint8_t>(), bp, s.M, s.N, s.K,
                                      y.data_ptr<c10::BFloat16>());
  }
  return y;
}

// --------------------------------------------------- int8 x 2:4 int8 ----
template <typename T>
void sparse24_int8_impl(const int8_t* a, const int8_t* values, const uint8_t* meta,
                        const Int8Epilogue& ep, int64_t M, int64_t N, int64_t K, T* out) {
  const int64_t G = K / 4, MB = ceil_div(K, 8);
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, K * M / 16));
  at::parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    std::vector<int32_t> w0(G), w1(G);
    std::vector<int64_t> k0(G), k1(G);
    for (int64_t n = b; n < e; ++n) {
      decode_row24(values + n * (K / 2), meta + n * MB, G, w0.data(), w1.data(), k0.data(), k1.data());
      const float ws = ep.w_scale[n * ep.w_scale_step];
      for (int64_t m = 0; m < M; ++m) {
        const int8_t* ar = a + m * K;
        int32_t acc = 0;
        for (int64_t g = 0; g < G; ++g) acc += w0[g] * ar[k0[g]] + w1[g] * ar[k1[g]];
        int64_t c = acc;
        if (ep.a_zero) c -= static_cast<int64_t>(ep.a_zero[m * ep.a_zero_step]) * ep.colsum[n];
        const float s = ep.a_scale[m * ep.a_scale_step] * ws;
        float y = static_cast<float>(c) * s;
        if (ep.bias) y = y + ep.bias[n];
        out[m * N + n] = from_float<T>(y);
      }
    }
  });
}

at::Tensor sparse24_int8_matmul_cpu(const at::Tensor& a_q, const at::Tensor& a_scale,
                                    const c10::optional<at::Tensor>& a_zero,
                                    const at::Tensor& w_values, const at::Tensor& w_meta,
                                    const at::Tensor& w_scale,
                                    const c10::optional<at::Tensor>& w_colsum,
                                    const c10::optional<at::Tensor>& bias,
                                    c10::optional<at::ScalarType> out_dtype,
                                    c10::string_view kernel) {
  const char* op = "sparse24_int8_matmul";
  const Int8MatmulShape sh = validate_sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta,
                                                           w_scale, w_colsum, bias, out_dtype);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  const Int8Epilogue ep =
      make_int8_epilogue(a_scale, a_zero, w_scale, w_colsum, w_values, bias);
  at::Tensor out = at::empty({sh.M, sh.N}, a_q.options().dtype(sh.out_dtype));
  dispatch_float_out(sh.out_dtype, op, [&](auto tag) {
    using T = decltype(tag);
    sparse24_int8_impl<T>(a_q.data_ptr<int8_t>(), w_values.data_ptr<int8_t>(),
                          w_meta.data_ptr<uint8_t>(), ep, sh.M, sh.N, sh.K, out.data_ptr<T>());
  });
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("sparse24_gemv", &torchquant::cpu::sparse24_gemv_cpu);
  m.impl("sparse24_int8_matmul", &torchquant::cpu::sparse24_int8_matmul_cpu);
}
