// CPU kernels for the NVFP4 weight ops: quantize_nvfp4, dequantize_nvfp4 and
// nvfp4_gemv.
//
// Format (formats.md): packed uint8 [N, K/2], element 2j in the LOW nibble,
// 2j+1 in the high one; E2M1 codes s<<3 | e<<1 | m; block scales e4m3
// [N, K/16] (16 elements per block along K, row-major); one fp32 global
// scale: w = e2m1 * float(block_scale) * global_scale. K a multiple of 16.
//
// quantize_nvfp4, bit-exact, every step one fp32 operation:
//   amax = max |w|;  global = amax / 2688 (= 448 * 6; amax == 0 -> 1)
//   per block: bamax = max |w| over the 16 elements
//     bs = e4m3(min(bamax / 6 / global, 448))      (divisions left to right)
//     d  = float(bs) * global
//     q  = e2m1_rne(clamp(w / d, -6, 6))           (ties to the even code)
//   A block whose e4m3 scale is 0 (all zero, or too small for e4m3) stores
//   codes 0: no division by zero. A negative value that rounds to zero is
//   stored as code 8 (-0): the sign bit survives rounding, as in IEEE.
// Rows run in parallel (the global amax is a parallel per-row max first).
//
// dequantize_nvfp4: (e2m1 * float(bs)) is exact in fp32 (at most 6 significant
// bits); one fp32 multiply by the global scale, then RNE to out_dtype.
//
// nvfp4_gemv: y[m,n] = global * sum_k x[m,k] * (e2m1[n,k] * float(bs[n,k/16]))
// + bias[n], x fp16/bf16 [M, K], y in x's dtype. The block scale is folded
// into each decoded weight (exact); every product x * w is exact in fp32; the
// sum is fp32: 16 lanes within each K chunk of 512, folded pairwise
// (dot16_1x4), chunk sums added in increasing k. Then, separately rounded:
//   y = acc * global;  y = y + float(bias[n]);  out = x_dtype(y)   (RNE)
// Structure as fp8_block_gemv: tiles of kMB x rows by kNB weight rows,
// claimed from a shared counter by the threads (parallel_tiles); per K chunk
// the tile's weight rows are decoded (AVX2 + F16C where the CPU has them, else a
// 16-entry table; block scale folded)
// into a 32 KB fp32 buffer reused by every x row of the tile, four weight
// rows at a time.
#include <torch/library.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/checks.h"
#include "cpu/cpu_common.h"
#include "nvfp4/nvfp4_tiles.h"

#ifdef TQ_HAVE_F16C_PATH
#include <immintrin.h>
#endif

TQ_NO_FP_CONTRACT

namespace torchquant {
namespace cpu {
namespace {

constexpr int64_t kMB = 32;   // x rows per tile
constexpr int64_t kNB = 16;   // W rows per tile (a multiple of 4)
constexpr int64_t kKC = 512;  // K chunk (a multiple of 16)
constexpr int64_t kBlock = 16;

// The table form: 16-code blocks [b0, b1) of the chunk at k0 (dst = the chunk's start),
// each code's kE2M1 value times the block scale.
inline __attribute__((always_inline)) void decode_nvfp4_blocks(const uint8_t* __restrict packed,
                                                               const uint8_t* __restrict bscale,
                                                               const float* __restrict e4m3,
                                                               int64_t k0, int64_t b0, int64_t b1,
                                                               float* __restrict dst) {
  for (int64_t b = b0; b < b1; ++b) {
    const float s = e4m3[bscale[k0 / kBlock + b]];
    const uint8_t* __restrict p = packed + (k0 + b * kBlock) / 2;
    float* __restrict d = dst + b * kBlock;
    for (int i = 0; i < kBlock / 2; ++i) {
      d[2 * i] = kE2M1[p[i] & 0xF] * s;
      d[2 * i + 1] = kE2M1[p[i] >> 4] * s;
    }
  }
}

#ifdef TQ_HAVE_F16C_PATH
// The AVX2 + F16C form of decode_nvfp4_row, 32 codes (two blocks) at a time: every e2m1
// value is an fp16 whose low byte is 0, so a 16-entry byte table (pshufb) indexed by the
// code gives its high byte (sign included: -0 for code 8), vcvtph2ps widens it exactly,
// and the product with the block scale is the same fp32 multiply as the table form's.
__attribute__((target("avx2,f16c"))) void decode_nvfp4_row_f16c(
    const uint8_t* __restrict packed, const uint8_t* __restrict bscale,
    const float* __restrict e4m3, int64_t k0, int64_t kc, float* __restrict dst) {
  const __m128i lut = _mm_setr_epi8(0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46,
                                    static_cast<char>(0x80), static_cast<char>(0xB8),
                                    static_cast<char>(0xBC), static_cast<char>(0xBE),
                                    static_cast<char>(0xC0), static_cast<char>(0xC2),
                                    static_cast<char>(0xC4), static_cast<char>(0xC6));
  const __m128i nib = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
  int64_t b = 0;
  for (; (b + 2) * kBlock <= kc; b += 2) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed + (k0 + b * kBlock) / 2));
    const __m128i even = _mm_shuffle_epi8(lut, _mm_and_si128(w, nib));                     // codes 0, 2, ..
    const __m128i odd = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(w, 4), nib));  // codes 1, 3, ..
    const __m128i c0 = _mm_unpacklo_epi8(even, odd);  // high bytes of codes 0..15 (block b)
    const __m128i c1 = _mm_unpackhi_epi8(even, odd);  // codes 16..31 (block b + 1)
    const __m256 s0 = _mm256_set1_ps(e4m3[bscale[k0 / kBlock + b]]);
    const __m256 s1 = _mm256_set1_ps(e4m3[bscale[k0 / kBlock + b + 1]]);
    float* __restrict d = dst + b * kBlock;
    _mm256_storeu_ps(d, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, c0)), s0));
    _mm256_storeu_ps(d + 8, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpackhi_epi8(zero, c0)), s0));
    _mm256_storeu_ps(d + 16, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, c1)), s1));
    _mm256_storeu_ps(d + 24, _mm256_mul_ps(_mm256_cvtph_ps(_mm_unpackhi_epi8(zero, c1)), s1));
  }
  decode_nvfp4_blocks(packed, bscale, e4m3, k0, b, kc / kBlock, dst);  // an odd last block
}
#endif

// Decodes w[k0, k0 + kc) of one packed row into fp32 with the block scale
// folded in. k0 and kc are multiples of 16.
inline __attribute__((always_inline)) void decode_nvfp4_row(const uint8_t* __restrict packed,
                                                            const uint8_t* __restrict bscale,
                                                            const float* __restrict e4m3,
                                                            int64_t k0, int64_t kc,
                                                            float* __restrict dst) {
#ifdef TQ_HAVE_F16C_PATH
  if (cpu_has_f16c_path()) return decode_nvfp4_row_f16c(packed, bscale, e4m3, k0, kc, dst);
#endif
  decode_nvfp4_blocks(packed, bscale, e4m3, k0, 0, kc / kBlock, dst);
}

// Layout 0 <-> 1, 2 or 3 (nvfp4/nvfp4_layout.h), one 32-bit word: 8 table lookups, one per nibble
// of the source. The map is a bit permutation, so a word's image is the OR of its nibbles'
// images: entry [j][v] is word_to_layout (or word_from_layout) of the word holding only v in
// nibble j. The tables are built once.
struct RelayoutLut {
  uint32_t t[8][16];
  RelayoutLut(int layout, bool inverse) {
    for (int j = 0; j < 8; ++j)
      for (uint32_t v = 0; v < 16; ++v)
        t[j][v] = inverse ? nvfp4::word_from_layout(v << (4 * j), layout)
                          : nvfp4::word_to_layout(v << (4 * j), layout);
  }
  uint32_t operator()(uint32_t w) const {
    uint32_t r = 0;
    for (int j = 0; j < 8; ++j) r |= t[j][(w >> (4 * j)) & 0xFu];
    return r;
  }
};

const RelayoutLut& relayout_lut(int layout, bool inverse) {
  static const RelayoutLut l1(nvfp4::kLayoutBf16, false), l1_inv(nvfp4::kLayoutBf16, true),
      l2(nvfp4::kLayoutF16, false), l2_inv(nvfp4::kLayoutF16, true),
      l3(nvfp4::kLayoutBf16Adj, false), l3_inv(nvfp4::kLayoutBf16Adj, true);
  if (layout == nvfp4::kLayoutBf16) return inverse ? l1_inv : l1;
  if (layout == nvfp4::kLayoutBf16Adj) return inverse ? l3_inv : l3;
  return inverse ? l2_inv : l2;
}

// n words from src to dst (little-endian words: x86 / arm64 hosts); layout 1, 2 or 3.
void relayout_words(const uint8_t* src, uint8_t* dst, int64_t n, int layout, bool inverse) {
  const RelayoutLut& lut = relayout_lut(layout, inverse);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t w;
    std::memcpy(&w, src + 4 * i, 4);
    const uint32_t r = lut(w);
    std::memcpy(dst + 4 * i, &r, 4);
  }
}

// acc[i * kNB + j] = sum_k x[m0+i, k] * w[n0+j, k] (block scale folded, no global).
// layouts 1, 2, 3: each row's chunk is first put back in layout 0 (kc / 8 words, on the stack).
TQ_CPU_CLONES void nvfp4_gemv_tile(const float* __restrict xf, const uint8_t* __restrict wp,
                                   const uint8_t* __restrict ws, int64_t K, int64_t m0,
                                   int64_t mb, int64_t n0, int64_t nb, float* __restrict acc,
                                   float* __restrict wbuf, int layout) {
  const float* e4m3 = e4m3_table();
  std::fill(acc, acc + kMB * kNB, 0.0f);
  uint8_t std_chunk[kKC / 2];
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    const int64_t kc = std::min(kKC, K - k0);  // a multiple of 16
    for (int64_t j = 0; j < kNB; ++j) {
      float* dst = wbuf + j * kKC;
      if (j < nb) {
        const uint8_t* row = wp + (n0 + j) * (K / 2);
        const uint8_t* srow = ws + (n0 + j) * (K / kBlock);
        if (layout != nvfp4::kLayoutStd) {
          relayout_words(row + k0 / 2, std_chunk, kc / 8, layout, /*inverse=*/true);
          decode_nvfp4_row(std_chunk, srow + k0 / kBlock, e4m3, 0, kc, dst);
        } else {
          decode_nvfp4_row(row, srow, e4m3, k0, kc, dst);
        }
      } else {
        std::fill(dst, dst + kc, 0.0f);
      }
    }
    accumulate_rows_1x4(xf + m0 * K + k0, K, wbuf, kKC, kc, mb, nb, acc, kNB);
  }
}

template <typename T>
void nvfp4_gemv_impl(const float* xf, const uint8_t* wp, const uint8_t* ws, float global,
                     const float* bias, int64_t M, int64_t N, int64_t K, T* out, int layout) {
  gemv_tiles(
      M, N, kMB, kNB, kNB * kKC,
      [&](int64_t m0, int64_t mb, int64_t n0, int64_t nb, float* acc, float* wbuf) {
        nvfp4_gemv_tile(xf, wp, ws, K, m0, mb, n0, nb, acc, wbuf, layout);
      },
      [&](int64_t m, int64_t n, float y) {
        y = y * global;
        if (bias) y = y + bias[n];
        out[m * N + n] = from_float<T>(y);
      });
}

float read_global_scale(const at::Tensor& g) {
  // One element (checked by the validator); data_ptr includes any storage offset.
  return *g.data_ptr<float>();
}

at::Tensor nvfp4_relayout_cpu(const at::Tensor& w_packed, int64_t layout, bool inverse) {
  validate_nvfp4_relayout(w_packed, layout);
  if (layout == nvfp4::kLayoutTiled) return nvfp4::relayout_tiled(w_packed, inverse, nvfp4_relayout_cpu);
  at::Tensor out = at::empty(w_packed.sizes(), w_packed.options());
  if (layout == nvfp4::kLayoutStd) return out.copy_(w_packed);
  const uint8_t* src = w_packed.data_ptr<uint8_t>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  at::parallel_for(0, w_packed.numel() / 4, 1 << 14, [&](int64_t b, int64_t e) {
    relayout_words(src + 4 * b, dst + 4 * b, e - b, static_cast<int>(layout), inverse);
  });
  return out;
}

at::Tensor nvfp4_relayout_scale_cpu(const at::Tensor& w_scale, int64_t layout, bool inverse) {
  return nvfp4::relayout_scale(w_scale, layout, inverse);
}

at::Tensor nvfp4_gemv_cpu(const at::Tensor& x, const at::Tensor& w_packed,
                          const at::Tensor& w_scale, const at::Tensor& global_scale,
                          const c10::optional<at::Tensor>& bias, c10::string_view kernel,
                          int64_t layout, bool /*static_weight: a CUDA launch hint*/) {
  const char* op = "nvfp4_gemv";
  const GemvShape sh = validate_nvfp4_gemv(x, w_packed, w_scale, global_scale, bias);
  check_nvfp4_layout(layout, x.scalar_type(), op, /*tiled_ok=*/true);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  if (layout == nvfp4::kLayoutTiled) {  // untiled copies, then layout 3 (the same sums)
    check_nvfp4_tiled_shape(sh.N, sh.K, op);
    return nvfp4_gemv_cpu(x, nvfp4::tile_weight(w_packed, true), nvfp4::tile_scales(w_scale, true),
                          global_scale, bias, kernel, nvfp4::kLayoutBf16Adj, false);
  }

  const at::Tensor xf = x.to(at::kFloat).contiguous();  // exact widening
  at::Tensor bias_f;
  if (bias.has_value()) bias_f = bias->to(at::kFloat).contiguous();
  at::Tensor out = at::empty({sh.M, sh.N}, x.options());
  const float global = read_global_scale(global_scale);
  const uint8_t* wp = w_packed.data_ptr<uint8_t>();
  const uint8_t* ws = static_cast<const uint8_t*>(w_scale.data_ptr());
  dispatch_float_out(x.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    nvfp4_gemv_impl<T>(xf.data_ptr<float>(), wp, ws, global,
                       bias.has_value() ? bias_f.data_ptr<float>() : nullptr, sh.M, sh.N, sh.K,
                       out.data_ptr<T>(), static_cast<int>(layout));
  });
  return out;
}

// ------------------------------------------------------------ quantize ----
TQ_CPU_CLONES float row_amax(const float* __restrict w, int64_t K) {
  float amax = 0.0f;
  for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(w[k]));
  return amax;
}

TQ_CPU_CLONES void quantize_nvfp4_row(const float* __restrict w, int64_t K, float global,
                                      uint8_t* __restrict packed, uint8_t* __restrict bscale) {
  for (int64_t b = 0; b < K / kBlock; ++b) {
    const float* __restrict v = w + b * kBlock;
    float bamax = 0.0f;
    for (int i = 0; i < kBlock; ++i) bamax = std::max(bamax, std::fabs(v[i]));
    const float want = std::min(bamax / 6.0f / global, 448.0f);
    const uint8_t bs = e4m3_encode(want);
    bscale[b] = bs;
    const float bsf = e4m3_table()[bs];
    uint8_t codes[kBlock];
    if (bsf == 0.0f) {
      std::fill(codes, codes + kBlock, uint8_t(0));
    } else {
      const float d = bsf * global;
      for (int i = 0; i < kBlock; ++i)
        codes[i] = e2m1_encode(std::min(std::max(v[i] / d, -6.0f), 6.0f));
    }
    uint8_t* __restrict p = packed + b * (kBlock / 2);
    for (int i = 0; i < kBlock / 2; ++i)
      p[i] = static_cast<uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_nvfp4_cpu(const at::Tensor& w) {
  const char* op = "quantize_nvfp4";
  validate_weight_2d(w, op, kBlock);
  check_finite(w, op, "w");
  const at::Tensor wf = w.to(at::kFloat).contiguous();  // exact widening
  const int64_t N = wf.size(0), K = wf.size(1);
  const float* wptr = wf.data_ptr<float>();
  const int64_t grain = std::max<int64_t>(1, 16384 / K);

  std::vector<float> amax_rows(N);
  at::parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) amax_rows[n] = row_amax(wptr + n * K, K);
  });
  const float amax = *std::max_element(amax_rows.begin(), amax_rows.end());
  const float g0 = amax / 2688.0f;
  const float global = g0 == 0.0f ? 1.0f : g0;  // all zero, or the scale underflows

  at::Tensor packed = at::empty({N, K / 2}, wf.options().dtype(at::kByte));
  at::Tensor scale = at::empty({N, K / kBlock}, wf.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor global_t = at::empty({}, wf.options());
  *global_t.data_ptr<float>() = global;
  uint8_t* pp = packed.data_ptr<uint8_t>();
  uint8_t* sp = static_cast<uint8_t*>(scale.data_ptr());
  at::parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n)
      quantize_nvfp4_row(wptr + n * K, K, global, pp + n * (K / 2), sp + n * (K / kBlock));
  });
  return {packed, scale, global_t};
}

// ---------------------------------------------------------- dequantize ----
template <typename T>
void dequantize_nvfp4_impl(const uint8_t* packed, const uint8_t* bscale, float global, int64_t N,
                           int64_t K, T* out) {
  const float* e4m3 = e4m3_table();
  at::parallel_for(0, N, std::max<int64_t>(1, 16384 / K), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      const uint8_t* p = packed + n * (K / 2);
      const uint8_t* s = bscale + n * (K / kBlock);
      T* o = out + n * K;
      for (int64_t k = 0; k < K; k += 2) {
        const float bsf = e4m3[s[k / kBlock]];
        const uint8_t byte = p[k / 2];
        o[k] = from_float<T>((kE2M1[byte & 0xF] * bsf) * global);
        o[k + 1] = from_float<T>((kE2M1[byte >> 4] * bsf) * global);
      }
    }
  });
}

at::Tensor dequantize_nvfp4_cpu(const at::Tensor& w_packed, const at::Tensor& scale,
                                const at::Tensor& global_scale,
                                c10::optional<at::ScalarType> out_dtype) {
  const char* op = "dequantize_nvfp4";
  validate_dequantize_nvfp4(w_packed, scale, global_scale);
  const at::ScalarType od = dequant_out_dtype(out_dtype, op);
  const int64_t N = w_packed.size(0), K = w_packed.size(1) * 2;
  at::Tensor out = at::empty({N, K}, w_packed.options().dtype(od));
  if (out.numel() == 0) return out;
  const float global = read_global_scale(global_scale);
  const uint8_t* pp = w_packed.data_ptr<uint8_t>();
  const uint8_t* sp = static_cast<const uint8_t*>(scale.data_ptr());
  dispatch_float_out(od, op, [&](auto tag) {
    using T = decltype(tag);
    dequantize_nvfp4_impl<T>(pp, sp, global, N, K, out.data_ptr<T>());
  });
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("nvfp4_gemv", &torchquant::cpu::nvfp4_gemv_cpu);
  m.impl("nvfp4_relayout", &torchquant::cpu::nvfp4_relayout_cpu);
  m.impl("nvfp4_relayout_scale", &torchquant::cpu::nvfp4_relayout_scale_cpu);
  m.impl("quantize_nvfp4", &torchquant::cpu::quantize_nvfp4_cpu);
  m.impl("dequantize_nvfp4", &torchquant::cpu::dequantize_nvfp4_cpu);
}
