"""The nvcc compile gate: every ``cuda/*.cu`` must compile for real GPU architectures.

For each kernel file, one nvcc run builds a fat binary for sm_80 and sm_90 with warnings as
errors and ``--resource-usage``; the gate fails on a compile error, on any register spill,
or when the entry points nvcc compiled differ from the ``extern "C"`` kernels the emulator
finds in the same file (both back ends must see the same kernels). No GPU is needed.

    python tools/cuda_compile_gate.py            # all of cuda/*.cu
    python tools/cuda_compile_gate.py cuda/reduce.cu -v

Exit status 0 when every file passes, 1 otherwise, 2 when nvcc is missing.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_DIR = os.path.join(os.path.dirname(HERE), "cuda")
ARCHS = ("sm_80", "sm_90")


def nvcc_command(path, out, archs=ARCHS):
    """The nvcc command line the gate runs for one file."""
    gencode = []
    for a in archs:
        gencode += ["-gencode", f"arch=compute_{a[3:]},code={a}"]
    return ["nvcc", "-fatbin", *gencode, "-std=c++17", "--resource-usage",
            "-Werror", "all-warnings", f"-I{CUDA_DIR}", f"-I{os.path.dirname(path)}",
            path, "-o", out]


def parse_resource_usage(text):
    """{(arch, entry): {"registers", "spill_stores", "spill_loads", "smem", "stack"}}
    from nvcc's ptxas output."""
    usage, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\d+\w*)'", line)
        if m:
            cur = (m.group(2), m.group(1))
            usage[cur] = {"registers": 0, "spill_stores": 0, "spill_loads": 0, "smem": 0,
                          "stack": 0}
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill "
                      r"loads", line)
        if m:
            u = usage[cur]
            u["stack"], u["spill_stores"], u["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            usage[cur]["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            usage[cur]["smem"] = int(s.group(1)) if s else 0
    return usage


def emulator_kernels(path):
    """The kernels the emulator would export from `path` (None when it cannot tell)."""
    try:
        try:
            from tensorlib.cuda._emulator import _discover_kernels, _emu_dir
        except ImportError:
            # run from a checkout where tensorlib is not importable: the checkout's sources
            # (the emulator's kernel discovery needs no compiled core); sys.path is restored,
            # since a caller's later imports (and its subprocesses) must not see the checkout
            root = os.path.dirname(HERE)
            sys.path.insert(0, root)
            try:
                from tensorlib.cuda._emulator import _discover_kernels, _emu_dir
            finally:
                sys.path.remove(root)
        return set(_discover_kernels(path, [os.path.dirname(path), CUDA_DIR, _emu_dir()]))
    except Exception as e:  # the gate itself must not depend on the emulator building
        print(f"  (could not list the emulator's kernels: {e})")
        return None


def check_file(path, verbose=False):
    """Run the gate on one file; return a list of problems (empty when it passes)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = nvcc_command(path, os.path.join(tmp, "out.fatbin"))
        r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if verbose:
        print(text)
    name = os.path.basename(path)
    if r.returncode != 0:
        return [f"{name}: nvcc failed (exit {r.returncode}):\n{' '.join(cmd)}\n{text[-4000:]}"]
    problems = []
    usage = parse_resource_usage(text)
    for (arch, entry), u in sorted(usage.items()):
        if u["spill_stores"] or u["spill_loads"]:
            problems.append(f"{name}: {entry} spills registers on {arch} "
                            f"({u['spill_stores']} bytes stored, {u['spill_loads']} loaded)")
        if u["smem"] > 48 * 1024:
            problems.append(f"{name}: {entry} uses {u['smem']} bytes of static shared memory "
                            f"on {arch} (limit 48 KiB)")
    for arch in ARCHS:
        entries = {e for a, e in usage if a == arch}
        if not entries:
            problems.append(f"{name}: no entry function compiled for {arch}")
    emu = emulator_kernels(path)
    nv = {e for _, e in usage}
    if emu is not None and emu != nv:
        problems.append(f"{name}: nvcc and the emulator see different kernels: only nvcc "
                        f"{sorted(nv - emu)}, only the emulator {sorted(emu - nv)}")
    regs = max((u["registers"] for u in usage.values()), default=0)
    print(f"{name}: {len(nv)} kernels, max {regs} registers, {'FAIL' if problems else 'ok'}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="default: every cuda/*.cu")
    ap.add_argument("-v", "--verbose", action="store_true", help="print nvcc's output")
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("cuda compile gate: nvcc is not on PATH (install the CUDA toolkit)")
        return 2
    files = args.files or sorted(glob.glob(os.path.join(CUDA_DIR, "*.cu")))
    problems = []
    for f in files:
        problems += check_file(os.path.abspath(f), args.verbose)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
