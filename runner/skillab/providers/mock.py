"""The mock model: one deterministic model for every role of an ``--adapter mock`` run.

- the agent's answer and which skills a trigger trial loads, from the ``--mock-responses``
  script (``mock_script``); a case or arm the script does not name gets a default answer that
  restates the prompt, the same for every arm but for its label, so defaults never manufacture
  lift. The ``original`` arm (``--against``) falls back to ``with``;
- the expectation judge, the rubric, checklist and dimension judges: ``complete`` answers the
  real message each grader builds with the mock judge's rule (``grading.mock_judge``).

No network and no key; nothing is billed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from ..core.usage import Usage
from ..grading.judge import fenced_blocks
from ..grading.mock_judge import reply
from ..suite.mock_script import (
    ARM_KEY,
    MockAnswer,
    content_sha256,
    load_mock_responses,
    parse_mock_loads,
    parse_mock_responses,
    parse_mock_rules,
)


class MockModel:
    """The scripted model; see the module docstring."""

    # The name a judge reports: results record it as the judge's model.
    model = "mock-judge"
    # Scripted answers bill nothing: no usage to count against the cost cap.
    usage: Usage | None = None

    def __init__(self, script: dict | None = None, *, script_sha256: str | None = None):
        self._responses = parse_mock_responses(script or {}, source="mock responses")
        self._loads = parse_mock_loads(script or {})
        self._rules = parse_mock_rules(script or {})
        self.script_sha256 = script_sha256 or content_sha256(self._responses, self._loads, self._rules)

    @classmethod
    def from_file(cls, path: Path | None) -> MockModel:
        """The model scripted by a responses file (checked, the file named in any error)."""
        if path is None:
            return cls()
        path = Path(path)
        load_mock_responses(path)
        return cls(yaml.safe_load(path.read_text(encoding="utf-8")),
                   script_sha256=hashlib.sha256(path.read_bytes()).hexdigest())

    def scripts_original(self, case_name: str | None = None) -> bool:
        """Whether the script answers the ``original`` arm itself (``--against``): for
        ``case_name``, or for any case."""
        if case_name is not None:
            return "original" in self._responses.get(case_name, {})
        return any("original" in arms for arms in self._responses.values())

    def scripts_by_skill(self, case_name: str) -> bool:
        """Whether the case's answer depends on the loaded skill's content (``by_skill`` rules)."""
        return case_name in self._rules

    def answer_for(self, case_name: str, prompt: str, arm: str, shown: str | None = None) -> MockAnswer:
        """The scripted answer for this arm, or the default one. ``shown`` is what the arm's
        loaded skill shows (SKILL.md and its files' paths); a ``by_skill`` rule it matches wins."""
        if shown is not None:
            rule = next((r for r in self._rules.get(case_name, ()) if r.matches(shown)), None)
            if rule is not None:
                return rule.answer
        scripted = self._responses.get(case_name, {})
        key = ARM_KEY[arm]
        if key == "original" and key not in scripted:
            key = "with"
        return scripted.get(key) or default_answer(case_name, prompt, arm)

    def loads_for(self, case_name: str, prompt: str, arm: str) -> bool | tuple[str, ...]:
        """What the script says a trigger trial loads: True (the skill under test), False, or
        skill names. Cases are found by name, then by the query's own text."""
        scripted = self._loads.get(case_name) or self._loads.get(prompt) or {}
        value = scripted.get("loads", False)
        if arm == "original":
            value = scripted.get("loads_original", value)
        return value

    def complete(self, *, system: str, user: str) -> str:
        """A judge's reply (the ``JudgeTransport`` call), by the blocks the message carries."""
        return reply(fenced_blocks(user))


def default_answer(case_name: str, prompt: str, arm: str) -> MockAnswer:
    """The unscripted answer: the same for every arm but its label, so it never makes lift."""
    return MockAnswer(
        f"[mock {arm} answer] No scripted response for case '{case_name}'. "
        f"The request was: {prompt.strip()}"
    )
