// Shared by the standalone CUDA probes in this folder (stream_patterns.cu, read_floor.cu,
// int8_gemv_shapes.cu): the error check, a launch with or without PDL (launch_ex, at the end)
// and the timing of benchmarks/timing.py in C++. A CUDA graph of `reps` launches
// (each call one(r, stream) enqueues launch r; the caller rotates buffer copies by r so every
// launch reads from HBM), one warm replay, then the median of 7 replays, per launch, in us.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

// warm_ms: replay the graph for about this long before timing (benchmarks/timing.py warms 30 ms).
template <typename One>
double graph_median_us(int reps, One one, double warm_ms = 0) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int r = 0; r < 3; ++r) one(r, s);
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int r = 0; r < reps; ++r) one(r, s);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto replay_ms = [&] {  // one timed replay of the whole graph
    CK(cudaEventRecord(e0, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
  };
  CK(cudaGraphLaunch(ge, s));
  if (warm_ms > 0) {
    const float ms = replay_ms();
    for (int r = 0, n = (int)(warm_ms / std::max(ms, 1e-3f)); r < n && r < 2000; ++r)
      CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
  }
  std::vector<float> ts;
  for (int r = 0; r < 7; ++r) ts.push_back(replay_ms() * 1000.f / reps);
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  return ts[3];
}

// The probes' preamble: prints the device, returns its SM count and properties, and the N x K
// shapes given as "28672x8192 4096x4096" on the command line (those with K % kmod == 0), else
// the four decode shapes the probes share.
struct ProbeShape {
  int N, K;
};
inline std::vector<ProbeShape> probe_setup(int argc, char** argv, int kmod, cudaDeviceProp& prop) {
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  std::vector<ProbeShape> shapes = {{28672, 8192}, {128256, 4096}, {14336, 4096}, {4096, 4096}};
  if (argc > 1) {
    shapes.clear();
    for (int a = 1; a < argc; ++a) {
      ProbeShape s;
      if (std::sscanf(argv[a], "%dx%d", &s.N, &s.K) == 2 && s.K % kmod == 0) shapes.push_back(s);
    }
  }
  return shapes;
}

// Launches fn(args...) (args: pointers to the arguments, as cudaLaunchKernelExC takes them),
// with programmatic stream serialization when pdl (the decode kernels' launch, common/pdl.h).
inline void launch_ex(const void* fn, dim3 grid, dim3 block, size_t smem, cudaStream_t s, void** args,
                      bool pdl) {
  cudaLaunchConfig_t lc = {};
  lc.gridDim = grid;
  lc.blockDim = block;
  lc.dynamicSmemBytes = smem;
  lc.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  lc.attrs = at;
  lc.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelExC(&lc, fn, args));
}
