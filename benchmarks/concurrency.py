"""``--concurrency`` against a sleeping provider: wall time against the ideal at 8, 32 and 128.

``skillab run --adapter agent`` as its own process, against the fake model server on 127.0.0.1
(the real Anthropic SDK on the real wire protocol) answering every call after ``--latency-ms``
(200 ms). Each arm takes two model calls (a tool call, then the answer), so the ideal is
cases x 2 arms x 2 calls x latency / concurrency. ``run`` is the run's own ``timings.wall_ms``;
``in flight`` the most calls the server was answering at once (it must reach the concurrency:
a cap below it is what this measures). Goal: ``run`` within 1.2x of the ideal at 32 and 128.

CPU per arm: ``cpu/arm`` is the skillab process's own user+sys (its children too) beyond what
a one-case run of the same skillab took (the interpreter's start-up and the SDK's import), over
the arms beyond that run's two; ``machine/arm`` the whole machine's busy CPU while it ran (``/proc/stat``:
the fake server in this process, the kernel's sandbox tear-down, and, on a shared machine,
everyone else's work: read it on a quiet machine only).

``--before DIR`` also runs skillab from another checkout's source root (its ``runner/``), each
before run right beside an after run at the same level (``--pairs`` times, alternating which goes
first), so both see the same load; it prints the medians and after/before ratios. On a machine
others use, those ratios are what count, not the absolute walls.

    python benchmarks/concurrency.py [--cases 256] [--latency-ms 200] [--levels 8,32,128] [--sandbox none]
    python benchmarks/concurrency.py --cases 128 --levels 32,128 --pairs 2 --before ../main/runner
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.overhead import bytecode_env, load  # noqa: E402
from benchmarks.providers import agent_run  # noqa: E402

HEADER = (f"{'concurrency':>11} {'':>6} {'ideal':>7} {'run':>7} {'ratio':>6} {'process':>8} {'cpu/arm':>8} "
          f"{'machine/arm':>11} {'in flight':>9} {'calls':>6}  verdict")


def per_arm(row: dict, fixed: dict) -> float:
    return (row["cpu"] - fixed["cpu"]) / (row["arms"] - fixed["arms"])


def line(level: int, label: str, row: dict, fixed: dict) -> str:
    return (f"{level:>11} {label:>6} {row['ideal']:>6.2f}s {row['wall']:>6.2f}s {row['wall'] / row['ideal']:>5.2f}x "
            f"{row['process']:>7.2f}s {1000 * per_arm(row, fixed):>6.1f}ms "
            f"{1000 * row['machine_cpu'] / row['arms']:>9.1f}ms {row['in_flight']:>9} {row['requests']:>6}  "
            f"{row['verdict']}")


def median_row(rows: list[dict]) -> dict:
    return {**rows[0], **{key: statistics.median(r[key] for r in rows)
                          for key in ("wall", "process", "cpu", "machine_cpu", "in_flight")}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=256)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--levels", default="8,32,128")
    parser.add_argument("--sandbox", default=None,
                        help="as run --sandbox (none: the validators' bwrap start-up out of the measure)")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout's runner/ directory: its skillab runs beside this one")
    parser.add_argument("--pairs", type=int, default=1, help="with --before: runs of each per level")
    args = parser.parse_args()
    extra = ("--sandbox", args.sandbox) if args.sandbox else ()
    levels = [int(x) for x in args.levels.split(",")]
    latency = args.latency_ms / 1000
    print(load())
    print(f"skillab run --adapter agent, {args.cases} cases x 2 arms x 2 calls at {args.latency_ms} ms a call"
          + (f", --sandbox {args.sandbox}" if args.sandbox else ""))
    print(HEADER)
    with tempfile.TemporaryDirectory() as cache:
        after_env = bytecode_env(Path(cache))
        runners = {"after": after_env}
        if args.before is not None:
            runners = {"before": {**after_env, "PYTHONPATH": str(args.before.resolve())}, **runners}
        for env in runners.values():
            agent_run(1, 1, latency, env, *extra)  # unmeasured: fills the bytecode cache
        # What a run costs whatever its size, measured after the cache is filled.
        fixed = {label: agent_run(1, 1, latency, env, *extra) for label, env in runners.items()}
        if args.before is None:
            for level in levels:
                print(line(level, "", agent_run(args.cases, level, latency, after_env, *extra), fixed["after"]),
                      flush=True)
            print(load())
            return 0
        summary = []
        for level in levels:
            rows: dict[str, list[dict]] = {"before": [], "after": []}
            for pair in range(args.pairs):
                order = list(runners) if pair % 2 == 0 else list(reversed(runners))
                for label in order:
                    row = agent_run(args.cases, level, latency, runners[label], *extra)
                    rows[label].append(row)
                    print(line(level, label, row, fixed[label]), flush=True)
            summary.append((level, median_row(rows["before"]), median_row(rows["after"])))
        print(f"\nmedians of {args.pairs} pair(s), before = {args.before}")
        print(HEADER)
        for level, before, after in summary:
            print(line(level, "before", before, fixed["before"]))
            print(line(level, "after", after, fixed["after"]))
            print(f"{level:>11} {'a/b':>6} {'':>7} {after['wall'] / before['wall']:>6.2f}x {'':>6} "
                  f"{after['process'] / before['process']:>7.2f}x "
                  f"{per_arm(after, fixed['after']) / per_arm(before, fixed['before']):>7.2f}x "
                  f"{after['machine_cpu'] / before['machine_cpu']:>10.2f}x")
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
