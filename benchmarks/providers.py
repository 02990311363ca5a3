"""Providers under concurrency and retries, against the fake model server at a fixed latency.

(a) Provider calls: N completions through the real Anthropic SDK client at concurrency 1 and 8
    (the per-provider cap set to match), wall time against the ideal (N x latency / concurrency).
(b) The same with every fourth call first answered 429 with ``retry-after-ms``: the ideal adds
    one latency plus the asked pause per throttled call, and the request count must equal the
    calls plus the scripted retries, no more.
(c) ``skillab run --adapter agent`` end to end, as its own process (the fake server stays in
    this one): a suite whose scripted agent takes two turns per arm, at concurrency 1 and 8,
    against the ideal (cases x 2 arms x 2 turns x latency / concurrency). ``run`` is the run's
    own ``timings.wall_ms`` (the agent loop, the sandboxed validators, the report); ``process``
    adds the interpreter's start-up and imports (the SDKs), which ``startup.py`` measures.
    Target: ``run`` within 1.3x of the ideal at concurrency 8.

    python benchmarks/providers.py [--calls 48] [--cases 16] [--latency-ms 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.overhead import bytecode_env, load, machine_busy_s  # noqa: E402
from skillab.providers import Message, RetryPolicy  # noqa: E402
from skillab.providers.anthropic import AnthropicClient  # noqa: E402
from tests.fakes.model_server import FakeModelServer, rate_limited, text, tool_call  # noqa: E402

KEY = "sk-ant-bench-" + "b" * 24
RETRY_PAUSE_MS = 50


def provider_calls(calls: int, concurrency: int, latency_s: float, throttle_every: int) -> dict:
    seen: set[str] = set()
    lock = threading.Lock()
    throttled = 0

    def reply(request):
        nonlocal throttled
        prompt = request.last_user_text
        index = int(prompt.removeprefix("q"))
        with lock:
            first = prompt not in seen
            seen.add(prompt)
            if throttle_every and first and index % throttle_every == 0:
                throttled += 1
                return rate_limited(retry_after_ms=RETRY_PAUSE_MS)
        return text("ok")

    with FakeModelServer(reply, latency_s=latency_s) as server:
        client = AnthropicClient(
            "claude-haiku-4-5",
            api_key=KEY,
            base_url=server.url,
            policy=RetryPolicy(max_attempts=3),
            concurrency=concurrency,
        )
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(
                pool.map(
                    lambda i: client.create([Message.user(f"q{i}")], system="bench"), range(calls)
                )
            )
        wall = time.monotonic() - started
        sent, in_flight = server.count, server.max_in_flight
    per_call = latency_s * calls + throttled * (latency_s + RETRY_PAUSE_MS / 1000)
    return {
        "wall": wall,
        "ideal": per_call / concurrency,
        "requests": sent,
        "scripted": calls + throttled,
        "max_in_flight": in_flight,
    }


def write_suite(root: Path, cases: int) -> Path:
    skill = root / "bench-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: bench-skill\ndescription: Benchmark.\n---\nWrite out.txt.\n"
    )
    lines = ["cases:"]
    for i in range(cases):
        lines += [
            f"  - name: case_{i:03d}",
            f'    prompt: "Task {i}."',
            "    validators:",
            '      - cmd: "test -s out.txt"',
        ]
    (skill / "eval.yaml").write_text("\n".join(lines) + "\n")
    return skill


def agent_run(cases: int, concurrency: int, latency_s: float, env: dict[str, str], *extra: str) -> dict:
    """One ``skillab run --adapter agent`` as its own process against the fake server; ``env``'s
    ``PYTHONPATH`` says whose skillab. ``cpu`` is that process's user+sys (its waited-for children
    too, the interpreter's start-up included); ``machine_cpu`` the whole machine's busy CPU while it
    ran (``/proc/stat``: this process's fake server and the kernel's sandbox tear-down too, and on
    a shared machine everyone else's)."""
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
        env = {**env, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        busy = machine_busy_s()
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        stderr = proc.stderr.read() if proc.stderr else b""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        busy = machine_busy_s() - busy
        if not output.exists():
            raise SystemExit(f"skillab run failed ({os.waitstatus_to_exitcode(status)}):\n"
                             f"{stderr.decode(errors='replace')[-2000:]}")
        doc = json.loads(output.read_text())
        sent, in_flight = server.count, server.max_in_flight
    return {
        "wall": doc["timings"]["wall_ms"] / 1000,
        "process": wall,
        "ideal": cases * 2 * 2 * latency_s / concurrency,
        "requests": sent,
        "scripted": cases * 2 * 2,
        "exit": os.waitstatus_to_exitcode(status),
        "verdict": doc["verdict"],
        "in_flight": in_flight,
        "cpu": usage.ru_utime + usage.ru_stime,
        "machine_cpu": busy,
        "arms": cases * 2,
    }


def show(label: str, row: dict) -> None:
    ratio = row["wall"] / row["ideal"] if row["ideal"] else float("nan")
    extra = "" if row["requests"] == row["scripted"] else "  <-- EXTRA REQUESTS"
    if "process" in row:
        extra += f"  (process {row['process']:.2f}s, {row['process'] / row['ideal']:.2f}x)"
    print(
        f"{label:<34} wall {row['wall']:6.2f}s  ideal {row['ideal']:6.2f}s  ratio {ratio:4.2f}x  "
        f"requests {row['requests']:4d} / scripted {row['scripted']:4d}{extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=48)
    parser.add_argument("--cases", type=int, default=16)
    parser.add_argument("--latency-ms", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3, help="(c): the median of this many runs")
    args = parser.parse_args()
    print(load())
    latency = args.latency_ms / 1000

    print(f"(a) provider calls, {args.calls} completions at {args.latency_ms} ms")
    for concurrency in (1, 8):
        row = provider_calls(args.calls, concurrency, latency, throttle_every=0)
        show(f"    concurrency {concurrency} (in flight <= {row['max_in_flight']})", row)
    print(f"(b) the same, every 4th call first throttled (429, retry-after-ms {RETRY_PAUSE_MS})")
    for concurrency in (1, 8):
        show(
            f"    concurrency {concurrency}",
            provider_calls(args.calls, concurrency, latency, throttle_every=4),
        )
    print(
        f"(c) skillab run --adapter agent, {args.cases} cases x 2 arms x 2 turns "
        f"at {args.latency_ms} ms"
    )
    sys.stdout.flush()
    with tempfile.TemporaryDirectory() as cache:
        env = bytecode_env(Path(cache))
        agent_run(1, 1, latency, env)  # unmeasured: fills the bytecode cache
        for concurrency in (1, 8):
            walls = [agent_run(args.cases, concurrency, latency, env) for _ in range(args.repeats)]
            row = sorted(walls, key=lambda r: r["wall"])[len(walls) // 2]
            show(f"    concurrency {concurrency} (verdict {row['verdict']})", row)
    print(f"  {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
