"""Answer leaks: what a case grades by, found in SKILL.md or a file bundled with it. The
with-skill agent reads those files, so a copied answer scores the copy, not the skill's method."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..core.audit import AuditFinding, Severity
from ..suite.model import Case
from .answers import Answer, case_answers
from .text import TextFile, containment, ngrams, squeeze, words

# An expected value this long is looked for as a near copy (word 4-grams), shorter as a literal.
EXPECTED_MIN_WORDS = 8
EXPECTED_CONTAINMENT = 0.6
_PATH_LIKE = re.compile(r"^[\w.~/-]*(/[\w.-]+|\.[A-Za-z]\w{0,4})$")
_WORDISH = re.compile(r"[A-Za-z0-9]{3}")
# The text between two string literals of a script (``', encoding='``) is code, not a literal.
_CODE_SEAM = re.compile(r"^[,;=(){}\[\]]|[,=({\[]$")


def severity(text: str) -> Severity | None:
    """How much a found answer gives away, or None when it is too common to be one: a short
    token, a file path or a flag is shared by any skill and suite on the same subject."""
    flat = " ".join(text.split()).removeprefix("- ").removeprefix("* ")
    if len(flat) < 6 or flat.startswith("-") or _PATH_LIKE.match(flat) or not _WORDISH.search(flat) \
            or _CODE_SEAM.search(flat):
        return None
    if " " not in flat:
        # One word (a name, a key, a command) is what a skill teaches as often as an answer; a
        # token with a digit in it (an address, a version, an id) is a value.
        return "medium" if len(flat) >= 20 or re.search(r"\d", flat) else "low"
    return "high" if len(words(flat)) >= 3 or len(flat) >= 20 else "medium"


def answer_leaks(case: Case, files: list[TextFile], suite_file: str) -> Iterator[AuditFinding]:
    prompt = squeeze(case.prompt)
    seen: set[tuple[str, int | None]] = set()
    for answer in case_answers(case):
        hit = None if answer.negated else _found(answer, files, prompt)
        if hit is None:
            continue
        rel, line, shown, level = hit
        if (rel, line) in seen:
            continue
        seen.add((rel, line))
        what = {"literal": "the literal", "regex": "a match of the regex", "quote": "the quoted",
                "expected": "the expected value"}[answer.kind]
        yield AuditFinding(
            kind="answer_leak", severity=level, case=case.name, file=rel, line=line,
            detail=f"{what} {_short(shown)} that {answer.source} checks for is in the skill",
            fix=(f"none if {Path(rel).name} teaches this term; if it is the answer, state the rule without it"
                 if level == "low" else f"state the rule in {Path(rel).name} without the graded answer, or grade "
                 "on what the skill does not spell out"))


def _found(answer: Answer, files: list[TextFile], prompt: str) -> tuple[str, int, str, Severity] | None:
    if answer.kind == "regex":
        return _regex_hit(answer.text, files, prompt)
    if answer.kind == "expected":
        # A long statement is looked for as a near copy; a short one is a literal (or nothing).
        if len(words(answer.text)) >= EXPECTED_MIN_WORDS:
            return _expected_hit(answer.text, files)
        if len(words(answer.text)) < 3:
            return None
    level = severity(answer.text)
    if level is None or squeeze(answer.text) in prompt:
        return None  # what the prompt itself says is no leak: both arms are given it
    for file in files:
        line = file.find(answer.text)
        if line is not None:
            return file.rel, line, answer.text, level
    return None


def _regex_hit(pattern: str, files: list[TextFile], prompt: str) -> tuple[str, int, str, Severity] | None:
    try:
        compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    except re.error:
        return None
    # A pattern with no literal run of its own (\d+, .*) matches any text: not an answer.
    bare = re.sub(r"\\.", "", pattern)
    if compiled.fullmatch("") or not _WORDISH.search(bare) or len(re.findall(r"[A-Za-z0-9]", bare)) < 5:
        return None
    for file in files:
        for match in compiled.finditer(file.text):
            shown = match.group(0)
            level = severity(shown)
            if level is not None and squeeze(shown) not in prompt:
                return file.rel, file.line_of(match.start()), shown, level
    return None


def _expected_hit(expected: str, files: list[TextFile]) -> tuple[str, int, str, Severity] | None:
    grams = ngrams(words(expected), 4)
    for file in files:
        if containment(grams, ngrams(words(file.text), 4)) >= EXPECTED_CONTAINMENT:
            return file.rel, file.best_line(grams, 4), expected, "high"
    return None


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit - 1] + "…")
