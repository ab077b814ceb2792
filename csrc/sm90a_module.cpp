// torchquant._C_sm90a: the Hopper-only operator module.
//
// Built (setup.py) only when 9.0 is in the arch list, from this file plus every csrc/**/*_sm90a.cu,
// all compiled for sm_90a alone (wgmma, setmaxnreg and TMA multicast exist nowhere else).
// Like torchquant._C it is a plain C extension whose PyInit creates an empty module: importing it
// runs the static registrations below and in the .cu files, nothing else.
//
// The schemas of the sm_90a-only ops live here rather than in csrc/torchquant.cpp because a
// build without this module must not declare ops it cannot run. int8_matmul (kernel="wgmma", or
// "auto" on sm_90 at large M) reaches _int8_gemm_sm90a through the c10 dispatcher; the Python
// fake (meta) kernel is registered in torchquant/ops.py.

#include <Python.h>
#include <torch/library.h>

#include "common/inference_only.h"

extern "C" {
PyObject* PyInit__C_sm90a(void) {
  static struct PyModuleDef module_def = {
      PyModuleDef_HEAD_INIT,
      "_C_sm90a",  // name
      "torchquant Hopper (sm_90a) kernels; ops live under torch.ops.torchquant",
      -1,  // no per-module state
      nullptr,
  };
  return PyModule_Create(&module_def);
}
}

TORCH_LIBRARY_FRAGMENT(torchquant, m) {
  // W8A8 GEMM on Hopper wgmma tensor cores (sm_90a only), the semantics of int8_matmul:
  //   y[m,n] = float(acc[m,n] - a_zero[m] * w_colsum[n]) * (a_scale[m] * w_scale[n]) + bias[n],
  //   acc = sum_k a_q[m,k] * w_q[n,k] exact in int32, rounded to out_dtype (default float32).
  // Same validation as int8_matmul, plus: compute capability 9.0 and K % 16 == 0.
  m.def(
      "_int8_gemm_sm90a(Tensor a_q, Tensor a_scale, Tensor? a_zero, Tensor w_q, "
      "Tensor w_scale, Tensor? w_colsum=None, Tensor? bias=None, "
      "ScalarType? out_dtype=None) -> Tensor");

  // 2:4 sparse GEMMs on Hopper sparse wgmma (sm_90a only), reading the weight in compress24's
  // form (values [N, K/2], meta uint8 [N, K/8]). The semantics, validation and messages of
  // sparse24_int8_matmul (int8_matmul's epilogue, bit-identical to the CPU op) and of
  // sparse24_gemv (fp16/bf16, fp32 accumulation, + bias, one rounding), plus: compute
  // capability 9.0 and K % 128 == 0. Reached through path="wgmma" of those two ops.
  m.def(
      "_sparse24_int8_gemm_sm90a(Tensor a_q, Tensor a_scale, Tensor? a_zero, Tensor w_values, "
      "Tensor w_meta, Tensor w_scale, Tensor? w_colsum=None, Tensor? bias=None, "
      "ScalarType? out_dtype=None) -> Tensor");
  m.def("_sparse24_gemm_sm90a(Tensor x, Tensor values, Tensor meta, Tensor? bias=None) -> Tensor");

  // fp8_block weight x fp16/bf16 activations on Hopper wgmma (sm_90a only), the weight
  // converted in registers: y = x @ dequantize_fp8_block(w_q, w_scale, block_size,
  // out_dtype=x.dtype)^T (+ bias), fp32 accumulation, one rounding to x's dtype. The contract
  // of dequantize + matmul (the weight rounded to x's dtype), not fp8_block_gemv's exact
  // products. fp8_block_gemv's validation (under the name fp8_block_gemm), plus: compute
  // capability 9.0. QuantLinear's fp8_block prefill on sm_90. tiled: w_q and w_scale from
  // fp8_block_tile (N % 16 == 0, K % 64 == 0; read in place, the same results).
  m.def(
      "_fp8_block_gemm_sm90a(Tensor x, Tensor w_q, Tensor w_scale, int block_size=128, "
      "Tensor? bias=None, bool tiled=False) -> Tensor");

  // nvfp4 weight x fp16/bf16 activations on the same Hopper kernel: nvfp4_gemv's contract
  // (E2M1 * E4M3 block scale exact in the 16-bit A operand, fp32 accumulation, * global, +
  // bias, one rounding), nvfp4_gemv's validation (under the name nvfp4_gemm), plus: compute
  // capability 9.0 and K % 64 == 0. QuantLinear nvfp4 runs it from M = 17 (from M = 33 where
  // K % 256 == 0 and _nvfp4_gemv_sm90a below runs; torchquant/nn/dispatch.py,
  // docs/fp8_wgmma.md). layout: nvfp4_gemv's (csrc/nvfp4/nvfp4_layout.h; 1: bf16 x, 2: fp16 x).
  m.def(
      "_nvfp4_gemm_sm90a(Tensor x, Tensor w_packed, Tensor w_scale, Tensor global_scale, "
      "Tensor? bias=None, int layout=0) -> Tensor");

  // fp8_block_gemv's path "wgmma" (fp8_block_gemv.cu calls it through the dispatcher): the
  // same kernel with fp8_block_gemv's contract (exact products, fp32 sums per scale block
  // times the block's scale, + bias, one rounding), its validation and name, plus: compute
  // capability 9.0 and block_size % 64 == 0. For decode (16-token tiles). static_weight:
  // fp8_block_gemv's (common/pdl.h; with PDL on for this kernel, the TMA producer issues the
  // first stages' weight before its wait). tiled: w_q and w_scale from fp8_block_tile
  // (fp8_block_gemv(..., tiled=True)'s path "wgmma"; N % 16 == 0; the same results).
  m.def(
      "_fp8_block_gemv_sm90a(Tensor x, Tensor w_q, Tensor w_scale, int block_size=128, "
      "Tensor? bias=None, bool static_weight=False, bool tiled=False) -> Tensor");

  // nvfp4_gemv's path "wgmma" (nvfp4_gemv.cu calls it through the dispatcher): the nvfp4
  // decode GEMV on the same TMA + wgmma structure, nvfp4_gemv's contract, validation and
  // name, plus: compute capability 9.0 and K % 256 == 0. For decode (16-token tiles).
  // layout: nvfp4_gemv's (csrc/nvfp4/nvfp4_layout.h; 1: bf16 x, 2: fp16 x). static_weight:
  // nvfp4_gemv's (common/pdl.h), as _fp8_block_gemv_sm90a's.
  m.def(
      "_nvfp4_gemv_sm90a(Tensor x, Tensor w_packed, Tensor w_scale, Tensor global_scale, "
      "Tensor? bias=None, int layout=0, bool static_weight=False) -> Tensor");
}

// Inference only, as the main module's ops (csrc/torchquant.cpp).
TORCH_LIBRARY_IMPL(torchquant, Autograd, m) {
  for (const char* op : {"_int8_gemm_sm90a", "_sparse24_int8_gemm_sm90a", "_sparse24_gemm_sm90a",
                         "_fp8_block_gemm_sm90a", "_nvfp4_gemm_sm90a", "_fp8_block_gemv_sm90a",
                         "_nvfp4_gemv_sm90a"})
    m.impl(op, torchquant::inference_only_kernel());
}
