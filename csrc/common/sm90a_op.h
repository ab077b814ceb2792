// How the ops of torchquant._C reach their Hopper kernels in torchquant._C_sm90a (built when
// 9.0 is in the arch list, imported by torchquant/__init__.py): through the c10 dispatcher, as
// registered ops, since the two modules are separate libraries.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Optional.h>

namespace torchquant {

// The op `name` ("torchquant::_..._sm90a") when that module is loaded with a CUDA kernel for
// it, else nullopt.
inline c10::optional<c10::OperatorHandle> find_sm90a_op(const char* name) {
  auto h = c10::Dispatcher::singleton().findSchema({name, ""});
  if (h.has_value() && h->hasKernelForDispatchKey(c10::DispatchKey::CUDA)) return h;
  return c10::nullopt;
}

}  // namespace torchquant
