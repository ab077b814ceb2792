// CPU kernels for the 2:4 execution ops over compress24's layout (values
// [N, K/2] + meta uint8 [N, ceil(K/8)], see csrc/cpu/sparse24_cpu.cpp):
//
// sparse24_gemv: y[m, n] = sum_k x[m, k] * w[n, k] + bias[n], x fp16/bf16,
//   output in x's dtype, w the 2:4 weight (group g of row n holds
//   values[n, 2g] at k = 4g + pos0 and values[n, 2g + 1] at k = 4g + pos1).
//   Each product of two fp16/bf16 numbers is exact in fp32; the sums are fp32:
//   K runs in chunks of kKC elements; within a chunk 16 lane sums, lane i
//   taking k = i, i + 16, ... in increasing k (pruned positions add an exact
//   zero), folded pairwise (fold16 in cpu_common.h); the chunk sums are added
//   in increasing chunk order, then bias in fp32, then one rounding to x's
//   dtype. Structure: tiles of kMB rows of x by kNB rows of W, claimed by the
//   threads from a shared counter; a chunk of the tile's weight rows is
//   expanded to dense fp32 (zeros where pruned) once and reused by every x row
//   of the tile, four weight rows at a time (as the fp8 GEMV, fp8_cpu.cpp).
//   x * 0 is NaN for a nonfinite x, so an x holding Inf or NaN takes the
//   gather kernel instead (one fp32 sum per output over the kept products, in
//   increasing group order), where a pruned position never meets x; both
//   give the same NaN / Inf pattern as the CUDA kernels, and finite x never
//   sees the difference beyond rounding. The CUDA kernels accumulate in other
//   orders; all are within reference.fp32_accum_bound of the float64 result.
//   Meta is trusted (produced by compress24): a nibble with pos0 >= pos1 is
//   not rejected here (decompress24 is the validating op).
//
// sparse24_int8_matmul: int8_matmul (csrc/cpu/int8_cpu.cpp) with the weight
//   as compressed 2:4 int8; the same tiled integer GEMM (int8_gemm_into), each
//   chunk of four weight rows expanded from values + meta to dense int16 with
//   zeros where pruned. acc[m, n] = sum of a_q[m, k] * v over the kept values,
//   exact in int32 (K <= 65536), then int8_matmul's epilogue in the same
//   order: c = acc - a_zero[m] * w_colsum[n] (int64), s = a_scale[m] *
//   w_scale[n], y = float(c) * s, y = y + float(bias[n]), each a separately
//   rounded fp32 operation, out = out_dtype(y). w_colsum defaults to the row
//   sums of the kept values. Bit-identical to int8_matmul over
//   decompress24(w_values, w_meta), and to the CUDA op.
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/checks.h"
#include "cpu/cpu_common.h"
#include "sparse/sparse24_checks.h"

#ifdef TQ_HAVE_F16C_PATH
#include <immintrin.h>
#endif

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

constexpr int64_t kMB = 32;   // x rows per tile
constexpr int64_t kNB = 16;   // W rows per tile (a multiple of 4)
constexpr int64_t kKC = 512;  // K chunk (a multiple of 16 and of 8: whole meta bytes)

// Lane masks of a meta nibble: kSel24[nib][0][j] is all ones where pos0 == j,
// kSel24[nib][1][j] where pos1 == j. A select by bitwise AND, so no branch on
// the (random) positions and no arithmetic on the values (an Inf weight stays
// in its own element instead of making NaN of the pruned ones).
struct Sel24 {
  alignas(16) uint32_t m[16][2][4];
  constexpr Sel24() : m() {
    for (int nib = 0; nib < 16; ++nib)
      for (int j = 0; j < 4; ++j) {
        m[nib][0][j] = (nib & 3) == j ? 0xFFFFFFFFu : 0u;
        m[nib][1][j] = (nib >> 2) == j ? 0xFFFFFFFFu : 0u;
      }
  }
};
constexpr Sel24 kSel24{};

inline uint32_t f32_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

#ifdef TQ_HAVE_F16C_PATH
// expand_row24's loop, 16 elements (two meta bytes, 8 kept values) per step, on AVX2 +
// F16C: the 8 values widened exactly to fp32 (vcvtph2ps for fp16, a 16-bit shift for
// bf16); for each 8-element half, a lane permute puts each group's pos0 value on its four
// elements (A) and its pos1 value likewise (B); a per-lane variable shift of the meta word
// brings each element's group's position fields down, compared with the element's index
// in the group: dst = (A & (pos0 == j)) | (B & (pos1 == j)), the scalar form's bits for
// every nibble. Returns how many elements it wrote (a multiple of 16).
template <bool kHalf>
__attribute__((target("avx2,f16c"))) int64_t expand24_f32_avx2(const uint16_t* __restrict v,
                                                               const uint8_t* __restrict mrow,
                                                               int64_t kc,
                                                               uint32_t* __restrict dst) {
  const __m256i perm_a = _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2);
  const __m256i perm_b = _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3);
  const __m256i four = _mm256_set1_epi32(4);
  // group q of the 16 (q = 0..3) has pos0 at bits 4q, 4q + 1 and pos1 at 4q + 2, 4q + 3
  const __m256i sh_a = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
  const __m256i sh_b = _mm256_setr_epi32(2, 2, 2, 2, 6, 6, 6, 6);
  const __m256i eight = _mm256_set1_epi32(8);
  const __m256i three = _mm256_set1_epi32(3);
  const __m256i pos = _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3);
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + k / 2));
    const __m256i f = kHalf ? _mm256_castps_si256(_mm256_cvtph_ps(raw))
                            : _mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16);
    uint16_t m16;
    std::memcpy(&m16, mrow + k / 8, 2);
    const __m256i mw = _mm256_set1_epi32(m16);
    for (int h = 0; h < 2; ++h) {  // elements 8h .. 8h + 7: groups 2h, 2h + 1
      const __m256i off = h ? four : _mm256_setzero_si256();
      const __m256i mh = h ? _mm256_srlv_epi32(mw, eight) : mw;
      const __m256i a = _mm256_permutevar8x32_epi32(f, _mm256_add_epi32(perm_a, off));
      const __m256i b = _mm256_permutevar8x32_epi32(f, _mm256_add_epi32(perm_b, off));
      const __m256i sel_a =
          _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_srlv_epi32(mh, sh_a), three), pos);
      const __m256i sel_b =
          _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_srlv_epi32(mh, sh_b), three), pos);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k + 8 * h),
                          _mm256_or_si256(_mm256_and_si256(a, sel_a), _mm256_and_si256(b, sel_b)));
    }
  }
  return k;
}
#endif

// Expands W row n's elements [k0, k0 + kc) of a 2:4 weight to dense fp32, bit
// patterns (zeros where pruned; a nibble with pos0 == pos1, outside the
// contract, ORs the two values). k0 is a multiple of 8 and kc of 4.
template <typename V>
inline __attribute__((always_inline)) void expand_row24(const V* __restrict values,
                                                        const uint8_t* __restrict meta, int64_t n,
                                                        int64_t K, int64_t k0, int64_t kc,
                                                        uint32_t* __restrict dst) {
  const V* __restrict v = values + n * (K / 2) + k0 / 2;
  const uint8_t* __restrict mrow = meta + n * ceil_div(K, 8) + k0 / 8;
  int64_t done = 0;
#ifdef TQ_HAVE_F16C_PATH
  if (cpu_has_f16c_path())
    done = expand24_f32_avx2<std::is_same<V, c10::Half>::value>(
        reinterpret_cast<const uint16_t*>(v), mrow, kc, dst);
#endif
  for (int64_t g = done / 4; g < kc / 4; ++g) {
    const int nib = (mrow[g >> 1] >> (4 * (g & 1))) & 0xF;
    const uint32_t b0 = f32_bits(static_cast<float>(v[2 * g]));
    const uint32_t b1 = f32_bits(static_cast<float>(v[2 * g + 1]));
    const uint32_t* __restrict s0 = kSel24.m[nib][0];
    const uint32_t* __restrict s1 = kSel24.m[nib][1];
    for (int j = 0; j < 4; ++j) dst[4 * g + j] = (b0 & s0[j]) | (b1 & s1[j]);
  }
}

// acc[i * kNB + j] = sum_k x[m0+i, k] * w[n0+j, k] for i < mb, j < nb, in the order
// of the header. x rows are ldx >= K floats apart, zero from K up to a multiple of 16;
// wbuf holds kNB * kKC floats.
template <typename V>
TQ_CPU_CLONES void sparse24_tile(const float* __restrict xf, int64_t ldx,
                                 const V* __restrict values, const uint8_t* __restrict meta,
                                 int64_t K, int64_t m0, int64_t mb, int64_t n0, int64_t nb,
                                 float* __restrict acc, float* __restrict wbuf) {
  std::fill(acc, acc + kMB * kNB, 0.0f);
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    const int64_t kc = std::min(kKC, K - k0);
    const int64_t kc16 = ceil_div(kc, 16) * 16;  // padded with zero weights (and zero x)
    for (int64_t j = 0; j < kNB; ++j) {
      float* __restrict dst = wbuf + j * kKC;
      if (j < nb) expand_row24(values, meta, n0 + j, K, k0, kc, reinterpret_cast<uint32_t*>(dst));
      std::fill(dst + (j < nb ? kc : 0), dst + kc16, 0.0f);
    }
    accumulate_rows_1x4(xf + m0 * ldx + k0, ldx, wbuf, kKC, kc16, mb, nb, acc, kNB);
  }
}

// The gather kernel (x holding Inf or NaN): one fp32 sum per output over the
// kept products, in increasing group order (pos0 term, then pos1 term).
template <typename T>
void sparse24_gemv_gather(const float* x, const T* values, const uint8_t* meta, const float* bias,
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

template <typename T>
void sparse24_gemv_impl(const float* x, const T* values, const uint8_t* meta, const float* bias,
                        int64_t M, int64_t N, int64_t K, T* y) {
  bool finite = true;
  for (int64_t i = 0; i < M * K; ++i) finite = finite && std::isfinite(x[i]);
  if (!finite) return sparse24_gemv_gather<T>(x, values, meta, bias, M, N, K, y);
  // Rows of x padded with zeros to a multiple of 16 (the last chunk's lanes).
  const int64_t ldx = ceil_div(K, 16) * 16;
  std::vector<float> xpad;
  const float* xp = x;
  if (ldx != K) {
    xpad.assign(M * ldx, 0.0f);
    for (int64_t m = 0; m < M; ++m) std::copy(x + m * K, x + (m + 1) * K, xpad.data() + m * ldx);
    xp = xpad.data();
  }
  gemv_tiles(
      M, N, kMB, kNB, kNB * kKC,
      [&](int64_t m0, int64_t mb, int64_t n0, int64_t nb, float* acc, float* wbuf) {
        sparse24_tile<T>(xp, ldx, values, meta, K, m0, mb, n0, nb, acc, wbuf);
      },
      [&](int64_t m, int64_t n, float v) {
        if (bias != nullptr) v = v + bias[n];
        y[m * N + n] = from_float<T>(v);
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
at::Tensor sparse24_int8_matmul_cpu(const at::Tensor& a_q, const at::Tensor& a_scale,
                                    const c10::optional<at::Tensor>& a_zero,
                                    const at::Tensor& w_values, const at::Tensor& w_meta,
                                    const at::Tensor& w_scale,
                                    const c10::optional<at::Tensor>& w_colsum,
                                    const c10::optional<at::Tensor>& bias,
                                    c10::optional<at::ScalarType> out_dtype,
                                    c10::string_view kernel,
                                    bool /*static_weight: a CUDA launch hint*/) {
  const char* op = "sparse24_int8_matmul";
  const Int8MatmulShape sh = validate_sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta,
                                                           w_scale, w_colsum, bias, out_dtype);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  const Int8Epilogue ep =
      make_int8_epilogue(a_scale, a_zero, w_scale, w_colsum, w_values, bias);
  at::Tensor out = at::empty({sh.M, sh.N}, a_q.options().dtype(sh.out_dtype));
  int8_gemm_into(a_q, w_values.data_ptr<int8_t>(), w_meta.data_ptr<uint8_t>(), ep, sh.N, out);
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("sparse24_gemv", &torchquant::cpu::sparse24_gemv_cpu);
  m.impl("sparse24_int8_matmul", &torchquant::cpu::sparse24_int8_matmul_cpu);
}
