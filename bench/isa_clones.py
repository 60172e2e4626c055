"""Which ISA clone each elementwise kernel runs on this CPU.

The float kernels are compiled as GCC target clones (TL_DISPATCH in
tensorlib/_core/cpu/cpu_simd.h: avx512f, arch=x86-64-v3 (AVX2 + FMA), default); the dynamic
loader picks one per function at load time by CPU features (an ifunc resolver calling __builtin_cpu_supports),
and the op tables ``tl_ew_<op>`` of the tensor module hold the resolved addresses. This
script reads those addresses through ctypes and names the clone each one is, from the
module's symbol table (``nm``, binutils):

    python bench/isa_clones.py                   # exp log tanh sigmoid erf gelu ...
    python bench/isa_clones.py exp sin --dtype float64
"""
import argparse
import ctypes
import shutil
import subprocess
import sys

DTYPE_INDEX = {"float32": 8, "float64": 9}      # the tables' dtype codes (cpu_elementwise.h)
NAMES = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "tanh",
         "sigmoid", "erf", "erfc", "pow", "gelu", "silu", "sqrt", "rsqrt", "add", "mul"]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _symbols(path):
    """{offset: [names]} of the local and global text symbols of the shared object."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    out = subprocess.run([nm, "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms.setdefault(int(parts[0], 16), []).append(parts[2])
    return syms


def clones(names=NAMES, dtype="float32"):
    """[(op, clone symbol or a note)] for each op's ``dtype`` loop.

    >>> dict(clones(["log"]))["log"].split(".")[0]
    'log_f32'
    """
    from tensorlib._core import tensor
    path = tensor.__file__
    lib = ctypes.CDLL(path)
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    syms = _symbols(path)
    rows = []
    for name in names:
        try:
            table = (ctypes.c_void_p * 10).in_dll(lib, f"tl_ew_{name}")
        except ValueError:
            rows.append((name, "(no tl_ew_ table)"))
            continue
        ptr = table[DTYPE_INDEX[dtype]]
        if not ptr:
            rows.append((name, "(no loop for this dtype)"))
            continue
        info = _DlInfo()
        libc.dladdr(ptr, ctypes.byref(info))
        off = ptr - info.dli_fbase
        if syms is None:
            rows.append((name, f"offset {off:#x} (nm not found: no symbol names)"))
            continue
        found = [s for s in syms.get(off, []) if not s.endswith(".resolver")]
        rows.append((name, " / ".join(found) if found else f"offset {off:#x} (no symbol)"))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=NAMES)
    ap.add_argument("--dtype", choices=sorted(DTYPE_INDEX), default="float32")
    args = ap.parse_args(argv)
    import platform
    print(f"CPU: {platform.processor() or platform.machine()}; kernels for {args.dtype}:")
    for name, clone in clones(args.names, args.dtype):
        print(f"  {name:8s} {clone}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
