"""benchmarks/timing.py's rotation arithmetic (no GPU needed): how many operand copies a cold-L2
timing rotates over, and the shared copies the micro benchmarks reuse across variants."""
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import timing  # noqa: E402

MiB = 1 << 20


def test_default_factor_is_8x_l2():
    # docs/nvfp4_gemv.md 35: 3x L2 let an H100 keep ~7 % of an nvfp4 GEMV's weight bytes in L2.
    if "TORCHQUANT_BENCH_L2_FACTOR" not in os.environ:
        assert timing.L2_FACTOR == 8.0


def test_factor_env_override():
    code = "import sys; sys.path.insert(0, 'benchmarks'); import timing; print(timing.L2_FACTOR)"
    env = dict(os.environ, TORCHQUANT_BENCH_L2_FACTOR="3")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3.0"


@pytest.mark.parametrize(
    "bytes_, l2, factor, want",
    [
        (126 * MiB, 50 * MiB, 8.0, 4),  # 28672x8192 nvfp4 on an H100: 504 MiB > 400
        (126 * MiB, 50 * MiB, 3.0, 2),  # the anchors' method: 252 MiB, ~5x L2
        (126 * MiB, 60 * MiB, 8.0, 4),  # an H200: 504 > 480
        (9 * MiB, 60 * MiB, 8.0, 54),  # 4096x4096 nvfp4: 486 MiB
        (1024 * MiB, 60 * MiB, 8.0, 2),  # a large weight still alternates between two copies
        (60 * MiB, 60 * MiB, 8.0, 9),  # strictly more than 8x: 540 > 480
    ],
)
def test_copies_needed(bytes_, l2, factor, want):
    r = timing.copies_needed(bytes_, l2, l2_factor=factor)
    assert r == want
    assert r * bytes_ > factor * l2 and (r == timing.MIN_COPIES or (r - 1) * bytes_ <= factor * l2)


def test_copies_needed_bounds():
    assert timing.copies_needed(126 * MiB, 50 * MiB, min_copies=7) == 7
    with pytest.raises(ValueError, match="max_copies"):
        timing.copies_needed(1024, 60 * MiB)  # 480 MiB of 1 KiB copies
    with pytest.raises(ValueError, match="positive"):
        timing.copies_needed(0, 60 * MiB)


def test_shared_copies(monkeypatch):
    monkeypatch.setattr(timing, "l2_bytes", lambda *a: 1 << 16)
    w, lin = torch.arange(1024, dtype=torch.float32), torch.nn.Linear(4, 4)  # 4 KiB per copy
    mk = timing.shared_copies((w, lin), 4096, l2_factor=3.0)  # > 192 KiB: 49 copies
    r = timing.copies_needed(4096, 1 << 16, l2_factor=3.0)
    assert r == 49
    seen = {mk(i)[0].data_ptr() for i in range(r)}
    assert len(seen) == r and w.data_ptr() not in seen  # every copy its own storage
    assert mk(r)[0] is mk(0)[0]  # rotation i % r
    assert mk(1)[1] is not lin and torch.equal(mk(1)[1].weight, lin.weight)  # modules deep-copied
    assert mk(0)[1].weight.data_ptr() != mk(1)[1].weight.data_ptr()
    mk2 = timing.shared_copies((w,), 4096, min_copies=60, l2_factor=3.0)
    assert len({mk2(i)[0].data_ptr() for i in range(60)}) == 60
