"""The dimension judge's spec, as a ruby-skill-bench ``criteria.json`` defines it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Dimension:
    name: str
    max_score: int
    description: str | None = None


@dataclass(frozen=True)
class DimensionGrader:
    """The judge scores one arm's work per dimension, blind to the other arm.

    The arm passes when its total reaches ``pass_threshold``; ``minimum_delta`` is the
    with-minus-without total the format's own verdict also requires (reported, see docs/suite-formats.md).
    """

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = True
    reads_work: ClassVar[bool] = True

    context: str
    dimensions: tuple[Dimension, ...]
    pass_threshold: float = 70.0
    minimum_delta: float = 10.0

    @property
    def max_total(self) -> int:
        return sum(d.max_score for d in self.dimensions)
