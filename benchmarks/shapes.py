"""Model-derived weight shapes and the M sweep every benchmark runs.

Every shape is an nn.Linear weight [N, K] (y[M, N] = x[M, K] @ W^T), taken
from the model's published config:

  Llama-3-8B    hidden 4096, intermediate 14336, 32 query heads and 8 KV heads
                of 128 (GQA): q/o 4096x4096, k/v 1024x4096 each, fused qkv
                (4096 + 2 * 1024) x 4096 = 6144x4096, gate/up 14336x4096 each,
                fused gate_up 28672x4096, down 4096x14336.
  Llama-3-70B   hidden 8192, intermediate 28672, 64 query / 8 KV heads of 128:
                q/o 8192x8192, k/v 1024x8192, fused qkv 10240x8192, gate/up
                28672x8192, fused gate_up 57344x8192, down 8192x28672.
  Qwen3-30B-A3B one MoE expert: hidden 2048, moe_intermediate_size 768:
                gate/up 768x2048 each, fused gate_up 1536x2048, down 2048x768.
                (Chosen over Qwen1.5-MoE-A2.7B, whose experts are 1408x2048:
                Qwen3's 768-wide experts are the smaller, harder decode case.)
  lm_head       Llama-3 vocabulary 128256 x hidden 4096.

The four shapes of ../shared/design/anchors.md (4096x4096, 14336x4096,
28672x8192, 128256x4096) are all in this list; `anchor=True` marks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple


@dataclass(frozen=True)
class Shape:
    model: str
    layer: str
    N: int
    K: int
    anchor: bool = False

    @property
    def nk(self) -> str:
        return f"{self.N}x{self.K}"

    @property
    def label(self) -> str:
        return f"{self.model} {self.layer} ({self.N}x{self.K})"


M_SWEEP: Tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 256, 2048)

LLAMA3_8B: List[Shape] = [
    Shape("Llama-3-8B", "q_proj/o_proj", 4096, 4096, anchor=True),
    Shape("Llama-3-8B", "k_proj/v_proj", 1024, 4096),
    Shape("Llama-3-8B", "qkv_proj (fused)", 6144, 4096),
    Shape("Llama-3-8B", "gate_proj/up_proj", 14336, 4096, anchor=True),
    Shape("Llama-3-8B", "gate_up_proj (fused)", 28672, 4096),
    Shape("Llama-3-8B", "down_proj", 4096, 14336),
]

LLAMA3_70B: List[Shape] = [
    Shape("Llama-3-70B", "q_proj/o_proj", 8192, 8192),
    Shape("Llama-3-70B", "k_proj/v_proj", 1024, 8192),
    Shape("Llama-3-70B", "qkv_proj (fused)", 10240, 8192),
    Shape("Llama-3-70B", "gate_proj/up_proj", 28672, 8192, anchor=True),
    Shape("Llama-3-70B", "gate_up_proj (fused)", 57344, 8192),
    Shape("Llama-3-70B", "down_proj", 8192, 28672),
]

QWEN3_MOE_EXPERT: List[Shape] = [
    Shape("Qwen3-30B-A3B expert", "gate_proj/up_proj", 768, 2048),
    Shape("Qwen3-30B-A3B expert", "gate_up_proj (fused)", 1536, 2048),
    Shape("Qwen3-30B-A3B expert", "down_proj", 2048, 768),
]

LM_HEAD: List[Shape] = [Shape("Llama-3", "lm_head", 128256, 4096, anchor=True)]

# The seed's square problem (int8 error table, 2048^3 CUDA-core timing).
SEED: List[Shape] = [Shape("seed", "2048^3", 2048, 2048)]

ALL_SHAPES: List[Shape] = LLAMA3_8B + LLAMA3_70B + QWEN3_MOE_EXPERT + LM_HEAD + SEED
ANCHOR_SHAPES: List[Shape] = [s for s in ALL_SHAPES if s.anchor]

# One Llama-3-8B decoder layer: the 7 projections, unfused, with the input
# each one reads (its K). bench_e2e.py times them back to back.
LLAMA3_8B_LAYER: List[Tuple[str, int, int]] = [
    ("q_proj", 4096, 4096),
    ("k_proj", 1024, 4096),
    ("v_proj", 1024, 4096),
    ("o_proj", 4096, 4096),
    ("gate_proj", 14336, 4096),
    ("up_proj", 14336, 4096),
    ("down_proj", 4096, 14336),
]
# The same layer as inference engines run it (vLLM's QKVParallelLinear and
# MergedColumnParallelLinear): q/k/v fused into one [6144, 4096] weight and
# gate/up into one [28672, 4096], so 4 launches per layer instead of 7.
LLAMA3_8B_LAYER_FUSED: List[Tuple[str, int, int]] = [
    ("qkv_proj", 6144, 4096),
    ("o_proj", 4096, 4096),
    ("gate_up_proj", 28672, 4096),
    ("down_proj", 4096, 14336),
]
E2E_MS: Tuple[int, ...] = (1, 8)


def layer_inputs(spec: List[Tuple[str, int, int]]) -> Tuple[Tuple[int, ...], Tuple[int, int, int]]:
    """A decoder layer's projections (LLAMA3_8B_LAYER, _FUSED, CPU_LAYER...): which of its three
    inputs each projection reads (0 = the layer input x, 1 = the attention output, 2 = h, the
    MLP's hidden state: o_proj reads 1, down_proj 2, the rest 0), and each input's width K."""
    src = tuple({"o_proj": 1, "down_proj": 2}.get(p, 0) for p, _, _ in spec)
    k_in = tuple(next(k for (_, _, k), s in zip(spec, src) if s == j) for j in range(3))
    return src, k_in  # type: ignore[return-value]

# --quick: the anchors' four shapes at the M that matter most, sized to run
# all five benchmarks in about three minutes on an H200:
#   M = 1 (decode), 16 (the decode kernels' upper end), 64 (the first M where
#   torch._int_mm runs, the anchors' batch row), 2048 (prefill, compute-bound).
QUICK_SHAPES: List[Shape] = ANCHOR_SHAPES
QUICK_MS: Tuple[int, ...] = (1, 16, 64, 2048)

# CPU mode (no CUDA): tiny shapes, just enough to exercise every op's CPU
# kernel through the same code path.
CPU_SHAPES: List[Shape] = [
    Shape("tiny", "cpu-a", 256, 512),
    Shape("tiny", "cpu-b", 512, 256),
]
CPU_MS: Tuple[int, ...] = (1, 8)
CPU_LAYER: List[Tuple[str, int, int]] = [
    ("q_proj", 256, 256),
    ("k_proj", 64, 256),
    ("v_proj", 64, 256),
    ("o_proj", 256, 256),
    ("gate_proj", 512, 256),
    ("up_proj", 512, 256),
    ("down_proj", 256, 512),
]
CPU_LAYER_FUSED: List[Tuple[str, int, int]] = [
    ("qkv_proj", 384, 256),
    ("o_proj", 256, 256),
    ("gate_up_proj", 1024, 256),
    ("down_proj", 256, 512),
]


def unique(shapes: Sequence[Shape]) -> List[Shape]:
    """Drop repeated N x K (first label wins) so no shape is timed twice."""
    seen: Dict[Tuple[int, int], Shape] = {}
    for s in shapes:
        seen.setdefault((s.N, s.K), s)
    return list(seen.values())


def select(mode: str, on_gpu: bool, shape_filter: str = "", ms: Sequence[int] = ()) -> Tuple[List[Shape], Tuple[int, ...]]:
    """The (shapes, Ms) of a run. mode: 'quick' or 'full'. CPU runs use the tiny set.

    shape_filter: comma-separated substrings matched against Shape.label
    (e.g. "lm_head,4096x4096"), searched over every GPU shape whatever the
    mode; ms: an explicit M list overriding the mode's.
    """
    if not on_gpu:
        shapes, m_list = list(CPU_SHAPES), CPU_MS
    elif mode == "quick":
        shapes, m_list = list(QUICK_SHAPES), QUICK_MS
    elif mode == "full":
        shapes, m_list = unique(ALL_SHAPES), M_SWEEP
    else:
        raise ValueError(f"mode must be 'quick' or 'full', got {mode!r}")
    if shape_filter:
        keys = [k.strip().lower() for k in shape_filter.split(",") if k.strip()]
        pool = unique(ALL_SHAPES) if on_gpu else shapes
        shapes = [s for s in pool if any(k in s.label.lower() for k in keys)]
    if ms:
        m_list = tuple(int(m) for m in ms)
    return shapes, tuple(m_list)
