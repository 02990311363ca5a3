"""``skillab calibrate-judge``: the judge graded against the hand-labelled calibration set."""

from __future__ import annotations

import argparse
import json

from ..core.settings import AgentSettings, JudgeSettings, ModelRole, RunConfig
from ..errors import EXIT_OK


def cmd_calibrate_judge(args: argparse.Namespace) -> int:
    from ..agents.registry import create_judge
    from ..grading.calibration import DEFAULT_SET, calibrate, load_set, render

    items = load_set(args.calibration_set or DEFAULT_SET)
    config = RunConfig(
        agent=AgentSettings(adapter="mock" if not args.judge_model else "llm",
                            model=ModelRole(provider=args.provider, base_url=args.base_url)),
        judge=JudgeSettings(model=ModelRole(args.judge_model), same_family=True),
    )
    judge = create_judge(config)
    results = calibrate(judge, items)
    if args.json:
        print(json.dumps({"judge": judge.model, "arms": {k: v.to_dict() for k, v in results.items()}}, indent=2))
    else:
        print("\n".join(render(judge.model, results)))
    return EXIT_OK
