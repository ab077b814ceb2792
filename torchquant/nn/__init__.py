"""Drop-in quantized Linear layers and whole-model quantization."""

from torchquant.nn.linear import FORMATS, QuantLinear  # noqa: F401
from torchquant.nn.dispatch import choose_path  # noqa: F401
from torchquant.nn.model import quantize_model, save_quantized, load_quantized, load_prequantized  # noqa: F401

__all__ = ["QuantLinear", "FORMATS", "choose_path", "quantize_model", "save_quantized", "load_quantized",
           "load_prequantized"]
