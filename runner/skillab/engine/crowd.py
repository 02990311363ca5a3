"""Crowd mode's skills: the siblings offered beside the candidate in trigger trials
(``--siblings``), with their own should-trigger queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..skill.loader import Skill

if TYPE_CHECKING:
    from ..suite.trigger import TriggerQuery


@dataclass(frozen=True)
class Crowd:
    """The skills offered beside the candidate, their own should-trigger queries, and what was
    wrong with the ones left out."""

    siblings: tuple[Skill, ...] = ()
    queries: tuple[TriggerQuery, ...] = ()
    warnings: tuple[str, ...] = ()


def load_crowd(directory: Path, candidate: Skill) -> Crowd:
    """The skills in ``directory`` (each a subdirectory holding SKILL.md) but the candidate,
    found by path or by name. A sibling that does not load is left out with a warning, and one
    whose queries do not load is offered without them: they are not what is under test."""
    from ..errors import UsageError
    from ..skill.loader import SKILL_FILE

    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"--siblings {directory}: not a directory")
    return crowd_of(sorted(p for p in directory.iterdir() if (p / SKILL_FILE).is_file()), candidate)


def crowd_of(skill_dirs: Iterable[Path], candidate: Skill) -> Crowd:
    """The skills at ``skill_dirs`` but the candidate (see ``load_crowd``), with their queries."""
    from ..agents.skill_view import folder_name
    from ..errors import SkillabError
    from ..formats.trigger.siblings import sibling_queries
    from ..skill.loader import load_skill

    own = candidate.root.resolve()
    siblings: dict[str, Skill] = {}
    queries: list[TriggerQuery] = []
    warnings: list[str] = []
    for sub in skill_dirs:
        if sub.resolve() == own:
            continue
        try:
            sibling = load_skill(sub)
        except SkillabError as exc:
            warnings.append(f"sibling {sub.name} left out: {exc}")
            continue
        if sibling.name == candidate.name or sibling.name in siblings:
            warnings.append(f"sibling {sub.name} left out: another skill is named {sibling.name}")
            continue
        # Agents find each skill in a folder named after it: two names that make one folder
        # would overwrite each other, and reading one would count as loading both.
        clash = next((s.name for s in (candidate, *siblings.values())
                      if folder_name(s.name) == folder_name(sibling.name)), None)
        if clash is not None:
            warnings.append(f"sibling {sub.name} left out: its name {sibling.name!r} would be staged in "
                            f"the same folder as {clash!r}")
            continue
        siblings[sibling.name] = sibling
        try:
            queries += sibling_queries(sub, sibling.name)
        except SkillabError as exc:
            warnings.append(f"sibling {sibling.name}'s trigger queries left out: {exc}")
    return Crowd(tuple(siblings.values()), tuple(queries), tuple(warnings))
