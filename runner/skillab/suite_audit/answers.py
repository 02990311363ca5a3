"""What a case grades by, read off the suite model: the literals and regexes its validators and
graders look for, the quotes in its expectations and rubrics, and its expected values. Format
graders are walked by field name, so a new format's grader is read without a line here."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..suite.model import Case, SeedFiles
from .text import read_text

AnswerKind = Literal["literal", "regex", "quote", "expected"]


@dataclass(frozen=True)
class Answer:
    """One thing a grader checks for, and where in the case it comes from."""

    kind: AnswerKind
    text: str
    source: str
    # A check that the answer is absent (``! grep``, ``not_contains``, "does not say 'x'"): the
    # skill naming what to avoid gives nothing away.
    negated: bool = False


# A grader's field, by name, and what its strings are.
_REGEX_FIELDS = frozenset({"pattern", "input_match", "regex", "must_have", "must_not_have"})
_LITERAL_FIELDS = frozenset({"keywords", "contains", "value", "expected_value"})
_SHELL_FIELDS = frozenset({"run", "cmd", "command"})
_PROSE_FIELDS = frozenset({"rubric", "criteria", "description", "text", "context"})
_EXPECTED_FIELDS = frozenset({"reference", "expected", "expected_output"})
# Grader files (pytest tests, verifier scripts) whose string literals are read as answers.
_CODE_SUFFIXES = (".py", ".sh", ".js", ".ts", ".mjs", ".rb")

_SINGLE = re.compile(r"(?<![\w'])'([^'\n]{2,300})'(?![\w'])")
_DOUBLE = re.compile(r'"((?:[^"\\\n]|\\.){2,300})"')
_QUOTES = (_SINGLE, _DOUBLE, re.compile(r"`([^`\n]{2,300})`"), re.compile(r"“([^”\n]{2,300})”"))
_GREP = re.compile(r"(!\s*)?\b(?:grep|rg|egrep)\b[^|;&]*?(['\"])(.+?)\2")
_REGEX_SYNTAX = re.compile(r"\\[sbdwSBDW]|\(\?[:=!]|\[\^?[\w-]+\][*+?]|\.\*|\|\w")
_CODE_STRING = re.compile(r"(['\"])((?:(?!\1).){2,300})\1")
# A string the harness passes to itself, not one the answer holds: an encoding or file mode, a
# shell variable or substitution, the score a grader script prints.
_HARNESS_ARG = re.compile(r"(?:encoding|errors|mode|newline|sep)\s*=\s*$|open\(\s*$")
_HARNESS = re.compile(r"^\$|\$\(|\\?\"(?:score|details)\\?\"|^(?:score|details)$")
_WORDISH = re.compile(r"[A-Za-z0-9]{3}")
_NEGATION = re.compile(r"\b(?:not|no|never|without|avoid|avoids|instead of|nor|none)\b|n't\b", re.IGNORECASE)
_NEGATED_LABEL = re.compile(r"^(?:not[_ ]|no[_ ]|must_not|absent)", re.IGNORECASE)


def case_answers(case: Case) -> list[Answer]:
    found: list[Answer] = []
    for index, validator in enumerate(case.validators, 1):
        answers = shell_answers(validator.cmd, f"validator {index} ({validator.label[:40]!r})")
        if validator.expect_exit_code != 0 or _NEGATED_LABEL.match(validator.label):
            answers = [dataclasses.replace(a, negated=True) for a in answers]
        found += answers
    for index, expectation in enumerate(case.expectations, 1):
        found += prose_answers(expectation, f"expectation {index}")
        found.append(Answer("expected", expectation, f"expectation {index}"))
    for index, grader in enumerate(case.graders, 1):
        found += list(_walk(grader, f"grader {index}", None))
    return _unique([a for a in found if _WORDISH.search(a.text)])


def shell_answers(cmd: str, source: str) -> list[Answer]:
    """Quoted strings in a command: what ``grep`` looks for is a regex, the rest literals; a
    script given inline (``python3 -c CODE ARG...``) checks for its arguments and its code's own
    string literals, not for the harness around them (an encoding, a file mode)."""
    greps = {m.group(3): bool(m.group(1)) for m in _GREP.finditer(cmd)}
    found = [Answer("regex", text, source, negated) for text, negated in sorted(greps.items())]
    inline = _inline_script(cmd)
    if inline is not None:
        code, args = inline
        texts = args + [m.group(2) for m in _CODE_STRING.finditer(code) if not _HARNESS_ARG.search(code[:m.start()])]
    else:
        texts = [m.group(1).replace('\\"', '"') if pattern is _DOUBLE else m.group(1)
                 for pattern in (_SINGLE, _DOUBLE) for m in pattern.finditer(cmd)]
    for text in texts:
        if text in greps or _HARNESS.search(text):
            continue
        found.append(Answer("regex" if _REGEX_SYNTAX.search(text) else "literal", text, source))
    return found


def _inline_script(cmd: str) -> tuple[str, list[str]] | None:
    """``(code, arguments)`` of a ``python3 -c``/``node -e`` command, or None."""
    try:
        tokens = shlex.split(cmd)
    except ValueError:
        return None
    for at in range(1, len(tokens) - 1):
        if tokens[at] in ("-c", "-e") and re.match(r"(?:.*/)?(?:python3?|node|ruby|perl)$", tokens[at - 1]):
            args = []
            for token in tokens[at + 2:]:
                if token in ("&&", "||", ";", "|"):
                    break
                args.append(token)
            return tokens[at + 1], args
    return None


def prose_answers(text: str, source: str) -> list[Answer]:
    """The quoted spans of an expectation or rubric: the words a judge is told to look for."""
    return [Answer("quote", m.group(1), source, _negated_before(text, m.start()))
            for pattern in _QUOTES for m in pattern.finditer(text)]


def _negated_before(text: str, at: int) -> bool:
    """Whether the sentence holding the quote at ``at`` says it must not be there."""
    sentence = re.split(r"[.;:!?]\s", text[:at])[-1]
    return _NEGATION.search(sentence) is not None


def _walk(value: Any, source: str, name: str | None) -> Iterator[Answer]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, SeedFiles):
            if name in ("tests", "fixtures", "grader_files"):
                yield from _seed_answers(value, source)
            return
        label = getattr(value, "name", None)
        inner = f"{source} {label!r}" if isinstance(label, str) and label else source
        for spec in dataclasses.fields(value):
            yield from _walk(getattr(value, spec.name), inner, spec.name)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _walk(item, source, name)
    elif isinstance(value, str) and value.strip() and name is not None:
        yield from _field_answers(name, value, source)


def _field_answers(name: str, value: str, source: str) -> Iterator[Answer]:
    where = f"{source} {name}"
    if name in _REGEX_FIELDS:
        yield Answer("regex", value, where)
    elif name in _LITERAL_FIELDS:
        yield Answer("literal", value, where)
    elif name in _SHELL_FIELDS:
        yield from shell_answers(value, where)
    elif name in _EXPECTED_FIELDS or name in _PROSE_FIELDS:
        # A statement the judge grades by, copied into the skill, is as much an answer as a value.
        yield Answer("expected", value, where)
        yield from prose_answers(value, where)


def _seed_answers(files: SeedFiles, source: str) -> Iterator[Answer]:
    for path, rel in files.files:
        if not rel.endswith(_CODE_SUFFIXES):
            continue
        text = read_text(path)
        if text is not None:
            yield from shell_answers(text, f"{source} file {rel}")


def _unique(found: list[Answer]) -> list[Answer]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for answer in found:
        if (answer.kind, answer.text) not in seen:
            seen.add((answer.kind, answer.text))
            kept.append(answer)
    return kept
