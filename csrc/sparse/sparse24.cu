// CUDA implementations of the 2:4 structured-sparsity ops:
//   prune24, compress24, decompress24   (offline weight preparation)
//   sparse24_gemv                        (decode GEMV over compressed fp16/bf16 weights)
//   sparse24_int8_matmul                 (W8A8 matmul over a compressed int8 weight)
//
// What each computes is in csrc/torchquant.cpp and csrc/cpu/sparse24_cpu.cpp /
// sparse24_exec_cpu.cpp; the device code and its memory patterns are in
// sparse24_kernels.cuh. This file validates (the same validators as the CPU
// implementations, so errors read the same), picks a kernel and launches.
//
// prune24 / compress24 / decompress24 are bit-identical to the CPU ops. The
// data errors of compress24 (a group with 3 or 4 nonzeros) and decompress24
// (a nibble with pos0 >= pos1) are found on the device: the kernels
// atomicMin the first bad (row, group) into one word, which the host reads
// after the launch. That read synchronizes, which is fine for these offline
// weight-preparation ops (prune24's NaN/Inf check syncs as well); the GEMV
// has no host synchronization and is CUDA-graph safe.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "common/checks.h"
#include "common/device.h"
#include "common/pdl.h"
#include "common/sm90a_op.h"
#include "sparse/sparse24_checks.h"
#include "sparse/sparse24_kernels.cuh"

namespace torchquant {
namespace {

using sparse24::kNoError;

// The Hopper sparse-wgmma GEMMs live in torchquant._C_sm90a; path="wgmma" (and "auto" where
// auto_takes_sparse_wgmma says so) reaches them through the dispatcher (find_sm90a_op).

// Where "auto" takes the sparse-wgmma GEMM (when it runs: compute capability 9.0, the sm_90a
// module, K % 128 == 0). Since 2026-12-03d its decode tiles (128 features x 16 / 32 / 64 tokens)
// stream the weight at 80-88 % of the read ceiling from M = 2, so it wins wherever the grid of
// 128-feature tiles fills the GPU; with fewer tiles (N < 6144: 48 tiles on 132 SMs) the mma.sp
// kernel's K split wins up to M = 16. H200 (results/h200/2026-12-03d_sp24_decode/call2), us:
//   bf16 (fma / mma.sp / wgmma): 28672x8192 M = 1 66.8 / 84.9 / 68.2, M = 2 75.1 / 86.3 / 70.5,
//     M = 16 602 / 97.7 / 68.6; 8192x8192 M = 2 27.5 / 27.2 / 23.5; 6144x4096 M = 2
//     11.7 / 13.7 / 12.2, M = 4 18.1 / 13.9 / 12.1; 4096x4096 M = 8 25.8 / 10.5 / 11.5;
//     4096x14336 M = 16 243 / 28.7 / 31.7; M = 24: 4096x14336 mma.sp 49.8, wgmma 33.5.
//   int8 (dp4a gemv / mma.sp / wgmma): 28672x8192 M = 1 37.3 / 50.1 / 39.3, M = 2 44.1 / 52.3 /
//     40.1, M = 16 148 / 55.3 / 42.6; 8192x8192 M = 2 14.2 / 17.9 / 14.6, M = 4 15.7 / 18.5 /
//     14.7; 4096x14336 M = 8 35.3 / 17.3 / 18.7; M = 24: 4096x14336 mma.sp 30.9, wgmma 19.5.
// From M = 17 the wgmma tiles beat mma.sp on every shape measured, small N included.
// Since 2026-12-03e (results/h200/2026-12-03e_2cta_f16cvt, call 5; us at M = 8, wgmma / mma.sp):
// 16-bit layers of at most a quarter as many 128-feature tiles as SMs with >= 8 stages of K
// (K >= 1024) run the 16-token tile with its K range split over a cluster (16c1k, the
// condition of choose_sp_config in sparse24_gemm_sm90a.cu): 4096x4096 9.4 / 10.6, 4096x14336
// 21.7 / 25.5, 1024x4096 6.5-6.7 / 6.8. int8 from M = 8 on any layer: its unsplit 16-token
// tile beat mma.sp on six of seven small and mid layers (4096x4096 7.5 / 8.9, 8192x8192
// 14.4 / 18.7, 1024x4096 6.8 / 7.4, 10240x8192 17.4 / 27.9) and tied on 4096x14336 (17.3 /
// 17.3; 18.7 / 17.3 on 2026-12-03d's machine).
// Since 2026-12-03g int8 takes the K-split tile on those small grids (call 1), and from M = 4
// (call 2, us, auto before / wgmma; at M = 2 the dp4a GEMV stays ahead): 4096x14336 M = 4
// 19.8 / 14.0, M = 2 14.3 / 14.0; 4096x4096 M = 4 7.7 / 7.4, M = 2 6.1 / 7.3; 1024x4096 M = 4
// 5.9 / 5.6, M = 2 4.8 / 5.6.
// 16-bit, M = 1..2 on those small grids (2026-12-05g, results/h100/2026-12-05g calls 4-5; an H100,
// us, fma / the K-split tile / mma.sp): the CUDA-core GEMV keeps M = 2 wherever its rows are not
// long against the layer's width: 4096x4096 9.8 / 11.7 / 11.5, 2048x2048 4.7 / 6.9 / 6.7,
// 1024x4096 6.7 / 7.5 / 7.0, 3072x4096 8.2 / 10.3 / 9.7, 768x2048 4.2 / 5.9 / 6.1, 4096x8192
// 17.1 / 18.3 / 18.9, 4096x14336 27.8 / 27.7 / 30.0 (the H200's M = 1 margins are the same:
// 4096x4096 7.8 / 9.4, 2048x2048 4.1 / 6.0, results/h200/2026-12-05_tables). With K >= 8192
// and K >= 4 N its grid has too few warps for the row length (N / 8 one-row warps), and the
// K-split tile takes M = 1 as well: 1024x8192 M = 1 9.8 / 9.0 / 8.3, M = 2 11.2 / 9.0 / 8.4
// (H200 M = 1: 9.75 / 7.85 / 7.66), 1024x14336 M = 1 15.9 / 11.3 / 10.9, 2048x14336 18.0 /
// 16.6 / 17.2, 2048x8192 M = 2 12.2 / 11.5 / 11.6 (M = 1 11.2 / 11.6 / 11.4).
// On cards of more DRAM bytes per SM clock than 15.0 (common/device.h narrow_dram; the H200) the
// K-split tile takes M = 2 from K = 4096 too (results/h200/2026-12-06i call 3, the 2026-12-05g
// H200 driver's path sweep, bf16, two rounds alike, us, fma / the K-split tile / mma.sp): M = 2
// 4096x4096 10.2 / 9.3 / 9.9, 1024x4096 6.7 / 6.5 / 6.7, 4096x14336 28.2 / 21.2 / 23.2, but
// K = 2048 2048x2048 4.6 / 5.9 / 6.4, 1536x2048 4.5 / 5.6 / 6.3; M = 1 stays with the fma GEMV
// (4096x4096 7.7 / 9.3 / 9.5, 1024x4096 6.1 / 6.5 / 6.6, 4096x14336 21.0 / 21.0 / 22.4).
bool auto_takes_sparse_wgmma(bool int8, int64_t M, int64_t N, int64_t K, const DeviceCaps& caps) {
  const int sm_count = caps.sm_count;
  if (M >= 17) return true;
  if (int8)
    return M >= 8 || (M >= 3 && N >= 6144) || (M >= 4 && sparse24_ksplit_grid(N, K, sm_count, true));
  if (sparse24_ksplit_grid(N, K, sm_count, false))
    return M >= 3 || (K >= 8192 && K >= 4 * N) || (M == 2 && K >= 4096 && !narrow_dram(caps));
  return (M >= 2 && N >= 8192) || (M >= 4 && N >= 6144);
}

// The sm_90a op that runs `kernel` for this shape, or nullopt for the other paths: forced
// "wgmma" requires it (a clear error without the module), "auto" takes it where
// auto_takes_sparse_wgmma says so on compute capability 9.0 when K % 128 == 0 and the module
// is loaded.
c10::optional<c10::OperatorHandle> wgmma_op_for(const std::string& kernel, const char* name,
                                                int device, bool int8, int64_t M, int64_t N,
                                                int64_t K, const char* op) {
  if (kernel == "wgmma") {
    auto h = find_sm90a_op(name);
    TORCH_CHECK(h.has_value(), op, ": path 'wgmma' needs a build with torchquant._C_sm90a (9.0 "
                "in TORCH_CUDA_ARCH_LIST), and it is not loaded");
    return h;
  }
  if (kernel != "auto" || K % 128 != 0) return c10::nullopt;
  const DeviceCaps& caps = device_caps(device);
  if (caps.major != 9 || caps.minor != 0) return c10::nullopt;
  if (!auto_takes_sparse_wgmma(int8, M, N, K, caps)) return c10::nullopt;
  return find_sm90a_op(name);
}

// Calls f(T{}) with T the device storage type of a 2:4 dtype.
template <typename F>
void dispatch_sparse24_cuda(at::ScalarType t, const char* op, F&& f) {
  if (t == at::kChar) {
    f(int8_t{});
  } else {
    dispatch_float_cuda(t, op, f);
  }
}

template <typename F>
void dispatch_half_cuda(at::ScalarType t, const char* op, F&& f) {
  switch (t) {
    case at::kHalf: f(__half{}); break;
    case at::kBFloat16: f(__nv_bfloat16{}); break;
    default: TORCH_CHECK(false, op, ": unsupported dtype ", t);
  }
}

// Grid for the grid-stride element kernels: enough blocks to fill the GPU a
// few times over, never more than the work.
int elementwise_blocks(int64_t work, int threads, const DeviceCaps& caps) {
  const int64_t need = (work + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(need, int64_t(caps.sm_count) * 16)));
}

// The device word the data-error kernels atomicMin into, starting at
// "no error" (all bits set).
at::Tensor error_word(const at::Tensor& like) {
  return at::full({1}, -1, like.options().dtype(at::kLong));
}

// --------------------------------------------------------------- prune24 --
std::tuple<at::Tensor, at::Tensor> prune24_cuda(const at::Tensor& w) {
  const char* op = "prune24";
  validate_sparse24_input(w, op);
  check_finite(w, op, "w");
  const c10::cuda::CUDAGuard device_guard(w.device());
  const DeviceCaps& caps = device_caps(w.get_device());
  at::Tensor pruned = at::empty_like(w);
  at::Tensor mask = at::empty(w.sizes(), w.options().dtype(at::kBool));
  const int64_t groups = w.numel() / 4;
  constexpr int kThreads = 256;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_sparse24_cuda(w.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    sparse24::prune24_kernel<T><<<elementwise_blocks(groups, kThreads, caps), kThreads, 0, stream>>>(
        reinterpret_cast<const T*>(w.data_ptr()), reinterpret_cast<T*>(pruned.data_ptr()),
        mask.data_ptr<bool>(), groups);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {pruned, mask};
}

// ------------------------------------------------------------ compress24 --
std::tuple<at::Tensor, at::Tensor> compress24_cuda(const at::Tensor& w) {
  const char* op = "compress24";
  validate_sparse24_input(w, op);
  const c10::cuda::CUDAGuard device_guard(w.device());
  const DeviceCaps& caps = device_caps(w.get_device());
  const int64_t N = w.size(0), K = w.size(1), G = K / 4, MB = (K + 7) / 8;
  at::Tensor values = at::empty({N, K / 2}, w.options());
  at::Tensor meta = at::empty({N, MB}, w.options().dtype(at::kByte));
  at::Tensor first_bad = error_word(w);
  constexpr int kThreads = 256;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_sparse24_cuda(w.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    sparse24::compress24_kernel<T><<<elementwise_blocks(N * MB, kThreads, caps), kThreads, 0, stream>>>(
        reinterpret_cast<const T*>(w.data_ptr()), reinterpret_cast<T*>(values.data_ptr()),
        meta.data_ptr<uint8_t>(), N, K,
        reinterpret_cast<unsigned long long*>(first_bad.data_ptr<int64_t>()));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  // Offline op: one synchronizing read of the error word.
  const auto key = static_cast<unsigned long long>(first_bad.item<int64_t>());
  if (key != kNoError) {
    const int64_t idx = static_cast<int64_t>(key >> 1);
    sparse24_raise_too_many_nonzeros(idx / G, idx % G, 3 + static_cast<int>(key & 1));
  }
  return {values, meta};
}

// ---------------------------------------------------------- decompress24 --
at::Tensor decompress24_cuda(const at::Tensor& values, const at::Tensor& meta) {
  const char* op = "decompress24";
  const int64_t K = validate_decompress24(values, meta);
  const c10::cuda::CUDAGuard device_guard(values.device());
  const DeviceCaps& caps = device_caps(values.get_device());
  const int64_t N = values.size(0), G = K / 4, MB = (K + 7) / 8;
  at::Tensor out = at::empty({N, K}, values.options());
  if (out.numel() == 0) return out;
  at::Tensor first_bad = error_word(values);
  constexpr int kThreads = 256;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_sparse24_cuda(values.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    sparse24::decompress24_kernel<T><<<elementwise_blocks(N * MB, kThreads, caps), kThreads, 0, stream>>>(
        reinterpret_cast<const T*>(values.data_ptr()), meta.data_ptr<uint8_t>(),
        reinterpret_cast<T*>(out.data_ptr()), N, K,
        reinterpret_cast<unsigned long long*>(first_bad.data_ptr<int64_t>()));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  const auto key = static_cast<unsigned long long>(first_bad.item<int64_t>());
  if (key != kNoError) {
    const int64_t idx = static_cast<int64_t>(key >> 4);
    sparse24_raise_bad_nibble(idx / G, idx % G, static_cast<int>(key & 0xF));
  }
  return out;
}

// --------------------------------------------------------- sparse24_gemv --
enum class GemvPath { kFma, kMma };

// Largest M the CUDA-core path is picked for. Per 16-byte value load and
// weight row it issues ~60 instructions at M = 1 plus ~20 per extra row of
// x (prmt, two widenings, two FMAs per group and x row); keeping pace with
// HBM (4.39 TB/s over 132 SMs = ~17 B/clk/SM) leaves room for about 4 issue
// slots per clock, so M = 1, 2 sit at ~45-60% of the issue rate and M = 3, 4
// would approach it. The tensor-core path's cost per weight byte does not
// grow with M. (Estimate; re-tune with benchmarks/bench_sparse24.py.)
constexpr int64_t kFmaMaxM = 2;

// The one place that picks a sparse24_gemv path for kernel="auto".
GemvPath choose_gemv_kernel(const DeviceCaps& caps, int64_t M, int64_t K) {
  // mma.sp, ldmatrix and cp.async need sm_80; the tensor core consumes K in
  // steps of 32.
  if (caps.cc() < 80 || K % 32 != 0) return GemvPath::kFma;
  // Small M: both paths stream the weight at the HBM rate; the CUDA-core
  // path has no shared-memory round trip and no block barriers.
  if (M <= kFmaMaxM) return GemvPath::kFma;
  // Larger M (tiled by 16 beyond 16): tensor cores.
  return GemvPath::kMma;
}

bool aligned16(const at::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

// fma path: x tile MT = the power of two >= min(M, 16); RW weight rows per
// warp (see launch_fma: 2 at MT = 1, 4 at MT = 2, else 2), halved while
// the grid would be under two blocks per SM (each row a warp owns shares
// the x loads, so more rows per warp means less L1 traffic per weight byte,
// but fewer, longer blocks).
// A/B knobs of the decode kernels, for tests and benchmarks: TORCHQUANT_SP24_FMA = a
// comma list of "rw4" / "rw2" / "rw1" (weight rows per warp of the fma GEMV before the
// grid-size halving, MT <= 2) and "i8w4" (4 weight rows per warp in sparse24_int8_matmul's
// dp4a GEMV at M = 1 instead of 2, launch_int8_gemv_mt). Unset: the rules.
bool sp24_knob(const char* token) {
  const char* env = std::getenv("TORCHQUANT_SP24_FMA");
  return env != nullptr && std::strstr(env, token) != nullptr;
}
int fma_rows_override() {
  return sp24_knob("rw4") ? 4 : sp24_knob("rw2") ? 2 : sp24_knob("rw1") ? 1 : 0;
}

template <typename T, int MT, bool VEC>
void launch_fma_rw(const T* x, const T* v, const uint8_t* m, const T* b, T* y, int M, int N,
                   int K, int rw, int mtiles, cudaStream_t stream) {
  const dim3 grid_y(1, static_cast<unsigned>(std::min(mtiles, 65535)));
  const PdlMode pdl = pdl_mode(c10::cuda::current_device(), PdlKernel::kSp24Fma);  // common/pdl.h
  auto go = [&](auto kernel, int rows_per_warp) {
    const dim3 grid((N + 8 * rows_per_warp - 1) / (8 * rows_per_warp), grid_y.y);
    launch_kernel(kernel, grid, dim3(256), 0, stream, pdl.on, x, v, m, b, y, M, N, K);
  };
  if constexpr (MT <= 2) {
    if (rw >= 4) return go(sparse24::sparse24_gemv_fma_kernel<T, MT, 4, VEC>, 4);
  }
  if (rw >= 2) return go(sparse24::sparse24_gemv_fma_kernel<T, MT, 2, VEC>, 2);
  go(sparse24::sparse24_gemv_fma_kernel<T, MT, 1, VEC>, 1);
}

template <typename T, bool VEC>
void launch_fma(const T* x, const T* v, const uint8_t* m, const T* b, T* y, int M, int N, int K,
                const DeviceCaps& caps, cudaStream_t stream) {
  const int mt_size = M >= 16 ? 16 : M > 4 ? 8 : M > 2 ? 4 : M;  // 1, 2, 4, 8, 16
  const int mtiles = (M + mt_size - 1) / mt_size;
  // Rows per warp: at M = 1 two (H200, 2026-12-02, results/h200/2026-12-02_nvfp4_wgmma,
  // bf16, us, RW = 4 / 2: 28672x8192 75.9 / 66.6, 14336x4096 23.2 / 22.0, 128256x4096
  // 141.6 / 140.9, 4096x14336 22.3 / 22.0; 45 registers instead of 72, so 5 blocks per SM
  // instead of 3 and more of the weight in flight); four at M = 2 (the MT = 2 tile shares
  // each x load among more rows); two for the larger tiles (registers).
  int rw = mt_size == 2 ? 4 : 2;
  if (mt_size <= 2) {
    if (const int forced = fma_rows_override()) rw = forced;
  }
  while (rw > 1 && int64_t((N + 8 * rw - 1) / (8 * rw)) * mtiles < 2 * int64_t(caps.sm_count)) rw /= 2;
  switch (mt_size) {
    case 1: return launch_fma_rw<T, 1, VEC>(x, v, m, b, y, M, N, K, rw, mtiles, stream);
    case 2: return launch_fma_rw<T, 2, VEC>(x, v, m, b, y, M, N, K, rw, mtiles, stream);
    case 4: return launch_fma_rw<T, 4, VEC>(x, v, m, b, y, M, N, K, rw, mtiles, stream);
    case 8: return launch_fma_rw<T, 8, VEC>(x, v, m, b, y, M, N, K, rw, mtiles, stream);
    default: return launch_fma_rw<T, 16, VEC>(x, v, m, b, y, M, N, K, rw, mtiles, stream);
  }
}

// mma path launch shapes: BN weight rows per block (BN / 16 warps) and a STAGES-deep
// cp.async ring. Default: 128 rows, 4 stages (92 KB of shared memory, 2 blocks per SM).
// TORCHQUANT_SP24_MMA = "bn64s3" | "bn64s4" | "bn128s3" | "bn128s4" forces one. H200, bf16,
// us, bn64s3 (the only shape before 2026-12-02) / bn128s4, no K split, run 2026-12-02c
// call 2 (results/h200/2026-12-02c_sp24): 28672x8192 M = 4 105.9 / 95.2, M = 8 89.7 / 85.0,
// M = 16 101.1 / 99.6; 14336x4096 M = 4 35.4 / 29.7, M = 8 26.6 / 26.5, M = 16 31.3 / 29.2.
// (Call 1: bn64s4 was slower than bn64s3 on both, bn128s3 between.) On the few-block
// shapes (4096 rows: 32 blocks of 128) the K split below does the work.
enum class MmaShape { kBn64S3, kBn64S4, kBn128S3, kBn128S4 };

// A launch-shape knob: the index of environment variable `var`'s value in `names` (unset or
// empty: `dflt`); any other value is a clear error that lists the choices.
int env_choice(const char* var, std::initializer_list<const char*> names, int dflt) {
  const char* env = std::getenv(var);
  if (env == nullptr || *env == 0) return dflt;
  int i = 0;
  std::string all;
  for (const char* name : names) {
    if (std::strcmp(env, name) == 0) return i;
    all += (i++ ? ", " : "") + std::string(name);
  }
  TORCH_CHECK(false, var, " must be one of ", all, "; got '", env, "'");
}

MmaShape mma_shape_knob() {
  return static_cast<MmaShape>(
      env_choice("TORCHQUANT_SP24_MMA", {"bn64s3", "bn64s4", "bn128s3", "bn128s4"},
                 static_cast<int>(MmaShape::kBn128S4)));
}

// K split of the mma kernels across blocks (grid.z; the bf16/fp16 GEMV and the int8 kernel):
// TORCHQUANT_SP24_SPLITK = S forces S (1 = never), unset = the rule: while the grid would fill
// at most half the SMs, double S (each split keeping >= 4 of the kernel's K chunks); the
// splits' sums meet in a second pass (fp32 in a fixed order; int32, exact). H200, bf16, us, S =
// 1 / 2 / 4 / 8, run 2026-12-02c call 2: bn128s4 4096x14336 (32 blocks) M = 4 81.0 / 44.0 /
// 28.3 / 28.1, M = 8 80.6 / 43.9 / 26.2 / 26.6, M = 16 93.4 / 51.3 / 30.5 / 30.8 (bf16 cuBLAS
// 33.2 - 33.8); but splitting a grid that already has a block per SM or more lost: 28672x8192
// (224 blocks) M = 8 85.0 / 87.7 / 92.7 / 89.3, 14336x4096 (112 blocks) M = 16 29.2 / 31.5 /
// 32.9 / 34.8. (The uneven last wave of 28672x8192 is not what holds that shape at ~71 % of the
// read ceiling: splitting it into 4 - 8x more blocks did not help; Nsight Compute, call 1: 0.23
// eligible warps per scheduler, 7.4 of 17 cycles between issues waiting on L1TEX.)
// TORCHQUANT_SP24_SPLIT_FILL = F (A/B knob of the rule): double S while the split grid would
// fill at most F / 2 of the SMs (unset: F = 1). F = 1 picked the best S on every shape timed
// (int8, M = 8, 2026-12-02d call 3: 6144x4096, 4096x4096, 28672x4096, 4096x14336,
// 14336x4096; bf16 the first three) and F = 2 / 4 made the fused Llama-3-8B layer slower
// (QuantLinear int8_sparse24 M = 8 85.6 / 87.7 / 89.9 us, sparse24 97.3 / 101.3 / 106.8).
// The unsplit fallback of the same measurement: int8 4096x14336 M = 8 44.7 us vs 17.3.
int mma_splits(int64_t row_blocks, int64_t mtiles, int chunks, int sms) {
  if (const int forced = env_int("TORCHQUANT_SP24_SPLITK"); forced >= 1)
    return std::max(1, std::min({forced, chunks, 65535}));
  const int64_t fill = std::max(1, env_int("TORCHQUANT_SP24_SPLIT_FILL"));
  int s = 1;
  while (row_blocks * mtiles * s * 2 <= fill * sms && chunks / (2 * s) >= 4) s *= 2;
  return s;
}

// The launch geometry of one mma kernel (bf16/fp16 GEMV or int8) with the K split of
// mma_splits: grid (row blocks of BN, M tiles of 8 NT, splits) and KC-K chunks per split (cps;
// every split has >= 1 chunk).
struct MmaGrid {
  dim3 grid;
  int cps;
  int splits;
};
MmaGrid mma_grid(int M, int N, int K, int BN, int NT, int KC, const DeviceCaps& caps) {
  const int mtiles = std::min((M + 8 * NT - 1) / (8 * NT), 65535);
  const int row_blocks = (N + BN - 1) / BN;
  const int chunks = (K + KC - 1) / KC;
  const int want = mma_splits(row_blocks, mtiles, chunks, caps.sm_count);
  const int cps = (chunks + want - 1) / want;
  const int splits = (chunks + cps - 1) / cps;
  return {dim3(row_blocks, mtiles, splits), cps, splits};
}

// The split's partial-sum buffer [splits, M, N] of `dtype` (undefined when there is no split).
at::Tensor split_partials(const MmaGrid& g, int M, int N, at::ScalarType dtype, int device) {
  if (g.splits <= 1) return at::Tensor();
  return at::empty({g.splits, M, N}, at::TensorOptions().dtype(dtype).device(at::kCUDA, device));
}

// Launches one shape; false (nothing launched) when the device's opt-in shared memory per
// block is below what the shape needs with 4-byte metadata copies (the 128-row, 4-stage ring
// takes 93 / 101 KB; sm_86 / sm_89 / sm_120 allow 99 KB), for either metadata form. The
// 64-row, 3-stage ring (< 48 KB) fits everywhere.
template <typename T, int NT, int STAGES, int BN, bool M16 = false>
bool launch_mma_cfg(const T* x, const T* v, const uint8_t* m, const T* b, T* y, int M, int N,
                    int K, const DeviceCaps& caps, cudaStream_t stream) {
  if (sparse24::mma_smem_bytes<NT, STAGES, BN>() > std::max(caps.max_smem_optin, 48 * 1024))
    return false;
  constexpr int smem = sparse24::mma_smem_bytes<NT, STAGES, BN, M16>();
  auto kernel = sparse24::sparse24_gemv_mma_kernel<T, NT, STAGES, BN, M16>;
  const int device = c10::cuda::current_device();
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), device, smem);
  const MmaGrid g = mma_grid(M, N, K, BN, NT, sparse24::kMmaKC, caps);
  // fp32 partial sums, freed after both launches (stream-ordered)
  const at::Tensor part = split_partials(g, M, N, at::kFloat, device);
  float* pp = g.splits > 1 ? part.data_ptr<float>() : nullptr;
  kernel<<<g.grid, 2 * BN, smem, stream>>>(x, v, m, b, y, M, N, K, g.cps, pp);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (g.splits > 1) {
    const int64_t outs = int64_t(M) * N;
    sparse24::sparse24_splitk_reduce_kernel<T>
        <<<static_cast<unsigned>((outs + 255) / 256), 256, 0, stream>>>(pp, g.splits, b, y, M, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return true;
}

template <typename T, int NT>
void launch_mma_nt(const T* x, const T* v, const uint8_t* m, const T* b, T* y, int M, int N,
                   int K, const DeviceCaps& caps, cudaStream_t stream) {
  bool done = false;
  switch (mma_shape_knob()) {
    case MmaShape::kBn64S3:
      break;
    case MmaShape::kBn64S4:
      done = launch_mma_cfg<T, NT, 4, 64>(x, v, m, b, y, M, N, K, caps, stream);
      break;
    case MmaShape::kBn128S3:
      done = launch_mma_cfg<T, NT, 3, 128>(x, v, m, b, y, M, N, K, caps, stream);
      break;
    case MmaShape::kBn128S4:
      // K % 128 == 0: the metadata as one 16-byte copy per row and chunk (M16);
      // TORCHQUANT_SP24_META=4 forces the four 4-byte copies (A/B, tests).
      done = K % 128 == 0 && env_int("TORCHQUANT_SP24_META") != 4
                 ? launch_mma_cfg<T, NT, 4, 128, true>(x, v, m, b, y, M, N, K, caps, stream)
                 : launch_mma_cfg<T, NT, 4, 128>(x, v, m, b, y, M, N, K, caps, stream);
      break;
  }
  if (!done) launch_mma_cfg<T, NT, 3, 64>(x, v, m, b, y, M, N, K, caps, stream);
}

at::Tensor sparse24_gemv_cuda(const at::Tensor& x_in, const at::Tensor& values_in,
                              const at::Tensor& meta_in, const c10::optional<at::Tensor>& bias,
                              c10::string_view kernel_sv) {
  const char* op = "sparse24_gemv";
  const GemvShape s = validate_sparse24_gemv(x_in, values_in, meta_in, bias);
  const std::string kernel(kernel_sv.data(), kernel_sv.size());
  check_kernel_name(kernel, {"fma", "mma", "wgmma"}, op, "CUDA");
  if (auto wg = wgmma_op_for(kernel, "torchquant::_sparse24_gemm_sm90a", x_in.get_device(), false,
                             s.M, s.N, s.K, op)) {
    return wg
        ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const c10::optional<at::Tensor>&)>()
        .call(x_in, values_in, meta_in, bias);
  }
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const DeviceCaps& caps = device_caps(x_in.get_device());

  GemvPath path;
  if (kernel == "fma") {
    path = GemvPath::kFma;
  } else if (kernel == "mma") {
    TORCH_CHECK(caps.cc() >= 80, op, ": kernel 'mma' needs sm_80 or newer (mma.sp), this device is sm_",
                caps.cc());
    TORCH_CHECK(s.K % 32 == 0, op, ": kernel 'mma' needs K % 32 == 0, got K = ", s.K,
                "; use 'fma' or 'auto'");
    path = GemvPath::kMma;
  } else {
    path = choose_gemv_kernel(caps, s.M, s.K);
  }

  // The kernels use 16-byte vector / cp.async loads; a view with a storage
  // offset may be less aligned than that: give it a fresh allocation.
  const at::Tensor x = aligned16(x_in) ? x_in : x_in.clone();
  const at::Tensor values = aligned16(values_in) ? values_in : values_in.clone();
  const at::Tensor meta = aligned16(meta_in) ? meta_in : meta_in.clone();

  at::Tensor y = at::empty({s.M, s.N}, x.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int M = static_cast<int>(s.M), N = static_cast<int>(s.N), K = static_cast<int>(s.K);
  dispatch_half_cuda(x.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = reinterpret_cast<const T*>(x.data_ptr());
    const T* vp = reinterpret_cast<const T*>(values.data_ptr());
    const uint8_t* mp = meta.data_ptr<uint8_t>();
    const T* bp = bias.has_value() ? reinterpret_cast<const T*>(bias->data_ptr()) : nullptr;
    T* yp = reinterpret_cast<T*>(y.data_ptr());
    if (path == GemvPath::kMma) {
      if (M <= 8) launch_mma_nt<T, 1>(xp, vp, mp, bp, yp, M, N, K, caps, stream);
      else launch_mma_nt<T, 2>(xp, vp, mp, bp, yp, M, N, K, caps, stream);
    } else if (K % 16 == 0) {
      launch_fma<T, true>(xp, vp, mp, bp, yp, M, N, K, caps, stream);
    } else {
      launch_fma<T, false>(xp, vp, mp, bp, yp, M, N, K, caps, stream);
    }
  });
  return y;
}

// -------------------------------------------------- sparse24_int8_matmul --
enum class Int8Path { kSimt, kGemv, kMma };

// Largest M the dp4a GEMV is picked for. H200, 2026-12-01, us, gemv / mma.sp:
// 28672x8192 M = 1 38.9 / 94.2, M = 2 42.7 / 91.6, M = 4 50.1 / 83.6, M = 8 78.6 / 66.2;
// 4096x4096 M = 1..8 6.1-10.9 / 14.6-16.0 (dense int8 on the same weight: 58.9 / 6.3 at M = 1).
// Rechecked after the mma.sp kernel's 128-row blocks, 256-K chunks and K split (2026-12-02d,
// us, gemv / mma.sp): 28672x8192 M = 2 41.8 / 51.7, M = 4 49.7 / 52.7, M = 8 78.9 / 52.6;
// 14336x4096 M = 4 16.3 / 16.4; 6144x4096 M = 4 8.7 / 11.0; but 4096x14336 M = 4 19.8 / 16.9.
constexpr int64_t kInt8GemvMaxM = 4;

// The one place that picks a sparse24_int8_matmul path for kernel="auto" (the sparse-wgmma
// GEMM where auto_takes_sparse_wgmma says so on sm_90 is picked before this, in sparse24_int8_matmul_cuda).
Int8Path choose_int8_kernel(const DeviceCaps& caps, int64_t M, int64_t K) {
  if (K % 32 == 0 && M <= kInt8GemvMaxM) return Int8Path::kGemv;
  // Tensor cores whenever they can run: the int8 mma.sp needs sm_80 and
  // consumes K in steps of 32. The CUDA-core kernel is the fallback for
  // K % 32 != 0 (it reads a_q bytewise: correct for any shape, not fast).
  if (caps.cc() >= 80 && K % 32 == 0) return Int8Path::kMma;
  return Int8Path::kSimt;
}

// The dp4a decode GEMV (sparse24_int8_gemv_kernel): MT rows of a_q per M tile,
// RW weight rows per warp: 2 at MT = 1, 4 at MT = 2, else 2. At M = 1 two rows per warp
// (37 registers) keep more warps and more of the weight in flight than four (H200,
// 2026-12-02, results/h200/2026-12-02_nvfp4_wgmma/call5_sp24_i8_rw.csv, us, RW = 4 / 2:
// 28672x8192 38.2 / 37.7, 128256x4096 80.0 / 78.4, 14336x4096 12.7 / 12.2, 4096x14336
// 16.1 / 13.1, 4096x4096 6.2 / 5.2).
template <typename OutT, int MT>
void launch_int8_gemv_mt(const int8_t* a, const int8_t* v, const uint8_t* m,
                         const sparse24::Int8Epilogue& ep, OutT* y, int M, int N, int K,
                         cudaStream_t stream, WeightWritten written) {
  constexpr int RW = MT == 2 ? 4 : 2;
  const unsigned gy = static_cast<unsigned>(std::min((M + MT - 1) / MT, 65535));
  const PdlMode pdl = pdl_mode(c10::cuda::current_device(), PdlKernel::kSp24Int8Gemv, written);  // common/pdl.h
  const int early = pdl.early ? 1 : 0;
  if constexpr (MT == 1) {
    // A/B knob: TORCHQUANT_SP24_FMA containing "i8w4" runs 4 weight rows per warp.
    if (sp24_knob("i8w4")) {
      launch_kernel(sparse24::sparse24_int8_gemv_kernel<OutT, 1, 4>, dim3((N + 31) / 32, gy),
                    dim3(256), 0, stream, pdl.on, a, v, m, ep, y, M, N, K, early);
      return;
    }
  }
  launch_kernel(sparse24::sparse24_int8_gemv_kernel<OutT, MT, RW>,
                dim3((N + 8 * RW - 1) / (8 * RW), gy), dim3(256), 0, stream, pdl.on, a, v, m, ep, y,
                M, N, K, early);
}

template <typename OutT>
void launch_int8_gemv(const int8_t* a, const int8_t* v, const uint8_t* m,
                      const sparse24::Int8Epilogue& ep, OutT* y, int M, int N, int K,
                      cudaStream_t stream, WeightWritten written) {
  if (M == 1) launch_int8_gemv_mt<OutT, 1>(a, v, m, ep, y, M, N, K, stream, written);
  else if (M == 2) launch_int8_gemv_mt<OutT, 2>(a, v, m, ep, y, M, N, K, stream, written);
  else if (M <= 4) launch_int8_gemv_mt<OutT, 4>(a, v, m, ep, y, M, N, K, stream, written);
  else launch_int8_gemv_mt<OutT, 8>(a, v, m, ep, y, M, N, K, stream, written);
}

// The int8 mma.sp kernel's launch shapes: BN weight rows per block, a STAGES-deep ring of
// KC-K chunks. TORCHQUANT_SP24_I8MMA = "bn64s3k128" (the only shape before 2026-12-02) |
// "bn128s4k128" | "bn128s3k256" | "bn128s4k256" forces one for M <= 16; unset: bn128s4k256
// (128 bytes of values per row and chunk, as the bf16 kernel's default). M > 16 (8 NT = 32 or
// 64 tokens per tile; the sparse wgmma GEMM takes M >= 64 on sm_90) keeps bn64s3k128, whose
// ring stays under the default 48 KB. With K % 128 == 0 the default stages metadata as 16-byte
// units (M16; TORCHQUANT_SP24_META=4 forces 4-byte copies, as in the bf16 kernel).
enum class I8MmaShape { kBn64S3K128, kBn128S4K128, kBn128S3K256, kBn128S4K256 };

I8MmaShape i8_mma_shape_knob() {
  return static_cast<I8MmaShape>(
      env_choice("TORCHQUANT_SP24_I8MMA",
                 {"bn64s3k128", "bn128s4k128", "bn128s3k256", "bn128s4k256"},
                 static_cast<int>(I8MmaShape::kBn128S4K256)));
}

// Launches one shape of the int8 mma.sp kernel, with the K split of mma_splits (the splits'
// exact int32 sums meet in sparse24_int8_splitk_reduce_kernel, which runs the epilogue);
// false (nothing launched) when the shape needs more shared memory than the device allows
// per block (the 128-row 4-stage 256-K ring: 97.5 - 107 KB, by NT and metadata form).
template <typename OutT, int NT, int STAGES, int BN, int KC, bool M16 = false>
bool launch_int8_mma_cfg(const int8_t* a, const int8_t* v, const uint8_t* m,
                         const sparse24::Int8Epilogue& ep, OutT* y, int M, int N, int K,
                         const DeviceCaps& caps, cudaStream_t stream) {
  constexpr int smem = sparse24::i8_smem_bytes<NT, STAGES, BN, KC, M16>();
  if (smem > std::max(caps.max_smem_optin, 48 * 1024)) return false;
  auto kernel = sparse24::sparse24_int8_mma_kernel<OutT, NT, STAGES, BN, KC, M16>;
  const int device = c10::cuda::current_device();
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), device, smem);
  const MmaGrid g = mma_grid(M, N, K, BN, NT, KC, caps);
  // int32 partial sums, freed after both launches (stream-ordered)
  const at::Tensor part = split_partials(g, M, N, at::kInt, device);
  int32_t* pp = g.splits > 1 ? part.data_ptr<int32_t>() : nullptr;
  kernel<<<g.grid, 2 * BN, smem, stream>>>(a, v, m, ep, y, M, N, K, g.cps, pp);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (g.splits > 1) {
    const int64_t outs = int64_t(M) * N;
    sparse24::sparse24_int8_splitk_reduce_kernel<OutT>
        <<<static_cast<unsigned>((outs + 255) / 256), 256, 0, stream>>>(pp, g.splits, ep, y, M,
                                                                         N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return true;
}

template <typename OutT, int NT>
void launch_int8_mma_nt(const int8_t* a, const int8_t* v, const uint8_t* m,
                        const sparse24::Int8Epilogue& ep, OutT* y, int M, int N, int K,
                        const DeviceCaps& caps, cudaStream_t stream) {
  static_assert(sparse24::i8_smem_bytes<NT, 3, 64, 128>() <= 48 * 1024,
                "the fallback ring fits the default 48 KB");
  bool done = false;
  if constexpr (NT <= 2) {
    switch (i8_mma_shape_knob()) {
      case I8MmaShape::kBn64S3K128:
        break;
      case I8MmaShape::kBn128S4K128:
        done = launch_int8_mma_cfg<OutT, NT, 4, 128, 128>(a, v, m, ep, y, M, N, K, caps, stream);
        break;
      case I8MmaShape::kBn128S3K256:
        done = launch_int8_mma_cfg<OutT, NT, 3, 128, 256>(a, v, m, ep, y, M, N, K, caps, stream);
        break;
      case I8MmaShape::kBn128S4K256:
        done = K % 128 == 0 && env_int("TORCHQUANT_SP24_META") != 4
                   ? launch_int8_mma_cfg<OutT, NT, 4, 128, 256, true>(a, v, m, ep, y, M, N, K,
                                                                      caps, stream)
                   : launch_int8_mma_cfg<OutT, NT, 4, 128, 256>(a, v, m, ep, y, M, N, K, caps,
                                                                stream);
        break;
    }
  }
  if (!done) launch_int8_mma_cfg<OutT, NT, 3, 64, 128>(a, v, m, ep, y, M, N, K, caps, stream);
}

at::Tensor sparse24_int8_matmul_cuda(const at::Tensor& a_q_in, const at::Tensor& a_scale,
                                     const c10::optional<at::Tensor>& a_zero,
                                     const at::Tensor& w_values_in, const at::Tensor& w_meta_in,
                                     const at::Tensor& w_scale,
                                     const c10::optional<at::Tensor>& w_colsum,
                                     const c10::optional<at::Tensor>& bias,
                                     c10::optional<at::ScalarType> out_dtype,
                                     c10::string_view kernel_sv, bool static_weight) {
  const char* op = "sparse24_int8_matmul";
  const Int8MatmulShape s = validate_sparse24_int8_matmul(a_q_in, a_scale, a_zero, w_values_in,
                                                          w_meta_in, w_scale, w_colsum, bias,
                                                          out_dtype);
  const std::string kernel(kernel_sv.data(), kernel_sv.size());
  check_kernel_name(kernel, {"simt", "gemv", "mma", "wgmma"}, op, "CUDA");
  if (auto wg = wgmma_op_for(kernel, "torchquant::_sparse24_int8_gemm_sm90a", a_q_in.get_device(),
                             true, s.M, s.N, s.K, op)) {
    return wg
        ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                           const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&,
                           c10::optional<at::ScalarType>)>()
        .call(a_q_in, a_scale, a_zero, w_values_in, w_meta_in, w_scale, w_colsum, bias,
              out_dtype);
  }
  const c10::cuda::CUDAGuard device_guard(a_q_in.device());
  const DeviceCaps& caps = device_caps(a_q_in.get_device());

  Int8Path path;
  if (kernel == "simt") {
    path = Int8Path::kSimt;
  } else if (kernel == "gemv") {
    TORCH_CHECK(s.K % 32 == 0, op, ": kernel 'gemv' needs K % 32 == 0, got K = ", s.K,
                "; use 'simt' or 'auto'");
    path = Int8Path::kGemv;
  } else if (kernel == "mma") {
    TORCH_CHECK(caps.cc() >= 80, op, ": kernel 'mma' needs sm_80 or newer (mma.sp), this device is sm_",
                caps.cc());
    TORCH_CHECK(s.K % 32 == 0, op, ": kernel 'mma' needs K % 32 == 0, got K = ", s.K,
                "; use 'simt' or 'auto'");
    path = Int8Path::kMma;
  } else {
    path = choose_int8_kernel(caps, s.M, s.K);
  }

  const at::Tensor a_q = aligned16(a_q_in) ? a_q_in : a_q_in.clone();
  const at::Tensor values = aligned16(w_values_in) ? w_values_in : w_values_in.clone();
  const at::Tensor meta = aligned16(w_meta_in) ? w_meta_in : w_meta_in.clone();

  // Epilogue operands as int8_matmul's CPU op prepares them: column sums of
  // the (kept) weight when a zero point needs them and none were given, bias
  // widened to fp32 (exact).
  at::Tensor colsum;
  if (a_zero.has_value())
    colsum = w_colsum.has_value() ? *w_colsum : at::sum(values, {1}, false, at::kInt).contiguous();
  at::Tensor bias_f;
  if (bias.has_value()) bias_f = bias->to(at::kFloat).contiguous();
  sparse24::Int8Epilogue ep;
  ep.a_scale = a_scale.data_ptr<float>();
  ep.a_scale_step = a_scale.numel() == 1 ? 0 : 1;
  ep.a_zero = a_zero.has_value() ? a_zero->data_ptr<int32_t>() : nullptr;
  ep.a_zero_step = a_zero.has_value() && a_zero->numel() == 1 ? 0 : 1;
  ep.w_scale = w_scale.data_ptr<float>();
  ep.w_scale_step = w_scale.numel() == 1 ? 0 : 1;
  ep.colsum = a_zero.has_value() ? colsum.data_ptr<int32_t>() : nullptr;
  ep.bias = bias.has_value() ? bias_f.data_ptr<float>() : nullptr;

  at::Tensor y = at::empty({s.M, s.N}, a_q.options().dtype(s.out_dtype));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int M = static_cast<int>(s.M), N = static_cast<int>(s.N), K = static_cast<int>(s.K);
  const int8_t* ap = a_q.data_ptr<int8_t>();
  const int8_t* vp = values.data_ptr<int8_t>();
  const uint8_t* mp = meta.data_ptr<uint8_t>();
  auto run = [&](auto tag) {
    using OutT = decltype(tag);
    OutT* yp = reinterpret_cast<OutT*>(y.data_ptr());
    if (path == Int8Path::kGemv) {
      // values / meta copied here for alignment were written just before: never loaded early
      const bool copied = values.data_ptr() != w_values_in.data_ptr() || meta.data_ptr() != w_meta_in.data_ptr();
      launch_int8_gemv<OutT>(ap, vp, mp, ep, yp, M, N, K, stream, weight_written(static_weight, copied));
    } else if (path == Int8Path::kMma) {
      // Tokens per block: the smallest of 8, 16, 32, 64 that covers M (64
      // beyond), so decode shapes stream the weight once per 8/16 tokens and
      // larger M reuse each weight tile for 64 tokens.
      if (M <= 8) launch_int8_mma_nt<OutT, 1>(ap, vp, mp, ep, yp, M, N, K, caps, stream);
      else if (M <= 16) launch_int8_mma_nt<OutT, 2>(ap, vp, mp, ep, yp, M, N, K, caps, stream);
      else if (M <= 32) launch_int8_mma_nt<OutT, 4>(ap, vp, mp, ep, yp, M, N, K, caps, stream);
      else launch_int8_mma_nt<OutT, 8>(ap, vp, mp, ep, yp, M, N, K, caps, stream);
    } else {
      const dim3 grid((N + 7) / 8, static_cast<unsigned>(std::min((M + 7) / 8, 65535)));
      sparse24::sparse24_int8_simt_kernel<OutT><<<grid, 256, 0, stream>>>(ap, vp, mp, ep, yp, M, N, K);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  };
  dispatch_float_cuda(s.out_dtype, op, run);
  return y;
}

}  // namespace
}  // namespace torchquant

TORCH_LIBRARY_IMPL(torchquant, CUDA, m) {
  m.impl("prune24", &torchquant::prune24_cuda);
  m.impl("compress24", &torchquant::compress24_cuda);
  m.impl("decompress24", &torchquant::decompress24_cuda);
  m.impl("sparse24_gemv", &torchquant::sparse24_gemv_cuda);
  m.impl("sparse24_int8_matmul", &torchquant::sparse24_int8_matmul_cuda);
}
