"""The Action's ``ablate`` input: each evaluated skill's parts measured, in the comment, with the
sections the pull request changed marked beside their measured contribution.

A section counts as changed when the base commit's SKILL.md has no section of that heading with
the same text (new or edited); the base is the original the Action compares with (``original``).
An ablation that cannot run (no sections, the suite outside the skill's folder) is a note, never
a failed check: the ablation informs the review, the lift gates it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.ablation import AblationDocument
from ..core.settings import RunConfig
from ..errors import SkillabError
from ..skill.loader import Skill
from ..skill.sections import section_texts


@dataclass
class ActionAblations:
    """What the ablations of one Action run produced: documents, and notes for the comment."""

    documents: list[AblationDocument] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def changed_sections(candidate: Skill, original: Skill | None) -> set[str]:
    """Labels of the candidate's sections that are new or edited against ``original``."""
    now = _sections(candidate)
    if original is None:
        return set(now)
    before = set(_sections(original).items())
    return {label for label, text in now.items() if (label, text) not in before}


def _sections(skill: Skill) -> dict[str, str]:
    return section_texts(skill.skill_md_bytes().decode("utf-8", errors="replace"))


def changed_in_pr(skill: Skill, ref: str | None) -> list[str]:
    """The sections a pull request changed against its base ``ref``: none without a base, every
    section when the skill did not exist there (or the base cannot be read)."""
    from ..engine.against import open_original

    if ref is None:
        return []
    try:
        with open_original(ref, skill.root) as base:
            return sorted(changed_sections(skill, base.skill))
    except SkillabError:
        return sorted(changed_sections(skill, None))


def ablate_locations(directories: list[Path], config: RunConfig, *, original_for: Callable[[Path], str | None],
                     reporters: list, say: Callable[[str], None]) -> ActionAblations:
    """Ablate each suite directory under ``config``; each result carries ``changed_in_pr``."""
    from ..engine.prepare import prepare_suite
    from ..session.ablation import plan_ablation, run_ablation

    found = ActionAblations()
    for directory in directories:
        try:
            prepared = prepare_suite(directory, config.engine)
            plan = plan_ablation(prepared, directory, level=2)
            result = run_ablation(plan, config, reporters=reporters, say=say, stop_early="curtail")
        except SkillabError as exc:
            found.notes.append(f"ablation of {directory.name} not run: {exc}")
            continue
        changed = tuple(changed_in_pr(prepared.skill, original_for(directory)))
        found.documents.append(replace(result, changed_in_pr=changed))
    return found


def ablation_markdown(documents: list[AblationDocument]) -> str:
    """Each ablation's markdown section, the PR's changed sections marked in the table."""
    from ..reports.ablation import render_markdown

    parts = []
    for doc in documents:
        changed = set(doc.changed_in_pr or ())
        marked = replace(doc, parts=tuple(
            replace(p, label=p.label + (" ✏️ changed in this PR" if p.label in changed else "")) for p in doc.parts))
        parts.append(render_markdown(marked))
    return "\n".join(parts)


def report_with_appendix(render: Callable[[int], str], appendix: str) -> str:
    """The report ``render`` makes for a budget of characters, then ``appendix`` (the ablation
    and routing sections), the whole within GitHub's comment limit: the appendix gets what the
    full report leaves, and at least half when that is too little (cut at a line, with a note);
    the report fits the rest."""
    from ..reports.markdown import DEFAULT_MAX_CHARS, cut_to_fit
    from ..reports.markdown_cases import size

    full = render(DEFAULT_MAX_CHARS)
    if not appendix:
        return full
    if size(full) + 1 + size(appendix) <= DEFAULT_MAX_CHARS:
        return full + "\n" + appendix
    room = max(DEFAULT_MAX_CHARS // 2, DEFAULT_MAX_CHARS - size(full) - 1)
    if size(appendix) > room:
        appendix = cut_to_fit(appendix, room, where="the ablation and routing results in the run's artifacts")
    return render(DEFAULT_MAX_CHARS - size(appendix) - 1) + "\n" + appendix


__all__ = ["ActionAblations", "ablate_locations", "ablation_markdown", "changed_in_pr", "changed_sections",
           "report_with_appendix"]
