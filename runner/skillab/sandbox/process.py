"""Running one command in the sandbox: the single place commands are spawned.

Setup commands, validators, graders, agent tools and agent CLIs all come through
``run_command``. The rules:

* the command runs under the sandbox backend it is given (``backend``), which decides what it sees;
* no command reaches a keyring another could: the seccomp filter refuses the key calls, and a
  command run without it starts with a fresh, empty session keyring (``keyring``);
* the environment is exactly ``env`` (callers pass a scrubbed one), stdin is empty unless given;
* limits: a cgroup where the host gives one, and ``ulimit`` in the shell that runs it (``limits``);
* once skillab is stopping (SIGINT, SIGTERM) no command starts and every running one is killed;
* no process outlives its command: when the command's first process ends, or the timeout
  passes, everything left in its process group (and namespace) is killed with SIGKILL;
* output is drained as it arrives and kept up to ``output_limit`` bytes per stream (the head
  and the tail, with a marker between), so a chatty command neither deadlocks nor fills memory;
* nothing raises for a command that fails or cannot start: the result says what happened.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import stop
from .backend import Backend
from .bridge import bridge_argv
from .keyring import join_fresh
from .limits import ulimit_script
from .view import View, Wrapped

DEFAULT_OUTPUT_LIMIT = 65536
# Output still arriving after the command ended comes from a process that escaped the kill.
_DRAIN_GRACE_S = 1.0
_READ_CHUNK = 65536
_EXEC_ARGV = 'exec "$@"'
# Process groups of commands still running, so an interrupted run can stop them all at once.
_LIVE_GROUPS: dict[int, Wrapped] = {}
_LIVE_LOCK = threading.Lock()
_STOPPING = False
_STOPPING_REASON = "skillab is stopping: no new commands"


@dataclass
class CommandResult:
    """What one command did. ``exit_code`` is negative (-N) when signal N ended it, and None
    when it timed out or never started."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    spawn_error: str | None
    duration_ms: int
    truncated: bool

    @property
    def completed(self) -> bool:
        """The command exited on its own with an exit code (not a signal, timeout or spawn failure)."""
        return (
            self.spawn_error is None
            and not self.timed_out
            and self.exit_code is not None
            and self.exit_code >= 0
        )

    def describe(self) -> str:
        """How the command ended, for messages: ``exit code 2``, ``timed out after 30.0s``, ..."""
        if self.spawn_error is not None:
            return f"could not start: {self.spawn_error}"
        if self.timed_out:
            return f"timed out after {self.duration_ms / 1000:.1f}s"
        if self.exit_code is not None and self.exit_code < 0:
            return f"killed by {_signal_name(-self.exit_code)}"
        return f"exit code {self.exit_code}"


def run_command(
    command: str | Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdin: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    view: View | None = None,
    backend: Backend,
) -> CommandResult:
    """Run ``command`` (a string runs under ``bash -c``) in ``cwd`` under ``backend`` (the run's
    choice, ``backend.Choice``) and wait for it, at most ``timeout_s`` seconds. See the module
    docstring.

    ``view``: what the command may see; by default ``cwd`` is its workspace and it has no network.
    """
    started = time.monotonic()
    if stopping():
        return _not_started(_STOPPING_REASON, started)
    view = view or View(workspace=cwd, cwd=cwd)
    argv, missing = _argv(command, cwd, env, timeout_s)
    if missing is not None:
        return _not_started(missing, started)
    if view.network is not None:
        argv = bridge_argv(view.network, argv)
        if view.network.token is not None:  # the bridge's first line, never the CLI's
            stdin = f"{view.network.token}\n{stdin or ''}"
    wrapped = backend.wrap(argv, view, env)
    try:
        return _spawn(wrapped, cwd, stdin, output_limit, started, timeout_s)
    finally:
        for step in wrapped.cleanup:
            step()


def _spawn(wrapped: Wrapped, cwd: Path, stdin: str | None, output_limit: int, started: float,
           timeout_s: float) -> CommandResult:
    if stopping():
        return _not_started(_STOPPING_REASON, started)
    # Started outside the lock (commands start side by side); a stop meanwhile is seen below.
    try:
        proc = subprocess.Popen(
            wrapped.argv,
            cwd=str(cwd),
            env=wrapped.env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=wrapped.pass_fds,
            # Under the filter no command can reach a keyring; without it each gets an empty one
            # (a fork instead of a vfork: about 4 ms a command, paid only there).
            preexec_fn=None if wrapped.seccomp else join_fresh,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return _not_started(str(exc), started)
    with _LIVE_LOCK:
        _LIVE_GROUPS[proc.pid] = wrapped
        stopped_meanwhile = _STOPPING
    out, err = _Capture(output_limit), _Capture(output_limit)
    try:
        with proc:  # closes its pipes and reaps it
            if stopped_meanwhile:
                _kill(proc.pid, wrapped)
                return _not_started(_STOPPING_REASON, started)
            timed_out = _supervise(proc, wrapped, stdin, out, err, started + timeout_s)
    finally:
        with _LIVE_LOCK:
            _LIVE_GROUPS.pop(proc.pid, None)
    return CommandResult(
        exit_code=None if timed_out else _exit_code(proc.returncode, wrapped),
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        spawn_error=None,
        duration_ms=_elapsed_ms(started),
        truncated=out.truncated or err.truncated,
    )


def stop_all_commands() -> int:
    """Refuse every new command and SIGKILL every running one (SIGINT, SIGTERM); returns how
    many were running. Each sandbox's pid namespace ends with its first process, so nothing of
    it is left either."""
    global _STOPPING
    stop.request()  # model calls in flight end their wait too
    with _LIVE_LOCK:
        _STOPPING = True
        groups = list(_LIVE_GROUPS.items())
    for pgid, wrapped in groups:
        _kill(pgid, wrapped)
    return len(groups)


def stopping() -> bool:
    return _STOPPING


def allow_commands() -> None:
    """Let commands start again (a new run in the same process after an interrupted one)."""
    global _STOPPING
    stop.clear()
    with _LIVE_LOCK:
        _STOPPING = False


def _argv(
    command: str | Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
) -> tuple[list[str], str | None]:
    """The argv inside the sandbox, or the reason an argv command's program cannot be found."""
    limits = ulimit_script(timeout_s)
    if isinstance(command, str):
        return [_bash(), "-c", limits + command], None
    if not command:
        return [], "empty command"
    program = command[0]
    if "/" in program:
        found = program if os.access(Path(cwd, program), os.X_OK) else None
    else:
        found = shutil.which(program, path=env.get("PATH", ""))
    if found is None:
        return [], f"{program}: command not found"
    return [_bash(), "-c", limits + _EXEC_ARGV, "bash", *command], None


@functools.cache
def _bash() -> str:
    # Absolute and from the system, so a command's own PATH cannot swap the shell.
    return shutil.which("bash", path="/usr/bin:/bin") or "/bin/bash"


def _supervise(
    proc: subprocess.Popen[bytes],
    wrapped: Wrapped,
    stdin: str | None,
    out: _Capture,
    err: _Capture,
    deadline: float,
) -> bool:
    """Feed stdin, drain output, and reap; kill the group at exit or deadline. True on timeout."""
    with _Session(proc, stdin, out, err) as session:
        stop_at, ended, timed_out = deadline, False, False
        while not ended or session.streams_open():
            now = time.monotonic()
            if now >= stop_at:
                if ended or timed_out:  # the grace period for draining is over
                    break
                _kill(proc.pid, wrapped)
                timed_out, stop_at = True, now + _DRAIN_GRACE_S
                continue
            session.pump(stop_at - now)
            if not ended and session.exited():
                ended = True
                if not timed_out:
                    # Whatever the command left running in the background goes now.
                    _kill(proc.pid, wrapped)
                    stop_at = min(stop_at, time.monotonic() + _DRAIN_GRACE_S)
    proc.wait()
    return timed_out


class _Session:
    """The pipes of one running command and a watch on its exit, multiplexed by a selector."""

    def __init__(
        self, proc: subprocess.Popen[bytes], stdin: str | None, out: _Capture, err: _Capture
    ):
        assert proc.stdout is not None and proc.stderr is not None
        self._pid = proc.pid
        # poll(2): a handful of descriptors, no epoll instance to set up per command.
        self._sel = selectors.PollSelector()
        self._sel.register(proc.stdout, selectors.EVENT_READ, out)
        self._sel.register(proc.stderr, selectors.EVENT_READ, err)
        self._exit_fd = _pidfd(proc.pid)
        self._exit_seen = False
        if self._exit_fd is not None:
            self._sel.register(self._exit_fd, selectors.EVENT_READ, "exit")
        self._stdin = proc.stdin
        self._pending = memoryview((stdin or "").encode("utf-8", "replace"))
        if self._stdin is not None:
            if self._pending:
                os.set_blocking(self._stdin.fileno(), False)
                self._sel.register(self._stdin, selectors.EVENT_WRITE, "stdin")
            else:
                self._close_stdin()

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self._sel.close()
        if self._exit_fd is not None:
            os.close(self._exit_fd)

    def streams_open(self) -> bool:
        return any(isinstance(key.data, _Capture) for key in self._sel.get_map().values())

    def exited(self) -> bool:
        return self._exit_seen or (self._exit_fd is None and _has_ended(self._pid))

    def pump(self, timeout: float) -> None:
        """Handle whatever is ready within ``timeout`` seconds."""
        if self._exit_fd is None:  # no exit descriptor: poll for the exit
            timeout = min(timeout, 0.01)
        for key, _ in self._sel.select(timeout):
            if key.data == "exit":
                self._sel.unregister(key.fileobj)
                self._exit_seen = True
            elif key.data == "stdin":
                self._feed()
            elif not key.data.read_from(key.fd):
                self._sel.unregister(key.fileobj)

    def _feed(self) -> None:
        assert self._stdin is not None
        try:
            sent = os.write(self._stdin.fileno(), self._pending[:_READ_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the command closed its stdin early; the rest is not wanted
            sent = len(self._pending)
        self._pending = self._pending[sent:]
        if not self._pending:
            self._sel.unregister(self._stdin)
            self._close_stdin()

    def _close_stdin(self) -> None:
        assert self._stdin is not None
        try:
            self._stdin.close()
        except OSError:
            pass


class _Capture:
    """One output stream: the first and last ``limit // 2`` bytes once it exceeds ``limit``."""

    def __init__(self, limit: int):
        self._limit = max(0, limit)
        self._head_limit = self._limit - self._limit // 2
        self._tail_limit = self._limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    @property
    def truncated(self) -> bool:
        return self._total > self._limit

    def read_from(self, fd: int) -> bool:
        """Read one chunk; False at end of stream."""
        chunk = os.read(fd, _READ_CHUNK)
        if not chunk:
            return False
        self._total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]
        return True

    def text(self) -> str:
        if not self.truncated:
            return (self._head + self._tail).decode("utf-8", "replace")
        tail = self._tail[len(self._tail) - self._tail_limit :] if self._tail_limit else b""
        omitted = self._total - len(self._head) - len(tail)
        # Cut on character boundaries: drop a partial sequence at the end of the head and
        # continuation bytes at the start of the tail.
        head = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self._head))
        tail = bytes(tail).lstrip(bytes(range(0x80, 0xC0)))
        return f"{head}\n[... {omitted} bytes omitted ...]\n{tail.decode('utf-8', 'replace')}"


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), so the loop can sleep."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_ended(pid: int) -> bool:
    # WNOWAIT leaves the zombie in place, so its process group id stays valid for the kill.
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(pgid: int, wrapped: Wrapped) -> None:
    """SIGKILL the command's process group, and whatever else the backend can reach (its cgroup)."""
    with contextlib.suppress(OSError):  # the group is already gone
        os.killpg(pgid, signal.SIGKILL)
    if wrapped.kill is not None:
        wrapped.kill()


def _exit_code(code: int, wrapped: Wrapped) -> int:
    """bwrap reports a command killed by signal N as exit code 128+N; read it back as -N."""
    if wrapped.signal_as_exit and 128 < code <= 128 + 64:
        return -(code - 128)
    return code


def _not_started(reason: str, started: float) -> CommandResult:
    return CommandResult(None, "", "", False, reason, _elapsed_ms(started), False)


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
