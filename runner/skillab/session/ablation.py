"""``skillab ablate``: the suite under the full skill, then under each leave-one-out variant.

Each variant is a copy of the skill's folder (its suite and mock script with it) without one
part, run as a suite of its own: its with-skill arms run in their own workspaces with the same
isolation as any arm, and never see the full skill, another variant or the baseline's
workspace. The without-skill arm does not depend on SKILL.md, so every variant reads it from the
baseline cache the full run filled (a private cache when the user turned caching off).

Spend: parts are tried largest first (the parts most likely to matter, and the most tokens to
save), and the run stops starting variants once ``--max-cost-usd`` is spent; the parts not run
are reported as not measured. With ``stop_early="curtail"`` each variant runs its cases in a
seeded random order, in four looks (a quarter of the cases each), and stops at the look after
which no result of the remaining cases could give the part a role (``can_still_claim``): its
label is the one the whole suite would give, and its contribution is reported over the cases
it ran.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..agents.context_budget import CHARS_PER_TOKEN
from ..core.ablation import AblationDocument, AblationSpend, FullLift, PartResult
from ..core.runlog import RunLog
from ..core.settings import RunConfig
from ..errors import UsageError
from ..scoring.ablation import Contrast, can_still_claim, classify, contrast
from ..skill.loader import plugin_name
from ..skill.sections import Partition, SkillPart, partition, write_variant
from .session import Session, SuiteRun, spent_usd

Emit = Callable[[str], None]


@dataclass(frozen=True)
class AblationPlan:
    """What ``ablate`` will run: the parts, in the order they are tried."""

    target: Path
    skill_dir: Path
    partition: Partition
    # The graded cases, in suite order.
    cases: tuple[str, ...] = ()
    # What each variant copies: the skill's folder, or the plugin holding the skill and its evals/.
    copy_root: Path | None = None

    @property
    def ordered(self) -> tuple[SkillPart, ...]:
        return tuple(sorted(self.partition.parts, key=lambda p: -p.chars))


def plan_ablation(prepared: Any, target: Path, *, level: int) -> AblationPlan:
    """The parts of the prepared suite's skill; ``UsageError`` when there is nothing to ablate."""
    skill, suite = prepared.skill, prepared.suite
    if skill.index is not None:
        raise UsageError(f"{target}: a set of skills (SkillsBench environment/skills/) — ablate one skill's folder")
    suite_path = Path(suite.path).resolve()
    skill_dir = Path(skill.root).resolve()
    copy_root = _plugin_root(skill_dir, suite_path) if skill_dir not in suite_path.parents else skill_dir
    if copy_root is None:
        raise UsageError(f"{target}: ablate needs the suite inside the skill's folder ({skill_dir}), where "
                         f"each variant's copy takes it along; this suite is at {suite.path}")
    graders = [json.dumps(case.to_spec_dict()) for case in suite.cases]
    found = partition(skill, graders, level=level)
    if not found.parts:
        raise UsageError(f"{skill.skill_md}: nothing to ablate — no '{'#' * level} ' heading and no bundled "
                         "file outside the graders (try --heading-level)")
    return AblationPlan(Path(target), skill_dir, found, tuple(c.name for c in prepared.graded), copy_root)


def _plugin_root(skill_dir: Path, suite_path: Path) -> Path | None:
    """The plugin folder holding both the skill (``skills/<name>/``) and the suite (``evals/``),
    which a variant copies whole; None when there is none."""
    for folder in skill_dir.parents:
        if folder in suite_path.parents and plugin_name(folder) is not None:
            return folder
    return None


LOOKS = 4


def run_ablation(plan: AblationPlan, config: RunConfig, *, reporters: list, say: Emit,
                 stop_early: str | None = None, seed: int | None = None) -> AblationDocument:
    """The full run and each variant's, measured part by part."""
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    order = list(plan.cases)
    random.Random(seed).shuffle(order)
    looks = _looks(order) if stop_early == "curtail" else [order]
    stopped_at: list[int | None] = []
    with tempfile.TemporaryDirectory(prefix="skillab-ablate-") as scratch:
        root = Path(scratch)
        config = _shared_baselines(config, root)
        copy_root = plan.copy_root or plan.skill_dir
        relative = Path(plan.target).resolve().relative_to(copy_root)
        skill_rel = plan.skill_dir.relative_to(copy_root).as_posix()
        say(f"full skill: {len(plan.partition.parts)} parts to try after it")
        full = _one(Session(reporters), plan.target, config)
        spent = [full]
        contrasts: list[Contrast | None] = []
        calls: list[int] = []
        stopped = None
        variant_config = replace(config, judge=replace(config.judge, consistency=0.0))
        for index, part in enumerate(plan.ordered):
            cap = config.engine.max_cost_usd
            if stopped or (cap is not None and spent_usd(spent) >= cap):
                stopped = stopped or f"cost cap ${cap:g} reached after {index} of {len(plan.ordered)} parts"
                contrasts.append(None)
                calls.append(0)
                stopped_at.append(None)
                continue
            say(f"without {part.label} ({index + 1}/{len(plan.ordered)})")
            copy = write_variant(copy_root, part, root / f"variant-{index}", skill_rel)
            records: list = []
            ran, made = 0, 0
            found = contrast(full.records, records)
            for look in looks:
                budget = None if cap is None else max(1e-9, cap - spent_usd(spent))
                engine = replace(variant_config.engine, max_cost_usd=budget,
                                 case_names=tuple(look) if len(looks) > 1 else variant_config.engine.case_names)
                log = _one(Session(reporters), copy / relative, replace(variant_config, engine=engine))
                spent.append(log)
                made += _calls(log)
                records += log.records
                ran += len(look)
                found = contrast(full.records, records)
                if log.stopped:
                    stopped = f"cost cap reached during the variant without {part.label}"
                    break
                if ran < len(order) and not can_still_claim(found, len(order) - ran, config.engine.runs):
                    break
            contrasts.append(found)
            calls.append(made)
            stopped_at.append(ran if ran < len(order) else None)
    measured = classify(contrasts, target_lift_pts=config.engine.target_lift_pts)
    parts = tuple(
        PartResult(kind=p.kind, name=p.name, label=p.label, lines=p.lines, chars=p.chars,
                   tokens=-(-p.chars // CHARS_PER_TOKEN), calls=n, stopped_at=at,
                   **_stopped_note(m, at, len(order)))
        for p, m, n, at in zip(plan.ordered, measured, calls, stopped_at)
    )
    # Each case a variant did not run saves its with-skill arms (its baseline is cached anyway).
    saved = sum((len(order) - at) * config.engine.runs for at in stopped_at if at is not None)
    stats = full.summary.statistics
    return AblationDocument(
        skill=full.settings.suite.skill, suite=str(plan.target), heading_level=plan.partition.heading_level,
        full=FullLift(stats.lift_pts if stats else None, stats.summary if stats else None), parts=parts,
        grader_files=plan.partition.grader_files, cases=len({r.case_name for r in full.records}),
        runs=full.settings.runs,
        spend=AblationSpend(model_calls=sum(_calls(d) for d in spent),
                            cached_arms=sum(log.settings.cache_hits for log in spent), cost_usd=_cost(spent),
                            calls_saved=saved),
        stop_early=stop_early, order_seed=seed if stop_early else None, stopped=stopped,
        warnings=full.settings.warnings,
    )


def _looks(order: list[str]) -> list[list[str]]:
    """The cases in ``LOOKS`` groups of (nearly) equal size, in order."""
    size = max(1, -(-len(order) // LOOKS))
    return [order[i:i + size] for i in range(0, len(order), size)]


def _stopped_note(measured: dict, at: int | None, total: int) -> dict:
    if at is None:
        return measured
    note = (f"stopped at {at} of {total} cases: no result of the rest could make it load-bearing or "
            "harmful; its contribution is over the cases run")
    return {**measured, "note": note + (f"; {measured['note']}" if measured.get("note") else "")}


def _shared_baselines(config: RunConfig, scratch: Path) -> RunConfig:
    """Every variant's baseline from the cache the full run fills; no history entry per variant."""
    engine = config.engine
    if not engine.cache_enabled:
        engine = replace(engine, cache_enabled=True, cache_dir=scratch / "baselines")
    return replace(config, engine=replace(engine, history_path=None))


def _one(session: Session, target: Path, config: RunConfig) -> RunLog:
    result = session.run([SuiteRun(target, config)])
    if result.interrupted or not result.logs:
        raise KeyboardInterrupt
    return result.logs[0]


def _calls(log: RunLog) -> int:
    """Arms that ran an agent (not read from the cache): what the variant cost in agent runs."""
    arms = sum(2 + (record.original is not None) for record in log.records)
    return max(0, arms - log.settings.cache_hits)


def _cost(logs: list[RunLog]) -> float | None:
    costs = [log.summary.usage.total.cost_usd for log in logs]
    known = [c for c in costs if c is not None]
    return round(sum(known), 6) if known else None


__all__ = ["AblationPlan", "plan_ablation", "run_ablation"]
