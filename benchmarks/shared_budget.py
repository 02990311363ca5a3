"""The run-wide cost cap over N shards, side by side in one run.

N shards (``skillab run --shard i/N --adapter llm``, separate processes) against one fake
Anthropic server on 127.0.0.1 that answers each call after ``--latency-ms`` and bills 50 input and
400 output tokens of claude-sonnet-4-5 (about $0.0062 a call):

- with the service: ``skillab budget serve --max-cost-usd CAP`` in this process, every shard
  given ``--budget-url`` (and, as its fallback, ``--max-cost-usd CAP/N``);
- without it: each shard with only its local cap, ``--max-cost-usd CAP/N``, the best a team
  could do before (a shard's in-process calls are charged as its arms finish);

and prints what the N shards spent together (as the provider billed it, read from their results
documents), the overshoot past CAP, and the spend as a ratio of CAP.

    python benchmarks/shared_budget.py [--shards 4] [--cases 40] [--cap 0.1] [--concurrency 8] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillab.budget.ledger import RunBudget  # noqa: E402
from skillab.budget.service import BudgetServer  # noqa: E402
from tests.fakes.model_server import FakeModelServer, text  # noqa: E402

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-bench-" + "b" * 24
TOKEN = "bench-budget-" + "t" * 24


def make_suite(root: Path, cases: int) -> Path:
    skill = root / "shared-cap"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: shared-cap\ndescription: One line.\n---\nAnswer in one line.\n")
    (skill / "eval.yaml").write_text("cases:\n" + "".join(
        f"  - name: c{i:03d}\n    prompt: Say {i}.\n    validators:\n      - cmd: 'true'\n" for i in range(cases)))
    return skill


def run_shards(skill: Path, out: Path, fake: FakeModelServer, args: argparse.Namespace,
               url: str | None) -> tuple[float, int, float]:
    """The shards' spend together, the calls the provider answered, and the wall time."""
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url,
           "PYTHONPATH": str(ROOT / "runner"), "SKILLAB_BUDGET_TOKEN": TOKEN}
    env.pop("SKILLAB_BUDGET_URL", None)
    before = fake.count
    started = time.perf_counter()
    local = f"{args.cap / args.shards:g}"
    shards = [subprocess.Popen(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "llm", "--model", MODEL,
         "--max-tokens", "500", "--shard", f"{i}/{args.shards}", "--concurrency", str(args.concurrency),
         "--max-cost-usd", local, "--no-cache", "--no-history", "--quiet", "--fail-on-verdict", "none",
         "--output", str(out / f"shard{i}.json"), *(["--budget-url", url] if url else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(1, args.shards + 1)]
    for shard in shards:
        shard.wait()
    wall = time.perf_counter() - started
    spent = sum(json.loads((out / f"shard{i}.json").read_text())["usage"]["total"]["cost_usd"] or 0.0
                for i in range(1, args.shards + 1))
    return spent, fake.count - before, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--cap", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=int, default=200)
    args = parser.parse_args()
    reply = text("ok", input_tokens=50, output_tokens=400, delay_s=args.latency_ms / 1000)
    rows = []
    with tempfile.TemporaryDirectory(prefix="skillab-bench-budget-") as tmp, \
            FakeModelServer(lambda request: reply) as fake:
        skill = make_suite(Path(tmp), args.cases)
        server = BudgetServer(("127.0.0.1", 0), RunBudget(cap_usd=args.cap), TOKEN).start()
        try:
            (Path(tmp) / "with").mkdir()
            rows.append(("with the service", *run_shards(skill, Path(tmp) / "with", fake, args, server.url)))
            ledger = server.budget.status()
        finally:
            server.stop()
        (Path(tmp) / "without").mkdir()
        rows.append((f"local caps only (${args.cap / args.shards:g} each)",
                     *run_shards(skill, Path(tmp) / "without", fake, args, None)))
    print(f"{args.shards} shards, {args.cases} cases x 2 arms, --concurrency {args.concurrency}, "
          f"{args.latency_ms} ms a call; run-wide cap ${args.cap:g}")
    print(f"{'':<34}{'spent $':>10}{'overshoot $':>13}{'spent/cap':>11}{'calls':>7}{'wall s':>8}")
    for name, spent, calls, wall in rows:
        print(f"{name:<34}{spent:>10.4f}{max(0.0, spent - args.cap):>13.4f}{spent / args.cap:>11.2f}"
              f"{calls:>7}{wall:>8.1f}")
    print(f"service ledger: spent ${ledger.spent_usd:.4f}, {ledger.granted} granted, {ledger.refused} refused, "
          f"{ledger.in_flight} left in flight")
    return 0


if __name__ == "__main__":
    sys.exit(main())
