"""run_command: exit codes, output capping, stdin, limits, killing, and network isolation."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.isolation import detect_isolation
from skillab.sandbox.process import allow_commands, run_command, stop_all_commands

DEFAULT = detect_isolation(choose_sandbox(None))
ISOLATED = DEFAULT.network == "bwrap"
PID_ISOLATED = DEFAULT.pid_namespace
needs_netns = pytest.mark.skipif(not ISOLATED, reason=f"no isolation: {DEFAULT.detail}")
needs_pidns = pytest.mark.skipif(not PID_ISOLATED, reason="no pid namespace on this host")
# Both ways a command is contained: namespaces, and a bare process group.
CONTAINMENT = [pytest.param(True, id="isolated"), pytest.param(False, id="process-group")]


def run(command, cwd: Path, **kwargs):
    kwargs.setdefault("timeout_s", 10)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "TMPDIR": str(cwd)}
    isolate = kwargs.pop("isolate", True)
    backend = choose_sandbox(None if isolate else "none").backend
    return run_command(command, cwd=cwd, env=kwargs.pop("env", env), backend=backend, **kwargs)


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line mentions ``marker`` (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def gone(marker: str, within_s: float = 3.0) -> bool:
    """Whether no process carrying ``marker`` is left (SIGKILL lands asynchronously)."""
    until = time.monotonic() + within_s
    while processes_with(marker):
        if time.monotonic() > until:
            return False
        time.sleep(0.02)
    return True


def unique_sleep() -> tuple[str, str]:
    """A ``sleep`` argument no other process on the host has, and a marker to find it by."""
    token = str(uuid.uuid4().int % 10**9)
    return f"30.{token}", token


def test_exit_code_and_both_streams(tmp_path):
    result = run("echo out; echo err >&2; exit 3", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.completed and not result.timed_out and result.spawn_error is None
    assert result.describe() == "exit code 3"


def test_argv_is_not_shell_parsed(tmp_path):
    result = run(["printf", "%s|", "a b", "$HOME", "*"], tmp_path)
    assert result.stdout == "a b|$HOME|*|"


def test_missing_shell_command_is_exit_127_not_an_exception(tmp_path):
    result = run("no-such-command-skillab", tmp_path)
    assert result.completed and result.exit_code == 127


@pytest.mark.parametrize(
    "command, cwd_name",
    [
        (["no-such-program-skillab"], "."),
        (["./missing.sh"], "."),
        ("true", "missing-dir"),
        ("echo \0", "."),
        ([], "."),
    ],
)
def test_spawn_failures_are_reported_not_raised(tmp_path, command, cwd_name):
    result = run(command, tmp_path / cwd_name)
    assert result.spawn_error
    assert result.exit_code is None and not result.completed
    assert result.describe().startswith("could not start")


def test_death_by_signal_is_a_negative_code(tmp_path):
    result = run('exec python3 -c "import ctypes; ctypes.string_at(0)"', tmp_path)
    assert result.exit_code == -11
    assert not result.completed
    assert result.describe() == "killed by SIGSEGV"


@pytest.mark.parametrize("isolate", CONTAINMENT)
def test_timeout_kills_the_whole_group_including_term_trappers(tmp_path, isolate):
    plain, plain_marker = unique_sleep()
    _, trap_marker = unique_sleep()
    command = (
        f"sleep {plain} & "
        f"bash -c 'trap \"\" TERM; while :; do sleep 0.2; done' trapper-{trap_marker} & "
        "wait"
    )
    result = run(command, tmp_path, timeout_s=1, isolate=isolate)
    assert result.timed_out and result.exit_code is None and not result.completed
    assert result.describe().startswith("timed out after")
    assert gone(plain_marker) and gone(trap_marker)


@pytest.mark.parametrize("isolate", CONTAINMENT)
def test_background_processes_do_not_outlive_the_command(tmp_path, isolate):
    duration, marker = unique_sleep()
    result = run(f"sleep {duration} & echo started", tmp_path, isolate=isolate)
    # Returns at once although the background sleep still holds stdout open.
    assert result.completed and result.stdout == "started\n"
    assert gone(marker)


@pytest.mark.parametrize("isolate", CONTAINMENT)
def test_a_stop_while_commands_start_leaves_none_running(tmp_path, isolate):
    """Commands start side by side, outside the lock that a stop takes; one that was starting
    when the stop came is killed before anyone watches it, and later ones never start."""
    duration, marker = unique_sleep()
    backend = choose_sandbox(None if isolate else "none").backend
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    results = []

    def one() -> None:
        results.append(run_command(f"sleep {duration}", cwd=tmp_path, env=env, timeout_s=60, backend=backend))

    threads = [threading.Thread(target=one) for _ in range(24)]
    try:
        for index, thread in enumerate(threads):
            thread.start()
            if index == 8:
                # A few are running or starting now; the rest start while or after it lands.
                while not processes_with(marker):
                    time.sleep(0.005)
                stop_all_commands()
        for thread in threads:
            thread.join(30)
        assert not any(thread.is_alive() for thread in threads)
    finally:
        allow_commands()
    assert len(results) == 24 and not any(result.completed for result in results)
    assert gone(marker)


@needs_pidns
def test_processes_that_leave_the_group_die_with_the_namespace(tmp_path):
    duration, marker = unique_sleep()
    result = run(f"setsid sleep {duration} > /dev/null 2>&1 < /dev/null & echo ok", tmp_path)
    assert result.stdout == "ok\n"
    assert gone(marker)


def test_output_is_capped_head_and_tail_while_draining_both_streams(tmp_path):
    command = (
        "printf START; head -c 3000000 /dev/zero | tr '\\0' a; printf END; "
        "head -c 3000000 /dev/zero | tr '\\0' b >&2"
    )
    result = run(command, tmp_path, output_limit=1000)
    assert result.completed and result.truncated
    assert result.stdout.startswith("STARTaaa") and result.stdout.endswith("aaaEND")
    assert "bytes omitted" in result.stdout
    assert len(result.stdout) < 1100 and len(result.stderr) < 1100


def test_output_under_the_limit_is_whole_and_invalid_utf8_is_replaced(tmp_path):
    result = run("printf 'caf\\xc3\\xa9 \\xff end'", tmp_path, output_limit=100)
    assert not result.truncated
    assert result.stdout == "café \ufffd end"


def test_stdin_is_fed_without_blocking(tmp_path):
    big = "x" * 1_000_000
    assert run("wc -c", tmp_path, stdin=big).stdout.strip() == "1000000"
    # A command that never reads its stdin does not hang the writer.
    assert run("true", tmp_path, stdin=big).completed
    assert run("cat", tmp_path, stdin="héllo").stdout == "héllo"


def test_stdin_is_empty_by_default_not_the_runners(tmp_path):
    # The runner's own stdin carries data; a command must not see it.
    script = (
        "import os, sys; from pathlib import Path; from skillab.sandbox.process import run_command;"
        "from skillab.sandbox.backend import default_backend;"
        "r = run_command('cat', cwd=Path(sys.argv[1]), env={'PATH': os.environ['PATH']}, timeout_s=5,"
        " backend=default_backend());"
        "print(repr(r.stdout))"
    )
    runner = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        input="the runner's stdin",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert runner.stdout.strip() == "''", runner.stderr


def test_resource_limits_are_set_and_cannot_be_raised(tmp_path):
    result = run(
        "ulimit -c; ulimit -Hn; ulimit -f; ulimit -v; ulimit -t; ulimit -n 100000 2>/dev/null || echo refused",
        tmp_path,
        timeout_s=20,
    )
    core, files, fsize, address, cpu, raised = result.stdout.split()
    assert core == "0" and int(files) <= 1024
    assert int(fsize) <= 1 << 20 and int(address) <= 8 << 20
    assert cpu != "unlimited" and int(cpu) >= 20
    assert raised == "refused"


def test_environment_is_exactly_the_one_given(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLAB_RUNNER_ONLY", "leak")
    result = run("env", tmp_path, env={"PATH": "/usr/bin:/bin", "ONLY": "this"})
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert "SKILLAB_RUNNER_ONLY" not in names
    assert "ONLY" in names


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


CONNECT = 'python3 -c "import socket; socket.create_connection((\'127.0.0.1\', {port}), timeout=3)"'


@needs_netns
def test_network_is_unreachable_when_isolated(tmp_path, listener):
    result = run(CONNECT.format(port=listener), tmp_path)
    assert result.completed and result.exit_code != 0
    assert "Error" in result.stderr


def test_the_network_probe_connects_without_isolation(tmp_path, listener):
    # The control for the test above: the same command does reach the listener.
    result = run(CONNECT.format(port=listener), tmp_path, isolate=False)
    assert result.exit_code == 0, result.stderr


def test_sandbox_none_is_recorded_as_unsandboxed():
    isolation = detect_isolation(choose_sandbox("none"))
    assert isolation.network == "none" and isolation.unsandboxed is True
