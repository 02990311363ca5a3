"""prepare: files before commands, stop at the first failure, refuse escaping paths."""

from __future__ import annotations

import pytest

from skillab.sandbox.setup import prepare
from skillab.suite.model import Setup


def test_files_are_written_before_commands_run(workspace):
    setup = Setup(
        files={"seed.sql": "create table t(x);", "data/rows.csv": "a\n"},
        commands=("test -f seed.sql && cp data/rows.csv copy.csv", "wc -l < copy.csv"),
    )
    result = prepare(workspace, setup)
    assert result.ok and result.error is None
    assert [c.exit_code for c in result.commands] == [0, 0]
    assert result.commands[1].stdout.strip() == "1"
    assert (workspace.root / "copy.csv").read_text() == "a\n"


def test_the_first_failing_command_stops_setup_and_is_named(workspace):
    setup = Setup(commands=("true", "echo boom >&2; exit 3", "touch never"))
    result = prepare(workspace, setup)
    assert not result.ok
    assert len(result.commands) == 2
    assert "'echo boom >&2; exit 3'" in result.error
    assert "exit code 3" in result.error and "boom" in result.error
    assert not (workspace.root / "never").exists()


def test_a_command_that_runs_too_long_fails_setup(workspace):
    result = prepare(workspace, Setup(commands=("sleep 30",)), timeout_s=0.5)
    assert not result.ok and "timed out" in result.error
    assert result.commands[0].timed_out


def test_a_command_killed_by_a_signal_fails_setup(workspace):
    result = prepare(workspace, Setup(commands=('exec python3 -c "import os; os.abort()"',)))
    assert not result.ok


@pytest.mark.parametrize("rel", ["../escape.txt", "/tmp/skillab-absolute.txt", "a/../../b"])
def test_escaping_file_paths_are_refused_before_anything_runs(workspace, rel):
    setup = Setup(files={"fine.txt": "x", rel: "y"}, commands=("touch ran",))
    result = prepare(workspace, setup)
    assert not result.ok and "refused" in result.error and repr(rel) in result.error
    assert result.commands == []
    assert not (workspace.root / "fine.txt").exists()
    assert not (workspace.root / "ran").exists()
    assert not (workspace.root.parent / "escape.txt").exists()


def test_a_file_path_through_a_link_out_is_refused(workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace.root / "link").symlink_to(outside)
    result = prepare(workspace, Setup(files={"link/planted.txt": "x"}))
    assert not result.ok and "symbolic link" in result.error
    assert not (outside / "planted.txt").exists()


def test_a_file_that_cannot_be_written_fails_setup(workspace):
    (workspace.root / "taken").write_text("a file, not a directory")
    result = prepare(workspace, Setup(files={"taken/inner.txt": "x"}))
    assert not result.ok and "could not be written" in result.error


def test_setup_commands_get_the_scrubbed_environment(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-setup-leak-0123456789")
    result = prepare(workspace, Setup(commands=("env > env.txt",)))
    assert result.ok
    assert "sk-ant-setup-leak" not in (workspace.root / "env.txt").read_text()


def test_a_key_set_after_the_arm_started_is_still_kept_out_of_a_commands_extra_env(workspace, monkeypatch):
    # The allowlisted variables are read once per arm; the secret values an extra entry is
    # checked against are read at each command.
    result = workspace.run("true", timeout_s=30, extra_env={"EARLY": "x"})
    assert result.exit_code == 0
    monkeypatch.setenv("LATE_API_KEY", "late-secret-value-0123456789")
    result = workspace.run("env", timeout_s=30, extra_env={"CARRIER": "late-secret-value-0123456789",
                                                           "PLAIN": "kept"})
    assert "late-secret-value" not in result.stdout and "PLAIN=kept" in result.stdout
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert "LATE_API_KEY" not in workspace.run("env", timeout_s=30).stdout
