"""Time a clean build of the core in a temporary clone, then rebuilds after one-line edits.

    python tools/time_build.py                       # -O3: clean build, rebuild after a kernel edit
    python tools/time_build.py --change tensorlib/_core/views.pxi --change setup.py
    python tools/time_build.py --change tensorlib/ops/decl/elementwise.py   # an op's docstring
    python tools/time_build.py --dev                 # TENSORLIB_DEV=1 (-O0 -g) instead
    python tools/time_build.py --jobs 1 --keep       # one compile job at a time; keep the clone

It clones the committed HEAD of this repository (uncommitted edits are not timed) into a
temporary folder and runs ``python setup.py build_ext -j N`` there (N = --jobs, default the
CPU count): first from clean, then once after each ``--change`` (a comment line appended to
that file; default: one C kernel). For each build it prints the wall time, Cython's time,
each compile job's time (largest first) and the peak resident memory of the largest process
of the build (in practice gcc's cc1 on tensor's Cython output; from wait4's resource usage,
which covers every waited-for descendant). Timings mean little on a loaded machine: check the
load average it prints.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMENT = {".c": "/* time_build.py: one line */\n", ".h": "/* time_build.py: one line */\n"}
# A comment in a declaration file changes no generated code; this line changes the last
# op's docstring (codegen strips its ends), so the family's generated .pxi and its module
# are rebuilt.
DECL_DIR = "tensorlib/ops/decl/"
DECL_LINE = 'OPS[-1]["doc"] = "time_build.py: " + (OPS[-1]["doc"] or "")  # one line\n'



def build(clone, jobs, env, log_path):
    """One ``setup.py build_ext`` in the clone: (wall seconds, peak RSS in MiB, log text)."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "setup.py", "build_ext", "-j", str(jobs)],
                                cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    text = open(log_path).read()
    if proc.returncode != 0:
        sys.exit(f"build failed (exit {proc.returncode}); last lines of {log_path}:\n"
                 + "\n".join(text.splitlines()[-30:]))
    return wall, usage.ru_maxrss / 1024, text          # ru_maxrss is in KiB on Linux


def report(title, wall, rss, text):
    print(f"\n{title}: {wall:.1f} s wall, peak RSS of one process {rss:,.0f} MiB")
    for m in re.finditer(r"^cythonized (\d+) modules in ([\d.]+) s", text, re.M):
        print(f"  cython     {float(m.group(2)):7.1f} s  ({m.group(1)} modules)")
    jobs = re.findall(r"^compiled (\S+) in ([\d.]+) s", text, re.M)
    for src, secs in sorted(jobs, key=lambda j: -float(j[1])):
        print(f"  gcc        {float(secs):7.1f} s  {os.path.relpath(src, 'tensorlib/_core')}")
    if not jobs:
        print("  (nothing compiled)")
    links = len(re.findall(r"^building '", text, re.M))
    print(f"  {links} modules linked")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dev", action="store_true", help="TENSORLIB_DEV=1: an -O0 -g build")
    parser.add_argument("--change", action="append", metavar="FILE",
                        help="append a comment line to FILE (repository-relative), then rebuild "
                             "(repeatable; default tensorlib/_core/cpu/cpu_sort.c)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary clone")
    args = parser.parse_args(argv)

    env = {k: v for k, v in os.environ.items() if k != "TENSORLIB_DEV"}
    if args.dev:
        env["TENSORLIB_DEV"] = "1"
    tmp = tempfile.mkdtemp(prefix="tensorlib-time-build-")
    clone = os.path.join(tmp, "repo")
    try:
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        head = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=clone, check=True,
                              capture_output=True, text=True).stdout.strip()
        print(f"clone of {head[:70]}")
        print(f"{'-O0 -g (TENSORLIB_DEV=1)' if args.dev else '-O3'}, -j {args.jobs}, "
              f"{os.cpu_count()} CPUs, load average before: "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        wall, rss, text = build(clone, args.jobs, env, os.path.join(tmp, "clean.log"))
        report("clean build", wall, rss, text)
        c_dir = os.path.join(clone, "build", "cython", "tensorlib", "_core")
        sizes = []
        for name in sorted(os.listdir(c_dir)) if os.path.isdir(c_dir) else ():
            if name.endswith(".c"):
                with open(os.path.join(c_dir, name), "rb") as f:
                    sizes.append(f"{name[:-2]} {sum(1 for _ in f):,}")
        if sizes:
            print("  (lines of Cython output: " + ", ".join(sizes) + ")")

        for i, rel in enumerate(args.change or ["tensorlib/_core/cpu/cpu_sort.c"]):
            path = os.path.join(clone, rel)
            with open(path, "a") as f:
                f.write(DECL_LINE if rel.startswith(DECL_DIR) else
                        COMMENT.get(os.path.splitext(rel)[1], "# time_build.py: one line\n"))
            wall, rss, text = build(clone, args.jobs, env, os.path.join(tmp, f"change{i}.log"))
            report(f"rebuild after a one-line change to {rel}", wall, rss, text)
        print("\nload average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        if args.keep:
            print(f"clone kept in {clone}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
