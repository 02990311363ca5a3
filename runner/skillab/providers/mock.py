"""The mock model (``--provider mock``): a model client like the others, deterministic, keyless.

It judges an ``--adapter mock`` run (``providers.registry.client_for`` picks it when no judge
model is given), and serves any role it is chosen for:

- a grader's message (the expectation judge, the rubric, checklist and dimension judges) is
  answered with the mock judge's rule (below), read back by the message's fenced data blocks;
- any other message is answered by restating it, the same way every time, so a mock answer
  never manufactures lift.

The scripted answers of ``--adapter mock`` are the adapter's (``suite.mock_script``). No
network and no key; nothing is billed or sampled.

The mock judge is honest, deterministic, and reads only the text shown. ``reply`` answers the
real message a grader builds, read back by its data blocks, with the JSON text that grader
parses, so a mock run exercises the real prompt building and reply parsing:

- expectation (``Judge``): the EXPECTATION is graded against the FINAL_OUTPUT with the rule below;
- rubric: the criteria are the RUBRIC's bullet lines, else its non-empty lines; each is graded
  against the FINAL_OUTPUT; the score is the share met, to two decimals;
- checklist: each item (the CHECK block) is graded like an expectation, on the FINAL_OUTPUT and
  WORK blocks;
- dimensions: a dimension's criteria are the sentences of its description, else the TASK's
  bullet lines, else the whole task; each is graded against the FINAL_OUTPUT and WORK blocks;
  the score is max_score times the share met, rounded to a whole number.

The rule for one criterion, meant to be predictable by suite authors:

1. An empty final output fails.
2. Quoted terms — "double", 'single' or `backtick` quoted — are checked case-insensitively as
   substrings of the final output. Each must be present, unless a negation word (not, no, never,
   without, doesn't, don't, isn't) appears among the five words before it: then it must be
   absent. A term joined to the previous one only by "or", "and", "nor" or a comma keeps that
   term's polarity, so in "does not mention 'A' or 'B'" both must be absent. The expectation
   passes when every term holds.
3. With no quoted term, the expectation passes when at least 60% of its significant words
   (four letters or more, minus a short stopword list) occur in the final output.

A negative expectation without a quoted term cannot be graded faithfully by rule 3; quote the
term ("does not use 'DROP TABLE'"). The reason names the evidence: terms found, missing or
forbidden, or the share of words found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.messages import Message, ModelResponse, ToolSpec
from ..core.usage import Usage
from ..grading.judge import fenced_blocks
from .base import ModelProvider


class MockClient(ModelProvider):
    """See the module docstring."""

    provider = "mock"
    scripted = True

    def __init__(self, model: str = "mock-judge", **settings: Any) -> None:
        # The registry's common settings (key, endpoint, timeout, retries) mean nothing here.
        super().__init__(model)

    def create(
        self,
        messages: Sequence[Message],
        *,
        system: str,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        temperature: float | None = None,
        seed: str = "",
        json_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        user = next((m.text or "" for m in reversed(messages) if m.role == "user"), "")
        blocks = fenced_blocks(user)
        text = reply(blocks) if blocks else f"[mock answer] The request was: {user.strip()}"
        return ModelResponse(text=text, tool_calls=[], usage=Usage(), stop_reason="end_turn")



PASS_SHARE = 0.6
NEGATION_WINDOW = 5
NEGATIONS = frozenset({"not", "no", "never", "without", "doesn't", "don't", "isn't"})
_CHAINS = frozenset({"or", "and", "nor"})
STOPWORDS = frozenset(
    """
    about also agent answer answers before contain contains describes does each every explains
    from gives have includes into least lists mention mentions more must only other output reply
    response says shows should some states such than that their them then there these they this
    those uses very what when where which while with would your
    """.split()
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_QUOTED_RE = re.compile(r'"([^"\n]+)"|(?<!\w)\'([^\'\n]+)\'(?!\w)|`([^`\n]+)`')
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'_-]*")


def reply(blocks: dict[str, str]) -> str:
    """The mock judge's reply to a grader's message, given its data blocks by name."""
    if "FINAL_OUTPUT" in blocks:
        output = blocks["FINAL_OUTPUT"]
        work = f"{output}\n{blocks.get('WORK', '')}"
        if "EXPECTATION" in blocks:
            passed, reason = grade_text(blocks["EXPECTATION"], output)
            return json.dumps({"expectation": blocks["EXPECTATION"], "passed": passed, "reason": reason})
        if "RUBRIC" in blocks:
            return _rubric(blocks["RUBRIC"], output)
        if "DIMENSIONS" in blocks:
            return _dimensions(blocks["DIMENSIONS"], blocks.get("TASK", ""), work)
        if "CHECK" in blocks:
            passed, reason = grade_text(blocks["CHECK"], work)
            return json.dumps({"passed": passed, "reason": reason})
    # Not JSON on purpose: the grader then records the item as ungraded.
    return "mock judge: the message carries no EXPECTATION, RUBRIC, DIMENSIONS or CHECK block"


def grade_text(expectation: str, final_output: str) -> tuple[bool, str]:
    """The mock verdict and its reason for one expectation over one final output."""
    if not final_output.strip():
        return False, "The final output is empty."
    terms = quoted_terms(expectation)
    if terms:
        return _grade_terms(terms, final_output.lower())
    return _grade_words(expectation, final_output.lower())


def quoted_terms(expectation: str) -> list[tuple[str, bool]]:
    """Each quoted term of the expectation, with True when it must be absent."""
    terms: list[tuple[str, bool]] = []
    previous_end = 0
    for match in _QUOTED_RE.finditer(expectation):
        term = next(g for g in match.groups() if g is not None)
        gap = _words(expectation[previous_end : match.start()])
        if terms and all(w in _CHAINS for w in gap):
            negated = terms[-1][1]
        else:
            negated = any(w in NEGATIONS for w in gap[-NEGATION_WINDOW:])
        terms.append((term, negated))
        previous_end = match.end()
    return terms


def _grade_terms(terms: list[tuple[str, bool]], output: str) -> tuple[bool, str]:
    problems, evidence = [], []
    for term, negated in terms:
        present = term.lower() in output
        if negated and present:
            problems.append(f"'{term}' is present but must be absent")
        elif negated:
            evidence.append(f"'{term}' is absent as required")
        elif present:
            evidence.append(f"found '{term}'")
        else:
            problems.append(f"'{term}' is missing")
    if problems:
        return False, "In the final output: " + "; ".join(problems) + "."
    return True, "In the final output: " + "; ".join(evidence) + "."


def _grade_words(expectation: str, output: str) -> tuple[bool, str]:
    significant = sorted({w for w in _words(expectation) if len(w) >= 4 and w not in STOPWORDS})
    if not significant:
        return False, "The expectation has no quoted term and no significant word to look for."
    found = [w for w in significant if w in output]
    missing = [w for w in significant if w not in output]
    share = len(found) / len(significant)
    summary = f"{len(found)} of {len(significant)} significant words found"
    detail = f" (missing: {', '.join(missing)})" if missing else ""
    return share >= PASS_SHARE, f"{summary}{detail}; {PASS_SHARE:.0%} needed."


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("’", "'"))


def _bullets(text: str) -> list[str]:
    return [m["text"].strip() for m in map(_BULLET.match, text.splitlines()) if m]


def _share_met(criteria: list[str], output: str) -> tuple[float, list[str]]:
    """The share of ``criteria`` the output meets, and a note per criterion missed."""
    missed = []
    for criterion in criteria:
        passed, reason = grade_text(criterion, output)
        if not passed:
            missed.append(f"{criterion[:80]!r}: {reason}")
    return (len(criteria) - len(missed)) / len(criteria), missed


def _rubric(rubric: str, output: str) -> str:
    criteria = _bullets(rubric) or [line.strip() for line in rubric.splitlines() if line.strip()]
    if not criteria:
        return json.dumps({"score": 0.0, "reason": "The rubric states no criterion."})
    share, missed = _share_met(criteria, output)
    reason = f"{len(criteria) - len(missed)} of {len(criteria)} rubric criteria met"
    reason += f"; missed {'; '.join(missed)}" if missed else "."
    return json.dumps({"score": round(share, 2), "reason": reason})


def _dimensions(dimensions_json: str, task: str, work: str) -> str:
    try:
        dimensions = json.loads(dimensions_json)
    except ValueError:
        return "mock judge: the DIMENSIONS block is not JSON"
    task_criteria = _bullets(task) or ([task.strip()] if task.strip() else [])
    scored = []
    for dimension in dimensions:
        description = (dimension.get("description") or "").strip()
        criteria = [s for s in _SENTENCE_END.split(description) if s.strip()] or task_criteria
        if not criteria or not work.strip():
            scored.append({"name": dimension["name"], "score": 0, "reason": "Nothing to grade against."})
            continue
        share, missed = _share_met(criteria, work)
        reason = f"{len(criteria) - len(missed)} of {len(criteria)} criteria met"
        reason += f"; missed {missed[0]}" if missed else "."
        scored.append({"name": dimension["name"], "score": round(dimension["max_score"] * share), "reason": reason})
    return json.dumps({"dimensions": scored})

