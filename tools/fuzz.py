"""Run the differential fuzzer (tests/fuzz_programs.py) against PyTorch for a while.

    python tools/fuzz.py --minutes 10 [--seed S] [--steps 40] [--examples 100]

Rounds of hypothesis's state machine run back to back, each with its own seed (S, S+1, ...),
until the time is up. A divergence is shrunk (by dropping chunks of steps while it still
reproduces), printed, and appended to tests/fuzz_regressions.json, which
tests/test_fuzz_differential.py replays: fix tensorlib until that test passes. A crash
(a signal in the worker process) saves the program that was running. Prints minutes,
programs, steps and failures at the end.
"""
import argparse
import datetime
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))


def save(steps, reason, path):
    from fuzz_programs import REGRESSIONS
    path = path or REGRESSIONS
    cases = []
    if os.path.exists(path):
        with open(path) as f:
            cases = json.load(f)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    name = f"fuzz-{stamp}-{len(cases)}"
    cases.append({"name": name, "found": stamp, "reason": reason.split("\n")[0][:300],
                  "program": steps})
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join(_dump_case(c) for c in cases) + "\n]\n")
    return name


def _dump_case(c):
    head = {k: v for k, v in c.items() if k != "program"}
    body = ",\n".join("    " + json.dumps(s) for s in c["program"])
    return "  " + json.dumps(head)[:-1] + ', "program": [\n' + body + "\n  ]}"


def worker(args):
    """Rounds of the state machine in this process; one JSON line per event on stdout."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test
    import fuzz_programs as F

    counts = {"programs": 0, "steps": 0}
    inflight = open(args.inflight, "w") if args.inflight else None

    class Counted(F.FuzzMachine):
        minimize_failures = True        # (hypothesis's shrinker is off: see cfg)

        def __init__(self):
            super().__init__()
            counts["programs"] += 1
            if inflight:
                inflight.seek(0)
                inflight.truncate()

        def run(self, step):
            counts["steps"] += 1
            if inflight:
                inflight.write(json.dumps(step) + "\n")
                inflight.flush()
            super().run(step)

    deadline = time.time() + args.minutes * 60
    seed = args.seed
    while time.time() < deadline:
        random.seed(seed)
        cfg = settings(max_examples=args.examples, stateful_step_count=args.steps,
                       deadline=None, database=None, derandomize=False,
                       report_multiple_bugs=False, print_blob=False,
                       phases=[Phase.generate],
                       suppress_health_check=list(HealthCheck))
        event = {"seed": seed}
        try:
            run_state_machine_as_test(Counted, settings=cfg)
        except F.Divergence as e:
            event["reason"] = e.reason
            event["program"] = e.steps
        except Exception as e:      # the harness itself must not fail
            event["reason"] = f"harness: {type(e).__name__}: {e}"
        event.update(counts)
        print(json.dumps(event), flush=True)
        seed += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--steps", type=int, default=40, help="steps per program at most")
    ap.add_argument("--examples", type=int, default=100, help="programs per round")
    ap.add_argument("--out", default=None, help="regressions file (default: the suite's)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--inflight", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.randrange(2 ** 31)
    if args.worker:
        return worker(args)

    start = time.time()
    end = start + args.minutes * 60
    seed, programs, steps, found = args.seed, 0, 0, []
    seen = set()
    print(f"fuzzing for {args.minutes} min from seed {seed}", flush=True)
    while time.time() < end - 5:
        fd, inflight = tempfile.mkstemp(prefix="tensorlib-fuzz-", suffix=".jsonl")
        os.close(fd)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed),
               "--minutes", str((end - time.time()) / 60), "--steps", str(args.steps),
               "--examples", str(args.examples), "--inflight", inflight]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        last = {"programs": 0, "steps": 0}
        for line in proc.stdout:
            ev = json.loads(line)
            seed = ev["seed"] + 1
            last = ev
            if "reason" in ev:
                _report(ev, seen, found, args)
            print(f"[{(time.time() - start) / 60:5.1f} min] seed {ev['seed']}: "
                  f"{programs + ev['programs']} programs, {steps + ev['steps']} steps, "
                  f"{len(found)} failures", flush=True)
        rc = proc.wait()
        programs += last["programs"]
        steps += last["steps"]
        if rc != 0:
            # a crash: save what was running (each line one step)
            with open(inflight) as f:
                prog = [json.loads(x) for x in f if x.strip()]
            sig = -rc if rc < 0 else rc
            name = signal.Signals(sig).name if rc < 0 else f"exit status {rc}"
            _report({"reason": f"crash: worker died ({name})", "program": prog,
                     "seed": seed}, seen, found, args)
            seed += 1
        os.unlink(inflight)
    minutes = (time.time() - start) / 60
    print(f"done: {minutes:.1f} minutes, {programs} programs, {steps} steps, "
          f"{len(found)} failures" + "".join(f"\n  {n}: {r}" for n, r in found))
    return 1 if found else 0


def _report(ev, seen, found, args):
    from fuzz_programs import format_program, norm_reason
    key = norm_reason(ev["reason"])
    prog = ev.get("program")
    print(f"\nDIVERGENCE (seed {ev['seed']}): {ev['reason'].split(chr(10))[0]}")
    if prog:
        print(format_program(prog))
    if key in seen or not prog:
        return
    seen.add(key)
    name = "(not saved)" if args.no_save else save(prog, ev["reason"], args.out)
    found.append((name, ev["reason"].split("\n")[0][:160]))
    print(f"saved as {name}\n", flush=True)


if __name__ == "__main__":
    sys.exit(main())
