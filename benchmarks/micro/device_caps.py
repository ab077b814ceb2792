"""Print what the launch rules read from the current CUDA device: name, SMs, memory clock, bus
width, SM clock, and DRAM bytes per SM clock x 10 as csrc/common/device.h computes it
(tests/conftest.py dram_bytes_per_sm_clk_x10; the nvfp4 direct GEMV's narrow-card rules apply at
<= 150). Run from the repository root: python benchmarks/micro/device_caps.py"""
from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests"))
from conftest import dram_bytes_per_sm_clk_x10  # noqa: E402


def main() -> None:
    p = torch.cuda.get_device_properties(0)
    print(p.name, "SMs", p.multi_processor_count, "memory clock kHz", getattr(p, "memory_clock_rate", None),
          "bus bits", getattr(p, "memory_bus_width", None), "SM clock kHz", getattr(p, "clock_rate", None),
          "DRAM bytes per SM clock x10", dram_bytes_per_sm_clk_x10())


if __name__ == "__main__":
    main()
