"""The report's promises in cells nobody tuned for: a held-out grid beside ``calibration.py``.

``calibration.py``'s cells are the ones the statistics were tuned against. This script re-runs
the same checks, through the same simulation (``calibration.draw``, ``run_scenario``,
``harm_power``, ``point_gate``, ``calibration_interval.arm_dependent_errors``,
``evidence_rerun.adversary``, ``placebo.suite``) and skillab's own functions, on cells away from
them: 8, 15, 30, 40, 75 and 150 cases; 2 and 4 runs; mean baseline logits -2.5, -0.5, +1 and
+2.5 (between and beyond calibration.py's -1.5, 0, +1.5); case spreads sd 0.5 and 2.5; true
lifts 0, +5, +15, +20 and -15 pts; het-null mixes where 30% (or 10%) of the cases rise and the
rest fall just enough that the population lift is exactly 0; arm-dependent errors at 5% and 30%;
runs of a case correlated beyond sharing its pass rate (``icc``); whole-case lifts at 2 and 4
runs.

Every promise is printed beside its target, with its Monte Carlo SE, and flagged '<- off' when
it misses the target by more than 2 SE:

- false: "beyond noise" with no true lift, or against its direction (<= 0.05);
- cover: the 95% interval holds the true lift (>= 0.94);
- power@X: the real power of the test at the median "detects about X" printed (0.75-0.90,
  where at least 10% of runs print an X); '@max' where fewer print one: the real power at the
  largest lift the baseline allows (printing none is right only below 0.75);
- advice: the share of pilots whose "about N cases" reaches 80% real power at +10 pts (>= 0.80);
- arm-dependent errors: false claims through ``paired_statistics`` (<= 0.05);
- the lower-bound gate (``--gate-on lower-bound --min-delta-pts 5``) on a null skill (<= 0.05);
- group-sequential's "hurts" power within 5 points of the fixed design's;
- the evidence ledger against an adversary re-running a null skill, stopping at the first
  "helps" (<= 0.05), with the naive per-run rule beside it;
- the placebo: a filler skill's content lift claimed (<= 0.05).

``python benchmarks/calibration_heldout.py [--quick] [--reps N] [--null-reps N] [--seed S]
[--only TABLE ...] [--match TEXT ...]``. Each table, and each cell of the sentence table, draws
from a stream of its own (seeded by ``--seed``, the table and the cell), so ``--only`` and
``--match`` print the full run's numbers. ``--quick`` (a smoke subset) runs in under a
minute; the full grid in about 55 minutes under ``nice -n 10`` on a 2-core machine at load 10,
about 25 as two processes (``--only sentences`` beside the other tables).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from calibration import (  # a sibling: benchmarks/ is the script's directory
    GATE_NOTE_SLACK,
    GATE_PTS,
    HARM_POWER_SLACK,
    POWER_SIMS,
    PRINTED_FLOOR,
    TARGETS,
    Scenario,
    harm_power,
    max_lift,
    point_gate,
    run_scenario,
)
from calibration_interval import arm_dependent_errors
from evidence_rerun import adversary
from placebo import helps as placebo_helps
from placebo import suite as placebo_suite

from skillab.scoring.summary import versus_placebo

SEED = 34034
# The suites each step of the search for the cases +10 pts really needs reads (calibration.py: 200,
# ±0.028 at 0.8, which put 150 x 4's at 66 cases where 2000 suites cross 0.8 at 61).
NEEDED_SIMS = 1000
TABLES = ("sentences", "errors", "gate", "harm", "ledger", "placebo")


def rate_se(rate: float, judged: int) -> float:
    """The Monte Carlo SE of a rate read over ``judged`` runs, at ``rate``."""
    return math.sqrt(max(rate * (1 - rate), 1e-12) / max(judged, 1))


@dataclass(frozen=True)
class Promise:
    """One promise in one cell: what was read, over how many, its target and direction."""

    name: str
    value: float | None
    se: float
    low: float | None = None  # the value must not fall below low - 2 SE
    high: float | None = None  # nor rise above high + 2 SE

    @property
    def off(self) -> bool:
        if self.value is None:
            return False
        return ((self.low is not None and self.value < self.low - 2 * self.se)
                or (self.high is not None and self.value > self.high + 2 * self.se))

    def text(self) -> str:
        if self.value is None:
            return f"{self.name} —"
        target = (f"{self.low:g}-{self.high:g}" if self.low is not None and self.high is not None
                  else f"<={self.high:g}" if self.high is not None else f">={self.low:g}")
        return f"{self.name} {self.value:.3f}±{self.se:.3f} ({target}){' OFF' if self.off else ''}"


class Tally:
    """The cells printed and those off target."""

    def __init__(self) -> None:
        self.cells = 0
        self.off: list[str] = []

    def row(self, label: str, promises: Iterable[Promise], extra: str = "") -> None:
        promises = list(promises)
        self.cells += 1
        missed = [p.name for p in promises if p.off]
        if missed:
            self.off.append(f"{label}: {', '.join(missed)}")
        print(f"{label:<50} " + "  ".join(p.text() for p in promises) + (f"  {extra}" if extra else "")
              + (f"  <- off: {', '.join(missed)}" if missed else ""), flush=True)


def possible(s: Scenario) -> bool:
    """Whether the baseline leaves room for the scenario's lift (else its truth is not its lift)."""
    return s.lift <= 100 * max_lift(s.baseline, s.spread)


def sentence_cells(quick: bool) -> list[Scenario]:
    if quick:
        return [Scenario(15, 2, 0, baseline=-0.5, spread=2.5), Scenario(30, 2, 0, het_null=True, het_up_share=0.3)]
    # Sizes at one baseline (mean logit -0.5) and a wide spread, a null and a +15 lift each.
    out = [Scenario(n, runs, lift, baseline=-0.5, spread=2.5)
           for n, runs in ((8, 4), (15, 2), (30, 4), (75, 2), (150, 4)) for lift in (0, 15)]
    # Baselines between and beyond calibration.py's, tight and wide spreads.
    out += [Scenario(40, 2, lift, baseline=b, spread=sd)
            for b, sd in ((-2.5, 0.5), (1.0, 2.5)) for lift in (0, 5, 20)]
    # A baseline passing 92% leaves room for a lift of 7.5 pts at most.
    out += [Scenario(40, 2, lift, baseline=2.5, spread=0.5) for lift in (0, 5)]
    out += [Scenario(n, runs, -15, baseline=1.0, spread=0.5) for n, runs in ((15, 4), (75, 2))]
    out += [Scenario(n, 2, 0, baseline=b, het_null=True, het_up_share=share, het_up_pts=pts)
            for n in (30, 150) for b, share, pts in ((-0.5, 0.3, 40), (1.0, 0.1, 60))]
    out += [Scenario(n, 4, lift, baseline=-0.5, icc=0.5) for n, lift in ((15, 0), (75, 15))]
    out += [Scenario(n, runs, 15, baseline=-0.5, spread=sd, concentrated=True)
            for n, runs, sd in ((15, 2, 0.5), (40, 2, 2.5), (40, 4, 0.5), (15, 4, 2.5))]
    out += [Scenario(40, 2, lift, baseline=-0.5, errors=e) for e, lift in ((0.05, 15), (0.3, 0))]
    return out


def sentences(args: argparse.Namespace, tally: Tally) -> None:
    print(f"the lift sentence, its interval and its power statements (case_statistics), {args.reps} runs a cell, "
          f"{args.null_reps} where the true lift is 0 (false claims and coverage); power@X over {POWER_SIMS} suites "
          f"(4x where within 2 SE of the band's edge); cells: scenario, cases x runs")
    for index, s in enumerate(sentence_cells(args.quick)):
        if args.match and not any(part in f"{s.label} {s.n}x{s.runs}" for part in args.match):
            continue
        # A stream per cell, so --match prints the full run's numbers.
        rng = np.random.default_rng([args.seed, TABLES.index("sentences"), index])
        cell = run_scenario(s, args.reps, rng, args.seed, args.null_reps,
                            needed_sims=200 if args.quick else NEEDED_SIMS)
        judged = cell["judged"]
        promises = [Promise("false", cell["false"], rate_se(TARGETS["false"], judged), high=TARGETS["false"]),
                    Promise("cover", cell["cover"], rate_se(0.95, judged), low=TARGETS["cover"])]
        low, high = TARGETS["power"]
        if cell["power_at_x"] is not None and cell["printed"] >= PRINTED_FLOOR:
            sims = POWER_SIMS * (4 if cell["power_remeasured"] else 1)
            promises.append(Promise(f"power@X={cell['x']:.0f}", cell["power_at_x"],
                                    rate_se(cell["power_at_x"], sims), low=low, high=high))
        if cell["power_at_max"] is not None:
            promises.append(Promise("@max", cell["power_at_max"], rate_se(cell["power_at_max"], POWER_SIMS),
                                    high=low))
        if cell["advice_share"] is not None:
            promises.append(Promise("advice", cell["advice_share"],
                                    rate_se(TARGETS["advice"], cell["advised"]),
                                    low=TARGETS["advice"]))
        extra = (f"shown {cell['printed']:.2f} never {cell['never']:.2f} advice {cell['advice_median']} "
                 f"needed {cell['needed']}")
        tally.row(f"{s.label} {s.n}x{s.runs}", promises, extra)


def errors(args: argparse.Namespace, tally: Tally) -> None:
    rng = stream(args.seed, "errors")
    reps = max(args.reps, 100 if args.quick else 200)
    print(f"\na skill with no effect whose arm errors on the runs it fails, through paired_statistics, {reps} runs "
          f"a cell (target <= {TARGETS['false']}; 'dropped': the test alone with errored records dropped)")
    cells = [(40, 2, 0.3, "with")] if args.quick else [
        (15, 2, 0.05, "with"), (15, 2, 0.3, "without"), (75, 4, 0.3, "with"), (75, 4, 0.05, "without"),
        (150, 2, 0.3, "with"), (150, 2, 0.3, "without")]
    for n, runs, rate, arm in cells:
        cell = arm_dependent_errors(n, runs, rate, reps, rng, arm=arm)
        tally.row(f"{arm}-skill arm errs {rate:.0%} {n}x{runs}",
                  [Promise("false", cell["claims"], rate_se(TARGETS["false"], cell["judged"]), high=TARGETS["false"])],
                  f"dropped {cell['dropped']:.3f} judged {cell['judged']}")


def gate(args: argparse.Namespace, tally: Tally) -> None:
    rng = stream(args.seed, "gate")
    reps = max(args.reps, 100 if args.quick else 200)
    print(f"\n--min-delta-pts {GATE_PTS} on a skill with no effect, {reps} runs a cell: the lower-bound gate passes it "
          f"(<= {TARGETS['false']}); the point gate's note within {GATE_NOTE_SLACK} of the real rate")
    cells = [Scenario(15, 2, 0, baseline=-0.5, spread=2.5)] if args.quick else [
        Scenario(n, runs, 0, baseline=b, spread=sd) for (n, runs), (b, sd) in zip(
            ((8, 2), (8, 4), (30, 2), (30, 4), (150, 2), (150, 4)),
            ((-0.5, 2.5), (1.0, 0.5), (1.0, 0.5), (-0.5, 2.5), (-0.5, 2.5), (1.0, 0.5)))]
    for s in cells:
        cell = point_gate(s, GATE_PTS, reps, rng)
        se = rate_se(TARGETS["false"], reps)
        promises = [Promise("lower-bound", cell["lower"], se, high=TARGETS["false"])]
        if cell["said"] is not None:
            promises.append(Promise("note-real", cell["said"] - cell["point"], rate_se(cell["point"], reps),
                                    low=-GATE_NOTE_SLACK, high=GATE_NOTE_SLACK))
        tally.row(f"{s.label} {s.n}x{s.runs}", promises, f"point {cell['point']:.3f}")


def harm(args: argparse.Namespace, tally: Tally) -> None:
    rng = stream(args.seed, "harm")
    reps = max(args.reps, 100 if args.quick else 300)
    print(f"\na skill that hurts: group-sequential's 'hurts' power minus the fixed design's, {reps} runs a cell "
          f"(target >= -{HARM_POWER_SLACK})")
    cells = [Scenario(40, 2, 15, baseline=-0.5, spread=2.5)] if args.quick else [
        Scenario(n, runs, lift, baseline=b, spread=sd) for n, lift in ((15, 20), (75, 5), (150, 5))
        for runs in (2, 4) for b, sd in ((-0.5, 2.5), (1.0, 0.5))]
    for s in cells:
        fixed, stopped, saved = harm_power(s, reps, rng)
        se = math.sqrt(2 * max(fixed * (1 - fixed), 0.01) / reps)
        tally.row(f"hurts {s.lift:.0f} {s.label.split(' ', 2)[-1]} {s.n}x{s.runs}",
                  [Promise("gs-fixed", stopped - fixed, se, low=-HARM_POWER_SLACK)],
                  f"fixed {fixed:.3f} group-seq {stopped:.3f} saved {saved:.3f}")


def ledger(args: argparse.Namespace, tally: Tally) -> None:
    rng = stream(args.seed, "ledger")
    reps = max(args.reps, 100 if args.quick else 1000)
    print(f"\nan adversary re-runs a null skill and stops at the first 'helps', {reps} adversaries a cell: the "
          f"evidence ledger (target <= {TARGETS['false']}) beside the naive per-run rule")
    # cases, runs, re-runs, the with-skill arm's errors on its failed runs, runs' correlation
    cells = [(15, 2, 10, 0.3, 0.0)] if args.quick else [
        (8, 2, 10, 0.0, 0.0), (40, 4, 10, 0.0, 0.0), (15, 1, 25, 0.0, 0.0), (150, 2, 10, 0.0, 0.0),
        (15, 2, 10, 0.05, 0.0), (40, 4, 10, 0.3, 0.0), (15, 4, 10, 0.0, 0.5), (40, 4, 10, 0.0, 0.9)]
    for n, runs, reruns, errs, icc in cells:
        naive = said = 0
        cell_reps = reps if not (errs or icc) else max(args.reps, 100 if args.quick else 300)
        for _ in range(cell_reps):
            got_naive, got_ledger = adversary(rng, n, runs, reruns, 0.0, errors=errs, icc=icc)
            naive += got_naive is not None
            said += got_ledger is not None
        extra = f" errors {errs:.0%}" if errs else f" icc {icc:g}" if icc else ""
        tally.row(f"null skill{extra} {n}x{runs}, up to {reruns} re-runs",
                  [Promise("ledger", said / cell_reps, rate_se(TARGETS["false"], cell_reps), high=TARGETS["false"])],
                  f"naive {naive / cell_reps:.3f}")


def placebo(args: argparse.Namespace, tally: Tally) -> None:
    rng = stream(args.seed, "placebo")
    reps = max(args.reps, 100 if args.quick else 500)
    print(f"\nfiller skills (their text does nothing, their presence shifts the logit): content lift (skill vs "
          f"placebo) claimed, {reps} suites a cell (target <= {TARGETS['false']}); 'lift' what a run without "
          f"--placebo claims")
    cells = [(15, 2, 1.5)] if args.quick else [(12, 2, 0.8), (12, 4, 2.5), (60, 2, 2.5), (60, 4, 0.8)]
    for cases, runs, presence in cells:
        lift = content = 0
        for _ in range(reps):
            records = placebo_suite(rng, cases, runs, presence, 0.0)
            lift += placebo_helps(records)
            content += placebo_helps([versus_placebo(r) for r in records])
        tally.row(f"filler, presence {presence:+g} logit, {cases}x{runs}",
                  [Promise("content", content / reps, rate_se(TARGETS["false"], reps), high=TARGETS["false"])],
                  f"lift claimed {lift / reps:.3f}")


RUNNERS: dict[str, Callable[[argparse.Namespace, Tally], None]] = {
    "sentences": sentences, "errors": errors, "gate": gate, "harm": harm, "ledger": ledger, "placebo": placebo}


def stream(seed: int, table: str) -> np.random.Generator:
    return np.random.default_rng([seed, TABLES.index(table)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=None, help="simulated runs a cell (100; 20 with --quick)")
    parser.add_argument("--null-reps", type=int, default=None,
                        help="runs a cell with no true lift, for false claims and coverage (1000; 200 with --quick)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--quick", action="store_true", help="one or a few cells a table (a smoke test)")
    parser.add_argument("--only", action="append", choices=TABLES, help="only this table (repeatable)")
    parser.add_argument("--match", action="append", default=[],
                        help="only the sentence cells whose label (with cases x runs: 'het-null 30%%+40 mu-0.5  "
                             "30x2') contains this; repeatable")
    args = parser.parse_args(argv)
    args.reps = args.reps or (20 if args.quick else 100)
    args.null_reps = max(args.reps, args.null_reps or (200 if args.quick else 1000))
    started = time.monotonic()
    print(f"skillab held-out calibration, seed {args.seed}; each promise: value±Monte Carlo SE (target); "
          f"OFF: beyond its target by more than 2 SE", flush=True)
    tally = Tally()
    for table in args.only or TABLES:
        RUNNERS[table](args, tally)
    print(f"\n{len(tally.off)} of {tally.cells} cells off target by more than 2 Monte Carlo SE"
          + ("".join(f"\n  {line}" for line in tally.off)) + f"\nelapsed {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
