// Load schedules for the int8 decode GEMV (csrc/int8/int8_kernels.cuh, int8_gemv_kernel),
// timed outside the extension so several can run in one device call.
//
// Every kernel here computes the real thing: y[m, n] = sum_k x[m, k] * w[n, k] in int32 on
// mma.m16n8k32, with the GEMV's block (8 warps, 16 weight rows, 64-byte chunks interleaved
// over the warps, U chunks of loads per lane issued then consumed), its shared-memory reduction
// and a 16-output store per token. What varies is the schedule around the weight stream:
//
//   U          chunks of weight loads in flight per lane (main: 4, or 6 for long rows)
//   pers       a persistent grid (blocks per SM x SMs) looping over the 16-row tiles, against
//              one block per tile (main)
//   cross      (pers only) the first batch of the next tile is issued before the reduction of
//              the current one, so a warp never stops streaming at a tile boundary
//   xs         x staged once per block in shared memory (M = 1 only) and read from there,
//              which frees the activation registers of the loads in flight
//
// Each shape first times a pure read of its weight (read_kernel.cuh: 2 blocks of 16 warps per
// SM, 8 KB in flight per warp, read_floor.cu's best shape). All launches use programmatic
// dependent launch as the extension's GEMV does. Output of every variant is compared with the
// first one's (integer sums: must be identical). Timing as in
// benchmarks/timing.py: weight copies rotated past 3x L2, one CUDA graph, median of 7 replays.
//
// Build: nvcc -O3 -arch=sm_90 -I../../csrc -o int8_gemv_shapes int8_gemv_shapes.cu
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pdl_device.cuh"
#include "graph_timing.cuh"
#include "read_kernel.cuh"
#include "int8/int8_kernels.cuh"

using torchquant::int8::ldg16_cached;
using torchquant::int8::ldg16_stream;
using torchquant::int8::mma_s8_16832;

template <int U, int T8, bool kPers, bool kCross, bool kXs>
__global__ void __launch_bounds__(256, 2)
    gemv_variant(const int8_t* __restrict__ W, const int8_t* __restrict__ X, int M, int N, int K,
                 int32_t* __restrict__ out, int tiles) {
  static_assert(!kXs || T8 == 1, "x in shared memory for the 8-token tile only");
  static_assert(!kCross || kPers, "cross-tile issue needs the persistent loop");
  extern __shared__ uint4 xs[];  // K / 16 groups of x row 0 (kXs)
  __shared__ int32_t red[8][8 * T8][16];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int chunks = K / 64;  // K % 64 == 0 here
  torchquant::pdl_launch_dependents();
  torchquant::pdl_wait();
  if constexpr (kXs) {
    for (int i = tid; i < K / 16; i += 256) xs[i] = ldg16_cached(X + 16 * i, true);
    __syncthreads();
  }
  const int8_t* xrow[T8];
  bool vx[T8];
#pragma unroll
  for (int j = 0; j < T8; ++j) {
    const int m = g + 8 * j;
    vx[j] = m < M;
    xrow[j] = X + (size_t)(vx[j] ? m : 0) * K;
  }
  uint4 wl[U], wh[U], xv[U][T8];
  const int8_t *w_lo = W, *w_hi = W;
  bool v_lo = false, v_hi = false;
  auto rows_of = [&](int tile) {
    const int n0 = tile * 16;
    v_lo = n0 + g < N;
    v_hi = n0 + g + 8 < N;
    w_lo = W + (size_t)(v_lo ? n0 + g : 0) * K;
    w_hi = W + (size_t)(v_hi ? n0 + g + 8 : 0) * K;
  };
  auto issue = [&](int c) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int cc = c + 8 * u;
      const bool in = cc < chunks;
      const int k = (in ? cc : 0) * 64 + t * 16;
      wl[u] = ldg16_stream(w_lo + k, in && v_lo);
      wh[u] = ldg16_stream(w_hi + k, in && v_hi);
      if constexpr (!kXs) {
#pragma unroll
        for (int j = 0; j < T8; ++j) xv[u][j] = ldg16_cached(xrow[j] + k, in && vx[j]);
      }
    }
  };
  int tile = blockIdx.x;
  const int step = kPers ? gridDim.x : tiles;
  bool issued = false;
  for (; tile < tiles; tile += step) {
    if (!issued) rows_of(tile);
    int32_t acc[T8][4];
#pragma unroll
    for (int j = 0; j < T8; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[j][r] = 0;
    for (int c = warp; c < chunks; c += 8 * U) {
      if (!issued) issue(c);  // main's form: load a batch, then consume it
      issued = false;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if constexpr (kXs) {
          const int cc = c + 8 * u;
          xv[u][0] = cc < chunks ? xs[cc * 4 + t] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int j = 0; j < T8; ++j) {
          mma_s8_16832(acc[j], wl[u].x, wh[u].x, wl[u].y, wh[u].y, xv[u][j].x, xv[u][j].y);
          mma_s8_16832(acc[j], wl[u].z, wh[u].z, wl[u].w, wh[u].w, xv[u][j].z, xv[u][j].w);
        }
      }
    }
    const int n0 = tile * 16;
    if constexpr (kCross) {
      if (tile + step < tiles) {
        rows_of(tile + step);
        issue(warp);
        issued = true;
      }
    }
#pragma unroll
    for (int j = 0; j < T8; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) red[warp][8 * j + 2 * t + (r & 1)][g + 8 * (r >> 1)] = acc[j][r];
    __syncthreads();
    for (int idx = tid; idx < 8 * T8 * 16; idx += 256) {
      const int ml = idx >> 4, nl = idx & 15, n = n0 + nl;
      if (ml < M && n < N) {
        int32_t s = 0;
#pragma unroll
        for (int w = 0; w < 8; ++w) s += red[w][ml][nl];
        out[(size_t)ml * N + n] = s;
      }
    }
    if constexpr (kPers) __syncthreads();  // red is reused by the next tile
  }
}

using Fn = void (*)(const int8_t*, const int8_t*, int, int, int, int32_t*, int);

struct Variant {
  const char* name;
  Fn fn;
  bool pers, xs;  // persistent grid; x in dynamic shared memory (K bytes)
};

#define V(U, T8, P, C, XS) \
  Variant { #U "/" #T8 "/" #P #C #XS, gemv_variant<U, T8, P, C, XS>, P, XS }

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  const std::vector<ProbeShape> shapes = probe_setup(argc, argv, 1, prop);
  const int sms = prop.multiProcessorCount;
  // name = U/T8/{pers}{cross}{xs}: 1 = on
  std::vector<Variant> m1 = {
      V(6, 1, false, false, false), V(4, 1, false, false, false), V(8, 1, false, false, true),
      V(6, 1, true, true, false),   V(4, 1, true, true, false),   V(6, 1, false, false, false)};
  std::vector<Variant> m8 = {V(6, 1, false, false, false), V(4, 1, false, false, false),
                             V(3, 1, false, false, false), V(6, 1, true, true, false),
                             V(4, 1, true, true, false),   V(6, 1, false, false, false)};
  std::vector<Variant> m16 = {V(4, 2, false, false, false), V(3, 2, false, false, false),
                              V(3, 2, true, false, false),  V(3, 2, true, true, false),
                              V(4, 2, true, true, false),   V(2, 2, true, true, false),
                              V(2, 2, false, false, false), V(4, 2, false, false, false)};
  const double warm_ms = std::getenv("WARM_MS") ? std::atof(std::getenv("WARM_MS")) : 30.0;
  int32_t* out;
  unsigned* sink;
  CK(cudaMalloc(&out, 16 * 128256 * 4 * 2));
  CK(cudaMalloc(&sink, 64));
  for (const ProbeShape& sh : shapes) {
    const size_t wbytes = (size_t)sh.N * sh.K;
    const size_t copies = std::max<size_t>(4, 3 * (size_t)prop.l2CacheSize / wbytes + 1);
    std::vector<int8_t*> w(copies);
    for (size_t i = 0; i < copies; ++i) {
      CK(cudaMalloc(&w[i], wbytes));
      // deterministic pseudo-random bytes, the same in every copy
      std::vector<int8_t> h(1 << 20);
      for (size_t j = 0; j < h.size(); ++j) h[j] = (int8_t)((j * 2654435761u) >> 13);
      for (size_t o = 0; o < wbytes; o += h.size())
        CK(cudaMemcpy(w[i] + o, h.data(), std::min(h.size(), wbytes - o), cudaMemcpyHostToDevice));
    }
    int8_t* x;
    CK(cudaMalloc(&x, 16 * (size_t)sh.K));
    {
      std::vector<int8_t> h(16 * (size_t)sh.K);
      for (size_t j = 0; j < h.size(); ++j) h[j] = (int8_t)((j * 40503u + 7) >> 5);
      CK(cudaMemcpy(x, h.data(), h.size(), cudaMemcpyHostToDevice));
    }
    const int tiles = (sh.N + 15) / 16;
    const int reps = (int)std::max<size_t>(copies, 8);
    {
      const size_t n16 = wbytes / 16;
      double us = graph_median_us(reps, [&](int r, cudaStream_t s) {
        const uint4* p = reinterpret_cast<const uint4*>(w[r % copies]);
        size_t n = n16;
        void* args[] = {(void*)&p, (void*)&n, (void*)&sink};
        launch_ex((const void*)read_kernel<8, 2, true>, dim3(2 * sms), dim3(512), 0, s, args, true);
      }, warm_ms);
      std::printf("\n== %dx%d (%.2f MB, %zu copies): pure read %.2f us (%.3f TB/s)\n", sh.N, sh.K,
                  wbytes / 1e6, copies, us, wbytes / us * 1e-6);
    }
    for (int M : {1, 8, 16}) {
      const auto& vars = M == 1 ? m1 : M <= 8 ? m8 : m16;
      std::vector<int32_t> ref;
      for (const Variant& v : vars) {
        const size_t smem = v.xs ? (size_t)sh.K : 0;
        CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, v.fn, 256, smem));
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, v.fn));
        const int grid = v.pers ? std::min(tiles, bps * sms) : tiles;
        auto one = [&](int r, cudaStream_t s) {
          const int8_t* wp = w[r % copies];
          int Mv = M, Nv = sh.N, Kv = sh.K, tv = tiles;
          void* args[] = {(void*)&wp, (void*)&x, (void*)&Mv, (void*)&Nv, (void*)&Kv,
                          (void*)&out, (void*)&tv};
          launch_ex((const void*)v.fn, dim3(grid), dim3(256), smem, s, args, true);
        };
        CK(cudaMemset(out, 0xff, (size_t)M * sh.N * 4));
        one(0, 0);
        CK(cudaDeviceSynchronize());
        std::vector<int32_t> got((size_t)M * sh.N);
        CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
        const char* check = "ref";
        if (ref.empty())
          ref = got;
        else
          check = std::memcmp(ref.data(), got.data(), got.size() * 4) == 0 ? "same" : "DIFFERENT";
        const double us = graph_median_us(reps, one, warm_ms);
        std::printf("M=%-2d %-14s regs %3d  %d blocks/SM  grid %5d  %8.2f us  %6.3f TB/s  %s\n", M,
                    v.name, fa.numRegs, bps, grid, us, wbytes / us * 1e-6, check);
      }
    }
    for (auto p : w) CK(cudaFree(p));
    CK(cudaFree(x));
  }
  return 0;
}
