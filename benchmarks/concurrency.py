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
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.overhead import bytecode_env, load  # noqa: E402
from benchmarks.providers import KEY, write_suite  # noqa: E402
from tests.fakes.model_server import FakeModelServer, text, tool_call  # noqa: E402


def run_at(cases: int, concurrency: int, latency_s: float, env: dict[str, str], *extra: str) -> dict:
    def reply(request):
        if not request.tool_results:
            return tool_call("write_file", {"path": "out.txt", "content": "done\n"})
        return text("Done.")

    exe = Path(sys.executable).parent / "skillab"
    with (
        tempfile.TemporaryDirectory() as scratch,
        FakeModelServer(reply, latency_s=latency_s) as server,
    ):
        skill = write_suite(Path(scratch), cases)
        output = Path(scratch) / "results.json"
        cmd = [str(exe) if exe.exists() else (shutil.which("skillab") or "skillab"), "run",
               str(skill), "--model", "claude-haiku-4-5", "--no-cache", "--no-history", "--quiet",
               "--concurrency", str(concurrency), "--output", str(output), *extra]
        started = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**env, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        process = time.monotonic() - started
        if not output.exists():
            raise SystemExit(f"skillab run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        doc = json.loads(output.read_text())
        return {"run": doc["timings"]["wall_ms"] / 1000, "process": process,
                "ideal": cases * 2 * 2 * latency_s / concurrency, "calls": server.count,
                "in_flight": server.max_in_flight, "verdict": doc["verdict"]}


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
        run_at(1, 1, latency, env, *extra)  # unmeasured: fills the bytecode cache
        for level in levels:
            row = run_at(args.cases, level, latency, env, *extra)
            print(f"{level:>11} {row['ideal']:>6.2f}s {row['run']:>6.2f}s {row['run'] / row['ideal']:>5.2f}x "
                  f"{row['process']:>7.2f}s {row['in_flight']:>9} {row['calls']:>6}  {row['verdict']}",
                  flush=True)
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
