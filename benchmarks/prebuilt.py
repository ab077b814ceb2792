"""Extension builds made on the development machine and carried to the GPU machine.

A device call starts a fresh machine, and a full sm_90 build of this extension takes ~135 s of
its ~30 minutes (the nvfp4 sources alone ~50-80 s). The development machine has the same nvcc
(13.0) and can install the device's torch (2.11.0+cu130, from PyPI), and the extension uses the
stable Python ABI (setup.py: a PyInit stub, no pybind11), so a build made here against that torch
imports under the device's Python 3.12. This script makes such a build and, on the device,
installs it when it matches the tree there; when it does not, or does not import, the caller
builds as before.

  here:    python benchmarks/prebuilt.py make --python /path/to/venv-with-torch-2.11/bin/python
           (builds a clean checkout of HEAD for TORCH_CUDA_ARCH_LIST=9.0 into .prebuilt/sm90/:
           _C.so.xz, _C_sm90a.so.xz (stripped of host debug info) and STAMP.json; .prebuilt/ is ignored by git; carry it:
           run(..., carry=[".prebuilt"]))
  device:  python3 benchmarks/prebuilt.py use && echo prebuilt || <build as before>
  here:    python benchmarks/prebuilt.py cputest --python /path/to/that/python [pytest args]
           (the CPU tests under the device's torch, with the prebuilt modules, in a clean clone of
           HEAD: catches torch-version differences before device time is spent)

`make --only a.cu,b.cu` builds those sources only (a prebuilt that `use` takes only where the
run's TORCHQUANT_ONLY_SOURCES is a subset of them); `make --overlay ab_old --dir
.prebuilt/ab_B` builds HEAD with the files of ab_old/ copied over it (the B side of
benchmarks/micro/ab_builds.sh, which takes .prebuilt/ab_B for B and the default folder for A).

`use` installs the modules only if the STAMP's source hash (setup.py and every file under csrc/)
equals the tree's, its torch version equals the running torch's, and its arch list holds the
GPU's compute capability; it then imports torchquant in a subprocess (both modules, one op call
on the GPU) and removes the copies again if that fails. It prints one line saying which.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(HERE, ".prebuilt", "sm90")
MODULES = ("_C.so", "_C_sm90a.so")


def source_hash(root: str) -> str:
    """sha256 over setup.py and every file under csrc/ (relative path and bytes, sorted)."""
    files = ["setup.py"]
    for d, _, names in os.walk(os.path.join(root, "csrc")):
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()


def make(args) -> int:
    out = os.path.abspath(args.dir)
    torch_ver = subprocess.run(
        [args.python, "-c", "import torch; print(torch.__version__)"],
        check=True, capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="tq_prebuild_")
    try:
        subprocess.run(["git", "clone", "-q", HERE, work], check=True)
        subprocess.run(["git", "-C", work, "checkout", "-q", commit], check=True)
        overlaid = []
        if args.overlay:  # ab_builds.sh's variant B: files mirroring repository paths
            base = os.path.abspath(args.overlay)
            for d, _, names in os.walk(base):
                for n in names:
                    rel = os.path.relpath(os.path.join(d, n), base)
                    os.makedirs(os.path.dirname(os.path.join(work, rel)), exist_ok=True)
                    shutil.copy2(os.path.join(d, n), os.path.join(work, rel))
                    overlaid.append(rel)
        env = dict(os.environ, TORCH_CUDA_ARCH_LIST=args.arch, MAX_JOBS=str(args.jobs))
        for k in ("TORCHQUANT_ONLY_SOURCES", "TORCHQUANT_SKIP_SOURCES", "TORCHQUANT_CPU_ONLY",
                  "TORCHQUANT_LIMITED_API"):
            env.pop(k, None)
        only = sorted(x.strip() for x in args.only.split(",") if x.strip())
        if only:
            env["TORCHQUANT_ONLY_SOURCES"] = ",".join(only)
        modules = MODULES if not only or any(x.endswith("_sm90a.cu") for x in only) else MODULES[:1]
        # -lcudart: torch's CUDA_HOME here is /usr/local (nvcc in /usr/local/bin), whose lib has
        # no libcudart.so; the toolkit's own folder has it (soname libcudart.so.13, as the device).
        cudart = sorted(glob.glob("/usr/local/cuda*/lib*/libcudart.so"))
        if cudart:
            env["LIBRARY_PATH"] = os.pathsep.join(
                [os.path.dirname(cudart[-1])] + [p for p in [env.get("LIBRARY_PATH", "")] if p])
        if os.path.exists("/usr/bin/gcc"):
            env.update(CC="/usr/bin/gcc", CXX="/usr/bin/g++")
        log = os.path.join(work, "build.log")
        t0 = datetime.datetime.now()
        with open(log, "w") as f:
            r = subprocess.run([args.python, "setup.py", "build_ext", "--inplace"], cwd=work,
                               env=env, stdout=f, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            with open(log) as f:
                tail = f.read()[-4000:]
            print(tail)
            print(f"prebuilt make: build failed (rc {r.returncode})")
            return 1
        secs = (datetime.datetime.now() - t0).total_seconds()
        os.makedirs(out, exist_ok=True)
        for m in modules:
            src = os.path.join(work, "torchquant", m)
            if not os.path.exists(src):
                print(f"prebuilt make: {m} was not built")
                return 1
            # Host debug info off (-g comes from Python's CFLAGS), then xz: _C.so goes from
            # ~34 MB to ~3 MB, which keeps the carried folder far below the 64 MiB a call takes.
            subprocess.run(["strip", "--strip-debug", src], check=True)
            with open(src, "rb") as f, lzma.open(os.path.join(out, m + ".xz"), "wb",
                                                 preset=6) as g:
                shutil.copyfileobj(f, g)
        with open(log) as f:
            spills = [ln.strip() for ln in f if "bytes spill" in ln
                      and " 0 bytes spill stores, 0 bytes spill loads" not in ln]
        stamp = {
            "source_hash": source_hash(work),
            "commit": commit,
            "torch": torch_ver,
            "arch": args.arch,
            "only_sources": only,
            "overlay": overlaid,
            "modules": list(modules),
            "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "build_seconds": round(secs),
            "host": os.uname().nodename,
            "spill_lines": spills,
        }
        with open(os.path.join(out, "STAMP.json"), "w") as f:
            json.dump(stamp, f, indent=1)
        shutil.copy2(log, os.path.join(out, "build.log"))
        for m in MODULES:  # a module of an older build in the same folder
            if m not in modules and os.path.exists(os.path.join(out, m + ".xz")):
                os.remove(os.path.join(out, m + ".xz"))
        sizes = ", ".join(f"{m}.xz {os.path.getsize(os.path.join(out, m + '.xz')) / 2**20:.1f} MiB"
                          for m in modules)
        print(f"prebuilt make: {out} ({sizes}; {commit[:7]}, torch {torch_ver}, "
              f"arch {args.arch}, {secs:.0f} s, {len(spills)} nonzero spill lines)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


IMPORT_CHECK = r"""
import sys, torch, torchquant
if sys.argv[1] == "1":  # the build has the sm_90a module
    assert torchquant._C_sm90a is not None, "_C_sm90a did not load"
if sys.argv[2] == "0":  # a full build (a build of some sources only lacks these ops)
    x = torch.randn(3, 64, device="cuda")
    q, s = torch.ops.torchquant.quantize_int8(x, True, True)[:2]
    torch.cuda.synchronize()
    try:
        torch.ops.torchquant.prune24(torch.ones(2, 6))
        raise SystemExit("a bad argument did not raise")
    except RuntimeError:
        pass
print("ok")
"""


def use(args) -> int:
    d = os.path.abspath(args.dir)
    stamp_path = os.path.join(d, "STAMP.json")
    if not os.path.exists(stamp_path):
        print(f"prebuilt: none at {d}; building")
        return 1
    with open(stamp_path) as f:
        stamp = json.load(f)
    import torch

    why = []
    if stamp["source_hash"] != source_hash(HERE):
        why.append(f"sources differ from the build's ({stamp['commit'][:7]})")
    if stamp["torch"] != torch.__version__:
        why.append(f"built for torch {stamp['torch']}, running {torch.__version__}")
    if torch.cuda.is_available():
        cc = "%d.%d" % torch.cuda.get_device_capability()
        if cc not in stamp["arch"].split(";"):
            why.append(f"built for {stamp['arch']}, GPU is {cc}")
    else:
        why.append("no GPU")
    built_only = set(stamp.get("only_sources", []))
    wanted = {x.strip() for x in os.environ.get("TORCHQUANT_ONLY_SOURCES", "").split(",")
              if x.strip()}
    if built_only and (not wanted or not wanted <= built_only):
        why.append("built from " + ",".join(sorted(built_only)) + " only; this run wants "
                   + (",".join(sorted(wanted)) if wanted else "every source"))
    if why:
        print("prebuilt: not used (" + "; ".join(why) + "); building")
        return 1
    modules = stamp.get("modules", list(MODULES))
    dst = [os.path.join(HERE, "torchquant", m) for m in modules]
    for m in MODULES:  # a module of an earlier build must not outlive this one
        p = os.path.join(HERE, "torchquant", m)
        if m not in modules and os.path.exists(p):
            os.remove(p)
    _unpack(d, modules, os.path.join(HERE, "torchquant"))
    has_sm90a = "1" if "_C_sm90a.so" in modules else "0"
    partial = "1" if built_only else "0"
    r = subprocess.run([sys.executable, "-c", IMPORT_CHECK, has_sm90a, partial], cwd=HERE, capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=HERE))
    if r.returncode != 0 or "ok" not in r.stdout:
        for p in dst:
            os.remove(p)
        err = (r.stderr or r.stdout).strip().splitlines()
        print("prebuilt: copied but failed to import (" + (err[-1] if err else "?")
              + "); removed, building")
        return 1
    print(f"prebuilt: using the build of {stamp['commit'][:7]} made {stamp['built']} "
          f"(torch {stamp['torch']}, arch {stamp['arch']}, {len(stamp['spill_lines'])} "
          f"nonzero spill lines)")
    return 0


def _unpack(d: str, modules, dst_dir: str) -> None:
    """The build's compressed modules from folder `d` into `dst_dir`, executable."""
    for m in modules:
        p = os.path.join(dst_dir, m)
        with lzma.open(os.path.join(d, m + ".xz"), "rb") as f, open(p, "wb") as g:
            shutil.copyfileobj(f, g)
        os.chmod(p, 0o755)


def cputest(args) -> int:
    """The CPU tests under the device's torch, on this machine, before device time is spent:
    torch's Python side differs between versions (2.11's torch._check takes only a callable
    message, 2.11 casts past e4m3's 448 to NaN where 2.14 saturates), and CI runs a newer torch.
    A clean clone of HEAD with the prebuilt modules unpacked into it (the CUDA build imports and
    runs its CPU kernels without a GPU; the CUDA tests skip)."""
    with open(os.path.join(args.dir, "STAMP.json")) as f:
        stamp = json.load(f)
    with tempfile.TemporaryDirectory(prefix="tq_cputest_") as tmp:
        src = os.path.join(tmp, "src")
        subprocess.run(["git", "clone", "-q", HERE, src], check=True)
        if stamp["source_hash"] != source_hash(src):
            print(f"prebuilt cputest: {args.dir} was built from other sources than HEAD; re-make it first")
            return 2
        _unpack(args.dir, stamp.get("modules", list(MODULES)), os.path.join(src, "torchquant"))
        cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(args.pytest_args or ["tests"])]
        print(f"prebuilt cputest: {stamp['commit'][:7]} under {args.python}: {' '.join(cmd[1:])}", flush=True)
        return subprocess.run(cmd, cwd=src, env=dict(os.environ, PYTHONPATH=src,
                                                     CUDA_VISIBLE_DEVICES="")).returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="build HEAD here for the device")
    m.add_argument("--python", required=True, help="a python whose torch is the device's")
    m.add_argument("--arch", default="9.0")
    m.add_argument("--jobs", type=int, default=2)
    m.add_argument("--dir", default=DEFAULT_DIR)
    m.add_argument("--only", default="", help="comma-separated sources (setup.py's ONLY_SOURCES)")
    m.add_argument("--overlay", default="", help="a folder of files copied over the checkout")
    u = sub.add_parser("use", help="install a matching build (on the device)")
    u.add_argument("--dir", default=DEFAULT_DIR)
    c = sub.add_parser("cputest", help="the CPU tests under the device's torch, with the prebuilt modules (here)")
    c.add_argument("--python", required=True, help="a python whose torch is the device's")
    c.add_argument("--dir", default=DEFAULT_DIR)
    c.add_argument("pytest_args", nargs=argparse.REMAINDER, help="what pytest runs (default: tests)")
    sub.add_parser("hash", help="print the tree's source hash")
    sub.add_parser("status", help="which builds under .prebuilt/ match this tree (no GPU needed)")
    args = p.parse_args()
    if args.cmd == "hash":
        print(source_hash(HERE))
        return 0
    if args.cmd == "status":
        root, h = os.path.join(HERE, ".prebuilt"), source_hash(HERE)
        names = sorted(os.listdir(root)) if os.path.isdir(root) else []
        for n in names:
            sp = os.path.join(root, n, "STAMP.json")
            if not os.path.exists(sp):
                continue
            with open(sp) as f:
                st = json.load(f)
            what = "matches this tree" if st["source_hash"] == h else (
                "overlay build" if st.get("overlay") else "STALE: sources changed since")
            print(f"{n}: {st['commit'][:7]} {st['built']} torch {st['torch']} arch {st['arch']}"
                  f"{' only ' + ','.join(st['only_sources']) if st.get('only_sources') else ''}: {what}")
        if not names:
            print("no builds under .prebuilt/")
        return 0
    if args.cmd == "cputest":
        return cputest(args)
    return make(args) if args.cmd == "make" else use(args)


if __name__ == "__main__":
    sys.exit(main())
