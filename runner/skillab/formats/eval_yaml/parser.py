"""The native suite format: ``eval.yaml`` (skillevaluation schema rev 2).

Parsing is strict and reports every problem at once. Structure is checked by the JSON Schema
shipped beside this module; the rules a schema cannot state are checked here. Each issue names
the file, the line, the case and the field, in skillab's own words.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.held_out import HELD_OUT_TAG
from ...errors import SuiteError, SuiteIssue
from ...suite.model import Case, Setup, Suite, ValidatorSpec, setup_path_problem
from ...suite.schema_check import is_valid
from ...yaml_source import (
    SUITE_MAX_BYTES,
    YamlDocument,
    YamlPath,
    parse_yaml,
    read_suite_text,
)

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

FORMAT_NAME = "eval.yaml"
SCHEMA_RESOURCE = "schemas/eval-yaml.schema.json"

_ONE_CONTRACT = (
    "there is one execution contract now: the agent runs once per case in the workspace "
    "that 'setup' prepares and may take many tool steps"
)
# Rev-1 keys get a migration message instead of the generic unknown-key one.
REMOVED_REV1_KEYS: dict[str, str] = {
    "mode": "delete the key; seed the world with 'setup' and grade with 'validators'",
    "user_goal": "put the user's goal in the 'prompt'",
    "environment": "write the environment as 'setup' files and commands",
    "simulator": "re-author the case as a seeded transcript: the conversation so far "
    "goes in the 'prompt', and the case asks for the agent's next reply",
    "policy_check": "grade the policy with 'expectations' or 'validators' on a "
    "seeded-transcript case",
    "trials": "delete the key and repeat the whole run with --runs N (MEAN-aggregated)",
}


def load_eval_yaml(path: Path) -> Suite:
    """Read and parse an ``eval.yaml`` file (the registry's loader for this format)."""
    return parse_eval_yaml(read_suite_text(path), path)


def parse_eval_yaml(text: str, path: Path) -> Suite:
    """Parse ``eval.yaml`` text read from ``path``; raise ``SuiteError`` with every issue."""
    if len(text) > SUITE_MAX_BYTES:
        raise SuiteError([SuiteIssue(path, f"is larger than {SUITE_MAX_BYTES} bytes")])
    doc = parse_yaml(text, path)
    where = _Where(doc, path)
    issues = [
        *_duplicate_key_issues(doc, where),
        *(i for error in _schema_errors(doc.value) for i in _translate(error, where)),
        *_semantic_issues(doc.value, where),
    ]
    if issues:
        unique = list(dict.fromkeys(issues))
        raise SuiteError(sorted(unique, key=lambda issue: issue.line or 0))
    cases = tuple(
        _case(raw, doc.lines[("cases", index)]) for index, raw in enumerate(doc.value["cases"])
    )
    return Suite(path=path, format=FORMAT_NAME, cases=cases, skill_dir=path.parent)


# --- locating issues -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """Turns a path inside the document into a located ``SuiteIssue``."""

    doc: YamlDocument
    path: Path

    def issue(
        self, message: str, at: YamlPath, *, line: int | None = None, field: str | None = None
    ) -> SuiteIssue:
        return SuiteIssue(
            self.path,
            message,
            line=line or self.doc.line_at(at),
            case=self.case_label(at),
            field=field or _field(at),
        )

    def case_label(self, at: YamlPath) -> str | None:
        """The case by its name when it has a usable one, else by ``#index``."""
        if len(at) < 2 or at[0] != "cases" or not isinstance(at[1], int):
            return None
        raw = self.doc.value["cases"][at[1]]
        name = raw.get("name") if isinstance(raw, dict) else None
        if isinstance(name, str) and name.strip():
            return name.strip()
        return f"#{at[1]}"


def _in_case(at: YamlPath) -> bool:
    return len(at) >= 2 and at[0] == "cases" and isinstance(at[1], int)


def _field(at: YamlPath) -> str | None:
    """``validators[0].expect_exit_code`` within a case; the key itself at the top level."""
    rest = at[2:] if _in_case(at) else at
    text = ""
    for part in rest:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text or None


def _subject(at: YamlPath) -> str:
    """How a message names the value at ``at``: validators by number, as the spec does."""
    if not at:
        return "the top level"
    if not _in_case(at):
        return f"'{_field(at)}'"
    rest = at[2:]
    if not rest:
        return "the case"
    if rest[0] == "validators" and len(rest) >= 2 and isinstance(rest[1], int):
        inner = _field(("cases", 0, *rest[2:]))
        return f"validator #{rest[1]}" + (f" '{inner}'" if inner else "")
    return f"'{_field(at)}'"


def _describe(value: Any) -> str:
    """What a value is, in YAML words, for "must be X, got Y"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        if not value.strip():
            return "a blank string"
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, date):
        return f"a date ({value})"
    if isinstance(value, bytes):
        return "binary data"
    return type(value).__name__


# --- structure: the JSON Schema --------------------------------------------------------------


def _strict_integer(_checker: Any, value: Any) -> bool:
    # YAML `true` and `2.0` are not integers for exit codes and turn caps.
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def schema() -> dict[str, Any]:
    """skillab's JSON Schema for ``eval.yaml`` (Draft 2020-12), shipped in the package."""
    # Beside this module in every install; importlib.resources would load zipfile for nothing.
    text = (Path(__file__).parent / SCHEMA_RESOURCE).read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> Any:
    import jsonschema
    from jsonschema import Draft202012Validator

    types = Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer)
    strict = jsonschema.validators.extend(Draft202012Validator, type_checker=types)
    return strict(schema())


def _schema_errors(value: Any) -> Iterator[ValidationError]:
    # A valid suite (the common case) is confirmed without importing jsonschema; see schema_check.
    if is_valid(value, schema()):
        return iter(())
    return _validator().iter_errors(value)


def _translate(error: ValidationError, where: _Where) -> list[SuiteIssue]:
    """One jsonschema error in skillab's words (one issue per offending key)."""
    at = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    expected = schema.get("x-expected", "valid") if isinstance(error.schema, dict) else ""
    # The offending JSON value: jsonschema sets it on every error it yields.
    instance: Any = error.instance
    subject = _subject(at)
    keyword = error.validator
    if keyword == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        extras = [k for k in instance if k not in allowed]
        return [where.issue(_unknown_key(at, k, allowed), (*at, k)) for k in extras]
    if keyword == "required":
        properties = schema.get("properties", {})
        return [
            where.issue(
                f"{subject} is missing '{k}' "
                f"({properties.get(k, {}).get('x-expected', 'required')})",
                at,
                field=_field((*at, k)),
            )
            for k in schema.get("required", [])  # the keyword's value
            if k not in instance
        ]
    if keyword == "minItems":
        return [where.issue(f"{subject} is empty — it must be {expected}", at)]
    if "propertyNames" in error.absolute_schema_path:
        # The error is about a key, reported at its parent mapping: point at the key's line.
        return [
            where.issue(
                f"{subject} has a key that is not {expected}: {error.instance!r}",
                (*at, error.instance),
                field=_field(at),
            )
        ]
    hint = _colon_in_text(error.instance) if error.validator == "type" and "string" in str(error.validator_value) else ""
    return [where.issue(f"{subject} must be {expected}, got {_describe(error.instance)}{hint}", at)]


def _colon_in_text(value: Any) -> str:
    """A one-key mapping where text was wanted: ``- The answer says: hello`` parses as
    ``{"The answer says": "hello"}`` because of the unquoted ': '."""
    if not (isinstance(value, dict) and len(value) == 1):
        return ""
    (key, inner), = value.items()
    if not isinstance(key, str) or not isinstance(inner, (str, type(None))):
        return ""
    text = f"{key}: {inner or ''}".strip()
    return (" — an unquoted ': ' inside the text made it a mapping; quote the whole text: "
            + "'" + text.replace("'", "''") + "'")


def _unknown_key(at: YamlPath, key: Hashable, allowed: list[str]) -> str:
    if not at:
        return f"unknown top-level key {key!r} — only 'cases' is allowed"
    if _in_case(at) and len(at) == 2 and key in REMOVED_REV1_KEYS:
        return f"'{key}' was removed in schema rev 2 — {_ONE_CONTRACT}; {REMOVED_REV1_KEYS[key]}"
    import difflib

    close = difflib.get_close_matches(str(key), allowed, n=1)
    hint = f"did you mean '{close[0]}'?" if close else "allowed: " + ", ".join(allowed)
    return f"{_subject(at)} has unknown key {key!r} — {hint}"


# --- rules a schema cannot state -------------------------------------------------------------


def _duplicate_key_issues(doc: YamlDocument, where: _Where) -> list[SuiteIssue]:
    return [
        where.issue(
            f"duplicate key {dup.key!r} (first on line {dup.first_line}) — YAML keeps only "
            "one of them; remove or rename the other",
            (*dup.path, dup.key),
            line=dup.line,
        )
        for dup in doc.duplicates
    ]


def _semantic_issues(value: Any, where: _Where) -> list[SuiteIssue]:
    cases = value.get("cases") if isinstance(value, dict) else None
    if not isinstance(cases, list):
        return []
    issues: list[SuiteIssue] = []
    first_use: dict[str, int | None] = {}
    for index, raw in enumerate(cases):
        if not isinstance(raw, dict):
            continue
        at = ("cases", index)
        issues += _duplicate_name(raw, at, first_use, where)
        issues += _setup_path_issues(raw, at, where)
        issues += _grader_issue(raw, at, where)
    return issues


def _duplicate_name(
    raw: dict[Any, Any], at: YamlPath, first_use: dict[str, int | None], where: _Where
) -> list[SuiteIssue]:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        return []
    name = name.strip()
    line = where.doc.line_at((*at, "name"))
    if name not in first_use:
        first_use[name] = line
        return []
    return [
        where.issue(
            f"duplicate case name '{name}' — names must be unique within a suite "
            f"(first used on line {first_use[name]})",
            (*at, "name"),
        )
    ]


def _setup_path_issues(raw: dict[Any, Any], at: YamlPath, where: _Where) -> list[SuiteIssue]:
    setup = raw.get("setup")
    files = setup.get("files") if isinstance(setup, dict) else None
    if not isinstance(files, dict):
        return []
    issues = []
    for rel in files:
        problem = setup_path_problem(rel) if isinstance(rel, str) else None
        if problem:
            issues.append(
                where.issue(
                    f"setup file path {rel!r} {problem} — paths must stay inside the workspace",
                    (*at, "setup", "files", rel),
                    field="setup.files",
                )
            )
    return issues


def _grader_issue(raw: dict[Any, Any], at: YamlPath, where: _Where) -> list[SuiteIssue]:
    expectations = raw.get("expectations", [])
    validators = raw.get("validators", [])
    if not isinstance(expectations, list) or not isinstance(validators, list):
        return []  # the schema has already named the wrong type
    if expectations or validators or "should_trigger" in raw:
        return []
    allowed = schema()["$defs"]["case"]["properties"]
    if any(k not in allowed and k not in REMOVED_REV1_KEYS for k in raw):
        return []  # an unknown key may be the misspelt grader; its issue says so already
    return [
        where.issue(
            f"case '{where.case_label(at)}' has no grader — it needs at least one assertion: "
            "'expectations' (LLM-judged) or 'validators' (code), or 'should_trigger' to make "
            "it a trigger-only case",
            at,
        )
    ]


# --- normalization ---------------------------------------------------------------------------


def _case(raw: dict[str, Any], line: int) -> Case:
    """A valid case mapping as the model: the list form of setup is commands-only."""
    return Case(
        name=raw["name"].strip(),
        prompt=raw["prompt"],
        setup=_setup(raw.get("setup", [])),
        expectations=tuple(raw.get("expectations", [])),
        validators=tuple(
            ValidatorSpec(
                cmd=v["cmd"],
                expect_exit_code=v.get("expect_exit_code", 0),
                label=v.get("label", ""),
            )
            for v in raw.get("validators", [])
        ),
        tags=_tags(raw),
        description=raw.get("description"),
        max_turns=raw.get("max_turns"),
        should_trigger=raw.get("should_trigger"),
        line=line,
    )


def _tags(raw: dict[str, Any]) -> tuple[str, ...]:
    """The case's tags; ``held_out: true`` is the tag ``held-out`` (what every format's held-out
    case carries, and the spec-portable way to write it)."""
    tags = tuple(raw.get("tags", []))
    return (*tags, HELD_OUT_TAG) if raw.get("held_out") and HELD_OUT_TAG not in tags else tags


def _setup(raw: list[str] | dict[str, Any]) -> Setup:
    if isinstance(raw, list):
        return Setup(commands=tuple(raw))
    return Setup(files=dict(raw.get("files", {})), commands=tuple(raw.get("commands", [])))
