"""The one rule for suite paths (``suite/paths.py``): a path a suite names stays inside the
suite's folder with no symbolic link at any component, in every format, refused alike by
``validate``, ``run`` and the Action; staging reads from the suite's folder down, never through
a link. The probe is parametrized: its count is the measurement (formats x link positions)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SandboxError, SuiteError
from skillab.suite.loading import seed_files
from skillab.suite.paths import path_problem, read_below

from ..action_harness import github, run_action  # noqa: F401 -- github is a fixture

CANARY = "CANARY-7f3a9c-host-secret"
SKILL_MD = "---\nname: {name}\ndescription: A skill for a path probe.\n---\nAnswer plainly.\n"
# Where the link sits on the suite's path a/b/c: the first component, one in the middle, the
# last, or (for a folder a loader walks) an entry inside the walked folder.
POSITIONS = ("first", "middle", "last", "inside")


def host_tree(tmp_path: Path, kind: str) -> Path:
    """Outside every suite: host/b/c, a file holding the canary or a folder holding one."""
    host = tmp_path / "host"
    (host / "b").mkdir(parents=True)
    if kind == "file":
        (host / "b" / "c").write_text(CANARY + "\n")
    else:
        (host / "b" / "c").mkdir()
        (host / "b" / "c" / "leak.txt").write_text(CANARY + "\n")
    (host / "canary.txt").write_text(CANARY + "\n")
    return host


def plant(root: Path, rel: str, host: Path, kind: str, position: str) -> None:
    """``root/rel`` (three components) with a link at ``position`` into ``host``; ``control``
    lays real files instead, so each probe's suite is shown valid without its link."""
    a, b, c = rel.split("/")
    if position == "first":
        root.mkdir(parents=True, exist_ok=True)
        os.symlink(host, root / a)
        return
    (root / a).mkdir(parents=True, exist_ok=True)
    if position == "middle":
        os.symlink(host / "b", root / a / b)
        return
    (root / a / b).mkdir(exist_ok=True)
    if position == "last":
        os.symlink(host / "b" / c, root / a / b / c)
        return
    if kind == "file":
        (root / a / b / c).write_text("benign\n")
        return
    (root / a / b / c).mkdir()
    (root / a / b / c / "ok.txt").write_text("benign\n")
    if position == "inside":
        os.symlink(host / "canary.txt", root / a / b / c / "leak.txt")


# --- one suite per format and field ----------------------------------------------------------


def evals_json(field: str, kind: str) -> Callable[[Path, Path, str], Path]:
    def build(root: Path, host: Path, position: str) -> Path:
        root.mkdir(parents=True)
        (root / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
        plant(root, "a/b/c", host, kind, position)
        entry = {"id": 1, "prompt": "Summarise the files.", "expected_output": "A summary."}
        entry[field] = ["a/b/c"] if field == "files" else "a/b/c"
        (root / "evals").mkdir()
        (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "probe", "evals": [entry]}))
        return root
    return build


def skillgrade_workspace(kind: str) -> Callable[[Path, Path, str], Path]:
    def build(root: Path, host: Path, position: str) -> Path:
        _skillgrade(root, [{"src": "a/b/c", "dest": "work"}])
        plant(root, "a/b/c", host, kind, position)
        return root
    return build


def skillgrade_graders(root: Path, host: Path, position: str) -> Path:
    _skillgrade(root, None)
    if position == "first":  # the graders/ folder is itself the link
        os.symlink(host / "b", root / "graders")
    elif position == "inside":
        (root / "graders").mkdir()
        os.symlink(host / "canary.txt", root / "graders" / "check.sh")
    elif position == "control":
        (root / "graders").mkdir()
        (root / "graders" / "check.sh").write_text("echo ok\n")
    else:
        (root / "graders" / "sub").mkdir(parents=True)
        target = host / "b" if position == "middle" else host / "canary.txt"
        os.symlink(target, root / "graders" / "sub" / ("deeper" if position == "middle" else "check.sh"))
    return root


def _skillgrade(root: Path, workspace: list | None) -> None:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
    task = {"name": "probe-task", "instruction": "Do the task.",
            "graders": [{"type": "deterministic", "run": 'echo \'{"score": 1}\'', "weight": 1}]}
    if workspace is not None:
        task["workspace"] = workspace
    (root / "eval.yaml").write_text(yaml.safe_dump({"version": "1", "tasks": [task]}))


def task_suite(root: Path, host: Path, position: str) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="demo"))
    (root / "task_suite.yaml").write_text(
        "skill_id: demo\nversion: '1.0'\ntasks:\n  - id: t\n    prompt: Reply.\n"
        "    judge: {type: pytest, test_file: fixtures/keep.py}\n")
    if position == "first":  # the fixtures/ folder walked is the link
        os.symlink(host / "b", root / "fixtures")
        return root
    (root / "fixtures").mkdir()
    (root / "fixtures" / "keep.py").write_text("def test_it():\n    assert True\n")
    if position == "middle":
        os.symlink(host / "b", root / "fixtures" / "sub")
    elif position == "last":
        os.symlink(host / "canary.txt", root / "fixtures" / "leak.py")
    elif position == "inside":
        (root / "fixtures" / "sub").mkdir()
        os.symlink(host / "canary.txt", root / "fixtures" / "sub" / "leak.txt")
    return root


def skillsbench(folder: str) -> Callable[[Path, Path, str], Path]:
    def build(root: Path, host: Path, position: str) -> Path:
        root.mkdir(parents=True)
        (root / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n')
        (root / "instruction.md").write_text("Write /root/out.txt.\n")
        (root / "environment" / "skills" / "probe").mkdir(parents=True)
        (root / "environment" / "skills" / "probe" / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
        host_tests = host / "b"
        (host_tests / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
        if folder == "tests":
            tests = root / "tests"
            if position == "first":
                os.symlink(host_tests, tests)
                return root
            tests.mkdir()
            (tests / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
            _inner(tests, host, position)
            return root
        (root / "tests").mkdir()
        (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
        if position == "first":
            os.rename(root / "environment", host / "env-skills")
            os.symlink(host / "env-skills", root / "environment")
            return root
        _inner(root / "environment", host, position)
        return root
    return build


def _inner(folder: Path, host: Path, position: str) -> None:
    """A link inside a folder a loader walks: a folder link (middle), a file link (last), or one
    a level down (inside)."""
    if position == "middle":
        os.symlink(host / "b", folder / "data")
    elif position == "last":
        os.symlink(host / "canary.txt", folder / "leak.txt")
    elif position == "inside":
        (folder / "data").mkdir()
        os.symlink(host / "canary.txt", folder / "data" / "leak.txt")


def ruby_bench(root: Path, host: Path, position: str) -> Path:
    (root / "skills" / "greeter").mkdir(parents=True)
    (root / "skills" / "greeter" / "SKILL.md").write_text(SKILL_MD.format(name="greeter"))
    eval_dir = root / "evals" / "skills" / "greeter" / "basic"
    eval_dir.mkdir(parents=True)
    (eval_dir / "task.md").write_text("# Eval\n\n## Task\nBuild `Greeter`.\n")
    dims = [{"name": n, "max_score": 20} for n in ("correctness", "skill_adherence", "code_quality",
                                                    "test_coverage", "documentation")]
    (eval_dir / "criteria.json").write_text(json.dumps({"context": "c", "dimensions": dims, "pass_threshold": 70}))
    plant(eval_dir, "a/b/c", host, "folder", position)
    return eval_dir


def tessl(root: Path, host: Path, position: str) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
    scenario = root / "evals" / "probe"
    scenario.mkdir(parents=True)
    (scenario / "task.md").write_text("Do the task.\n")
    (scenario / "criteria.json").write_text(json.dumps({
        "context": "c", "type": "weighted_checklist",
        "checklist": [{"name": "done", "description": "It is done.", "max_score": 10}]}))
    plant(scenario, "a/b/c", host, "folder", position)
    return scenario


def plugin_eval(root: Path, host: Path, position: str) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
    case = root / "evals" / "probe-case"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text(yaml.safe_dump({
        "schema_version": "1.0", "name": "probe-case", "execution": {"prompt": "Answer."},
        "graders": [{"type": "baseline", "name": "ref", "criteria": "Matches the reference.",
                     "baseline_file": "a/b/c"}]}))
    plant(case, "a/b/c", host, "file", position)
    return root


@dataclass(frozen=True)
class Probe:
    name: str
    kind: str
    build: Callable[[Path, Path, str], Path]
    positions: tuple[str, ...]


FILE_POSITIONS = ("first", "middle", "last")
PROBES = (
    Probe("evals.json files (a file)", "file", evals_json("files", "file"), FILE_POSITIONS),
    Probe("evals.json files (a folder)", "folder", evals_json("files", "folder"), POSITIONS),
    Probe("evals.json fixture", "folder", evals_json("fixture", "folder"), POSITIONS),
    Probe("evals.json workspace_dir", "folder", evals_json("workspace_dir", "folder"), POSITIONS),
    Probe("skillgrade workspace src (a file)", "file", skillgrade_workspace("file"), FILE_POSITIONS),
    Probe("skillgrade workspace src (a folder)", "folder", skillgrade_workspace("folder"), POSITIONS),
    Probe("skillgrade graders/", "folder", skillgrade_graders, POSITIONS),
    Probe("task_suite fixtures/", "folder", task_suite, POSITIONS),
    Probe("SkillsBench tests/", "folder", skillsbench("tests"), POSITIONS),
    Probe("SkillsBench environment/", "folder", skillsbench("environment"), POSITIONS),
    Probe("ruby-skill-bench eval folder", "folder", ruby_bench, POSITIONS),
    Probe("Tessl scenario folder", "folder", tessl, POSITIONS),
    Probe("claude-plugin-eval baseline_file", "file", plugin_eval, FILE_POSITIONS),
)
CASES = [pytest.param(p, pos, id=f"{p.name}-{pos}") for p in PROBES for pos in p.positions]


def test_the_probe_covers_every_format_and_position():
    formats = {p.name.split(" ")[0] for p in PROBES}
    assert formats == {"evals.json", "skillgrade", "task_suite", "SkillsBench", "ruby-skill-bench", "Tessl",
                       "claude-plugin-eval"}
    assert len(CASES) == 49


def tree_text(folder: Path) -> str:
    """Every regular file's text below ``folder`` (links not followed)."""
    found = []
    for current, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(current) / name
            if not path.is_symlink() and path.is_file():
                found.append(path.read_text(errors="replace"))
    return "\n".join(found)


@pytest.mark.parametrize("probe,position", CASES)
def test_a_link_on_a_suite_path_is_refused_by_validate_and_run(probe, position, tmp_path, capsys):
    host = host_tree(tmp_path, probe.kind)
    target = probe.build(tmp_path / "suite", host, position)
    assert main(["validate", str(target)]) == 2
    said = capsys.readouterr()
    assert "symbolic link" in said.err + said.out, said.err + said.out
    assert "Traceback" not in said.err and CANARY not in said.err + said.out
    out = tmp_path / "out"
    code = main(["run", str(target), "--adapter", "mock", "--no-cache", "--keep-workspaces",
                 "--output", str(out / "results.json"), "--markdown", str(out / "report.md"),
                 "--trajectories", str(out / "trajectories")])
    said = capsys.readouterr()
    assert code == 2, said.err
    assert CANARY not in said.err + said.out
    assert not out.exists() or CANARY not in tree_text(out)


@pytest.mark.parametrize("probe", [pytest.param(p, id=p.name) for p in PROBES])
def test_each_probe_suite_is_valid_without_its_link(probe, tmp_path, capsys):
    host = host_tree(tmp_path, probe.kind)
    target = probe.build(tmp_path / "suite", host, "control")
    assert main(["validate", str(target)]) == 0, capsys.readouterr()


def test_proc_self_through_a_folder_link_is_refused(tmp_path, capsys):
    root = tmp_path / "skill"
    (root / "fx").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="probe"))
    os.symlink("/proc/self", root / "fx" / "p")
    (root / "evals").mkdir()
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "probe", "evals": [
        {"id": 1, "prompt": "p", "expected_output": "x", "files": ["fx/p/environ"]}]}))
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert "fx/p -> /proc/self" in err and "evals[0].files[0]" in err


def test_a_link_swapped_in_after_loading_is_refused_at_staging(tmp_path):
    """The race: the suite is checked, then a folder on a seed's path becomes a link."""
    suite = tmp_path / "suite"
    (suite / "data").mkdir(parents=True)
    (suite / "data" / "x.txt").write_text("benign\n")
    seed = seed_files([(suite / "data" / "x.txt", "x.txt")], root=suite)
    host = host_tree(tmp_path, "file")
    (suite / "data" / "x.txt").unlink()
    (suite / "data").rmdir()
    os.symlink(host, suite / "data")
    (host / "x.txt").write_text(CANARY)
    with pytest.raises(SandboxError, match="symbolic link"):
        read_below(seed.root, seed.files[0][0])


def test_seed_files_refuse_a_link_whatever_the_loader_checked(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    host = host_tree(tmp_path, "file")
    os.symlink(host, suite / "a")
    with pytest.raises(SuiteError, match=r"symbolic link \(a -> "):
        seed_files([(suite / "a" / "b" / "c", "c")], root=suite)


@pytest.mark.parametrize("rel,problem", [
    ("", "is empty"), ("/etc/passwd", "is absolute"), ("a/../../x", "climbs out"), ("a\0b", "NUL"),
    ("a\\b", "'\\'"), ("missing", "does not exist"),
])
def test_path_problem_names_each_shape(tmp_path, rel, problem):
    assert problem in (path_problem(tmp_path, rel) or "")


def test_the_action_refuses_a_linked_fixture_and_posts_no_canary(tmp_path, github):
    workspace = tmp_path / "checkout"
    evals_json("files", "file")(workspace / "skills" / "probe", host_tree(tmp_path, "file"), "middle")
    result = run_action(workspace, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
                        api_url=github.url, inputs={"adapter": "mock"}, in_process=True)
    assert result.code == 1, result.log  # the Action's "check failed"
    assert "::error file=skills/probe/evals/evals.json" in result.log and "symbolic link (a/b -> " in result.log
    everything = result.log + result.summary + tree_text(workspace) + tree_text(workspace.parent / "runner-workflow_dispatch")
    assert CANARY not in everything
