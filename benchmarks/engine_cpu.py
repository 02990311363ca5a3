"""skillab's own CPU (its process, every thread, not the sandboxes it waits for), before and after.

A loaded machine hides the engine's overhead in wall time and in the machine's busy time (every
core is busy with others' work); the CPU the skillab process itself spends (``RUSAGE_SELF``:
the interpreter, the engine's threads and the kernel on their behalf) moves much less with the
load. Runs alternate between this checkout and ``--before DIR`` (another checkout's ``runner/``,
main's say), each ``skillab run`` in a process of its own on the same generated suite
(``overhead.make_suite``: one validator per case, mock adapter, cache off); prints medians and
the per-pair ratios.

    python benchmarks/engine_cpu.py --before ../main/runner --cases 200 --pairs 5
    python benchmarks/engine_cpu.py --before ../main/runner --cases 5000 --pairs 3 --select case_0000

``--select NAME`` runs one case of the suite (``--case NAME``): what the suite's loading costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE.parent / "runner"
sys.path.insert(0, str(HERE))

# Run in the measured process: skillab's CLI, then its own CPU and wall as one JSON line.
_PROBE = """
import json, resource, sys, time
from skillab.cli import main
started = time.perf_counter()
try:
    main(sys.argv[1:])
except SystemExit:
    pass
own = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu_s": own.ru_utime + own.ru_stime, "wall_s": time.perf_counter() - started}),
      file=sys.stderr)
"""


def one(source: Path, skill: Path, out: Path, extra: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source.resolve())}
    argv = [sys.executable, "-c", _PROBE, "run", str(skill), "--adapter", "mock", "--no-cache",
            "--quiet", "--no-history", "--output", str(out), *extra]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"skillab failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout's runner/ directory")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--select", default=None, help="run only this case (--case)")
    args = parser.parse_args()
    from overhead import load, make_suite

    extra = ["--case", args.select] if args.select else []
    with tempfile.TemporaryDirectory() as tmp:
        skill = make_suite(Path(tmp), args.cases)
        out = Path(tmp) / "results.json"
        one(RUNNER, skill, out, extra)  # unmeasured: both fill their bytecode caches
        one(args.before, skill, out, extra)
        print(f"suite: {args.cases} cases{f', only {args.select} run' if args.select else ''}; "
              f"{args.pairs} alternating pairs; {load()}")
        before, after = [], []
        for index in range(args.pairs):
            order = [(before, args.before), (after, RUNNER)]
            for samples, source in order if index % 2 == 0 else reversed(order):
                samples.append(one(source, skill, out, extra))
        for key, label in (("cpu_s", "skillab's own CPU"), ("wall_s", "wall")):
            b = statistics.median(s[key] for s in before)
            a = statistics.median(s[key] for s in after)
            pairs = ", ".join(f"{x[key] / y[key]:.2f}" for x, y in zip(after, before))
            print(f"  {label:<17} before {b:6.2f} s   after {a:6.2f} s   after/before {a / b:.2f}x "
                  f"(pairs: {pairs})")
        print(f"  after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
