"""``skillab export --harbor DIR PATH...``: each graded case, each arm, as one Harbor task.

A task is Harbor's directory layout (``task.toml``, ``instruction.md``, ``environment/Dockerfile``,
``tests/test.sh``). Both arms get the same image: the case's setup files and the skill's bundled
files under ``/root``, the setup commands run at build time. Only the with-skill task carries the
skill, in ``environment/skills/`` declared as ``[environment].skills_dir`` (Harbor copies it into
the agent's skills directory). The verifier runs the case's validators in ``/root`` and writes
reward 1 when all pass, 0 otherwise. What Harbor's verifier cannot grade is not exported as if it
could: a case graded only by the judge, or by an imported format's graders, is skipped and listed
in ``skillab-export.json``; a case with both validators and expectations is graded on its
validators, and the manifest says so. Validators that read the reply (``response.txt``, staged by
a skillab run) get it because the instruction asks the agent to write it there.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..grading.validators import RESPONSE_ENV, RESPONSE_FILE
from ..log.results import safe_file_name
from ..skill.loader import SKILL_FILE, Skill
from ..suite.model import Case, Suite

MANIFEST = "skillab-export.json"
MANIFEST_FORMAT = "skillab.harbor-export/1"
ARMS = ("with_skill", "without_skill")
SKILLS_DIR = "/skills"
BASE_IMAGE = "python:3.11-slim"


@dataclass
class ExportReport:
    directory: Path
    tasks: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def task_name(case: str, arm: str, stem: str | None = None) -> str:
    """The task directory of one arm of one case; ``trials.py`` reads the arm back from it."""
    return f"{stem or safe_file_name(case)}--{arm.replace('_', '-')}"


def _case_stem(case: str, taken: set[str]) -> str:
    """The case's part of its task names, unique in the export even where two names only differ
    in characters a file name can't hold, or in case (a case-insensitive file system)."""
    stem = safe_file_name(case)
    if stem.casefold() in taken:
        stem = f"{stem}-{hashlib.sha256(case.encode('utf-8')).hexdigest()[:8]}"
    taken.add(stem.casefold())
    return stem


def export_suite(suite: Suite, skill: Skill, directory: Path, default_max_turns: int) -> ExportReport:
    directory.mkdir(parents=True, exist_ok=True)
    report = ExportReport(directory)
    cases: list[dict[str, Any]] = []
    taken: set[str] = set()
    for case in suite.cases:
        if case.trigger_only:
            continue
        reason = _unexportable(case)
        if reason:
            report.skipped[case.name] = reason
            continue
        stem = _case_stem(case.name, taken)
        tasks = {arm: task_name(case.name, arm, stem) for arm in ARMS}
        for arm, name in tasks.items():
            _write_task(directory / name, case, skill if arm == "with_skill" else None, skill,
                        default_max_turns)
            report.tasks.append(name)
        cases.append({
            "name": case.name,
            "tags": list(case.tags),
            "tasks": tasks,
            "ungraded_expectations": len(case.expectations),
        })
    manifest = {
        "format": MANIFEST_FORMAT,
        "suite": {"path": str(suite.path), "format": suite.format, "skill": skill.name,
                  "skill_dir": str(skill.root), "skill_hash": skill.content_hash()},
        "cases": cases,
        "skipped": report.skipped,
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return report


def _unexportable(case: Case) -> str | None:
    if case.unsupported:
        return f"unsupported: {case.unsupported}"
    if case.graders or case.seed is not None:
        return "graded by an imported format's graders, which Harbor's verifier does not run"
    if not case.validators:
        return "graded by the judge only; Harbor's verifier runs validators, not the judge"
    return None


def _write_task(task: Path, case: Case, skill: Skill | None, under_test: Skill, default_max_turns: int) -> None:
    if task.exists():
        shutil.rmtree(task)
    env = task / "environment"
    (env / "workspace").mkdir(parents=True)
    (task / "tests").mkdir()
    # Every arm works beside the skill's bundled files (graders the validators call), as in a run.
    for rel in under_test.bundled:
        _copy(under_test.root / rel, env / "workspace" / rel)
    for rel, text in case.setup.files.items():
        target = env / "workspace" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if skill is not None:
        skill_dir = env / "skills" / safe_file_name(skill.name)
        for rel in (SKILL_FILE, *skill.bundled):
            _copy(skill.root / rel, skill_dir / rel)
    (env / "Dockerfile").write_text(_dockerfile(case, skill is not None), encoding="utf-8")
    (task / "instruction.md").write_text(_instruction(case), encoding="utf-8")
    (task / "task.toml").write_text(_task_toml(case, skill, default_max_turns), encoding="utf-8")
    test = task / "tests" / "test.sh"
    test.write_text(_test_sh(case), encoding="utf-8")
    test.chmod(0o755)


def _instruction(case: Case) -> str:
    """The prompt; validators that read the reply get it where a skillab run stages it."""
    text = case.prompt.rstrip() + "\n"
    if any(RESPONSE_FILE in v.cmd or RESPONSE_ENV in v.cmd for v in case.validators):
        text += (f"\nWhen you are done, also write your final answer, exactly as you would reply, "
                 f"to /root/{RESPONSE_FILE}.\n")
    return text


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def _dockerfile(case: Case, with_skill: bool) -> str:
    lines = [f"FROM {BASE_IMAGE}", "WORKDIR /root", "COPY workspace/ /root/"]
    if with_skill:
        lines.append(f"COPY skills/ {SKILLS_DIR}/")
    lines += [f"RUN {command}" for command in case.setup.commands]
    return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _task_toml(case: Case, skill: Skill | None, default_max_turns: int) -> str:
    arm = "with_skill" if skill is not None else "without_skill"
    lines = [
        'version = "1.0"',
        "",
        "[metadata]",
        f"skillab_case = {_toml_str(case.name)}",
        f"skillab_arm = {_toml_str(arm)}",
        f"skillab_max_turns = {case.max_turns or default_max_turns}",
        f"tags = [{', '.join(_toml_str(t) for t in case.tags)}]",
        "",
        "[verifier]",
        f"timeout_sec = {max(v.timeout_s for v in case.validators) * len(case.validators):.1f}",
        "",
        "[agent]",
        f"timeout_sec = {case.timeout_s or 600.0:.1f}",
        "",
        "[environment]",
        "build_timeout_sec = 600.0",
    ]
    if skill is not None:
        lines.append(f"skills_dir = {_toml_str(SKILLS_DIR)}")
    return "\n".join(lines) + "\n"


def _test_sh(case: Case) -> str:
    """Every validator in /root with its expected exit code; reward 1 only when all pass."""
    lines = ["#!/bin/bash", "# skillab validators: reward 1 when every one exits as expected.",
             "mkdir -p /logs/verifier", "cd /root", "passed=1",
             # As in a skillab run: the reply in the environment too, for validators that read it.
             f'[ -f {RESPONSE_FILE} ] && export {RESPONSE_ENV}="$(cat {RESPONSE_FILE})"']
    for validator in case.validators:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in validator.env)
        command = f"env {env} bash -c {shlex.quote(validator.cmd)}" if env else f"bash -c {shlex.quote(validator.cmd)}"
        lines += [
            f"timeout {int(validator.timeout_s)} {command}",
            "code=$?; printf 'validator %s: exit %s (expected %s)\\n' "
            f'{shlex.quote(validator.label)} "$code" {validator.expect_exit_code}',
            f"[ $code -eq {validator.expect_exit_code} ] || passed=0",
        ]
    lines.append("echo $passed > /logs/verifier/reward.txt")
    return "\n".join(lines) + "\n"
