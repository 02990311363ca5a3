"""Harbor: a suite exported as Harbor tasks, and a Harbor job's trials imported back.

Harbor (``pip install harbor``) needs Python 3.12 or newer, skillab 3.11. With a Harbor-capable
interpreter (``SKILLAB_HARBOR_PYTHON``, or ``.harbor-venv`` made by ``.ci/run``), Harbor's own
task loader validates the export and its own ``TrialResult`` model writes the trials
(``tests/harbor_models.py`` runs in that interpreter). The in-process checks hold the export and
the import to the task layout and result fields as Harbor's source defines them
(``harbor/models/task/task.py: Task.is_valid_dir``, ``harbor/models/trial/result.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from skillab.agents.mock import load_mock_responses
from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.harbor.export import MANIFEST
from skillab.scoring.summary import summarize

from ..results_golden import ROOT, assert_round_trip

SQL = ROOT / "examples" / "sql-migration-safety"
HARBOR_PYTHON = os.environ.get("SKILLAB_HARBOR_PYTHON") or (
    str(ROOT / ".harbor-venv" / "bin" / "python") if (ROOT / ".harbor-venv" / "bin" / "python").exists() else None)
needs_harbor = pytest.mark.skipif(HARBOR_PYTHON is None, reason="no Harbor-capable Python (3.12+ with "
                                  "harbor installed): set SKILLAB_HARBOR_PYTHON or run .ci/run")


def harbor(command: str, path: Path):
    """``tests/harbor_models.py`` in the Harbor interpreter: Harbor's own code on our files."""
    # -P: the script's directory (tests/, which holds tests/harbor/) must not shadow Harbor's package.
    proc = subprocess.run([HARBOR_PYTHON, "-P", str(Path(__file__).parent.parent / "harbor_models.py"), command,
                           str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
try:
    from harbor.models.task.task import Task as HarborTask
    from harbor.models.trial.result import TrialResult
except ImportError:  # Python 3.11: Harbor requires 3.12+
    HarborTask = TrialResult = None


def export(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    assert main(["export", "--harbor", str(tasks), str(SQL)]) == 0
    return tasks


def is_valid_task(task: Path) -> bool:
    if HarborTask is not None:
        return HarborTask.is_valid_dir(task)
    # Harbor's Task.is_valid_dir: task.toml parses, an environment, instruction.md, tests/test.sh.
    config = tomllib.loads((task / "task.toml").read_text())
    return (isinstance(config.get("version"), str) and (task / "environment" / "Dockerfile").is_file()
            and (task / "instruction.md").is_file() and os.access(task / "tests" / "test.sh", os.X_OK))


def test_each_case_and_arm_is_a_valid_harbor_task_with_the_skill_only_in_the_with_arm(tmp_path):
    tasks = export(tmp_path)
    manifest = json.loads((tasks / MANIFEST).read_text())
    assert manifest["skipped"] == {"reporting-query": "graded by the judge only; Harbor's verifier "
                                   "runs validators, not the judge"}
    assert len(manifest["cases"]) == 6
    for case in manifest["cases"]:
        with_task, without_task = (tasks / case["tasks"][arm] for arm in ("with_skill", "without_skill"))
        assert is_valid_task(with_task) and is_valid_task(without_task)
        with_config = tomllib.loads((with_task / "task.toml").read_text())
        without_config = tomllib.loads((without_task / "task.toml").read_text())
        assert with_config["environment"]["skills_dir"] == "/skills"
        assert "skills_dir" not in without_config["environment"]
        assert (with_task / "environment" / "skills" / "sql-migration-safety" / "SKILL.md").is_file()
        assert not list(without_task.rglob("SKILL.md"))
        assert "COPY skills/" not in (without_task / "environment" / "Dockerfile").read_text()
        # Both arms see the same instruction and the same graders.
        assert (with_task / "instruction.md").read_text() == (without_task / "instruction.md").read_text()
        assert (with_task / "tests" / "test.sh").read_text() == (without_task / "tests" / "test.sh").read_text()


@needs_harbor
def test_harbors_own_loader_accepts_every_exported_task(tmp_path):
    tasks = export(tmp_path)
    report = harbor("validate", tasks)
    assert len(report) == 12 and all(entry["valid"] for entry in report.values()), report
    for name, entry in report.items():
        arm = entry["metadata"]["skillab_arm"]
        assert name.endswith("--" + arm.replace("_", "-"))
        assert entry["skills_dir"] == ("/skills" if arm == "with_skill" else None)
        assert entry["instruction"] == (tasks / name / "instruction.md").read_text()


def trial(tasks: Path, task: str, number: int, reward: float | None, error: str | None = None) -> dict:
    """One trial's result.json, with the fields Harbor's TrialResult requires."""
    data = {
        "task_name": task, "trial_name": f"{task}__{number}", "trial_uri": f"file:///jobs/{task}__{number}",
        "task_id": {"path": str(tasks / task)}, "task_checksum": "0" * 64,
        "config": {"task": {"path": str(tasks / task)}, "trial_name": f"{task}__{number}"},
        "agent_info": {"name": "claude-code", "version": "2.0.0",
                       "model_info": {"name": "claude-sonnet-4-5", "provider": "anthropic"}},
        "agent_result": {"n_input_tokens": 1000, "n_output_tokens": 200, "cost_usd": 0.01},
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None if error is None else {
            "exception_type": "AgentTimeoutError", "exception_message": error,
            "exception_traceback": "", "occurred_at": "2026-11-22T10:00:05+00:00"},
        "started_at": f"2026-11-22T10:00:0{number}+00:00", "finished_at": f"2026-11-22T10:01:0{number}+00:00",
    }
    if TrialResult is not None:
        return json.loads(TrialResult.model_validate(data).model_dump_json())
    return data


@pytest.mark.parametrize("writer", ["fields", pytest.param("harbor", marks=needs_harbor)])
def test_a_harbor_job_imports_into_a_document_with_the_same_statistics(tmp_path, writer):
    tasks = export(tmp_path)
    job = tmp_path / "job"
    # (with reward, without reward) per run; None: the trial raised before the verifier.
    plan = {
        "add-optional-column": [(1, 0), (1, 0)],
        "drop-legacy-column": [(1, 0), (1, 1)],
        "index-on-large-table": [(1, 0), (1, 0)],
        "rename-column": [(0, 1), (0, 0)],
        "required-column-backfill": [(0, 0), (0, 0)],
        "create-audit-table": [(1, 1), (None, 1)],
    }
    results = [
        trial(tasks, f"{case}--{arm}", number, reward, None if reward is not None else "timed out")
        for case, runs in plan.items() for number, rewards in enumerate(runs)
        for arm, reward in zip(("with-skill", "without-skill"), rewards)
    ]
    if writer == "harbor":
        (tmp_path / "trials.json").write_text(json.dumps(results))
        results = harbor("trials", tmp_path / "trials.json")
    for result in results:
        if result["task_name"].startswith("rename-column--"):
            result["task_name"] = result["task_name"].replace("rename-column", "renamed-elsewhere")
        (job / result["trial_name"]).mkdir(parents=True)
        (job / result["trial_name"] / "result.json").write_text(json.dumps(result))
    output = tmp_path / "results.json"
    assert main(["import", "--harbor", str(job), "--output", str(output), "--json"]) == 0
    doc = json.loads(output.read_text())
    assert_round_trip(doc)
    # rename-column's trials name a task the export does not have: left out, and said so.
    assert doc["outcome_counts"] == {"flip_to_pass": 5, "pass_kept": 2, "fail_kept": 2,
                                     "flip_to_fail": 0, "error": 1}
    assert doc["runs"] == 2 and doc["total_cases"] == 10
    assert doc["pass_rate"] == {"with_skill": 0.7778, "without_skill": 0.2222, "delta_pts": 55.56}
    assert doc["adapter"]["name"] == "harbor" and doc["models"]["agent"] == "claude-sonnet-4-5"
    assert doc["warnings"] == [
        "case reporting-query was not exported to Harbor: graded by the judge only; Harbor's "
        "verifier runs validators, not the judge",
        "task renamed-elsewhere--with-skill is not in skillab-export.json; its 2 trial(s) were left out",
        "task renamed-elsewhere--without-skill is not in skillab-export.json; its 2 trial(s) were left out",
        "case rename-column has no Harbor trials"]
    errored = next(c for c in doc["cases"] if c["outcome"] == "error")
    assert errored["with_skill"]["error"] == "AgentTimeoutError: timed out"
    # The summary is the one a skillab run computes, statistics included.
    log = RunLog.from_json(doc)
    assert summarize(log.settings, log.records) == log


def _bwrap_works() -> bool:
    import shutil

    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "true"], capture_output=True)
    return probe.returncode == 0


def replay_verifier(task: Path, answer, scratch: Path) -> str:
    """The task's image and verifier outside a container: /root built from environment/ as the
    Dockerfile does (COPY, then the RUN lines), the mock agent's files and reply written as the
    instruction asks, tests/ at /tests and the verifier run with /root and /logs bound in a bwrap
    root; returns the reward it wrote."""
    import shutil

    root, logs = scratch / "root", scratch / "logs"
    shutil.copytree(task / "environment" / "workspace", root)
    logs.mkdir()
    runs = [line[4:] for line in (task / "environment" / "Dockerfile").read_text().splitlines()
            if line.startswith("RUN ")]
    agent = scratch / "agent"
    for rel, text in {**answer.files, "response.txt": answer.text}.items():
        (agent / rel).parent.mkdir(parents=True, exist_ok=True)
        (agent / rel).write_text(text)
    # Harbor copies tests/ to /tests and runs the script from there.
    # The RUN lines precede the agent; its files land after them, so they are written by a step.
    script = "\n".join([*runs, "cp -a /agent/. /root/", "bash /tests/test.sh"])
    box = ["bwrap", "--tmpfs", "/", *[a for d in ("/usr", "/bin", "/lib", "/lib64", "/etc")
                                       if Path(d).exists() for a in ("--ro-bind", d, d)],
           "--ro-bind", str(task / "tests"), "/tests", "--ro-bind", str(agent), "/agent",
           "--bind", str(root), "/root", "--bind", str(logs), "/logs", "--dev", "/dev",
           "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/root", "--setenv", "PATH", "/usr/bin:/bin",
           "bash", "-c", script]
    proc = subprocess.run(box, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return (logs / "verifier" / "reward.txt").read_text().strip()


@pytest.mark.skipif(not _bwrap_works(), reason="bwrap cannot make a sandbox here")
def test_the_exported_verifier_grades_each_arm_as_a_skillab_run_does(tmp_path):
    output = tmp_path / "results.json"
    assert main(["run", str(SQL), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", str(output)]) in (0, 1)
    doc = json.loads(output.read_text())
    tasks = export(tmp_path)
    manifest = json.loads((tasks / MANIFEST).read_text())
    script = load_mock_responses(SQL / "mock-responses.yaml")
    compared = 0
    for case in manifest["cases"]:
        record = next(r for r in doc["cases"] if r["case_name"] == case["name"])
        for arm, task in case["tasks"].items():
            expected = all(v["passed"] for v in record[arm]["validator_results"])
            answer = script[case["name"]]["with" if arm == "with_skill" else "without"]
            reward = replay_verifier(tasks / task, answer, tmp_path / task)
            assert reward == ("1" if expected else "0"), (case["name"], arm)
            compared += 1
    assert compared == 12
