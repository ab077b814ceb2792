// The read floor of a small decode layer in this repository's timing method: how fast can a
// kernel that does nothing but read B bytes once run, cold L2, one CUDA graph of back-to-back
// launches, median of 7 replays? The read ceiling (4.39-4.47 TB/s) is measured over 2 GiB; a
// 4096x4096 layer is 9-34 MB, where launch, the first DRAM round trips and the tail are a large
// share. The targets for those layers (fp8 4096x4096 <= 7 us, nvfp4 <= 5 us) are judged against
// this number, not against bytes / ceiling.
//
// Every kernel (read_kernel.cuh): grid-stride over 16-byte loads (ld.global.nc, L1
// no-allocate), D stages of G loads per thread in registers, refilled as consumed (as the GEMV
// rings keep bytes in flight), XOR of what it read into a store that never happens.
// Configurations: blocks per SM, warps per block, bytes in flight per warp; "pdl": launched
// with programmatic stream serialization, griddepcontrol.launch_dependents first and
// griddepcontrol.wait before the first load (as the decode kernels, csrc/common/pdl.h).
//
// Build: nvcc -O3 -arch=sm_90 -o read_floor read_floor.cu
// Usage: read_floor MB [MB ...]          sweep each size, print the best configurations
//        read_floor chain MB,MB,...       one layer = these reads back to back, plain and pdl
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph_timing.cuh"
#include "read_kernel.cuh"

struct Cfg {
  int bps, warps, inflight;  // blocks per SM, warps per block, bytes in flight per warp
  bool pdl;
};

using KernelFn = void (*)(const uint4*, size_t, unsigned*);

template <bool P>
KernelFn pick(int inflight) {
  switch (inflight) {
    case 1024: return read_kernel<1, 2, P>;
    case 2048: return read_kernel<2, 2, P>;
    case 4096: return read_kernel<4, 2, P>;
    default: return read_kernel<8, 2, P>;  // 8192
  }
}

static int g_sms = 0;
static unsigned* g_out = nullptr;

static void launch(const Cfg& c, const uint4* p, size_t bytes, cudaStream_t s) {
  KernelFn fn = c.pdl ? pick<true>(c.inflight) : pick<false>(c.inflight);
  size_t n16 = bytes / 16;
  void* args[] = {(void*)&p, (void*)&n16, (void*)&g_out};
  launch_ex((const void*)fn, dim3(g_sms * c.bps), dim3(c.warps * 32), 0, s, args, c.pdl);
}

// One "layer" = reads of sizes[0..], each from its own buffer; copies rotate layers so that
// every read comes from HBM (the copies of one size together exceed 3x L2).
struct Stack {
  std::vector<size_t> sizes;
  size_t total = 0;                         // bytes per layer
  std::vector<std::vector<uint8_t*>> bufs;  // [layer][size]
};

static Stack make_stack(const std::vector<size_t>& sizes, size_t l2) {
  Stack st;
  st.sizes = sizes;
  for (size_t b : sizes) st.total += b;
  const size_t layers = std::max<size_t>(4, 3 * l2 / st.total + 1);
  for (size_t l = 0; l < layers; ++l) {
    std::vector<uint8_t*> v;
    for (size_t b : sizes) {
      uint8_t* p;
      CK(cudaMalloc(&p, b));
      CK(cudaMemset(p, (int)(0x11 + l), b));
      v.push_back(p);
    }
    st.bufs.push_back(v);
  }
  return st;
}

static void free_stack(Stack& st) {
  for (auto& v : st.bufs)
    for (auto p : v) CK(cudaFree(p));
}

// Per-layer time (us): a graph of max(layers, 8) layers, median of 7 replays.
static double time_layer(const Stack& st, const std::vector<Cfg>& cfg) {
  const int reps = (int)std::max<size_t>(st.bufs.size(), 8);
  return graph_median_us(reps, [&](int r, cudaStream_t s) {
    const auto& v = st.bufs[r % st.bufs.size()];
    for (size_t k = 0; k < st.sizes.size(); ++k)
      launch(cfg[k], reinterpret_cast<const uint4*>(v[k]), st.sizes[k], s);
  });
}

static std::vector<Cfg> all_cfgs(bool pdl) {
  std::vector<Cfg> v;
  for (int bps : {1, 2, 4, 8})
    for (int warps : {4, 8, 16})
      for (int inflight : {1024, 2048, 4096, 8192})
        if (bps * warps <= 64) v.push_back({bps, warps, inflight, pdl});
  return v;
}

// Every configuration (the same one for each read of the layer), plain and PDL-launched: the
// five fastest and the slowest, per layer.
static void sweep(const Stack& st) {
  for (bool pdl : {false, true}) {
    std::vector<std::pair<double, Cfg>> r;
    for (const Cfg& c : all_cfgs(pdl))
      r.push_back({time_layer(st, std::vector<Cfg>(st.sizes.size(), c)), c});
    std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.first < y.first; });
    std::printf("%s: best of %zu configurations\n", pdl ? "pdl" : "plain", r.size());
    for (size_t i = 0; i < 5 && i < r.size(); ++i) {
      const Cfg& c = r[i].second;
      std::printf("  %7.2f us %6.3f TB/s  %d blocks/SM x %2d warps, %5d B/warp in flight%s\n",
                  r[i].first, st.total / r[i].first * 1e-6, c.bps, c.warps, c.inflight,
                  c.pdl ? ", pdl" : "");
    }
    std::printf("  worst %7.2f us\n", r.back().first);
  }
}

// A size in MB (1e6 bytes), rounded down to whole 512-byte warp loads.
static size_t mb_bytes(const char* mb) { return (size_t)(std::atof(mb) * 1e6) / 512 * 512; }

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  CK(cudaMalloc(&g_out, 64));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
  if (argc < 2) {
    std::fprintf(stderr, "usage: read_floor MB [MB ...] | read_floor chain MB,MB,...\n");
    return 2;
  }
  std::vector<std::vector<size_t>> layers;  // each swept on its own
  if (std::string(argv[1]) == "chain") {
    std::vector<size_t> sizes;
    const std::string list = argc > 2 ? argv[2] : "";
    for (size_t pos = 0; pos < list.size();) {
      size_t e = list.find(',', pos);
      if (e == std::string::npos) e = list.size();
      sizes.push_back(mb_bytes(list.substr(pos, e - pos).c_str()));
      pos = e + 1;
    }
    layers.push_back(sizes);
  } else {
    for (int a = 1; a < argc; ++a) layers.push_back({mb_bytes(argv[a])});
  }
  for (const auto& sizes : layers) {
    Stack st = make_stack(sizes, prop.l2CacheSize);
    std::printf("\n== %zu read(s), %.2f MB per layer, %zu copies\n", sizes.size(), st.total / 1e6,
                st.bufs.size());
    sweep(st);
    free_stack(st);
  }
  return 0;
}
