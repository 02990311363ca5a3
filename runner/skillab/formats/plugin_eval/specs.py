"""The grader spec of a ``claude plugin eval`` case: its graders, scored as the CLI scores them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolRef:
    """A tool, and optionally a pattern its input (as JSON text) must match."""

    tool: str
    input_match: str | None = None


@dataclass(frozen=True)
class CaseGrader:
    """One grader of a case (``type`` is regex, tool_order, tool_used, file_exists, llm or
    baseline). ``indicator``: with-only (``arm: with-only``, or ``tool_used: Skill``) and not
    every grader of the case is: shown, never scored."""

    name: str
    type: str
    weight: float = 1.0
    indicator: bool = False
    # regex: what it reads (last_message, trace, files, mock_calls, or a file's path), the pattern,
    # its JavaScript flags and the match mode (contains, not_contains, count:N).
    target: str = "last_message"
    target_file: str | None = None
    pattern: str = ""
    flags: str = ""
    match: str = "contains"
    # tool_used, tool_order.
    tool: ToolRef | None = None
    minimum: int = 1
    maximum: int | None = None
    before: ToolRef | None = None
    after: ToolRef | None = None
    # file_exists.
    path: str = ""
    exists: bool = True
    # llm, baseline: the criteria, and (baseline) the reference answer the case ships.
    criteria: str = ""
    reference: str | None = None


@dataclass(frozen=True)
class PluginCaseGrader:
    """A case's graders; the arm's score is the weight of the scored graders that pass over
    their total weight, and the arm passes at ``threshold`` (the CLI's default 1.0: all of them)."""

    graders: tuple[CaseGrader, ...]
    threshold: float = 1.0
    reads_work = True

    @property
    def judged(self) -> bool:
        return any(g.type in ("llm", "baseline") for g in self.graders)

    @property
    def judge_calls(self) -> int:
        return sum(g.type in ("llm", "baseline") for g in self.graders)
