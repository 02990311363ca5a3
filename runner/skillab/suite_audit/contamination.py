"""Contamination: case prompts that are near copies of the skill's own examples (the suite
tests recall of the skill, not its use), and prompts that name the skill or its method (the
without-skill arm is told about a skill it does not have, or handed the method in words)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..core.audit import AuditFinding, Severity
from ..skill.loader import Skill
from ..suite.model import Case
from .text import TextFile, containment, contains_run, content_ngrams, ngrams, words

# The prompt's word bigrams (those with a content word) found in one skill file: at this share
# the prompt is that file's example, reworded at most here and there. A prompt shorter than
# EXAMPLE_MIN_WORDS is called a copy only when all its words are there in a row.
EXAMPLE_CONTAINMENT = 0.7
EXAMPLE_MIN_WORDS = 6
VERBATIM_MIN_WORDS = 3
_H1 = re.compile(r"(?m)^#\s+(.+?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"`([A-Za-z][\w.-]{4,40})`")
_COINED = re.compile(r"[a-z][A-Z]|[A-Za-z][-_][A-Za-z]")


def example_contamination(case: Case, files: list[TextFile]) -> Iterator[AuditFinding]:
    tokens = words(case.prompt)
    if len(tokens) < VERBATIM_MIN_WORDS:
        return
    grams = content_ngrams(tokens, 2)
    scored = []
    for file in files:
        text = words(file.text)
        share = 1.0 if contains_run(tokens, text) else containment(grams, content_ngrams(text, 2))
        scored.append((share, file))
    share, file = max(scored, key=lambda pair: pair[0])
    if share < (EXAMPLE_CONTAINMENT if len(tokens) >= EXAMPLE_MIN_WORDS else 1.0):
        return
    line = file.best_line(ngrams(tokens, 2), 2)
    yield AuditFinding(
        kind="example_contamination", severity="high" if share >= 0.9 else "medium", case=case.name,
        file=file.rel, line=line,
        detail=(f"the prompt is in {file.rel} word for word (near line {line})" if share == 1.0 else
                f"{share:.0%} of the prompt's word pairs are in {file.rel} (its example near line {line})"),
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
    if re.search(rf"(?:^|\s)/{re.escape(term)}(?![\w-])", prompt, re.IGNORECASE):
        return True  # a slash command invoking the skill
    if coined:
        return re.search(word, prompt, re.IGNORECASE) is not None
    return re.search(rf"{word}\W+(?:\w+\W+)?skill\b|\bskills?\W+(?:\w+\W+)?{word}", prompt,
                     re.IGNORECASE) is not None


def _skill_terms(skill: Skill) -> list[tuple[str, Severity, str]]:
    """The skill's own names, most telling first: its name (and the name in words), its title,
    and the coined identifiers its instructions keep using (its method)."""
    terms: list[tuple[str, Severity, str]] = []
    # A set of skills given together: each member is named as a skill is.
    members = [rel.split("/")[0] for rel in skill.bundled if rel.count("/") == 1 and rel.endswith("/SKILL.md")]
    for name in (skill.name, *members) if skill.index is not None else (skill.name,):
        if len(name) >= 4:
            terms.append((name, "high", "the skill"))
            spaced = re.sub(r"[-_]+", " ", name)
            if spaced != name and " " in spaced:
                terms.append((spaced, "high", "the skill"))
    title = _H1.search(skill.body) if skill.index is None else None
    if title and len(words(title.group(1))) >= 2 and title.group(1).lower() not in {t.lower() for t, _, _ in terms}:
        terms.append((title.group(1).strip("`*_ "), "medium", "the skill's title"))
    spans = _CODE_SPAN.findall(skill.body)
    for span in sorted({s for s in spans if spans.count(s) >= 2 and _COINED.search(s) and "/" not in s
                        and not re.search(r"\.\w{1,5}$", s)}):
        if span.lower() != skill.name.lower():
            terms.append((span, "low", "the skill's method"))
    return terms
