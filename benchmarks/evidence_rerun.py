"""Re-running until green: how often a skill that does nothing is called "helps".

An adversary (a team re-triggering the CI job) re-runs a null skill up to ``--reruns`` times and
stops at the first "helps". Judged run by run, each run's own claim (skillab's lift sentence,
``scoring.stopping.claim``) gets up to ``reruns`` chances; judged by the evidence ledger
(``--evidence-ledger``: ``scoring.eprocess`` over every run's flips, multiplied), it keeps its
level however often it is looked at. Printed side by side, each with its Monte Carlo SE:

- naive, 1 run: the per-run false "helps" rate (what one run promises);
- naive, first of N: the adversary's rate judged run by run;
- ledger, first of N: the adversary's rate judged by the ledger (target <= 0.05);
- a null skill whose with-skill arm errors on 10% or 30% of the runs it fails (``--errors``):
  the ledger as it keeps those pairs (against each claim, ``evidence_ledger.pair_kind``), beside
  the naive rule on the graded records;
- ledger, cached baseline counted: the same when the without-skill arm comes from the baseline
  cache and its pairs are counted anyway (what the ledger refuses to do: one baseline draw,
  paired again each re-run, decides the direction of every later flip);
- a null skill whose runs of a case repeat one draw (50% or 90% of them): the ledger counts a
  case of a run as one vote, so alike runs are one case's evidence;
- and for a skill that truly helps, the share of adversaries the ledger lets claim it within N
  runs and the median runs it took, beside the naive rule's.

Simulated suites as in ``benchmarks/calibration.py``: cases of varied difficulty (baseline logit
~ N(mu, 1.5^2)), both arms run ``runs`` times per case; the skill a logit shift (0: null).

``python benchmarks/evidence_rerun.py [--reps N] [--cases N] [--runs N] [--reruns N] [--seed S]``
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from skillab.core.records import ArmRecord, CaseRecord
from skillab.log.ledger import KINDS, LedgerLine, Tally
from skillab.scoring.eprocess import log_e_helps, log_threshold
from skillab.scoring.evidence_ledger import evidence_block, pair_kind
from skillab.scoring.inference import CasePair
from skillab.scoring.outcomes import classify_outcome
from skillab.scoring.statistics import case_pairs
from skillab.scoring.stopping import claim


def one_run(rng: np.random.Generator, logits: np.ndarray, shift: float, runs: int,
            cached_without: np.ndarray | None = None) -> tuple[list[CasePair], int, int, np.ndarray]:
    """One run of the suite: its case pairs, its flips to pass and to fail, and its baseline."""
    p0 = 1 / (1 + np.exp(-logits))
    p1 = 1 / (1 + np.exp(-(logits + shift)))
    w = rng.random((len(logits), runs)) < p1[:, None]
    o = rng.random((len(logits), runs)) < p0[:, None] if cached_without is None else cached_without
    pairs = [CasePair(int(w[i].sum()), int(o[i].sum()), runs) for i in range(len(logits))]
    return pairs, int((w & ~o).sum()), int((~w & o).sum()), o


def erring_run(rng: np.random.Generator, logits: np.ndarray, shift: float, runs: int, errors: float,
               attempt: int, tally: Tally, icc: float = 0.0) -> list[CasePair]:
    """One run whose with-skill arm errors on ``errors`` of the runs it fails (it times out when
    stuck), its records' pairs added to ``tally`` as the ledger keeps them
    (``evidence_ledger.pair_kind``); the case pairs of its graded records. ``icc``: each run of
    an arm of a case is that arm's one shared draw with this probability (runs correlated within
    the run of the suite, beyond sharing the case's pass rate)."""
    p0 = 1 / (1 + np.exp(-logits))
    p1 = 1 / (1 + np.exp(-(logits + shift)))
    w = rng.random((len(logits), runs)) < p1[:, None]
    o = rng.random((len(logits), runs)) < p0[:, None]
    if icc:
        w = np.where(rng.random(w.shape) < icc, (rng.random(len(logits)) < p1)[:, None], w)
        o = np.where(rng.random(o.shape) < icc, (rng.random(len(logits)) < p0)[:, None], o)
    errored = ~w & (rng.random((len(logits), runs)) < errors)
    records = []
    pairs: dict[str, list[str]] = {kind: [] for kind in KINDS}
    cases: list[tuple[str, ...]] = []
    for i in range(len(logits)):
        case: list[str] = []
        for r in range(runs):
            e = bool(errored[i, r])
            arm = ArmRecord(passed=bool(w[i, r]) and not e, errored=e, error="agent timed out" if e else None)
            outcome = classify_outcome(with_passed=arm.passed, without_passed=bool(o[i, r]), errored=e)
            record = CaseRecord(f"c{i}", outcome, arm, ArmRecord(passed=bool(o[i, r]), errored=False), run_index=r)
            kind = pair_kind(record)
            if kind is not None:
                pairs[kind].append(f"{attempt}/{i}/{r}")
                case.append(f"{attempt}/{i}/{r}")
            records.append(record)
        cases.append(tuple(case))
    tally.add(LedgerLine("", "", {k: tuple(v) for k, v in pairs.items()}, cases=tuple(cases)))
    return case_pairs(records)[1]


def adversary(rng: np.random.Generator, n: int, runs: int, reruns: int, shift: float, *,
              cache: bool = False, errors: float = 0.0, icc: float = 0.0) -> tuple[int | None, int | None]:
    """The run (1-based) at which the naive rule and the ledger first say "helps" (None: never).
    ``errors``: the with-skill arm errors on that share of the runs it fails; the naive rule
    then reads the graded records, the ledger decides as ``evidence_ledger`` does (so with
    ``icc``, ``erring_run``'s correlated runs)."""
    logits = rng.normal(0.0, 1.5, n)
    bar = log_threshold()
    up = down = 0
    naive = ledger = None
    baseline = None
    tally = Tally()
    for attempt in range(1, reruns + 1):
        if not cache:  # the ledger as it counts: a vote per case and run
            pairs = erring_run(rng, logits, shift, runs, errors, attempt, tally, icc)
            said = evidence_block(tally, "", "", added=0, cached=0).verdict == "helps"
        else:
            pairs, k, m, o = one_run(rng, logits, shift, runs, baseline if cache else None)
            baseline = o
            up, down = up + k, down + m
            said = log_e_helps(up, down) >= bar
        if naive is None and claim(pairs) == "helps":
            naive = attempt
        if ledger is None and said:
            ledger = attempt
        if naive is not None and ledger is not None:
            break
    return naive, ledger


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{p:.3f} ± {math.sqrt(max(p * (1 - p), 1e-9) / reps):.3f}"


def shift_for(lift_pts: float) -> float:
    """The logit shift giving a population lift of ``lift_pts`` over these cases."""
    a = np.random.default_rng(12345).normal(0.0, 1.5, 200_000)
    p0 = 1 / (1 + np.exp(-a))
    lo, hi = 0.0, 12.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (1 / (1 + np.exp(-(a + mid))) - p0).mean() < lift_pts / 100 else (lo, mid)
    return (lo + hi) / 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n, runs, reruns, reps = args.cases, args.runs, args.reruns, args.reps
    print(f"{reps} adversaries · {n} cases x {runs} run(s) · up to {reruns} re-runs, stop at the first \"helps\"")
    print(f"{'scenario':<34}{'naive, 1 run':>16}{'naive, first of N':>20}{'ledger, first of N':>21}")
    ok = True
    for label, cache in (("null skill", False), ("null skill, cached baseline", True)):
        first = naive = ledger = 0
        for _ in range(reps):
            got_naive, got_ledger = adversary(rng, n, runs, reruns, 0.0, cache=cache)
            first += got_naive == 1
            naive += got_naive is not None
            ledger += got_ledger is not None
        tag = " (if counted)" if cache else ""
        print(f"{label:<34}{rate(first, reps):>16}{rate(naive, reps):>20}{rate(ledger, reps):>21}{tag}")
        if not cache:
            ok = ok and ledger / reps <= 0.05
    print("\nthe ledger leaves cached-baseline pairs out, so the cached case is the plain null row for it")
    print(f"\n{'true lift':<12}{'naive: helps within N':>24}{'median runs':>13}{'ledger: helps within N':>25}"
          f"{'median runs':>13}")
    for lift in (10.0, 20.0, 30.0):
        shift = shift_for(lift)
        results = [adversary(rng, n, runs, reruns, shift) for _ in range(max(200, reps // 4))]
        k = len(results)
        naive_runs = [r[0] for r in results if r[0] is not None]
        ledger_runs = [r[1] for r in results if r[1] is not None]
        print(f"{f'+{lift:.0f} pts':<12}{rate(len(naive_runs), k):>24}{_median(naive_runs):>13}"
              f"{rate(len(ledger_runs), k):>25}{_median(ledger_runs):>13}")
    # Each table a stream of its own, so the rows above read as they did before it was added.
    null_reps = max(200, reps // 4)
    tables = (("a null skill whose with-skill arm errors on the runs it fails", "erring share of failed runs",
               "errors", (0.1, 0.3)),
              # Runs that repeat one draw (an agent that answers a case alike every time): the
              # ledger's vote per case and run keeps them one case's evidence.
              ("a null skill whose runs of a case repeat one draw", "share of runs that repeat it",
               "icc", (0.5, 0.9)))
    for stream, (title, column, knob, values) in enumerate(tables, start=1):
        table_rng = np.random.default_rng([args.seed, stream])
        print(f"\n{title} ({null_reps} adversaries)")
        print(f"{column:<34}{'naive, first of N':>20}{'ledger, first of N':>21}")
        for value in values:
            results = [adversary(table_rng, n, runs, reruns, 0.0, **{knob: value}) for _ in range(null_reps)]
            said = sum(r[1] is not None for r in results)
            print(f"{value:<34.0%}{rate(sum(r[0] is not None for r in results), null_reps):>20}"
                  f"{rate(said, null_reps):>21}")
            ok = ok and said / null_reps <= 0.05
    print(f"\nledger false \"helps\" within {reruns} re-runs <= 0.05: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


def _median(values: list[int]) -> str:
    return "-" if not values else f"{float(np.median(values)):.1f}"


if __name__ == "__main__":
    sys.exit(main())
