"""torchquant: quantized-inference kernels for PyTorch.

Importing the package loads the compiled operator library (torchquant._C),
which registers every op under torch.ops.torchquant, and the Hopper-only
module (torchquant._C_sm90a) where it was built. No GPU work happens here.
"""

import importlib

import torch  # noqa: F401  (torch must be loaded before the extension)

try:
    from torchquant import _C  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "torchquant's compiled library is missing: build it with "
        "`pip install --no-build-isolation .` (see README.md)"
    ) from e

try:  # built only for sm_90 targets; optional everywhere else
    _C_sm90a = importlib.import_module("torchquant._C_sm90a")
except ImportError:
    _C_sm90a = None

from torchquant import ops  # noqa: E402,F401  (registers the fake kernels)

if _C_sm90a is not None:
    # The Hopper op exists only in builds with the sm_90a module, so its fake
    # can only be registered there; users reach it through int8_matmul.
    ops._register_sm90a_fakes()
from torchquant import formats  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = ["ops", "formats", "__version__"]
