"""Start-up time of `skillab --help` and `skillab validate` against the reference runner.

Each pair runs skillab and the reference (`skillevaluation`, 0.8.0) back to back, alternating
which goes first, so a load spike on a shared machine hits both arms of a pair alike. Prints the
median of each runner's times and the median of the per-pair ratios (skillab / reference), with
the load average before and after. Target: at most 1.00x for both commands.

    python benchmarks/startup.py [--pairs 21] [--cases 5]

The reference CLI is found as `overhead.py` finds it (beside this Python, else in the virtualenv
it builds under `benchmarks/.cache/`).
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

from overhead import bytecode_env, load, make_suite, reference_runner  # noqa: E402


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


def paired(ours: list[str], theirs: list[str], pairs: int, env: dict[str, str]) -> tuple[float, float, float]:
    """Median seconds of each and the median per-pair ratio; the first pair only warms caches."""
    mine, ref, ratios = [], [], []
    for index in range(pairs + 1):
        if index % 2:
            b, a = once(theirs, env), once(ours, env)
        else:
            a, b = once(ours, env), once(theirs, env)
        if index:
            mine.append(a)
            ref.append(b)
            ratios.append(a / b)
    return statistics.median(mine), statistics.median(ref), statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--cases", type=int, default=5)
    args = parser.parse_args()

    cache = HERE / ".cache"
    cache.mkdir(exist_ok=True)
    ours, ref = executable("skillab"), str(reference_runner(cache))
    with tempfile.TemporaryDirectory() as tmp:
        skill = make_suite(Path(tmp), args.cases)
        env = bytecode_env(Path(tmp) / "pycache")  # filled by the warm-up pair
        print(f"start-up, {args.pairs} interleaved pairs, medians; {load()}")
        for label, mine, theirs in (
            ("--help", [ours, "--help"], [ref, "--help"]),
            (f"validate ({args.cases} cases)", [ours, "validate", str(skill)], [ref, "validate", str(skill)]),
        ):
            a, b, ratio = paired(mine, theirs, args.pairs, env)
            print(f"  {label:<20} skillab {a * 1000:6.1f} ms   reference {b * 1000:6.1f} ms   "
                  f"ratio {ratio:4.2f}x   target <= 1.00x")
        print(f"  after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
