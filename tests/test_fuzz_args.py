"""Every public op, every argument, mutated one way at a time: wrong dtypes, ranks, sizes
(short, long, empty), views that are strided, broadcast (stride 0), transposed or off their
storage's alignment, None for tensors, and out-of-range ints, path names and out_dtypes.

Each mutated call must either run or raise a RuntimeError / TypeError whose first line names
the op (never another exception type, never a crash), and the fake kernel
(torchquant/ops.py, what torch.compile and meta-device tracing run) must agree on the meta
device: the same first line when the CPU op raises, the same output metadata when it runs.
The one exception to the agreement: path names, which meta takes from either backend (the
mutations change one argument's metadata, never the values a CPU check reads). On CUDA the same
calls (on CUDA tensors) must run or raise as cleanly, with the same output metadata as on CPU
where both run, and leave no error behind on the device (synchronized after each call).
test_ops.py pins chosen cases with their messages; this sweeps the combinations.
"""

import pytest
import torch

import torchquant  # noqa: F401
from torchquant.ops import _CUDA_PATHS

from conftest import HAS_CUDA, misaligned
from test_ops import _fake_args, _meta

ops = torch.ops.torchquant

_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
           torch.int16, torch.int32, torch.int64, torch.float8_e4m3fn, torch.bool)


def _cast(t, dt):
    if dt == torch.float8_e4m3fn or t.dtype == torch.float8_e4m3fn:
        return t.float().clamp(-448, 448).to(dt)
    return t.to(dt)


def _grow(t, d):
    """t with its dim d one longer (its first slice repeated at the end)."""
    return torch.cat([t, t.narrow(d, 0, 1)], d).contiguous()


def _tensor_mutations(t):
    yield "none", None
    for dt in _DTYPES:
        if dt != t.dtype:
            yield f"dtype-{str(dt)[6:]}", _cast(t, dt)
    yield "unsqueeze", t[None]
    if t.dim() >= 2:
        yield "flatten", t.reshape(-1)
        yield "transpose", t.transpose(0, 1)
        yield "strided", torch.stack([t, t], -1).flatten(-2)[..., ::2]
    if t.dim() >= 1 and t.numel() >= 1:
        yield "scalar", t.reshape(-1)[:1].reshape(())
        yield "stride0", t.reshape(-1)[:1].expand(t.shape)
        yield "misaligned", misaligned(t, t.element_size())
    for d in range(t.dim()):
        if t.size(d) > 1:
            yield f"short{d}", t.narrow(d, 0, t.size(d) - 1).contiguous()
            yield f"half{d}", t.narrow(d, 0, t.size(d) // 2).contiguous()
        yield f"empty{d}", t.narrow(d, 0, 0).contiguous()
        if t.size(d) >= 1:
            yield f"long{d}", _grow(t, d)


def _mutations(v):
    return _tensor_mutations(v) if isinstance(v, torch.Tensor) else _scalar_mutations(v)


def _scalar_mutations(v):
    if isinstance(v, bool):
        return
    if isinstance(v, int):
        for i in (-1, 0, 1, 8, 15, 17, 24, 48, 96, 255, 272, 1 << 31, -(1 << 31), 1 << 62):
            if i != v:
                yield f"int{i}", i
    elif isinstance(v, str):
        for s in ("", "bogus", "cpu", "AUTO", "mma", "fma", "wgmma", "direct", "tile", "gemv", "auto\0"):
            if s != v:
                yield f"path-{s!r}", s
    elif v is None or isinstance(v, torch.dtype):
        for dt in (None, torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int32):
            if dt != v:
                yield f"dtype-{dt}", dt


def _cases():
    out = []
    for name, args in _fake_args().items():
        for i, v in enumerate(args):
            for tag, _ in _mutations(v):
                out.append((f"{name}-{i}-{tag}", name, i, tag))
    return out


def _mutated_args(name, i, tag, device="cpu"):
    args = [a.to(device) if isinstance(a, torch.Tensor) else a for a in _fake_args()[name]]
    args[i] = dict(_mutations(args[i]))[tag]
    return args


_CASES = _cases()


def _outcome(op, args):
    try:
        r = op(*args)
    except (RuntimeError, TypeError) as e:
        return "err", type(e), str(e).splitlines()[0] if str(e) else ""
    r = r if isinstance(r, tuple) else (r,)
    return "ok", tuple((t.shape, t.dtype, t.stride()) for t in r), None


def test_case_count():
    # every op, and enough mutations that the sweep means something
    assert {c[1] for c in _CASES} == set(_fake_args())
    assert len(_CASES) > 600


@pytest.mark.parametrize("case", _CASES, ids=lambda c: c[0])
def test_mutated_args(case):
    _, name, i, tag = case
    op = getattr(ops, name)
    args = _mutated_args(name, i, tag)
    m = args[i]
    cpu = _outcome(op, args)  # any other exception type fails the test here
    if cpu[0] == "err":
        assert name in cpu[2], f"the message does not name the op: {cpu[2]!r}"
    meta = _outcome(op, [_meta(a) for a in args])
    if isinstance(m, str) and m in _CUDA_PATHS.get(name, ()):
        # meta takes the CUDA path names too (CPU refuses them)
        assert meta[0] == "ok" or meta[2] == cpu[2], (cpu, meta)
        return
    if isinstance(m, str) and cpu[0] == "err" and meta[0] == "err":
        # meta lists both backends' names where CPU lists its own
        assert meta[2].split(" is not a ")[0] == cpu[2].split(" is not a ")[0], (cpu, meta)
        return
    assert cpu == meta, f"CPU {cpu} but meta {meta}"


@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
@pytest.mark.parametrize("case", _CASES, ids=lambda c: c[0])
def test_mutated_args_cuda(case):
    _, name, i, tag = case
    op = getattr(ops, name)
    got = _outcome(op, _mutated_args(name, i, tag, "cuda"))
    torch.cuda.synchronize()  # an asynchronous fault of the call surfaces here
    if got[0] == "err":
        assert name in got[2], f"the message does not name the op: {got[2]!r}"
        return
    cpu_args = _mutated_args(name, i, tag)
    cpu = _outcome(op, cpu_args)
    if cpu[0] == "ok":
        assert [o[:2] for o in got[1]] == [o[:2] for o in cpu[1]], (got, cpu)
    else:  # only a CUDA path name may run on CUDA and not on CPU
        m = cpu_args[i]
        assert isinstance(m, str) and m in _CUDA_PATHS.get(name, ()), (got, cpu)
