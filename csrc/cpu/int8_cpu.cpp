// CPU kernels for the INT8 ops: int8_matmul and quantize_int8.
//
// int8_matmul computes
//   y[m,n] = a_scale[m] * w_scale[n] * (acc[m,n] - a_zero[m] * w_colsum[n]) + bias[n]
//   acc[m,n] = sum_k a_q[m,k] * w_q[n,k]            (exact integer sum)
// with this epilogue, in this order (the CUDA kernels must use the same, with
// __fmul_rn / __fadd_rn so nvcc cannot fuse the last two steps into an FMA):
//   c = acc - a_zero[m] * w_colsum[n]      exact integer (int64 here, so even an
//                                          out-of-range zero point cannot wrap)
//   s = a_scale[m] * w_scale[n]            fp32 multiply
//   y = float(c) * s                       int -> fp32 (RNE, exact while |c| <= 2^24),
//                                          then fp32 multiply
//   y = y + float(bias[n])                 fp32 add, rounded separately (no FMA)
//   out = out_dtype(y)                     round to nearest even (no-op for fp32)
// A one-element a_scale / a_zero / w_scale broadcasts. With a_zero and no
// w_colsum the column sums are computed here (int32, exact for K <= 65536).
//
// GEMM structure: both operands are [*, K] row-major, so every output is a
// dot product of two contiguous K-vectors. The int8 data are widened to int16
// (A once, W per cache tile) so the inner loop is the int16 x int16 -> int32
// multiply-add gcc turns into pmaddwd (8 or 16 exact products per instruction,
// summed in int32 lanes; the int32 sums are exact, so the order is irrelevant).
// Tiles: kMB rows of A x kNB rows of W; threads claim tiles from a shared
// counter (parallel_tiles in cpu_common.h), tiles of one A block first.
// Inside a tile, K runs in chunks of kKC: four W rows of the chunk are widened
// (or, for sparse24_int8_matmul, expanded from the 2:4 form) into a 4 KB L1 buffer and every A row of the tile is dotted against them
// (1 x 4 register block: each A load feeds four multiply-adds).
// At M = 16, N = K = 4096 all of A (128 KB as int16) stays in L2 and W streams
// from memory once.
//
// quantize_int8 (formats.md, bit-exact): per row or over the whole tensor,
//   symmetric:  s = amax / 127 (s == 0 -> 1: amax == 0 or an underflow), zero = 0,
//               q = clamp(rne(x / s), -128, 127)
//   asymmetric: lo = min(min(x), 0), hi = max(max(x), 0),
//               s = (hi - lo) / 255, or hi / 255 - lo / 255 where hi - lo
//               overflows (finite ends past fp32's max / 2); s == 0 -> 1,
//               zero = clamp(rne(-128 - lo / s), -128, 127),
//               q = clamp(rne(x / s + zero), -128, 127)
// in fp32 (fp16/bf16 input is widened exactly first); rne is std::nearbyint in
// the default rounding mode; every division is a true fp32 division. Rows run
// in parallel.
#include <torch/library.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/checks.h"
#include "cpu/cpu_common.h"

#ifdef TQ_HAVE_F16C_PATH
#include <immintrin.h>
#endif

TQ_NO_FP_CONTRACT

namespace torchquant {
namespace cpu {
namespace {

constexpr int64_t kMB = 64;   // A rows per tile
constexpr int64_t kNB = 64;   // W rows per tile (a multiple of kNR)
constexpr int64_t kKC = 512;  // K chunk: 4 W rows x 512 x int16 = 4 KB
constexpr int64_t kNR = 4;    // W rows per register block

// acc[r] += sum_{k < len} a[k] * w[r * kKC + k], r = 0..3; exact in int32.
inline __attribute__((always_inline)) void dot_i16_1x4(const int16_t* __restrict a,
                                                       const int16_t* __restrict w, int64_t len,
                                                       int32_t* __restrict acc) {
  const int16_t* __restrict w0 = w;
  const int16_t* __restrict w1 = w + kKC;
  const int16_t* __restrict w2 = w + 2 * kKC;
  const int16_t* __restrict w3 = w + 3 * kKC;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t k = 0; k < len; ++k) {
    const int32_t av = a[k];
    s0 += av * w0[k];
    s1 += av * w1[k];
    s2 += av * w2[k];
    s3 += av * w3[k];
  }
  acc[0] += s0;
  acc[1] += s1;
  acc[2] += s2;
  acc[3] += s3;
}

// 0 / 1 selectors of a 2:4 meta nibble: m[nib][0][j] = (pos0 == j), m[nib][1][j] =
// (pos1 == j) (a table lookup rather than a branch on the random positions).
struct Sel24i {
  alignas(8) int16_t m[16][2][4];
  constexpr Sel24i() : m() {
    for (int nib = 0; nib < 16; ++nib)
      for (int j = 0; j < 4; ++j) {
        m[nib][0][j] = (nib & 3) == j;
        m[nib][1][j] = (nib >> 2) == j;
      }
  }
};
constexpr Sel24i kSel24i{};

#ifdef TQ_HAVE_F16C_PATH
// The 2:4 expansion of widen_row, 16 elements (two meta bytes, 8 kept values) per step,
// on AVX2: the values widened to int16 and copied to both 128-bit lanes; a byte shuffle
// puts each group's first kept value (pos0's) on its four elements (A) and the second
// (pos1's) likewise (B); per element, the 2-bit position field of its group is brought to
// the top of a 16-bit lane by a multiply (a per-lane left shift) and compared with the
// element's index in the group. dst = (A & (pos0 == j)) + (B & (pos1 == j)), the scalar
// form's sum of v0 * (pos0 == j) and v1 * (pos1 == j), so equal for every nibble. Returns
// how many elements it wrote (a multiple of 16); the caller does the rest. Needs AVX2 only,
// but is taken under the decodes' switch (cpu_has_f16c_path), so TORCHQUANT_CPU_NO_F16C=1
// runs the scalar form in the same tests.
__attribute__((target("avx2"))) int64_t expand24_i16_avx2(const int8_t* __restrict v,
                                                          const uint8_t* __restrict mrow,
                                                          int64_t kc, int16_t* __restrict dst) {
  // element e of a 16-element step: group e / 4 (value pair 2 (e / 4), 2 (e / 4) + 1),
  // position e % 4; lanes hold elements 0..7 and 8..15.
  const __m256i shuf_a = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 4, 5, 4, 5, 4, 5, 4, 5,
                                          8, 9, 8, 9, 8, 9, 8, 9, 12, 13, 12, 13, 12, 13, 12, 13);
  const __m256i shuf_b = _mm256_add_epi8(shuf_a, _mm256_set1_epi8(2));
  // pos0 of group q sits at bits 4q, 4q + 1 of the 16-bit meta word; times 2^(14 - 4q)
  // moves it to bits 14, 15. pos1: bits 4q + 2, 4q + 3, times 2^(12 - 4q).
  const __m256i mul_a = _mm256_setr_epi16(1 << 14, 1 << 14, 1 << 14, 1 << 14, 1 << 10, 1 << 10,
                                          1 << 10, 1 << 10, 1 << 6, 1 << 6, 1 << 6, 1 << 6, 1 << 2,
                                          1 << 2, 1 << 2, 1 << 2);
  const __m256i mul_b = _mm256_setr_epi16(1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 8, 1 << 8,
                                          1 << 8, 1 << 8, 1 << 4, 1 << 4, 1 << 4, 1 << 4, 1, 1, 1,
                                          1);
  const __m256i pos = _mm256_setr_epi16(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    int64_t raw;
    std::memcpy(&raw, v + k / 2, 8);
    const __m128i w16 = _mm_cvtepi8_epi16(_mm_cvtsi64_si128(raw));
    const __m256i vals = _mm256_broadcastsi128_si256(w16);
    const __m256i a = _mm256_shuffle_epi8(vals, shuf_a);
    const __m256i b = _mm256_shuffle_epi8(vals, shuf_b);
    uint16_t m16;
    std::memcpy(&m16, mrow + k / 8, 2);
    const __m256i mw = _mm256_set1_epi16(static_cast<int16_t>(m16));
    const __m256i sel_a = _mm256_cmpeq_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(mw, mul_a), 14), pos);
    const __m256i sel_b = _mm256_cmpeq_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(mw, mul_b), 14), pos);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k),
                        _mm256_add_epi16(_mm256_and_si256(a, sel_a), _mm256_and_si256(b, sel_b)));
  }
  return k;
}
#endif

// Widens W row n's elements [k0, k0 + kc) into dst. Dense (meta == null): w is
// the int8 weight [N, K]. 2:4 (meta != null): w holds the kept values [N, K/2]
// and meta the positions [N, ceil(K/8)] (compress24's layout: group g's nibble
// pos0 | pos1 << 2, the low nibble for even g); the group is expanded to its
// four dense elements, zeros where pruned, so the dense loop runs unchanged.
// k0 is a multiple of kKC (so of 8: a group pair starts a meta byte) and kc a
// multiple of 4 for 2:4 weights (K % 4 == 0).
inline __attribute__((always_inline)) void widen_row(const int8_t* __restrict w,
                                                     const uint8_t* __restrict meta, int64_t n,
                                                     int64_t K, int64_t k0, int64_t kc,
                                                     int16_t* __restrict dst) {
  if (meta == nullptr) {
    const int8_t* __restrict src = w + n * K + k0;
    for (int64_t k = 0; k < kc; ++k) dst[k] = src[k];
    return;
  }
  const int8_t* __restrict v = w + n * (K / 2) + k0 / 2;
  const uint8_t* __restrict mrow = meta + n * ceil_div(K, 8) + k0 / 8;
  int64_t done = 0;
#ifdef TQ_HAVE_F16C_PATH
  if (cpu_has_f16c_path()) done = expand24_i16_avx2(v, mrow, kc, dst);
#endif
  for (int64_t g = done / 4; g < kc / 4; ++g) {
    const int nib = (mrow[g >> 1] >> (4 * (g & 1))) & 0xF;
    const int16_t v0 = v[2 * g], v1 = v[2 * g + 1];
    const int16_t* __restrict s0 = kSel24i.m[nib][0];
    const int16_t* __restrict s1 = kSel24i.m[nib][1];
    // v * 1 or v * 0, summed: exact, and a nibble with pos0 == pos1 (outside the
    // contract) adds both values, as the gather form did.
    for (int j = 0; j < 4; ++j) dst[4 * g + j] = static_cast<int16_t>(v0 * s0[j] + v1 * s1[j]);
  }
}

// Integer accumulators of one tile: acc[i * kNB + j] = sum_k a16[m0+i, k] * w[n0+j, k]
// for i < mb, j < nb. a16 is A widened to int16 [M, K]; w the int8 weight [N, K], or
// the kept values of a 2:4 weight with its meta (widen_row).
TQ_CPU_CLONES void int8_tile(const int16_t* __restrict a16, const int8_t* __restrict w,
                             const uint8_t* __restrict meta, int64_t K, int64_t m0, int64_t mb,
                             int64_t n0, int64_t nb, int32_t* __restrict acc) {
  alignas(64) int16_t wbuf[kNR * kKC];
  std::fill(acc, acc + kMB * kNB, 0);
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    const int64_t kc = std::min(kKC, K - k0);
    for (int64_t j0 = 0; j0 < nb; j0 += kNR) {
      // Widen four W rows of this chunk; rows past N are zero (their sums are dropped).
      for (int64_t r = 0; r < kNR; ++r) {
        int16_t* __restrict dst = wbuf + r * kKC;
        if (j0 + r < nb) {
          widen_row(w, meta, n0 + j0 + r, K, k0, kc, dst);
        } else {
          std::fill(dst, dst + kc, int16_t(0));
        }
      }
      for (int64_t i = 0; i < mb; ++i)
        dot_i16_1x4(a16 + (m0 + i) * K + k0, wbuf, kc, acc + i * kNB + j0);
    }
  }
}

template <typename T>
void int8_matmul_impl(const int16_t* a16, const int8_t* w, const uint8_t* meta,
                      const Int8Epilogue& ep, int64_t M, int64_t N, int64_t K, T* out) {
  const int64_t mt = ceil_div(M, kMB), nt = ceil_div(N, kNB);
  parallel_tiles(mt * nt, [&](TileCounter& tiles) {
    std::vector<int32_t> acc(kMB * kNB);
    for (int64_t t = tiles.next(); t >= 0; t = tiles.next()) {
      const int64_t m0 = (t / nt) * kMB, n0 = (t % nt) * kNB;
      const int64_t mb = std::min(kMB, M - m0), nb = std::min(kNB, N - n0);
      int8_tile(a16, w, meta, K, m0, mb, n0, nb, acc.data());
      for (int64_t i = 0; i < mb; ++i) {
        const int64_t m = m0 + i;
        const float as = ep.a_scale[m * ep.a_scale_step];
        const int64_t z = ep.a_zero ? ep.a_zero[m * ep.a_zero_step] : 0;
        T* __restrict o = out + m * N + n0;
        const int32_t* __restrict ai = acc.data() + i * kNB;
        for (int64_t j = 0; j < nb; ++j) {
          const int64_t n = n0 + j;
          int64_t c = ai[j];
          if (ep.a_zero) c -= z * static_cast<int64_t>(ep.colsum[n]);
          const float s = as * ep.w_scale[n * ep.w_scale_step];
          float y = static_cast<float>(c) * s;
          if (ep.bias) y = y + ep.bias[n];
          o[j] = from_float<T>(y);
        }
      }
    }
  });
}

// sums[r] = sum_k w[r, k], rows r0..r1; the int32 sum is exact while C * 128 < 2^31 (the
// validators keep K <= 65536).
TQ_CPU_CLONES void row_sums_int8(const int8_t* __restrict w, int64_t C, int64_t r0, int64_t r1,
                                 int32_t* __restrict sums) {
  for (int64_t r = r0; r < r1; ++r) {
    const int8_t* __restrict p = w + r * C;
    int32_t s = 0;
    for (int64_t k = 0; k < C; ++k) s += p[k];
    sums[r] = s;
  }
}

}  // namespace

at::Tensor int8_row_sums(const at::Tensor& w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kChar && w.is_contiguous(),
              "int8_row_sums: expected a contiguous 2-D int8 tensor");
  const int64_t R = w.size(0), C = w.size(1);
  at::Tensor sums = at::empty({R}, w.options().dtype(at::kInt));
  const int8_t* wp = w.data_ptr<int8_t>();
  int32_t* sp = sums.data_ptr<int32_t>();
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(C, 1));
  at::parallel_for(0, R, grain, [&](int64_t b, int64_t e) { row_sums_int8(wp, C, b, e, sp); });
  return sums;
}

void int8_gemm_into(const at::Tensor& a_q, const int8_t* w, const uint8_t* meta,
                    const Int8Epilogue& ep, int64_t N, at::Tensor& out) {
  const int64_t M = a_q.size(0), K = a_q.size(1);
  // Widening int8 -> int16 is exact; done once so the tiles only widen W.
  const at::Tensor a16 = a_q.to(at::kShort).contiguous();
  const int16_t* a16p = a16.data_ptr<int16_t>();
  dispatch_float_out(out.scalar_type(), "int8_matmul", [&](auto tag) {
    using T = decltype(tag);
    int8_matmul_impl<T>(a16p, w, meta, ep, M, N, K, out.data_ptr<T>());
  });
}

namespace {

at::Tensor int8_matmul_cpu(const at::Tensor& a_q, const at::Tensor& a_scale,
                           const c10::optional<at::Tensor>& a_zero, const at::Tensor& w_q,
                           const at::Tensor& w_scale, const c10::optional<at::Tensor>& w_colsum,
                           const c10::optional<at::Tensor>& bias,
                           c10::optional<at::ScalarType> out_dtype, c10::string_view kernel,
                           bool /*static_weight: a CUDA launch hint*/) {
  const char* op = "int8_matmul";
  const Int8MatmulShape sh =
      validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  const int64_t M = sh.M, N = sh.N;
  const Int8Epilogue ep = make_int8_epilogue(a_scale, a_zero, w_scale, w_colsum, w_q, bias);
  at::Tensor out = at::empty({M, N}, a_q.options().dtype(sh.out_dtype));
  int8_gemm_into(a_q, w_q.data_ptr<int8_t>(), nullptr, ep, N, out);
  return out;
}

// ------------------------------------------------------------ quantize ----
// q = clamp(rne(x * inv_or_div), ...) for one row; `zero` is added after the
// division (0 for symmetric). Written as one loop so gcc vectorizes the
// division and (in the AVX2 clone) nearbyint as roundps.
TQ_CPU_CLONES void quantize_row_int8(const float* __restrict x, int64_t n, float s, float zero,
                                     int8_t* __restrict q) {
  for (int64_t k = 0; k < n; ++k) {
    float r = std::nearbyint(x[k] / s + zero);
    r = std::min(std::max(r, -128.0f), 127.0f);
    q[k] = static_cast<int8_t>(r);
  }
}

// lo = min(min(row), 0), hi = max(max(row), 0).
void row_range(const float* __restrict x, int64_t n, float* lo_out, float* hi_out) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    lo = std::min(lo, x[k]);
    hi = std::max(hi, x[k]);
  }
  *lo_out = lo;
  *hi_out = hi;
}

struct Int8Params {
  float scale;
  int32_t zero;
};

Int8Params int8_params(float lo, float hi, bool symmetric) {
  if (symmetric) {
    const float amax = std::max(-lo, hi);  // = max |x|
    const float s = amax / 127.0f;
    return {s == 0.0f ? 1.0f : s, 0};  // amax == 0, or so tiny the scale underflows
  }
  const float span = hi - lo;
  const float s0 = std::isinf(span) ? hi / 255.0f - lo / 255.0f : span / 255.0f;
  const float s = s0 == 0.0f ? 1.0f : s0;  // span == 0, or the scale underflows
  float z = std::nearbyint(-128.0f - lo / s);
  z = std::min(std::max(z, -128.0f), 127.0f);
  return {s, static_cast<int32_t>(z)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_int8_cpu(const at::Tensor& x,
                                                                 bool per_row, bool symmetric) {
  const char* op = "quantize_int8";
  validate_quantize_int8(x);
  check_finite(x, op, "x");
  const at::Tensor xf = x.to(at::kFloat).contiguous();  // exact widening
  const int64_t R = xf.size(0), C = xf.size(1);
  const float* xp = xf.data_ptr<float>();

  std::vector<float> lo(R), hi(R);
  const int64_t row_grain = std::max<int64_t>(1, 16384 / C);
  at::parallel_for(0, R, row_grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) row_range(xp + r * C, C, &lo[r], &hi[r]);
  });

  const at::TensorOptions fopt = xf.options();
  at::Tensor q = at::empty({R, C}, fopt.dtype(at::kChar));
  at::Tensor scale, zero;
  std::vector<Int8Params> params;
  if (per_row) {
    params.resize(R);
    for (int64_t r = 0; r < R; ++r) params[r] = int8_params(lo[r], hi[r], symmetric);
    scale = at::empty({R}, fopt);
    zero = at::empty({R}, fopt.dtype(at::kInt));
  } else {
    const float tlo = *std::min_element(lo.begin(), lo.end());
    const float thi = *std::max_element(hi.begin(), hi.end());
    params.assign(1, int8_params(tlo, thi, symmetric));
    scale = at::empty({}, fopt);
    zero = at::empty({}, fopt.dtype(at::kInt));
  }
  float* sp = scale.data_ptr<float>();
  int32_t* zp = zero.data_ptr<int32_t>();
  for (size_t i = 0; i < params.size(); ++i) {
    sp[i] = params[i].scale;
    zp[i] = params[i].zero;
  }

  int8_t* qp = q.data_ptr<int8_t>();
  at::parallel_for(0, R, row_grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const Int8Params& p = params[per_row ? r : 0];
      quantize_row_int8(xp + r * C, C, p.scale, static_cast<float>(p.zero), qp + r * C);
    }
  });
  return {q, scale, zero};
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("int8_matmul", &torchquant::cpu::int8_matmul_cpu);
  m.impl("quantize_int8", &torchquant::cpu::quantize_int8_cpu);
}
