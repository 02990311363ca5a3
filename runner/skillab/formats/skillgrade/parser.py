"""skillgrade's ``eval.yaml`` (npm ``skillgrade``; its README's "eval.yaml Reference")::

    version: "1"
    skill: path/to/skill            # optional: else the folder holding eval.yaml, or the skills
                                    # below it in .agents/skills, .claude/skills or skills/ (all given together)
    defaults: {agent, provider, trials, timeout, threshold, grader_model, docker: {base, setup},
               environment: {cpus, memory_mb}}
    tasks:
      - name: fix-linting-errors
        instruction: "the prompt, or a file holding it"
        workspace: [{src: fixtures/app.js, dest: app.js, chmod: "+x"}]
        graders:
          - {type: deterministic, run: "bash graders/check.sh", setup: "...", weight: 0.7}
          - {type: llm_rubric, rubric: "text, or a file holding it", model: ..., weight: 0.3}
        agent, trials, timeout       # per-task overrides

Each task is one A/B case. The suite's ``graders/`` folder reaches the workspace only after the
agent finished, for the deterministic graders' scripts. ``workspace`` files are copied into both arms at ``dest``; a ``dest``
outside the workspace (``/usr/local/bin/tool``) cannot be placed there under the bwrap sandbox,
so that task is refused in one line, as is one with ``trialConfig`` setup/cleanup (shell run in
skillgrade's container around each trial) or a ``tool_usage`` grader (the agent's own tool names,
``activate_skill``). ``timeout`` bounds the agent; the arm's reward (Σ score ×
weight / Σ weight) passes at ``threshold`` (default 0.8). ``trials`` is skillgrade's repeat count
(skillab repeats with ``--runs``: a warning names it); ``agent``, ``provider``, ``docker`` and
``grader_model`` choose skillgrade's own runtime and are not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...errors import SuiteIssue
from ...skill.loader import SKILL_FILE
from ...suite.loading import IssueList, collect_files, seed_files
from ...suite.model import Case, SeedFiles, Suite
from ...suite.paths import RULE, path_problem
from ...yaml_source import YamlPath, parse_yaml, read_suite_text
from .specs import SkillgradeGrader, TaskGrader

FORMAT_NAME = "skillgrade"
TOP_KEYS = ("version", "skill", "defaults", "tasks")
TASK_KEYS = ("name", "instruction", "workspace", "graders", "agent", "trials", "timeout", "threshold", "provider",
             "docker", "environment", "grader_model", "trialConfig")
# Later skillgrade releases grade the harness's own tool names and run per-trial shell in their
# container: read, then refused in one line, since neither carries over to another agent offline.
TOOL_USAGE = "tool_usage"
DEFAULT_TIMEOUT, DEFAULT_THRESHOLD = 300.0, 0.8


def load_skillgrade(path: Path) -> Suite:
    doc = parse_yaml(read_suite_text(path), path)
    issues = IssueList(path, doc)
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), list) or not value["tasks"]:
        issues.add("must be a skillgrade eval.yaml: version: \"1\", defaults, and a non-empty list of tasks")
        issues.raise_if_any()
    warnings = [f"{path}:{doc.line_at((k,))}: the key {k!r} is not skillgrade's — ignored"
                for k in value if k not in TOP_KEYS]
    if str(value.get("version", "1")) != "1":
        issues.add(f"version {value.get('version')!r} is not skillgrade's \"1\"", ("version",), field="version")
    root = path.parent
    skill_dir = _skill_dir(root, value.get("skill"), issues)
    defaults = value.get("defaults") if isinstance(value.get("defaults"), dict) else {}
    cases: list[Case] = []
    trials: set[int] = set()
    grader_dir = root / "graders"
    grader_files = _grader_files(root, grader_dir, issues) if os.path.lexists(grader_dir) else None
    for index, task in enumerate(value["tasks"]):
        case = _task(task, ("tasks", index), root, defaults, issues, trials, grader_files)
        if case is not None:
            cases.append(case)
    names = [c.name for c in cases]
    for name in sorted({n for n in names if names.count(n) > 1}):
        issues.add(f"two tasks are named {name!r} — task names must be unique", ("tasks",), field="tasks")
    issues.raise_if_any()
    setups = [t.get("name", "?") for t in value["tasks"] if isinstance(t, dict) and _docker_setup(t)]
    if _docker_setup(defaults) or setups:
        where = "defaults" if _docker_setup(defaults) else f"tasks {', '.join(map(str, setups))}"
        warnings.append(f"{path}: docker.setup ({where}) installs tools into skillgrade's image; skillab runs the "
                        "agent and the graders without it, so what it installs must already be on this machine")
    if trials - {1}:
        warnings.append(f"{path}: the tasks ask for trials: {', '.join(map(str, sorted(trials)))} — skillab repeats "
                        f"every case --runs N times (default 1); pass --runs {max(trials)} to match")
    return Suite(path=path, format=FORMAT_NAME, cases=tuple(cases), skill_dir=skill_dir, warnings=tuple(warnings))


# Where skillgrade looks for skills when ``skill:`` is not given (its run command detects every
# skill below the eval's folder and gives them all to the agent).
SKILL_FOLDERS = (".agents/skills", ".claude/skills", "skills")


def _docker_setup(raw: Any) -> bool:
    docker = raw.get("docker") if isinstance(raw, dict) else None
    return isinstance(docker, dict) and isinstance(docker.get("setup"), str) and bool(docker["setup"].strip())


def _skill_dir(root: Path, named: Any, issues: IssueList) -> Path:
    if named is None:
        if (root / SKILL_FILE).is_file():
            return root
        for folder in (root / f for f in SKILL_FOLDERS):
            members = sorted(d for d in folder.iterdir() if (d / SKILL_FILE).is_file()) if folder.is_dir() else []
            if members:
                return members[0] if len(members) == 1 else folder
        return root
    if not isinstance(named, str) or os.path.isabs(named) or ".." in Path(named).parts \
            or not (root / named / SKILL_FILE).is_file():
        issues.add(f"must name a folder below {root} holding a SKILL.md", ("skill",), field="skill")
        return root
    return root / named


def _grader_files(root: Path, grader_dir: Path, issues: IssueList) -> SeedFiles | None:
    """The ``graders/`` folder's files, at their paths below the eval's folder."""
    files, links = collect_files(grader_dir, root=root)
    for link in links:
        issues.issues.append(SuiteIssue(grader_dir / link, f"is a symbolic link — {RULE}"))
    pairs = [(grader_dir / rel, (grader_dir / rel).relative_to(root).as_posix()) for rel in files]
    return seed_files(pairs, root=root) if pairs else None


def _text(raw: Any, root: Path) -> Any:
    """A string value, or the contents of the file it names (skillgrade's file references)."""
    if isinstance(raw, str) and "\n" not in raw.strip() and len(raw) < 300:
        # A file of the suite, reached without a link; anything else is the text itself.
        if path_problem(root, raw.strip(), want="file") is None:
            return read_suite_text(root / raw.strip())
    return raw


def _task(raw: Any, at: tuple[str, int], root: Path, defaults: dict, issues: IssueList, trials: set[int],
          grader_files: Any = None) -> Case | None:
    field = f"tasks[{at[1]}]"
    if not isinstance(raw, dict):
        issues.add("must be a task {name, instruction, workspace, graders}", at, field=field)
        return None
    before = len(issues.issues)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        issues.add("needs a 'name'", (*at, "name"), field=f"{field}.name")
        name = f"task-{at[1] + 1}"
    name = name.strip()
    instruction = _text(raw.get("instruction"), root)
    if not isinstance(instruction, str) or not instruction.strip():
        issues.add("needs an 'instruction': the prompt (or a file holding it)", (*at, "instruction"),
                   field=f"{field}.instruction", case=name)
    for key in raw:
        if key not in TASK_KEYS:
            issues.add(f"unknown key {key!r} (known: {', '.join(TASK_KEYS)})", (*at, key), field=f"{field}.{key}",
                       case=name)
    timeout = raw.get("timeout", defaults.get("timeout", DEFAULT_TIMEOUT))
    threshold = raw.get("threshold", defaults.get("threshold", DEFAULT_THRESHOLD))
    for key, number, top in (("timeout", timeout, None), ("threshold", threshold, 1.0)):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or number <= 0 or (top and number > top):
            issues.add(f"must be a number {'from 0 to 1' if top else 'of seconds'}", (*at, key), field=f"{field}.{key}",
                       case=name)
    count = raw.get("trials", defaults.get("trials", 1))
    if isinstance(count, int) and not isinstance(count, bool):
        trials.add(count)
    foreign: list[str] = []
    graders = _graders(raw.get("graders"), (*at, "graders"), root, name, issues, foreign)
    seed, outside = _workspace(raw.get("workspace"), (*at, "workspace"), root, name, issues)
    if len(issues.issues) > before:
        return None
    trial = raw.get("trialConfig", defaults.get("trialConfig"))
    if isinstance(trial, dict) and (trial.get("setup") or trial.get("cleanup")):
        foreign.insert(0, "it runs trialConfig setup/cleanup commands in skillgrade's container around each trial")
    unsupported = None
    if outside:
        foreign.insert(0, f"it places {', '.join(outside)} outside the workspace (skillgrade builds a Docker image "
                          "for it)")
    if foreign:
        unsupported = "; ".join(foreign) + " — run it with `skillgrade`" + (
            ", or give the tool a workspace path" if outside else "")
    return Case(
        name=name,
        prompt=instruction.strip(),
        graders=(SkillgradeGrader(graders, float(threshold), float(timeout), grader_files),),
        seed=seed,
        timeout_s=float(timeout),
        line=issues.doc.line_at(at) if issues.doc else None,
        unsupported=unsupported,
    )


def _graders(raw: Any, at: YamlPath, root: Path, case: str, issues: IssueList,
             foreign: list[str]) -> tuple[TaskGrader, ...]:
    field = f"tasks[{at[1]}].graders"
    if not isinstance(raw, list) or not raw:
        issues.add("needs at least one grader (deterministic or llm_rubric)", at, field=field, case=case)
        return ()
    found: list[TaskGrader] = []
    for index, entry in enumerate(raw):
        where, label = (*at, index), f"{field}[{index}]"
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == TOOL_USAGE:
            tools = [t.get("name") for t in entry.get("expectedTools") or [] if isinstance(t, dict)]
            foreign.append(f"a tool_usage grader expects the agent's own tool names ({', '.join(map(str, tools))}), "
                           "which other agents name differently")
            continue
        if kind not in ("deterministic", "llm_rubric"):
            issues.add(f"type {kind!r} is not deterministic or llm_rubric", where, field=f"{label}.type", case=case)
            continue
        weight = entry.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            issues.add("must be a positive number", (*where, "weight"), field=f"{label}.weight", case=case)
            continue
        if kind == "deterministic":
            run, setup = _text(entry.get("run"), root), entry.get("setup", "")
            if not isinstance(run, str) or not run.strip() or not isinstance(setup, str):
                issues.add("needs 'run': the command that prints {\"score\": ...}", where, field=f"{label}.run",
                           case=case)
                continue
            found.append(TaskGrader("deterministic", float(weight), run=run, setup=setup))
        else:
            rubric = _text(entry.get("rubric"), root)
            if not isinstance(rubric, str) or not rubric.strip():
                issues.add("needs 'rubric' (text, or a file holding it)", where, field=f"{label}.rubric", case=case)
                continue
            found.append(TaskGrader("llm_rubric", float(weight), rubric=rubric.strip()))
    return tuple(found)


def _workspace(raw: Any, at: YamlPath, root: Path, case: str, issues: IssueList) -> tuple[Any, list[str]]:
    if raw is None:
        return None, []
    field = f"tasks[{at[1]}].workspace"
    if not isinstance(raw, list):
        issues.add("must be a list of {src, dest}", at, field=field, case=case)
        return None, []
    pairs: list[tuple[Path, str]] = []
    outside: list[str] = []
    for index, entry in enumerate(raw):
        src = entry.get("src") if isinstance(entry, dict) else None
        dest = entry.get("dest", src) if isinstance(entry, dict) else None
        problem = path_problem(root, src) if isinstance(src, str) else "is not a path"
        if problem is not None or not isinstance(src, str):
            issues.add(f"'src' must be a file or folder below {root}: {src!r} {problem}", (*at, index),
                       field=f"{field}[{index}].src", case=case)
            continue
        if not isinstance(dest, str) or ".." in Path(dest).parts:
            issues.add("'dest' must be a path", (*at, index), field=f"{field}[{index}].dest", case=case)
            continue
        if os.path.isabs(dest):
            outside.append(dest)
            continue
        source = root / src
        if source.is_file():
            pairs.append((source, dest))
            continue
        files, links = collect_files(source, root=root)
        for link in links:
            issues.add(f"'src' {src!r} holds the symbolic link {link} — {RULE}", (*at, index),
                       field=f"{field}[{index}].src", case=case)
        pairs.extend((source / rel, (Path(dest) / rel).as_posix()) for rel in files)
    return (seed_files(pairs, root=root) if pairs else None), outside
