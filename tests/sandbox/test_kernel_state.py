"""No kernel state shared between sandboxes (issue #23): keyrings, the seccomp filter, and the
other objects namespaces might leave shared (``/dev/shm``, ``/tmp``, Unix sockets, descriptors).

The keyring attack runs as a container would have it: skillab under a session keyring of its
own (runc gives each container one), where a with-skill arm's ``add_key`` landed in a keyring
every other sandbox of the run inherited.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from skillab.sandbox import seccomp
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.workspace import Workspace, run_in

pytestmark = pytest.mark.skipif(
    choose_sandbox(None).backend.name != "bwrap", reason=f"bwrap does not work here: {choose_sandbox(None).reason}"
)
TOKEN = "TOKEN-FROM-THE-SKILL-arm"

# add_key / keyctl(SEARCH, READ) on the session keyring, as an agent's python3 would call them.
KEY_PROBE = textwrap.dedent("""
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
    SESSION = -3
    if sys.argv[1] == "plant":
        token = sys.argv[2].encode()
        got = libc.syscall(ADD_KEY, b"user", b"skillab-probe", token, len(token), SESSION)
        print("planted" if got >= 0 else f"refused {ctypes.get_errno()}")
    else:
        for name in sys.argv[2:]:
            key = libc.syscall(KEYCTL, 10, SESSION, b"user", name.encode(), 0)
            if key < 0:
                print(f"{name}: none ({ctypes.get_errno()})")
                continue
            buf = ctypes.create_string_buffer(200)
            size = libc.syscall(KEYCTL, 11, key, buf, 200)
            print(f"{name}: found {buf.raw[:max(size, 0)].decode()}")
""")

# Joins a session keyring of its own, as a container's init has one, puts a runner secret in
# it, then runs one arm planting a key and the other looking for both.
RUN_UNDER_A_SESSION_KEYRING = textwrap.dedent("""
    import ctypes, os, sys
    from pathlib import Path
    libc = ctypes.CDLL(None, use_errno=True)
    ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
    assert libc.syscall(KEYCTL, 1, b"container-session") >= 0, ctypes.get_errno()
    secret = b"RUNNER-SECRET-KEY"
    assert libc.syscall(ADD_KEY, b"user", b"runner-secret", secret, len(secret), -3) >= 0
    from skillab.sandbox.backend import choose_sandbox
    from skillab.sandbox.guard import guard_process
    from skillab.sandbox.workspace import Workspace, run_in
    backend = choose_sandbox(sys.argv[4]).backend
    if sys.argv[5] == "as-the-cli":
        guard_process()
    parent = Path(sys.argv[1])
    probe = sys.argv[2]
    with_skill = Workspace.create(parent, "with_skill", backend=backend)
    baseline = Workspace.create(parent, "without_skill", backend=backend)
    for ws in (with_skill, baseline):
        (ws.root / "probe.py").write_text(probe)
    planted = run_in(with_skill.root, "python3 probe.py plant " + sys.argv[3], timeout_s=30, backend=backend)
    found = run_in(baseline.root, "python3 probe.py find skillab-probe runner-secret", timeout_s=30,
                   backend=backend)
    print(planted.stdout + planted.stderr + found.stdout + found.stderr)
""")


@pytest.mark.parametrize("backend, how", [("bwrap", "as-the-cli"), ("bwrap", "as-a-library"),
                                          ("none", "as-a-library")])
def test_a_key_one_arm_plants_is_not_found_by_the_other_under_a_session_keyring(tmp_path, backend, how):
    done = subprocess.run(
        [sys.executable, "-c", RUN_UNDER_A_SESSION_KEYRING, str(tmp_path), KEY_PROBE, TOKEN, backend, how],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "skillab-probe: none" in out, out
    assert "runner-secret: none" in out, out
    assert TOKEN not in out and "RUNNER-SECRET-KEY" not in out
    # Under the filter add_key itself is refused (EPERM); without it, the key lands in a keyring
    # of the planting command's own.
    assert ("refused 1" if backend == "bwrap" else "planted") in out, out


REFUSED_CALLS = ["add_key", "request_key", "keyctl", "bpf", "perf_event_open", "userfaultfd",
                 "io_uring_setup", "unshare", "setns", "mount", "kexec_load", "init_module", "syslog",
                 "fsopen", "open_by_handle_at"]


def test_the_seccomp_filter_refuses_the_calls_a_sandbox_has_no_use_for(tmp_path):
    workspace = Workspace.create(tmp_path, "arm")
    numbers = seccomp.REFUSED[seccomp.AUDIT_ARCH_X86_64 if os.uname().machine == "x86_64"
                              else seccomp.AUDIT_ARCH_AARCH64]
    calls = " ".join(f"{name}:{numbers[name]}" for name in REFUSED_CALLS)
    script = ("import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "for item in sys.argv[1:]:\n    name, nr = item.split(':')\n"
              "    got = libc.syscall(int(nr), 0, 0, 0, 0, 0)\n"
              "    print(name, got, ctypes.get_errno())\n")
    (workspace.root / "calls.py").write_text(script)
    result = workspace.run(f"python3 calls.py {calls}; echo done", timeout_s=30)
    lines = result.stdout.splitlines()
    assert lines[-1] == "done", result
    assert lines[:-1] == [f"{name} -1 1" for name in REFUSED_CALLS], result.stdout


def test_an_ordinary_command_still_works_under_the_filter(tmp_path):
    workspace = Workspace.create(tmp_path, "arm")
    result = workspace.run("git init -q repo && cd repo && git status --short && python3 -c "
                           "'import subprocess, threading; print(subprocess.run([\"echo\", \"ok\"], "
                           "capture_output=True, text=True).stdout.strip())'", timeout_s=60)
    assert result.exit_code == 0 and result.stdout.strip() == "ok", result


def _run_bpf(program: bytes, arch: int, nr: int) -> int:
    """A minimal classic-BPF interpreter over ``struct seccomp_data`` (enough for the filter)."""
    data = struct.pack("=iI", nr, arch) + bytes(56)
    ops = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:
            acc = struct.unpack("=I", data[k:k + 4])[0]
        elif code == 0x06:
            return k
        elif code in (0x15, 0x35):
            hit = acc == k if code == 0x15 else acc >= k
            pc += jt if hit else jf
        else:
            raise AssertionError(f"unexpected op {code:#x}")
        pc += 1


def test_the_filter_refuses_the_listed_calls_on_both_architectures_and_foreign_abis():
    program = seccomp.program()
    eperm, allow = 0x00050001, 0x7FFF0000
    for arch, numbers in seccomp.REFUSED.items():
        for name, nr in numbers.items():
            assert _run_bpf(program, arch, nr) == eperm, name
        assert _run_bpf(program, arch, 0) == allow  # read / io_setup
        assert _run_bpf(program, arch, 59 if arch == seccomp.AUDIT_ARCH_X86_64 else 221) == allow  # execve
    assert _run_bpf(program, seccomp.AUDIT_ARCH_X86_64, 0x40000000 + 248) == eperm  # x32
    assert _run_bpf(program, 0x40000003, 286) == eperm  # i386 (int 0x80): add_key there


def test_dev_shm_and_tmp_are_private_to_each_command(tmp_path):
    with_skill, baseline = Workspace.create(tmp_path, "with"), Workspace.create(tmp_path, "without")
    host_shm = Path("/dev/shm") / f"skillab-host-{os.getpid()}"
    host_shm.write_text("HOST-SHM")
    try:
        first = run_in(with_skill.root, "echo PLANT > /dev/shm/probe && echo PLANT > /tmp/probe && "
                                        "ls -A /dev/shm", timeout_s=20)
        assert first.exit_code == 0, first
        assert host_shm.name not in first.stdout
        later = run_in(with_skill.root, "cat /dev/shm/probe /tmp/probe 2>&1; ls -A /dev/shm /tmp", timeout_s=20)
        other = run_in(baseline.root, "cat /dev/shm/probe /tmp/probe 2>&1; ls -A /dev/shm /tmp", timeout_s=20)
    finally:
        host_shm.unlink()
    for result in (later, other):
        assert "PLANT" not in result.stdout and "probe" not in result.stdout.split("No such")[-1]
        assert host_shm.name not in result.stdout


def test_a_unix_socket_bound_by_one_arm_is_out_of_the_others_reach(tmp_path):
    with_skill, baseline = Workspace.create(tmp_path, "with"), Workspace.create(tmp_path, "without")
    # It listens until the host says the other arm has tried (20 s at most), not a fixed while.
    server = ("import os, socket, time\n"
              "for address in ('\\0skillab-probe', 'probe.sock'):\n"
              "    s = socket.socket(socket.AF_UNIX); s.bind(address); s.listen(); globals()[address[-4:]] = s\n"
              "until = time.monotonic() + 20\n"
              "while not os.path.exists('tried') and time.monotonic() < until:\n"
              "    time.sleep(0.05)\n")
    (with_skill.root / "server.py").write_text(server)
    serving = threading.Thread(target=run_in, args=(with_skill.root, "python3 server.py"),
                               kwargs={"timeout_s": 30})
    serving.start()
    try:
        sock = with_skill.root / "probe.sock"
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sock.exists()
        client = ("import socket, sys\n"
                  "for address in sys.argv[1:]:\n"
                  "    s = socket.socket(socket.AF_UNIX)\n"
                  "    try:\n        s.connect(address.replace('@', '\\0')); print(address, 'connected')\n"
                  "    except OSError as exc:\n        print(address, 'refused', exc.errno)\n")
        (baseline.root / "client.py").write_text(client)
        reached = run_in(baseline.root, f"python3 client.py @skillab-probe {sock}", timeout_s=20)
        # Even the same arm's next command: the server ended with the command that started it.
    finally:
        (with_skill.root / "tried").touch()
        serving.join()
    assert "connected" not in reached.stdout, reached
    (with_skill.root / "client.py").write_text(client)
    after = run_in(with_skill.root, "python3 client.py @skillab-probe probe.sock", timeout_s=20)
    assert "connected" not in after.stdout and after.stdout.count("refused") == 2, after


def test_a_command_inherits_no_descriptor_but_its_standard_streams(tmp_path):
    workspace = Workspace.create(tmp_path, "arm")
    keep = os.open("/dev/null", os.O_RDONLY)  # an inheritable descriptor skillab holds
    os.set_inheritable(keep, True)
    try:
        result = run_in(workspace.root, "ls /proc/self/fd", timeout_s=20)
    finally:
        os.close(keep)
    # 3 is the directory ls itself reads.
    assert sorted(int(fd) for fd in result.stdout.split()) == [0, 1, 2, 3], result
