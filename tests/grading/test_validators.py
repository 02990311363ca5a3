"""Validators: the exit-code verdict table, the staged response, and what a validator can reach."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from skillab.core.wire import to_wire
from skillab.grading.validators import ENV_TEXT_LIMIT, OUTPUT_LIMIT, RESPONSE_FILE, run_validators
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.isolation import detect_isolation
from skillab.sandbox.workspace import Workspace
from skillab.suite.model import ValidatorSpec

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-validator-leak-AAAA1111",
    "OPENAI_API_KEY": "sk-proj-validator-leak-BBBB2222",
    "GITHUB_TOKEN": "ghp_validatorleakCCCC3333dddd4444eeee",
}



def validate(workspace, cmd, response="the answer", **spec):
    return run_validators([ValidatorSpec(cmd=cmd, **spec)], workspace, response)[0]


@pytest.mark.parametrize(
    "cmd, expect, passed, errored",
    [
        ("exit 0", 0, True, False),
        ("exit 1", 0, False, False),
        ("exit 1", 1, True, False),
        ("exit 0", 1, False, False),
        ("exit 2", 0, False, True),
        ("exit 2", 2, True, False),
        ("exit 3", 1, False, True),
        ("no-such-grader-skillab", 0, False, True),  # 127 from the shell
        ('exec python3 -c "import ctypes; ctypes.string_at(0)"', 0, False, True),  # SIGSEGV
        ("echo \0", 0, False, True),  # cannot be spawned
    ],
)
def test_exit_code_verdicts(workspace, cmd, expect, passed, errored):
    result = validate(workspace, cmd, expect_exit_code=expect)
    assert (result.passed, result.errored) == (passed, errored)
    assert result.expect_exit_code == expect


def test_a_validator_that_runs_too_long_is_ungraded_and_killed(workspace):
    result = validate(workspace, "sleep 30 & sleep 30; wait", timeout_s=0.5)
    assert not result.passed and result.errored
    assert result.exit_code is None
    assert "timed out" in result.stderr


def test_results_record_output_exit_code_and_label(workspace):
    result = validate(workspace, "echo looked; echo hmm >&2; exit 1", label="checks output")
    assert result.label == "checks output"
    assert (result.exit_code, result.stdout, result.stderr) == (1, "looked\n", "hmm\n")
    assert result.duration_ms >= 0
    assert to_wire(result)["exit_code"] == 1


def test_validator_output_is_capped(workspace):
    result = validate(workspace, "head -c 1000000 /dev/zero | tr '\\0' x")
    assert result.passed
    assert len(result.stdout) < OUTPUT_LIMIT + 100


def test_response_is_staged_as_file_and_environment(workspace):
    response = "SELECT * FROM users;\n-- it's \"quoted\" $HOME `x`"
    result = validate(
        workspace, f'test "$(cat {RESPONSE_FILE})" = "$RESPONSE_TEXT" && grep -q SELECT response.txt',
        response=response,
    )
    assert result.passed, result.stderr
    assert (workspace.root / RESPONSE_FILE).read_text() == response


def test_long_responses_stay_whole_in_the_file_and_are_cut_in_the_environment(workspace):
    response = "é" * 200_000  # 400,000 UTF-8 bytes: more than one environment string may hold
    result = validate(workspace, "wc -c < response.txt; printf %s \"$RESPONSE_TEXT\" | wc -c", response=response)
    assert result.passed, result.stderr
    file_bytes, env_bytes = (int(n) for n in result.stdout.split())
    assert file_bytes == 400_000
    assert 0 < env_bytes <= ENV_TEXT_LIMIT and env_bytes % 2 == 0  # cut between characters


def test_a_response_with_nul_bytes_still_runs_validators(workspace):
    result = validate(workspace, 'test "$RESPONSE_TEXT" = "ab" && test "$(wc -c < response.txt)" = 3', response="a\0b")
    assert result.passed, result.stderr


def test_a_planted_response_link_is_replaced_not_followed(workspace, tmp_path):
    target = tmp_path / "host-file"
    target.write_text("keep me")
    (workspace.root / RESPONSE_FILE).symlink_to(target)
    assert validate(workspace, "grep -q answer response.txt").passed
    assert target.read_text() == "keep me"


def test_validators_run_in_the_workspace_with_home_and_tmpdir_inside(workspace):
    workspace.write_files({"output.json": "{}"})
    result = validate(
        workspace,
        'test -f output.json && case "$HOME:$TMPDIR" in "$PWD"/*:"$PWD"/*) exit 0;; *) exit 1;; esac',
    )
    assert result.passed, result.stderr


def test_spec_env_reaches_the_validator_but_secret_names_do_not(workspace):
    env = (("AI_OUTPUT_FILE", "out.txt"), ("GRADER_API_KEY", "k-123456789"), ("GITHUB_TOKEN", "t-123456789"))
    result = validate(workspace, "env", env=env)
    assert "AI_OUTPUT_FILE=out.txt" in result.stdout
    assert "GRADER_API_KEY" not in result.stdout and "GITHUB_TOKEN" not in result.stdout


def test_a_validator_cannot_read_the_runners_keys(workspace, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    # A spec that tries to forward a key under an innocent name is caught by its value.
    env = (("FORWARDED", SECRETS["OPENAI_API_KEY"]),)
    cmd = (
        'env; cat /proc/self/environ | tr "\\0" "\\n"; '
        'echo "$ANTHROPIC_API_KEY $OPENAI_API_KEY $GITHUB_TOKEN $FORWARDED"'
    )
    result = validate(workspace, cmd, env=env)
    assert result.passed
    for value in SECRETS.values():
        assert value not in result.stdout and value not in result.stderr


@pytest.fixture
def key_holder():
    """A host process started with a key in its environment, as the runner's parent shell is."""
    env = {"PATH": os.environ.get("PATH", ""), "ANTHROPIC_API_KEY": SECRETS["ANTHROPIC_API_KEY"]}
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    yield holder
    holder.kill()
    holder.wait()


SCAN_PROC = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c validator-leak || true"


@pytest.mark.skipif(not detect_isolation(choose_sandbox(None)).pid_namespace, reason="no pid namespace on this host")
def test_a_validator_cannot_read_other_processes_environments(workspace, key_holder):
    assert validate(workspace, SCAN_PROC).stdout.strip() == "0"


def test_without_namespaces_the_proc_scan_finds_the_key(tmp_path, key_holder, unsandboxed):
    # The control for the test above: the scan is able to find the key when /proc is shared.
    workspace = Workspace.create(tmp_path / "arms", "arm", backend=unsandboxed)
    assert validate(workspace, SCAN_PROC).stdout.strip() != "0"


def test_no_validators_stage_nothing(workspace):
    assert run_validators([], workspace, "text") == []
    assert not (workspace.root / RESPONSE_FILE).exists()
