"""Calibration of the sentences skillab prints, against simulated suites with a known truth.

Every statement is produced by skillab's own functions (``case_statistics`` for the lift
sentence, its interval and its power statement; ``regression_cases`` for the cases named broken
by an edit; ``sign_flip_p`` for the test the sentence is decided by). Only the suites are
simulated: cases of varied difficulty (baseline logit ~ N(mu, sd^2): low, mid or high baselines,
sd 1.5, or 4 for a near-deterministic agent), both arms run ``runs`` times per case, the skill a
logit shift that gives the stated population lift (or, for "het-null", half the cases +30 pts
and half -30 pts: a true lift of exactly 0 while many cases change; or, for "whole cases", a
share of the cases always passing with the skill, the rest untouched). "errors e" makes a run's
record error with probability ``e`` when either arm failed it (failure-linked errors).

Printed per scenario, each beside its target:

- false: share of runs whose report says "beyond noise" when the true lift is 0, or in the
  wrong direction (<= 0.05), with its Monte Carlo SE ("±"): a scenario with no true lift runs
  ``--null-reps`` (2000) suites through the test and interval for it and for coverage, so a
  rate near 0.05 can be told from 0.05;
- cover: share of 95% intervals that contain the true lift (>= 0.94);
- "detects X": the median X printed, and the real power of the test at a true lift of X in this
  scenario (0.75-0.90; checked where at least 10% of runs print a number), the share of runs
  that print one ("shown"); where fewer than 10% print one, the real power at the largest lift
  the baseline leaves room for ("@max": printing no X is right only if it is below 0.75, else
  the scenario is "off: silent"), and how often "cannot show a lift at any size of effect" is printed
  ("never");
- advice: from each run as a pilot, the cases it advises for +10 pts; the share of pilots whose
  advice reaches 80% real power at a true +10 pts (>= 0.80), and the median advice against the
  cases really needed;
- named broken: for an edit that breaks 10% of the cases, the precision of the cases named
  "broken by the edit" (>= 0.8), their recall, and how often a case is named when none broke;
- --stop-early: both designs replayed on the same simulated runs (``scoring.stopping.replay``),
  the share of cases (model calls) saved, and false claims and power beside the fixed design's;
- a skill that hurts (-30 pts at 20 cases, -10 pts at 40 and 100): group-sequential's "hurts"
  power beside the fixed design's (within 0.05), so its futility stop never hides harm;
- ``--min-delta-pts 5`` on a skill with no effect: how often the point gate (the default
  ``--gate-on point``) and the lower-bound gate pass it, and the rate the point gate's note
  prints (within 0.08 of the real one; the lower-bound gate <= 0.05);
- the interval's width beside the alternatives (t, Agresti-Min adjusted t, Newcombe), each
  with its coverage and the Monte Carlo SE of its mean width, over ``--width-reps`` (4000)
  suites a cell: skillab's covers >= 0.94 and is at most 1.2x the narrowest valid alternative,
  one that covers >= 0.95 (less 2 Monte Carlo SE) at every lift of the same cases x runs and
  spread; the ratio to the narrowest covering 0.95 in the cell alone is printed beside
  (``calibration_interval``);
- errors that depend on the arm: a skill with no effect whose with-skill (or, the mirror,
  without-skill) arm errors on 10% or 20% of the runs it fails, 50 cases x 3 runs, through
  ``paired_statistics`` on real records: false claims <= 0.05, beside the rate with the errored
  records dropped;
- the judge gate: ``check_consistency`` against judges that agree with themselves 70-95% of the
  time (a 70% judge caught >= 0.9, a 95% one kept >= 0.9), and the re-asks it spent.

``python benchmarks/calibration.py [--reps N] [--null-reps N] [--width-reps N] [--seed S] [--quick]
[--only width|errors|judge ...]``; the Monte Carlo SE of each rate is printed in the header. The
last three tables each draw from a stream of their own, so ``--only`` prints the full run's numbers.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from calibration_interval import arm_dependent_errors, width_table
from calibration_judge import judge_gate  # a sibling: benchmarks/ is the script's directory

from skillab.scoring.inference import ALPHA, CasePair, integer_scores, sign_flip_p
from skillab.scoring.interval import infer_lift
from skillab.scoring.power_model import null_point_pass_rate
from skillab.scoring.statistics import case_statistics, regression_cases
from skillab.scoring.stopping import claim, replay

TARGETS = {"false": 0.05, "cover": 0.94, "power": (0.75, 0.90), "advice": 0.80, "precision": 0.80}
BASELINES = {"low": -1.5, "mid": 0.0, "high": 1.5}
HET_SHIFT = 0.30
ADVICE_TARGET_PTS = 10
# Simulated suites for the real power at a printed X (Monte Carlo SE 0.013 at 0.8): the check
# is a band 0.15 wide, and the power rises about 4 points per point of lift at small sizes. A
# reading within 2 SE of the band's edge is measured again over four times as many (SE 0.006).
POWER_SIMS = 1000
# "detects X" printed by fewer runs than this is shown, not checked (its median is a few pilots').
PRINTED_FLOOR = 0.10
GATE_PTS = 5
# How far the no-effect pass rate the point gate's note prints may sit from the real one.
GATE_NOTE_SLACK = 0.08
# How far group-sequential's "hurts" power may fall below the fixed design's.
HARM_POWER_SLACK = 0.05


@dataclass(frozen=True)
class Scenario:
    n: int
    runs: int
    lift: float  # points; ignored for het-null
    baseline: str | float = "mid"  # a name in BASELINES, or the mean baseline logit itself
    spread: float = 1.5
    errors: float = 0.0
    het_null: bool = False
    # The lift on a few whole cases: a share of the cases always passes with the skill, the rest
    # are untouched (``draw``), where a smooth lift shifts every case's logit alike.
    concentrated: bool = False
    # het-null's mix: this share of the cases moves up by ``het_up_pts``, the rest down by what
    # keeps the population lift at exactly 0 (``het_down``); None: half +30, half -30 pts.
    het_up_share: float | None = None
    het_up_pts: float = 40.0
    # Runs of one arm of a case that are one draw repeated, beyond sharing its pass rate: each
    # run is the case's shared outcome with this probability (intra-case correlation).
    icc: float = 0.0

    @property
    def label(self) -> str:
        kind = "het-null" if self.het_null else f"lift {self.lift:+.0f}"
        if self.het_null and self.het_up_share is not None:
            kind += f" {self.het_up_share:.0%}+{self.het_up_pts:.0f}"
        baseline = self.baseline if isinstance(self.baseline, str) else f"mu{self.baseline:+g}"
        extra = " near-det" if self.spread > 2 else ""
        extra += f" sd{self.spread:g}" if self.spread not in (1.5, 4.0) else ""
        extra += " whole cases" if self.concentrated else ""
        extra += f" errors {self.errors:.0%}" if self.errors else ""
        extra += f" icc {self.icc:g}" if self.icc else ""
        return f"{kind:<9} {baseline:<4}{extra}"

    def truth(self) -> float:
        return 0.0 if self.het_null else self.lift


def baseline_logit(baseline: str | float) -> float:
    return BASELINES[baseline] if isinstance(baseline, str) else float(baseline)


@cache
def logit_shift(lift: float, baseline: str | float, spread: float) -> float:
    """The logit shift giving a population mean lift of ``lift`` (-1..1), by bisection."""
    if lift == 0:
        return 0.0
    a = np.random.default_rng(12345).normal(baseline_logit(baseline), spread, 200_000)
    p0 = 1 / (1 + np.exp(-a))
    lo, hi = (0.0, 12.0) if lift > 0 else (-12.0, 0.0)
    for _ in range(50):
        mid = (lo + hi) / 2
        lift_mid = (1 / (1 + np.exp(-(a + mid))) - p0).mean()
        lo, hi = (mid, hi) if lift_mid < lift else (lo, mid)
    return (lo + hi) / 2


@cache
def max_lift(baseline: str | float, spread: float) -> float:
    a = np.random.default_rng(12345).normal(baseline_logit(baseline), spread, 200_000)
    return float((1 - 1 / (1 + np.exp(-a))).mean())


@cache
def het_down(baseline: str | float, spread: float, up_share: float, up_pts: float) -> float:
    """The fall (0..1) of the cases a het-null mix moves down, so that with ``up_share`` of the
    cases up by ``up_pts`` (each within [0, 1]) the population lift is exactly 0, by bisection."""
    a = np.random.default_rng(12345).normal(baseline_logit(baseline), spread, 200_000)
    p0 = 1 / (1 + np.exp(-a))
    rise = up_share * (np.minimum(p0 + up_pts / 100, 1) - p0).mean()
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        fall = (1 - up_share) * (p0 - np.maximum(p0 - mid, 0)).mean()
        lo, hi = (mid, hi) if fall < rise else (lo, mid)
    return (lo + hi) / 2


def draw(s: Scenario, rng: np.random.Generator, n: int, lift: float | None = None) -> list[CasePair]:
    """One simulated suite: per case the comparable runs' pass counts of each arm."""
    logits = rng.normal(baseline_logit(s.baseline), s.spread, n)
    p0 = 1 / (1 + np.exp(-logits))
    if s.het_null and lift is None and s.het_up_share is not None:
        down = het_down(s.baseline, s.spread, s.het_up_share, s.het_up_pts)
        p1 = np.where(rng.random(n) < s.het_up_share, np.minimum(p0 + s.het_up_pts / 100, 1),
                      np.maximum(p0 - down, 0))
    elif s.het_null and lift is None:
        p1 = np.clip(p0 + HET_SHIFT * rng.choice((-1.0, 1.0), n), 0, 1)
    elif s.concentrated:
        # A share of the cases rescued whole, sized so the population lift is the one asked for.
        share = min(1.0, (s.lift if lift is None else lift) / 100 / max_lift(s.baseline, s.spread))
        p1 = np.where(rng.random(n) < share, 1.0, p0)
    else:
        shift = logit_shift((s.lift if lift is None else lift) / 100, s.baseline, s.spread)
        p1 = 1 / (1 + np.exp(-(logits + shift)))
    w = rng.random((n, s.runs)) < p1[:, None]
    o = rng.random((n, s.runs)) < p0[:, None]
    if s.icc:
        shared = rng.random((n, s.runs)) < s.icc, rng.random((n, s.runs)) < s.icc
        w = np.where(shared[0], (rng.random(n) < p1)[:, None], w)
        o = np.where(shared[1], (rng.random(n) < p0)[:, None], o)
    keep = np.ones_like(w)
    if s.errors:
        keep = ~((~w | ~o) & (rng.random((n, s.runs)) < s.errors))
    pairs = []
    for i in range(n):
        k = int(keep[i].sum())
        if k:
            pairs.append(CasePair(int((w[i] & keep[i]).sum()), int((o[i] & keep[i]).sum()), k))
    return pairs


def error_dominated(s: Scenario, pairs: list[CasePair]) -> bool:
    return sum(p.runs for p in pairs) < 0.75 * s.n * s.runs


def real_power(s: Scenario, n: int, lift: float, reps: int, seed: int) -> float:
    """How often the test itself says "beyond noise", upward, at a true ``lift`` with ``n`` cases."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        pairs = draw(s, rng, n, lift=lift)
        if len(pairs) < 2 or error_dominated(s, pairs) and s.errors:
            continue
        scores = integer_scores(pairs)
        hits += sum(scores) > 0 and sign_flip_p(scores)[0] < ALPHA
    return hits / reps


@cache
def cases_really_needed(s: Scenario, reps: int, seed: int) -> int | None:
    """Smallest n (doubling, then bisection) whose real power at +10 pts reaches 0.8."""
    if ADVICE_TARGET_PTS / 100 > max_lift(s.baseline, s.spread):
        return None
    n = 8
    while real_power(s, n, ADVICE_TARGET_PTS, reps, seed) < 0.8:
        n *= 2
        if n > 4096:
            return None
    lo = n // 2
    while n - lo > max(1, lo // 20):
        mid = (lo + n) // 2
        lo, n = (mid, n) if real_power(s, mid, ADVICE_TARGET_PTS, reps, seed) < 0.8 else (lo, mid)
    return n


def run_scenario(s: Scenario, reps: int, rng: np.random.Generator, seed: int, null_reps: int,
                 needed_sims: int = 200) -> dict:
    """``reps`` runs through ``case_statistics`` (every sentence); a scenario with no true lift
    then ``null_reps - reps`` more through ``infer_lift`` (the test and interval those sentences
    are decided by), so its false-claim rate and coverage are read to a small Monte Carlo SE.
    ``needed_sims``: the suites each step of the search for the cases really needed reads (over
    200, a real power of 0.8 is read to ±0.028, and a pilot of 150 cases advises within a few
    cases of that count, so its share hangs on that reading)."""
    truth = s.truth()
    false = covered = judged = stated = never = 0
    printed: list[float] = []
    advice: list[int] = []
    for i in range(null_reps if truth == 0 else reps):
        pairs = draw(s, rng, s.n)
        if len(pairs) < 2 or (s.errors and error_dominated(s, pairs)):
            continue  # no statistic is reported
        judged += 1
        if i >= reps:
            inference = infer_lift(pairs)
            assert inference is not None and inference.ci95 is not None
            lo, hi = inference.ci95
            covered += lo <= truth <= hi
            false += inference.beyond_noise
            continue
        errored = s.n * s.runs - sum(p.runs for p in pairs)
        stats = case_statistics(pairs, target_lift_pts=ADVICE_TARGET_PTS, errored=errored)
        stated += 1
        lo, hi = stats.ci95
        covered += lo <= truth <= hi
        if stats.distinguishable and (truth == 0 or (stats.lift_pts < 0) != (truth < 0)):
            false += 1
        power = stats.power
        if power is not None:
            never += power.never_significant
            if power.detectable_lift_pts is not None:
                printed.append(power.detectable_lift_pts)
            if power.cases_needed is not None:
                advice.append(power.cases_needed)
    cell = {"judged": judged, "false": false / max(judged, 1), "cover": covered / max(judged, 1),
            "never": never / max(stated, 1), "printed": len(printed) / max(stated, 1), "x": None, "power_at_x": None, "advice_share": None,
            "advice_median": None, "needed": None, "power_at_max": None, "power_remeasured": False,
            "advised": len(advice)}
    if printed and not s.het_null:
        x = float(np.median(printed))
        cell["x"] = x
        sims = max(reps, POWER_SIMS)
        cell["power_at_x"] = real_power(s, s.n, x, sims, seed + 1)
        if _near_band_edge(cell["power_at_x"], sims):
            # Too close to an edge to tell at this precision: measure again, independently, over
            # four times the suites, and report that reading alone (marked '*').
            sims *= 4
            cell["power_at_x"] = real_power(s, s.n, x, sims, seed + 4)
            cell["power_remeasured"] = True
    if cell["printed"] < PRINTED_FLOOR and not s.het_null:
        # Printing no X is right only if no lift the baseline allows reaches 80% real power.
        cell["power_at_max"] = real_power(s, s.n, 100 * max_lift(s.baseline, s.spread) - 0.5,
                                          max(reps, POWER_SIMS), seed + 3)
    if advice and not s.het_null:
        needed = cases_really_needed(replace(s, lift=0, het_null=False, concentrated=False, het_up_share=None),
                                     max(reps, needed_sims), seed + 2)
        cell["needed"] = needed
        cell["advice_median"] = int(np.median(advice))
        if needed is not None:
            cell["advice_share"] = sum(a >= needed for a in advice) / len(advice)
    return cell


def named_broken(n: int, runs: int, share: float, reps: int, rng: np.random.Generator) -> dict:
    """An edit that breaks ``share`` of the cases (they pass a tenth as often), the rest unchanged:
    how many of the cases ``regression_cases`` names broken really are (precision), how many of
    the broken it finds (recall), and how often it names any case when the edit breaks none."""
    named = right = found = false_any = 0
    broken_total = 0
    for _ in range(reps):
        for breaks in (True, False):
            logits = rng.normal(0.0, 1.5, n)
            original = 1 / (1 + np.exp(-logits))
            hit = rng.random(n) < share if breaks else np.zeros(n, dtype=bool)
            candidate = np.where(hit, original * 0.1, original)
            c = rng.binomial(runs, candidate)
            o = rng.binomial(runs, original)
            pairs = [CasePair(int(a), int(b), runs) for a, b in zip(c, o)]
            names = [str(i) for i in range(n)]
            chosen = {int(x) for x in regression_cases(pairs, names)}
            if breaks:
                named += len(chosen)
                right += sum(1 for i in chosen if hit[i])
                found += sum(1 for i in chosen if hit[i])
                broken_total += int(hit.sum())
            else:
                false_any += bool(chosen)
    return {"precision": right / named if named else None, "recall": found / max(broken_total, 1),
            "false_any": false_any / reps, "named_per_run": named / reps}


def stop_early(s: Scenario, reps: int, rng: np.random.Generator) -> dict:
    """``--stop-early`` replayed (``scoring.stopping.replay``) on simulated runs of ``s``: the share
    of cases (so of model calls) each design saves, and its claims beside the fixed design's."""
    out: dict = {"fixed": 0, "curtail": [0, 0.0, 0], "group-sequential": [0, 0.0, 0]}
    truth = s.truth()
    for _ in range(reps):
        pairs = draw(s, rng, s.n)
        full = claim(pairs)
        out["fixed"] += (full != "noise") if truth == 0 else (full == "helps")
        for design in ("curtail", "group-sequential"):
            result = replay(pairs, design, s.runs)
            said = result.claim_stopped
            cell = out[design]
            cell[0] += (said != "noise") if truth == 0 else (said == "helps")
            cell[1] += result.cases_saved / s.n
            cell[2] += said != full
    return {"fixed": out["fixed"] / reps,
            **{d: (v[0] / reps, v[1] / reps, v[2] / reps) for d, v in out.items() if d != "fixed"}}


def harm_power(s: Scenario, reps: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """A skill that hurts by ``s.lift`` points (a simulated lift with the arms swapped): how often
    the fixed design and group-sequential stopping say "hurts beyond noise", and the share of
    cases group-sequential saves. Its futility stop must not hide harm."""
    fixed = stopped = saved = 0.0
    for _ in range(reps):
        pairs = [CasePair(p.without_passes, p.with_passes, p.runs) for p in draw(s, rng, s.n)]
        fixed += claim(pairs) == "hurts"
        result = replay(pairs, "group-sequential", s.runs)
        stopped += result.claim_stopped == "hurts"
        saved += result.cases_saved / s.n
    return fixed / reps, stopped / reps, saved / reps


def point_gate(s: Scenario, threshold_pts: float, reps: int, rng: np.random.Generator) -> dict:
    """``--min-delta-pts`` on a skill with no effect: how often the point gate and the
    lower-bound gate pass it, and the pass rate the point gate's note prints (the power model's
    ``null_point_pass_rate`` at each run's own cases, runs and discordance), as its median."""
    point = lower = judged = 0
    said: list[float] = []
    for _ in range(reps):
        pairs = draw(s, rng, s.n)
        if len(pairs) < 2:
            continue
        stats = case_statistics(pairs)
        judged += 1
        point += stats.delta_pts >= threshold_pts
        lower += stats.ci95 is not None and stats.ci95[0] >= threshold_pts
        if stats.power is not None and stats.power.discordance is not None:
            said.append(null_point_pass_rate(len(pairs), stats.power.runs, stats.power.discordance,
                                             threshold_pts / 100))
    return {"point": point / max(judged, 1), "lower": lower / max(judged, 1),
            "said": float(np.median(said)) if said else None}


def scenarios(quick: bool) -> list[Scenario]:
    if quick:
        return [Scenario(n, 1, lift) for n in (5, 20) for lift in (0, 10)] + [Scenario(20, 1, 0, het_null=True)]
    out = [Scenario(n, runs, lift) for n in (5, 10, 20, 50, 100) for runs in (1, 3) for lift in (0, 10, 30)]
    out += [Scenario(n, runs, 0, het_null=True) for n in (10, 20, 50) for runs in (1, 3)]
    out += [Scenario(20, 5, lift) for lift in (0, 10, 30)]
    out += [Scenario(20, runs, lift, baseline=b) for b in ("low", "high") for runs in (1, 3) for lift in (0, 10)]
    out += [Scenario(n, runs, lift, spread=4.0) for n in (20, 50) for runs in (1, 3) for lift in (0, 10)]
    out += [Scenario(20, 3, lift, errors=e) for e in (0.1, 0.3) for lift in (0, 10)]
    # The lift on a few whole cases: "detects X" must hold for it too, not only for smooth lifts.
    out += [Scenario(n, runs, 10, concentrated=True) for n in (20, 50) for runs in (1, 3)]
    out += [Scenario(20, runs, 10, spread=4.0, concentrated=True) for runs in (1, 3)]
    return out


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else format(value, spec)


def _rate_se(judged: int) -> float:
    """The Monte Carlo SE of a rate at the false-claim target (and so at 0.95), over ``judged`` runs."""
    return math.sqrt(TARGETS["false"] * (1 - TARGETS["false"]) / max(judged, 1))


def _near_band_edge(power: float, sims: int) -> bool:
    """Whether a real power read over ``sims`` suites lies within 2 Monte Carlo SE of an edge of
    the band the printed X must reach."""
    se = math.sqrt(power * (1 - power) / sims) if 0 < power < 1 else 0.0
    return any(abs(power - edge) < 2 * se for edge in TARGETS["power"])


def _misses(cell: dict, slack: float) -> list[str]:
    misses = []
    if cell["false"] > TARGETS["false"] + 2 * _rate_se(cell["judged"]):
        misses.append("false")
    if cell["cover"] < TARGETS["cover"] - 2 * _rate_se(cell["judged"]):
        misses.append("cover")
    low, high = TARGETS["power"]
    if (cell["power_at_x"] is not None and cell["printed"] >= PRINTED_FLOOR
            and not low - slack <= cell["power_at_x"] <= high + slack):
        misses.append("power")
    if cell["power_at_max"] is not None and cell["power_at_max"] > TARGETS["power"][0] + slack:
        misses.append("silent")
    if cell["advice_share"] is not None and cell["advice_share"] < TARGETS["advice"] - slack:
        misses.append("advice")
    return misses


# The tables read from a stream of their own (seeded by --seed and the table), so that --only
# reproduces the full run's table; the tables above them share one stream, in order.
OWN_STREAMS = {"width": 1, "errors": 2, "judge": 3}
# Suites per width cell: the validity of an alternative is read at every lift to 2 Monte Carlo SE,
# which over 200 suites (±0.031) counts one covering 0.92 as valid, and over 1000 (±0.014) the t
# interval's 0.935-0.94 at near-deterministic 3-run cells; over 4000, ±0.007.
WIDTH_REPS = 4000


def own_stream_tables(args: argparse.Namespace, reps: int, tables: Sequence[str]) -> int:
    """The width, arm-dependent error and judge gate tables among ``tables``; the cells off target."""
    off = 0
    se = math.sqrt(0.05 * 0.95 / reps)
    if "width" in tables:
        print()
        width_cells = [Scenario(20, 1, lift) for lift in (0, 10)] if args.quick else [
            Scenario(n, runs, lift, spread=spread) for n in (10, 20, 50) for runs in (1, 3)
            for spread in (1.5, 4.0) for lift in (0, 10, 30)]
        width_reps = reps if args.quick else max(reps, args.width_reps)
        off += width_table(draw, width_cells, width_reps, _stream(args.seed, "width"))
    if "errors" in tables:
        rng = _stream(args.seed, "errors")
        print()
        error_reps = reps if args.quick else max(reps, 300)
        print(f"a skill with no effect whose arm errors on the runs it fails (50 cases x 3 runs, {error_reps} runs "
              f"each, SE ±{_rate_se(error_reps):.3f}): false claims through paired_statistics (target <= "
              f"{TARGETS['false']}), beside the test alone on the records left when errors are dropped")
        print(f"{'erring arm':>10} {'rate':>5}  {'claims':>6} {'dropped':>7}")
        for arm in ("with", "without"):
            for rate in ((0.2,) if args.quick else (0.1, 0.2)):
                cell = arm_dependent_errors(50, 3, rate, error_reps, rng, arm=arm)
                bad = cell["claims"] > TARGETS["false"] + 2 * _rate_se(cell["judged"])
                off += bad
                print(f"{arm:>10} {rate:>5.0%}  {cell['claims']:>6.3f} {cell['dropped']:>7.3f}"
                      f"{'  <- off' if bad else ''}", flush=True)
    if "judge" in tables:
        rng = _stream(args.seed, "judge")
        print()
        print("judge consistency gate (engine.consistency.check_consistency): share of runs whose lift it "
              "withholds, and re-asks spent (targets: a 70%-consistent judge caught >= 0.9, a 95% one kept >= 0.9)")
        print(f"{'agreement':>9} {'verdicts':>8}  {'withheld':>8} {'re-asks':>7}")
        for agree in (0.7, 0.8, 0.9, 0.95):
            for verdicts in ((40,) if args.quick else (20, 100)):
                withheld, calls = judge_gate(agree, verdicts, reps, rng)
                bad = (agree == 0.7 and withheld < 0.9 - 2 * se) or (agree == 0.95 and 1 - withheld < 0.9 - 2 * se)
                off += bad
                print(f"{agree:>9.2f} {verdicts:>8}  {withheld:>8.3f} {calls:>7.1f}{'  <- off' if bad else ''}",
                      flush=True)
    return off


def _stream(seed: int, table: str) -> np.random.Generator:
    return np.random.default_rng([seed, OWN_STREAMS[table]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="simulated runs per scenario")
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--null-reps", type=int, default=2000,
                        help="simulated runs per scenario with no true lift, for its false claims and coverage")
    parser.add_argument("--quick", action="store_true", help="five small scenarios (a smoke test)")
    parser.add_argument("--width-reps", type=int, default=WIDTH_REPS,
                        help="simulated suites per cell of the interval's width table")
    parser.add_argument("--only", action="append", choices=tuple(OWN_STREAMS),
                        help="only this table (repeatable): the same numbers as in the full run")
    args = parser.parse_args(argv)
    reps = 60 if args.quick and args.reps == 200 else args.reps
    null_reps = max(reps, 300 if args.quick and args.null_reps == 2000 else args.null_reps)
    # Replaying --stop-early case by case costs up to 80 ms a run at 100 cases x 3 runs.
    stop_null_reps = max(reps, null_reps // 4)
    rng = np.random.default_rng(args.seed)
    se = math.sqrt(0.05 * 0.95 / reps)
    started = time.monotonic()
    if args.only:
        off = own_stream_tables(args, reps, args.only)
        print(f"{off} cell(s) off target by more than 2 Monte Carlo SE; elapsed {time.monotonic() - started:.0f} s")
        return 0
    print(f"skillab calibration: {reps} simulated runs per scenario ({null_reps} for false claims and "
          f"coverage where the true lift is 0), seed {args.seed}; Monte Carlo SE ±{se:.3f} at 0.05 and 0.95 "
          f"over {reps} runs, ±{_rate_se(null_reps):.4f} over {null_reps} (the '±' column: each row's); "
          f"power@X over {POWER_SIMS} suites, '*' where that read within 2 SE of the band's edge and was "
          f"measured again over {4 * POWER_SIMS}")
    print(f"{'scenario':<30} {'n':>4} {'runs':>4}  {'false':>6} {'±':>6} {'cover':>6}  {'detects X':>9} "
          f"{'power@X':>7} {'shown':>5} {'@max':>5} {'never':>5}  {'advice':>6} {'needed':>6} {'share':>6}")
    worst = {"false": 0.0, "cover": 1.0}
    off = 0
    for s in scenarios(args.quick):
        cell = run_scenario(s, reps, rng, args.seed, null_reps)
        worst["false"] = max(worst["false"], cell["false"])
        worst["cover"] = min(worst["cover"], cell["cover"])
        misses = _misses(cell, 2 * se)
        off += bool(misses)
        flag = f"  <- off: {', '.join(misses)}" if misses else ""
        print(f"{s.label:<30} {s.n:>4} {s.runs:>4}  {cell['false']:>6.3f} {_rate_se(cell['judged']):>6.4f} "
              f"{cell['cover']:>6.3f}  "
              f"{_fmt(cell['x'], '.0f'):>9} {_fmt(cell['power_at_x'], '.2f'):>6}{'*' if cell['power_remeasured'] else ' '} "
              f"{cell['printed']:>5.2f} "
              f"{_fmt(cell['power_at_max'], '.2f'):>5} {cell['never']:>5.2f}  "
              f"{_fmt(cell['advice_median'], 'd'):>6} {_fmt(cell['needed'], 'd'):>6} "
              f"{_fmt(cell['advice_share'], '.2f'):>6}{flag}", flush=True)
    print()
    print(f"named broken by an edit that breaks 10% of the cases (precision target >= {TARGETS['precision']}; "
          f"any case named when none broke <= {TARGETS['false']}):")
    print(f"{'n':>4} {'runs':>4}  {'precision':>9} {'recall':>6} {'named/run':>9} {'false any':>9}")
    for n, runs in ((20, 3),) if args.quick else ((20, 1), (20, 3), (20, 5), (50, 3), (50, 5), (100, 5)):
        cell = named_broken(n, runs, 0.10, reps, rng)
        flag = ""
        if (cell["precision"] is not None and cell["precision"] < TARGETS["precision"] - 2 * se) or \
                cell["false_any"] > TARGETS["false"] + 2 * se:
            flag, off = "  <- off", off + 1
        print(f"{n:>4} {runs:>4}  {_fmt(cell['precision']):>9} {cell['recall']:>6.3f} "
              f"{cell['named_per_run']:>9.2f} {cell['false_any']:>9.3f}{flag}", flush=True)
    print()
    print("--stop-early replayed on the same simulated runs, one case at a time: 'claims' is the false-claim "
          "rate at lift 0 and the power otherwise; 'saved' the share of cases (and model calls) not run; "
          "'differs' how often the stopped run's claim is not the full run's")
    print(f"(with no true lift, {stop_null_reps} runs: '±' is the Monte Carlo SE of a false-claim rate at 0.05)")
    print(f"{'scenario':<16} {'n':>4} {'runs':>4}  {'fixed claims':>12} {'±':>6}  {'curtail claims/saved/differs':>28}  "
          f"{'group-seq claims/saved/differs':>30}")
    stop_cells = [Scenario(20, 1, 10)] if args.quick else [
        Scenario(n, runs, lift) for n in (20, 40, 100) for runs in (1, 3) for lift in (0, 10, 30)]
    for s in stop_cells:
        runs_here = stop_null_reps if s.truth() == 0 else reps
        cell = stop_early(s, runs_here, rng)
        c, g = cell["curtail"], cell["group-sequential"]
        flag = "  <- off: false" if s.truth() == 0 and max(c[0], g[0]) > TARGETS["false"] + 2 * _rate_se(runs_here) else ""
        off += bool(flag)
        print(f"{s.label:<16} {s.n:>4} {s.runs:>4}  {cell['fixed']:>12.3f} {_rate_se(runs_here):>6.4f}  "
              f"{c[0]:>10.3f} / {c[1]:.3f} / {c[2]:.3f}  {g[0]:>12.3f} / {g[1]:.3f} / {g[2]:.3f}{flag}", flush=True)
    print()
    print(f"a skill that hurts, group-sequential beside the fixed design: 'hurts' power (target: within "
          f"{HARM_POWER_SLACK:.2f} of the fixed design's, beyond 2 Monte Carlo SE) and the share of cases saved")
    print(f"{'harm':>6} {'n':>4} {'runs':>4}  {'fixed':>6} {'group-seq':>9} {'±':>6} {'saved':>6}")
    harm_cells = [Scenario(20, 1, 30)] if args.quick else [
        Scenario(n, runs, lift) for n, lift in ((20, 30), (100, 10), (40, 10)) for runs in (1, 3)]
    for s in harm_cells:
        fixed, stopped, saved = harm_power(s, reps, rng)
        harm_se = math.sqrt(max(fixed * (1 - fixed), 0.01) / reps) * math.sqrt(2)
        bad = stopped < fixed - HARM_POWER_SLACK - 2 * harm_se
        off += bad
        print(f"{-s.lift:>+6.0f} {s.n:>4} {s.runs:>4}  {fixed:>6.3f} {stopped:>9.3f} {harm_se:>6.3f} {saved:>6.3f}"
              f"{'  <- off' if bad else ''}", flush=True)
    print()
    print(f"--min-delta-pts {GATE_PTS} on a skill with no effect: how often each --gate-on passes it, and the "
          f"rate the point gate's note prints (median; target: within {GATE_NOTE_SLACK} of the real rate; "
          f"the lower-bound gate <= {TARGETS['false']})")
    print(f"{'scenario':<16} {'n':>4} {'runs':>4}  {'point':>6} {'note says':>9} {'lower-bound':>11}")
    gate_cells = [Scenario(20, 1, 0)] if args.quick else [
        Scenario(n, runs, 0, spread=spread) for n in (5, 10, 20, 50) for runs in (1, 3)
        for spread in (1.5, 4.0)]
    for s in gate_cells:
        cell = point_gate(s, GATE_PTS, reps, rng)
        bad = cell["lower"] > TARGETS["false"] + 2 * se or (
            cell["said"] is not None and abs(cell["said"] - cell["point"]) > GATE_NOTE_SLACK + 2 * se)
        off += bad
        print(f"{s.label:<16} {s.n:>4} {s.runs:>4}  {cell['point']:>6.3f} {_fmt(cell['said']):>9} "
              f"{cell['lower']:>11.3f}{'  <- off' if bad else ''}", flush=True)
    off += own_stream_tables(args, reps, OWN_STREAMS)
    print(f"worst: false claims {worst['false']:.3f} (target <= {TARGETS['false']}), coverage "
          f"{worst['cover']:.3f} (target >= {TARGETS['cover']}); {off} scenario(s) off target by more "
          f"than 2 Monte Carlo SE")
    print(f"elapsed {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
