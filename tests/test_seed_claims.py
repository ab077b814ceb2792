"""The seed program's claims, reproduced through torchquant's ops on its own
synthetic operands (torchquant.report.seed_operands reproduces its LCG)."""

import numpy as np
import pytest
import torch

import torchquant  # noqa: F401
from torchquant import report


def test_seed_generator_reproduces_first_values():
    # The LCG by hand: state = state * 1664525 + 1013904223 (mod 2^32).
    s = 20260901
    want = []
    for _ in range(5):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        want.append(np.float32(s >> 8) / np.float32(16777216.0))
    a, w = report.seed_operands(4, 8, 8)
    assert a.flatten()[:5].tolist() == [float(v) for v in want]
    # column gains span 64x: column c of B (row c of W) is scaled by 2^-(c % 7)
    assert float(w[6].abs().max()) <= 2.0**-6 * 8.0


@pytest.fixture(scope="module")
def operands():
    return report.seed_operands(256, 256, 256)


def test_zero_point_halves_activation_rms(operands):
    a, _ = operands
    cen = report.activation_census(a)
    sym = cen["INT8 symmetric, one scale"][1]
    asym = cen["INT8 asymmetric, zero point"][1]
    # 256 codes instead of 128 over [0, amax): the step halves, so the rms
    # error halves; 1.5 is the seed's margin under the arithmetic's 2.
    assert sym >= 1.5 * asym
    assert sym / asym == pytest.approx(2.0, rel=0.1)


def test_per_channel_beats_one_scale_on_the_gate(operands):
    a, w = operands
    rows = {r["name"]: r for r in report.int8_ladder(a, w)}
    one, chan, zp = rows["int8 one scale"], rows["int8 per-channel"], rows["int8 per-chan + zp"]
    assert chan["gate_frac"] < one["gate_frac"]
    # the gated rows pass the per-column gate; the one-scale row (64x column
    # range) is predicted to fail it and is only reported, as in the seed
    assert chan["gate_frac"] <= 1.0 and zp["gate_frac"] <= 1.0
    assert one["gate_frac"] > 1.0 and not one["gated"]
    assert chan["rms_err"] < one["rms_err"]


def test_storage_census_orders_formats(operands):
    _, w = operands
    cen = report.storage_census(w)
    rms = {k: v[1] for k, v in cen.items()}
    assert rms["INT8, one scale per channel"] < rms["INT8, one scale for W"]
    assert rms["FP8 e4m3, one scale per 32 along K"] < rms["FP8 e4m3, one scale for W"]
    assert rms["NVFP4 (e2m1, e4m3 per 16, fp32 global)"] > rms["FP8 e4m3, one scale per 32 along K"]
    # pruning zeroes half the weights: by far the largest round-trip error
    assert rms["2:4 pruned (values kept exact)"] == max(rms.values())


def test_24_row_costs_accuracy_but_stays_finite(operands):
    a, w = operands
    rows = {r["name"]: r for r in report.int8_ladder(a, w)}
    pr = rows["int8 2:4 pruned"]
    assert np.isfinite(pr["rms_err"]) and pr["rms_err"] > rows["int8 per-channel"]["rms_err"]
    pruned, mask = torch.ops.torchquant.prune24(w)
    assert int(mask.view(w.shape[0], -1, 4).sum(-1).max()) == 2


def test_report_runs_and_says_no_gpu():
    text = report.run(size=128, ladder=True)
    assert "capability report" in text and "storage census" in text and "INT8 ladder" in text
    if not torch.cuda.is_available():
        assert "no CUDA GPU visible" in text


def _fake_gpu(monkeypatch, major, minor, kernels, probe=None):
    """The capability report against a described GPU and build: no GPU is touched (`probe`: what
    running one kernel there gives, None for success)."""
    from types import SimpleNamespace

    props = SimpleNamespace(name=f"Fake sm_{major}{minor}", major=major, minor=minor,
                            multi_processor_count=132, L2_cache_size=50 * 2**20)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: props)
    monkeypatch.setattr(report, "_has_cuda_kernel", lambda op: op in kernels)
    monkeypatch.setattr(report, "_kernel_probe", lambda dev: probe)
    return "\n".join(report.capability_report())


CUDA_OPS = {"fp8_block_gemv", "nvfp4_gemv", "int8_matmul", "sparse24_gemv", "sparse24_int8_matmul"}
SM90A_OPS = {"_int8_gemm_sm90a", "_sparse24_int8_gemm_sm90a", "_sparse24_gemm_sm90a", "_fp8_block_gemm_sm90a",
             "_nvfp4_gemm_sm90a", "_fp8_block_gemv_sm90a", "_nvfp4_gemv_sm90a"}


def _line(text, start):
    return next(ln for ln in text.splitlines() if ln.strip().startswith(start))


def test_capability_report_per_card(monkeypatch):
    """What the report says on each kind of card and build (it once claimed wgmma on any
    compute capability >= 9.0, though sm_90a code runs on 9.0 only, and tensor-core paths for a
    CPU-only build)."""
    h = _fake_gpu(monkeypatch, 9, 0, CUDA_OPS | SM90A_OPS)
    assert "yes -> every op's 'wgmma' path" in _line(h, "Hopper warpgroup MMA") and "yes ->" in _line(h, "INT8 tensor cores")
    assert "wgmma" in _line(h, "int8_matmul") and "QuantLinear nvfp4" in h

    no90a = _fake_gpu(monkeypatch, 9, 0, CUDA_OPS)
    assert "no sm_90a module" in _line(no90a, "Hopper warpgroup MMA")
    assert "wgmma" not in _line(no90a, "int8_matmul") and "QuantLinear nvfp4" not in no90a

    for major, minor in ((10, 0), (12, 0), (8, 9)):
        t = _fake_gpu(monkeypatch, major, minor, CUDA_OPS | SM90A_OPS)
        assert "no on this card (sm_90a code runs on compute capability 9.0 only)" in _line(t, "Hopper warpgroup"), t
        assert "yes ->" in _line(t, "INT8 tensor cores") and "wgmma" not in _line(t, "int8_matmul")
    assert "yes (not used" in _line(_fake_gpu(monkeypatch, 10, 0, CUDA_OPS), "FP4 (e2m1)")
    assert "yes (not in torchquant's kernels" in _line(h, "FP8 e4m3/e5m2")

    turing = _fake_gpu(monkeypatch, 7, 5, CUDA_OPS)
    assert "no on this card" in _line(turing, "INT8 tensor cores")
    assert "no CUDA path below sm_80" in _line(turing, "int8_matmul")
    assert _line(turing, "FP8 e4m3/e5m2").endswith(" no")

    # a build without code for the card (the default 8.0;9.0 build on a Blackwell): the probe's error
    bw = _fake_gpu(monkeypatch, 10, 0, CUDA_OPS | SM90A_OPS,
                   probe="CUDA error: no kernel image is available for execution on the device")
    assert "do not run on this GPU (CUDA error: no kernel image" in bw and "TORCH_CUDA_ARCH_LIST=10.0" in bw
    assert "no code for this card" in _line(bw, "INT8 tensor cores") and "yes ->" not in bw
    assert "int8_matmul" not in bw.split("do not run")[1]

    cpu_build = _fake_gpu(monkeypatch, 9, 0, set())
    assert "CPU kernels only" in cpu_build and "will not run on this GPU" in cpu_build
    assert "yes ->" not in cpu_build and "int8_matmul" not in cpu_build.split("will not run")[1]


def test_kernel_probe_reports_instead_of_raising():
    """On a GPU of this build's arch the probe runs (None); without one it returns the error's
    first line instead of raising."""
    got = report._kernel_probe(0)
    if torch.cuda.is_available() and torch._C._dispatch_has_kernel_for_dispatch_key(
            "torchquant::quantize_int8", "CUDA"):
        assert got is None, got
    else:
        assert isinstance(got, str) and got
