"""One evals.json grader entry (an assertion, a check, a scorer) as what skillab runs: a
statement the checklist judge reads, or a validator on the final output or the workspace.

Deterministic kinds read the final output the validators stage as ``response.txt``; the
operands travel as argv, never spliced into the command.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from ...suite.loading import IssueList
from ...suite.model import ValidatorSpec
from ...yaml_source import YamlPath

# Where a judged entry keeps its statement (``criterion``: scorers of type llm_judge).
STATEMENT_KEYS = ("text", "description", "assertion", "expectation", "criterion", "criteria", "rubric", "check")
CHECK_TYPES = ("contains", "not_contains", "regex", "not_regex", "equals", "file_exists",
               "file_not_exists", "file_contains", "command", "script")
# ``kind: script`` assertions written for a runner that grades in a run folder holding the
# agent's workspace as ``sandbox/`` and its final message as ``output.md`` (the tfx eval runner):
# the same view, made around the workspace for that one command.
RUN_DIR = ('run=$(mktemp -d) && ln -s "$PWD" "$run/sandbox" && cp response.txt "$run/output.md" '
           '&& cd "$run" && ')
JUDGED_TYPES = ("llm", "llm_judge", "judge", "rubric", "llm-rubric", "model", "semantic")
_PY_CHECK = {
    "contains": "sys.exit(0 if a[0] in t else 1)",
    "not_contains": "sys.exit(1 if a[0] in t else 0)",
    "regex": "sys.exit(0 if re.search(a[0], t, re.M) else 1)",
    "not_regex": "sys.exit(1 if re.search(a[0], t, re.M) else 0)",
    "equals": "sys.exit(0 if t.strip() == a[0].strip() else 1)",
    # must_have / must_not_have: keyword patterns, matched regardless of case.
    "regex_i": "sys.exit(0 if re.search(a[0], t, re.M | re.I) else 1)",
    "not_regex_i": "sys.exit(1 if re.search(a[0], t, re.M | re.I) else 0)",
}


# Keys a judged entry may carry besides its statement: its identity and weight.
JUDGED_META_KEYS = ("id", "name", "type", "kind", "weight", "required", "severity", "category", "passed", "evidence")


def assertion(raw: Any, at: YamlPath, case: str, issues: IssueList, statements: list[str],
              validators: list[ValidatorSpec], warnings: list[str] | None = None) -> None:
    """Add one entry: a string or ``{text}`` is a statement; ``{type|kind, ...}`` a check."""
    field = entry_field(at)
    if isinstance(raw, str) and raw.strip():
        statements.append(raw.strip())
        return
    if not isinstance(raw, dict):
        issues.add("must be a statement (a string) or an object {text} / {type, value}", at, field=field, case=case)
        return
    kind = raw.get("type", raw.get("kind"))
    text = next((raw[k] for k in STATEMENT_KEYS if isinstance(raw.get(k), str) and raw[k].strip()), None)
    if isinstance(kind, str) and kind.lower() == "string_match":
        # skill-creator's typed assertions: with a literal it is a substring check; without one
        # its text says in words what to look for, which only the judge can read.
        if any(isinstance(raw.get(k), str) and raw[k] for k in ("value", "pattern")):
            kind = "contains"
        else:
            kind = None
    if kind is None or (isinstance(kind, str) and kind.lower() in JUDGED_TYPES):
        if text is None:
            issues.add("needs 'text' (or 'criterion'): the statement the judge checks", at, field=field, case=case)
        else:
            statements.append(_whole_statement(raw, text, at, case, issues, warnings))
        return
    if not isinstance(kind, str) or kind.lower() not in CHECK_TYPES:
        issues.add(f"type {kind!r} is not one skillab can check — use one of {', '.join(CHECK_TYPES)}, or a "
                   "statement for the judge", (*at, "type"), field=f"{field}.type", case=case)
        return
    spec = check(kind.lower(), raw, at, case, issues)
    if spec is not None:
        validators.append(spec)


def _whole_statement(raw: dict, text: str, at: YamlPath, case: str, issues: IssueList,
                     warnings: list[str] | None) -> str:
    """The judged statement with every other statement key of the entry (``check``, ``criteria``)
    joined to it: the judge reads what the author wrote, none of it dropped. Keys that are no
    statement and no metadata are named in a warning."""
    used = next(k for k in STATEMENT_KEYS if raw.get(k) is text)
    extra = [f"{k}: {raw[k].strip()}" for k in STATEMENT_KEYS
             if k != used and isinstance(raw.get(k), str) and raw[k].strip()]
    unread = [k for k in raw if k not in STATEMENT_KEYS and k not in JUDGED_META_KEYS]
    if unread and warnings is not None:
        line = issues.doc.line_at(at) if issues.doc else None
        warnings.append(f"{issues.path}:{line}: eval {case} {entry_field(at)} has "
                        f"{', '.join(map(repr, unread))}, which the judge is not shown")
    return "; ".join([text.strip(), *extra])


def check(kind: str, raw: dict, at: YamlPath, case: str, issues: IssueList) -> ValidatorSpec | None:
    """The validator for a deterministic entry of type ``kind``."""
    field = entry_field(at)
    label = next((raw[k] for k in ("name", "id", "text") if isinstance(raw.get(k), str) and raw[k].strip()), None)
    if kind in ("command", "script"):
        command = raw.get("command", raw.get("cmd", raw.get("script", raw.get("value"))))
        if not isinstance(command, str) or not command.strip():
            issues.add("needs 'command': a shell command that exits 0 when the assertion holds", at,
                       field=f"{field}.command", case=case)
            return None
        if kind == "script" and uses_run_dir(command):
            command = RUN_DIR + "{ " + command + "\n}"
        return ValidatorSpec(cmd=command, label=label or command[:80])
    if kind.startswith("file_"):
        target = raw.get("path", raw.get("file"))
        if not isinstance(target, str) or not relative_path(target):
            issues.add("needs 'path': a file path relative to the workspace", at, field=f"{field}.path", case=case)
            return None
        if kind == "file_exists":
            return ValidatorSpec(cmd=f"test -e {shlex.quote(target)}", label=label or f"file {target} exists")
        if kind == "file_not_exists":
            return ValidatorSpec(cmd=f"test ! -e {shlex.quote(target)}", label=label or f"no file {target}")
    operand = raw.get("value", raw.get("pattern", raw.get("text")))
    if not isinstance(operand, str) or not operand:
        issues.add("needs 'value': the text (or pattern) to check", at, field=f"{field}.value", case=case)
        return None
    if kind in ("regex", "not_regex"):
        try:
            re.compile(operand)
        except re.error as exc:
            issues.add(f"is not a valid regular expression ({exc})", (*at, "value"), field=f"{field}.value", case=case)
            return None
    if kind == "file_contains":
        assert isinstance(target, str)  # a file_ kind: checked above
        script = "import sys; a = sys.argv[1:]; t = open(a[1], encoding='utf-8', errors='replace').read(); " \
                 "sys.exit(0 if a[0] in t else 1)"
        cmd = f"test -f {shlex.quote(target)} && python3 -c {shlex.quote(script)} {shlex.quote(operand)} " \
              f"{shlex.quote(target)}"
        return ValidatorSpec(cmd=cmd, label=label or f"{target} contains {operand[:40]!r}")
    script = ("import re, sys; a = sys.argv[1:]; t = open('response.txt', encoding='utf-8', "
              f"errors='replace').read(); {_PY_CHECK[kind]}")
    return ValidatorSpec(cmd=f"python3 -c {shlex.quote(script)} {shlex.quote(operand)}",
                         label=label or f"{kind} {operand[:60]!r}")


def entry_field(at: YamlPath) -> str:
    """``evals[0].assertions[2]`` for the entry at ``at``."""
    return f"evals[{at[1]}]" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in at[2:])


def keyword_check(pattern: str, present: bool, label: str) -> ValidatorSpec:
    """A must_have (``present``) or must_not_have keyword: a pattern matched regardless of case,
    or its literal text when it is not a valid regular expression."""
    try:
        re.compile(pattern)
    except re.error:
        pattern = re.escape(pattern)
    kind = "regex_i" if present else "not_regex_i"
    script = ("import re, sys; a = sys.argv[1:]; t = open('response.txt', encoding='utf-8', "
              f"errors='replace').read(); {_PY_CHECK[kind]}")
    return ValidatorSpec(cmd=f"python3 -c {shlex.quote(script)} {shlex.quote(pattern)}", label=label)


def relative_path(rel: str) -> bool:
    """Whether ``rel`` is a path that stays below the directory it is relative to."""
    parts = Path(rel).parts
    return bool(rel.strip()) and not os.path.isabs(rel) and ".." not in parts


def uses_run_dir(script: str) -> bool:
    """Whether a script reads the run folder's ``sandbox/`` or ``output.md``."""
    return re.search(r"(^|[\s'\"=(])(sandbox(/|\s|$)|output\.md\b)", script) is not None
