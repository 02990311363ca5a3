"""How long the lift statistics take for one report: ``case_statistics`` on a fresh process.

The power statement simulates the test itself (``skillab.scoring.power_model``) and caches its
answers in the process; a report computes it once per suite, cold. Prints the cold time per
suite shape (median of ``--repeat`` fresh interpreters) and the warm time of a second call.
``python benchmarks/statistics_speed.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

SHAPES = [(10, 1), (20, 1), (40, 1), (100, 1), (20, 3), (40, 3), (100, 3), (20, 5), (50, 5)]

_CHILD = """
import json, random, sys, time
from skillab.scoring.inference import CasePair
from skillab.scoring.statistics import case_statistics
n, runs = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(n * 10 + runs)
pairs = []
for _ in range(n):
    p0 = rng.random()
    p1 = min(1.0, p0 + 0.1)
    pairs.append(CasePair(sum(rng.random() < p1 for _ in range(runs)), sum(rng.random() < p0 for _ in range(runs)), runs))
t = time.perf_counter(); case_statistics(pairs); cold = time.perf_counter() - t
t = time.perf_counter(); case_statistics(pairs); warm = time.perf_counter() - t
print(json.dumps([cold, warm]))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'cases':>5} {'runs':>4}  {'cold ms':>8}  {'warm ms':>8}")
    for n, runs in SHAPES:
        results = [json.loads(subprocess.run([sys.executable, "-c", _CHILD, str(n), str(runs)],
                                             capture_output=True, text=True, check=True).stdout)
                   for _ in range(args.repeat)]
        cold = statistics.median(r[0] for r in results) * 1000
        warm = statistics.median(r[1] for r in results) * 1000
        print(f"{n:>5} {runs:>4}  {cold:>8.1f}  {warm:>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
