"""Claude Code's ``claude plugin eval`` cases: an eval folder (``evals/`` below a plugin or a
skill folder) holding one folder per case, each written as ``case.yaml`` or as ``prompt.md``
plus ``graders/*.md`` (both may be present: prompt.md's frontmatter and graders are laid over
case.yaml's, as the CLI does). Read from the CLI's own schema (Claude Code 2.1.330):

    schema_version: "1.0"            # major 1
    name: my-case                    # default: the folder's name
    description, tags: [...], runs: 3, plugins: [...], expected_outcome
    context: {scaffold_script, history_file, add_dirs}
    execution: {prompt, max_turns: 10 (≤200), timeout_seconds: 300 (≤3600), model,
                allowed_tools, disallowed_tools, env, append_system_prompt, ...}
    graders:                         # at least one; names unique
      - {type: regex, name, pattern, flags, match: contains|not_contains|count:N,
         target: last_message|trace|files|mock_calls|{source: file, path}}
      - {type: tool_used, name, tool, input_match, min, max}
      - {type: tool_order, name, before, after}        # a tool name or {tool, input_match}
      - {type: file_exists, name, path, exists: true}
      - {type: llm, name, criteria, focus}
      - {type: baseline, name, baseline_file, criteria}
      every grader: weight (default 1), arm: with-only|both

In ``graders/<name>.md`` the frontmatter holds the grader (``type:`` required) and the body is
its criteria (llm, baseline) or pattern (regex); a file without frontmatter is not a grader.

Each case is one A/B case. ``max_turns`` and ``timeout_seconds`` bound the agent; ``tags`` are
``--tag`` selectable; ``runs`` is the CLI's repeat count (skillab repeats with ``--runs``: a
warning names it). A case that resumes a recorded session (``history_file``) cannot be replayed
on another agent and is refused in one line; ``scaffold_script`` is skipped, as the CLI skips it
unless ``--scaffold`` is given.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from ...errors import SuiteError, SuiteIssue
from ...skill.loader import SKILL_FILE
from ...suite.model import Case, Suite
from ...suite.paths import path_problem, shape_problem
from ...yaml_source import parse_yaml, read_suite_text
from .specs import CaseGrader, PluginCaseGrader, ToolRef

FORMAT_NAME = "claude-plugin-eval"
CASE_FILE, PROMPT_FILE, GRADERS_DIR = "case.yaml", "prompt.md", "graders"
SUPPORTED_MAJOR = 1
# What ``claude plugin eval init --bare`` writes: a case still holding it is not written yet.
BLANK_PROMPT = "TODO: describe what the agent should do"
BLANK_CRITERIA = "TODO: describe what a successful response looks like"
TOP_KEYS = ("schema_version", "name", "description", "tags", "plugins", "context", "execution", "runs",
            "graders", "expected_outcome")
PROMPT_TOP = ("schema_version", "name", "description", "tags", "plugins", "runs", "expected_outcome")
PROMPT_EXECUTION = ("model", "max_turns", "timeout_seconds", "allowed_tools", "disallowed_tools",
                    "artifact_publish", "growthbook_overrides", "append_system_prompt", "env")
GRADER_TYPES = ("regex", "tool_order", "tool_used", "file_exists", "llm", "baseline")
TARGETS = ("last_message", "trace", "files", "mock_calls")
# The Skill tool: a tool_used grader on it is a plugin-fired indicator (with-only) by default.
SKILL_TOOL = "Skill"
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)


def eval_dir_of(path: Path) -> Path:
    """The eval folder a case file belongs to: the folder above its case folder."""
    return path.parent.parent


def case_dirs(eval_dir: Path) -> list[Path]:
    """Every case folder below ``eval_dir``, sorted (results/ and mocks/ are the CLI's own)."""
    found = {p.parent for name in (CASE_FILE, PROMPT_FILE) for p in eval_dir.rglob(name)
             if not {"results", "mocks", ".git", "node_modules"} & set(p.relative_to(eval_dir).parts[:-1])}
    return sorted(found)


def load_plugin_eval(path: Path) -> Suite:
    """Load every case of the eval folder ``path`` (a case file) belongs to."""
    eval_dir = eval_dir_of(path)
    issues: list[SuiteIssue] = []
    warnings: list[str] = []
    cases: list[Case] = []
    runs: set[int] = set()
    for folder in case_dirs(eval_dir):
        try:
            case, case_runs = _case(folder, warnings)
        except SuiteError as exc:
            issues.extend(exc.issues)
            continue
        if case is not None:
            cases.append(case)
            runs.add(case_runs)
    names = [c.name for c in cases]
    for name in sorted({n for n in names if names.count(n) > 1}):
        issues.append(SuiteIssue(eval_dir, f"two cases are named {name!r} — case names must be unique"))
    if not cases and not issues:
        issues.append(SuiteIssue(eval_dir, "holds no case (a folder with case.yaml, or prompt.md and graders/)"))
    if issues:
        raise SuiteError(issues)
    if runs - {1}:
        asked = ", ".join(str(r) for r in sorted(runs))
        warnings.insert(0, f"{eval_dir}: the cases ask for runs: {asked} — skillab repeats every case "
                           f"--runs N times (default 1); pass --runs {max(runs)} to match")
    return Suite(path=eval_dir, format=FORMAT_NAME, cases=tuple(cases), skill_dir=skill_dir_of(eval_dir),
                 warnings=tuple(warnings))


def skill_dir_of(eval_dir: Path) -> Path:
    """The plugin or skill folder the eval folder belongs to: its SKILL.md, else its ``skills/``
    (several skills given to the with-skill arm together), else the folder itself."""
    root = eval_dir.parent
    if (root / SKILL_FILE).is_file():
        return root
    skills = root / "skills"
    members = sorted(d for d in skills.iterdir() if (d / SKILL_FILE).is_file()) if skills.is_dir() else []
    if len(members) == 1:
        return members[0]
    return skills if members else root


def _case(folder: Path, warnings: list[str]) -> tuple[Case | None, int]:
    case_file, prompt_file = folder / CASE_FILE, folder / PROMPT_FILE
    issues: list[SuiteIssue] = []
    doc: dict[str, Any] = {}
    if case_file.is_file():
        value = parse_yaml(read_suite_text(case_file), case_file).value
        if not isinstance(value, dict):
            raise SuiteError([SuiteIssue(case_file, "must be a YAML object (schema_version, name, execution, graders)")])
        doc = dict(value)
    where = case_file if case_file.is_file() else prompt_file
    if prompt_file.is_file() or (folder / GRADERS_DIR).is_dir():
        _lay_over(doc, folder, issues)
    if not doc:
        return None, 1
    doc.setdefault("schema_version", "1.1")
    doc.setdefault("name", folder.name)
    version = str(doc["schema_version"])
    major = version.split(".", 1)[0]
    if not major.isdigit():
        issues.append(SuiteIssue(where, f"'schema_version' {version!r} is not a version string (e.g. \"1.0\")"))
    elif int(major) > SUPPORTED_MAJOR:
        issues.append(SuiteIssue(where, f"'schema_version' {version!r} is newer than the 1.x skillab reads"))
    for key in doc:
        if key not in TOP_KEYS:
            issues.append(SuiteIssue(where, f"unknown key {key!r} (known: {', '.join(TOP_KEYS)})", field=key))
    execution = doc["execution"] if isinstance(doc.get("execution"), dict) else {}
    name = str(doc["name"]).strip()
    prompt = execution.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        issues.append(SuiteIssue(where, "is required (a prompt.md body, or execution.prompt in case.yaml)",
                                 case=name, field="execution.prompt"))
    elif BLANK_PROMPT in prompt:
        issues.append(SuiteIssue(where, f"is still the blank `init` template — replace the {BLANK_PROMPT!r} line "
                                 "with the user prompt to test", case=name, field="execution.prompt"))
    max_turns = _bounded(execution, "max_turns", 10, 200, where, name, issues)
    timeout = _bounded(execution, "timeout_seconds", 300, 3600, where, name, issues)
    runs = _bounded(doc, "runs", 3, 50, where, name, issues)
    graders = _graders(doc.get("graders"), folder, where, name, issues)
    if issues:
        raise SuiteError(issues)
    assert isinstance(prompt, str)  # an issue above otherwise
    context = doc["context"] if isinstance(doc.get("context"), dict) else {}
    unsupported = None
    if context.get("history_file"):
        unsupported = ("it resumes a recorded Claude Code session (context.history_file), which no other agent "
                       "can replay — run it with `claude plugin eval`")
    if context.get("scaffold_script"):
        warnings.append(f"{where}: case {name} has a scaffold_script — not run, as `claude plugin eval` does "
                        "not run it without --scaffold")
    tags = doc["tags"] if isinstance(doc.get("tags"), list) else []
    return Case(
        name=name,
        prompt=prompt.strip(),
        description=doc.get("description") if isinstance(doc.get("description"), str) else None,
        tags=tuple(str(t) for t in tags),
        max_turns=max_turns,
        timeout_s=float(timeout),
        graders=(PluginCaseGrader(graders=graders),),
        unsupported=unsupported,
    ), runs


def _lay_over(doc: dict[str, Any], folder: Path, issues: list[SuiteIssue]) -> None:
    """prompt.md's frontmatter and body, and graders/*.md, over what case.yaml said."""
    prompt_file = folder / PROMPT_FILE
    execution = dict(doc.get("execution") or {}) if isinstance(doc.get("execution"), dict) else {}
    if prompt_file.is_file():
        meta, body = _frontmatter(prompt_file)
        for key, value in meta.items():
            if key in PROMPT_TOP:
                doc[key] = value
            elif key in PROMPT_EXECUTION:
                execution[key] = value
            else:
                issues.append(SuiteIssue(prompt_file, f"unknown frontmatter key {key!r} (expected one of: "
                                         f"{', '.join((*PROMPT_TOP, *PROMPT_EXECUTION))})", field=key))
        if body.strip():
            execution["prompt"] = body.strip()
    if execution:
        doc["execution"] = execution
    graders_dir = folder / GRADERS_DIR
    extra: list[dict[str, Any]] = []
    for path in sorted(graders_dir.glob("*.md")) if graders_dir.is_dir() else []:
        meta, body = _frontmatter(path)
        if not meta:
            continue  # prose beside the graders, not a grader
        if not isinstance(meta.get("type"), str):
            issues.append(SuiteIssue(path, 'frontmatter must include "type:" (regex | tool_order | tool_used | '
                                     'file_exists | llm | baseline)', field="type"))
            continue
        grader = {"name": path.stem, **meta}
        body_key = {"llm": "criteria", "baseline": "criteria", "regex": "pattern"}.get(meta["type"])
        if body_key and body_key not in grader and body.strip():
            grader[body_key] = body.strip()
        extra.append({**grader, "_file": path})
    if extra:
        doc["graders"] = [*(doc.get("graders") or [] if isinstance(doc.get("graders"), list) else []), *extra]


def _frontmatter(path: Path) -> tuple[dict[str, Any], str]:
    text = read_suite_text(path)
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text
    meta = parse_yaml(match.group(1), path).value if match.group(1).strip() else {}
    if not isinstance(meta, dict):
        raise SuiteError([SuiteIssue(path, "frontmatter must be a YAML object")])
    return meta, text[match.end():]


def _bounded(doc: dict, key: str, default: int, top: int, where: Path, case: str,
             issues: list[SuiteIssue]) -> int:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        issues.append(SuiteIssue(where, f"must be a whole number from 1 to {top}", case=case, field=key))
        return default
    return value


def _graders(raw: Any, folder: Path, where: Path, case: str, issues: list[SuiteIssue]) -> tuple[CaseGrader, ...]:
    if not isinstance(raw, list) or not raw:
        issues.append(SuiteIssue(where, "needs at least one grader (in case.yaml, or graders/*.md)", case=case,
                                 field="graders"))
        return ()
    found: list[CaseGrader] = []
    for index, entry in enumerate(raw):
        at = entry.pop("_file", where) if isinstance(entry, dict) else where
        field = f"graders[{index}]" if at == where else None
        grader = _grader(entry, folder, at, case, field, issues)
        if grader is not None:
            found.append(grader)
    names = [g.name for g in found]
    for name in sorted({n for n in names if names.count(n) > 1}):
        issues.append(SuiteIssue(where, f'duplicate grader name "{name}"', case=case, field="graders"))
    with_only = [g.indicator for g in found]
    # Every grader with-only: the CLI scores them all, in both arms.
    return tuple(found) if not all(with_only) else tuple(dataclasses.replace(g, indicator=False) for g in found)


def _grader(entry: Any, folder: Path, at: Path, case: str, field: str | None,
            issues: list[SuiteIssue]) -> CaseGrader | None:
    def bad(message: str, key: str | None = None) -> None:
        issues.append(SuiteIssue(at, message, case=case, field=f"{field}.{key}" if field and key else field or key))

    if not isinstance(entry, dict):
        bad("must be an object {type, name, ...}")
        return None
    kind, name = entry.get("type"), entry.get("name")
    if kind not in GRADER_TYPES:
        bad(f"type {kind!r} is not one of {', '.join(GRADER_TYPES)}", "type")
        return None
    if not isinstance(name, str) or not name.strip():
        bad("needs a 'name'", "name")
        return None
    weight = entry.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
        bad("must be a positive number", "weight")
        return None
    arm = entry.get("arm")
    if arm not in (None, "with-only", "both"):
        bad("must be with-only or both", "arm")
        return None
    common: dict[str, Any] = {"name": name, "type": kind, "weight": float(weight)}
    if kind == "regex":
        return _regex(entry, common, arm, bad)
    if kind in ("llm", "baseline"):
        return _judged(entry, common, arm, folder, bad)
    if kind == "file_exists":
        path = entry.get("path")
        if not isinstance(path, str) or shape_problem(path):
            bad(_workspace_path("needs 'path'", path), "path")
            return None
        return CaseGrader(**common, indicator=arm == "with-only", path=path, exists=entry.get("exists", True) is not False)
    if kind == "tool_used":
        tool = entry.get("tool")
        if not isinstance(tool, str) or not tool.strip():
            bad("needs 'tool'", "tool")
            return None
        low, high = entry.get("min", 1), entry.get("max")
        return CaseGrader(**common, indicator=arm == "with-only" or (arm is None and tool == SKILL_TOOL),
                          tool=ToolRef(tool, entry.get("input_match")), minimum=int(low),
                          maximum=int(high) if high is not None else None)
    before, after = _tool_ref(entry.get("before")), _tool_ref(entry.get("after"))
    if before is None or after is None:
        bad("needs 'before' and 'after': a tool name or {tool, input_match}")
        return None
    return CaseGrader(**common, indicator=arm == "with-only", before=before, after=after)


def _regex(entry: dict, common: dict, arm: Any, bad: Any) -> CaseGrader | None:
    pattern, flags, match = entry.get("pattern"), str(entry.get("flags", "")), str(entry.get("match", "contains"))
    target = entry.get("target", "last_message")
    if not isinstance(pattern, str) or not pattern:
        bad("needs 'pattern'", "pattern")
        return None
    if not re.fullmatch(r"[dgimsuvy]*", flags):
        bad("must be JS RegExp flags (d g i m s u v y)", "flags")
        return None
    if match not in ("contains", "not_contains") and not re.fullmatch(r"count:\d+", match):
        bad("must be contains | not_contains | count:N", "match")
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        bad(f"is not a valid regular expression ({exc})", "pattern")
        return None
    target_file = target.get("path") if isinstance(target, dict) and target.get("source") == "file" else None
    if target_file is not None and (not isinstance(target_file, str) or shape_problem(target_file)):
        bad(_workspace_path("needs {source: file, path}", target_file), "target")
        return None
    if target_file is None and target not in TARGETS:
        bad(f"must be one of {', '.join(TARGETS)}, or {{source: file, path}}", "target")
        return None
    return CaseGrader(**common, indicator=arm == "with-only", target="file" if target_file else target,
                      target_file=target_file, pattern=pattern, flags=flags, match=match)


def _judged(entry: dict, common: dict, arm: Any, folder: Path, bad: Any) -> CaseGrader | None:
    criteria = entry.get("criteria")
    if not isinstance(criteria, str) or not criteria.strip():
        bad("needs 'criteria' (or the grader file's body)", "criteria")
        return None
    if BLANK_CRITERIA in criteria:
        bad(f"is still the blank `init` template — replace the {BLANK_CRITERIA!r} line with concrete pass criteria",
            "criteria")
        return None
    reference = None
    if common["type"] == "baseline":
        rel = entry.get("baseline_file")
        problem = path_problem(folder, rel, want="file") if isinstance(rel, str) else "is missing"
        if problem is not None or not isinstance(rel, str):
            bad(f"needs 'baseline_file': a file in the case folder holding the reference answer ({rel!r} "
                f"{problem})", "baseline_file")
            return None
        reference = read_suite_text(folder / rel)
    focus = entry.get("focus", "last_message")
    focus_file = focus.get("path") if isinstance(focus, dict) else None
    if isinstance(focus, dict) and (not isinstance(focus_file, str) or shape_problem(focus_file)):
        bad(_workspace_path("needs {path}", focus_file), "focus")
        return None
    return CaseGrader(**common, indicator=arm == "with-only", criteria=criteria.strip(), reference=reference,
                      target=focus if isinstance(focus, str) else "last_message",
                      target_file=focus_file)


def _workspace_path(what: str, path: Any) -> str:
    """The refusal of a grader's path into the arm's workspace."""
    problem = shape_problem(path) if isinstance(path, str) else "is not a string"
    return (f"{what}: a path relative to the arm's workspace, without '..' ({path!r} {problem}) — "
            "graders read only files inside the workspace")


def _tool_ref(raw: Any) -> ToolRef | None:
    if isinstance(raw, str) and raw.strip():
        return ToolRef(raw)
    if isinstance(raw, dict) and isinstance(raw.get("tool"), str):
        return ToolRef(raw["tool"], raw.get("input_match"))
    return None
