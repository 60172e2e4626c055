#!/usr/bin/env bash
# The GPU check, for a lent GPU machine (H100/H200, Python 3.12, nvcc, PyTorch with CUDA, no
# pycuda, no network): build tensorlib there, run the CUDA tests on the real device, and time
# the kernels against PyTorch's. Prepared and rehearsed on a machine without a GPU.
#   usage: bash bench/gpu_check.sh WHEELS_DIR      (WHEELS_DIR: a cp312 pycuda wheel and its
#          dependencies, built with ../shared/tools/pycuda-wheel.sh WHEELS_DIR python3.12)
# Writes everything it prints to $OUT/gpu_check.log when $OUT is set. Budget: under 8 minutes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WHEELS=${1:?usage: gpu_check.sh WHEELS_DIR}
LOG=${OUT:-/tmp}/gpu_check.log
exec > >(tee "$LOG") 2>&1
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
stamp "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
stamp "python: $(python3 --version); nvcc: $(nvcc --version | tail -1)"
stamp "installing pycuda from $WHEELS"
python3 -m pip install -q --no-index --find-links "$WHEELS" pycuda || { echo "pycuda install failed"; exit 1; }
stamp "building tensorlib in place (-O3)"
python3 setup.py build_ext --inplace -j16 > /tmp/tl_build.log 2>&1 || { tail -40 /tmp/tl_build.log; exit 1; }
export TENSORLIB_CUDA=pycuda PYTHONPATH=$PWD
stamp "runtime: $(python3 -c 'import tensorlib as t; print(t.cuda.backend_name(), t.cuda.device_count(), t.cuda.get_device_name())')"
stamp "the CUDA tests on the real device"
timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_device.py 2>&1 | tail -30
stamp "bench/bench_cuda.py"
timeout 180 python3 bench/bench_cuda.py
stamp "done"
