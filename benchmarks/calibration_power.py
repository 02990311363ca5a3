"""The "detects about X" cells of ``benchmarks/calibration.py`` alone: every lift scenario with
several runs per case (where the shape of a lift matters: spread over every case's runs, or on
a few whole cases), and the whole-case ones at one run, through the same ``run_scenario``.

``python benchmarks/calibration_power.py [--reps N] [--seed S] [--only TEXT]``: per scenario the median X
printed, the real power of the test at a true lift of X in that scenario (target 0.75-0.90,
over 1000 simulated suites, SE ±0.013; '*' where that read within 2 SE of the band's edge and
was measured again over 4000, SE ±0.006), and the share of runs that print an X.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from calibration import POWER_SIMS, _fmt, _misses, run_scenario, scenarios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="simulated runs per scenario")
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--only", action="append", default=[],
                        help="run only the scenarios whose label (with n and runs: 'whole cases 20x3') contains this; repeatable")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    # calibration.py's own check: the band, or silence, off by more than 2 Monte Carlo SE.
    slack = 2 * math.sqrt(0.05 * 0.95 / args.reps)
    print(f"'detects X' cells: {args.reps} runs per scenario, seed {args.seed}; power@X over {POWER_SIMS} "
          f"suites (SE ±{math.sqrt(0.8 * 0.2 / POWER_SIMS):.3f} at 0.8), '*' re-measured over {4 * POWER_SIMS}; "
          f"'off' as calibration.py flags it (0.75-0.90, beyond ±{slack:.3f})", flush=True)
    print(f"{'scenario':<30} {'n':>4} {'runs':>4}  {'detects X':>9} {'power@X':>8} {'shown':>5} {'@max':>5}")
    for s in scenarios(False):
        if s.het_null or (s.runs < 2 and not s.concentrated):
            continue
        if args.only and not any(part in f"{s.label} {s.n}x{s.runs}" for part in args.only):
            continue
        cell = run_scenario(s, args.reps, rng, args.seed, args.reps)
        power = cell["power_at_x"]
        off = [m for m in _misses(cell, slack) if m in ("power", "silent")]
        print(f"{s.label:<30} {s.n:>4} {s.runs:>4}  {_fmt(cell['x'], '.0f'):>9} "
              f"{_fmt(power, '.3f'):>7}{'*' if cell['power_remeasured'] else ' '} {cell['printed']:>5.2f} "
              f"{_fmt(cell['power_at_max'], '.2f'):>5}{'  <- off: ' + ', '.join(off) if off else ''}", flush=True)
    print(f"elapsed {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
