"""The ``--mock-responses`` script: what the mock model answers, case by case and arm by arm.

The file is a YAML mapping of case name → ``{with:, without:, original:}``, each arm's answer a
string or ``{text: ..., files: {relpath: content}}`` (content a string, or YAML ``!!binary`` for a
binary file such as a spreadsheet); ``loads:`` / ``loads_original:`` script the
trigger trials (``true``, ``false`` or a list of skill names); ``routes:`` scripts routing (a
list of skill names in order of preference: the trial loads the first one it is offered, so one
script answers for every catalogue a query is posed against). ``by_skill:`` scripts an arm that
loads a skill by what that skill shows: a list of ``{contains:, lacks:, answer:}`` rules, the
first whose texts the loaded SKILL.md (or a bundled file's path) contains, and whose ``lacks``
texts it does not, answering for it (``skillab ablate`` needs answers that follow the skill's
content, not only the arm). Every problem is a ``SkillabError`` naming the file, the case and the
field. ``MockScript`` is a script read and checked: what ``--adapter mock`` answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import SkillabError
from .model import setup_path_problem

# The skill's own script, beside its suite: a mock run picks it up without --mock-responses.
MOCK_RESPONSES_FILE = "mock-responses.yaml"
ARM_KEYS: tuple[str, ...] = ("with", "without", "original", "placebo")
LOAD_KEYS: tuple[str, ...] = ("loads", "loads_original", "routes")
RULES_KEY = "by_skill"
_RULE_KEYS = frozenset({"contains", "lacks", "answer"})
# The script's key for each arm.
ARM_KEY = {"with_skill": "with", "without_skill": "without", "original": "original", "placebo": "placebo"}
_ANSWER_KEYS = frozenset({"text", "files"})


@dataclass(frozen=True)
class MockAnswer:
    """One scripted arm: the final answer, and files (workspace-relative path → content: text,
    or bytes from YAML ``!!binary``)."""

    text: str
    files: dict[str, str | bytes] = field(default_factory=dict)


MockResponses = dict[str, dict[str, MockAnswer]]


@dataclass(frozen=True)
class SkillRule:
    """A ``by_skill`` rule: the answer of an arm whose loaded skill shows every ``contains``
    text and no ``lacks`` text."""

    contains: tuple[str, ...]
    lacks: tuple[str, ...]
    answer: MockAnswer

    def matches(self, shown: str) -> bool:
        return all(t in shown for t in self.contains) and not any(t in shown for t in self.lacks)


MockRules = dict[str, tuple[SkillRule, ...]]


def load_mock_responses(path: Path) -> MockResponses:
    """Read and check a mock responses file; ``SkillabError`` names the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SkillabError(f"{path}: mock responses file cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SkillabError(f"{path}: mock responses file is not UTF-8 text") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # C when built: validate reads it
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise SkillabError(f"{where}: mock responses file is not valid YAML") from None
    responses = parse_mock_responses(data, source=str(path))
    parse_mock_loads(data, source=str(path))
    parse_mock_rules(data, source=str(path))
    return responses


def check_case_names(path: Path, case_names: set[str]) -> None:
    """Every key of the responses file names a case: a typo would silently fall back to the
    default answer and move the lift. ``UsageError`` lists each stray key with a suggestion."""
    import difflib

    from ..errors import UsageError

    stray = sorted(set(load_mock_responses(path)) - case_names)
    if not stray:
        return
    problems = []
    for key in stray:
        close = difflib.get_close_matches(key, sorted(case_names), n=1, cutoff=0.6)
        problems.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise UsageError(f"{path}: mock responses for no case of the suite: {', '.join(problems)}")


def scripted_names(suite: Any, skill: Any, triggers: Any = ()) -> set[str]:
    """What a script may name for ``suite``: its cases, and its trigger queries by name or by
    their text (``loads:``)."""
    from .trigger import suite_trigger_queries

    queries = [*triggers, *suite_trigger_queries(suite, skill.root, skill_name=skill.name)]
    return {c.name for c in suite.cases} | {q.name for q in queries} | {q.query for q in queries}


def parse_mock_responses(data: Any, *, source: str = "mock responses") -> MockResponses:
    """Check the loaded YAML shape (also accepts ready ``MockAnswer`` values)."""
    if data is None:
        raise SkillabError(f"{source}: empty — expected a mapping of case name to {{with:, without:}}")
    if not isinstance(data, dict):
        raise SkillabError(f"{source}: expected a mapping of case name to {{with:, without:}}")
    parsed: MockResponses = {}
    for case, arms in data.items():
        if not isinstance(case, str) or not case.strip():
            raise SkillabError(f"{source}: case name {case!r} must be a non-empty string")
        if not isinstance(arms, dict):
            raise SkillabError(f"{source}: case {case} — expected a mapping with keys {_keys(ARM_KEYS)}")
        unknown = [k for k in arms if k not in (*ARM_KEYS, *LOAD_KEYS, RULES_KEY)]
        if unknown:
            raise SkillabError(
                f"{source}: case {case} — unknown key {unknown[0]!r} "
                f"(allowed: {_keys((*ARM_KEYS, *LOAD_KEYS, RULES_KEY))})"
            )
        parsed[case] = {arm: _answer(value, source, case, arm) for arm, value in arms.items()
                        if arm in ARM_KEYS}
    return parsed


MockLoads = dict[str, dict[str, Any]]


def parse_mock_loads(data: Any, *, source: str = "mock responses") -> MockLoads:
    """The ``loads`` / ``loads_original`` entries of a checked script: case → key → bool or
    tuple of skill names."""
    found: MockLoads = {}
    for case, arms in (data or {}).items():
        for key in LOAD_KEYS:
            if not isinstance(arms, dict) or key not in arms:
                continue
            value = arms[key]
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                value = tuple(value)
            elif key == "routes":
                raise SkillabError(f"{source}: case {case} 'routes' — must be a list of skill names, "
                                   "in order of preference")
            elif not isinstance(value, bool):
                raise SkillabError(f"{source}: case {case} '{key}' — must be true, false or a list "
                                   "of skill names")
            found.setdefault(case, {})[key] = value
    return found


def parse_mock_rules(data: Any, *, source: str = "mock responses") -> MockRules:
    """The ``by_skill`` rules of a checked script: case → rules in order."""
    found: MockRules = {}
    for case, arms in (data or {}).items():
        if not isinstance(arms, dict) or RULES_KEY not in arms:
            continue
        rules = arms[RULES_KEY]
        if not isinstance(rules, list) or not rules:
            raise SkillabError(f"{source}: case {case} '{RULES_KEY}' — must be a non-empty list of "
                               "{contains:, lacks:, answer:} rules")
        parsed = []
        for n, rule in enumerate(rules):
            at = f"{source}: case {case} '{RULES_KEY}[{n}]'"
            if not isinstance(rule, dict):
                raise SkillabError(f"{at} — expected a mapping with keys {_keys(_RULE_KEYS)}")
            unknown = [k for k in rule if k not in _RULE_KEYS]
            if unknown:
                raise SkillabError(f"{at} — unknown key {unknown[0]!r} (allowed: {_keys(_RULE_KEYS)})")
            if "answer" not in rule:
                raise SkillabError(f"{at} — 'answer' is missing")
            contains, lacks = _texts(rule.get("contains"), at, "contains"), _texts(rule.get("lacks"), at, "lacks")
            if not contains and not lacks:
                raise SkillabError(f"{at} — give 'contains' or 'lacks' (a text or a list of texts)")
            parsed.append(SkillRule(contains, lacks, _answer(rule["answer"], source, case, f"{RULES_KEY}[{n}]")))
        found[case] = tuple(parsed)
    return found


def _texts(value: Any, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(t, str) and t for t in items):
        raise SkillabError(f"{where} '{key}' — must be a non-empty text or a list of them")
    return tuple(items)


def _answer(value: Any, source: str, case: str, arm: str) -> MockAnswer:
    where = f"{source}: case {case} '{arm}'"
    if isinstance(value, MockAnswer):
        return value
    if isinstance(value, str):
        return MockAnswer(value)
    if not isinstance(value, dict):
        raise SkillabError(f"{where} — expected a string or a mapping with 'text' and 'files'")
    unknown = [k for k in value if k not in _ANSWER_KEYS]
    if unknown:
        raise SkillabError(f"{where} — unknown key {unknown[0]!r} (allowed: {_keys(_ANSWER_KEYS)})")
    text = value.get("text")
    if not isinstance(text, str):
        raise SkillabError(f"{where} 'text' — must be a string")
    files = value.get("files") or {}
    if not isinstance(files, dict):
        raise SkillabError(f"{where} 'files' — must be a mapping of relative path to content")
    for rel, content in files.items():
        if not isinstance(rel, str) or not rel.strip():
            raise SkillabError(f"{where} 'files' — path {rel!r} must be a non-empty string")
        # Refused here already so a bad script stops the run before any arm; the workspace
        # write goes through safe_join as well, which also refuses escaping symbolic links.
        problem = setup_path_problem(rel)
        if problem:
            raise SkillabError(f"{where} 'files' — path {rel!r} {problem}; it must stay in the workspace")
        if not isinstance(content, (str, bytes)):
            raise SkillabError(f"{where} 'files' — content of {rel} must be a string (or YAML !!binary)")
    return MockAnswer(text, dict(files))


def _hashable(files: dict[str, str | bytes]) -> dict[str, Any]:
    return {rel: {"binary": c.hex()} if isinstance(c, bytes) else c for rel, c in files.items()}


def _keys(keys: Any) -> str:
    return ", ".join(sorted(keys))


def content_sha256(responses: MockResponses, loads: MockLoads | None = None,
                   rules: MockRules | None = None) -> str:
    """Identifies a script given as data rather than a file (the file's own bytes otherwise)."""
    canonical: dict[str, Any] = {
        case: {arm: {"text": a.text, "files": _hashable(a.files)} for arm, a in arms.items()}
        for case, arms in responses.items()
    }
    if rules:
        canonical["\0rules"] = {case: [[list(r.contains), list(r.lacks), r.answer.text, _hashable(r.answer.files)]
                                         for r in found] for case, found in rules.items()}
    if loads:
        canonical["\0loads"] = {case: {k: list(v) if isinstance(v, tuple) else v for k, v in keys.items()}
                                for case, keys in loads.items()}
    import hashlib  # on use: validate reads the script without hashing it

    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


class MockScript:
    """The mock adapter's answers: the script's, or a default one that restates the prompt, the
    same for every arm but for its label, so defaults never manufacture lift. The ``original``
    arm (``--against``) falls back to ``with``, the ``placebo`` arm (``--placebo``) to ``without``."""

    def __init__(self, script: dict | None = None, *, script_sha256: str | None = None):
        self._responses = parse_mock_responses(script or {}, source="mock responses")
        self._loads = parse_mock_loads(script or {})
        self._rules = parse_mock_rules(script or {})
        self.script_sha256 = script_sha256 or content_sha256(self._responses, self._loads, self._rules)

    @classmethod
    def from_file(cls, path: Path | None) -> MockScript:
        """The script in a responses file (checked, the file named in any error)."""
        if path is None:
            return cls()
        import hashlib

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
        # A placebo carries no content: unscripted, it answers as no skill does.
        if key == "placebo" and key not in scripted:
            key = "without"
        return scripted.get(key) or default_answer(case_name, prompt, arm)

    def loads_for(self, case_name: str, prompt: str, arm: str) -> bool | tuple[str, ...]:
        """What the script says a trigger trial loads: True (the skill under test), False, or
        skill names. Cases are found by name, then by the query's own text."""
        scripted = self._loads.get(case_name) or self._loads.get(prompt) or {}
        value = scripted.get("loads", False)
        if arm == "original":
            value = scripted.get("loads_original", value)
        return value

    def routes_for(self, case_name: str, prompt: str) -> tuple[str, ...] | None:
        """The skills a routing trial prefers, in order (``routes:``), or None when unscripted."""
        scripted = self._loads.get(case_name) or self._loads.get(prompt) or {}
        routes = scripted.get("routes")
        return routes if isinstance(routes, tuple) else None


def default_answer(case_name: str, prompt: str, arm: str) -> MockAnswer:
    """The unscripted answer: the same for every arm but its label, so it never makes lift."""
    return MockAnswer(
        f"[mock {arm} answer] No scripted response for case '{case_name}'. "
        f"The request was: {prompt.strip()}"
    )
