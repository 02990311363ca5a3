"""The routing diff's error control and cost, measured (``skillab route``).

Power and false steals: a generated catalogue of 100 skills, each with its own labelled queries,
and a seeded random router standing in for the agent (each query goes to its own skill with
probability ``accuracy``, else to a skill drawn at random among those listed, or to none). A
planted *stealer* candidate takes a known share of one victim skill's queries; a *null* candidate
takes nothing but its own queries (and the router's noise, like any other skill). The trials are
scored by the same function ``skillab route`` uses (``scoring.routing.agent_routes``), so the
claims measured are the claims printed: the share of catalogues in which the victim is named
(power) and the share of (catalogue, skill) pairs named for a null candidate (false steals).

Cost: the real command (``skillab route`` with the mock adapter) on generated catalogues of
growing size, printing trials and wall per query: one trial lists the whole catalogue, so the
cost grows with the queries, not with pairs of skills.

    python benchmarks/routing.py            # ~1 min on 2 cores
    python benchmarks/routing.py --quick
"""

from __future__ import annotations

import argparse
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runner"))

from skillab.scoring.routing import RoutedQuery, agent_routes  # noqa: E402
from skillab.suite.trigger_plan import TriggerTrial  # noqa: E402

CANDIDATE = "candidate"


def simulate(rng: random.Random, *, skills: int, queries: int, runs: int, accuracy: float,
             steal_share: float) -> tuple[bool, int, int]:
    """One catalogue: (victim named, null pairs named, pairs tested). The victim is skill 0."""
    names = [f"s{i:03d}" for i in range(skills)]
    routed = [RoutedQuery(f"{n}/q{j}", f"{n} q{j}", "gen", n, n, n) for n in names for j in range(queries)]
    own = [RoutedQuery(f"own/q{j}", f"own q{j}", "gen", CANDIDATE, "(not the candidate)", None)
           for j in range(queries)]
    trials = []
    for q in (*routed, *own):
        for run in range(runs):
            for arm, listed in (("baseline", names), ("candidate", [*names, CANDIDATE])):
                trials.append(TriggerTrial(q.name, run, arm, "x", loaded=_route(rng, q, listed, accuracy,
                                                                                 steal_share, arm)))
    routes = agent_routes(agent="sim", model=None, candidate=CANDIDATE, catalogue=names, original=None,
                          queries=[*routed, *own], trials=trials)
    named = {t.skill for t in routes.steals if t.significant}
    return names[0] in named, len(named - {names[0]}), len(routes.steals)


def _route(rng: random.Random, q: RoutedQuery, listed: list[str], accuracy: float, steal_share: float,
           arm: str) -> tuple[str, ...]:
    if arm == "candidate" and q.owner == "s000" and rng.random() < steal_share:
        return (CANDIDATE,)
    target = CANDIDATE if q.owner is None else q.expected
    if target in listed and rng.random() < accuracy:
        return (target,)
    pick = rng.randrange(len(listed) + 1)
    return () if pick == len(listed) else (listed[pick],)


def power_table(reps: int, seed: int) -> None:
    print("power and false steals: 100 skills, 0.90 accuracy, victim = one skill "
          f"({reps} catalogues per row, seeded {seed}; ± one Monte Carlo SE)")
    print(f"  {'queries/skill':>13} {'runs':>4} {'share stolen':>12} {'victim named':>14} {'false steals/pair':>18}")
    for queries, runs, share in ((4, 3, 0.5), (4, 3, 0.3), (6, 3, 0.3), (4, 5, 0.3), (4, 3, 0.0), (6, 5, 0.0)):
        rng = random.Random(seed + queries * 100 + runs * 10 + int(share * 100))
        hits = false = pairs = 0
        for _ in range(reps):
            named, wrong, tested = simulate(rng, skills=100, queries=queries, runs=runs, accuracy=0.9,
                                            steal_share=share)
            hits += named
            false += wrong
            pairs += tested - 1
        power = hits / reps
        per_pair = false / pairs
        print(f"  {queries:>13} {runs:>4} {share:>12.1f} {_pm(power, reps):>14} "
              f"{per_pair:>11.4f} ± {math.sqrt(per_pair * (1 - per_pair) / pairs):.4f}")


def _pm(share: float, n: int) -> str:
    return f"{share:.3f} ± {math.sqrt(share * (1 - share) / n):.3f}"


def cost_table(sizes: tuple[int, ...]) -> None:
    print("\ncost: `skillab route --adapter mock` on generated catalogues (2 queries per skill, 1 run)")
    print(f"  {'skills':>6} {'queries':>7} {'trials':>6} {'trials/query':>12} {'wall s':>7} {'ms/trial':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            candidate = _write_catalogue(root, size)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "skillab", "route", str(candidate), "--catalogue",
                                   str(root / "catalogue"), "--adapter", "mock", "--output", str(root / "r.json"),
                                   "--json"], capture_output=True, text=True)
            wall = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(done.stderr)
            import json

            doc = json.loads((root / "r.json").read_text())
            trials = doc["trials"]
            print(f"  {size:>6} {doc['queries']:>7} {trials:>6} {trials / doc['queries']:>12.1f} {wall:>7.1f} "
                  f"{1000 * wall / trials:>8.1f}")


def _write_catalogue(root: Path, size: int) -> Path:
    for i in range(size):
        skill = root / "catalogue" / f"s{i:03d}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: s{i:03d}\ndescription: Skill number {i}.\n---\nBody.\n")
        (skill / "triggers.yaml").write_text("".join(f"- query: task {j} for s{i:03d}\n  should_trigger: true\n"
                                                     for j in range(2)))
    candidate = root / "candidate"
    candidate.mkdir()
    (candidate / "SKILL.md").write_text("---\nname: candidate\ndescription: The candidate.\n---\nBody.\n")
    (candidate / "triggers.yaml").write_text("- query: a job for the candidate\n  should_trigger: true\n")
    return candidate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    power_table(60 if args.quick else 300, args.seed)
    cost_table((10, 25) if args.quick else (10, 25, 50, 100))


if __name__ == "__main__":
    main()
