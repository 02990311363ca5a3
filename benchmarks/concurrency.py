"""``--concurrency`` against a sleeping provider: wall time against the ideal at 8, 32 and 128.

``skillab run --adapter agent`` as its own process, against the fake model server on 127.0.0.1
(the real Anthropic SDK on the real wire protocol) answering every call after ``--latency-ms``
(200 ms). Each arm takes two model calls (a tool call, then the answer), so the ideal is
cases x 2 arms x 2 calls x latency / concurrency. ``run`` is the run's own ``timings.wall_ms``;
``in flight`` the most calls the server was answering at once (it must reach the concurrency:
a cap below it is what this measures). Goal: ``run`` within 1.2x of the ideal at 32 and 128.

    python benchmarks/concurrency.py [--cases 256] [--latency-ms 200] [--levels 8,32,128] [--sandbox none]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.overhead import bytecode_env, load  # noqa: E402
from benchmarks.providers import agent_run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=256)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--levels", default="8,32,128")
    parser.add_argument("--sandbox", default=None,
                        help="as run --sandbox (none: the validators' bwrap start-up out of the measure)")
    args = parser.parse_args()
    extra = ("--sandbox", args.sandbox) if args.sandbox else ()
    levels = [int(x) for x in args.levels.split(",")]
    latency = args.latency_ms / 1000
    print(load())
    print(f"skillab run --adapter agent, {args.cases} cases x 2 arms x 2 calls at {args.latency_ms} ms a call"
          + (f", --sandbox {args.sandbox}" if args.sandbox else ""))
    print(f"{'concurrency':>11} {'ideal':>7} {'run':>7} {'ratio':>6} {'process':>8} {'in flight':>9} "
          f"{'calls':>6}  verdict")
    with tempfile.TemporaryDirectory() as cache:
        env = bytecode_env(Path(cache))
        agent_run(1, 1, latency, env, *extra)  # unmeasured: fills the bytecode cache
        for level in levels:
            row = agent_run(args.cases, level, latency, env, *extra)
            print(f"{level:>11} {row['ideal']:>6.2f}s {row['wall']:>6.2f}s {row['wall'] / row['ideal']:>5.2f}x "
                  f"{row['process']:>7.2f}s {row['in_flight']:>9} {row['requests']:>6}  {row['verdict']}",
                  flush=True)
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
