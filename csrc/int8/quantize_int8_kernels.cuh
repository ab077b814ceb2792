// quantize_int8 on the GPU: float [R, C] (fp32 / fp16 / bf16) -> int8 codes,
// an fp32 scale and an int32 zero point per row or for the whole tensor.
// Device code only.
//
// Bit-identical to the CPU kernel (csrc/cpu/int8_cpu.cpp) and to
// torchquant.formats.quantize_int8 on finite input; every step is one
// correctly rounded fp32 operation in the same order (fp16/bf16 are widened
// exactly first):
//   symmetric:  amax = max |x|;  s = amax / 127 (s == 0 -> 1);  zero = 0
//               q = clamp(rne(x / s), -128, 127)
//   asymmetric: lo = min(min x, 0), hi = max(max x, 0), s = (hi - lo) / 255,
//               or hi / 255 - lo / 255 where hi - lo overflows (s == 0 -> 1);
//               zero = clamp(rne(-128 - lo / s), -128, 127)
//               q = clamp(rne(x / s + zero), -128, 127)
// Divisions are __fdiv_rn (IEEE, never a reciprocal multiply), rne is
// __float2int_rn, adds and subtracts are __fadd_rn / __fsub_rn; min and max
// are exact, so any reduction order gives the same scale.
//
// Non-finite input (no host sync to reject it here, unlike the CPU op, which
// raises): a row (per_row) or tensor holding NaN or +-Inf gets scale NaN,
// zero point 0 and codes 0, so everything int8_matmul computes from that row
// is NaN, the way F.linear propagates a NaN activation.
//
// Kernels:
//   quantize_rows_kernel: one block per row; pass 1 reduces the row (16-byte
//     loads when the row is 16-byte aligned), pass 2 re-reads it (L1/L2 hit)
//     and writes the codes (4- or 8-byte stores).
//   quantize_tensor_reduce_kernel + quantize_tensor_apply_kernel (per_row
//     False): a grid-stride partial reduction into one float4 per block, then
//     every block of the second launch reduces those partials itself (same
//     exact min/max, so all blocks agree), block 0 writes scale and zero, and
//     all blocks quantize their grid-stride share. Two launches, no atomics,
//     no host sync.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/pdl_device.cuh"

namespace torchquant {
namespace int8 {

constexpr int kQuantThreads = 256;
constexpr int kQuantMaxPartials = 1024;

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

// Running statistics of a row or tensor: amax (symmetric) or [lo, hi]
// (asymmetric; both start at 0, which puts 0 inside the range as specified),
// plus whether anything was NaN or Inf.
struct QStats {
  float a;  // symmetric: amax (>= 0); asymmetric: lo (<= 0)
  float b;  // asymmetric: hi (>= 0)
  bool bad;
};

template <bool kSym>
__device__ __forceinline__ void stats_add(QStats& st, float v) {
  st.bad |= !isfinite(v);
  if (kSym) {
    st.a = fmaxf(st.a, fabsf(v));
  } else {
    st.a = fminf(st.a, v);
    st.b = fmaxf(st.b, v);
  }
}

template <bool kSym>
__device__ __forceinline__ QStats stats_merge(QStats x, QStats y) {
  QStats r;
  r.bad = x.bad || y.bad;
  if (kSym) {
    r.a = fmaxf(x.a, y.a);
    r.b = 0.0f;
  } else {
    r.a = fminf(x.a, y.a);
    r.b = fmaxf(x.b, y.b);
  }
  return r;
}

// Whole-block reduction; every thread gets the result. blockDim.x == kQuantThreads.
template <bool kSym>
__device__ __forceinline__ QStats block_reduce(QStats st) {
  __shared__ float s_a[kQuantThreads / 32], s_b[kQuantThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    QStats other;
    other.a = __shfl_xor_sync(0xffffffffu, st.a, o);
    other.b = __shfl_xor_sync(0xffffffffu, st.b, o);
    other.bad = false;
    st = stats_merge<kSym>(st, other);
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // s_a / s_b may still be read by a previous call's threads
  if (lane == 0) {
    s_a[warp] = st.a;
    s_b[warp] = st.b;
  }
  const bool bad = __syncthreads_or(st.bad) != 0;
  QStats r;
  r.a = s_a[0];
  r.b = s_b[0];
#pragma unroll
  for (int w = 1; w < kQuantThreads / 32; ++w) {
    QStats o;
    o.a = s_a[w];
    o.b = s_b[w];
    o.bad = false;
    r = stats_merge<kSym>(r, o);
  }
  r.bad = bad;
  return r;
}

struct QParams {
  float s;
  float zf;  // zero point as fp32 (exact)
  int32_t z;
};

template <bool kSym>
__device__ __forceinline__ QParams qparams(const QStats& st) {
  QParams p;
  if (st.bad) {
    p.s = __int_as_float(0x7fffffff);  // NaN
    p.zf = 0.0f;
    p.z = 0;
    return p;
  }
  if (kSym) {
    const float s = __fdiv_rn(st.a, 127.0f);
    p.s = s == 0.0f ? 1.0f : s;  // amax == 0, or so small the scale underflows
    p.zf = 0.0f;
    p.z = 0;
  } else {
    // hi - lo overflows only for finite ends beyond fp32's max / 2: then hi / 255 - lo / 255
    const float span = __fsub_rn(st.b, st.a);
    const float s = isinf(span) ? __fsub_rn(__fdiv_rn(st.b, 255.0f), __fdiv_rn(st.a, 255.0f))
                                : __fdiv_rn(span, 255.0f);
    p.s = s == 0.0f ? 1.0f : s;  // span == 0, or the scale underflows
    const int z = __float2int_rn(__fsub_rn(-128.0f, __fdiv_rn(st.a, p.s)));
    p.z = min(max(z, -128), 127);
    p.zf = static_cast<float>(p.z);
  }
  return p;
}

template <bool kSym>
__device__ __forceinline__ int8_t quant1(float v, const QParams& p) {
  float r = __fdiv_rn(v, p.s);
  if (!kSym) r = __fadd_rn(r, p.zf);
  const int q = __float2int_rn(r);
  return static_cast<int8_t>(min(max(q, -128), 127));
}

// V consecutive elements from 16 bytes (V = 4 fp32 or 8 fp16/bf16).
template <typename T>
struct Vec16 {
  static constexpr int V = 16 / sizeof(T);
  __device__ __forceinline__ static void load(const T* p, float (&f)[V]) {
    const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
    const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = to_f32(e[i]);
  }
};

// V int8 codes (4 or 8 bytes) in one store.
template <int V>
__device__ __forceinline__ void store_codes(int8_t* q, const int8_t (&c)[V]) {
  if constexpr (V == 4) {
    uint32_t w = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) w |= static_cast<uint32_t>(static_cast<uint8_t>(c[i])) << (8 * i);
    *reinterpret_cast<uint32_t*>(q) = w;
  } else {
    uint32_t w0 = 0, w1 = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w0 |= static_cast<uint32_t>(static_cast<uint8_t>(c[i])) << (8 * i);
      w1 |= static_cast<uint32_t>(static_cast<uint8_t>(c[i + 4])) << (8 * i);
    }
    *reinterpret_cast<uint2*>(q) = make_uint2(w0, w1);
  }
}

// Visit elements [0, n) of x with thread stride `stride` starting at `first`
// (vectorised over whole 16-byte groups when kVec; then a scalar tail).
template <typename T, bool kVec, typename F>
__device__ __forceinline__ void visit_stats(const T* x, int64_t n, int64_t first, int64_t stride,
                                            F&& f) {
  int64_t done = 0;
  if constexpr (kVec) {
    constexpr int V = Vec16<T>::V;
    const int64_t nv = n / V;
    for (int64_t i = first; i < nv; i += stride) {
      float v[V];
      Vec16<T>::load(x + i * V, v);
#pragma unroll
      for (int j = 0; j < V; ++j) f(v[j]);
    }
    done = nv * V;
  }
  for (int64_t i = done + first; i < n; i += stride) f(to_f32(x[i]));
}

template <typename T, bool kSym, bool kVec>
__device__ __forceinline__ void quantize_span(const T* x, int8_t* q, int64_t n, int64_t first,
                                              int64_t stride, const QParams& p) {
  if (isnan(p.s)) {  // non-finite input: codes 0 (block-uniform branch, off the hot path)
    for (int64_t i = first; i < n; i += stride) q[i] = 0;
    return;
  }
  int64_t done = 0;
  if constexpr (kVec) {
    constexpr int V = Vec16<T>::V;
    const int64_t nv = n / V;
    for (int64_t i = first; i < nv; i += stride) {
      float v[V];
      Vec16<T>::load(x + i * V, v);
      int8_t c[V];
#pragma unroll
      for (int j = 0; j < V; ++j) c[j] = quant1<kSym>(v[j], p);
      store_codes<V>(q + i * V, c);
    }
    done = nv * V;
  }
  for (int64_t i = done + first; i < n; i += stride) q[i] = quant1<kSym>(to_f32(x[i]), p);
}

// One block per row. kVec: the row start is 16-byte aligned (C * sizeof(T) % 16 == 0
// and an aligned base), so the codes' row start is aligned for the V-byte stores too.
template <typename T, bool kSym, bool kVec>
__global__ void __launch_bounds__(kQuantThreads)
    quantize_rows_kernel(const T* __restrict__ x, int8_t* __restrict__ q, float* __restrict__ scale,
                         int32_t* __restrict__ zero, int64_t C) {
  // Launched with PDL (common/pdl.h) behind a decode kernel: it may start early, but x is
  // that kernel's output, so it waits first; and the GEMV after it may launch while it runs.
  pdl_launch_dependents();
  pdl_wait();
  const int64_t row = blockIdx.x;
  const T* xr = x + row * C;
  QStats st{0.0f, 0.0f, false};
  visit_stats<T, kVec>(xr, C, threadIdx.x, kQuantThreads, [&](float v) { stats_add<kSym>(st, v); });
  st = block_reduce<kSym>(st);
  const QParams p = qparams<kSym>(st);
  quantize_span<T, kSym, kVec>(xr, q + row * C, C, threadIdx.x, kQuantThreads, p);
  if (threadIdx.x == 0) {
    scale[row] = p.s;
    zero[row] = p.z;
  }
}

// Per-tensor pass 1: partial[b] = {a, b, bad, 0} over a grid-stride share.
template <typename T, bool kSym, bool kVec>
__global__ void __launch_bounds__(kQuantThreads)
    quantize_tensor_reduce_kernel(const T* __restrict__ x, int64_t n, float4* __restrict__ partial) {
  QStats st{0.0f, 0.0f, false};
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kQuantThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kQuantThreads;
  visit_stats<T, kVec>(x, n, first, stride, [&](float v) { stats_add<kSym>(st, v); });
  st = block_reduce<kSym>(st);
  if (threadIdx.x == 0) partial[blockIdx.x] = make_float4(st.a, st.b, st.bad ? 1.0f : 0.0f, 0.0f);
}

// Per-tensor pass 2: every block folds all partials (exact, so identical in
// every block), block 0 publishes scale / zero, all blocks quantize.
template <typename T, bool kSym, bool kVec>
__global__ void __launch_bounds__(kQuantThreads)
    quantize_tensor_apply_kernel(const T* __restrict__ x, int64_t n,
                                 const float4* __restrict__ partial, int num_partials,
                                 int8_t* __restrict__ q, float* __restrict__ scale,
                                 int32_t* __restrict__ zero) {
  QStats st{0.0f, 0.0f, false};
  for (int i = threadIdx.x; i < num_partials; i += kQuantThreads) {
    const float4 v = partial[i];
    QStats o{v.x, v.y, v.z != 0.0f};
    st = stats_merge<kSym>(st, o);
  }
  st = block_reduce<kSym>(st);
  const QParams p = qparams<kSym>(st);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    scale[0] = p.s;
    zero[0] = p.z;
  }
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kQuantThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kQuantThreads;
  quantize_span<T, kSym, kVec>(x, q, n, first, stride, p);
}

}  // namespace int8
}  // namespace torchquant
