// Helpers shared by the CPU kernels in csrc/cpu/*.cpp.
//
// The CPU path is the executable form of ../shared/design/formats.md: every
// rounding step below is one IEEE fp32 operation in round-to-nearest-even, in
// the order each file's header documents, so the CUDA kernels can reproduce
// the quantizers bit for bit and the GEMV/GEMM epilogues step for step.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

// The build compiles with -O3 and no -march, i.e. for baseline x86-64 (SSE2).
// The hot loops are written so gcc vectorizes them; TQ_CPU_CLONES additionally
// builds an AVX2 copy of a function and picks one when the library loads
// (ifunc), which roughly halves the int8 GEMM time on AVX2 machines. AVX2
// without FMA on purpose: the epilogues are specified as separately rounded
// multiplies and adds (see TQ_NO_FP_CONTRACT below), and the integer and exact
// float products of the inner loops gain nothing from FMA.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define TQ_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TQ_CPU_CLONES
#endif

// gcc contracts `a * b + c` into one FMA (a single rounding) whenever the
// target has FMA, because -ffp-contract=fast is its C/C++ default, even across
// statements. The contract here is two roundings (product, then sum), so each
// .cpp places TQ_NO_FP_CONTRACT after its #includes: the functions that follow
// keep every fp32 multiply and add separate on any target. (On the default
// x86-64 target there is no FMA to contract to; this keeps it that way if the
// build ever adds -march=native or targets aarch64.)
#if defined(__clang__)
#define TQ_NO_FP_CONTRACT _Pragma("STDC FP_CONTRACT OFF")
#elif defined(__GNUC__)
#define TQ_NO_FP_CONTRACT _Pragma("GCC optimize(\"fp-contract=off\")")
#else
#define TQ_NO_FP_CONTRACT
#endif

// x86-64 with gcc / clang: the e4m3 and e2m1 decodes (fp8_cpu.cpp, nvfp4_cpu.cpp) have an
// AVX2 + F16C form, taken when the CPU has both (cpu_has_f16c_path).
#if defined(__GNUC__) && defined(__x86_64__)
#define TQ_HAVE_F16C_PATH 1
#endif

namespace torchquant {
namespace cpu {

// TORCHQUANT_CPU_NO_F16C=1 (read once per process) keeps the table forms, so tests
// cover both on a machine that has F16C.
inline bool cpu_has_f16c_path() {
#ifdef TQ_HAVE_F16C_PATH
  static const bool ok = [] {
    const char* off = std::getenv("TORCHQUANT_CPU_NO_F16C");
    if (off != nullptr && off[0] == '1') return false;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  }();
  return ok;
#else
  return false;
#endif
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline std::string kernel_str(c10::string_view s) { return std::string(s.data(), s.size()); }

// ------------------------------------------------------ tile scheduling --
// Hands out tile indices 0, 1, ..., ntiles - 1, each exactly once.
class TileCounter {
 public:
  explicit TileCounter(int64_t ntiles) : ntiles_(ntiles) {}
  // The next unclaimed tile, or -1 when all are taken.
  int64_t next() {
    const int64_t t = next_.fetch_add(1, std::memory_order_relaxed);
    return t < ntiles_ ? t : -1;
  }

 private:
  const int64_t ntiles_;
  std::atomic<int64_t> next_{0};
};

// Runs worker(TileCounter&) once per thread (at::parallel_for over
// at::get_num_threads() slots); each worker claims tiles until none are left.
// Compared with a fixed split of the tiles, a thread that loses its core on a
// busy machine delays the finish by at most one tile instead of holding half
// of the work. Every tile is computed by one thread in a fixed order, so the
// results do not depend on the schedule or the thread count. A worker sets up
// its scratch buffers once, before its loop.
template <typename F>
void parallel_tiles(int64_t ntiles, const F& worker) {
  TileCounter counter(ntiles);
  const int64_t nworkers = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), ntiles));
  at::parallel_for(0, nworkers, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) worker(counter);  // serial fallback: the first drains all
  });
}

// The tile loop of the fp32-accumulating GEMVs (fp8, nvfp4, sparse24): tiles of
// mt_rows x rows by nt_rows weight rows from parallel_tiles, each worker with its
// own accumulators (mt_rows * nt_rows) and decode buffer (wbuf_len floats);
// tile(m0, mb, n0, nb, acc, wbuf) fills acc[i * nt_rows + j] for i < mb, j < nb,
// then store(m, n, acc value) writes each output. The callers' epilogues run
// inlined here, so this function keeps fp32 multiplies and adds separate too
// (gcc decides contraction per function; see TQ_NO_FP_CONTRACT below).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
template <typename Tile, typename Store>
void gemv_tiles(int64_t M, int64_t N, int64_t mt_rows, int64_t nt_rows, int64_t wbuf_len,
                const Tile& tile, const Store& store) {
  const int64_t mt = ceil_div(M, mt_rows), nt = ceil_div(N, nt_rows);
  parallel_tiles(mt * nt, [&](TileCounter& tiles) {
    std::vector<float> acc(mt_rows * nt_rows), wbuf(wbuf_len);
    for (int64_t t = tiles.next(); t >= 0; t = tiles.next()) {
      const int64_t m0 = (t / nt) * mt_rows, n0 = (t % nt) * nt_rows;
      const int64_t mb = std::min(mt_rows, M - m0), nb = std::min(nt_rows, N - n0);
      tile(m0, mb, n0, nb, acc.data(), wbuf.data());
      for (int64_t i = 0; i < mb; ++i)
        for (int64_t j = 0; j < nb; ++j) store(m0 + i, n0 + j, acc[i * nt_rows + j]);
    }
  });
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

// ------------------------------------------------------------ e4m3, e2m1 --
// Decode table for all 256 E4M3 (fn) bit patterns; 0x7F / 0xFF decode to NaN.
// Built once through c10's own conversion so it is torch's definition.
inline const float* e4m3_table() {
  static const struct Table {
    float v[256];
    Table() {
      for (int i = 0; i < 256; ++i)
        v[i] = static_cast<float>(
            c10::Float8_e4m3fn(static_cast<uint8_t>(i), c10::Float8_e4m3fn::from_bits()));
    }
  } table;
  return table.v;
}

// E4M3 encode of a finite float, RNE: c10's conversion (identical to
// torch's .to(torch.float8_e4m3fn)). Callers clamp to [-448, 448] first, as
// formats.md requires, so the encoding never depends on how a given torch
// version treats overflow (older ones give NaN, newer ones saturate).
inline uint8_t e4m3_encode(float v) { return c10::Float8_e4m3fn(v).x; }

// E2M1 code -> value: s<<3 | e<<1 | m, magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}.
constexpr float kE2M1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// E2M1 encode, round to nearest, ties to the even code (mantissa bit 0), of
// a value already clamped to [-6, 6]. The magnitude code is the number of
// decision points |v| has passed; at a tie point the comparison is strict
// (>) when the lower neighbour has the even code and non-strict (>=) when the
// upper one has, so 0.25->0, 0.75->1.0, 1.25->1.0, 1.75->2, 2.5->2, 3.5->4,
// 5->4. The sign bit is kept as IEEE rounding keeps it: a negative value that
// rounds to zero is code 8 (-0), as ml_dtypes' float4_e2m1fn and ModelOpt's
// packer store it, so re-quantizing their checkpoints reproduces the bytes.
// Branch-free so the packing loops vectorize.
inline uint8_t e2m1_encode(float v) {
  const float a = v < 0.0f ? -v : v;
  const int mag = int(a > 0.25f) + int(a >= 0.75f) + int(a > 1.25f) + int(a >= 1.75f) +
                  int(a > 2.5f) + int(a >= 3.5f) + int(a > 5.0f);
  const int neg = int(std::signbit(v));
  return static_cast<uint8_t>(mag | (neg << 3));
}

// --------------------------------------------------------- float storing --
template <typename T>
inline T from_float(float v) {
  return static_cast<T>(v);  // c10::Half / c10::BFloat16: round to nearest even
}

// Calls f(T{}) with T the C++ type of an output dtype (fp32, fp16 or bf16).
template <typename F>
inline void dispatch_float_out(at::ScalarType t, const char* op, F&& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kHalf: f(c10::Half{}); break;
    case at::kBFloat16: f(c10::BFloat16{}); break;
    default: TORCH_CHECK(false, op, ": unsupported output dtype ", t);
  }
}

// ---------------------------------------------------- fp32 GEMV helper --
// Sum of 16 lane sums, folded pairwise: lane i += lane i + 8, then i + 4,
// i + 2, i + 1. Constant trip counts so gcc keeps it in registers (two ymm
// halves added, then in-register shuffles) instead of a loop over the stack.
inline __attribute__((always_inline)) float fold16(const float* __restrict l) {
  float t8[8], t4[4], t2[2];
  for (int i = 0; i < 8; ++i) t8[i] = l[i] + l[i + 8];
  for (int i = 0; i < 4; ++i) t4[i] = t8[i] + t8[i + 4];
  for (int i = 0; i < 2; ++i) t2[i] = t4[i] + t4[i + 2];
  return t2[0] + t2[1];
}

// out[r] = sum_k x[k] * w[r * ldw + k] for r = 0..3, len a multiple of 16.
// Summation order (fixed, independent of the vector width the compiler
// picks): 16 lane sums, lane i accumulating k = i, i + 16, ... in increasing
// k; then fold16. Each x * w product here is exact in fp32 (an fp16/bf16
// times a weight with at most 6 significant bits), so FMA or not gives the
// same sums.
inline __attribute__((always_inline)) void dot16_1x4(const float* __restrict x,
                                                     const float* __restrict w, int64_t ldw,
                                                     int64_t len, float* __restrict out) {
  float l0[16] = {}, l1[16] = {}, l2[16] = {}, l3[16] = {};
  const float* __restrict w0 = w;
  const float* __restrict w1 = w + ldw;
  const float* __restrict w2 = w + 2 * ldw;
  const float* __restrict w3 = w + 3 * ldw;
  for (int64_t k = 0; k < len; k += 16) {
    for (int i = 0; i < 16; ++i) {
      const float xv = x[k + i];
      l0[i] += xv * w0[k + i];
      l1[i] += xv * w1[k + i];
      l2[i] += xv * w2[k + i];
      l3[i] += xv * w3[k + i];
    }
  }
  out[0] = fold16(l0);
  out[1] = fold16(l1);
  out[2] = fold16(l2);
  out[3] = fold16(l3);
}

// acc[i * ldacc + j] += sum_{k < len} x[i * ldx + k] * w[j * ldw + k] for i < mb, j < nb:
// the tile loop of the GEMVs that decode a chunk of weight rows into an fp32
// buffer (w, rows ldw apart, nb rounded up to 4 of them present) and reuse it for
// every x row of the tile, four weight rows at a time (dot16_1x4's order).
inline __attribute__((always_inline)) void accumulate_rows_1x4(
    const float* __restrict x, int64_t ldx, const float* __restrict w, int64_t ldw, int64_t len,
    int64_t mb, int64_t nb, float* __restrict acc, int64_t ldacc) {
  for (int64_t i = 0; i < mb; ++i) {
    for (int64_t j0 = 0; j0 < nb; j0 += 4) {
      float p[4];
      dot16_1x4(x + i * ldx, w + j0 * ldw, ldw, len, p);
      for (int64_t r = 0; r < 4 && j0 + r < nb; ++r)
        acc[i * ldacc + j0 + r] = acc[i * ldacc + j0 + r] + p[r];
    }
  }
}

// Row sums of a contiguous int8 matrix [R, C] in int32 (exact while C * 128 < 2^31), rows in
// parallel (int8_cpu.cpp). The column sums of the zero-point term when the caller passes none:
// at::sum's integer reduction over the last axis took ~36 ms for 4096 x 4096 on two cores,
// ~30x the GEMV it serves at M = 1.
at::Tensor int8_row_sums(const at::Tensor& w);

// The fused int8 epilogue's operands as raw pointers, shared by int8_matmul
// and sparse24_int8_matmul (csrc/cpu): y = float(acc - a_zero[m] * colsum[n])
// * (a_scale[m] * w_scale[n]) + bias[n]. Steps are 0 where one element
// broadcasts. Owns the column sums it had to compute (a_zero given without
// w_colsum: one pass over the int8 weight, or over the 2:4 kept values, whose
// row sums are the dense ones) and the exact fp32 copy of the bias.
struct Int8Epilogue {
  const float* a_scale = nullptr;
  int64_t a_scale_step = 0;
  const int32_t* a_zero = nullptr;  // null: symmetric activation
  int64_t a_zero_step = 0;
  const float* w_scale = nullptr;
  int64_t w_scale_step = 0;
  const int32_t* colsum = nullptr;  // non-null iff a_zero is
  const float* bias = nullptr;      // fp32 copy, or null
  at::Tensor colsum_owner, bias_owner;
};

inline Int8Epilogue make_int8_epilogue(const at::Tensor& a_scale,
                                       const c10::optional<at::Tensor>& a_zero,
                                       const at::Tensor& w_scale,
                                       const c10::optional<at::Tensor>& w_colsum,
                                       const at::Tensor& w_int8,
                                       const c10::optional<at::Tensor>& bias) {
  Int8Epilogue ep;
  ep.a_scale = a_scale.data_ptr<float>();
  ep.a_scale_step = a_scale.numel() == 1 ? 0 : 1;
  ep.w_scale = w_scale.data_ptr<float>();
  ep.w_scale_step = w_scale.numel() == 1 ? 0 : 1;
  if (a_zero.has_value()) {
    ep.colsum_owner =
        w_colsum.has_value() ? *w_colsum : int8_row_sums(w_int8);
    ep.a_zero = a_zero->data_ptr<int32_t>();
    ep.a_zero_step = a_zero->numel() == 1 ? 0 : 1;
    ep.colsum = ep.colsum_owner.data_ptr<int32_t>();
  }
  if (bias.has_value()) {
    ep.bias_owner = bias->to(at::kFloat).contiguous();  // exact widening
    ep.bias = ep.bias_owner.data_ptr<float>();
  }
  return ep;
}

// The int8 GEMM of int8_matmul (csrc/cpu/int8_cpu.cpp) with its epilogue:
// out[M, N] (fp32 / fp16 / bf16, preallocated) from a_q [M, K] int8 and a
// weight given as int8 [N, K] (meta == null) or as the kept values [N, K/2]
// of a 2:4 weight with its meta [N, ceil(K/8)] (sparse24_int8_matmul). The
// integer sums are exact, so both forms give bit-identical results.
void int8_gemm_into(const at::Tensor& a_q, const int8_t* w, const uint8_t* meta,
                    const Int8Epilogue& ep, int64_t N, at::Tensor& out);

}  // namespace cpu
}  // namespace torchquant
