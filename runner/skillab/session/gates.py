"""The gates a finished run's log must pass, for the CLI's exit code and the Action's check
alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.runlog import RunLog
from ..core.wording import counted

if TYPE_CHECKING:
    from ..core.routing import RouteDocument


@dataclass(frozen=True)
class Gates:
    """``--fail-on-verdict``, ``--min-delta-pts`` (``--gate-on``), ``--fail-on-broken`` and the
    trigger gates."""

    fail_on: tuple[str, ...] = ()
    min_delta_pts: float | None = None
    gate_on: str = "point"
    min_trigger_recall: float | None = None
    max_false_trigger_rate: float | None = None
    # Fail a suite that measured nothing at all (every case errored, no trigger trial ran).
    require_measured: bool = False
    # ``--max-skill-tokens``: the skill's listing entry plus body, for the run's agent.
    max_skill_tokens: int | None = None
    # ``--max-leaks``: answer leaks the audit found in the skill (``AuditBlock.leaks``).
    max_leaks: int | None = None
    # ``--max-held-out-gap``: the author lift minus the held-out lift, in points.
    max_held_out_gap: float | None = None
    # ``--fail-on-broken``: the ``--against`` run names cases the edit broke beyond noise.
    fail_on_broken: bool = False

    def failures(self, log: RunLog, name: str | None = None) -> list[str]:
        """One line per gate the run fails (``name``: the suite, for the measured gate)."""
        reasons = []
        aggregate = log.summary.aggregate
        if self.require_measured and aggregate.cases_aggregated == 0 and not _triggers_measured(log):
            reasons.append(f"{name or log.settings.suite.skill}: measured nothing "
                           f"({aggregate.errors} of {aggregate.total_cases} cases errored)")
        if self.max_skill_tokens is not None and log.settings.context_budget:
            from ..reports.context_view import skill_tokens_failure

            too_big = skill_tokens_failure(log, self.max_skill_tokens)
            reasons += [too_big] if too_big else []
        if self.max_held_out_gap is not None:
            from ..reports.held_out_view import held_out_gap_failure

            gap = held_out_gap_failure(log, self.max_held_out_gap)
            reasons += [gap] if gap else []
        audit = log.settings.audit
        if self.max_leaks is not None and audit is not None and audit.leaks > self.max_leaks:
            reasons.append(f"{name or log.settings.suite.skill}: the audit found {counted(audit.leaks, 'answer leak')} "
                           f"in the skill, more than --max-leaks {self.max_leaks} "
                           f"(`skillab audit {log.settings.suite.path}`)")
        comparison = log.summary.comparison
        broken = comparison.broken_by_edit if comparison is not None else ()
        if self.fail_on_broken and broken:
            reasons.append(f"{name or log.settings.suite.skill}: the edit broke {len(broken)} "
                           f"case{'s' if len(broken) != 1 else ''} beyond noise ({', '.join(broken)})")
        return reasons + gate_failures(log, self.fail_on, self.min_delta_pts, gate_on=self.gate_on,
                                       min_trigger_recall=self.min_trigger_recall,
                                       max_false_trigger_rate=self.max_false_trigger_rate)

    def notes(self, log: RunLog) -> list[str]:
        """What a passing or failing gate cannot show, said beside its verdict (see ``point_gate_note``)."""
        note = point_gate_note(log, self.min_delta_pts, self.gate_on)
        return [note] if note else []


def point_gate_note(log: RunLog, min_delta: float | None, gate_on: str) -> str | None:
    """What ``--gate-on point`` can and cannot show for this run, or None without that gate.

    The point estimate moves with noise: a skill with no effect passes ``--min-delta-pts 5`` a
    third of the time at 20 cases. The rate is the power model's (``null_point_pass_rate``) at
    this suite's cases, runs and discordance, the same model the power statement uses.
    """
    stats = log.summary.statistics
    delta = log.summary.aggregate.pass_rate.delta_pts
    if min_delta is None or gate_on != "point" or delta is None or (stats is not None and stats.withheld):
        return None
    from ..scoring.power_model import null_point_pass_rate

    power = stats.power if stats is not None else None
    n = stats.n_cases if stats is not None else None
    runs, psi = (power.runs, power.discordance) if power is not None else (None, None)
    head = (f"{log.settings.suite.skill}: --min-delta-pts {min_delta:+g} compares the point estimate "
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


def _triggers_measured(log: RunLog) -> bool:
    """A suite of trigger queries only measured something when a trial ran without error."""
    block = log.settings.triggers
    return block is not None and block.trials > block.errors


def gate_failures(log: RunLog, fail_on: Sequence[str], min_delta: float | None,
                  *, gate_on: str = "point", min_trigger_recall: float | None = None,
                  max_false_trigger_rate: float | None = None) -> list[str]:
    """One line per gate the run fails.

    ``gate_on="lower-bound"`` compares the lower end of the lift's 95% interval, so the gate
    passes only when the data show the lift is at least ``min_delta`` beyond noise.
    """
    from ..reports.trigger_gates import only_triggers, trigger_gate_failures

    skill = log.settings.suite.skill
    reasons = []
    if log.settings.triggers:
        reasons += trigger_gate_failures(log, min_trigger_recall, max_false_trigger_rate)
        if only_triggers(log):
            return reasons  # no graded case: the verdict and the lift gates have nothing to judge
    if log.verdict in fail_on:
        reasons.append(f"{skill}: verdict is {log.verdict}")
    stats = log.summary.statistics
    withheld = stats.withheld if stats is not None else None
    delta = log.summary.aggregate.pass_rate.delta_pts
    if min_delta is not None and withheld and delta is not None:
        # A lift the judge could not reproduce is no evidence of one (``statistics.withheld``).
        reasons.append(f"{skill}: the lift is withheld, so it cannot meet the minimum {min_delta:+.2f} pts "
                       f"({withheld})")
    elif min_delta is not None and gate_on == "lower-bound":
        ci = stats.ci95 if stats is not None and delta is not None else None
        if ci is None:
            reasons.append(f"{skill}: no interval for the lift was measured (minimum {min_delta:+.2f} pts)")
        elif ci[0] < min_delta:
            reasons.append(f"{skill}: the lift's 95% lower bound {ci[0]:+.2f} pts is below the minimum "
                           f"{min_delta:+.2f}")
    elif min_delta is not None:
        if delta is None:
            reasons.append(f"{skill}: no pass-rate delta was measured (minimum {min_delta:+.2f} pts)")
        elif delta < min_delta:
            reasons.append(f"{skill}: delta {delta:+.2f} pts is below the minimum {min_delta:+.2f}")
    return reasons


def route_gate_failures(doc: RouteDocument, *, max_stolen: int | None, min_accuracy: float | None) -> list[str]:
    """``skillab route``'s gates (``--max-stolen``, ``--min-route-accuracy``): one line per agent that fails one."""
    failures = []
    for agent in doc.agents:
        if max_stolen is not None and len(agent.stolen_queries) > max_stolen:
            failures.append(f"{agent.agent}: {len(agent.stolen_queries)} queries stolen beyond noise "
                            f"(--max-stolen {max_stolen})")
        value = agent.own_accuracy.value
        if min_accuracy is not None and (value is None or value < min_accuracy):
            shown = "n/a" if value is None else f"{value:.2f}"
            failures.append(f"{agent.agent}: its own queries go to it at {shown}, below "
                            f"--min-route-accuracy {min_accuracy:.2f}")
    return failures
