"""The attacks of issue #9, each run as a suite command or an agent tool would run it.

Each test is an attack that succeeds wherever the host filesystem is in a command's view or hidden
paths are covered by mounts the command can undo, and that the kernel refuses under the ``bwrap``
backend; those marked ``on_both`` run again under the
``image`` backend (a busybox image, see ``image_kit``). Each is bounded: small counts, short
timeouts, and limits lowered for the bombs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillab.core.checks import GraderResult
from skillab.core.records import ArmRecord
from skillab.engine.against import open_original
from skillab.engine.cache import BaselineCache
from skillab.errors import UsageError
from skillab.grading.validators import run_validators
from skillab.sandbox.backend import Backend, choose_sandbox
from skillab.sandbox.image import STORE_ENV, image_sandbox
from skillab.sandbox.limits import MAX_PIDS_ENV, MEMORY_MB_ENV, cgroup_support
from skillab.sandbox.workspace import Workspace, run_in
from skillab.suite.model import ValidatorSpec

from ..image_kit import BUSYBOX, build_base, write_environment
from ..skillgen import make_skill

pytestmark = pytest.mark.skipif(
    choose_sandbox(None).backend.name != "bwrap", reason=f"bwrap does not work here: {choose_sandbox(None).reason}"
)
needs_cgroup = pytest.mark.skipif(
    cgroup_support() is None, reason="no writable pids cgroup on this host: processes are unbounded"
)
SECRET = "sk-ant-api03-" + "RunnerSecret" * 4
IMAGE_POSSIBLE = os.geteuid() == 0 and BUSYBOX is not None and shutil.which("buildah") is not None
on_both = pytest.mark.parametrize("backend", [
    "bwrap",
    pytest.param("image", marks=pytest.mark.skipif(not IMAGE_POSSIBLE,
                                                   reason="needs root, buildah and busybox")),
], indirect=True)


@pytest.fixture(scope="module")
def image_store(tmp_path_factory) -> Path:
    return build_base(tmp_path_factory.mktemp("images"))


@pytest.fixture
def backend(request, tmp_path, monkeypatch) -> Iterator[Backend]:
    """The backend the test's arms run their commands under: bwrap, or bwrap on a task's image."""
    if request.param == "bwrap":
        yield choose_sandbox("bwrap").backend
        return
    monkeypatch.setenv(STORE_ENV, str(request.getfixturevalue("image_store")))
    with image_sandbox(write_environment(tmp_path / "environment")) as choice:
        yield choice.backend


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository holding a committed skill, like the checkout a run starts from."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    make_skill(repo / "skills", [], body="FINGERPRINT-OF-THE-SKILL: use the papaya method.")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skill")
    return repo


@pytest.fixture
def arms(request, tmp_path: Path) -> tuple[Workspace, Workspace]:
    """Two arms' workspaces, under the test's ``backend`` where it has one (bwrap otherwise)."""
    backend = request.getfixturevalue("backend") if "backend" in request.fixturenames else None
    run_dir = tmp_path / "run"
    return (Workspace.create(run_dir, "with_skill", backend=backend),
            Workspace.create(run_dir, "without_skill", backend=backend))


def agent(workspace: Workspace, command: str, **kwargs) -> str:
    result = run_in(workspace.root, command, timeout_s=kwargs.pop("timeout_s", 20), backend=workspace.backend,
                    **kwargs)
    return result.stdout + result.stderr


@on_both
def test_unmounting_everything_reveals_no_hidden_skill(arms, checkout, backend):
    _, baseline = arms
    skill = checkout / "skills" / "demo-skill"
    out = agent(baseline,
                "for m in $(awk '{print $5}' /proc/self/mountinfo | sort -r); do umount -l $m; done "
                f"2>/dev/null; cat {skill}/SKILL.md; ls -A {skill}; echo END",
                hide=(skill,))
    assert "FINGERPRINT-OF-THE-SKILL" not in out and "eval.yaml\n" not in out
    assert "END" in out
    assert str(skill) not in Path("/proc/self/mountinfo").read_text()  # nothing was covered


@on_both
def test_the_runners_environment_is_unreadable_through_proc(arms, monkeypatch, backend):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                              env={**os.environ, "ANTHROPIC_API_KEY": SECRET})
    try:
        out = agent(arms[1], "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | "
                             "tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'")
    finally:
        holder.kill()
        holder.wait()
    assert SECRET not in out and "RunnerSecret" not in out
    assert int(out.strip().splitlines()[-1]) <= 4  # bwrap's init, bash, and its pipeline


def test_git_show_of_the_skill_fails_from_the_baseline(arms, checkout):
    out = agent(arms[1], f"git -C {checkout} show HEAD:skills/demo-skill/SKILL.md; "
                         f"cat {checkout}/.git/HEAD; echo END")
    assert "FINGERPRINT-OF-THE-SKILL" not in out and "refs/heads" not in out


@on_both
def test_the_checkouts_git_config_cannot_be_written(arms, checkout, backend):
    config = checkout / ".git" / "config"
    before = config.read_text()
    for run in (lambda c: arms[0].run(c, timeout_s=20), lambda c: agent(arms[0], c)):
        run(f"git -C {checkout} config remote.origin.uploadpack 'touch /tmp/pwned'; "
            f"echo '[core] fsmonitor = touch /tmp/pwned' >> {config}")
    assert config.read_text() == before


def test_a_git_planted_in_the_virtualenv_never_runs_on_the_host(checkout, tmp_path, monkeypatch):
    planted = tmp_path / "venv-bin"
    planted.mkdir()
    marker = tmp_path / "planted-git-ran"
    (planted / "git").write_text(f"#!/bin/sh\ntouch {marker}\nexec /usr/bin/git \"$@\"\n")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    # A sandboxed command cannot plant one either: the runner's virtualenv is not in its view.
    ws = Workspace.create(tmp_path / "run", "arm")
    out = agent(ws, f"echo 'touch {marker}' > {sys.prefix}/bin/git 2>&1; ls {sys.prefix}; echo END")
    assert not (Path(sys.prefix) / "bin" / "git").exists() and "pyvenv.cfg" not in out
    with open_original("HEAD", checkout / "skills" / "demo-skill") as original:
        assert "FINGERPRINT-OF-THE-SKILL" in original.skill.body
    assert not marker.exists()


def test_a_git_config_payload_never_runs_on_the_host(checkout, tmp_path):
    marker = tmp_path / "payload-ran"
    git(checkout, "remote", "add", "origin", str(checkout))
    git(checkout, "config", "remote.origin.uploadpack", f"touch {marker}; git-upload-pack")
    git(checkout, "config", "core.fsmonitor", f"touch {marker}; false")
    git(checkout, "config", "core.hooksPath", str(tmp_path))
    with pytest.raises(UsageError):
        # An unknown ref makes skillab fetch from origin: the path a payload would run on.
        with open_original("no-such-ref", checkout / "skills" / "demo-skill"):
            pass
    assert not marker.exists()


@on_both
def test_the_cache_and_history_cannot_be_edited(arms, tmp_path, backend):
    cache = BaselineCache(tmp_path / "cache")
    record = ArmRecord(passed=False, errored=False, validator_results=[])
    record.graders = [GraderResult("contains", "x", passed=False, reason="")]
    cache.put("scope", "key", record)
    entry = tmp_path / "cache" / "scope" / "key.json"
    history = tmp_path / ".skillab" / "history.jsonl"
    history.parent.mkdir()
    history.write_text('{"format": "skillab.history/1"}\n')
    before = entry.read_text(), history.read_text()
    agent(arms[0], f"sed -i 's/\"passed\": false/\"passed\": true/' {entry}; "
                   f"echo forged >> {history}")
    assert (entry.read_text(), history.read_text()) == before


@on_both
def test_the_cache_key_cannot_be_read_from_a_sandbox(arms, tmp_path, backend):
    from skillab.engine.cache import key_file

    BaselineCache(tmp_path / "cache").put("scope", "key", ArmRecord(passed=True, errored=False))
    secret = key_file().read_text().strip()
    out = agent(arms[0], f"cat {key_file()}; ls -A {key_file().parent}; echo END")
    assert "END" in out and secret[:16] not in out


def test_a_tampered_cache_entry_is_skipped_with_a_warning(tmp_path):
    cache = BaselineCache(tmp_path / "cache")
    record = ArmRecord(passed=False, errored=False)
    record.graders = [GraderResult("contains", "x", passed=False, reason="")]
    cache.put("scope", "key", record)
    entry = tmp_path / "cache" / "scope" / "key.json"
    data = json.loads(entry.read_text())
    data["record"]["passed"] = True  # the edit that turned a baseline fail into a +100 pts lift
    entry.write_text(json.dumps(data))
    assert cache.get("scope", "key") is None
    assert "signature does not match" in cache.warnings[0]
    (tmp_path / "cache" / "scope" / "other.json").write_text(entry.read_text())
    assert cache.get("scope", "other") is None  # an entry copied into another slot
    entry.write_text("{not json")
    assert cache.get("scope", "key") is None and len(cache.warnings) == 3


@on_both
def test_links_out_of_the_workspace_reach_nothing(arms, tmp_path, backend):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-ONLY")
    out = agent(arms[0], f"ln -s {secret} soft; cat soft; ln {secret} hard; cat hard; echo END")
    assert "HOST-ONLY" not in out
    assert os.stat(secret).st_nlink == 1
    assert arms[0].check_links() == ["soft"]  # the dangling link is flagged on the host


@on_both
def test_the_other_arms_workspace_is_not_in_view(arms, backend):
    mine, theirs = arms
    theirs.write_files({"answer.txt": "THEIR-LIVE-WORK"})
    result = run_in(mine.root, f"cat {theirs.root}/answer.txt; ls -A {theirs.root.parent.parent}",
                    timeout_s=20, backend=mine.backend)
    assert "THEIR-LIVE-WORK" not in result.stdout + result.stderr
    assert theirs.root.parent.name not in result.stdout


@on_both
def test_a_credential_file_in_the_runners_home_is_not_in_view(arms, tmp_path, monkeypatch, backend):
    home = tmp_path / "runner-home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = RUNNER-AWS-SECRET")
    monkeypatch.setenv("HOME", str(home))
    result = run_in(arms[0].root, f"cat {home}/.aws/credentials; ls -A {Path.home()} {home}",
                    timeout_s=20, backend=arms[0].backend)
    assert "RUNNER-AWS-SECRET" not in result.stdout + result.stderr
    assert ".aws" not in result.stdout


def test_a_validator_has_no_network(arms):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:  # closed at the end of the test: nothing connected
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        spec = ValidatorSpec(
            cmd=f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\"",
            label="exfiltrate",
        )
        [result] = run_validators([spec], arms[0], "answer")
    finally:
        server.close()
    assert not result.passed and not accepted


@needs_cgroup
def test_a_fork_bomb_is_bounded_and_the_other_arm_still_runs(arms, monkeypatch):
    monkeypatch.setenv(MAX_PIDS_ENV, "64")
    bomb = ("python3 -c \"import os, time\nn = 0\ntry:\n    while n < 500:\n"
            "        if os.fork() == 0:\n            time.sleep(20); os._exit(0)\n        n += 1\n"
            "except OSError:\n    pass\nprint('forked', n)\"")
    result = run_in(arms[0].root, bomb, timeout_s=30)
    forked = int(result.stdout.split()[-1])
    assert forked < 64
    assert run_in(arms[1].root, "echo alive", timeout_s=20).stdout == "alive\n"


@needs_cgroup
def test_a_memory_bomb_is_killed_at_the_limit(arms, monkeypatch):
    if "memory" not in (cgroup_support().parents if cgroup_support() else {}):
        pytest.skip("no memory cgroup on this host")
    monkeypatch.setenv(MEMORY_MB_ENV, "64")
    result = run_in(arms[0].root, "python3 -c \"b = bytearray(512 << 20); print('allocated')\"",
                    timeout_s=30)
    assert "allocated" not in result.stdout
    assert not (result.completed and result.exit_code == 0)


@on_both
def test_a_skill_inside_a_mounted_directory_is_covered_and_stays_covered(arms, tmp_path, backend):
    tools = tmp_path / "tools"
    skill = make_skill(tools, [], body="FINGERPRINT-OF-THE-SKILL inside a mounted tree.")
    (tools / "other.txt").write_text("VISIBLE")
    out = agent(arms[1], f"for m in $(awk '{{print $5}}' /proc/self/mountinfo | sort -r); do "
                         f"umount -l $m; umount $m; done 2>/dev/null; cat {tools}/other.txt; "
                         f"cat {skill}/SKILL.md; ls -A {skill}", read_only=(tools,), hide=(skill,))
    assert "VISIBLE" in out and "FINGERPRINT-OF-THE-SKILL" not in out and "eval.yaml" not in out


def test_a_system_python_is_not_covered_but_a_virtualenv_inside_the_system_is(monkeypatch):
    from skillab.sandbox.bwrap import _covers
    from skillab.sandbox.view import View

    view = View(Path("/tmp/ws"), Path("/tmp/ws"))
    monkeypatch.setattr(sys, "prefix", "/usr/local")
    monkeypatch.setattr(sys, "base_prefix", "/usr/local")
    assert "/usr/local" not in _covers(view, ["/usr"])
    monkeypatch.setattr(sys, "prefix", "/usr/local/venvs/skillab")
    assert "/usr/local/venvs/skillab" in _covers(view, ["/usr"])


def test_an_agent_steps_detached_writer_cannot_change_the_validators_verdict(arms):
    # The boundary between one command of an arm and the next (agent steps, then validators in
    # the same workspace): every command's pid namespace ends with it, so nothing it started
    # is still running when the next one looks.
    ws = arms[0]
    forge = "sleep 0.4; echo forged > response.txt; echo forged > verdict.txt"
    out = agent(ws, f"setsid nohup sh -c '{forge}' >/dev/null 2>&1 & disown; echo started")
    assert out == "started\n"
    check = ValidatorSpec(cmd="sleep 1; grep -qx answer response.txt && ! test -e verdict.txt",
                          label="unforged")
    [result] = run_validators([check], ws, "answer")
    assert result.passed, result.stderr
    assert not (ws.root / "verdict.txt").exists()


@on_both
def test_every_command_runs_under_the_seccomp_filter(arms, backend):
    # The keyring probes (tests/sandbox/test_kernel_state.py) need a Python the busybox image lacks; the
    # kernel's own count of filters says the same under both backends.
    outside = int(re.search(r"Seccomp_filters:\s*(\d+)", Path("/proc/self/status").read_text()).group(1))
    out = agent(arms[0], "grep Seccomp_filters /proc/self/status")
    inside = int(re.search(r"Seccomp_filters:\s*(\d+)", out).group(1))
    assert inside == outside + 1, out
