#!/usr/bin/env bash
# The GPU check, for a lent GPU machine (H100/H200, Python 3.12, nvcc, PyTorch with CUDA, no
# pycuda, no network): install pycuda, put tensorlib's cp312 build in place, run the CUDA
# tests on the real device, time the kernels against PyTorch's, then (time allowing) run part
# of the op suite on the device. Prepared and rehearsed on a machine without a GPU.
#   usage: bash bench/gpu_check.sh CARRY_DIR
#   CARRY_DIR holds a cp312 pycuda wheel and its dependencies
#   (../shared/tools/pycuda-wheel.sh CARRY_DIR python3.12) and, optionally, so312/: the
#   cp312 extension modules built beforehand (tensorlib/_core/*.cpython-312-*.so and
#   tensorlib/_build_info.py), which saves the build; without them (or when they do not
#   import) tensorlib is built here.
# Writes everything it prints to $OUT/gpu_check.log when $OUT is set. Budget: under 8 minutes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CARRY=${1:?usage: gpu_check.sh CARRY_DIR}
OUTDIR=${OUT:-/tmp}
LOG=$OUTDIR/gpu_check.log
exec > >(tee "$LOG") 2>&1
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
stamp "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
stamp "python: $(python3 --version); numpy $(python3 -c 'import numpy; print(numpy.__version__)'); nvcc: $(nvcc --version | tail -1)"
stamp "installing pycuda from $CARRY"
python3 -m pip install -q --no-index --find-links "$CARRY" pycuda || { echo "pycuda install failed"; exit 1; }
export PYTHONPATH=$PWD
if [ -d "$CARRY/so312" ]; then
  cp "$CARRY"/so312/*.so tensorlib/_core/ && cp "$CARRY/so312/_build_info.py" tensorlib/
fi
if ! python3 -c 'import tensorlib' 2>/tmp/tl_import.err; then
  stamp "no usable prebuilt modules ($(tail -1 /tmp/tl_import.err)); building (-O3)"
  python3 setup.py build_ext --inplace -j16 > /tmp/tl_build.log 2>&1 || { tail -40 /tmp/tl_build.log; exit 1; }
fi
# rehearsal on a machine without a GPU: GPU_CHECK_RUNTIME=emulate GPU_CHECK_BENCH=--rehearse
export TENSORLIB_CUDA=${GPU_CHECK_RUNTIME:-pycuda}
stamp "runtime: $(python3 -c 'import tensorlib as t; print(t.cuda.backend_name(), t.cuda.device_count(), t.cuda.get_device_name())' 2>&1 | tail -3)"
stamp "first use: compile the kernels (pycuda caches them) and one add"
timeout 120 python3 -c '
import tensorlib as t
x = t.arange(10.0, device="cuda")
print((x * 2 + 1).sum().item(), t.softmax(x, 0).cpu().tolist()[-1], (x.view(2, 5) @ x.view(5, 2)).tolist())'
stamp "the CUDA tests on the real device"
timeout 240 python3 -m pytest -q -rfs -p no:cacheprovider --junitxml="$OUTDIR/cuda_tests.xml" \
  tests/test_cuda_device.py 2>&1 | tail -60
stamp "bench/bench_cuda.py"
timeout 150 python3 bench/bench_cuda.py ${GPU_CHECK_BENCH:-}
stamp "part of the op suite on the device (TENSORLIB_TEST_DEVICE=cuda), 90 s at most"
TENSORLIB_TEST_DEVICE=cuda timeout 90 python3 -m pytest -q -p no:cacheprovider \
  tests/test_elementwise.py tests/test_reduce.py 2>&1 | tail -5
stamp "done"
