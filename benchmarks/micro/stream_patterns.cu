// Read-pattern microbenchmark for the decode GEMV kernels (no arithmetic).
//
// Question: the GEMV kernels give each warp a 16-row tile of the weight (the
// mma A operand), and one warp load instruction then covers 8 rows x 64 B.
// How much of the HBM read ceiling does that access pattern reach by itself,
// and how does it move with the bytes per row per instruction, bytes in flight
// per warp, the K split and the resident warps per SM?  A flat stream (each
// instruction 512 contiguous bytes) gives the ceiling in the same run.
//
// Build: nvcc -O3 -arch=sm_90 -o stream_patterns stream_patterns.cu
// Every kernel only XORs what it loaded (so nothing is optimised away); cold
// L2 by rotating buffer copies past 3x the L2; one CUDA graph of REPS launches;
// median of 7 replays.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include "graph_timing.cuh"

// H: L2 prefetch-size hint (0: none, 128: .L2::128B, 256: .L2::256B)
template <int H>
__device__ __forceinline__ uint4 ldg_stream(const void* p) {
  uint4 v;
  if constexpr (H == 256)
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else if constexpr (H == 128)
    asm("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// Every kernel is software-pipelined the way the GEMV kernels are: D stages of
// G warp loads each live in registers; each step consumes the oldest stage and
// refills it D stages ahead, so D*G*512 bytes per warp stay in flight.  (A
// plain "load U, then use U" loop lets ptxas interleave the uses with the
// loads, which keeps only a few loads in flight.)
struct Flat {  // warp w, stage j: G instructions of 512 contiguous bytes, grid-stride
  static constexpr int G = 2;
  const uint8_t* p; size_t bytes; size_t warp, nwarps;
  __device__ Flat(const uint8_t* p_, size_t b, int, int, int) : p(p_), bytes(b) {
    warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    nwarps = (gridDim.x * (size_t)blockDim.x) >> 5;
  }
  __device__ int stages() const { return (int)((bytes + nwarps * G * 512 - 1) / (nwarps * G * 512)); }
  __device__ const uint8_t* addr(int j, int i) const {
    size_t off = ((size_t)j * nwarps + warp) * (G * 512) + i * 512 + (threadIdx.x & 31) * 16;
    return p + (off < bytes ? off : bytes - 16);
  }
};
template <int RPI>  // a block of KS warps owns 16 rows; one instruction: RPI rows x 512/RPI bytes
struct Tile {
  static constexpr int G = 16 / RPI, SEG = 512 / RPI, LPR = 32 / RPI;
  const uint8_t* base; int row_bytes, nchunks, ks, KS, rmax;
  __device__ Tile(const uint8_t* p, size_t, int rows, int rb, int KS_) : row_bytes(rb), KS(KS_) {
    const int lane = threadIdx.x & 31;
    ks = threadIdx.x >> 5;
    nchunks = rb / SEG;
    rmax = rows - 1;
    base = p + (size_t)(blockIdx.x * 16 + lane / LPR) * rb + (lane % LPR) * 16;
    rmax = rows - 1 - (int)blockIdx.x * 16 - lane / LPR;  // last valid row offset
  }
  __device__ int stages() const { return (nchunks + KS - 1) / KS; }
  __device__ const uint8_t* addr(int j, int i) const {
    int c = j * KS + ks; c = c < nchunks ? c : nchunks - 1;
    int r = i * RPI; r = r <= rmax ? r : rmax;
    return base + (size_t)r * row_bytes + c * SEG;
  }
};
struct Packed {  // the same tiles stored tile after tile, each 16 x 64 B chunk contiguous
  static constexpr int G = 2;
  const uint8_t* t; int ninstr, ks, KS;
  __device__ Packed(const uint8_t* p, size_t, int, int rb, int KS_) : KS(KS_) {
    ks = threadIdx.x >> 5;
    t = p + (size_t)blockIdx.x * 16 * rb + (threadIdx.x & 31) * 16;
    ninstr = 16 * rb / 512;
  }
  __device__ int stages() const { return (ninstr / G + KS - 1) / KS; }
  __device__ const uint8_t* addr(int j, int i) const {
    int n = (j * KS + ks) * G + i; n = n < ninstr ? n : ninstr - 1;
    return t + (size_t)n * 512;
  }
};

template <class P, int D, int H = 0>
__global__ void stream_kernel(const uint8_t* __restrict__ p, size_t bytes, int rows, int row_bytes,
                              int KS, unsigned* out) {
  extern __shared__ int pad[];
  const P pat(p, bytes, rows, row_bytes, KS);
  const int n = pat.stages();
  uint4 v[D][P::G];
#pragma unroll
  for (int d = 0; d < D; ++d)
#pragma unroll
    for (int i = 0; i < P::G; ++i) v[d][i] = ldg_stream<H>(pat.addr(d, i));
  unsigned acc = 0;
  for (int j = 0; j < n; j += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      if (j + d < n) {
#pragma unroll
        for (int i = 0; i < P::G; ++i) acc ^= v[d][i].x + v[d][i].y + v[d][i].z + v[d][i].w;
      }
#pragma unroll
      for (int i = 0; i < P::G; ++i) v[d][i] = ldg_stream<H>(pat.addr(j + d + D, i));
    }
  }
  if (acc == 0x9e3779b9u) out[0] = acc + pad[0];
}

struct Bench {
  std::vector<uint8_t*> copies;
  size_t bytes;
  unsigned* out;
  int sms;
};

// Dynamic shared memory that caps residency at `warps_per_sm` for blocks of
// `block_warps` warps (0: no cap).
static size_t smem_for(int warps_per_sm, int block_warps) {
  if (warps_per_sm <= 0) return 0;
  int blocks = std::max(1, warps_per_sm / block_warps);
  size_t per = (size_t)(227 * 1024) / blocks;
  per = per > 1024 ? per - 1024 : per;
  return std::min<size_t>(per, 227 * 1024);
}

template <typename Launch>
static double time_us(Bench& b, Launch launch) {
  const int reps = (int)std::max<size_t>(b.copies.size(), 8);
  return graph_median_us(reps, [&](int r, cudaStream_t s) { launch(b.copies[r % b.copies.size()], s); });
}

template <class P, int D, int H = 0>
static void run(Bench& b, const char* name, int rows, int row_bytes, int ks, int wps, double ceiling,
                int grid, int block_warps) {
  size_t sm = smem_for(wps, block_warps);
  CK(cudaFuncSetAttribute(stream_kernel<P, D, H>, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  double us = time_us(b, [&](uint8_t* p, cudaStream_t s) {
    stream_kernel<P, D, H><<<grid, block_warps * 32, sm, s>>>(p, b.bytes, rows, row_bytes, ks, b.out);
  });
  double tbs = b.bytes / us * 1e-6;
  int active = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, stream_kernel<P, D, H>, block_warps * 32, sm));
  std::printf("%-8s L2::%-3d inflight/warp=%-5d B KS=%-2d warps/SM=%-3d(cap %-2d) %9.2f us %6.3f TB/s %5.1f%%\n", name, H,
              D * P::G * 512, ks, active * block_warps, wps, us, tbs, ceiling > 0 ? 100 * tbs / ceiling : 100.0);
}

int main(int argc, char** argv) {
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  struct Shape { int rows, row_bytes; const char* what; };
  std::vector<Shape> shapes = {
      {28672, 8192, "28672x8192 int8/fp8"}, {28672, 4096, "28672x8192 nvfp4 codes"},
      {4096, 4096, "4096x4096 int8/fp8"}, {128256, 4096, "128256x4096 int8/fp8"},
      {14336, 4096, "14336x4096 int8/fp8"}};
  // usage: stream_patterns [full]   (default: the L2-hint comparison only)
  const bool full = argc > 1 && std::string(argv[1]) == "full";
  for (const Shape& sh : shapes) {
    Bench b;
    b.bytes = (size_t)sh.rows * sh.row_bytes;
    b.sms = prop.multiProcessorCount;
    size_t ncopies = std::max<size_t>(1, (3 * (size_t)prop.l2CacheSize) / b.bytes + 1);
    for (size_t i = 0; i < ncopies; ++i) {
      uint8_t* p;
      CK(cudaMalloc(&p, b.bytes));
      CK(cudaMemset(p, (int)(0x5a + i), b.bytes));
      b.copies.push_back(p);
    }
    CK(cudaMalloc(&b.out, 64));
    std::printf("\n== %s: %.1f MB, %zu copies\n", sh.what, b.bytes / 1e6, ncopies);
    double best = 0;
    {  // ceiling: the flat stream, 8 KB in flight per warp, 32 warps per SM
      size_t sm = smem_for(32, 8);
      CK(cudaFuncSetAttribute(stream_kernel<Flat, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
      double us = time_us(b, [&](uint8_t* p, cudaStream_t s) {
        stream_kernel<Flat, 8><<<b.sms * 4, 256, sm, s>>>(p, b.bytes, 0, 0, 1, b.out);
      });
      best = b.bytes / us * 1e-6;
      std::printf("ceiling (flat, 8 KB/warp, 32 warps/SM): %.2f us %.3f TB/s\n", us, best);
    }
    if (full) {
      for (int wps : {8, 16, 32, 64}) {
        int bpsm = std::max(1, wps / 8);
        run<Flat, 2>(b, "flat", 0, 0, 1, wps, best, b.sms * bpsm, 8);
        run<Flat, 4>(b, "flat", 0, 0, 1, wps, best, b.sms * bpsm, 8);
        run<Flat, 8>(b, "flat", 0, 0, 1, wps, best, b.sms * bpsm, 8);
      }
    }
    const int tiles = (sh.rows + 15) / 16;
    for (int wps : {12, 16, 24}) {
      for (int ks : {1, 2, 4, 8}) {
        if (!full && wps != 16) continue;
        run<Tile<8>, 2>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<8>, 4>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<8>, 2, 128>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<8>, 4, 128>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<8>, 2, 256>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<8>, 4, 256>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<16>, 4, 256>(b, "tile32", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<4>, 2>(b, "tile128", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        run<Tile<4>, 2, 256>(b, "tile128", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        if (full) {
          run<Tile<8>, 8>(b, "tile64", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
          run<Tile<4>, 4>(b, "tile128", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
          run<Tile<2>, 1>(b, "tile256", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
          run<Tile<2>, 2>(b, "tile256", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
          run<Packed, 2>(b, "packed", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
          run<Packed, 8>(b, "packed", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
        }
        run<Packed, 4>(b, "packed", sh.rows, sh.row_bytes, ks, wps, best, tiles, ks);
      }
    }
    for (auto p : b.copies) CK(cudaFree(p));
    CK(cudaFree(b.out));
  }
  return 0;
}
