"""The CUDA back end's compiled kernels: one cubin per kernel file and GPU architecture,
compiled by nvcc and cached on disk under a hash of everything that goes into it.

The pycuda runtime loads ``cuda/<family>.cu`` as ``<family>-<arch>-<hash>.cubin`` from the
cache folder, compiling it there first when it is missing. The hash covers the file, every
header beside it, the architecture and nvcc's options, so an edited kernel is rebuilt and an
unchanged one never is. The folder is ``TENSORLIB_CUDA_CACHE``, else
``$XDG_CACHE_HOME/tensorlib/cuda`` (``~/.cache/tensorlib/cuda``).

Compiling needs nvcc but no GPU, so the cache can be filled on one machine and carried to
another (a GPU machine without nvcc, or one whose time is better spent running kernels):

    python -m tensorlib.cuda.kernel_cache --arch sm_90 --cache DIR -j 4

>>> name = os.path.basename(cubin_path("reduce", "sm_90", "/tmp"))
>>> name.startswith("reduce-sm_90-") and name.endswith(".cubin")
True
"""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

__all__ = ["NVCC_OPTIONS", "cache_dir", "families", "cubin_path", "compile_cubin",
           "arch_of"]

# what every family is compiled with (the emulator's shim and the nvcc gate use the same
# language level)
NVCC_OPTIONS = ("-std=c++17",)


def _kernel_dir():
    from tensorlib.cuda import kernel_dir
    return kernel_dir()


def cache_dir():
    """The cache folder (not created here).

    >>> os.path.basename(cache_dir()) == "cuda" or "TENSORLIB_CUDA_CACHE" in os.environ
    True
    """
    env = os.environ.get("TENSORLIB_CUDA_CACHE")
    if env:
        return os.path.abspath(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tensorlib", "cuda")


def families():
    """The kernel files' names (``cuda/*.cu`` without the suffix), sorted.

    >>> "tensor_ops" in families()
    True
    """
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(_kernel_dir(),
                                                                              "*.cu")))


def arch_of(major, minor):
    """nvcc's name for a compute capability.

    >>> arch_of(9, 0)
    'sm_90'
    """
    return f"sm_{major}{minor}"


def _digest(family, arch):
    kdir = _kernel_dir()
    h = hashlib.sha256()
    h.update(f"{family}\0{arch}\0{' '.join(NVCC_OPTIONS)}\0".encode())
    # every header beside the kernels, as any of them may be included
    names = [family + ".cu"] + sorted(os.path.basename(p)
                                      for p in glob.glob(os.path.join(kdir, "*.h")))
    for name in names:
        with open(os.path.join(kdir, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()[:20]


def cubin_path(family, arch, directory=None):
    """Where the cubin of ``cuda/<family>.cu`` for ``arch`` lives (whether or not it exists)."""
    return os.path.join(directory or cache_dir(), f"{family}-{arch}-{_digest(family, arch)}.cubin")


def nvcc_command(family, arch, out):
    """The nvcc command line that compiles one family into ``out``."""
    kdir = _kernel_dir()
    return ["nvcc", "-cubin", f"-arch={arch}", *NVCC_OPTIONS, f"-I{kdir}",
            os.path.join(kdir, family + ".cu"), "-o", out]


def _run_nvcc(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_cubin(family, arch, directory=None):
    """The path of the cubin of ``family`` for ``arch``, compiled into the cache first when it
    is not there. RuntimeError naming the file when nvcc is missing or fails."""
    path = cubin_path(family, arch, directory)
    if os.path.exists(path):
        return path
    if shutil.which("nvcc") is None:
        raise RuntimeError(
            f"CUDA kernels cuda/{family}.cu are not compiled for {arch} in "
            f"{os.path.dirname(path)} and nvcc is not on PATH: install the CUDA toolkit, or "
            f"compile them where nvcc is (python -m tensorlib.cuda.kernel_cache --arch {arch} "
            f"--cache DIR) and point TENSORLIB_CUDA_CACHE at DIR")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # compiled beside its final name and renamed into place: a reader (another process
    # compiling the same file) sees a whole cubin or none
    fd, tmp = tempfile.mkstemp(suffix=".cubin", dir=os.path.dirname(path))
    os.close(fd)
    try:
        r = _run_nvcc(nvcc_command(family, arch, tmp))
        if r.returncode != 0:
            raise RuntimeError(f"nvcc failed on cuda/{family}.cu for {arch}:\n"
                               f"{(r.stderr or r.stdout)[-4000:]}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compile tensorlib's CUDA kernels into the cache "
                                             "(nvcc needed, no GPU).")
    ap.add_argument("--arch", action="append", help="e.g. sm_90 (repeat for several; "
                                                    "default sm_80 and sm_90)")
    ap.add_argument("--cache", help="the cache folder (default: TENSORLIB_CUDA_CACHE or "
                                    "~/.cache/tensorlib/cuda)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("family", nargs="*", help="kernel files to compile (default: all)")
    args = ap.parse_args(argv)
    archs = args.arch or ["sm_80", "sm_90"]
    todo = [(f, a) for a in archs for f in (args.family or families())]
    failed = 0
    # the largest files first, so the slowest compile starts at once
    todo.sort(key=lambda fa: -os.path.getsize(os.path.join(_kernel_dir(), fa[0] + ".cu")))
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        jobs = {pool.submit(compile_cubin, f, a, args.cache): (f, a) for f, a in todo}
        for job in concurrent.futures.as_completed(jobs):
            f, a = jobs[job]
            try:
                print(job.result())
            except RuntimeError as e:
                failed += 1
                print(f"{f} {a}: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
