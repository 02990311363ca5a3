"""A skill whose only suite is a trigger set: no graded case, its queries read with the skill's
other trigger sets (``suite.trigger``)."""

from __future__ import annotations

from pathlib import Path

from ...suite.model import Suite
from ...suite.trigger import load_trigger_file


def load_trigger_suite(path: Path) -> Suite:
    """A suite with no graded case: the set is checked now and read again with the others."""
    load_trigger_file(path)
    skill_dir = path.parent.parent if path.parent.name == "evals" else path.parent
    return Suite(path, "trigger-evals", (), skill_dir)
