"""The gates a finished results document must pass, for the CLI's exit code and the Action's
check alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.runlog import RunLog


@dataclass(frozen=True)
class Gates:
    """``--fail-on-verdict``, ``--min-delta-pts`` (``--gate-on``) and the trigger gates."""

    fail_on: tuple[str, ...] = ()
    min_delta_pts: float | None = None
    gate_on: str = "point"
    min_trigger_recall: float | None = None
    max_false_trigger_rate: float | None = None
    # Fail a suite that measured nothing at all (every case errored, no trigger trial ran).
    require_measured: bool = False
    # ``--max-skill-tokens``: the skill's listing entry plus body, for the run's agent.
    max_skill_tokens: int | None = None

    def failures(self, doc: dict[str, Any], name: str | None = None) -> list[str]:
        """One line per gate the document fails (``name``: the suite, for the measured gate)."""
        reasons = []
        if self.require_measured and int(doc.get("cases_aggregated", 0)) == 0 and not _triggers_measured(doc):
            reasons.append(f"{name or doc['suite']['skill']}: measured nothing "
                           f"({int(doc.get('errors', 0))} of {doc.get('total_cases', 0)} cases errored)")
        from ..reports.context_view import skill_tokens_failure

        log = _run(doc)
        too_big = skill_tokens_failure(log, self.max_skill_tokens) if log is not None else None
        reasons += [too_big] if too_big else []
        return reasons + gate_failures(doc, self.fail_on, self.min_delta_pts, gate_on=self.gate_on,
                                       min_trigger_recall=self.min_trigger_recall,
                                       max_false_trigger_rate=self.max_false_trigger_rate)


    def notes(self, doc: dict[str, Any]) -> list[str]:
        """What a passing or failing gate cannot show, said beside its verdict (see ``point_gate_note``)."""
        note = point_gate_note(doc, self.min_delta_pts, self.gate_on)
        return [note] if note else []


def point_gate_note(doc: dict[str, Any], min_delta: float | None, gate_on: str) -> str | None:
    """What ``--gate-on point`` can and cannot show for this document, or None without that gate.

    The point estimate moves with noise: a skill with no effect passes ``--min-delta-pts 5`` a
    third of the time at 20 cases. The rate is the power model's (``null_point_pass_rate``) at
    this suite's cases, runs and discordance, the same model the power statement uses.
    """
    stats = doc.get("statistics") or {}
    delta = (doc.get("pass_rate") or {}).get("delta_pts")
    if min_delta is None or gate_on != "point" or delta is None or stats.get("withheld"):
        return None
    from ..scoring.power_model import null_point_pass_rate

    power = stats.get("power") or {}
    n, runs, psi = stats.get("n_cases"), power.get("runs"), power.get("discordance")
    head = (f"{doc['suite']['skill']}: --min-delta-pts {min_delta:+g} compares the point estimate "
            f"({delta:+.2f} pts), which shows where the lift landed this run, not that it is beyond noise")
    tail = f"; --gate-on lower-bound passes only when the data show at least {min_delta:+g} pts"
    if not n or not runs or psi is None:
        return head + tail
    rate = null_point_pass_rate(int(n), int(runs), float(psi), min_delta / 100)
    return (f"{head}: a skill with no effect passes it about {_share(rate)} of the time at this suite's "
            f"size ({n} cases x {runs} run{'s' if runs != 1 else ''}, by the power model){tail}")


def _share(rate: float) -> str:
    if 0 < rate < 0.01:
        return "<1%"
    return f"{rate:.0%}"


def _triggers_measured(doc: dict[str, Any]) -> bool:
    """A suite of trigger queries only measured something when a trial ran without error."""
    block = doc.get("triggers") or {}
    return int(block.get("trials", 0)) > int(block.get("errors", 0))


def _run(doc: dict[str, Any]) -> RunLog | None:
    """The run of a results document for the reporters' gate rules; None for a document written
    by hand that is no run's (until the gates read ``RunLog`` themselves)."""
    try:
        return RunLog.from_json(doc)
    except (ValueError, KeyError, TypeError):
        return None


def gate_failures(doc: dict, fail_on: Sequence[str], min_delta: float | None,
                  *, gate_on: str = "point", min_trigger_recall: float | None = None,
                  max_false_trigger_rate: float | None = None) -> list[str]:
    """One line per gate the document fails.

    ``gate_on="lower-bound"`` compares the lower end of the lift's 95% interval, so the gate
    passes only when the data show the lift is at least ``min_delta`` beyond noise.
    """
    from ..reports.trigger_gates import only_triggers, trigger_gate_failures

    skill = doc["suite"]["skill"]
    log = _run(doc)
    reasons = [] if log is None else trigger_gate_failures(log, min_trigger_recall, max_false_trigger_rate)
    if log is not None and only_triggers(log):
        return reasons  # no graded case: the verdict and the lift gates have nothing to judge
    if doc["verdict"] in fail_on:
        reasons.append(f"{skill}: verdict is {doc['verdict']}")
    withheld = (doc.get("statistics") or {}).get("withheld")
    if min_delta is not None and withheld and doc["pass_rate"]["delta_pts"] is not None:
        # A lift the judge could not reproduce is no evidence of one (``statistics.withheld``).
        reasons.append(f"{skill}: the lift is withheld, so it cannot meet the minimum {min_delta:+.2f} pts "
                       f"({withheld})")
    elif min_delta is not None and gate_on == "lower-bound":
        ci = (doc.get("statistics") or {}).get("ci95") if doc["pass_rate"]["delta_pts"] is not None else None
        if ci is None:
            reasons.append(f"{skill}: no interval for the lift was measured (minimum {min_delta:+.2f} pts)")
        elif ci[0] < min_delta:
            reasons.append(f"{skill}: the lift's 95% lower bound {ci[0]:+.2f} pts is below the minimum "
                           f"{min_delta:+.2f}")
    elif min_delta is not None:
        delta = doc["pass_rate"]["delta_pts"]
        if delta is None:
            reasons.append(f"{skill}: no pass-rate delta was measured (minimum {min_delta:+.2f} pts)")
        elif delta < min_delta:
            reasons.append(f"{skill}: delta {delta:+.2f} pts is below the minimum {min_delta:+.2f}")
    return reasons
