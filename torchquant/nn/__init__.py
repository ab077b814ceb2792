"""Drop-in quantized Linear layers and whole-model quantization."""

from torchquant.nn.linear import FORMATS, QuantLinear  # noqa: F401
from torchquant.nn.dispatch import choose_path  # noqa: F401
from torchquant.nn.model import (  # noqa: F401
    load_prequantized, load_quantized, quantize_model, save_quantized, set_static_weights)

__all__ = ["QuantLinear", "FORMATS", "choose_path", "quantize_model", "save_quantized", "load_quantized",
           "load_prequantized", "set_static_weights"]
