# Build environment on the GPU machine, sourced by the device scripts (gpu_job.sh,
# micro/ab_builds.sh) from the repository root: `. benchmarks/device_env.sh [MAX_JOBS default]`.
# Sets PY (python3 unless PYTHON) and ARCH (this GPU's compute capability, e.g. 9.0); exports
# PYTHONUNBUFFERED, MAX_JOBS, TORCH_CUDA_ARCH_LIST (ARCH unless set: only the arch at hand is
# compiled) and CC / CXX.
#
# The H200 image sets CC/CXX to a gcc wrapper that links libstdc++ statically into the
# extension; its own ostream then formats numbers with the process's (dynamic) locale
# facets, and every failing TORCH_CHECK with a number in its message segfaulted (cuda-gdb:
# std::ostream::_M_insert<long> inside _C.so). The system compiler links libstdc++
# dynamically, like torch.
if [ -x /usr/bin/g++ ] && [ -x /usr/bin/gcc ]; then export CC=/usr/bin/gcc CXX=/usr/bin/g++; fi
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-${1:-16}}
ARCH=$($PY -c "import torch; c = torch.cuda.get_device_capability(); print(f'{c[0]}.{c[1]}')")
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$ARCH}
