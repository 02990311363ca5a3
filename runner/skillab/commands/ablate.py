"""``skillab ablate SKILL_DIR``: which sections and bundled files of a skill carry its lift."""

from __future__ import annotations

import argparse
import json
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from ..core.settings import RunConfig
from ..engine.prepare import Prepared
from ..errors import EXIT_OK, UsageError
from ..session.ablation import AblationPlan
from .console import say
from .report_files import check_destinations
from .run import preflight
from .settings import configs_from_args
from .targets import suite_targets


def cmd_ablate(args: argparse.Namespace) -> int:
    from ..reports.ablation import render_terminal, write_ablation_reports
    from ..session.ablation import plan_ablation, run_ablation

    configs = configs_from_args(args)
    if len(configs) > 1:
        raise UsageError("ablate takes one adapter; run it per agent")
    if args.stop_early == "group-sequential":
        raise UsageError("ablate stops each variant by curtailment (--stop-early curtail, the default) or "
                         "not at all (--stop-early none); group-sequential looks are for run")
    # The stop is the ablation's, per variant: the runs it makes each run their cases whole.
    config = replace(configs[0], engine=replace(configs[0].engine, stop_early=None))
    targets = suite_targets(args.paths, args.suite_format)
    if len(targets) != 1:
        raise UsageError(f"ablate takes one skill with its suite; {len(targets)} suites were found in "
                         f"{', '.join(map(str, args.paths))}")
    check_destinations(args)
    prepared = preflight(args, config, targets)[0]
    plan = plan_ablation(prepared, targets[0], level=args.heading_level)
    if args.dry_run:
        print(render_plan(plan, prepared, config))
        return EXIT_OK
    from ..scoring.ablation import too_small_to_label

    small = too_small_to_label(len(prepared.graded), len(plan.ordered))
    if small:
        say(f"warning: {small}")
    from ..reports.progress import open_progress

    display = open_progress(args.quiet)
    reporters = [display] if display is not None else []
    with display if display is not None else nullcontext():
        result = run_ablation(plan, config, reporters=reporters,
                                     say=(lambda _m: None) if args.quiet else say,
                                     stop_early=None if args.stop_early == "none" else args.stop_early,
                                     seed=args.stop_seed)
    document = result.to_json()
    Path(args.output).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_ablation_reports(result, markdown=args.markdown, html=args.html)
    if args.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print(render_terminal(result))
    say(f"wrote {args.output} (ablation document)")
    return EXIT_OK


def render_plan(plan: AblationPlan, prepared: Prepared, config: RunConfig) -> str:
    """The dry run: parts in the order tried, and the arms the ablation runs."""
    cases, runs = len(prepared.graded), config.engine.runs
    parts = plan.ordered
    lines = [f"ablate {prepared.skill.name}: {len(parts)} parts, tried largest first "
             f"(heading level {plan.partition.heading_level})"]
    for part in parts:
        lines.append(f"  {part.label:<48} {part.chars:>7,} chars")
    for rel in plan.partition.grader_files:
        lines.append(f"  {rel:<48} kept in every variant: a grader calls it")
    from ..scoring.ablation import too_small_to_label

    small = too_small_to_label(cases, len(parts))
    if small:
        lines.append(f"warning: {small}")
    with_arms = cases * runs * (1 + len(parts))
    lines.append(f"arms: {with_arms} with-skill ({cases} cases x {runs} runs x {1 + len(parts)} skills: "
                 f"the full skill and each variant) + {cases * runs} without-skill (run once, then from the "
                 "baseline cache)")
    from ..engine.plan import plan_suite

    full = plan_suite(prepared, config, None)
    variant_arms = cases * runs * len(parts)
    judge = full.judge_calls + full.judge_calls // max(full.arms_per_record, 1) * len(parts)
    lines.append(f"judge calls: {judge:,} ({full.judge_calls:,} for the full run, "
                 f"{full.judge_calls // max(full.arms_per_record, 1):,} per variant)")
    if full.cost_usd is None:
        lines.append(f"cost: n/a ({full.basis})")
    else:
        per_arm = full.cost_usd / max(full.arms_to_run, 1)
        total = full.cost_usd + per_arm * variant_arms
        lines.append(f"est. cost: ${total:.4f} (${full.cost_usd:.4f} for the full run, ${per_arm * cases * runs:.4f} "
                     f"per variant; {full.basis})")
    if config.engine.max_cost_usd is not None:
        lines.append(f"cap: stops starting variants once ${config.engine.max_cost_usd:g} is spent")
    return "\n".join(lines)


__all__ = ["cmd_ablate"]
