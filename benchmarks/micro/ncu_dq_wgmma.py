"""Launches the dequantizing fp8_block wgmma GEMM once per (M, shape) for Nsight Compute
(`ncu -k regex:fp8_block_gemm ... python benchmarks/micro/ncu_dq_wgmma.py --ms 128,2048`)."""
import argparse

import torch

import torchquant  # noqa: F401

ops = torch.ops.torchquant


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="28672x8192")
    ap.add_argument("--ms", default="128,2048")
    args = ap.parse_args()
    N, K = (int(v) for v in args.shape.split("x"))
    w_q, w_s = ops.quantize_fp8_block(torch.randn(N, K, device="cuda") * 0.02, 128)
    for M in (int(m) for m in args.ms.split(",")):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        ops._fp8_block_gemm_sm90a(x, w_q, w_s, 128, None)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
