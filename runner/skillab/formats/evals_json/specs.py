"""The checklist judge's spec (evals.json expectations, Tessl weighted checklists)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class ChecklistItem:
    name: str
    description: str
    weight: float = 1.0


@dataclass(frozen=True)
class ChecklistGrader:
    """The judge checks each item on its own (pass/fail); the arm passes when the weights of
    the items that hold reach ``pass_threshold``. ``reference`` (an expected output, in words)
    is shown to the judge beside each item; ``context`` says what the checklist is for."""

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = True
    reads_work: ClassVar[bool] = True

    items: tuple[ChecklistItem, ...]
    pass_threshold: float
    reference: str | None = None
    context: str = ""

    @property
    def judge_calls(self) -> int:
        """One judge call per item (``checklist.grade_checklist``), for the cost plan."""
        return len(self.items)

    @property
    def total(self) -> float:
        return sum(item.weight for item in self.items)
