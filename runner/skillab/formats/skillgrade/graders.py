"""Grading a skillgrade task as skillgrade grades it: reward = Σ score × weight / Σ weight.

A deterministic grader runs its ``setup`` and ``run`` commands in the arm's workspace (under the
sandbox, like every validator) and reads the last JSON object its ``run`` prints: ``score`` in
[0, 1] (required), ``details``, ``checks``. A command that prints no such object, fails to start
or times out gives no verdict (the arm errors), never a score of 0. An ``llm_rubric`` grader is
the rubric judge's score in [0, 1].
"""

from __future__ import annotations

import dataclasses
import json

from ...core.checks import DimensionScore, GraderKind, GraderResult
from ...grading.graders import GradingInput, no_verdict, output_tail, stage_seed
from ...grading.judge import json_objects
from ...grading.rubric import grade_rubric
from ...suite.model import RubricGrader
from .specs import SkillgradeGrader, TaskGrader

KIND: GraderKind = "verifier"


def grade_task(spec: SkillgradeGrader, grading: GradingInput) -> GraderResult:
    label = f"skillgrade ({len(spec.graders)} graders, pass at {spec.threshold:g})"
    total = sum(g.weight for g in spec.graders)
    reward = 0.0
    dimensions: list[DimensionScore] = []
    if spec.grader_files is not None and any(g.type == "deterministic" for g in spec.graders):
        stage_seed(grading.workspace, spec.grader_files)
    for index, grader in enumerate(spec.graders):
        name = f"#{index + 1} {grader.type}"
        if grader.type == "deterministic":
            scored = _deterministic(grader, spec.timeout_s, grading)
        else:
            scored = grade_rubric(RubricGrader(grader.rubric, pass_threshold=0.0), grading)
        if scored.errored or scored.score is None:
            return dataclasses.replace(scored, kind=KIND, label=f"{label}: {name}", errored=True, passed=False)
        reward += scored.score * grader.weight
        dimensions.append(DimensionScore(f"{name} (weight {grader.weight:g})", 1, round(scored.score, 4),
                                         scored.reason[:500]))
    reward = reward / total if total else 0.0
    passed = reward >= spec.threshold
    reason = f"reward {reward:.2f} {'>=' if passed else '<'} {spec.threshold:g}"
    return GraderResult(KIND, label, passed, reason, score=round(reward, 4), max_score=1.0, dimensions=dimensions,
                        threshold=spec.threshold)


def _deterministic(grader: TaskGrader, timeout_s: float, grading: GradingInput) -> GraderResult:
    label = grader.run.strip().splitlines()[0][:80] if grader.run.strip() else "deterministic"
    command = f"{grader.setup}\n{grader.run}" if grader.setup.strip() else grader.run
    result = grading.workspace.run(command, timeout_s=timeout_s)
    tail = output_tail(result)
    if not result.completed:
        return no_verdict(KIND, label, f"the grader gave no verdict: {result.describe()}", tail)
    found = [o for o in json_objects(result.stdout) if isinstance(o, dict) and "score" in o]
    if not found:
        return no_verdict(KIND, label, "the grader printed no JSON object with a 'score'", tail)
    value = found[-1]
    score = value.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= float(score) <= 1:
        return no_verdict(KIND, label, f"the grader's score {json.dumps(score)[:40]} is not a number from 0 to 1",
                          tail)
    details = value.get("details") if isinstance(value.get("details"), str) else ""
    return GraderResult(KIND, label, float(score) >= 1.0, f"score {float(score):g}: {details}".strip(),
                        score=float(score), max_score=1.0, output=tail)
