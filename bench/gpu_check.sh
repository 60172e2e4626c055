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
#   import) tensorlib is built here. And optionally cubins/: the kernels compiled for the
#   GPU beforehand (python -m tensorlib.cuda.kernel_cache --arch sm_90 --cache
#   CARRY_DIR/cubins); whatever is missing or stale is compiled here, 16 files at once.
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
export TENSORLIB_CUDA_CACHE=$(cd "$CARRY" && pwd)/cubins
if [ "$TENSORLIB_CUDA" = pycuda ]; then
  arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  stamp "kernels for $arch: $(ls "$TENSORLIB_CUDA_CACHE" 2>/dev/null | grep -c "$arch") carried, the rest compiled now"
  python3 -m tensorlib.cuda.kernel_cache --arch "$arch" -j 16 > /dev/null || exit 1
fi
stamp "first use: one add"
timeout 120 python3 -c '
import tensorlib as t
x = t.arange(10.0, device="cuda")
print((x * 2 + 1).sum().item(), t.softmax(x, 0).cpu().tolist()[-1], (x.view(2, 5) @ x.view(5, 2)).tolist())'
stamp "the CUDA tests on the real device"
timeout 240 python3 -m pytest -q -rfs -p no:cacheprovider --junitxml="$OUTDIR/cuda_tests.xml" \
  tests/test_cuda_device.py tests/test_cuda_nn.py tests/test_cuda_optim_random.py \
  tests/test_cuda_index_sort.py 2>&1 | tail -60
stamp "bench/bench_cuda.py"
timeout 150 python3 bench/bench_cuda.py --more --profile-host ${GPU_CHECK_BENCH:-} 2>&1 |
  grep -v "^ *$\|Ordered by\|function calls\|List reduced"
# The device suite as CI runs it on the emulator, here on the real GPU, spread over 8 workers
# (pytest-xdist is on the GPU image); interrupted (SIGINT: pytest still prints its summary)
# after SUITE_S seconds. The full log and the junit file come back under $OUT.
SUITE_S=${GPU_CHECK_SUITE_S:-150}
stamp "the device suite (tests/device_suite.txt, TENSORLIB_TEST_DEVICE=cuda), ${SUITE_S} s at most"
workers=$(python3 -c 'import xdist' 2>/dev/null && echo "-n 8" || echo "")
TENSORLIB_TEST_DEVICE=cuda HYPOTHESIS_PROFILE=device timeout -s INT -k 30 "$SUITE_S" \
  python3 -m pytest -q -rf -p no:cacheprovider $workers --junitxml="$OUTDIR/device_suite.xml" \
  $(grep -v '^#' tests/device_suite.txt) > "$OUTDIR/device_suite.log" 2>&1
grep -E '^(FAILED|ERROR)' "$OUTDIR/device_suite.log" | cut -c1-200 | head -80
tail -3 "$OUTDIR/device_suite.log"
stamp "done"
