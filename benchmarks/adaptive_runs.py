"""Calls per verdict: ``--adaptive-runs`` against the fixed design, over the calibration cells.

Every cell of ``benchmarks/calibration.py`` with more than one run per case (varied difficulty,
low/mid/high baselines, a near-deterministic agent, the het-null, failure-linked errors), plus
its ``--stop-early`` cells at 40 cases. Each simulated suite draws every run of both arms once;
the designs then read the same draws:

- fixed: every run of every case;
- fixed k: the first ``k = R // 2 + 1`` runs of every case (the fixed design that spends about
  what the adaptive one does: is adaptive worth its extra calls?);
- adaptive: a case whose arms agreed on each of its first ``R // 2 + 1`` runs keeps only those
  (the rule before held runs were released);
- group-seq: ``--stop-early group-sequential`` replayed case by case over every run
  (``scoring.stopping.replay``, as at ``--concurrency 1``);
- adaptive+gs: both;
- stepwise: what ``--adaptive-runs`` does: adaptive, then the held runs of the cut cases run,
  one case at a time (as at ``--concurrency 1``), while ``scoring.adaptive_runs.held_runs_settled``
  says an ending of the rest could still change the claim; its claim is the fixed design's in
  every simulated suite (asserted, not assumed);
- stepwise+gs: group-sequential's looks read the cut cases as finished; a run that reaches the
  end releases the held runs the same way, at the final look's bound.

Printed per cell and design: model calls per verdict (two arms per run, one call per arm) and
the false-claim rate (lift 0: "beyond noise" either way) or the power ("helps beyond noise"),
the fixed design's Monte Carlo SE, the 95% interval's coverage of the true lift (fixed and
adaptive), and, in cells with a lift, the calls per correct verdict (calls / power, the "cost
per signal"). A design is named "worse" where its claims are worse than the fixed design's by
more than 2 SE of the paired difference on the same draws. The footer gives per design the mean
share of calls saved over the cells, the mean ratio of its calls per correct verdict to the
fixed design's, and the cells where it was worse.

``python benchmarks/adaptive_runs.py [--reps N] [--null-reps N] [--seed S] [--quick] [--first-runs K]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from calibration import (  # a sibling script
    BASELINES,
    HARM_POWER_SLACK,
    HET_SHIFT,
    Scenario,
    logit_shift,
    max_lift,
    scenarios,
)

from skillab.scoring.adaptive_runs import held_runs_settled, runs_given, settle_after
from skillab.scoring.inference import ALPHA, CasePair
from skillab.scoring.interval import infer_lift
from skillab.scoring.stopping import GROUP_SEQUENTIAL, SequentialPlan, claim, replay

DESIGNS = ("fixed", "fixed k", "adaptive", "group-seq", "adaptive+gs", "stepwise", "stepwise+gs")
# Issue #37's goal: this share of the calls saved on average, at the fixed design's error rates.
GOAL_SAVED = 0.30
# Group-sequential plans to compare (``--plan``): the one ``--stop-early group-sequential`` uses,
# and those it was chosen among, replayed through the same code on the same draws.
PLANS = {
    "default": GROUP_SEQUENTIAL,
    "obrien-fleming": SequentialPlan(looks=(0.25, 0.5, 0.75), bounds=(0.0000516, 0.00421, 0.0194), final=0.0430,
                                     futility=(0.0, 0.05, 0.05), name="O'Brien-Fleming"),
    "futility-3": SequentialPlan(looks=(0.5, 0.75), bounds=(0.0005, 0.0015), final=0.048, futility=(0.03, 0.03),
                                 name="interim"),
    "futility-10": SequentialPlan(looks=(0.5, 0.75), bounds=(0.0005, 0.0015), final=0.048, futility=(0.10, 0.10),
                                  name="interim"),
    "no-futility": SequentialPlan(looks=(0.5, 0.75), bounds=(0.0005, 0.0015), final=0.048, futility=(0.0, 0.0),
                                  name="interim"),
}


def draw_runs(s: Scenario, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every run of both arms of one simulated suite: passes with, passes without, graded."""
    logits = rng.normal(BASELINES[s.baseline], s.spread, s.n)
    p0 = 1 / (1 + np.exp(-logits))
    if s.het_null:
        p1 = np.clip(p0 + HET_SHIFT * rng.choice((-1.0, 1.0), s.n), 0, 1)
    elif s.concentrated:
        # A share of the cases rescued whole, as ``calibration.draw`` does.
        p1 = np.where(rng.random(s.n) < min(1.0, s.lift / 100 / max_lift(s.baseline, s.spread)), 1.0, p0)
    else:
        p1 = 1 / (1 + np.exp(-(logits + logit_shift(s.lift / 100, s.baseline, s.spread))))
    w = rng.random((s.n, s.runs)) < p1[:, None]
    o = rng.random((s.n, s.runs)) < p0[:, None]
    keep = np.ones_like(w)
    if s.errors:
        keep = ~((~w | ~o) & (rng.random((s.n, s.runs)) < s.errors))
    return w, o, keep


def pairs_of(w: np.ndarray, o: np.ndarray, keep: np.ndarray, given: list[int]) -> list[CasePair | None]:
    """Per case, the pass counts over the comparable runs among its first ``given[i]``."""
    out: list[CasePair | None] = []
    for i, r in enumerate(given):
        k = keep[i, :r]
        graded = int(k.sum())
        out.append(CasePair(int((w[i, :r] & k).sum()), int((o[i, :r] & k).sum()), graded) if graded else None)
    return out


def first_runs_rule(agreement: np.ndarray, runs: int, first: int | None) -> int:
    """The runs a case gets: the engine's rule, or (``--first-runs K``) the same rule settling
    after K agreeing runs, to compare other choices of K."""
    if first is None:
        return runs_given(agreement, runs)
    return first if first < runs and agreement[:first].all() else runs


def one_suite(s: Scenario, rng: np.random.Generator, *, cover: bool, first: int | None = None,
              harm: bool = False,
              plan: SequentialPlan = GROUP_SEQUENTIAL) -> dict[str, tuple[bool, int, bool | None]]:
    """Per design: whether it made the claim counted, its calls, and (fixed and adaptive)
    whether the interval covered the truth. With ``harm`` the arms are swapped (a skill that
    hurts by the cell's lift) and the claim counted is "hurts beyond noise"."""
    w, o, keep = draw_runs(s, rng)
    if harm:
        w, o = o, w
    # An errored run is no agreement: it keeps its case running (``agrees``).
    agreement = (w == o) & keep.astype(bool)
    k = first or settle_after(s.runs)
    given = {"fixed": [s.runs] * s.n, "fixed k": [min(k, s.runs)] * s.n,
             "adaptive": [first_runs_rule(agreement[i], s.runs, first) for i in range(s.n)]}
    order = rng.permutation(s.n)
    truth = -s.truth() if harm else s.truth()
    out = {}
    paired: dict[str, list[CasePair | None]] = {}
    replayed = {}
    for name, runs in given.items():
        pairs = paired[name] = pairs_of(w, o, keep, runs)
        present = [p for p in pairs if p is not None]
        said = claim(present)
        covered = None
        if cover and len(present) >= 2:
            inference = infer_lift(present)
            covered = inference is not None and inference.ci95 is not None and \
                inference.ci95[0] <= truth <= inference.ci95[1]
        out[name] = (hit(said, truth), 2 * sum(runs), covered)
        if name == "fixed k":
            continue
        # --stop-early group-sequential over the same cases in a seeded order.
        ordered = [pairs[i] for i in order]
        replayed[name] = replay([p if p is not None else CasePair(0, 0, 0) for p in ordered], "group-sequential",
                                s.runs, plan=plan)
        ran = replayed[name].stopped_at if replayed[name].stopped_at is not None else s.n
        calls = 2 * sum(runs[i] for i in order[:ran])
        out["group-seq" if name == "fixed" else "adaptive+gs"] = (hit(replayed[name].claim_stopped, truth), calls, None)
    # stepwise: the held runs of the cut cases run, one case at a time in the seeded order, only
    # while some ending of them could change the claim (``held_runs_settled``), so the claim is
    # always the fixed design's.
    cut = [i for i in order if given["adaptive"][i] < s.runs]
    said, spent = release_held(paired["adaptive"], paired["fixed"], cut, s.runs, first=k)
    out["stepwise"] = (hit(said, truth), out["adaptive"][1] + spent, None)
    # stepwise+gs: group-sequential's looks read the cut cases as finished; a run that reaches
    # the end releases the held runs the same way, at the final look's bound.
    gs = replayed["adaptive"]
    if gs.stopped_at is not None:
        out["stepwise+gs"] = out["adaptive+gs"]
    else:
        said, spent = release_held(paired["adaptive"], paired["fixed"], cut, s.runs, plan.final, first=k)
        out["stepwise+gs"] = (hit(said, truth), out["adaptive"][1] + spent, None)
    return out


def release_held(adaptive: list[CasePair | None], full: list[CasePair | None], cut: list[int], runs: int,
                 alpha: float = ALPHA, *, first: int) -> tuple[str, int]:
    """The claim and the calls the held runs of the ``cut`` cases spent, released one case at a
    time in order (as at ``--concurrency 1``) while ``held_runs_settled`` says they could still
    change it."""
    pairs = list(adaptive)
    ran = 0
    while True:
        present = [p for p in pairs if p is not None]
        if held_runs_settled(present, len(cut) - ran, runs, alpha, first=first):
            return claim(present, alpha), 2 * (runs - first) * ran
        pairs[cut[ran]] = full[cut[ran]]
        ran += 1


def hit(said: str, truth: float) -> bool:
    """A false claim at lift 0 (either direction); power ("helps", or "hurts" for harm) otherwise."""
    return said != "noise" if truth == 0 else said == ("helps" if truth > 0 else "hurts")


def cells(quick: bool) -> list[Scenario]:
    if quick:
        return [Scenario(20, 3, 0), Scenario(20, 3, 30)]
    found = [s for s in scenarios(False) if s.runs > 1]
    found += [Scenario(40, 3, lift) for lift in (0, 10, 30)]
    return found


def harm_cells(quick: bool) -> list[Scenario]:
    """``calibration.py``'s cells of a skill that hurts (the lift, with the arms swapped)."""
    if quick:
        return [Scenario(20, 3, 30)]
    return [Scenario(n, runs, lift) for n, lift in ((20, 30), (100, 10), (40, 10)) for runs in (1, 3)]


@dataclass
class Tally:
    """One design's record over the cells, against the fixed design on the same draws."""

    saved: list[float] = field(default_factory=list)
    per_correct: list[float] = field(default_factory=list)
    # Power lower (or false claims higher) than the fixed design's by more than 2 Monte Carlo SE
    # of the fixed design's rate (the measure), and by more than 2 SE of the paired
    # difference on the same draws (a stricter one: it sees a loss of one point at 1,000 suites).
    power_worse: list[str] = field(default_factory=list)
    power_worse_paired: list[str] = field(default_factory=list)
    false_worse: list[str] = field(default_factory=list)
    false_max: float = 0.0
    power_loss_max: float = 0.0
    harm_loss_max: float = 0.0


def compare(s: Scenario, d: str, hits: dict[str, np.ndarray], tally: Tally, harm: bool) -> str | None:
    """Record design ``d`` against the fixed design in cell ``s``; the flag printed, if any."""
    reps = len(hits["fixed"])
    rate = hits["fixed"].mean()
    mc_se = math.sqrt(max(rate * (1 - rate), 0.05 * 0.95 if s.truth() == 0 else 0.0) / reps)
    diff = hits[d].astype(float) - hits["fixed"].astype(float)
    paired_se = max(float(diff.std(ddof=1)) / math.sqrt(reps), 1 / reps)
    change = float(diff.mean())
    if harm:
        tally.harm_loss_max = max(tally.harm_loss_max, -change)
        return f"{d} {change:+.3f}" if change < -HARM_POWER_SLACK else None
    if s.truth() == 0:
        tally.false_max = max(tally.false_max, float(hits[d].mean()))
        if change > 2 * mc_se:
            tally.false_worse.append(s.label)
            return f"{d} {change:+.3f}±{mc_se:.3f}"
        return None
    tally.power_loss_max = max(tally.power_loss_max, -change)
    if change < -2 * paired_se:
        tally.power_worse_paired.append(s.label)
    if change < -2 * mc_se:
        tally.power_worse.append(s.label)
    return f"{d} {change:+.3f}±{mc_se:.3f} (paired ±{paired_se:.3f})" if change < -2 * paired_se else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="simulated suites per cell with a true lift")
    parser.add_argument("--null-reps", type=int, default=2000, help="simulated suites per cell with no true lift")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--quick", action="store_true", help="three small cells (a smoke test)")
    parser.add_argument("--first-runs", type=int, default=None, metavar="K",
                        help="settle a case after K agreeing runs instead of the engine's R // 2 + 1")
    parser.add_argument("--plan", choices=tuple(PLANS), default="default",
                        help="the group-sequential plan replayed (default: --stop-early's own)")
    args = parser.parse_args(argv)
    reps, null_reps = (100, 200) if args.quick else (args.reps, args.null_reps)
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    print(f"--adaptive-runs and --stop-early group-sequential against the fixed design: {reps} simulated suites "
          f"per cell ({null_reps} with no true lift), seed {args.seed}; per design model calls per verdict and "
          f"'claims', the false-claim rate at lift 0, else the power ('±' the fixed design's Monte Carlo SE); "
          f"'per correct' is calls / power (cells with a true lift); 'worse' names the designs whose claims are "
          f"worse than the fixed design's by more than 2 paired SE on the same draws; group-seq replayed case by "
          f"case (--concurrency 1) with the {args.plan!r} plan: {PLANS[args.plan]}")
    head = "  ".join(f"{d:>17}" for d in DESIGNS)
    print(f"{'cell':<28} {'n':>4} {'R':>2} {'k':>2}  {head}  {'cover fixed/adapt':>17}")
    tallies = {d: Tally() for d in DESIGNS[1:]}
    per_correct: dict[str, list[float]] = {d: [] for d in DESIGNS}
    beside: list[float] = []
    beside_off: list[float] = []
    for s in cells(args.quick):
        runs_here = null_reps if s.truth() == 0 else reps
        hits, calls, covered = run_cell(s, runs_here, reps, rng, args.first_runs, plan=PLANS[args.plan])
        # ``stepwise`` makes the fixed design's claim on every draw: checked, not assumed.
        assert (hits["stepwise"] == hits["fixed"]).all(), s.label
        rates = {d: hits[d].mean() for d in DESIGNS}
        se = math.sqrt(max(rates["fixed"] * (1 - rates["fixed"]), 0.05 * 0.95 if s.truth() == 0 else 0.0)
                       / runs_here)
        flagged = [flag for d in DESIGNS[1:] if (flag := compare(s, d, hits, tallies[d], harm=False))]
        for d in DESIGNS[1:]:
            tallies[d].saved.append(1 - calls[d] / calls["fixed"])
        if s.truth() != 0:
            gain = hits["adaptive"].astype(float) - hits["fixed k"].astype(float)
            gain_se = max(float(gain.std(ddof=1)) / math.sqrt(runs_here), 1 / runs_here)
            beside.append(gain.mean())
            beside_off.append(gain.mean() if abs(gain.mean()) > 2 * gain_se else 0.0)
            # Averaged only where every design makes a correct claim (5 cases x 3 runs never do).
            if all(rates[d] > 0 for d in DESIGNS):
                for d in DESIGNS:
                    per_correct[d].append(calls[d] / rates[d])
        row = "  ".join(f"{calls[d]:>9.1f} {rates[d]:>7.3f}" for d in DESIGNS)
        cov = "/".join(f"{c[0] / max(c[1], 1):.3f}" for c in covered.values())
        print(f"{s.label:<28} {s.n:>4} {s.runs:>2} {args.first_runs or settle_after(s.runs):>2}  {row}  {cov:>17}  "
              f"±{se:.3f}", flush=True)
        if s.truth() != 0:
            print(f"{'  per correct verdict':<40}" + "  ".join(
                f"{calls[d] / rates[d]:>17.1f}" if rates[d] else f"{'—':>17}" for d in DESIGNS), flush=True)
        if flagged:
            print(f"{'  worse:':<40}" + "; ".join(flagged), flush=True)
    print()
    print(f"a skill that hurts (calibration.py's cells, arms swapped): 'hurts beyond noise' per design, "
          f"{reps} suites per cell (target: within {HARM_POWER_SLACK:.2f} of the fixed design's)")
    for s in harm_cells(args.quick):
        hits, calls, _ = run_cell(s, reps, 0, rng, args.first_runs, harm=True, plan=PLANS[args.plan])
        flagged = [flag for d in DESIGNS[1:] if (flag := compare(s, d, hits, tallies[d], harm=True))]
        row = "  ".join(f"{calls[d]:>9.1f} {hits[d].mean():>7.3f}" for d in DESIGNS)
        print(f"{'hurts ' + format(-s.lift, '+.0f') + ' pts':<28} {s.n:>4} {s.runs:>2} "
              f"{args.first_runs or settle_after(s.runs):>2}  {row}", flush=True)
        if flagged:
            print(f"{'  more than 5 points worse:':<40}" + "; ".join(flagged), flush=True)
    print()
    lifts = len(per_correct["fixed"])
    lift_cells = sum(1 for s in cells(args.quick) if s.truth() != 0)
    null_cells = len(cells(args.quick)) - lift_cells
    print(f"per design against the fixed design, over {len(cells(args.quick))} cells ({lift_cells} with a lift, "
          f"{null_cells} without); '> 2 SE': the fixed design's Monte Carlo SE (the paired SE on the same draws in "
          f"brackets); calls per correct verdict over the {lifts} cells with a lift where every design makes a "
          f"correct claim; 'hurts' power: the largest loss over {len(harm_cells(args.quick))} cells")
    print(f"{'design':<12} {'saved mean (range)':>24} {'per correct':>12} {'power worse > 2 SE':>19} "
          f"{'largest loss':>12} {'false claims > 2 SE':>20} {'max false':>9} {'hurts loss':>10}  goal")
    for d, t in tallies.items():
        ratios = [c / f for c, f in zip(per_correct[d], per_correct["fixed"], strict=True)]
        met = (np.mean(t.saved) >= GOAL_SAVED and not t.power_worse and not t.false_worse
               and t.false_max <= 0.05 and t.harm_loss_max <= HARM_POWER_SLACK)
        print(f"{d:<12} {np.mean(t.saved):>8.1%} ({min(t.saved):.1%}-{max(t.saved):.1%}) {np.mean(ratios):>11.3f}x "
              f"{len(t.power_worse):>8} ({len(t.power_worse_paired)} paired) {t.power_loss_max:>12.3f} "
              f"{len(t.false_worse):>20} {t.false_max:>9.3f} {t.harm_loss_max:>10.3f}  {'met' if met else 'not met'}")
    print(f"goal: >= {GOAL_SAVED:.0%} of the calls saved on average; power and false claims within 2 Monte Carlo SE "
          f"of the fixed design's in every cell; false claims <= 0.05; 'hurts' power within {HARM_POWER_SLACK:.2f}")
    print(f"calls per correct verdict, mean over the {lifts} cells with a lift where every design makes a correct "
          f"claim: " + ", ".join(f"{d} {np.mean(per_correct[d]):.1f}" for d in DESIGNS))
    print(f"adaptive beside fixed k, power (cells with a true lift): mean {np.mean(beside):+.3f}, "
          f"ahead by more than 2 SE in {sum(b > 0 for b in beside_off)} of {len(beside)} cells, behind in "
          f"{sum(b < 0 for b in beside_off)}")
    print(f"elapsed {time.monotonic() - started:.0f} s")
    return 0


def run_cell(s: Scenario, runs_here: int, cover_reps: int, rng: np.random.Generator, first: int | None, *,
             harm: bool = False, plan: SequentialPlan = GROUP_SEQUENTIAL
             ) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, list[int]]]:
    """Every design over ``runs_here`` simulated suites of ``s``: per design whether each made
    the claim counted, the mean calls, and the interval's coverage (fixed and adaptive)."""
    hits = {d: np.zeros(runs_here, dtype=bool) for d in DESIGNS}
    calls = {d: 0.0 for d in DESIGNS}
    covered = {"fixed": [0, 0], "adaptive": [0, 0]}
    for i in range(runs_here):
        result = one_suite(s, rng, cover=i < cover_reps, first=first, harm=harm, plan=plan)
        for d, (h, c, cov) in result.items():
            hits[d][i] = h
            calls[d] += c / runs_here
            if cov is not None and d in covered:
                covered[d][0] += cov
                covered[d][1] += 1
    return hits, calls, covered


if __name__ == "__main__":
    sys.exit(main())
