// CPU kernels for the FP8 block-scaled weight ops: quantize_fp8_block,
// dequantize_fp8_block and fp8_block_gemv.
//
// Format (formats.md): w_q float8_e4m3fn [N, K], scale fp32 [N, ceil(K / bs)],
// w[n,k] = float(w_q[n,k]) * scale[n, k / bs]. A ragged last block (K not a
// multiple of bs) is simply shorter: its amax and scale cover the elements
// present.
//
// quantize_fp8_block, bit-exact, in fp32: amax = max |w| over the block,
//   scale = amax / 448 (amax == 0 -> 1), w_q = e4m3(clamp(w / scale, -448, 448))
// with c10's RNE e4m3 conversion (torch's .to(torch.float8_e4m3fn)). Any K;
// block_size a multiple of 16 in [16, 256]. Rows run in parallel.
//
// dequantize_fp8_block: float(w_q) * scale as one fp32 multiply, then rounded
// to out_dtype (RNE). Rows run in parallel.
//
// fp8_block_gemv: y[m,n] = sum_k x[m,k] * w[n,k] + bias[n], x fp16/bf16 [M, K]
// (any M on the CPU), y in x's dtype. Accumulation, all fp32:
//   for each block b along K (in increasing order):
//     partial = sum_{k in b} float(x[m,k]) * float(w_q[n,k])   (each product exact)
//     acc = acc + partial * scale[n,b]        (fp32 multiply, then fp32 add: no FMA)
//   y = acc + float(bias[n]);  out = x_dtype(y)   (RNE)
// The in-block sum uses 16 lanes folded pairwise (dot16_1x4 in cpu_common.h).
// Structure: x is widened to fp32 once; the work is split into tiles of kMB
// rows of x by kNB rows of W, claimed by the threads from a shared counter
// (parallel_tiles in cpu_common.h). Inside a tile, K runs in chunks of whole
// blocks (about 512 elements): the chunk of kNB weight rows is decoded
// (decode_e4m3_row: F16C, or a 256-entry table) into a 32 KB fp32 buffer and reused by every x
// row of the tile, four weight rows at a time.
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <vector>


#include "common/checks.h"
#include "cpu/cpu_common.h"
#include "fp8/fp8_tiles.h"

#ifdef TQ_HAVE_F16C_PATH
#include <immintrin.h>
#endif

TQ_NO_FP_CONTRACT

namespace torchquant {
namespace cpu {
namespace {

// ------------------------------------------------------- e4m3 row decode --
// dst[k] = float(e4m3 code src[k]) for k < n, bit-identical to e4m3_table().
// On x86-64 with AVX2 + F16C (checked once at run time) 16 codes at a time:
// (code & 0x7f) << 7 | (code & 0x80) << 8 is the fp16 whose value is the e4m3
// value times 2^-8 (the exponent field lands in the fp16's low exponent bits,
// an e4m3 subnormal on an fp16 subnormal), vcvtph2ps widens it exactly and an
// exact multiply by 2^8 restores the scale. A 16-code group holding a NaN code
// (0x7f / 0xff, which that formula would read as +-480) takes the table. Else,
// and on other CPUs, the 256-entry table.
#ifdef TQ_HAVE_F16C_PATH
__attribute__((target("avx2,f16c"))) void decode_e4m3_row_f16c(const uint8_t* __restrict src,
                                                               float* __restrict dst, int64_t n) {
  const float* table = e4m3_table();
  const __m256i low7 = _mm256_set1_epi16(0x7F), sign = _mm256_set1_epi16(0x80);
  const __m128i nan7 = _mm_set1_epi8(0x7F);
  const __m256 two8 = _mm256_set1_ps(256.0f);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(b, nan7), nan7)) != 0) {
      for (int i = 0; i < 16; ++i) dst[k + i] = table[src[k + i]];
      continue;
    }
    const __m256i w = _mm256_cvtepu8_epi16(b);
    const __m256i h = _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(w, low7), 7),
                                      _mm256_slli_epi16(_mm256_and_si256(w, sign), 8));
    _mm256_storeu_ps(dst + k, _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), two8));
    _mm256_storeu_ps(dst + k + 8,
                     _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)), two8));
  }
  for (; k < n; ++k) dst[k] = table[src[k]];
}
#endif

void decode_e4m3_row(const uint8_t* __restrict src, float* __restrict dst, int64_t n) {
#ifdef TQ_HAVE_F16C_PATH
  if (cpu_has_f16c_path()) return decode_e4m3_row_f16c(src, dst, n);
#endif
  const float* table = e4m3_table();
  for (int64_t k = 0; k < n; ++k) dst[k] = table[src[k]];
}

constexpr int64_t kMB = 32;  // x rows per tile
constexpr int64_t kNB = 16;  // W rows per tile (a multiple of 4)

// K chunk: whole blocks, about 512 elements (never less than one block).
inline int64_t chunk_len(int64_t block_size) {
  return std::max<int64_t>(1, 512 / block_size) * block_size;
}

// acc[i * kNB + j] = sum over blocks of (x[m0+i] . w[n0+j] over the block) * scale,
// for i < mb, j < nb. wbuf holds kNB * chunk_len(bs) floats.
TQ_CPU_CLONES void fp8_gemv_tile(const float* __restrict xf, const uint8_t* __restrict wq,
                                 const float* __restrict wscale, int64_t K, int64_t bs,
                                 int64_t m0, int64_t mb, int64_t n0, int64_t nb,
                                 float* __restrict acc, float* __restrict wbuf) {
  const int64_t kc_max = chunk_len(bs);
  const int64_t nblocks = ceil_div(K, bs);
  std::fill(acc, acc + kMB * kNB, 0.0f);
  for (int64_t k0 = 0; k0 < K; k0 += kc_max) {
    const int64_t kc = std::min(kc_max, K - k0);
    // Decode this chunk of the tile's weight rows; rows past N are zero.
    for (int64_t j = 0; j < kNB; ++j) {
      float* __restrict dst = wbuf + j * kc_max;
      if (j < nb) {
        decode_e4m3_row(wq + (n0 + j) * K + k0, dst, kc);
      } else {
        std::fill(dst, dst + kc, 0.0f);
      }
    }
    for (int64_t i = 0; i < mb; ++i) {
      const float* xr = xf + (m0 + i) * K;
      for (int64_t j0 = 0; j0 < nb; j0 += 4) {
        const float* ws = wscale + (n0 + j0) * nblocks;
        float a[4] = {acc[i * kNB + j0], acc[i * kNB + j0 + 1], acc[i * kNB + j0 + 2],
                      acc[i * kNB + j0 + 3]};
        for (int64_t b0 = k0, blk = k0 / bs; b0 < k0 + kc; b0 += bs, ++blk) {
          const int64_t len = std::min(bs, K - b0);  // a multiple of 16
          float p[4];
          dot16_1x4(xr + b0, wbuf + j0 * kc_max + (b0 - k0), kc_max, len, p);
          // Rows past N (r >= nb - j0) hold zero weights; their sums are dropped below.
          for (int r = 0; r < 4; ++r) {
            const float t = p[r] * (j0 + r < nb ? ws[r * nblocks + blk] : 0.0f);
            a[r] = a[r] + t;
          }
        }
        for (int64_t r = 0; r < 4 && j0 + r < nb; ++r) acc[i * kNB + j0 + r] = a[r];
      }
    }
  }
}

template <typename T>
void fp8_gemv_impl(const float* xf, const uint8_t* wq, const float* wscale, const float* bias,
                   int64_t M, int64_t N, int64_t K, int64_t bs, T* out) {
  gemv_tiles(
      M, N, kMB, kNB, kNB * chunk_len(bs),
      [&](int64_t m0, int64_t mb, int64_t n0, int64_t nb, float* acc, float* wbuf) {
        fp8_gemv_tile(xf, wq, wscale, K, bs, m0, mb, n0, nb, acc, wbuf);
      },
      [&](int64_t m, int64_t n, float y) {
        if (bias) y = y + bias[n];
        out[m * N + n] = from_float<T>(y);
      });
}

at::Tensor fp8_block_gemv_cpu(const at::Tensor& x, const at::Tensor& w_q,
                              const at::Tensor& w_scale, int64_t block_size,
                              const c10::optional<at::Tensor>& bias, c10::string_view kernel,
                              bool /*static_weight: a CUDA launch hint*/, bool tiled) {
  const char* op = "fp8_block_gemv";
  const GemvShape sh = validate_fp8_block_gemv(x, w_q, w_scale, block_size, bias);
  check_kernel_name(kernel_str(kernel), {"cpu"}, op, "CPU");
  if (tiled) {  // the tiled order (fp8/fp8_tiles.h) back to rows, then as any weight: the same sums
    check_fp8_tiled_shape(sh.N, sh.K, op);
    const auto rows = fp8::tile(w_q, w_scale, /*inverse=*/true);
    return fp8_block_gemv_cpu(x, std::get<0>(rows), std::get<1>(rows), block_size, bias, kernel, false, false);
  }
  const at::Tensor xf = x.to(at::kFloat).contiguous();  // exact widening
  at::Tensor bias_f;
  if (bias.has_value()) bias_f = bias->to(at::kFloat).contiguous();
  at::Tensor out = at::empty({sh.M, sh.N}, x.options());
  const uint8_t* wq = static_cast<const uint8_t*>(w_q.data_ptr());
  dispatch_float_out(x.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    fp8_gemv_impl<T>(xf.data_ptr<float>(), wq, w_scale.data_ptr<float>(),
                     bias.has_value() ? bias_f.data_ptr<float>() : nullptr, sh.M, sh.N, sh.K,
                     block_size, out.data_ptr<T>());
  });
  return out;
}

// ------------------------------------------------------------ quantize ----
// scale[blk * s_blk] receives block blk's scale. A block holding NaN or Inf
// (possible in quantize_fp8_act only; the weight op checks first) gets a NaN
// scale and NaN codes (0x7f), as on the GPU.
TQ_CPU_CLONES void quantize_fp8_row(const float* __restrict w, int64_t K, int64_t bs,
                                    uint8_t* __restrict q, float* __restrict scale,
                                    int64_t s_blk = 1) {
  for (int64_t b0 = 0, blk = 0; b0 < K; b0 += bs, ++blk) {
    const int64_t len = std::min(bs, K - b0);
    float amax = 0.0f;
    bool finite = true;
    for (int64_t k = 0; k < len; ++k) {
      amax = std::max(amax, std::fabs(w[b0 + k]));
      finite = finite && std::isfinite(w[b0 + k]);
    }
    if (!finite) {
      scale[blk * s_blk] = std::numeric_limits<float>::quiet_NaN();
      for (int64_t k = 0; k < len; ++k) q[b0 + k] = 0x7F;
      continue;
    }
    const float s0 = amax / 448.0f;
    const float s = s0 == 0.0f ? 1.0f : s0;  // a zero block, or a scale that underflows
    scale[blk * s_blk] = s;
    for (int64_t k = 0; k < len; ++k) {
      const float v = std::min(std::max(w[b0 + k] / s, -448.0f), 448.0f);
      q[b0 + k] = e4m3_encode(v);
    }
  }
}

std::tuple<at::Tensor, at::Tensor> quantize_fp8_block_cpu(const at::Tensor& w,
                                                          int64_t block_size) {
  const char* op = "quantize_fp8_block";
  check_block_size(block_size, op);
  validate_weight_2d(w, op, 1);
  check_finite(w, op, "w");
  const at::Tensor wf = w.to(at::kFloat).contiguous();  // exact widening
  const int64_t N = wf.size(0), K = wf.size(1), nb = ceil_div(K, block_size);
  at::Tensor q = at::empty({N, K}, wf.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor scale = at::empty({N, nb}, wf.options());
  const float* wp = wf.data_ptr<float>();
  uint8_t* qp = static_cast<uint8_t*>(q.data_ptr());
  float* sp = scale.data_ptr<float>();
  at::parallel_for(0, N, std::max<int64_t>(1, 16384 / K), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n)
      quantize_fp8_row(wp + n * K, K, block_size, qp + n * K, sp + n * nb);
  });
  return {q, scale};
}

std::tuple<at::Tensor, at::Tensor> quantize_fp8_act_cpu(const at::Tensor& x, int64_t block_size) {
  validate_quantize_fp8_act(x, block_size);
  const at::Tensor xf = x.to(at::kFloat).contiguous();  // exact widening
  const int64_t M = xf.size(0), K = xf.size(1), nb = ceil_div(K, block_size);
  at::Tensor q = at::empty({M, K}, xf.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor scale = at::empty({nb, M}, xf.options()).t();  // column-major [M, nb]
  if (M == 0) return {q, scale};
  const float* xp = xf.data_ptr<float>();
  uint8_t* qp = static_cast<uint8_t*>(q.data_ptr());
  float* sp = scale.data_ptr<float>();
  at::parallel_for(0, M, std::max<int64_t>(1, 16384 / K), [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) quantize_fp8_row(xp + m * K, K, block_size, qp + m * K, sp + m, M);
  });
  return {q, scale};
}

// ---------------------------------------------------------- dequantize ----
template <typename T>
void dequantize_fp8_impl(const uint8_t* q, const float* scale, int64_t N, int64_t K, int64_t bs,
                         T* out) {
  const int64_t nb = ceil_div(K, bs);
  at::parallel_for(0, N, std::max<int64_t>(1, 16384 / K), [&](int64_t b, int64_t e) {
    std::vector<float> row(K);
    for (int64_t n = b; n < e; ++n) {
      decode_e4m3_row(q + n * K, row.data(), K);
      for (int64_t blk = 0; blk < nb; ++blk) {  // the scale hoisted: no division per element
        const float s = scale[n * nb + blk];
        const int64_t k1 = std::min(K, (blk + 1) * bs);
        for (int64_t k = blk * bs; k < k1; ++k) out[n * K + k] = from_float<T>(row[k] * s);
      }
    }
  });
}

at::Tensor dequantize_fp8_block_cpu(const at::Tensor& w_q, const at::Tensor& scale,
                                    int64_t block_size, c10::optional<at::ScalarType> out_dtype) {
  const char* op = "dequantize_fp8_block";
  validate_dequantize_fp8_block(w_q, scale, block_size);
  const at::ScalarType od = dequant_out_dtype(out_dtype, op);
  const int64_t N = w_q.size(0), K = w_q.size(1);
  at::Tensor out = at::empty({N, K}, w_q.options().dtype(od));
  if (out.numel() == 0) return out;
  const uint8_t* qp = static_cast<const uint8_t*>(w_q.data_ptr());
  dispatch_float_out(od, op, [&](auto tag) {
    using T = decltype(tag);
    dequantize_fp8_impl<T>(qp, scale.data_ptr<float>(), N, K, block_size, out.data_ptr<T>());
  });
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CPU, m) {
  m.impl("fp8_block_gemv", &torchquant::cpu::fp8_block_gemv_cpu);
  m.impl("quantize_fp8_block", &torchquant::cpu::quantize_fp8_block_cpu);
  m.impl("quantize_fp8_act", &torchquant::cpu::quantize_fp8_act_cpu);
  m.impl("dequantize_fp8_block", &torchquant::cpu::dequantize_fp8_block_cpu);
  m.impl("fp8_block_tile", &torchquant::fp8::fp8_block_tile_op);
}
