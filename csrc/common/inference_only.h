// The Autograd kernel of every torchquant op: the ops are inference-only.
//
// With grad mode on and an input that requires grad (a model run without torch.no_grad(), whose
// LayerNorm or embedding parameters still require grad), the op runs as it would under
// no_grad and its outputs are constants: they carry no gradient, as the outputs of integer ops
// do. A one-time warning says so. Neither alternative was better: torch's default for an op
// without an autograd kernel attaches a node that hands back no gradient for the inputs and
// warns only at backward, and a node that raises at backward (autogradNotImplementedFallback)
// also makes torch.compile of such a forward fail, since AOTAutograd traces the backward.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <torch/library.h>

namespace torchquant {

inline void inference_only_autograd(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                                    torch::jit::Stack* stack) {
  if (at::GradMode::is_enabled()) {
    const size_t n = op.schema().arguments().size();
    bool wants_grad = false;
    for (const c10::IValue& v : torch::jit::last(*stack, n))
      wants_grad = wants_grad || (v.isTensor() && v.toTensor().requires_grad());
    if (wants_grad) {
      TORCH_WARN_ONCE(
          op.schema().name(),
          ": torchquant's ops are inference-only; an input requires grad, but the outputs carry "
          "no gradient (they are constants to autograd). Run the model under torch.no_grad() or "
          "torch.inference_mode().");
    }
  }
  op.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
}

inline torch::CppFunction inference_only_kernel() {
  return torch::CppFunction::makeFromBoxedFunction<&inference_only_autograd>();
}

}  // namespace torchquant
