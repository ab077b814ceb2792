// torchquant: the one schema file.
//
// Every operator the library exposes is declared here, once, with named and
// typed arguments. Implementations live per format and per backend:
//   csrc/cpu/*.cpp            TORCH_LIBRARY_IMPL(torchquant, CPU)
//   csrc/<format>/*.cu        TORCH_LIBRARY_IMPL(torchquant, CUDA)
// Python wrappers with register_fake for each schema are in torchquant/ops.py.
//
// Conventions shared by every op (see ../shared/design/formats.md):
//   y[M, N] = x[M, K] @ W[N, K]^T (+ bias[N]), weights row-major, K contiguous.
//   `path` selects an implementation: "auto" lets the op's dispatcher (one
//   labelled choose_*_kernel function in its .cu file) decide by compute
//   capability and M; any other name forces that kernel so tests reach every
//   path. Unknown names and names of another backend raise. (Not called
//   `kernel`: Inductor's fallback lowering reserves that keyword.)
//
// The module is a plain C extension whose PyInit creates an empty module:
// importing torchquant._C runs the static registrations below and nothing
// else, so no pybind11 and the stable (limited) Python ABI.

#include <Python.h>
#include <torch/library.h>

#include "common/inference_only.h"

extern "C" {
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {
      PyModuleDef_HEAD_INIT,
      "_C",  // name
      "torchquant operator library; ops live under torch.ops.torchquant",
      -1,    // no per-module state
      nullptr,
  };
  return PyModule_Create(&module_def);
}
}

TORCH_LIBRARY(torchquant, m) {
  // ---------------------------------------------------------------- INT8 --
  // W8A8 matmul with an exact int32 accumulation and a fused epilogue:
  //   y[m,n] = a_scale[m] * w_scale[n] * (acc[m,n] - a_zero[m] * w_colsum[n])
  //            + bias[n],     acc = sum_k a_q[m,k] * w_q[n,k]
  // a_q int8 [M, K]; a_scale fp32 [M] (per token) or one element;
  // a_zero int32 [M] or one element, None for a symmetric activation;
  // w_q int8 [N, K]; w_scale fp32 [N] (per channel) or one element;
  // w_colsum int32 [N] = sum_k w_q[n, k], needed with a_zero (computed when
  // omitted); bias [N] in any float dtype; out_dtype float32 (default),
  // float16 or bfloat16. K <= 65536 so the accumulator cannot overflow.
  // CUDA paths: "gemv" (M <= 32, weight streamed once), "mma"
  // (mma.sync m16n8k32 tensor cores, sm_80+), "wgmma" (Hopper, sm_90a module).
  // static_weight: as fp8_block_gemv's, for w_q (the gemv path: its first round of weight loads
  // may be issued before the PDL wait); no effect on results, nor on CPU.
  m.def(
      "int8_matmul(Tensor a_q, Tensor a_scale, Tensor? a_zero, Tensor w_q, "
      "Tensor w_scale, Tensor? w_colsum=None, Tensor? bias=None, "
      "ScalarType? out_dtype=None, str path='auto', bool static_weight=False) -> Tensor");

  // Row-wise (per token / per output channel) or whole-tensor int8
  // quantization of a float [R, C] tensor. Returns (q int8 [R, C],
  // scale fp32 [R] or [], zero_point int32 of the scale's shape). Symmetric:
  // s = amax / 127, zero 0. Asymmetric: the range [min(x, 0), max(x, 0)] is
  // spread over all 256 codes, s = span / 255, zero = rne(-128 - lo / s).
  m.def(
      "quantize_int8(Tensor x, bool per_row=True, bool symmetric=True) -> "
      "(Tensor q, Tensor scale, Tensor zero_point)");

  // ----------------------------------------------------------------- FP8 --
  // Decode GEMV over an FP8 E4M3 weight with fp32 scales per block of
  // `block_size` along K: w[n,k] = w_q[n,k] * w_scale[n, k / block_size].
  // x fp16 or bf16 [M, K] (decode: M = 1..16, larger M is tiled); output in
  // x's dtype. block_size a multiple of 16 in [16, 256]; K a multiple of 16.
  // CUDA kernels: "fma" (scalar, sm_75+), "mma" (mma.sync m16n8k16, sm_80+).
  // static_weight: the caller's promise that w_q and w_scale were not written by a kernel that
  // may still be running when this one launches (weights loaded once); on sm_90 the ring GEMV
  // then starts copying them before the previous kernel finishes (common/pdl.h). Ignored on
  // the CPU and by the other kernels.
  m.def(
      "fp8_block_gemv(Tensor x, Tensor w_q, Tensor w_scale, int block_size=128, "
      "Tensor? bias=None, str path='auto', bool static_weight=False, bool tiled=False) -> Tensor");
  // tiled: w_q and w_scale from fp8_block_tile (the rows' bytes stored per 16-row tile; N % 16
  // == 0, K % 64 == 0, block_size % 64 == 0): on CUDA paths "direct" (sm_89+) and "mma" (the ring
  // kernel, sm_80+) only, at every M.

  // The weight and its block scales in the tiled order of fp8/fp8_tiles.h, or back (inverse).
  // Same shapes and dtypes; a permutation of whole elements, exact both ways.
  m.def("fp8_block_tile(Tensor w_q, Tensor w_scale, bool inverse=False) -> (Tensor w_q, Tensor w_scale)");

  // scale = block_amax / 448 (1 for an all-zero block),
  // w_q = e4m3(clamp(w / scale, -448, 448)). Returns (w_q [N, K] e4m3,
  // scale fp32 [N, ceil(K / block_size)]).
  m.def(
      "quantize_fp8_block(Tensor w, int block_size=128) -> "
      "(Tensor w_q, Tensor scale)");

  // Activation quantization for the W8A8 fp8 prefill path: x [M, K] in
  // blocks of block_size along K, the same rule as quantize_fp8_block (scale
  // = amax / 448, 1 for a zero block; q = e4m3(clamp(x / scale))), but online:
  // no host sync, and a block holding NaN or Inf gets a NaN scale and NaN
  // codes. scale is [M, ceil(K / block_size)] fp32 stored column-major
  // (strides (1, M)), the layout torch._scaled_mm takes for 1 x 128 blockwise
  // activation scales.
  m.def("quantize_fp8_act(Tensor x, int block_size=128) -> (Tensor x_q, Tensor scale)");

  // w = float(w_q) * scale[n, k / block_size], in out_dtype (default fp32).
  m.def(
      "dequantize_fp8_block(Tensor w_q, Tensor scale, int block_size=128, "
      "ScalarType? out_dtype=None) -> Tensor");

  // --------------------------------------------------------------- NVFP4 --
  // Decode GEMV over packed E2M1 weights (uint8 [N, K/2], element 2j in the
  // low nibble), E4M3 scales per 16 along K ([N, K/16]) and one fp32 global
  // scale (a one-element tensor, read on the device: no host sync).
  // x fp16 or bf16 [M, K], output in x's dtype, K a multiple of 16.
  // CUDA kernels: "fma" (scalar, sm_75+), "mma" (mma.sync m16n8k16, sm_80+).
  // layout: the packed weight's word layout (nvfp4/nvfp4_layout.h): 0 as above, 1 / 2 the bf16 /
  // fp16 decode order (nvfp4_relayout), x of that dtype only, CUDA paths "mma" and "wgmma"; 3 the
  // bf16 order on adjacent codes (also path "direct"); 4 layout 3 tiled, weight and scales
  // (nvfp4_relayout / nvfp4_relayout_scale(.., 4)): bf16 x, CUDA paths "direct" and "mma" (the
  // ring kernel, M tiles of <= 8 rows) only.
  // static_weight: as fp8_block_gemv's, for w_packed and w_scale (the mma GEMV).
  m.def(
      "nvfp4_gemv(Tensor x, Tensor w_packed, Tensor w_scale, "
      "Tensor global_scale, Tensor? bias=None, str path='auto', int layout=0, "
      "bool static_weight=False) -> Tensor");

  // The packed weight in another word layout: layout 0 -> `layout`, or back with inverse.
  // Same shape and dtype; a bit permutation inside each 4-byte word of a row, exact both ways
  // (layout 4: layout 3's words, then the rows' 64-byte pieces tiled by 16 rows).
  m.def("nvfp4_relayout(Tensor w_packed, int layout, bool inverse=False) -> Tensor");
  // The block scales for a weight in `layout`: a copy for the word layouts 0..3, the tiled order
  // of layout 4 (nvfp4/nvfp4_tiles.h; N % 16 == 0, K % 128 == 0), or back from it with inverse.
  m.def("nvfp4_relayout_scale(Tensor w_scale, int layout, bool inverse=False) -> Tensor");

  // global = amax / (448 * 6) (1 for an all-zero tensor);
  // block_scale = e4m3(min(block_amax / 6 / global, 448));
  // q = e2m1_rne(clamp(w / (block_scale * global), -6, 6)); a block whose
  // scale is 0 stores codes 0. Returns (packed uint8 [N, K/2],
  // scale e4m3 [N, K/16], global_scale fp32 []).
  m.def(
      "quantize_nvfp4(Tensor w) -> "
      "(Tensor w_packed, Tensor scale, Tensor global_scale)");

  // w = e2m1 * float(scale) * global_scale, in out_dtype (default fp32).
  m.def(
      "dequantize_nvfp4(Tensor w_packed, Tensor scale, Tensor global_scale, "
      "ScalarType? out_dtype=None) -> Tensor");

  // ----------------------------------------------------------------- 2:4 --
  // Keep the two largest magnitudes of every group of 4 along K (ties keep
  // the lower index). Returns (pruned, same dtype and shape; mask bool).
  m.def("prune24(Tensor w) -> (Tensor pruned, Tensor mask)");

  // Compress a 2:4 tensor [N, K] (at most 2 nonzeros per group of 4; raises
  // otherwise) to (values [N, K/2] in w's dtype, meta uint8 [N, ceil(K/8)]).
  // Each group's nibble holds two 2-bit positions, first < second, in bits
  // 0-1 and 2-3; group 2j sits in the low nibble of byte j, group 2j+1 in
  // the high one (a missing last group leaves its nibble 0). A group with
  // fewer than two nonzeros keeps its lowest zero positions, so the
  // encoding is canonical. K a multiple of 4.
  m.def("compress24(Tensor w) -> (Tensor values, Tensor meta)");

  // Inverse of compress24: [N, K] with K = 2 * values.size(1).
  m.def("decompress24(Tensor values, Tensor meta) -> Tensor");

  // Decode GEMV over a 2:4 weight in compress24's form, never decompressed:
  //   y[m, n] = sum_k x[m, k] * W[n, k] + bias[n],  W = decompress24(values, meta)
  // x fp16 or bf16 [M, K]; values [N, K/2] in x's dtype; meta uint8
  // [N, ceil(K/8)]; bias [N] in x's dtype. K a multiple of 4. Output [M, N]
  // in x's dtype; products exact in fp32, fp32 accumulation, one final
  // rounding. Reads 2 + 0.25 bytes per kept weight pair (1.125 B per dense
  // element for fp16/bf16: 56% of the dense bytes). meta is trusted as made by
  // compress24 (not re-validated: that would need a host sync).
  // CUDA kernels: "fma" (CUDA cores, any K % 4), "mma" (mma.sp m16n8k32
  // tensor cores, sm_80+, K % 32 == 0), "wgmma" (the Hopper sparse-wgmma GEMM:
  // sm_90 with torchquant._C_sm90a, K % 128 == 0); "auto" picks by device, M
  // and N (csrc/sparse/sparse24.cu: auto_takes_sparse_wgmma, then
  // choose_gemv_kernel). CPU: "cpu".
  m.def(
      "sparse24_gemv(Tensor x, Tensor values, Tensor meta, Tensor? bias=None, "
      "str path='auto') -> Tensor");

  // int8_matmul with the int8 weight in compress24's 2:4 form:
  //   y[m,n] = a_scale[m] * w_scale[n] * (acc[m,n] - a_zero[m] * w_colsum[n])
  //            + bias[n],     acc = sum_k a_q[m,k] * W[n,k]  (exact int32)
  // W = decompress24(w_values, w_meta): w_values int8 [N, K/2], w_meta uint8
  // [N, ceil(K/8)]. Every other argument, the epilogue and its rounding order
  // are int8_matmul's, so the result is bit-identical to int8_matmul over the
  // decompressed weight. w_colsum = row sums of W (computed when omitted and
  // a_zero is given). K a multiple of 4, K <= 65536.
  // CUDA kernels: "gemv" (dp4a decode GEMV, K % 32 == 0), "mma" (mma.sp
  // m16n8k32 .s8 tensor cores, sm_80+, K % 32 == 0), "wgmma" (as above),
  // "simt" (CUDA cores, any K % 4); "auto" picks by device, M and N
  // (auto_takes_sparse_wgmma, then choose_int8_kernel). CPU: "cpu".
  // static_weight: as int8_matmul's, for w_values and w_meta (the gemv path).
  m.def(
      "sparse24_int8_matmul(Tensor a_q, Tensor a_scale, Tensor? a_zero, Tensor w_values, "
      "Tensor w_meta, Tensor w_scale, Tensor? w_colsum=None, Tensor? bias=None, "
      "ScalarType? out_dtype=None, str path='auto', bool static_weight=False) -> Tensor");
}

// Inference only (common/inference_only.h): under grad mode the outputs are constants to
// autograd, with a one-time warning when an input requires grad.
TORCH_LIBRARY_IMPL(torchquant, Autograd, m) {
  for (const char* op : {"int8_matmul", "quantize_int8", "fp8_block_gemv", "quantize_fp8_block",
                         "quantize_fp8_act", "dequantize_fp8_block", "fp8_block_tile", "nvfp4_gemv", "nvfp4_relayout", "nvfp4_relayout_scale",
                         "quantize_nvfp4", "dequantize_nvfp4", "prune24", "compress24",
                         "decompress24", "sparse24_gemv", "sparse24_int8_matmul"})
    m.impl(op, torchquant::inference_only_kernel());
}
