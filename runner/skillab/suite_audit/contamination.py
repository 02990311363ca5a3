"""Contamination: case prompts that are near copies of the skill's own examples (the suite
tests recall of the skill, not its use), and prompts that name the skill or its method (the
without-skill arm is told about a skill it does not have, or handed the method in words)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..core.audit import AuditFinding, Severity
from ..skill.loader import Skill
from ..suite.model import Case
from .text import TextFile, containment, ngrams, words

# Word 3-grams of the prompt found in one skill file: at this share the prompt is that file's
# example, reworded at most here and there.
EXAMPLE_CONTAINMENT = 0.6
EXAMPLE_MIN_WORDS = 6
_H1 = re.compile(r"(?m)^#\s+(.+?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"`([A-Za-z][\w.-]{4,40})`")
_COINED = re.compile(r"[a-z][A-Z]|[A-Za-z][-_][A-Za-z]")


def example_contamination(case: Case, files: list[TextFile]) -> Iterator[AuditFinding]:
    tokens = words(case.prompt)
    if len(tokens) < EXAMPLE_MIN_WORDS:
        return
    grams = ngrams(tokens, 3)
    best = max(((containment(grams, ngrams(words(f.text), 3)), f) for f in files), default=None,
               key=lambda pair: pair[0])
    if best is None or best[0] < EXAMPLE_CONTAINMENT:
        return
    share, file = best
    line = file.best_line(grams, 3)
    yield AuditFinding(
        kind="example_contamination", severity="high" if share >= 0.9 else "medium", case=case.name,
        file=file.rel, line=line,
        detail=f"{share:.0%} of the prompt's word 3-grams are in {file.rel} (its example near line {line})",
        fix="write the case on an input the skill does not show, or take the example out of the skill")


def prompt_contamination(case: Case, skill: Skill, suite_file: str) -> Iterator[AuditFinding]:
    for term, level, what in _skill_terms(skill):
        if _names(case.prompt, term, coined=bool(_COINED.search(term))):
            yield AuditFinding(
                kind="prompt_contamination", severity=level, case=case.name, file=suite_file, line=case.line,
                detail=f"the prompt both arms get names {what} ({term!r})",
                fix=f"ask for the outcome without naming {what}: the without-skill arm is told of a skill it "
                    "does not have")
            return


def _names(prompt: str, term: str, coined: bool) -> bool:
    """Whether ``prompt`` names ``term``: a coined name (``changelog-entry``) anywhere, a plain
    word or phrase (``changelog entry``) only where the prompt calls it a skill."""
    word = rf"(?<![\w-]){re.escape(term)}(?![\w-])"
    if coined:
        return re.search(word, prompt, re.IGNORECASE) is not None
    return re.search(rf"{word}\W+(?:\w+\W+)?skill\b|\bskills?\W+(?:\w+\W+)?{word}", prompt,
                     re.IGNORECASE) is not None


def _skill_terms(skill: Skill) -> list[tuple[str, Severity, str]]:
    """The skill's own names, most telling first: its name (and the name in words), its title,
    and the coined identifiers its instructions keep using (its method)."""
    terms: list[tuple[str, Severity, str]] = []
    if len(skill.name) >= 4:
        terms.append((skill.name, "high", "the skill"))
        spaced = re.sub(r"[-_]+", " ", skill.name)
        if spaced != skill.name and " " in spaced:
            terms.append((spaced, "high", "the skill"))
    title = _H1.search(skill.body)
    if title and len(words(title.group(1))) >= 2 and title.group(1).lower() not in {t.lower() for t, _, _ in terms}:
        terms.append((title.group(1).strip("`*_ "), "medium", "the skill's title"))
    spans = _CODE_SPAN.findall(skill.body)
    for span in sorted({s for s in spans if spans.count(s) >= 2 and _COINED.search(s) and "/" not in s
                        and not re.search(r"\.\w{1,5}$", s)}):
        if span.lower() != skill.name.lower():
            terms.append((span, "low", "the skill's method"))
    return terms
