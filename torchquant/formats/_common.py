import torch


def check_finite(t: torch.Tensor, op: str, name: str = "input") -> None:
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{op}: {name} contains NaN or Inf; quantizing it would give a meaningless scale")


def check_2d_float(t: torch.Tensor, op: str, name: str = "w") -> None:
    if t.dim() != 2:
        raise ValueError(f"{op}: {name} must be 2-D, got shape {tuple(t.shape)}")
    if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise TypeError(f"{op}: {name} must be float32, float16 or bfloat16, got {t.dtype}")
