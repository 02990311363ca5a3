"""SkillsBench v1.1 / BenchFlow schema 1.3 ``task.md`` packages: the ``sandbox:`` block, the
``BENCHFLOW_*`` variables their verifiers read, ``${VAR:-/abs}`` defaults, verifier deps guarded
by ``BENCHFLOW_SKIP_VERIFIER_DEPS``, and the caller's python3 for the verifier.

The verifier shapes are those of BenchFlow's ``docs/examples/task-md/real-skillsbench`` tasks
(benchflow-ai/benchflow @ 62cc7e417c67ed6aaab2dc50a0bb642b2b77a3d2, Apache-2.0).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.formats.skillsbench.verifier_deps import read_needs
from skillab.suite import load_suite

from .test_skillsbench import make_task, task_md

V13 = """\
---
schema_version: "1.3"
metadata:
  difficulty: medium
verifier:
  timeout_sec: 60
agent:
  timeout_sec: 120
sandbox:
  cpus: 1
  memory_mb: 2048
{extra}---
"""
# BenchFlow's v1.1 verifier, as the real tasks write it (pytest replaced by a python3 import of
# the package it guards, so the test needs nothing from PyPI).
GUARDED_PIP = """\
#!/bin/bash
VERIFIER_DIR="${BENCHFLOW_VERIFIER_DIR:-/verifier}"
REWARD_TEXT="${BENCHFLOW_REWARD_TEXT:-/logs/verifier/reward.txt}"
REWARD_JSON="${BENCHFLOW_REWARD_JSON:-/logs/verifier/reward.json}"
mkdir -p "$(dirname "$REWARD_TEXT")" "$(dirname "$REWARD_JSON")"
if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" != "1" ]; then
  pip3 install --break-system-packages skillab-probe-pkg==1.0
fi
if python3 -c 'import skillab_probe_pkg' && test -f "${BENCHFLOW_WORKSPACE:-/root}/out.txt"; then
  printf '1.0\\n' > "$REWARD_TEXT"
else
  printf '0.0\\n' > "$REWARD_TEXT"
fi
"""
GUARDED_UVX = """\
#!/bin/bash
CTRF_JSON="${BENCHFLOW_REWARD_DETAILS_JSON:-${BENCHFLOW_CTRF_JSON:-/logs/verifier/ctrf.json}}"
if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" = "1" ]; then
  "$PYTEST_BIN" --ctrf "$CTRF_JSON" "$VERIFIER_DIR/test_outputs.py" -rA -v
else
  apt-get update
  apt-get install -y curl
  curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh
  uvx \\
    --with pytest==8.4.1 \\
    --with pytest-json-ctrf==0.3.5 \\
    --with openpyxl==3.1.5 \\
    pytest --ctrf "$CTRF_JSON" "$VERIFIER_DIR/test_outputs.py" -rA -v
fi
"""


def _v13(extra: str = "") -> str:
    return task_md(V13.format(extra=extra))


# --- the sandbox: block ----------------------------------------------------------------------


@pytest.mark.parametrize("extra, reason", [
    ("  allow_internet: true\n", "sandbox.allow_internet: true"),
    ("  network_mode: public\n", "sandbox.network_mode = 'public'"),
    ("  network_mode: allowlist\n  allowed_hosts: [api.crossref.org]\n", "sandbox.network_mode = 'allowlist'"),
    ("  allowlist: [doi.org]\n", "sandbox.allowlist = 'allowlist'"),
    ("  docker_image: ghcr.io/org/task:1\n", "sandbox.docker_image"),
    ("  gpus: 1\n", "sandbox.gpus"),
])
def test_a_network_or_machine_declared_under_sandbox_is_not_missed(tmp_path, extra, reason):
    task = make_task(tmp_path / "t", _v13(extra))
    (case,) = load_suite(task).cases
    assert case.unsupported and reason in case.unsupported, case.unsupported


def test_no_network_under_sandbox_runs_offline_without_the_default_network_warning(tmp_path):
    suite = load_suite(make_task(tmp_path / "t", _v13("  network_mode: no-network\n")))
    assert suite.cases[0].unsupported is None
    assert not any("network" in w for w in suite.warnings), suite.warnings
    silent = load_suite(make_task(tmp_path / "u", _v13()))
    (warning,) = [w for w in silent.warnings if "network policy" in w]
    assert "under 'sandbox:'" in warning  # the advice names the key this file uses


def test_sandbox_resources_are_checked_and_a_larger_memory_says_how_to_give_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLAB_SANDBOX_MEMORY_MB", "1024")
    suite = load_suite(make_task(tmp_path / "t", _v13("  network_mode: no-network\n")))
    (warning,) = [w for w in suite.warnings if "memory_mb" in w]
    assert "sandbox.memory_mb = 2048" in warning and "SKILLAB_SANDBOX_MEMORY_MB=2048" in warning
    from skillab.errors import SuiteError

    with pytest.raises(SuiteError, match="sandbox.cpus"):
        load_suite(make_task(tmp_path / "u", task_md(V13.replace("cpus: 1", "cpus: many").format(extra=""))))


# --- what the verifier installs --------------------------------------------------------------


def test_guarded_installs_are_not_network_and_name_their_packages():
    needs = read_needs(GUARDED_UVX)
    assert needs.network == () and needs.guarded
    assert needs.guarded_packages == ("pytest", "pytest-json-ctrf", "openpyxl")
    assert read_needs(GUARDED_PIP).guarded_packages == ("skillab-probe-pkg",)
    one_line = '[ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" = "1" ] || pip install a==1\ncurl -s http://x\n'
    assert read_needs(one_line).guarded_packages == ("a",) and read_needs(one_line).network == ((2, "curl -s http://x"),)
    bare_uvx = ('if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" = "1" ]; then\n  pytest t.py\nelse\n'
                '  apt-get install -y curl\n  uvx --python 3.12 pytest t.py\nfi\n')
    assert read_needs(bare_uvx) == type(needs)((), ("pytest",), True)


def test_the_skip_variable_is_set_even_when_its_branch_installs_no_python_package(tmp_path):
    script = ('#!/bin/bash\nset -e\nmkdir -p /logs/verifier\n'
              'if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" != "1" ]; then\n  apt-get install -y jq\nfi\n'
              'test -f "$BENCHFLOW_WORKSPACE/out.txt" && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n')
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=script)
    (record,) = _run(task, tmp_path / "r.json")["cases"]
    assert record["outcome"] == "flip_to_pass", record["with_skill"]["extra"]["graders"]


def test_a_guarded_install_loads_as_a_runnable_case(tmp_path):
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=GUARDED_PIP)
    (case,) = load_suite(task).cases
    assert case.unsupported is None
    assert case.graders[0].guarded_packages == ("skillab-probe-pkg",)


# --- end to end: the caller's python3, the BENCHFLOW_* places --------------------------------


def _venv_with_probe(root: Path) -> Path:
    """A venv (no pip, no network) holding a package the system /usr does not have."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    site = next(root.glob("lib/python3*/site-packages"))
    (site / "skillab_probe_pkg.py").write_text("VALUE = 1\n")
    meta = site / "skillab_probe_pkg-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: skillab-probe-pkg\nVersion: 1.0\n")
    return root / "bin" / "python3"


def _run(task: Path, out: Path, *extra: str) -> dict:
    (task / "mock-responses.yaml").write_text(
        f"{task.name}:\n  with:\n    text: done\n    files:\n      out.txt: made\n  without:\n    text: nothing done\n")
    code = main(["run", str(task), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", str(out), *extra])
    assert code in (0, 1), code
    return json.loads(out.read_text())


def test_a_v11_verifier_grades_with_the_callers_python_and_writes_its_reward_in_the_workspace(tmp_path, monkeypatch):
    python = _venv_with_probe(tmp_path / "venv")
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", str(python))
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=GUARDED_PIP)
    doc = _run(task, tmp_path / "r.json")
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass", record
    assert record["with_skill"]["extra"]["graders"][0]["score"] == 1.0
    assert record["without_skill"]["extra"]["graders"][0]["score"] == 0.0


def test_without_the_package_the_arm_errors_naming_the_interpreter_and_what_lacks(tmp_path, monkeypatch):
    python = _venv_with_probe(tmp_path / "venv")
    for path in (tmp_path / "venv").rglob("skillab_probe_pkg*"):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", str(python))
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=GUARDED_PIP)
    doc = _run(task, tmp_path / "r.json")
    (record,) = doc["cases"]
    assert record["outcome"] == "error"
    reason = record["with_skill"]["extra"]["graders"][0]["reason"]
    assert "skillab-probe-pkg" in reason and "BENCHFLOW_SKIP_VERIFIER_DEPS=1" in reason
    assert f"python3 = {python}" in reason, reason


def test_the_callers_interpreter_is_mounted_read_only(tmp_path, monkeypatch):
    python = _venv_with_probe(tmp_path / "venv")
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", str(python))
    attack = ('#!/bin/bash\nmkdir -p /logs/verifier\n'
              'P=$(python3 -c "import skillab_probe_pkg, os; print(os.path.dirname(skillab_probe_pkg.__file__))")\n'
              'if echo pwned > "$P/planted.py"; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=attack)
    doc = _run(task, tmp_path / "r.json")
    for arm in ("with_skill", "without_skill"):
        assert doc["cases"][0][arm]["extra"]["graders"][0]["score"] == 0.0
    assert not list((tmp_path / "venv").rglob("planted.py"))


# BenchFlow's python reward writer shape: defaults that point outside the workspace, one of them
# (the artifact directory) a variable skillab never sets.
DEFAULTS_ONLY = """\
#!/usr/bin/env bash
set -euo pipefail
WORKSPACE="${BENCHFLOW_WORKSPACE:-/root}"
ARTIFACT_DIR="${BENCHFLOW_VERIFIER_ARTIFACT_DIR:-/logs/verifier/artifacts}"
mkdir -p "$ARTIFACT_DIR"
if [ -f "$WORKSPACE/out.txt" ]; then R=1; else R=0; fi
printf '{"reward": %s}' "$R" > "${BENCHFLOW_REWARD_JSON:-/logs/verifier/reward.json}"
printf '%s\\n' "$R" > "${BENCHFLOW_REWARD_DETAILS_JSON:-/logs/verifier/details.json}"
cp "$WORKSPACE/out.txt" "$ARTIFACT_DIR/" 2>/dev/null || true
"""


def test_shell_defaults_and_benchflow_places_land_in_the_workspace(tmp_path):
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=DEFAULTS_ONLY)
    doc = _run(task, tmp_path / "r.json")
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass", record["with_skill"]["extra"]["graders"]


def test_a_pytest_internal_error_is_no_verdict_not_a_fail(tmp_path):
    script = ('#!/bin/bash\nmkdir -p /logs/verifier\n'
              'echo "INTERNALERROR> AttributeError: \'TestReport\' object has no attribute \'start\'"\n'
              'echo 0.0 > /logs/verifier/reward.txt\n')
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=script)
    (record,) = _run(task, tmp_path / "r.json")["cases"]
    assert record["outcome"] == "error"
    reason = record["with_skill"]["extra"]["graders"][0]["reason"]
    assert "failed to start its tests (INTERNALERROR>" in reason and "python3 = " in reason


def test_a_fail_from_a_module_python3_lacks_names_the_interpreter(tmp_path, monkeypatch):
    python = _venv_with_probe(tmp_path / "venv")
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", str(python))
    script = ('#!/bin/bash\nmkdir -p /logs/verifier\n'
              'python3 -c "import no_such_tool_here" || { echo 0 > /logs/verifier/reward.txt; exit 0; }\n'
              'echo 1 > /logs/verifier/reward.txt\n')
    task = make_task(tmp_path / "t", _v13("  network_mode: no-network\n"), test_sh=script)
    (record,) = _run(task, tmp_path / "r.json")["cases"]
    reason = record["with_skill"]["extra"]["graders"][0]["reason"]
    assert reason.startswith("reward 0 < 1 (ModuleNotFoundError: No module named 'no_such_tool_here'")
    assert f"python3 = {python}" in reason
