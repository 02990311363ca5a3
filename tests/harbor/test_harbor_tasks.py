"""SkillsBench / Harbor tasks run as Harbor runs them: fractional rewards against a threshold, a
verifier that cannot start is an error, Dockerfile ENV and FROM read as Docker reads them, and a
task's several skills given to the with-skill arm only."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.formats.skillsbench.dockerfile import expand_variables
from skillab.suite import load_suite

# Four checks on answer.json; the reward is the share that hold (partial credit, as SkillsBench
# verifiers give it).
CHECKS = """\
import json, pathlib, sys
path = pathlib.Path("/root/answer.json")
data = json.loads(path.read_text()) if path.is_file() else {}
checks = [data.get("total") == 42, data.get("currency") == "EUR",
          data.get("rows") == 3, data.get("source") == "sales.csv"]
pathlib.Path("/logs/verifier/reward.txt").write_text(str(sum(checks) / len(checks)))
"""
TEST_SH = "mkdir -p /logs/verifier\npython3 /tests/check.py\n"
ORACLE = {"total": 42, "currency": "EUR", "rows": 3, "source": "sales.csv"}
TOML = 'version = "1.0"\n\n[environment]\nnetwork_mode = "no-network"\n'


def make_task(root: Path, *, skills=("reporting",), test_sh: str = TEST_SH, dockerfile: str | None = None,
              toml: str = TOML) -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "sales.csv").write_text("amount\n20\n12\n10\n")
    for name in skills:
        skill = root / "environment" / "skills" / name
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} rules.\n---\nWrite answer.json.\n")
    if dockerfile is not None:
        (root / "environment" / "Dockerfile").write_text(dockerfile)
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "tests" / "check.py").write_text(CHECKS)
    (root / "task.toml").write_text(toml)
    (root / "instruction.md").write_text("Summarise /root/sales.csv into /root/answer.json.\n")
    return root


def mock_answers(path: Path, task: str, with_answer: dict | None, without_answer: dict | None) -> Path:
    def arm(answer):
        return {"text": "done", **({"files": {"answer.json": json.dumps(answer)}} if answer is not None else {})}

    path.write_text(yaml.safe_dump({task: {"with": arm(with_answer), "without": arm(without_answer)}}))
    return path


def run(task: Path, tmp_path: Path, responses: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "results.json"
    code = main(["run", str(task), "--adapter", "mock", "--mock-responses", str(responses), "--output", str(out),
                 "--no-cache", "--no-history", "--quiet", *extra])
    return code, json.loads(out.read_text())


def verifier(record: dict, arm: str) -> dict:
    return record[arm]["extra"]["graders"][0]


def test_an_oracle_answer_earns_1_and_an_empty_answer_earns_0(tmp_path, capsys):
    task = make_task(tmp_path / "sales")
    responses = mock_answers(tmp_path / "mock.yaml", "sales", ORACLE, None)
    code, doc = run(task, tmp_path, responses)
    (record,) = doc["cases"]
    assert verifier(record, "with_skill")["score"] == 1.0 and verifier(record, "without_skill")["score"] == 0.0
    assert record["outcome"] == "flip_to_pass" and code == 0
    assert doc["reward"] == {"with_skill": 1.0, "without_skill": 0.0, "arms": 2, "threshold": 1.0}
    assert "reward       with 1.000   without 0.000" in capsys.readouterr().out


def test_a_partial_reward_is_kept_and_passes_only_at_the_threshold(tmp_path):
    task = make_task(tmp_path / "sales")
    half = {"total": 42, "currency": "EUR"}
    responses = mock_answers(tmp_path / "mock.yaml", "sales", half, {"total": 41})
    _, doc = run(task, tmp_path, responses)
    (record,) = doc["cases"]
    assert verifier(record, "with_skill")["score"] == 0.5 and not record["with_skill"]["passed"]
    assert record["outcome"] == "fail_kept" and doc["reward"]["with_skill"] == 0.5
    _, doc = run(task, tmp_path, responses, "--reward-threshold", "0.5")
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and verifier(record, "with_skill")["threshold"] == 0.5


@pytest.mark.parametrize("test_sh, why", [
    ("mkdir -p /logs/verifier\npython3 -m pytest --ctrf /logs/verifier/ctrf.json /tests/check.py\n"
     "echo 0 > /logs/verifier/reward.txt\n", "failed to start"),
    ("mkdir -p /logs/verifier\nno-such-test-runner /tests\necho 0 > /logs/verifier/reward.txt\n", "command not found"),
    ("mkdir -p /logs/verifier\ntrue\n", "no reward"),
])
def test_a_verifier_that_cannot_start_or_gives_no_reward_makes_the_arm_an_error(tmp_path, test_sh, why):
    task = make_task(tmp_path / "sales", test_sh=test_sh)
    responses = mock_answers(tmp_path / "mock.yaml", "sales", ORACLE, ORACLE)
    _, doc = run(task, tmp_path, responses)
    (record,) = doc["cases"]
    assert record["outcome"] == "error"
    grade = verifier(record, "with_skill")
    assert grade["errored"] and why in grade["reason"], grade["reason"]


def test_dockerfile_env_is_expanded_as_docker_does_and_from_platform_is_read(tmp_path):
    dockerfile = (
        "FROM --platform=linux/amd64 python:3.12-slim AS base\n"
        "ENV TOOLS=/opt/tools\n"
        'ENV PATH="${TOOLS}/bin:$PATH" MODE=${UNSET:-fast} EXTRA=${TOOLS:+on}\n'
        "WORKDIR /root\n"
        "COPY sales.csv /root/\n"
        "COPY ./skills /root/.claude/skills\n"
    )
    task = make_task(tmp_path / "sales", dockerfile=dockerfile)
    (case,) = load_suite(task).cases
    assert case.unsupported is None, case.unsupported
    env = dict(case.graders[0].env)
    assert env["PATH"] == "/opt/tools/bin:$PATH" and env["MODE"] == "fast" and env["EXTRA"] == "on"
    # $PATH is the sandbox's, filled in where the verifier runs.
    assert expand_variables(env["PATH"], {}, base=True).startswith("/opt/tools/bin:/")
    assert {target for _, target in case.seed.files} == {"sales.csv"}  # never the skills


def test_an_env_path_reaches_the_verifier_expanded(tmp_path):
    dockerfile = 'FROM python:3.12\nENV PATH="/root/bin:$PATH"\nWORKDIR /root\nCOPY sales.csv /root/\n'
    task = make_task(tmp_path / "sales", dockerfile=dockerfile,
                     test_sh='mkdir -p /logs/verifier\nmy-checker && python3 /tests/check.py\n')
    (task / "environment" / "bin").mkdir()
    checker = task / "environment" / "bin" / "my-checker"
    checker.write_text("#!/bin/sh\nexit 0\n")
    checker.chmod(0o755)
    (task / "environment" / "Dockerfile").write_text(dockerfile + "COPY bin /root/bin\n")
    responses = mock_answers(tmp_path / "mock.yaml", "sales", ORACLE, None)
    _, doc = run(task, tmp_path, responses)
    (record,) = doc["cases"]
    assert verifier(record, "with_skill")["score"] == 1.0, verifier(record, "with_skill")


def test_a_task_with_several_skills_gives_all_of_them_to_the_with_skill_arm_only(tmp_path):
    task = make_task(tmp_path / "sales", skills=("alpha", "beta"))
    responses = mock_answers(tmp_path / "mock.yaml", "sales", ORACLE, None)
    code, doc = run(task, tmp_path, responses, "--keep-workspaces")
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and code == 0
    with_root = Path(record["with_skill"]["extra"]["workspace"])
    without_root = Path(record["without_skill"]["extra"]["workspace"])
    try:
        with_files = {p.relative_to(with_root).as_posix() for p in with_root.rglob("*") if p.is_file()}
        without_files = {p.relative_to(without_root).as_posix() for p in without_root.rglob("*") if p.is_file()}
    finally:
        shutil.rmtree(with_root.parents[1], ignore_errors=True)
    assert {"alpha/SKILL.md", "beta/SKILL.md"} <= with_files
    assert not any("SKILL.md" in f or f.startswith(("alpha/", "beta/")) for f in without_files)


@pytest.mark.parametrize("toml, message", [
    ('version = "1.0"\nseed = ' + "9" * 4400 + "\n", r"task.toml:2: invalid TOML: a number of more than 40 digits"),
    ('version = "1.0"\nx = ' + "[" * 5000 + "]" * 5000 + "\n", r"task.toml:2: invalid TOML: nesting is deeper"),
    ("version = 1979-05-27\n", r"task.toml:1: 'version' — must be a version string"),
])
def test_task_toml_bounds_are_clear_errors(tmp_path, capsys, toml, message):
    task = make_task(tmp_path / "sales", toml=toml)
    assert main(["validate", str(task)]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err, err


def test_a_folder_of_tasks_names_every_one_that_cannot_run_and_a_lower_case_skill_md(tmp_path, capsys):
    # benchflow-ai/skillsbench's fix-build-google-auto ships environment/skills/<name>/skill.md:
    # on Linux no agent finds it. Two such tasks beside a good one: both are named, nothing runs.
    tasks = tmp_path / "tasks"
    make_task(tasks / "good")
    for bad in ("maven-a", "maven-b"):
        task = make_task(tasks / bad, skills=("maven-build-lifecycle",))
        skill = task / "environment" / "skills" / "maven-build-lifecycle"
        (skill / "SKILL.md").rename(skill / "skill.md")
    assert main(["run", str(tasks), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "2 of 3 suites cannot run, so none ran:" in err and not (tmp_path / "r.json").exists()
    for bad in ("maven-a", "maven-b"):
        assert (f"{tasks / bad / 'environment' / 'skills'}: holds no skill — the task's skills go in "
                "environment/skills/<name>/SKILL.md; maven-build-lifecycle/skill.md is not named exactly "
                "SKILL.md, which agents look for (rename it)") in err
