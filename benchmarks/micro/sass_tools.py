"""Offline SASS inspection for kernels compiled here without a GPU.

Compile one translation unit to an object (`compile`, with the defines and include paths of
setup.py's CUDA build), then read its SASS through cuobjdump:

  python benchmarks/micro/sass_tools.py compile csrc/fp8/fp8_block_gemv.cu 90 /tmp/fp8.o
      nvcc -c for one arch ("90", "90a", "80"); ptxas -v goes to /tmp/fp8.o.log
  python benchmarks/micro/sass_tools.py loop /tmp/fp8.o NAME_SUBSTRING [--with HMMA]
      the function's largest backward-branch range (holding that opcode) and its opcode histogram
  python benchmarks/micro/sass_tools.py ctrl /tmp/fp8.o NAME_SUBSTRING [--grep REGEX]
      every instruction with its decoded control bits: stall cycles, write / read
      scoreboard, the scoreboards it waits on (Volta+ 128-bit encoding, high word bits
      41-44 stall, 45 yield, 46-48 write barrier, 49-51 read barrier, 52-57 wait mask)
  python benchmarks/micro/sass_tools.py diff /tmp/a.o /tmp/b.o
      per function: instruction-identical or not, and where the first difference is

`loop` is a proxy: the largest backward branch's range can contain cold blocks (the
refill branch, an epilogue placed inside), so compare like with like. The scoreboard
view is how docs/fp8_gemv.md ("Where the warps wait") found the shared x scoreboard.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_INS = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?);?\s*/\* (0x[0-9a-f]+) \*/")
_HI = re.compile(r"/\* (0x[0-9a-f]+) \*/")


def cuobjdump() -> str:
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    import triton  # ships one; the CI venv has it

    exe = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(exe):
        sys.exit("no cuobjdump on PATH or in triton's package")
    return exe


def functions(obj: str) -> dict[str, list[tuple[int, str, int]]]:
    """name -> [(address, instruction text, high 64 bits of the encoding)]."""
    text = subprocess.run([cuobjdump(), "-sass", obj], check=True, capture_output=True,
                          text=True).stdout
    out: dict[str, list[tuple[int, str, int]]] = {}
    for chunk in text.split("Function : ")[1:]:
        lines = chunk.splitlines()
        name = lines[0].strip()
        ins = []
        for i, line in enumerate(lines):
            m = _INS.match(line)
            if m and i + 1 < len(lines):
                hi = _HI.search(lines[i + 1])
                if hi:
                    ins.append((int(m.group(1), 16), m.group(2).strip(), int(hi.group(1), 16)))
        out[name] = ins
    return out


def pick(funcs: dict, sub: str) -> tuple[str, list]:
    names = [n for n in funcs if sub in n]
    if len(names) != 1:
        sys.exit(f"{len(names)} functions match {sub!r}: " + ", ".join(n[:90] for n in names[:8]))
    return names[0], funcs[names[0]]


def opcode(text: str) -> str:
    parts = text.split()
    op = parts[1] if parts[0].startswith("@") and len(parts) > 1 else parts[0]
    return op.split(".")[0]


def cmd_compile(args) -> None:
    venv = os.path.join(ROOT, ".venv", "lib", f"python{sys.version_info.major}.{sys.version_info.minor}",
                        "site-packages")
    tinc = os.path.join(venv, "torch", "include")
    import sysconfig

    flags = ["-std=c++20", "-O3", "-c", args.source, "-o", args.out, "-I", os.path.join(ROOT, "csrc"),
             "-I", tinc, "-I", os.path.join(tinc, "torch", "csrc", "api", "include"),
             "-I", os.path.join(venv, "nvidia", "cu13", "include"), "-I", sysconfig.get_paths()["include"],
             f"-gencode=arch=compute_{args.arch},code=sm_{args.arch}", "-DTORCH_EXTENSION_NAME=_C",
             "-DTORCHQUANT_WITH_CUDA=1", "-Xptxas", "-v", "--expt-relaxed-constexpr",
             "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
             "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
             "-D_GLIBCXX_USE_CXX11_ABI=1", "-Xcompiler", "-fPIC"]
    with open(args.out + ".log", "w") as log:
        rc = subprocess.run([shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc", *flags],
                            stdout=log, stderr=subprocess.STDOUT).returncode
    print(f"nvcc rc={rc}; ptxas report in {args.out}.log")
    sys.exit(rc)


def cmd_loop(args) -> None:
    name, ins = pick(functions(args.obj), args.name)
    index = {a: i for i, (a, _, _) in enumerate(ins)}
    best = None
    for i, (a, text, _) in enumerate(ins):
        if "BRA" in text:
            targets = re.findall(r"0x([0-9a-f]+)", text)
            if targets and int(targets[-1], 16) <= a and int(targets[-1], 16) in index:
                start = index[int(targets[-1], 16)]
                if args.with_op and not any(opcode(t) == args.with_op for _, t, _ in ins[start:i + 1]):
                    continue
                if best is None or i - start > best[1] - best[0]:
                    best = (start, i)
    print(name)
    print(f"{len(ins)} instructions")
    if best is None:
        print("no backward branch")
        return
    hist = collections.Counter(opcode(t) for _, t, _ in ins[best[0]:best[1] + 1])
    print(f"largest loop: {best[1] - best[0] + 1} instructions at {ins[best[0]][0]:#x}..{ins[best[1]][0]:#x}")
    print(", ".join(f"{k} {v}" for k, v in hist.most_common()))


def cmd_ctrl(args) -> None:
    name, ins = pick(functions(args.obj), args.name)
    print(name)
    pat = re.compile(args.grep) if args.grep else None
    for a, text, hi in ins:
        stall, yld = (hi >> 41) & 0xF, (hi >> 45) & 1
        wb, rb, wm = (hi >> 46) & 7, (hi >> 49) & 7, (hi >> 52) & 0x3F
        line = (f"{a:05x} S{stall:2d}{'Y' if yld else ' '} W{'-' if wb == 7 else wb} "
                f"R{'-' if rb == 7 else rb} wait[{''.join(str(j) for j in range(6) if wm >> j & 1):6s}] {text}")
        if pat is None or pat.search(line):
            print(line)


def cmd_diff(args) -> None:
    a, b = functions(args.a), functions(args.b)
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"only in {'a' if name in a else 'b'}: {name[:110]}")
            continue
        ta = [re.sub(r"\s+", " ", t) for _, t, _ in a[name]]
        tb = [re.sub(r"\s+", " ", t) for _, t, _ in b[name]]
        if ta == tb:
            print(f"identical ({len(ta)}): {name[:100]}")
        else:
            first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
            print(f"DIFFER ({len(ta)} vs {len(tb)}, first at {first}): {name[:100]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("source")
    c.add_argument("arch", help='"90", "90a", "80"')
    c.add_argument("out")
    c.set_defaults(fn=cmd_compile)
    lp = sub.add_parser("loop")
    lp.add_argument("obj")
    lp.add_argument("name")
    lp.add_argument("--with", dest="with_op", default=None,
                    help="only loops holding this opcode, e.g. HMMA (skips a larger staging loop)")
    lp.set_defaults(fn=cmd_loop)
    ct = sub.add_parser("ctrl")
    ct.add_argument("obj")
    ct.add_argument("name")
    ct.add_argument("--grep", default=None)
    ct.set_defaults(fn=cmd_ctrl)
    d = sub.add_parser("diff")
    d.add_argument("a")
    d.add_argument("b")
    d.set_defaults(fn=cmd_diff)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
