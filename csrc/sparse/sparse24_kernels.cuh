// Device code for the 2:4 structured-sparsity ops (no torch headers here;
// sparse24.cu validates, dispatches and launches).
//
// Format (../shared/design/formats.md, compress24 in csrc/torchquant.cpp):
// groups of 4 consecutive elements along K; a compressed row holds the two
// kept values of group g at values[2g], values[2g+1] and the nibble
// pos0 | pos1 << 2 (pos0 < pos1) in byte g / 2 of meta, even g in the low
// nibble. That nibble order is exactly the sparse tensor cores' metadata
// order (2-bit indices from the lowest K upward, the first index in the low
// bits), so our meta is used without reordering any bits. Which lane carries
// which part differs by element width (see each mma kernel): for f16/bf16 a
// lane's 32-bit metadata register is two 16-bit halves (16 K of row g, 16 K
// of row g+8); for 8-bit types it is ONE row's 32 K, i.e. one of our 32-bit
// meta words as is.
//
// Kernels:
//   prune24_kernel       one thread per group of 4: load, rank by |w|, store.
//   compress24_kernel    one thread per meta byte (2 groups), so every byte
//   decompress24_kernel  has one writer; element loads are scalar (rows need
//                        not be vector-aligned: K is only a multiple of 4).
//   These are offline, bandwidth-trivial ops; they are written to be
//   obviously bit-identical to csrc/cpu/sparse24_cpu.cpp, not to be fast.
//   Bad data (3+ nonzeros, nibble with pos0 >= pos1) is recorded with an
//   atomicMin of (row * G + group) into a device word so the host names the
//   same first group the CPU does (row-major order).
//
//   sparse24_gemv_fma_kernel   CUDA cores, any sm, K % 4 == 0 (see below).
//   sparse24_gemv_mma_kernel   mma.sp m16n8k32 tensor cores, sm_80+, K % 32 == 0.
//   sparse24_int8_simt_kernel  int8 x 2:4 int8, CUDA cores, any K % 4 == 0.
//   sparse24_int8_gemv_kernel  int8 x 2:4 int8 decode, CUDA cores (dp4a), K % 32 == 0.
//   sparse24_int8_mma_kernel   int8 x 2:4 int8, mma.sp m16n8k32 .s8, sm_80+.
//
// Both GEMV kernels compute y[m, n] = sum_k x[m, k] w[n, k] (+ bias[n]) with
// every product exact in fp32 (fp16/bf16 x fp16/bf16) and fp32 accumulation,
// rounded once to x's dtype at the end.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common/pdl_device.cuh"

namespace torchquant {
namespace sparse24 {

// ------------------------------------------------------------ elements --
__device__ __forceinline__ float to_float(int8_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Zero of each storage type, all bits clear (+0), as the CPU's T(0).
template <typename T> __device__ __forceinline__ T zero_of();
template <> __device__ __forceinline__ int8_t zero_of<int8_t>() { return 0; }
template <> __device__ __forceinline__ float zero_of<float>() { return 0.0f; }
template <> __device__ __forceinline__ __half zero_of<__half>() { return __ushort_as_half(0); }
template <> __device__ __forceinline__ __nv_bfloat16 zero_of<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0);
}

// Value-based test: -0.0 is a zero, like the CPU's float(v) != 0.
template <typename T>
__device__ __forceinline__ bool is_nonzero(T v) {
  return to_float(v) != 0.0f;
}

// Sentinel of the "first bad group" word: no error seen.
constexpr unsigned long long kNoError = ~0ull;

// --------------------------------------------------------------- prune24 --
// Element i of a group is kept iff fewer than two others beat it: j beats i
// when |w_j| > |w_i|, or |w_j| == |w_i| and j < i. |.| is exact in fp32 for
// every dtype (int8 -128 -> 128). Dropped elements become +0; kept ones are
// copied bit for bit.
template <typename T>
__global__ void prune24_kernel(const T* __restrict__ w, T* __restrict__ out,
                               bool* __restrict__ mask, int64_t groups) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += stride) {
    T v[4];
    float a[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[i] = w[4 * g + i];
      a[i] = fabsf(to_float(v[i]));
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int beaten_by = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        beaten_by += int(j != i && (a[j] > a[i] || (a[j] == a[i] && j < i)));
      const bool keep = beaten_by < 2;
      out[4 * g + i] = keep ? v[i] : zero_of<T>();
      mask[4 * g + i] = keep;
    }
  }
}

// ------------------------------------------------------------ compress24 --
// Thread t owns meta byte t: row n = t / MB, groups 2j and 2j + 1 (j = t % MB).
// Kept positions: the nonzeros, then the lowest zero positions until there
// are two (canonical). A group with 3 or 4 nonzeros records
// key = (n * G + g) * 2 + (count - 3): the minimum key is the first bad group
// in row-major order and carries its count.
template <typename T>
__global__ void compress24_kernel(const T* __restrict__ w, T* __restrict__ values,
                                  uint8_t* __restrict__ meta, int64_t N, int64_t K,
                                  unsigned long long* __restrict__ first_bad) {
  const int64_t G = K / 4, MB = (K + 7) / 8;
  const int64_t total = N * MB;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += stride) {
    const int64_t n = t / MB, j = t % MB;
    uint32_t byte = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t g = 2 * j + h;
      if (g >= G) break;  // K/4 odd: the last byte's high nibble stays 0
      const T* p = w + n * K + 4 * g;
      T v[4];
      bool nz[4];
      int cnt = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        v[i] = p[i];
        nz[i] = is_nonzero(v[i]);
        cnt += int(nz[i]);
      }
      if (cnt > 2) {
        atomicMin(first_bad, static_cast<unsigned long long>((n * G + g) * 2 + (cnt - 3)));
        continue;
      }
      // Walk the group in index order taking every nonzero and, while the
      // count is short of two, the lowest zeros: the first two taken are
      // (pos0, pos1), already sorted. (Written without a dynamically indexed
      // array so nothing goes to local memory.)
      int zeros_needed = 2 - cnt, p0 = -1, p1 = -1;
      T v0 = v[0], v1 = v[1];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        bool take = nz[i];
        if (!take && zeros_needed > 0) {
          take = true;
          --zeros_needed;
        }
        if (take && p0 < 0) {
          p0 = i;
          v0 = v[i];
        } else if (take && p1 < 0) {
          p1 = i;
          v1 = v[i];
        }
      }
      T* o = values + n * (K / 2) + 2 * g;
      o[0] = v0;
      o[1] = v1;
      byte |= static_cast<uint32_t>(p0 | (p1 << 2)) << (4 * h);
    }
    meta[t] = static_cast<uint8_t>(byte);
  }
}

// ---------------------------------------------------------- decompress24 --
// Thread t owns meta byte t. A nibble with pos0 >= pos1 records
// key = (n * G + g) * 16 + nibble; the unused high nibble of a last byte
// (K/4 odd) is never read.
template <typename T>
__global__ void decompress24_kernel(const T* __restrict__ values, const uint8_t* __restrict__ meta,
                                    T* __restrict__ out, int64_t N, int64_t K,
                                    unsigned long long* __restrict__ first_bad) {
  const int64_t G = K / 4, MB = (K + 7) / 8;
  const int64_t total = N * MB;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += stride) {
    const int64_t n = t / MB, j = t % MB;
    const uint32_t byte = meta[t];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t g = 2 * j + h;
      if (g >= G) break;
      const uint32_t nib = (byte >> (4 * h)) & 0xFu;
      const int p0 = nib & 3, p1 = nib >> 2;
      if (p0 >= p1) atomicMin(first_bad, static_cast<unsigned long long>((n * G + g) * 16 + nib));
      const T* vin = values + n * (K / 2) + 2 * g;
      const T v0 = vin[0], v1 = vin[1];
      T* o = out + n * K + 4 * g;
#pragma unroll
      for (int i = 0; i < 4; ++i) o[i] = i == p0 ? v0 : (i == p1 ? v1 : zero_of<T>());
    }
  }
}

// =========================================================== sparse GEMV ==
// Shared pieces of both GEMV kernels.

template <typename T> struct Half2Traits;
template <> struct Half2Traits<__half> {
  // Two packed fp16 -> two fp32 (exact).
  static __device__ __forceinline__ float2 to_float2(uint32_t v) {
    return __half22float2(*reinterpret_cast<const __half2*>(&v));
  }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};
template <> struct Half2Traits<__nv_bfloat16> {
  // bf16 is the top half of an fp32: widening is a shift / a mask.
  static __device__ __forceinline__ float2 to_float2(uint32_t v) {
    return make_float2(__uint_as_float(v << 16), __uint_as_float(v & 0xFFFF0000u));
  }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
};

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}

// Streaming loads of the weight: read once, so keep them out of L1 and ask
// L2 for the whole 256 B neighbourhood (the next lanes' data). volatile so
// the compiler never speculates one above the bounds test that guards it.
__device__ __forceinline__ uint4 ld_stream_v4(const void* p) {
  uint4 r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
#else
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
#endif
  return r;
}
__device__ __forceinline__ uint32_t ld_stream_u32(const void* p) {
  uint32_t r;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ uint32_t ld_stream_u16(const void* p) {
  unsigned short r;
  asm volatile("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ uint32_t ld_stream_u8(const void* p) {
  unsigned short r;
  asm volatile("ld.global.nc.L1::no_allocate.u8 %0, [%1];" : "=h"(r) : "l"(p));
  return r;
}
// The activation is re-read by every warp of the SM: keep it in L1.
__device__ __forceinline__ uint4 ld_cached_v4(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}
__device__ __forceinline__ uint2 ld_cached_v2(const void* p) {
  uint2 r;
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}

// Every element of acc summed over the 32 lanes of the warp, in a fixed xor-butterfly order
// (deterministic), the sum left in every lane.
template <typename A, int R, int C>
__device__ __forceinline__ void warp_sum_all(A (&acc)[R][C]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc[r][c] += __shfl_xor_sync(0xFFFFFFFFu, acc[r][c], o);
}

// -------------------------------------------------------- fma GEMV ------
// sparse24_gemv_fma_kernel<T, MT, RW, VEC>
//
// What: y[m0 + m, n] for one M tile of MT rows of x (runtime M may be less)
// and RW weight rows per warp, 8 warps per block (block = 8 * RW rows).
//
// Work per lane: the K axis is cut into steps of G groups (G = 4 when VEC: a
// 16-byte load of 8 kept values plus a 16-bit meta load; G = 1 otherwise: 4
// bytes of values plus a meta nibble). Lane l takes steps l, l + 32, ..., so
// one warp-wide load is 512 contiguous bytes of a row. Each kept value w at
// position p of group q is multiplied by x[m, 4q + p] for all MT rows: the
// two kept x elements of a group come out of the group's 8 bytes of x with
// ONE prmt whose selector is computed from the nibble once per (row, group)
// and reused for all MT rows of x. Products are exact in fp32; fmaf
// accumulates per (weight row, x row) per lane, then a fixed xor-butterfly
// sums the lanes (deterministic). Lane 0 adds the bias and rounds once.
//
// Memory: each weight byte is read from DRAM exactly once (L1::no_allocate,
// next step prefetched into registers before the current one is consumed);
// x (M * K * 2 bytes, shared by every warp) is read through L1, 16 bytes
// (two groups) per lane and x row at a time. Estimated cost per 16-byte
// value load per row: ~60 issue slots at M = 1 (about 45% of the SM's issue
// rate at the HBM rate) growing by ~20 per extra x row, so the path stays
// bandwidth-bound to M ~ 2-4; auto gives larger M to the tensor-core kernel.
// Launch: grid (ceil(N / (8 RW)), min(ceil(M / MT), 65535)), block 256.
// Requires: VEC -> K % 16 == 0, values and x 16-B aligned, meta 2-B
//           aligned; scalar -> x 8-B, values 4-B aligned (the host copies
//           misaligned views).
// Register budget (min blocks per SM in __launch_bounds__): MT <= 4 tiles
// (RW <= 4 for MT <= 2, RW <= 2 for MT = 4) fit 80 registers: 3 blocks =
// 24 warps per SM for the decode cases. MT = 8 gets 128 (2 blocks); the
// MT = 16 tile (a fallback: auto sends M > kFmaMaxM to the tensor-core
// kernel on sm_80+) keeps 16 x RW accumulators and gets the whole register
// file rather than spill.
// Measured and dropped (H200, 2026-12-02, results/h200/2026-12-02_nvfp4_wgmma/
// call3_sp24_fma_ab.csv, 28672x8192 M = 1, bf16): per-group selectors instead of the pair
// selectors below, 78.1 vs 75.9 us (RW = 4); two lane steps in flight instead of one
// (a second register set, 2 blocks per SM), 75.0 at RW = 4 but 72.1 against 66.6 at
// RW = 2, the rows per warp launch_fma now picks at M = 1.
template <typename T, int MT, int RW, bool VEC>
__global__ void __launch_bounds__(256, (MT <= 4 ? 3 : (MT <= 8 ? 2 : 1))) sparse24_gemv_fma_kernel(
    const T* __restrict__ x, const T* __restrict__ values, const uint8_t* __restrict__ meta,
    const T* __restrict__ bias, T* __restrict__ y, int M, int N, int K) {
  using H = Half2Traits<T>;
  constexpr int G = VEC ? 4 : 1;   // groups per lane step
  constexpr int XG = VEC ? 2 : 1;  // groups per x load
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int row0 = (blockIdx.x * 8 + warp) * RW;
  pdl_launch_dependents();  // common/pdl.h: the next decode kernel may launch
  if (row0 >= N) return;  // no block-wide barrier below: a whole warp may leave
  pdl_wait();

  const int nsteps = K / (4 * G);
  const int64_t vstride = K / 2;        // values per row
  const int64_t mstride = (K + 7) / 8;  // meta bytes per row
  const T* vrow[RW];
  const uint8_t* mrow[RW];
#pragma unroll
  for (int r = 0; r < RW; ++r) {
    const int n = min(row0 + r, N - 1);  // rows past N re-read row N-1, never stored
    vrow[r] = values + n * vstride;
    mrow[r] = meta + n * mstride;
  }

  // One lane step of RW rows: G packed pairs of kept values and G nibbles
  // (in the low 4G bits) per row.
  auto load_step = [&](int c, uint32_t (&v)[RW][G], uint32_t (&m)[RW]) {
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      if constexpr (VEC) {
        const uint4 q = ld_stream_v4(vrow[r] + 8 * c);
        v[r][0] = q.x;
        v[r][1] = q.y;
        v[r][2] = q.z;
        v[r][3] = q.w;
        m[r] = ld_stream_u16(mrow[r] + 2 * c);
      } else {
        v[r][0] = ld_stream_u32(vrow[r] + 2 * c);
        m[r] = ld_stream_u8(mrow[r] + (c >> 1)) >> (4 * (c & 1));
      }
    }
  };

  const int mtiles = (M + MT - 1) / MT;
  for (int mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
    const int m0 = mt * MT;
    const int mv = min(MT, M - m0);
    const T* xt = x + static_cast<int64_t>(m0) * K;

    float acc[RW][MT];
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
      for (int m = 0; m < MT; ++m) acc[r][m] = 0.0f;

    uint32_t cv[RW][G], cm[RW];
    if (lane < nsteps) load_step(lane, cv, cm);
    for (int c = lane; c < nsteps; c += 32) {
      // Next step's weight loads go out before this step's math.
      uint32_t nv[RW][G], nm[RW];
      if (c + 32 < nsteps) load_step(c + 32, nv, nm);
      // Groups are consumed XG at a time, so each x load is 16 bytes (VEC)
      // or 8 (scalar): a lane's x span is 2x its value span, and one wide
      // load per lane and x row keeps L1 wavefronts per byte low at M = 2..4.
#pragma unroll
      for (int q0 = 0; q0 < G; q0 += XG) {
        uint32_t sel[RW][XG];
        float2 wf[RW][XG];
#pragma unroll
        for (int r = 0; r < RW; ++r) {
          if constexpr (XG == 2) {
            // The pair's meta byte holds the four 2-bit positions p0 p1 (group q0) and
            // p2 p3 (group q0 + 1); spread them to the bytes of t = p0 | p1 << 8 |
            // p2 << 16 | p3 << 24, then one multiply-add gives both selectors (prmt
            // reads only the low 16 bits of its selector).
            const uint32_t b = q0 == 0 ? cm[r] : cm[r] >> (4 * q0);
            uint32_t t = (b | (b << 12)) & 0x000F000Fu;
            t = (t | (t << 6)) & 0x03030303u;
            const uint32_t s2 = t * 0x22u + 0x10101010u;
            sel[r][0] = s2;
            sel[r][1 % XG] = s2 >> 16;
          } else {
#pragma unroll
            for (int j = 0; j < XG; ++j) {
              const uint32_t nib = (cm[r] >> (4 * (q0 + j))) & 0xFu;
              // prmt selector picking halves p0 and p1 of the group's 8 bytes:
              // bytes (2p0, 2p0+1, 2p1, 2p1+1) = (p0 | p1 << 8) * 0x22 + 0x1010.
              sel[r][j] = ((nib & 3u) | ((nib & 12u) << 6)) * 0x22u + 0x1010u;
            }
          }
#pragma unroll
          for (int j = 0; j < XG; ++j) wf[r][j] = H::to_float2(cv[r][q0 + j]);
        }
        const int k = (c * G + q0) * 4;  // first K index of group q0
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m < mv) {
            uint32_t xw[2 * XG];
            const T* xp = xt + static_cast<int64_t>(m) * K + k;
            if constexpr (XG == 2) {
              const uint4 t4 = ld_cached_v4(xp);
              xw[0] = t4.x;
              xw[1] = t4.y;
              xw[2 % (2 * XG)] = t4.z;
              xw[3 % (2 * XG)] = t4.w;
            } else {
              const uint2 t2 = ld_cached_v2(xp);
              xw[0] = t2.x;
              xw[1] = t2.y;
            }
#pragma unroll
            for (int j = 0; j < XG; ++j)
#pragma unroll
              for (int r = 0; r < RW; ++r) {
                const float2 xf = H::to_float2(prmt(xw[2 * j], xw[2 * j + 1], sel[r][j]));
                acc[r][m] = fmaf(wf[r][j].x, xf.x, acc[r][m]);
                acc[r][m] = fmaf(wf[r][j].y, xf.y, acc[r][m]);
              }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        cm[r] = nm[r];
#pragma unroll
        for (int q = 0; q < G; ++q) cv[r][q] = nv[r][q];
      }
    }

    warp_sum_all(acc);

    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const int n = row0 + r;
        if (n < N) {
          const float b = bias != nullptr ? to_float(bias[n]) : 0.0f;
#pragma unroll
          for (int m = 0; m < MT; ++m)
            if (m < mv) y[static_cast<int64_t>(m0 + m) * N + n] = H::from_float(acc[r][m] + b);
        }
      }
    }
  }
}

// -------------------------------------------------------- mma GEMV ------
// sparse24_gemv_mma_kernel<T, NT, STAGES, BN>
//
// What: y[m0 .. m0 + 8 NT, n0 .. n0 + BN) with mma.sp::ordered_metadata
// m16n8k32 (f32 accumulate). The WEIGHT is the sparse A operand (16 output
// features x 32 K per instruction, stored compressed 16 x 16 exactly like
// our values rows), x is the dense B operand (32 K x 8 tokens), so M = 1..16
// costs one or two mma per 16 x 32 weight tile and no CUDA-core math.
//
// Fragments (PTX ISA "sparse mma.m16n8k32 .f16/.bf16"; g = lane / 4,
// t = lane % 4):
//   A  reg0 = compressed (row g,   cols 2t, 2t+1)  = group t     of row g
//      reg1 = compressed (row g+8, cols 2t, 2t+1)
//      reg2 = compressed (row g,   cols 8+2t, +1)  = group 4 + t of row g
//      reg3 = compressed (row g+8, cols 8+2t, +1)
//      = ldmatrix.x4 over the compressed 16 x 16 tile, matrices ordered
//        (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
//   B  reg i = x[token g][k0 + 8i + 2t, +1] = ldmatrix.x4 (non-transposed)
//        over x[8 tokens][32 K] row-major, matrix i = K columns 8i..8i+7.
//   E  sparsity selector 0: lanes t = 0, 1 supply metadata; lane t covers K
//      16t..16t+15 (4 groups, 16 bits) of rows g (low half) and g+8 (high
//      half). Our meta word for (row, 32-K step) is 4 bytes little-endian =
//      (groups 0-3 in bits 0-15, groups 4-7 in bits 16-31), so
//      E = prmt(word[g], word[g+8], t odd ? 0x7632 : 0x5410): no reordering
//      of bits, only of halves.
//   D  d0,d1 = (row g, tokens 2t, 2t+1); d2,d3 = (row g+8, tokens 2t, 2t+1).
// ::ordered_metadata requires pos0 < pos1 in each nibble, which compress24
// guarantees (decompress24 rejects anything else). The GEMV does not
// re-validate meta (that would need a sync); meta not made by compress24
// gives an undefined result on this path.
//
// Pipeline: a block (BN / 16 warps, 16 weight rows each; BN = 64 or 128)
// walks K in chunks of KC = 128 through a STAGES-deep cp.async ring in shared
// memory: per chunk BN rows x 128 B of values, BN x 16 B of meta and
// 8 NT x 256 B of x. Rows of the ring are padded by 16 B so every ldmatrix
// phase (8 rows x 16 B) hits 8 distinct bank groups. Rows past N load row
// N-1 instead, so every metadata word the tensor cores see is a valid one;
// x rows past M are not loaded (see stage_chunk). Neither result is stored.
// A K tail (K % 128 != 0, K % 32 == 0) is handled by loading and issuing
// only the valid 32-K steps of the last chunk.
//
// Memory: values, meta via cp.async.cg (L2 only, each byte once per M tile);
// x via cp.async.cg (L2 hits: x is tiny and every block reads it).
// Launch: grid (ceil(N / BN), min(ceil(M / (8 NT)), 65535), splits), block
// 2 BN, dynamic shared memory mma_smem_bytes<NT, STAGES, BN>(); with splits
// > 1 block z sums chunks [z cps, z cps + cps) into part[z] (fp32, no bias)
// and sparse24_splitk_reduce_kernel finishes (sparse24.cu picks BN, STAGES
// and the split).
// Requires: sm_80+, K % 32 == 0, values / x 16-B aligned, meta 4-B aligned.
constexpr int kMmaKC = 128;  // logical K per pipeline stage
constexpr int kMmaSA = kMmaKC / 2 + 8;   // values row stride in smem (elements)
constexpr int kMmaSX = kMmaKC + 8;       // x row stride in smem (elements)
// Meta row stride in smem (32-bit words). M16 (K % 128 == 0): a row's 16 bytes
// of a chunk are copied as one 16-byte unit, so rows sit 16 bytes apart (the
// fragment reads, rows g = 0..7 at words 4g + ks, stay conflict-free);
// otherwise four 4-byte copies per row into rows padded to 5 words.
template <bool M16>
constexpr int mma_meta_stride() {
  return M16 ? kMmaKC / 32 : kMmaKC / 32 + 1;
}

// BN weight rows per block (BN / 16 warps, 2 BN threads).
template <int NT, int BN, bool M16 = false>
constexpr int mma_stage_bytes() {
  return BN * kMmaSA * 2 + 8 * NT * kMmaSX * 2 + BN * mma_meta_stride<M16>() * 4;
}
template <int NT, int STAGES, int BN, bool M16 = false>
constexpr int mma_smem_bytes() {
  return STAGES * mma_stage_bytes<NT, BN, M16>();
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async4(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

template <typename T> struct MmaSp;
template <> struct MmaSp<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[4], uint32_t e) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
          "r"(b[3]), "r"(e));
#else
    __trap();  // the host never launches this path below sm_80
#endif
  }
};
template <> struct MmaSp<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[4], uint32_t e) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
          "r"(b[3]), "r"(e));
#else
    __trap();
#endif
  }
};

// One K chunk [kbase, kbase + min(KC, K - kbase)) of a 2:4 mma kernel's
// operands into a pipeline stage by its TH threads (cp.async): the
// compressed values (BN rows; a 16-byte piece holds EP kept elements = 2 EP
// of K), the metadata (BN rows, one 32-bit word per 32 K) and the activation
// (MT rows, 16-byte pieces of EP elements). EP = 8 for fp16/bf16, 16 for
// int8. Weight rows past N re-read row N - 1 (valid metadata for the tensor
// cores); activation rows past M are not loaded at all: their shared-memory
// rows hold stale bytes that only reach output columns (tokens) >= M, which
// are never stored. (Loading row M - 1 in their place, as before 2026-12-02d,
// sent up to 8 copies of each x line request to the same L2 lines from every
// block: the int8 kernel at 28672x8192 took 66.0 / 59.3 / 51.9 us at M = 2 /
// 4 / 8, the bf16 one 95.3 / 84.4 us at M = 4 / 8.) The chunk's K extent is a
// multiple of 32.
// Word offset of weight row `row`'s metadata in a stage: row * SM, or with a
// half-tile pad HP > 0 (the int8 kernel's 16-byte-unit layout) rows 8..15 of
// every 16-row warp tile shifted by HP words, so the 128-bit reads of rows g
// and g + 8 by one quarter-warp land in distinct banks (see
// sparse24_int8_mma_kernel).
template <int SM, int HP>
__device__ __forceinline__ int meta_row_off(int row) {
  if constexpr (HP == 0) {
    return row * SM;
  } else {
    return (row >> 4) * (16 * SM + 2 * HP) + ((row >> 3) & 1) * (8 * SM + HP) + (row & 7) * SM;
  }
}

template <int EP, int BN, int KC, int MT, int SA, int SM, int SX, int TH = 128, bool M16 = false,
          int HP = 0, typename SAT, typename SXT, typename VT, typename XT>
__device__ __forceinline__ void stage_chunk(SAT* As, SXT* Xs, uint32_t* Ms, const VT* values,
                                            const uint32_t* meta32, const XT* x, int tid, int n0,
                                            int N, int m0, int M, int K, int64_t vstride,
                                            int64_t mwords, int kbase) {
  const int kv = min(KC, K - kbase);
#pragma unroll
  for (int i = 0; i < BN * (KC / (2 * EP)) / TH; ++i) {
    const int p = tid + TH * i;
    const int row = p / (KC / (2 * EP)), col = p % (KC / (2 * EP));
    if (col * 2 * EP < kv) {
      const int n = min(n0 + row, N - 1);
      cp_async16(As + row * SA + col * EP, values + n * vstride + kbase / 2 + col * EP);
    }
  }
  if constexpr (M16) {
    // One 16-byte copy per row and 128 K (K % 128 == 0: every row's piece is
    // 16-byte aligned; a chunk's K extent is a multiple of 128); four 4-byte
    // copies into one 32-byte sector were 35 % of the kernel's L2 requests
    // (Nsight Compute, 2026-12-02c call 1). H200, bf16, us, 16-byte / 4-byte
    // copies, two pairs (call 6): 28672x8192 M = 8 84.4, 84.6 / 86.0, 86.2,
    // M = 16 95.9, 94.8 / 100.5, 99.6; 14336x4096 M = 8 24.6, 24.6 / 26.6,
    // 26.6 (M = 16 level).
    constexpr int U = KC / 128;  // 16-byte units per row and chunk
    static_assert(KC % 128 == 0 && SM % 4 == 0 && SM >= KC / 32 && HP % 4 == 0,
                  "16-byte meta units per row");
#pragma unroll
    for (int i = 0; i < (BN * U + TH - 1) / TH; ++i) {
      const int p = tid + TH * i;
      if (p < BN * U) {
        const int row = p / U, u = p % U;
        if (U == 1 || u * 128 < kv) {
          const int n = min(n0 + row, N - 1);
          cp_async16(Ms + meta_row_off<SM, HP>(row) + 4 * u, meta32 + n * mwords + kbase / 32 + 4 * u);
        }
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < BN * (KC / 32) / TH; ++i) {
      const int p = tid + TH * i;
      const int row = p / (KC / 32), w = p % (KC / 32);
      if (w * 32 < kv) {
        const int n = min(n0 + row, N - 1);
        cp_async4(Ms + row * SM + w, meta32 + n * mwords + kbase / 32 + w);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < (MT * (KC / EP) + TH - 1) / TH; ++i) {
    const int p = tid + TH * i;
    if (p < MT * (KC / EP)) {
      const int row = p / (KC / EP), col = p % (KC / EP);
      if (col * EP < kv && m0 + row < M) {
        const int64_t m = m0 + row;
        cp_async16(Xs + row * SX + col * EP, x + m * K + kbase + col * EP);
      }
    }
  }
}

template <typename T, int NT, int STAGES, int BN, bool M16 = false>
__global__ void __launch_bounds__(2 * BN, BN == 64 ? 4 : 2) sparse24_gemv_mma_kernel(
    const T* __restrict__ x, const T* __restrict__ values, const uint8_t* __restrict__ meta,
    const T* __restrict__ bias, T* __restrict__ y, int M, int N, int K, int cps,
    float* __restrict__ part) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // cp.async / mma.sp: the host launches this kernel on sm_80+ only
#else
  using H = Half2Traits<T>;
  constexpr int KC = kMmaKC, SA = kMmaSA, SM = mma_meta_stride<M16>(), SX = kMmaSX;
  constexpr int MT = 8 * NT;
  constexpr int A_BYTES = BN * SA * 2, X_BYTES = MT * SX * 2;
  extern __shared__ __align__(16) unsigned char smem[];
  auto stage_a = [&](int s) {
    return reinterpret_cast<T*>(smem + s * mma_stage_bytes<NT, BN, M16>());
  };
  auto stage_x = [&](int s) {
    return reinterpret_cast<T*>(smem + s * mma_stage_bytes<NT, BN, M16>() + A_BYTES);
  };
  auto stage_m = [&](int s) {
    return reinterpret_cast<uint32_t*>(smem + s * mma_stage_bytes<NT, BN, M16>() + A_BYTES +
                                       X_BYTES);
  };

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * BN;
  // K split across blocks (part != null): blockIdx.z takes chunks [z cps, z cps + cps).
  const int c_first = static_cast<int>(blockIdx.z) * cps;
  const int nchunks = min(cps, (K + KC - 1) / KC - c_first);  // >= 1 (host)
  const int64_t vstride = K / 2, mwords = K / 32;  // per row: values, meta 32-bit words
  const uint32_t* meta32 = reinterpret_cast<const uint32_t*>(meta);

  // ldmatrix row addresses (lane -> one 16-byte row of one 8x8 matrix).
  const int a_row = warp * 16 + (lane & 7) + 8 * ((lane >> 3) & 1);
  const int a_col = 8 * (lane >> 4);  // compressed column: 0 or 8
  const int b_row = lane & 7;         // token within an 8-token tile
  const int b_col = 8 * (lane >> 3);  // K column: 0, 8, 16, 24
  const uint32_t e_sel = (t & 1) ? 0x7632u : 0x5410u;

  const int mtiles = (M + MT - 1) / MT;
  for (int mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
    const int m0 = mt * MT;

    auto load_stage = [&](int s, int chunk) {
      stage_chunk<8, BN, KC, MT, SA, SM, SX, 2 * BN, M16>(stage_a(s), stage_x(s), stage_m(s),
                                                          values, meta32, x, tid, n0, N, m0, M,
                                                          K, vstride, mwords, chunk * KC);
    };

    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;

    // Every warp must be done reading the ring before the next M tile (if
    // any) refills it.
    __syncthreads();
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nchunks) load_stage(s, c_first + s);
      cp_async_commit();
    }

    for (int c = 0; c < nchunks; ++c) {
      // Chunk c has landed once at most STAGES - 2 newer groups are pending;
      // the barrier also tells every thread that chunk c - 1 is consumed, so
      // its stage may be refilled below.
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      {
        const int cn = c + STAGES - 1;
        if (cn < nchunks) load_stage(cn % STAGES, c_first + cn);
        cp_async_commit();  // possibly empty: keeps the group count uniform
      }
      const int s = c % STAGES;
      const T* As = stage_a(s);
      const T* Xs = stage_x(s);
      const uint32_t* Ms = stage_m(s);
      const int ksteps = min(KC, K - (c_first + c) * KC) / 32;
#pragma unroll
      for (int ks = 0; ks < KC / 32; ++ks) {
        if (ks < ksteps) {
          uint32_t a[4];
          ldmatrix_x4(a, As + a_row * SA + ks * 16 + a_col);
          const uint32_t w_lo = Ms[(warp * 16 + g) * SM + ks];
          const uint32_t w_hi = Ms[(warp * 16 + g + 8) * SM + ks];
          const uint32_t e = prmt(w_lo, w_hi, e_sel);
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            uint32_t b[4];
            ldmatrix_x4(b, Xs + (8 * j + b_row) * SX + ks * 32 + b_col);
            MmaSp<T>::run(acc[j], a, b, e);
          }
        }
      }
    }
    cp_async_wait<0>();

    // Epilogue: d0,d1 -> row g, tokens 2t, 2t+1; d2,d3 -> row g+8. A K split
    // stores its raw fp32 sums to part[z][m][n] (sparse24_splitk_reduce_kernel
    // adds the splits in z order, then the bias).
    float* const pz =
        part != nullptr ? part + static_cast<int64_t>(blockIdx.z) * M * N : nullptr;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int n = n0 + warp * 16 + g + 8 * half;
      if (n < N) {
        const float b = bias != nullptr && pz == nullptr ? to_float(bias[n]) : 0.0f;
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int m = m0 + 8 * j + 2 * t + i;
            if (m < M) {
              const int64_t o = static_cast<int64_t>(m) * N + n;
              if (pz != nullptr)
                pz[o] = acc[j][2 * half + i];
              else
                y[o] = H::from_float(acc[j][2 * half + i] + b);
            }
          }
      }
    }
  }
#endif
}

// The K split's second pass: y[m, n] = round(sum over z = 0, 1, ... of
// part[z][m][n] + bias[n]), one thread per output, a fixed order
// (deterministic). Launch: ceil(M N / 256) blocks of 256.
template <typename T>
__global__ void sparse24_splitk_reduce_kernel(const float* __restrict__ part, int splits,
                                              const T* __restrict__ bias, T* __restrict__ y,
                                              int M, int N) {
  using H = Half2Traits<T>;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t outs = static_cast<int64_t>(M) * N;
  if (o >= outs) return;
  float v = part[o];
  for (int z = 1; z < splits; ++z) v += part[z * outs + o];
  if (bias != nullptr) v += to_float(bias[o % N]);
  y[o] = H::from_float(v);
}

// ==================================================== sparse int8 GEMM ===
// y[m, n] = a_scale[m] * w_scale[n] * (acc[m, n] - a_zero[m] * colsum[n])
//           + bias[n],  acc = sum_k a_q[m, k] * W[n, k]  (exact int32)
// with W the 2:4 int8 weight in compress24's form, and int8_matmul's
// epilogue step for step (csrc/cpu/int8_cpu.cpp): c = acc - z * colsum in
// int64, s = a_scale * w_scale, y = float(c) * s, y = y + bias, each an
// explicitly rounded fp32 operation, then one rounding to the output type.
// The integer core is exact, so results are bit-identical to the CPU op and
// to int8_matmul on the decompressed weight.
struct Int8Epilogue {
  const float* a_scale;
  int a_scale_step;  // 0 when one element broadcasts
  const int32_t* a_zero;  // null: symmetric activation
  int a_zero_step;
  const float* w_scale;
  int w_scale_step;
  const int32_t* colsum;  // non-null iff a_zero is
  const float* bias;      // fp32 copy, or null
};

__device__ __forceinline__ void store_out(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_out(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store_out(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <typename OutT>
__device__ __forceinline__ void int8_epilogue(const Int8Epilogue& ep, OutT* y, int M, int N,
                                              int m, int n, int32_t acc) {
  long long c = acc;
  if (ep.a_zero != nullptr)
    c -= static_cast<long long>(ep.a_zero[m * ep.a_zero_step]) * ep.colsum[n];
  const float s = __fmul_rn(ep.a_scale[m * ep.a_scale_step], ep.w_scale[n * ep.w_scale_step]);
  float v = __fmul_rn(__ll2float_rn(c), s);
  if (ep.bias != nullptr) v = __fadd_rn(v, ep.bias[n]);
  store_out(y + static_cast<int64_t>(m) * N + n, v);
}

// ----------------------------------------------------- simt int8 ------
// sparse24_int8_simt_kernel: CUDA cores, any sm, any K % 4 == 0 (the
// fallback for K % 32 != 0). A warp owns one weight row and 8 rows of a_q;
// lanes take groups g = lane, lane + 32, ...: two int8 kept values, the
// nibble, and for each a_q row two byte loads at 4g + pos0, 4g + pos1.
// int32 lane sums, xor-butterfly (exact: integer), lane 0 runs the epilogue.
// Launch: grid (ceil(N / 8), min(ceil(M / 8), 65535)), block 256.
template <typename OutT>
__global__ void __launch_bounds__(256) sparse24_int8_simt_kernel(
    const int8_t* __restrict__ a_q, const int8_t* __restrict__ values,
    const uint8_t* __restrict__ meta, Int8Epilogue ep, OutT* __restrict__ y, int M, int N, int K) {
  constexpr int MT = 8;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int n = blockIdx.x * 8 + warp;
  if (n >= N) return;
  const int G = K / 4;
  const int8_t* vrow = values + static_cast<int64_t>(n) * (K / 2);
  const uint8_t* mrow = meta + static_cast<int64_t>(n) * ((K + 7) / 8);
  const int mtiles = (M + MT - 1) / MT;
  for (int mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
    const int m0 = mt * MT, mv = min(MT, M - m0);
    int32_t acc[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[m] = 0;
    for (int g = lane; g < G; g += 32) {
      const uint32_t nib = (mrow[g >> 1] >> (4 * (g & 1))) & 0xFu;
      const int k0 = 4 * g + (nib & 3), k1 = 4 * g + (nib >> 2);
      const int32_t v0 = vrow[2 * g], v1 = vrow[2 * g + 1];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m < mv) {
          const int8_t* ar = a_q + static_cast<int64_t>(m0 + m) * K;
          acc[m] += v0 * ar[k0] + v1 * ar[k1];
        }
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc[m] += __shfl_xor_sync(0xFFFFFFFFu, acc[m], o);
    if (lane == 0) {
#pragma unroll
      for (int m = 0; m < MT; ++m)
        if (m < mv) int8_epilogue(ep, y, M, N, m0 + m, n, acc[m]);
    }
  }
}

// ----------------------------------------------------- gemv int8 ------
// sparse24_int8_gemv_kernel<OutT, MT, RW>: the decode path of
// sparse24_int8_matmul (path "gemv": CUDA cores, dp4a; K % 32 == 0, values
// and a_q 16-byte aligned, meta 4-byte aligned: the host copies misaligned
// views). A warp owns RW weight rows and MT rows of a_q (further M tiles in
// grid.y). Lanes walk K in steps of 32: 16 kept int8 values (one 16-byte
// load) and 8 groups (one 32-bit meta word); lane l takes steps l, l + 32,
// ..., so one warp load is 512 contiguous bytes of a row, and the next step
// is in registers before the current one is consumed (L1::no_allocate: each
// weight byte is read from DRAM once). a_q (M x K bytes, shared by every
// warp) goes through L1, two 16-byte loads per step and row.
// Per pair of groups (8 K; 4 kept values = one 32-bit word of the value
// load) one prmt picks the 4 matching a_q bytes out of the pair's 8: the
// selector nibbles are the first group's positions p0, p1 and the second
// group's q0 + 4, q1 + 4, spread out of the pair's meta byte once per (row,
// pair) and reused for all MT rows of a_q; one dp4a then multiplies and adds
// the 4 products (exact int32). The lane sums meet in a fixed xor butterfly
// (integers: exact), then lane l < RW * MT runs int8_matmul's epilogue
// (int8_epilogue) for one (row, a_q row) output, so the result is
// bit-identical to every other path.
// Cost per 16-byte value load at M = 1: ~14 selector ops per row, 4 prmt +
// 4 dp4a + 2 loads per a_q row, ~6 of loop and address work: ~30 issue slots
// for 20 bytes of weight (values + meta), under a quarter of an SM's issue
// rate at the HBM rate; each extra a_q row adds ~10.
// Launch: grid (ceil(N / (8 RW)), min(ceil(M / MT), 65535)), block 256.
template <typename OutT, int MT, int RW>
__global__ void __launch_bounds__(256) sparse24_int8_gemv_kernel(
    const int8_t* __restrict__ a_q, const int8_t* __restrict__ values,
    const uint8_t* __restrict__ meta, Int8Epilogue ep, OutT* __restrict__ y, int M, int N, int K,
    int w_early) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int row0 = (blockIdx.x * 8 + warp) * RW;
  pdl_launch_dependents();  // common/pdl.h: the next decode kernel may launch
  if (row0 >= N) return;  // no block-wide barrier below: a whole warp may leave
  const int nsteps = K / 32;
  const int8_t* vrow[RW];
  const uint8_t* mrow[RW];
#pragma unroll
  for (int r = 0; r < RW; ++r) {
    const int n = min(row0 + r, N - 1);  // rows past N re-read row N - 1, never stored
    vrow[r] = values + static_cast<int64_t>(n) * (K / 2);
    mrow[r] = meta + static_cast<int64_t>(n) * (K / 8);
  }
  auto load_step = [&](int c, uint4 (&v)[RW], uint32_t (&m)[RW]) {
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      v[r] = ld_stream_v4(vrow[r] + 16 * c);
      m[r] = ld_stream_u32(mrow[r] + 4 * c);
    }
  };
  const int mtiles = (M + MT - 1) / MT;
  // static_weight (common/pdl.h): the first M tile's first step of values and meta is loaded
  // before the wait (the weight was written long before this kernel's predecessor ran).
  uint4 cv[RW];
  uint32_t cm[RW];
  const bool early = w_early && lane < nsteps && static_cast<int>(blockIdx.y) < mtiles;
  if (early) load_step(lane, cv, cm);
  pdl_wait();  // a_q, the epilogue's scales, the output after the predecessor
  // Spreads the four 2-bit positions of a meta byte (in each 16-bit half of
  // x) into the four selector nibbles of that half, + 4 on the upper two.
  auto spread = [](uint32_t x) {
    x = (x | (x << 4)) & 0x0F0F0F0Fu;
    x = (x | (x << 2)) & 0x33333333u;
    return x | 0x44004400u;
  };

  for (int mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
    const int m0 = mt * MT;
    const int mv = min(MT, M - m0);
    int32_t acc[RW][MT];
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
      for (int m = 0; m < MT; ++m) acc[r][m] = 0;

    if (lane < nsteps && !(early && mt == static_cast<int>(blockIdx.y))) load_step(lane, cv, cm);
    for (int c = lane; c < nsteps; c += 32) {
      uint4 nv[RW];
      uint32_t nm[RW];
      if (c + 32 < nsteps) load_step(c + 32, nv, nm);
      // Selector of pair i (meta byte i) of each row, in the low 16 bits.
      uint32_t sel[RW][4];
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const uint32_t lo = spread(prmt(cm[r], 0u, 0x4140u));  // bytes 0, 1 -> halves
        const uint32_t hi = spread(prmt(cm[r], 0u, 0x4342u));  // bytes 2, 3
        sel[r][0] = lo;
        sel[r][1] = lo >> 16;
        sel[r][2] = hi;
        sel[r][3] = hi >> 16;
      }
      const int k = c * 32;
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m < mv) {
          const int8_t* xp = a_q + static_cast<int64_t>(m0 + m) * K + k;
          const uint4 x0 = ld_cached_v4(xp);
          const uint4 x1 = ld_cached_v4(xp + 16);
          const uint32_t xw[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
          for (int r = 0; r < RW; ++r) {
            const uint32_t vw[4] = {cv[r].x, cv[r].y, cv[r].z, cv[r].w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
              acc[r][m] = __dp4a(static_cast<int>(vw[i]),
                                 static_cast<int>(prmt(xw[2 * i], xw[2 * i + 1], sel[r][i])), acc[r][m]);
          }
        }
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        cv[r] = nv[r];
        cm[r] = nm[r];
      }
    }

    warp_sum_all(acc);

    // Lane l < RW * MT (after the butterfly every lane holds every sum) runs
    // the epilogue of output (r, m) = (l / MT, l % MT): one element per lane.
    {
      const int r = lane / MT, m = lane % MT;
      int32_t v = 0;
#pragma unroll
      for (int rr = 0; rr < RW; ++rr)
#pragma unroll
        for (int mm = 0; mm < MT; ++mm)
          if (rr == r && mm == m) v = acc[rr][mm];
      if (lane < RW * MT && m < mv && row0 + r < N) int8_epilogue(ep, y, M, N, m0 + m, row0 + r, v);
    }
  }
}

// ------------------------------------------------------ mma int8 ------
// sparse24_int8_mma_kernel<OutT, NT, STAGES, BN, KC, M16>
//
// mma.sp::ordered_metadata m16n8k32 .s8 (s32 accumulate): the int8 weight is
// the sparse A operand (16 features x 32 K per instruction, compressed
// 16 x 16 bytes), a_q the dense B operand (32 K x 8 tokens).
// Fragments (g = lane / 4, t = lane % 4; PTX ISA "sparse mma.m16n8k32 with
// .u8/.s8", B/C/D as dense mma.m16n8k32 .s8):
//   A  reg0 = compressed bytes 4t..4t+3 of row g (groups 2t, 2t+1, logical
//      K 8t..8t+7), reg1 = the same of row g+8: ldmatrix.x2 over the
//      16 x 16-byte tile (b16 view), matrices (rows 0-7), (rows 8-15).
//   B  reg0 = a_q[token g][k0 + 4t .. +3], reg1 = a_q[g][k0 + 16 + 4t .. +3]:
//      ldmatrix.x2 over a_q[8 tokens][32 bytes], matrices K bytes 0-15, 16-31.
//   D  d0,d1 = (row g, tokens 2t, 2t+1); d2,d3 = (row g+8, tokens 2t, 2t+1).
//   E  NOT the f16/bf16 distribution. For 8-bit types one lane's 32-bit
//      metadata register holds ONE row's 32 K (8 nibbles, lowest K in bits
//      0-3): with sparsity selector 0, lane t = 0 of each quad supplies row g
//      and lane t = 1 row g+8. That is exactly our meta word of (row, 32-K
//      step), so E = word[g + 8 (t & 1)] with no bit or half movement (lanes
//      t = 2, 3 carry the same words; selector 0 ignores them). Source: the
//      m16n8k64 8-bit metadata layout is "lane t: row g + 8 (t % 2), K half
//      t / 2, 32 K per register" in two independent GPU-tested codebases
//      (CUTLASS cute SM120 sparse ELayout, Stride<<_8,_512,_1>,_16>;
//      TileLang's int8 mma.sp metadata loader), and k32 is that layout's
//      first K half (its A/B registers are k64's first two). The f16
//      distribution (lane t = K 16t..16t+15 of rows g and g+8, in halves),
//      used here at first, passed no int8 test on the H200: every output was
//      a plausible but wrongly paired sum. A lane-by-lane emulation of this
//      kernel against both layouts reproduces that failure exactly.
// Tiles: a block is BN / 16 warps x 16 weight rows (BN = 64 or 128, 2 BN
// threads) by 8 NT tokens; each warp reuses one A fragment for NT mma per
// 32-K step. K runs through a STAGES-deep cp.async ring of KC-K chunks (KC =
// 128 or 256: BN rows x KC / 2 bytes of values, BN x KC / 8 bytes of meta,
// 8 NT x KC bytes of a_q per stage), value and a_q rows padded by 16 B so
// ldmatrix phases are conflict-free. Metadata: M16 (K % 128 == 0) copies a
// row's KC / 8 bytes as 16-byte units into rows KC / 8 bytes apart, rows
// 8..15 of each warp tile shifted by a pad (i8_hp), and each lane reads its
// row's words with one 128-bit load per 128 K (conflict-free); otherwise
// 4-byte copies into rows padded by one word, one 32-bit read per 32-K step
// (16 distinct banks). (The first M16 form, rows 32 B apart with no pad and
// a 32-bit read per step, was a 4-way conflict: Nsight Compute, 2026-12-02d
// call 3, 28672x8192 M = 8, 51 % of shared wavefronts excessive, 2.8 of 9.05
// cycles between issues waiting on shared memory.) Out-of-range rows / tokens load the last valid one (results never
// stored); the K tail (K % KC, a multiple of 32) issues only the valid 32-K
// steps. K split across blocks (part != null): block z sums chunks
// [z cps, z cps + cps) and stores its exact int32 sums to part[z][m][n];
// sparse24_int8_splitk_reduce_kernel adds them (integers: any order is
// exact) and runs the epilogue, so every split is bit-identical.
// Launch: grid (ceil(N / BN), min(ceil(M / (8 NT)), 65535), splits), block
// 2 BN, dynamic shared memory i8_smem_bytes<NT, STAGES, BN, KC, M16>().
// Requires: sm_80+, K % 32 == 0, operands 16-B aligned (meta 4-B; 16-B and
// K % 128 == 0 for M16).
template <int KC>
constexpr int i8_sa() { return KC / 2 + 16; }  // values row stride in smem (bytes)
template <int KC>
constexpr int i8_sx() { return KC + 16; }      // a_q row stride (bytes)
template <int KC, bool M16>
constexpr int i8_sm() { return M16 ? KC / 32 : KC / 32 + 1; }  // meta row stride (words)
// M16: the half-tile pad of meta_row_off (words). A quarter-warp's 128-bit
// reads cover rows r, r + 8, r + 1, r + 9 (lanes t = 0..3 of g = r, r + 1):
// with rows SM = KC / 32 words apart, rows r and r + 8 would share banks
// (8 SM = 0 mod 32); shifting rows 8..15 by HP words (KC = 256: 4; KC = 128:
// 16) puts the four 16-byte pieces in four distinct groups of 4 banks.
template <int KC, bool M16>
constexpr int i8_hp() { return M16 ? (KC == 256 ? 4 : 16) : 0; }

template <int NT, int BN, int KC, bool M16>
constexpr int i8_stage_bytes() {
  return BN * i8_sa<KC>() + 8 * NT * i8_sx<KC>() +
         (BN / 16) * (16 * i8_sm<KC, M16>() + 2 * i8_hp<KC, M16>()) * 4;
}
template <int NT, int STAGES, int BN, int KC, bool M16 = false>
constexpr int i8_smem_bytes() {
  return STAGES * i8_stage_bytes<NT, BN, KC, M16>();
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_sp_s8(int32_t (&d)[4], const uint32_t (&a)[2],
                                          const uint32_t (&b)[2], uint32_t e) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6, %7}, {%0, %1, %2, %3}, %8, 0x0;"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(e));
#else
  __trap();
#endif
}

template <typename OutT, int NT, int STAGES, int BN, int KC, bool M16 = false>
__global__ void __launch_bounds__(2 * BN, BN == 64 ? 4 : 2) sparse24_int8_mma_kernel(
    const int8_t* __restrict__ a_q, const int8_t* __restrict__ values,
    const uint8_t* __restrict__ meta, Int8Epilogue ep, OutT* __restrict__ y, int M, int N, int K,
    int cps, int32_t* __restrict__ part) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // the host launches this kernel on sm_80+ only
#else
  constexpr int SA = i8_sa<KC>(), SM = i8_sm<KC, M16>(), SX = i8_sx<KC>(), HP = i8_hp<KC, M16>();
  static_assert(!M16 || KC == 128 || KC == 256, "i8_hp covers 128- and 256-K chunks");
  constexpr int MT = 8 * NT;
  constexpr int A_BYTES = BN * SA, X_BYTES = MT * SX;
  constexpr int STAGE = i8_stage_bytes<NT, BN, KC, M16>();
  extern __shared__ __align__(16) unsigned char smem[];
  auto stage_a = [&](int s) { return smem + s * STAGE; };
  auto stage_x = [&](int s) { return smem + s * STAGE + A_BYTES; };
  auto stage_m = [&](int s) {
    return reinterpret_cast<uint32_t*>(smem + s * STAGE + A_BYTES + X_BYTES);
  };

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * BN;
  const int c_first = static_cast<int>(blockIdx.z) * cps;
  const int nchunks = min(cps, (K + KC - 1) / KC - c_first);  // >= 1 (host)
  const int64_t vstride = K / 2, mwords = K / 32;
  const uint32_t* meta32 = reinterpret_cast<const uint32_t*>(meta);

  const int a_row = warp * 16 + (lane & 15);          // ldmatrix.x2: lanes 0-15 address
  const int b_row = lane & 7;                         // token within an 8-token tile
  const int b_col = 16 * ((lane >> 3) & 1);           // K byte 0 or 16 of the step
  // Metadata row of this lane: g for t even, g + 8 for t odd (8-bit rule);
  // lanes t and t + 2 share a word (broadcast).
  const int e_row = warp * 16 + g + 8 * (t & 1);

  const int mtiles = (M + MT - 1) / MT;
  for (int mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
    const int m0 = mt * MT;

    auto load_stage = [&](int s, int chunk) {
      stage_chunk<16, BN, KC, MT, SA, SM, SX, 2 * BN, M16, HP>(stage_a(s), stage_x(s), stage_m(s),
                                                            values, meta32, a_q, tid, n0, N, m0,
                                                            M, K, vstride, mwords, chunk * KC);
    };

    int32_t acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i] = 0;

    __syncthreads();  // the previous M tile is done reading the ring
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nchunks) load_stage(s, c_first + s);
      cp_async_commit();
    }
    for (int c = 0; c < nchunks; ++c) {
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      {
        const int cn = c + STAGES - 1;
        if (cn < nchunks) load_stage(cn % STAGES, c_first + cn);
        cp_async_commit();
      }
      const int s = c % STAGES;
      const unsigned char* As = stage_a(s);
      const unsigned char* Xs = stage_x(s);
      const uint32_t* Ms = stage_m(s);
      const int ksteps = min(KC, K - (c_first + c) * KC) / 32;
      // This lane's metadata words of the chunk (one row's 32 K each, see E
      // above): M16, 128-bit reads of the row's 16-byte units up front
      // (conflict-free, i8_hp); otherwise one 32-bit read per step from rows
      // padded to SM = KC / 32 + 1 words (16 distinct banks).
      uint32_t ew[KC / 32];
      if constexpr (M16) {
#pragma unroll
        for (int u = 0; u < KC / 128; ++u) {
          const uint4 q = *reinterpret_cast<const uint4*>(Ms + meta_row_off<SM, HP>(e_row) + 4 * u);
          ew[4 * u] = q.x;
          ew[4 * u + 1] = q.y;
          ew[4 * u + 2] = q.z;
          ew[4 * u + 3] = q.w;
        }
      }
#pragma unroll
      for (int ks = 0; ks < KC / 32; ++ks) {
        if (ks < ksteps) {
          uint32_t a[2];
          ldmatrix_x2(a, As + a_row * SA + ks * 16);
          const uint32_t e = M16 ? ew[ks] : Ms[e_row * SM + ks];
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            uint32_t b[2];
            ldmatrix_x2(b, Xs + (8 * j + b_row) * SX + ks * 32 + b_col);
            mma_sp_s8(acc[j], a, b, e);
          }
        }
      }
    }
    cp_async_wait<0>();

    int32_t* const pz =
        part != nullptr ? part + static_cast<int64_t>(blockIdx.z) * M * N : nullptr;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int n = n0 + warp * 16 + g + 8 * half;
      if (n < N) {
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int m = m0 + 8 * j + 2 * t + i;
            if (m < M) {
              if (pz != nullptr)
                pz[static_cast<int64_t>(m) * N + n] = acc[j][2 * half + i];
              else
                int8_epilogue(ep, y, M, N, m, n, acc[j][2 * half + i]);
            }
          }
      }
    }
  }
#endif
}

// The int8 K split's second pass: the splits' int32 sums of output (m, n)
// added (exact), then int8_matmul's epilogue. One thread per output; launch
// ceil(M N / 256) blocks of 256.
template <typename OutT>
__global__ void sparse24_int8_splitk_reduce_kernel(const int32_t* __restrict__ part, int splits,
                                                   Int8Epilogue ep, OutT* __restrict__ y, int M,
                                                   int N) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t outs = static_cast<int64_t>(M) * N;
  if (o >= outs) return;
  int32_t v = part[o];
  for (int z = 1; z < splits; ++z) v += part[z * outs + o];
  int8_epilogue(ep, y, M, N, static_cast<int>(o / N), static_cast<int>(o % N), v);
}

}  // namespace sparse24
}  // namespace torchquant
