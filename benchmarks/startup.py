"""Start-up time of `skillab --help`, `skillab validate` and a small `skillab run` against the
reference runner.

Each pair runs skillab and the reference (`skillevaluation`, 0.8.0) back to back, alternating
which goes first, so a load spike on a shared machine hits both arms of a pair alike. Prints the
median of each runner's times and the median of the per-pair ratios (skillab / reference), with
the load average before and after. Target: at most 1.00x for each command.

    python benchmarks/startup.py [--pairs 21] [--cases 5]
    python benchmarks/startup.py --pairs 11 --before ../main/runner

``--before DIR`` also runs, within each pair, skillab from another checkout's source root
(``DIR`` on ``PYTHONPATH``: main's ``runner/``, say) and prints after/before, so a start-up
change is read against the code it changes under the same load.

The run row is the mock adapter with the cache and history off (``overhead.py``'s command), so
what it adds to ``validate`` is the engine's imports and one arm pair per case. The reference CLI
is found as `overhead.py` finds it (beside this Python, else in the virtualenv it builds under
`benchmarks/.cache/`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from overhead import bytecode_env, load, make_suite, reference_runner, skillab_cmd  # noqa: E402


def executable(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return elapsed


def paired(runners: list[tuple[list[str], dict[str, str]]], pairs: int) -> list[list[float]]:
    """Each runner's seconds per pair, the order rotating from pair to pair; the first pair only
    warms caches (and fills the shared bytecode cache)."""
    times: list[list[float]] = [[] for _ in runners]
    for index in range(pairs + 1):
        order = list(range(len(runners)))
        order = order[index % len(order):] + order[:index % len(order)]
        taken = {i: once(*runners[i]) for i in order}
        if index:
            for i, seconds in taken.items():
                times[i].append(seconds)
    return times


def ratio(mine: list[float], theirs: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout's runner/ directory: its skillab runs within each pair too")
    args = parser.parse_args()

    cache = HERE / ".cache"
    cache.mkdir(exist_ok=True)
    ours, ref = executable("skillab"), str(reference_runner(cache))
    with tempfile.TemporaryDirectory() as tmp:
        skill = make_suite(Path(tmp), args.cases)
        out = Path(tmp) / "results.json"
        env = bytecode_env(Path(tmp) / "pycache")  # filled by the warm-up pair
        earlier = {**env, "PYTHONPATH": str(args.before.resolve())} if args.before else None
        print(f"start-up, {args.pairs} interleaved pairs, medians; {load()}")
        for label, mine, theirs in (
            ("--help", [ours, "--help"], [ref, "--help"]),
            (f"validate ({args.cases} cases)", [ours, "validate", str(skill)], [ref, "validate", str(skill)]),
            (f"run ({args.cases} cases)", skillab_cmd(skill, out),
             [ref, "run", str(skill), "--adapter", "mock", "--no-cache", "-o", str(out)]),
        ):
            runners = [(mine, env), (theirs, env)] + ([(mine, earlier)] if earlier else [])
            times = paired(runners, args.pairs)
            a, b = statistics.median(times[0]), statistics.median(times[1])
            line = (f"  {label:<20} skillab {a * 1000:6.1f} ms   reference {b * 1000:6.1f} ms   "
                    f"ratio {ratio(times[0], times[1]):4.2f}x   target <= 1.00x")
            if earlier:
                c = statistics.median(times[2])
                line += (f"   before {c * 1000:6.1f} ms, after/before {ratio(times[0], times[2]):4.2f}x "
                         f"(vs reference before {ratio(times[2], times[1]):4.2f}x)")
            print(line)
        print(f"  after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
