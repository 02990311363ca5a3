"""Grading by format: each grader spec in ``Case.graders`` is graded by the function its
format registered for that spec type (``SuiteFormat.graders``)."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from ..core.checks import GraderResult
from ..core.wire import from_wire, to_wire
from ..grading.graders import OUTPUT_TAIL, GradingInput, SelfGrading
from ..secrets import redact
from ..suite.model import Case
from .base import Grader


def graders() -> dict[type, Grader]:
    """Every registered grader by spec type, in format order (the first format to name a type wins)."""
    from . import DEFAULT_REGISTRY

    found: dict[type, Grader] = {}
    for fmt in DEFAULT_REGISTRY.formats():
        for grader in fmt.graders:
            found.setdefault(grader.spec, grader)
    return found


def run_graders(case: Case, grading: GradingInput) -> list[GraderResult]:
    """Every format grader of ``case``, in order."""
    known = graders()
    results = []
    for spec in case.graders:
        grader = known.get(type(spec))
        if grader is not None:
            results.append(grader.grade(spec, grading))
        elif isinstance(spec, SelfGrading):
            # A plugin format's spec that grades itself.
            results.append(plugin_grade(spec, grading))
        else:
            raise TypeError(f"no suite format grades {type(spec).__name__}")
    return results


def plugin_grade(spec: SelfGrading, grading: GradingInput) -> GraderResult:
    """A plugin's grader is another package's code: what it raises or returns outside the
    contract is that arm's grading error, named, never a crash after the arms ran or a
    results document no command can read back."""
    name = type(spec).__name__
    try:
        result = spec.grade(grading)
    except Exception as exc:  # noqa: BLE001 - any failure of foreign code is the grader's error
        return _broken(name, f"raised {type(exc).__name__}: {exc}")
    if not isinstance(result, GraderResult):
        return _broken(name, f"returned {type(result).__name__}, not a GraderResult")
    try:
        # The document's own reader: what it refuses now, no command could read later.
        return from_wire(GraderResult, to_wire(result), "result")
    except (TypeError, ValueError) as exc:
        return _broken(name, f"returned a result outside the contract: {exc}", result.label)


def _broken(name: str, problem: str, label: str | None = None) -> GraderResult:
    return GraderResult("plugin", label if isinstance(label, str) else name, False,
                        redact(f"plugin grader {name} {problem}")[:OUTPUT_TAIL], errored=True)


def prompts_sha256() -> str:
    """Identifies the score judges' prompts, so cached baselines follow their edits."""
    prompts = [text for g in graders().values() if g.prompts is not None for text in g.prompts()]
    return hashlib.sha256("\0".join(prompts).encode()).hexdigest()


def grading_scope(case: Case) -> dict[str, Any]:
    """Everything about ``case``'s format-specific grading a cached baseline depends on."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"files", "sha256"}:
                return value["sha256"]  # seeds by content, not by where the checkout lies
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return {
        "graders": [
            {"kind": type(g).__name__, **plain(dataclasses.asdict(g))} for g in case.graders
        ],
        "seed": case.seed.sha256 if case.seed else None,
        "timeout_s": case.timeout_s,
        "unsupported": case.unsupported,
        "skill_files_in_every_arm": case.skill_files_in_every_arm,
        "score_prompts": prompts_sha256() if any(g.judged for g in case.graders) else None,
    }
