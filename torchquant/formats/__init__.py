"""Storage formats in pure torch: quantize, pack, unpack, and interop loaders.

These functions are the executable form of ../shared/design/formats.md. They
run on any device with plain torch ops and are bit-identical to the C++
quantize ops (tests hold them to that), so they double as the reference for
the kernels and as the loaders for checkpoints quantized elsewhere.
"""

from torchquant.formats.int8 import (  # noqa: F401
    int8_colsum,
    quantize_int8,
    dequantize_int8,
)
from torchquant.formats.fp8 import (  # noqa: F401
    E4M3_MAX,
    quantize_fp8_block,
    dequantize_fp8_block,
)
from torchquant.formats.nvfp4 import (  # noqa: F401
    E2M1_VALUES,
    e2m1_encode,
    e2m1_decode,
    pack_e2m1,
    unpack_e2m1,
    quantize_nvfp4,
    dequantize_nvfp4,
    layout_bit_map,
    relayout_nvfp4,
)
from torchquant.formats.sparse24 import (  # noqa: F401
    prune24,
    compress24,
    decompress24,
)
from torchquant.formats.interop import (  # noqa: F401
    nvfp4_from_compressed_tensors,
    nvfp4_from_modelopt,
    nvfp4_to_compressed_tensors,
    fp8_scales_from_128x128,
    fp8_scales_to_blocks,
    fp8_from_modelopt,
    fp8_from_compressed_tensors,
    int8_from_compressed_tensors,
)
