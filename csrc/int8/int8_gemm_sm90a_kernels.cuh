// Hopper (sm_90a) INT8 GEMM on wgmma with a fused dequantization epilogue.
//
// Computes, for the torchquant op _int8_gemm_sm90a (same semantics as int8_matmul):
//   acc[m,n] = sum_k a_q[m,k] * w_q[n,k]                       exact int32 (tensor cores)
//   y[m,n]   = float(acc - a_zero[m] * w_colsum[n]) * (a_scale[m] * w_scale[n]) + float(bias[n])
// with one int32 subtract, one fp32 product of the scales, one fp32 multiply and one fp32 add
// (__fmul_rn / __fadd_rn, never contracted to an FMA), rounded once to the output type.
//
// Launch assumptions (the host side in int8_gemm_sm90a.cu guarantees them):
//   * compute capability exactly 9.0, built for sm_90a (wgmma, setmaxnreg, TMA multicast);
//   * 384 threads = 3 warpgroups, one CTA per SM (128-200 KB of dynamic shared memory);
//   * a_q [M, K] and w_q [N, K] int8, row-major, K % 16 == 0, 16-byte aligned base: each is read
//     through a 2-D TMA tensor map whose box is 128 bytes of K by kBM (A) or kBN / kCM (B) rows,
//     with the 128-byte swizzle; out-of-bounds rows and the K tail are zero-filled by TMA, so the
//     tensor cores need no masks and only the epilogue's stores are masked;
//   * a persistent grid: CTA (or cluster) c takes work units c, c + gridDim, ... in a grouped
//     raster order (16 M tiles share each W column of tiles, so the W tile just fetched from HBM is
//     reused from L2 by the 16 CTAs working on the same N range at the same time);
//   * split-K when the tile grid alone cannot fill the GPU (p.splits > 1, chosen by the host): a
//     work unit is (split, tile unit), the split index running slowest so every tile of one split
//     runs at once (their A rows are shared through L2), and it covers the k-blocks
//     [split * kb_per_split, min(num_kb, (split + 1) * kb_per_split)) of its tile. With
//     p.splits == 1 the one split covers every k-block and the kernel is the plain one.
//
// CTA structure (warp specialization, as in CUTLASS's sm90 "cooperative" kernels):
//   warpgroup 0   producer: one thread issues the TMA loads of each k-block into a kStages-deep ring
//                 of shared-memory stages; registers given back with setmaxnreg.dec (40 per thread);
//   warpgroups 1,2 consumers: each owns 64 rows x kBN columns of the 128 x kBN tile; per k-block of
//                 128 bytes of K they issue 4 wgmma.m64n{kBN}k32 (A and B straight from shared
//                 memory through matrix descriptors), keep one wgmma group in flight, and release a
//                 stage as soon as the group that read it has retired; setmaxnreg.inc to 232.
//                 64-row tiles (kBM == 64, for grids of at most one wave): both read the same
//                 64 rows of A and each takes half of the tile's columns (m64n{kBN/2}k32), so
//                 the tensor cores never multiply rows that exist only as TMA's zero fill.
//   full[s]  (count 1 + TMA transaction bytes): producer arrive.expect_tx, TMA complete_tx;
//   empty[s] (count 8 * kCM): lane 0 of each of the 8 consumer warps of every CTA that reads
//            the bytes this CTA's producer writes (with multicast: both CTAs of the cluster).
//   Phases: stage s is used for the r-th time in round r; producers wait empty[s] for parity
//   (r & 1) ^ 1 (round 0 passes at once on the fresh barrier), consumers wait full[s] for r & 1.
//
// Memory pattern per k-block and CTA: A kBM x 128 B (16 or 8 KB) + B kBN x 128 B by TMA;
// with kCM == 2 the two CTAs of a cluster (two M tiles, same N tile) each load half of the W tile
// and multicast it to both, so each CTA pulls 32 KB instead of 48 KB from L2 per k-block.
// Shared memory per stage: [A kBM rows x 128 B][B kBN rows x 128 B], each row one 128-byte
// swizzle row (16-byte chunk j of row r stored at chunk j ^ (r % 8)), which is exactly the
// K-major SWIZZLE_128B canonical layout wgmma expects: descriptor stride (SBO) 1024 B between
// 8-row groups, LBO unused, and the k-th 32-byte K step selected by adding 32 * k bytes to the
// start address (the hardware applies the XOR on the final address bits).
// The epilogue goes from the accumulator registers straight to global memory: thread t of warp w
// (of a consumer warpgroup) holds rows 16 w + t / 4 and + 8, columns 8 j + 2 (t % 4) + {0, 1},
// so each store instruction writes 8 rows x 32 contiguous bytes (fp32) with streaming stores.
// Its operands are fetched at the start of each tile (latency hidden behind the k-loop): the two
// row scales / zero points per thread into registers, the tile's kBN column scales, column sums
// and biases one column per consumer thread, published through a double-buffered shared-memory
// block and one named barrier (id 1, the 256 consumer threads) just before the stores.
// Split-K epilogue (p.splits > 1): each consumer thread adds the accumulators it would store into
// the zeroed int32 workspace p.ws [M, N] (integer atomics, fire-and-forget RED: exact and
// order-free, so the result is bit-identical to the unsplit kernel), fences, and the 256 consumer
// threads count the split in on the tile's counter; only the CTA whose split arrives last reloads
// the complete sums from L2 and runs the normal epilogue, the others go on to their next unit.
// The first of the two consumer barriers of that handshake also publishes the column operands.
// Cluster K split (Cfg::kKS > 1; 64-row tiles, chosen by the host for small grids): a cluster of
// kKS CTAs works on one tile unit at a time, rank r streaming k-blocks [r num_kb / kKS,
// (r + 1) num_kb / kKS). After the k-loop each CTA stores its partial sums in its own shared
// memory, and each finishes the kKS-th of the tile's accumulator pairs it owns by adding the
// peers' partials read through distributed shared memory (splitk_cluster_reduce): no global
// workspace, no memset nodes, no atomics, and the same bits as the unsplit kernel.
#pragma once

#include <cuda.h>  // CUtensorMap (type only; nothing is linked from the driver)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/wgmma_operands.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TQ_SM90A_ENABLED 1
#endif

namespace torchquant {
namespace sm90a {

// ------------------------------------------------------------------ configuration --
// BN_: tile width in N (256, 128 or 64); STAGES_: pipeline depth; CM_: CTAs per cluster along M
// that share (multicast) the W tile (1 or 2); BM_: tile height, 128 (the two consumer warpgroups
// stack their 64 rows) or 64 (small M: both take the tile's 64 rows and split its columns, so no
// tensor-core work goes to the zero rows TMA fills past M); KS_: CTAs per cluster that split
// the tile's K range (1, 2, 4 or 8; 64-row tiles without multicast only): cluster rank r
// computes the partial sums of k-blocks [r * num_kb / KS_, (r + 1) * num_kb / KS_) and the KS_
// partials are added through distributed shared memory, each CTA finishing 1 / KS_ of the tile
// (no global workspace, no memset, no atomics; see the kernel header).
template <int BN_, int STAGES_, int CM_, int BM_ = 128, int KS_ = 1>
struct GemmConfig {
  static constexpr int kBM = BM_;
  static constexpr int kBN = BN_;
  static constexpr bool kSplitCols = BM_ == 64;
  // One consumer warpgroup's block of the tile: 64 rows x kWgN columns.
  static constexpr int kWgN = kSplitCols ? BN_ / 2 : BN_;
  static constexpr int kBK = 128;  // bytes of K per stage = one 128-byte swizzle row
  static constexpr int kStages = STAGES_;
  static constexpr int kCM = CM_;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerWarps = 8;
  static constexpr int kABytes = kBM * kBK;          // 16 KB (8 KB at kBM 64)
  static constexpr int kBBytes = kBN * kBK;          // 32 KB (kBN 256), 16 KB or 8 KB
  static constexpr int kBBoxRows = kBN / kCM;        // rows of W one CTA loads per stage
  static constexpr int kStageBytes = kABytes + kBBytes;  // bytes landing in one CTA per stage
  static constexpr int kAcc = kWgN / 2;              // int32 accumulators per consumer thread
  static constexpr int kKS = KS_;                    // CTAs splitting K in one cluster
  static constexpr int kCluster = kCM * kKS;         // CTAs per cluster
  // Layout after the 1024-byte aligned base: stages, then 2 x kStages mbarriers (+ the cluster
  // split's ready / free pair) in 128 or 256 reserved bytes, then two buffers of per-column
  // epilogue operands (3 x kBN x 4 bytes each), then the split-K "this CTA finishes the tile"
  // flag (16 bytes reserved), then (kKS > 1) this CTA's partial sums, kAcc int32 per consumer
  // thread.
  static constexpr int kBarrierOffset = kStages * kStageBytes;
  static constexpr int kBarrierUse = 2 * kStages * 8 + (kKS > 1 ? 16 : 0);
  static constexpr int kBarrierBytes = kBarrierUse <= 128 ? 128 : 256;
  static constexpr int kParamsOffset = kBarrierOffset + kBarrierBytes;
  static constexpr int kParamsBytes = 2 * 3 * kBN * 4;
  static constexpr int kFlagOffset = kParamsOffset + kParamsBytes;
  static constexpr int kPartOffset = kFlagOffset + 16;
  static constexpr int kPartBytes = kKS > 1 ? kAcc * 256 * 4 : 0;
  // 1024 of slack to round the dynamic shared memory base up to the 1024-byte swizzle atom.
  static constexpr int kSmemBytes = 1024 + kPartOffset + kPartBytes;
  static_assert(kBarrierUse <= kBarrierBytes, "barrier area");
  static_assert(kKS == 1 || kKS == 2 || kKS == 4 || kKS == 8, "cluster K split");
  static_assert(kKS == 1 || (kCM == 1 && kBM == 64), "cluster K split: 64-row tiles, no multicast");
  static_assert(kKS == 1 || (kAcc / 2) % kKS == 0, "cluster K split: pairs per thread");
  static_assert(kSmemBytes <= 227 * 1024, "sm_90 opt-in shared memory per block");
  static_assert(kBN == 64 || kBN == 128 || kBN == 256, "tile width");
  static_assert(kBM == 128 || kBM == 64, "tile height");
  static_assert(kWgN >= 32, "wgmma width");
  static_assert(kCM == 1 || kCM == 2, "cluster size");
  static_assert(kBBoxRows <= 256 && kBBoxRows % 8 == 0, "TMA box rows");
  static_assert(kStageBytes < (1 << 20), "mbarrier transaction count range");
};

// Everything the kernel needs besides the two tensor maps (passed by value).
struct GemmArgs {
  int M, N, K;
  int num_m_tiles;   // ceil(M / kBM)
  int num_n_tiles;   // ceil(N / kBN)
  int num_m_units;   // ceil(num_m_tiles / kCM): one tile unit = kCM M tiles x one N tile
  int num_units;     // work units: num_m_units * num_n_tiles tile units x splits
  int num_kb;        // ceil(K / 128)
  int group_units;   // raster group height, in tile units
  // Split-K: each tile unit's k-blocks are cut into `splits` ranges of kb_per_split (the last
  // one may be shorter, none is empty). splits == 1: kb_per_split == num_kb, ws / counters unused.
  int splits;
  int kb_per_split;
  int32_t* ws;       // [M, N] int32, zeroed (splits > 1 only)
  int* counters;     // one int per (M tile, N tile), index mt * num_n_tiles + nt, zeroed (idem)
  void* out;         // [M, N] row-major, OutT
  // Epilogue operands. Every pointer is valid (an absent operand points at a present one with
  // step 0, so the loads need no branches); the flags say whether to use them.
  const float* a_scale;
  const int32_t* a_zero;   // read only when has_zero
  const float* w_scale;
  const int32_t* colsum;   // any valid int32 when !has_zero (multiplied by z = 0)
  const float* bias;       // fp32; read but not added when !has_bias
  int a_scale_step;        // 0 when one element broadcasts (or the operand is absent), else 1
  int a_zero_step;
  int w_scale_step;
  int colsum_step;
  int bias_step;
  int has_zero;
  int has_bias;
  // 16-bit output and N % 8 == 0: the epilogue regroups each quad's pairs so that every lane
  // stores 8 consecutive outputs (16 bytes) of one row (epilogue_vec).
  int vec_store;
  // Rows of A per TMA box (a multiple of 8, <= kBM): round_up(M, 8) for a grid of one M tile
  // without multicast, else kBM (int8_gemm_sm90a.cu; TORCHQUANT_INT8_WGMMA_ABOX=0 keeps kBM). The
  // stage's rows past the box keep whatever an earlier stage left there; they feed only output
  // rows >= M, which are never stored (int8 has no NaN, and every row of the product depends on
  // its own A row only).
  int a_box_rows;
};

// ------------------------------------------------------------------ PTX wrappers --
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t num_clusters_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// Makes the mbarrier.init visible to the other CTAs of the cluster and to the async proxy (TMA).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// Spins until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "TQ_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra TQ_DONE;\n"
      "bra TQ_WAIT;\n"
      "TQ_DONE:\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Arrive on this CTA's barrier when `pred` (predicated, so the warp does not diverge).
__device__ __forceinline__ void mbar_arrive_local(uint32_t bar, uint32_t pred) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n"
      "@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar),
      "r"(pred)
      : "memory");
}

// Arrive on the barrier at the same shared-memory offset in CTA `cta` of the cluster. Default
// (.release.cta) semantics, as CUTLASS's ClusterBarrier does: what it publishes is that this warp's
// wgmma reads of the stage retired (wgmma.wait_group, program order); an explicit
// .release.cluster compiles to a MEMBAR.GPU before every arrival.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta, uint32_t pred) {
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 remote;\nsetp.ne.b32 p, %2, 0;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta), "r"(pred)
      : "memory");
}

// Cluster K split handshakes: one consumer thread, after a named barrier of all 256, fences at
// cluster scope once (publishing what the consumers wrote to, or read from, shared memory before
// that barrier) and then arrives on the peers' barriers (mbar_arrive_cluster: an explicit
// .release.cluster there would put a MEMBAR.GPU before every arrival); the wait acquires.
__device__ __forceinline__ void fence_acq_rel_cluster() {
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_wait_acquire_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "TQ_WAIT_CL:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra TQ_DONE_CL;\n"
      "bra TQ_WAIT_CL;\n"
      "TQ_DONE_CL:\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void st_shared_v2(uint32_t addr, int x, int y) {
  asm volatile("st.shared.v2.s32 [%0], {%1, %2};" ::"r"(addr), "r"(x), "r"(y) : "memory");
}

// Two int32 at the same shared-memory offset `addr` in CTA `cta` of the cluster.
__device__ __forceinline__ void ld_dsmem_v2(uint32_t addr, uint32_t cta, int& x, int& y) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %2, %3;\n"
      "ld.shared::cluster.v2.s32 {%0, %1}, [remote];\n}\n"
      : "=r"(x), "=r"(y)
      : "r"(addr), "r"(cta)
      : "memory");
}

// x += y as a volatile instruction: it cannot move past the barrier that follows it, so the
// loads it consumes have returned before that barrier.
__device__ __forceinline__ void add_in_order(int& x, int y) {
  asm volatile("add.s32 %0, %0, %1;" : "+r"(x) : "r"(y) : "memory");
}

__device__ __forceinline__ void prefetch_tmap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// 2-D TMA load of one box at (x = K offset in bytes, y = row) into this CTA's shared memory;
// completes `bytes of the box` transactions on `bar`.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// 4-D TMA load of one box at coordinates (c0, c1, c2, c3), innermost first, into this CTA's
// shared memory; completes the box's bytes on `bar` (the tiled fp8 weight's map:
// sm90a_host.h make_tmap_fp8_tiled).
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2,
                                            int c3, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

// Same, written to the same offset `dst` in every CTA of `mask` and completing on the barrier at
// offset `bar` in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int x,
                                                      int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Pins the accumulators: the compiler may not move their reads or writes across this point
// (wgmma writes them asynchronously, behind the compiler's back, until wgmma.wait_group).
template <int kN>
__device__ __forceinline__ void fence_acc(int (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// Shared-memory matrix descriptor for a K-major operand stored as 128-byte swizzled rows:
//   bits  0-13 start address >> 4, 16-29 leading byte offset >> 4 (unused with a swizzle: 1),
//   32-45 stride byte offset >> 4 (1024 B: the next group of 8 rows), 49-51 base offset (0: every
//   stage buffer is 1024-byte aligned), 62-63 swizzle mode (1 = 128-byte).
__device__ __forceinline__ uint64_t make_smem_desc(uint32_t saddr) {
  return static_cast<uint64_t>((saddr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// ------------------------------------------------------------------ stage ring --
// The TMA ring every sm_90a GEMM here shares (this one, the 2:4 one, the dequantizing one):
// kStages stages, each with a full barrier (1 producer arrival + the TMA bytes) and an empty
// barrier (kArrivals consumer-warp arrivals).

// Thread 0 initializes every barrier; all of them, in every CTA of the cluster, are
// initialized before anyone arrives on one.
template <int kStages, int kArrivals, int kCM>
__device__ __forceinline__ void init_ring_barriers(uint32_t bar_full, uint32_t bar_empty) {
  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, kArrivals);
    }
    fence_barrier_init();
  }
  if constexpr (kCM > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }
}

// Next stage; the phase parity flips each time the ring wraps.
template <int kStages>
__device__ __forceinline__ void ring_advance(int& stage, uint32_t& phase) {
  if (++stage == kStages) {
    stage = 0;
    phase ^= 1u;
  }
}

// One arrival per consumer warp (lane 0 signals) on the empty barrier of stage s (at
// bar_empty_s) of every CTA whose producer wrote into it: itself, and with multicast the peer.
template <int kCM>
__device__ __forceinline__ void release_stage(uint32_t bar_empty_s, uint32_t signal) {
  if constexpr (kCM > 1) {
#pragma unroll
    for (int r = 0; r < kCM; ++r) mbar_arrive_cluster(bar_empty_s, r, signal);
  } else {
    mbar_arrive_local(bar_empty_s, signal);
  }
}

// This CTA's box of the operand the cluster shares: multicast to all kCM CTAs, or a plain load.
template <int kCM>
__device__ __forceinline__ void tma_load_shared(uint32_t dst, const CUtensorMap* map, int x, int y,
                                                uint32_t bar) {
  if constexpr (kCM > 1) {
    tma_load_2d_multicast(dst, map, x, y, bar, static_cast<uint16_t>((1u << kCM) - 1u));
  } else {
    tma_load_2d(dst, map, x, y, bar);
  }
}

// ------------------------------------------------------------------ wgmma --
// D[64 x 256] (+)= A[64 x 32] * B[256 x 32]^T, s8 x s8 -> s32, A and B from shared memory
// (both K-major, 128-byte swizzle). accumulate == 0 overwrites D (the first k-step of a tile).
__device__ __forceinline__ void wgmma_m64n256k32_s8(int (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                  int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
      TQ_WG_D128 "}, "
      "%128, %129, p;\n}\n"
      : TQ_WG_ACC128("r")
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// D[64 x 128] (+)= A[64 x 32] * B[128 x 32]^T, s8 x s8 -> s32, A and B from shared memory
// (both K-major, 128-byte swizzle). accumulate == 0 overwrites D (the first k-step of a tile).
__device__ __forceinline__ void wgmma_m64n128k32_s8(int (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                  int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {"
      TQ_WG_D64 "}, "
      "%64, %65, p;\n}\n"
      : TQ_WG_ACC64("r")
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// D[64 x 64] and D[64 x 32]: the 64-row tiles' per-warpgroup halves.
__device__ __forceinline__ void wgmma_m64n64k32_s8(int (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                                 int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {"
      TQ_WG_D32 "}, "
      "%32, %33, p;\n}\n"
      : TQ_WG_ACC32("r")
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n32k32_s8(int (&d)[16], uint64_t desc_a, uint64_t desc_b,
                                                 int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 {"
      TQ_WG_D16 "}, "
      "%16, %17, p;\n}\n"
      : TQ_WG_ACC16("r")
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// Wgmma<N>::mma: D[64 x N] (+)= A[64 x 32] * B[N x 32]^T for the warpgroup width N.
template <int kN>
struct Wgmma;
template <>
struct Wgmma<256> {
  static __device__ __forceinline__ void mma(int (&d)[128], uint64_t a, uint64_t b, int acc) {
    wgmma_m64n256k32_s8(d, a, b, acc);
  }
};
template <>
struct Wgmma<128> {
  static __device__ __forceinline__ void mma(int (&d)[64], uint64_t a, uint64_t b, int acc) {
    wgmma_m64n128k32_s8(d, a, b, acc);
  }
};
template <>
struct Wgmma<64> {
  static __device__ __forceinline__ void mma(int (&d)[32], uint64_t a, uint64_t b, int acc) {
    wgmma_m64n64k32_s8(d, a, b, acc);
  }
};
template <>
struct Wgmma<32> {
  static __device__ __forceinline__ void mma(int (&d)[16], uint64_t a, uint64_t b, int acc) {
    wgmma_m64n32k32_s8(d, a, b, acc);
  }
};

// ------------------------------------------------------------------ tile order --
// Unit u -> (M unit, N tile) in groups of `group_units` M units: inside a group the M unit runs
// fastest, so consecutive units (running at the same time on neighbouring SMs) share one W tile
// and the group's A rows stay in L2 while the group walks across N.
__device__ __forceinline__ void unit_coords(int u, const GemmArgs& p, int& mu, int& nt) {
  const int per_group = p.group_units * p.num_n_tiles;
  const int g = u / per_group;
  const int first = g * p.group_units;
  const int rows = min(p.num_m_units - first, p.group_units);
  const int r = u - g * per_group;
  mu = first + r % rows;
  nt = r / rows;
}

// Work unit u -> (M unit, N tile) and its k-block range [kb_begin, kb_end). The split index is
// the slowest (u / tile_units), so the tile units of one split are consecutive. Producer and
// consumers call this with the same u and get the same answer. p.splits == 1 skips the division.
__device__ __forceinline__ void unit_work(int u, const GemmArgs& p, int tile_units, int& mu,
                                          int& nt, int& kb_begin, int& kb_end) {
  int split = 0;
  if (p.splits > 1) {
    split = u / tile_units;
    u -= split * tile_units;
  }
  unit_coords(u, p, mu, nt);
  kb_begin = split * p.kb_per_split;
  kb_end = min(p.num_kb, kb_begin + p.kb_per_split);
}

// ------------------------------------------------------------------ epilogue --
__device__ __forceinline__ void store_pair(float* p, float y0, float y1) {
  __stcs(reinterpret_cast<float2*>(p), make_float2(y0, y1));
}
__device__ __forceinline__ void store_one(float* p, float y) { __stcs(p, y); }
// Two outputs rounded to the 16-bit type (RNE) in one 32-bit word, y0 in the low half.
__device__ __forceinline__ uint32_t pack_out(const __half*, float y0, float y1) {
  return static_cast<uint32_t>(__half_as_ushort(__float2half_rn(y0))) |
         (static_cast<uint32_t>(__half_as_ushort(__float2half_rn(y1))) << 16);
}
__device__ __forceinline__ uint32_t pack_out(const __nv_bfloat16*, float y0, float y1) {
  return static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(y0))) |
         (static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(y1))) << 16);
}
__device__ __forceinline__ void store_pair(__half* p, float y0, float y1) {
  __stcs(reinterpret_cast<unsigned int*>(p), pack_out(p, y0, y1));
}
__device__ __forceinline__ void store_one(__half* p, float y) {
  __stcs(reinterpret_cast<unsigned short*>(p), __half_as_ushort(__float2half_rn(y)));
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* p, float y0, float y1) {
  __stcs(reinterpret_cast<unsigned int*>(p), pack_out(p, y0, y1));
}
__device__ __forceinline__ void store_one(__nv_bfloat16* p, float y) {
  __stcs(reinterpret_cast<unsigned short*>(p), __bfloat16_as_ushort(__float2bfloat16_rn(y)));
}

// The contract's epilogue for one element, in its order: int32 subtract (z = 0 when symmetric),
// fp32 scale product, fp32 multiply, fp32 add (only with a bias: adding +0.0f would turn -0.0
// into +0.0).
__device__ __forceinline__ float dequant(int acc, int z, int cs, float as, float ws, float b,
                                         bool has_bias) {
  const int c = acc - z * cs;
  float y = __fmul_rn(__int2float_rn(c), __fmul_rn(as, ws));
  if (has_bias) y = __fadd_rn(y, b);
  return y;
}

// Per-row epilogue operands of one consumer thread (its rows r0 and r0 + 8).
struct RowParams {
  float as0, as1;
  int z0, z1;
};

// Per-column epilogue operands of one tile, staged in shared memory: w_scale, colsum, bias for
// the kBN columns n_base + [0, kBN) (clamped to N - 1 past the edge).
template <int kBN>
struct ColParams {
  float w_scale[kBN];
  int colsum[kBN];
  float bias[kBN];
};

// Writes the 64 x kW accumulator block of one consumer warpgroup: rows r0 (this thread's first
// row; the second is r0 + 8), columns n_base + [0, kW), masked against M and N; their column
// operands are cp's entries c0 + [0, kW) (c0: the block's first column within the kBN-wide tile,
// nonzero only for the second warpgroup of a 64-row tile). kPairs (N even):
// every row starts 8-byte (fp32) / 4-byte (16-bit) aligned and a pair (c, c + 1) with c even never
// straddles the end of a row, so each pair is one vector store. Column operands come from shared
// memory as 8-byte pairs (the 4 lanes of a row group read 4 distinct pairs: no bank conflict).
// kKS > 1 (cluster K split): this CTA stores only the pairs q = 2 j + (second row) with
// q % kKS == krank, whose complete sums acc holds.
template <class OutT, int kW, int kBN, bool kPairs, int kKS = 1>
__device__ __forceinline__ void epilogue(const int (&acc)[kW / 2], const ColParams<kBN>& cp,
                                         int c0, const RowParams& rp, const GemmArgs& p, int r0,
                                         int n_base, int lane, int krank = 0) {
  const int r1 = r0 + 8;
  const bool in0 = r0 < p.M, in1 = r1 < p.M;
  const bool has_bias = p.has_bias != 0;
  const int cl = 2 * (lane & 3);
  // Row pointers at this lane's first column: every store below is base + a constant offset.
  OutT* const out0 =
      static_cast<OutT*>(p.out) + (static_cast<int64_t>(min(r0, p.M - 1)) * p.N + n_base + cl);
  OutT* const out1 =
      static_cast<OutT*>(p.out) + (static_cast<int64_t>(min(r1, p.M - 1)) * p.N + n_base + cl);
#pragma unroll
  for (int j = 0; j < kW / 8; ++j) {
    const bool ok0 = in0 && (kKS == 1 || (2 * j) % kKS == krank);
    const bool ok1 = in1 && (kKS == 1 || (2 * j + 1) % kKS == krank);
    const int l = cl + 8 * j;  // column within the block (even)
    const int c = n_base + l;
    const float2 ws = *reinterpret_cast<const float2*>(&cp.w_scale[c0 + l]);
    const int2 cs = *reinterpret_cast<const int2*>(&cp.colsum[c0 + l]);
    const float2 bs = *reinterpret_cast<const float2*>(&cp.bias[c0 + l]);
    const float y00 = dequant(acc[4 * j + 0], rp.z0, cs.x, rp.as0, ws.x, bs.x, has_bias);
    const float y01 = dequant(acc[4 * j + 1], rp.z0, cs.y, rp.as0, ws.y, bs.y, has_bias);
    const float y10 = dequant(acc[4 * j + 2], rp.z1, cs.x, rp.as1, ws.x, bs.x, has_bias);
    const float y11 = dequant(acc[4 * j + 3], rp.z1, cs.y, rp.as1, ws.y, bs.y, has_bias);
    if constexpr (kPairs) {
      if (c < p.N) {
        if (ok0) store_pair(out0 + 8 * j, y00, y01);
        if (ok1) store_pair(out1 + 8 * j, y10, y11);
      }
    } else {
      if (c < p.N) {
        if (ok0) store_one(out0 + 8 * j, y00);
        if (ok1) store_one(out1 + 8 * j, y10);
      }
      if (c + 1 < p.N) {
        if (ok0) store_one(out0 + 8 * j + 1, y01);
        if (ok1) store_one(out1 + 8 * j + 1, y11);
      }
    }
  }
}

// 4 x 4 transpose of 32-bit words across groups of 4 lanes kLo apart (lanes b + kLo i, i =
// 0..3, b with bits kLo and 2 kLo clear): on entry the lane with index i = (lane / kLo) % 4
// holds x[s] = X_i[s], on exit x[s] = X_s[i]. Two butterfly rounds (lane distance kLo, then
// 2 kLo); in each, a lane keeps the words whose index agrees with its own in that bit and swaps
// the others with its partner. All 32 lanes must call it. kLo = 1: the 4 lanes of a quad.
template <int kLo>
__device__ __forceinline__ void lane_transpose4(uint32_t (&x)[4], int i) {
#pragma unroll
  for (int m = 1; m <= 2; m <<= 1) {
    const bool hi = (i & m) != 0;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      if (s & m) continue;
      const uint32_t send = hi ? x[s] : x[s | m];
      const uint32_t recv = __shfl_xor_sync(0xffffffffu, send, m * kLo);
      if (hi) {
        x[s] = recv;
      } else {
        x[s | m] = recv;
      }
    }
  }
}

// epilogue() for 16-bit outputs when N % 8 == 0 (p.vec_store), same values and bits. There the
// 4 lanes of a quad each hold one 4-byte pair of the same 8 columns (16 bytes) of a row, so each
// store instruction writes half of every 32-byte sector it touches (Nsight Compute, 128 x 128
// tiles at 2048 x 2048 x 768: 16 of 32 bytes per sector used). Here the pairs of 4 consecutive
// column groups j = 4q .. 4q + 3 are transposed across the quad (lane_transpose4<1>), so lane t holds
// all 8 columns of group 4q + t and stores them with one 16-byte store: a warp instruction covers
// 64 contiguous bytes of each of its 8 rows, whole sectors. N % 8 == 0 keeps every group wholly
// inside or outside the row and every row start 16-byte aligned (the output is a fresh
// allocation). kKS > 1: group j of row r0 / r1 is stored by the rank that owns pair 2 j / 2 j + 1,
// whose acc holds complete sums for that pair in every lane.
template <class OutT, int kW, int kBN, int kKS = 1>
__device__ __forceinline__ void epilogue_vec(const int (&acc)[kW / 2], const ColParams<kBN>& cp,
                                             int c0, const RowParams& rp, const GemmArgs& p,
                                             int r0, int n_base, int lane, int krank = 0) {
  static_assert(sizeof(OutT) == 2 && kW % 32 == 0, "16-bit output, whole quad groups");
  const int r1 = r0 + 8;
  const bool in0 = r0 < p.M, in1 = r1 < p.M;
  const bool has_bias = p.has_bias != 0;
  const int t = lane & 3;
  const int cl = 2 * t;
  OutT* const out0 =
      static_cast<OutT*>(p.out) + (static_cast<int64_t>(min(r0, p.M - 1)) * p.N + n_base);
  OutT* const out1 =
      static_cast<OutT*>(p.out) + (static_cast<int64_t>(min(r1, p.M - 1)) * p.N + n_base);
#pragma unroll
  for (int q = 0; q < kW / 32; ++q) {
    uint32_t v0[4], v1[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int j = 4 * q + s;
      const int l = cl + 8 * j;
      const float2 ws = *reinterpret_cast<const float2*>(&cp.w_scale[c0 + l]);
      const int2 cs = *reinterpret_cast<const int2*>(&cp.colsum[c0 + l]);
      const float2 bs = *reinterpret_cast<const float2*>(&cp.bias[c0 + l]);
      v0[s] = pack_out(out0, dequant(acc[4 * j + 0], rp.z0, cs.x, rp.as0, ws.x, bs.x, has_bias),
                       dequant(acc[4 * j + 1], rp.z0, cs.y, rp.as0, ws.y, bs.y, has_bias));
      v1[s] = pack_out(out0, dequant(acc[4 * j + 2], rp.z1, cs.x, rp.as1, ws.x, bs.x, has_bias),
                       dequant(acc[4 * j + 3], rp.z1, cs.y, rp.as1, ws.y, bs.y, has_bias));
    }
    lane_transpose4<1>(v0, t);
    lane_transpose4<1>(v1, t);
    const int j = 4 * q + t;  // the column group this lane now holds in full
    const bool ok0 = in0 && (kKS == 1 || (2 * j) % kKS == krank);
    const bool ok1 = in1 && (kKS == 1 || (2 * j + 1) % kKS == krank);
    if (n_base + 8 * j < p.N) {
      if (ok0) __stcs(reinterpret_cast<uint4*>(out0 + 8 * j), make_uint4(v0[0], v0[1], v0[2], v0[3]));
      if (ok1) __stcs(reinterpret_cast<uint4*>(out1 + 8 * j), make_uint4(v1[0], v1[1], v1[2], v1[3]));
    }
  }
}

// Named barrier 1 over the 256 consumer threads (the producer warpgroup never joins it).
__device__ __forceinline__ void consumer_bar_sync() {
  asm volatile("barrier.sync 1, 256;" ::: "memory");
}

// ------------------------------------------------------------------ split-K --
// p[0] += v (relaxed, gpu scope) when `on`; no value comes back, so it is a fire-and-forget
// REDG. (atomicAdd with its result unused compiled to ATOMG here, and with a branch per element.)
__device__ __forceinline__ void red_add_if(int32_t* p, int v, bool on) {
  asm volatile(
      "{\n.reg .pred q;\nsetp.ne.b32 q, %2, 0;\n"
      "@q red.relaxed.gpu.global.add.s32 [%0], %1;\n}\n" ::"l"(p),
      "r"(v), "r"(static_cast<int>(on))
      : "memory");
}

// Adds this thread's accumulators (a 64 x kW warpgroup block) into the workspace: exactly the
// elements epilogue() would store (rows r0, r0 + 8; columns n_base + 8 j + 2 (lane % 4) + {0, 1};
// masked against M and N) with integer adds, each a fire-and-forget RED to L2.
template <int kW>
__device__ __forceinline__ void splitk_add(const int (&acc)[kW / 2], const GemmArgs& p, int r0,
                                           int n_base, int lane) {
  const int r1 = r0 + 8;
  const bool ok0 = r0 < p.M, ok1 = r1 < p.M;
  const int cl = 2 * (lane & 3);
  int32_t* const ws0 = p.ws + (static_cast<int64_t>(min(r0, p.M - 1)) * p.N + n_base + cl);
  int32_t* const ws1 = p.ws + (static_cast<int64_t>(min(r1, p.M - 1)) * p.N + n_base + cl);
#pragma unroll
  for (int j = 0; j < kW / 8; ++j) {
    const int c = n_base + cl + 8 * j;
    const bool c0 = c < p.N, c1 = c + 1 < p.N;
    red_add_if(ws0 + 8 * j, acc[4 * j + 0], ok0 && c0);
    red_add_if(ws0 + 8 * j + 1, acc[4 * j + 1], ok0 && c1);
    red_add_if(ws1 + 8 * j, acc[4 * j + 2], ok1 && c0);
    red_add_if(ws1 + 8 * j + 1, acc[4 * j + 3], ok1 && c1);
  }
}

// The 256 consumer threads count this split of the tile in; true in the CTA whose split is the
// last to arrive (that one finishes the tile), the same answer in every consumer thread. Every
// thread's adds are made visible device-wide (__threadfence) before the barrier after which one
// thread bumps the counter; the CTA that sees splits - 1 then orders its reloads after the count
// (the second fence). The first barrier also publishes whatever the consumers wrote to shared
// memory before the call (the tile's column operands).
// s_flag reuse: it is rewritten for the next unit only after that unit's first barrier, which
// every consumer thread reaches after reading it here (the flag is uniform, so all 256 take the
// same path to it): no third barrier is needed.
__device__ __forceinline__ bool splitk_consumers_last(int* counter, int splits, int* s_flag,
                                                      bool leader) {
  __threadfence();
  consumer_bar_sync();
  if (leader) *s_flag = (atomicAdd(counter, 1) == splits - 1) ? 1 : 0;
  consumer_bar_sync();
  const bool last = *s_flag != 0;
  if (last) __threadfence();  // acquire: order the reloads below after the count
  return last;
}

// The last split reloads the complete sums of its elements (ld.cg: from L2, never a stale L1
// line); elements outside M x N, which the epilogue does not store, are 0.
template <int kW>
__device__ __forceinline__ void splitk_reload(int (&acc)[kW / 2], const GemmArgs& p, int r0,
                                              int n_base, int lane) {
  const int r1 = r0 + 8;
  const bool ok0 = r0 < p.M, ok1 = r1 < p.M;
  const int cl = 2 * (lane & 3);
  const int32_t* const ws0 = p.ws + (static_cast<int64_t>(min(r0, p.M - 1)) * p.N + n_base + cl);
  const int32_t* const ws1 = p.ws + (static_cast<int64_t>(min(r1, p.M - 1)) * p.N + n_base + cl);
#pragma unroll
  for (int j = 0; j < kW / 8; ++j) {
    const int c = n_base + cl + 8 * j;
    const bool c0 = c < p.N, c1 = c + 1 < p.N;
    acc[4 * j + 0] = ok0 && c0 ? __ldcg(ws0 + 8 * j) : 0;
    acc[4 * j + 1] = ok0 && c1 ? __ldcg(ws0 + 8 * j + 1) : 0;
    acc[4 * j + 2] = ok1 && c0 ? __ldcg(ws1 + 8 * j) : 0;
    acc[4 * j + 3] = ok1 && c1 ? __ldcg(ws1 + 8 * j + 1) : 0;
  }
}

// Cluster K split (kKS > 1): the kKS CTAs of a cluster hold partial sums of the same tile over
// disjoint k-block ranges. Each consumer thread stores its kAcc partials as kAcc / 2 int32 pairs
// in this CTA's partial buffer (pair q at part + q * 2048 + 8 ct: conflict-free), the CTAs
// signal each other (ready), and each CTA then owns the pairs q with q % kKS == krank: it reads
// the other kKS - 1 partials of those pairs from its peers' buffers through distributed shared
// memory and adds them to its own (int32: exact and order-free, bit-identical to the unsplit
// kernel), then tells the peers it is done reading (free). A CTA overwrites its buffer for the
// next unit only after every peer has said so. acc's owned pairs hold the complete sums after
// the call; the first consumer barrier also publishes the tile's column operands.
template <class Cfg>
__device__ __forceinline__ void splitk_cluster_reduce(int (&acc)[Cfg::kAcc], uint32_t part,
                                                      uint32_t bar_ready, uint32_t bar_free,
                                                      int iter, int ct, int krank) {
  constexpr int kKS = Cfg::kKS;
  constexpr int kPairs = Cfg::kAcc / 2;
  constexpr int kOwn = kPairs / kKS;  // pairs this CTA finishes, per consumer thread
  const uint32_t mine = part + 8u * static_cast<uint32_t>(ct);
  mbar_wait_acquire_cluster(bar_free, static_cast<uint32_t>(iter & 1) ^ 1u);
#pragma unroll
  for (int q = 0; q < kPairs; ++q) st_shared_v2(mine + 2048u * q, acc[2 * q], acc[2 * q + 1]);
  consumer_bar_sync();
  if (ct == 0) {
    fence_acq_rel_cluster();
#pragma unroll
    for (int d = 1; d < kKS; ++d) {
      mbar_arrive_cluster(bar_ready, static_cast<uint32_t>((krank + d) % kKS), 1u);
    }
  }
  mbar_wait_acquire_cluster(bar_ready, static_cast<uint32_t>(iter & 1));
  // Every load is issued before the first add consumes one (the adds are volatile and ordered
  // after the loads), so the kKS - 1 remote round trips overlap.
  int tx[kOwn][kKS - 1], ty[kOwn][kKS - 1];
#pragma unroll
  for (int q = 0; q < kPairs; ++q) {
    if (q % kKS == krank) {
#pragma unroll
      for (int d = 1; d < kKS; ++d) {
        ld_dsmem_v2(mine + 2048u * q, static_cast<uint32_t>((krank + d) % kKS),
                    tx[q / kKS][d - 1], ty[q / kKS][d - 1]);
      }
    }
  }
#pragma unroll
  for (int q = 0; q < kPairs; ++q) {
    if (q % kKS == krank) {
#pragma unroll
      for (int d = 1; d < kKS; ++d) {
        add_in_order(acc[2 * q], tx[q / kKS][d - 1]);
        add_in_order(acc[2 * q + 1], ty[q / kKS][d - 1]);
      }
    }
  }
  // Every consumer thread's reads of the peers' buffers have returned (the adds above ran).
  consumer_bar_sync();
  if (ct == 0) {
    fence_acq_rel_cluster();
#pragma unroll
    for (int d = 1; d < kKS; ++d) {
      mbar_arrive_cluster(bar_free, static_cast<uint32_t>((krank + d) % kKS), 1u);
    }
  }
}

// ------------------------------------------------------------------ kernel --
template <class Cfg, class OutT>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    int8_gemm_sm90a_kernel(const __grid_constant__ CUtensorMap tmap_a,
                           const __grid_constant__ CUtensorMap tmap_b, const GemmArgs p) {
#if defined(TQ_SM90A_ENABLED)
  constexpr int kStages = Cfg::kStages;
  constexpr int kCM = Cfg::kCM;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Same rounding in every CTA of a cluster, so a multicast lands at the same offsets.
  const uint32_t smem = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t sA = smem;                                  // kStages x [128 x 128 B]
  const uint32_t sB = sA + kStages * Cfg::kABytes;           // kStages x [kBN x 128 B]
  const uint32_t bar_full = smem + Cfg::kBarrierOffset;      // kStages x 8 B
  const uint32_t bar_empty = bar_full + kStages * 8;         // kStages x 8 B
  const uint32_t bar_ready = bar_empty + kStages * 8;        // cluster K split only
  const uint32_t bar_free = bar_ready + 8;                   // idem
  constexpr int kCluster = Cfg::kCluster;
  constexpr int kKS = Cfg::kKS;

  const int wg = threadIdx.x / 128;
  const uint32_t rank = kCM > 1 ? cluster_ctarank() : 0u;  // multicast rank
  const int krank = kKS > 1 ? static_cast<int>(cluster_ctarank()) : 0;  // K split rank
  const int cluster =
      kCluster > 1 ? static_cast<int>(cluster_id_x()) : static_cast<int>(blockIdx.x);
  const int nclusters =
      kCluster > 1 ? static_cast<int>(num_clusters_x()) : static_cast<int>(gridDim.x);
  const int tile_units = p.num_m_units * p.num_n_tiles;  // work units per split

  // Every barrier of every CTA in the cluster is initialized before anyone arrives on it.
  if constexpr (kKS > 1) {
    if (threadIdx.x == 0) {  // fenced with the ring's barriers by init_ring_barriers
      mbar_init(bar_ready, kKS - 1);
      mbar_init(bar_free, kKS - 1);
    }
  }
  init_ring_barriers<kStages, Cfg::kConsumerWarps * kCM, kCluster>(bar_full, bar_empty);

  if (wg == 0) {
    // ---------------------------------------------------------------- producer --
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmap_a);
      prefetch_tmap(&tmap_b);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cluster; u < p.num_units; u += nclusters) {
        int mu, nt, kb_begin, kb_end;
        unit_work(u, p, tile_units, mu, nt, kb_begin, kb_end);
        if constexpr (kKS > 1) {  // this rank's share of the tile's k-blocks (p.splits == 1)
          kb_begin = krank * p.num_kb / kKS;
          kb_end = (krank + 1) * p.num_kb / kKS;
        }
        const int mt = mu * kCM + static_cast<int>(rank);
        // A box of a padding M tile (past the last one, only when kCM == 2 and the tile count
        // is odd) or a W half past N would be wholly out of bounds; it is pointed at row 0
        // instead (real bytes, same transaction count); those rows and columns are never stored.
        const int a_row = mt < p.num_m_tiles ? mt * Cfg::kBM : 0;
        int b_row = nt * Cfg::kBN + static_cast<int>(rank) * Cfg::kBBoxRows;
        if (b_row >= p.N) b_row = 0;
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
          const uint32_t full = bar_full + 8 * stage;
          // Every CTA's full barrier receives its own A box (a_box_rows x 128 B; kABytes unless
          // the box is cut to the rows of M) and all kCM W boxes (kBBytes).
          mbar_arrive_expect_tx(full, static_cast<uint32_t>(p.a_box_rows * Cfg::kBK + Cfg::kBBytes));
          tma_load_2d(sA + stage * Cfg::kABytes, &tmap_a, kb * Cfg::kBK, a_row, full);
          const uint32_t b_dst = sB + stage * Cfg::kBBytes + rank * (Cfg::kBBoxRows * Cfg::kBK);
          tma_load_shared<kCM>(b_dst, &tmap_b, kb * Cfg::kBK, b_row, full);
          ring_advance<kStages>(stage, phase);
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers --
    setmaxnreg_inc<232>();
    // Consumer warpgroup cw owns rows [64 cw, 64 cw + 64) of a 128-row tile, or columns
    // [kWgN cw, kWgN cw + kWgN) of a 64-row one.
    const int cw = wg - 1;
    constexpr bool kSplitCols = Cfg::kSplitCols;
    const int c0 = kSplitCols ? cw * Cfg::kWgN : 0;  // first column of its block in the tile
    const int warp = (threadIdx.x / 32) % 4;  // 16-row slice of the warpgroup's 64 rows
    const int lane = threadIdx.x % 32;
    const uint32_t signal = lane == 0;
    int acc[Cfg::kAcc];
#pragma unroll
    for (int i = 0; i < Cfg::kAcc; ++i) acc[i] = 0;

    // One arrival per consumer warp on empty[s] of every CTA whose producer wrote into stage s
    // of this CTA (itself, and with multicast the peer too).
    auto release = [&](int s) { release_stage<kCM>(bar_empty + 8 * s, signal); };

    // Column operands: consumer thread ct (0..255) fetches column ct of each tile (kBN <= 256).
    const int ct = static_cast<int>(threadIdx.x) - 128;
    ColParams<Cfg::kBN>* const col_bufs = reinterpret_cast<ColParams<Cfg::kBN>*>(
        smem_raw + (smem - smem_u32(smem_raw)) + Cfg::kParamsOffset);
    int* const s_last = reinterpret_cast<int*>(smem_raw + (smem - smem_u32(smem_raw)) +
                                               Cfg::kFlagOffset);  // split-K only

    int stage = 0;
    uint32_t phase = 0;
    int iter = 0;
    for (int u = cluster; u < p.num_units; u += nclusters, ++iter) {
      int mu, nt, kb_begin, kb_end;
      unit_work(u, p, tile_units, mu, nt, kb_begin, kb_end);
      if constexpr (kKS > 1) {
        kb_begin = krank * p.num_kb / kKS;
        kb_end = (krank + 1) * p.num_kb / kKS;
      }
      const int mt = mu * kCM + static_cast<int>(rank);
      const int n_base = nt * Cfg::kBN;  // the tile's first column
      const int r0 = mt * Cfg::kBM + (kSplitCols ? 0 : cw * 64) + warp * 16 + (lane >> 2);
      const int tile_id = mt * p.num_n_tiles + nt;  // split-K counter index

      // Epilogue operands are fetched now (clamped indices, always in bounds) and only used
      // after the k-loop, so their latency hides behind the tensor-core work.
      float col_ws = 0.f, col_b = 0.f;
      int col_cs = 0;
      if (ct < Cfg::kBN) {
        const int64_t cc = min(n_base + ct, p.N - 1);
        col_ws = __ldg(p.w_scale + cc * p.w_scale_step);
        col_cs = __ldg(p.colsum + cc * p.colsum_step);
        col_b = __ldg(p.bias + cc * p.bias_step);
      }
      RowParams rp;
      {
        const int64_t rc0 = min(r0, p.M - 1), rc1 = min(r0 + 8, p.M - 1);
        rp.as0 = __ldg(p.a_scale + rc0 * p.a_scale_step);
        rp.as1 = __ldg(p.a_scale + rc1 * p.a_scale_step);
        rp.z0 = p.has_zero ? __ldg(p.a_zero + rc0 * p.a_zero_step) : 0;
        rp.z1 = p.has_zero ? __ldg(p.a_zero + rc1 * p.a_zero_step) : 0;
      }

      // i counts this unit's k-blocks from 0 (the consumers need no absolute k-block index):
      // i == 0 overwrites the accumulators and has no previous stage to release.
      const int nkb = kb_end - kb_begin;
      int prev = 0;
      for (int i = 0; i < nkb; ++i) {
        mbar_wait(bar_full + 8 * stage, phase);
        __syncwarp();  // reconverge after the spin before the .aligned wgmma instructions
        const uint32_t a0 = sA + stage * Cfg::kABytes + (kSplitCols ? 0 : cw * (64 * Cfg::kBK));
        const uint32_t b0 = sB + stage * Cfg::kBBytes + (kSplitCols ? c0 * Cfg::kBK : 0);
        fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < Cfg::kBK / 32; ++kk) {
          Wgmma<Cfg::kWgN>::mma(acc, make_smem_desc(a0 + 32 * kk), make_smem_desc(b0 + 32 * kk),
                               (i | kk) != 0);
        }
        wgmma_commit();
        fence_acc(acc);
        if (i > 0) {
          // The group of the previous k-block has retired: its stage can be refilled.
          wgmma_wait<1>();
          fence_acc(acc);
          release(prev);
        }
        prev = stage;
        ring_advance<kStages>(stage, phase);
      }
      if constexpr (kKS > 1) {
        if (nkb > 0) {
          wgmma_wait<0>();
          fence_acc(acc);
          release(prev);
        } else {  // an empty k range (num_kb < kKS; the host avoids it): a zero partial
#pragma unroll
          for (int r = 0; r < Cfg::kAcc; ++r) acc[r] = 0;
        }
      } else {
        wgmma_wait<0>();
        fence_acc(acc);
        release(prev);
      }
      // Publish this tile's column operands. Double-buffered by unit parity: a thread still
      // reading the previous unit's buffer in its epilogue reads the other one; the buffer
      // written here was last read two units ago, before every consumer passed the previous
      // unit's first barrier (every unit has one, split or not, after these writes).
      ColParams<Cfg::kBN>& cp = col_bufs[iter & 1];
      if (ct < Cfg::kBN) {
        cp.w_scale[ct] = col_ws;
        cp.colsum[ct] = col_cs;
        cp.bias[ct] = col_b;
      }
      if constexpr (kKS > 1) {
        // Cluster K split: the partials meet in distributed shared memory; this CTA finishes
        // its share of the tile's pairs. Its first barrier publishes the column operands.
        splitk_cluster_reduce<Cfg>(acc, smem + Cfg::kPartOffset, bar_ready, bar_free, iter, ct,
                                   krank);
      } else if (p.splits > 1) {
        // Split-K: add the partial; the split that arrives last finishes the tile. The first
        // barrier inside splitk_consumers_last publishes the column operands written above.
        splitk_add<Cfg::kWgN>(acc, p, r0, n_base + c0, lane);
        if (!splitk_consumers_last(p.counters + tile_id, p.splits, s_last, ct == 0)) {
          continue;  // not the last split: next unit (never return: persistent, cluster_sync)
        }
        splitk_reload<Cfg::kWgN>(acc, p, r0, n_base + c0, lane);
      } else {
        consumer_bar_sync();
      }
      // The producer is already filling stages for the next unit while this runs.
      const bool vec = sizeof(OutT) == 2 && p.vec_store != 0;  // host: 16-bit out, N % 8 == 0
      if (vec) {
        if constexpr (sizeof(OutT) == 2) {
          epilogue_vec<OutT, Cfg::kWgN, Cfg::kBN, kKS>(acc, cp, c0, rp, p, r0, n_base + c0, lane,
                                                      krank);
        }
      } else if ((p.N & 1) == 0) {
        epilogue<OutT, Cfg::kWgN, Cfg::kBN, true, kKS>(acc, cp, c0, rp, p, r0, n_base + c0, lane,
                                                       krank);
      } else {
        epilogue<OutT, Cfg::kWgN, Cfg::kBN, false, kKS>(acc, cp, c0, rp, p, r0, n_base + c0,
                                                        lane, krank);
      }
      __syncwarp();
    }
  }

  // No CTA of a cluster may exit while a peer can still arrive on its barriers or read its
  // shared memory.
  if constexpr (kCluster > 1) cluster_sync();
#else
  __trap();  // built for another target: the host refuses to launch on anything but sm_90
#endif
}

}  // namespace sm90a
}  // namespace torchquant
