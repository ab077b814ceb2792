"""Build torchquant's operator library.

One build entry. It makes a CUDAExtension when the installed torch has CUDA
and nvcc is found, otherwise a CppExtension; both register every op (the CPU
build simply has no CUDA kernels). Knobs, all environment variables:

  TORCHQUANT_CPU_ONLY=1    build the CppExtension even where CUDA is available
  TORCH_CUDA_ARCH_LIST     compute capabilities to compile for, e.g. "8.0;9.0".
                           Unset on a machine without a GPU it defaults to
                           "8.0;9.0" (instead of torch's long list of every arch).
  MAX_JOBS                 parallel compile jobs (torch's ninja backend)
  TORCHQUANT_SKIP_SOURCES / TORCHQUANT_ONLY_SOURCES  development aids (below)

Sources whose name ends in _sm90a.cu use Hopper-only instructions (wgmma);
they go into a second module, torchquant._C_sm90a, compiled for sm_90a alone
and only when 9.0 is in the arch list, so no other file pays for that target.
"""

import glob
import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import (
    CUDA_HOME,
    BuildExtension,
    CppExtension,
    CUDAExtension,
)
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def rel(paths):
    return sorted(os.path.relpath(p, HERE) for p in paths)


def want_cuda():
    if os.environ.get("TORCHQUANT_CPU_ONLY", "0") == "1":
        return False
    return torch.version.cuda is not None and CUDA_HOME is not None


def arch_list():
    archs = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if archs is None:
        # No GPU to ask: build for Ampere and Hopper rather than every arch.
        archs = "8.0;9.0"
        if torch.cuda.is_available():
            cc = torch.cuda.get_device_capability()
            archs = f"{cc[0]}.{cc[1]}"
        os.environ["TORCH_CUDA_ARCH_LIST"] = archs
    return [a.strip() for a in archs.replace(" ", ";").split(";") if a.strip()]


cpp_sources = rel(
    [os.path.join(HERE, "csrc", "torchquant.cpp")]
    + glob.glob(os.path.join(HERE, "csrc", "cpu", "*.cpp"))
)
cu_all = glob.glob(os.path.join(HERE, "csrc", "**", "*.cu"), recursive=True)
# Development aids (benchmarks/gpu_job.sh, benchmarks/micro/ab_builds.sh), never set
# in CI or releases: TORCHQUANT_SKIP_SOURCES leaves out CUDA sources (those that
# failed to compile, so the rest can still be tested); TORCHQUANT_ONLY_SOURCES
# keeps only the ones named (a device run that tests or times one op). Comma-
# separated paths relative to this file; the ops of a left-out source have no
# CUDA kernel.
def _env_paths(name):
    return {s.strip() for s in os.environ.get(name, "").split(",") if s.strip()}


_skip, _only = _env_paths("TORCHQUANT_SKIP_SOURCES"), _env_paths("TORCHQUANT_ONLY_SOURCES")
cu_all = [p for p in cu_all if os.path.relpath(p, HERE) not in _skip
          and (not _only or os.path.relpath(p, HERE) in _only)]
cu_sources = rel(p for p in cu_all if not p.endswith("_sm90a.cu"))
cu_sm90a = rel(p for p in cu_all if p.endswith("_sm90a.cu"))

include_dirs = [os.path.join(HERE, "csrc")]
# The C++ ABI of std::string must match torch's own build (error messages
# cross into libc10 as std::string); stated explicitly rather than left to the
# compiler's default. The extension must also link libstdc++ dynamically, as
# torch does: a compiler that links it statically (the H200 image's CC/CXX
# wrapper) makes every failing check with a number in its message crash;
# benchmarks/gpu_job.sh builds with the system gcc there.
abi_flag = f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
cxx_flags = ["-O3", "-fopenmp", abi_flag]  # the C++ standard is torch's choice (C++20 for torch >= 2.10)
# Stable Python ABI (py_limited_api=True makes torch define Py_LIMITED_API):
# the module is a PyInit stub, no pybind11. TORCHQUANT_LIMITED_API=0 builds
# against the full Python API instead (a diagnostic switch).
LIMITED_API = os.environ.get("TORCHQUANT_LIMITED_API", "1") == "1"
define_macros = []
link_args = ["-fopenmp"]

def cuda_library_headers():
    """ATen's CUDA headers include cusparse.h / cublas_v2.h. A bare nvcc
    toolkit (as on CI) may lack them; the CUDA wheels torch depends on ship
    them under site-packages/nvidia/cu13/include, so fall back to those."""
    if os.path.exists(os.path.join(CUDA_HOME, "include", "cusparse.h")):
        return []
    try:
        import nvidia

        for base in nvidia.__path__:
            for sub in ("cu13", "cu12"):
                inc = os.path.join(base, sub, "include")
                if os.path.exists(os.path.join(inc, "cusparse.h")):
                    return [inc]
    except ImportError:
        pass
    return []


ext_modules = []
if want_cuda():
    include_dirs = include_dirs + cuda_library_headers()
    archs = arch_list()
    nvcc_flags = [
        abi_flag,
        "-O3",
        "--expt-relaxed-constexpr",
        "-lineinfo",
        "-Xptxas=-warn-spills",
    ]
    ext_modules.append(
        CUDAExtension(
            "torchquant._C",
            cpp_sources + cu_sources,
            include_dirs=include_dirs,
            define_macros=define_macros + [("TORCHQUANT_WITH_CUDA", "1")],
            extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags},
            extra_link_args=link_args,
            py_limited_api=LIMITED_API,
        )
    )
    if cu_sm90a and any(a.startswith("9.0") for a in archs):
        ext_modules.append(
            CUDAExtension(
                "torchquant._C_sm90a",
                [os.path.relpath(os.path.join(HERE, "csrc", "sm90a_module.cpp"), HERE)] + cu_sm90a,
                include_dirs=include_dirs,
                define_macros=define_macros + [("TORCHQUANT_WITH_CUDA", "1")],
                # An explicit -gencode replaces torch's arch list for this module.
                extra_compile_args={
                    "cxx": cxx_flags,
                    "nvcc": nvcc_flags + ["-gencode=arch=compute_90a,code=sm_90a"],
                },
                extra_link_args=link_args,
                py_limited_api=LIMITED_API,
            )
        )
else:
    ext_modules.append(
        CppExtension(
            "torchquant._C",
            cpp_sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args={"cxx": cxx_flags},
            extra_link_args=link_args,
            py_limited_api=LIMITED_API,
        )
    )

setup(
    name="torchquant",
    version="0.1.0",
    description="Quantized-inference kernels for PyTorch: INT8, FP8 block, NVFP4, 2:4",
    packages=find_packages(include=["torchquant", "torchquant.*"]),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
    python_requires=">=3.10",
    install_requires=["torch>=2.6"],
)
