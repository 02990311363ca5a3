"""Per-command cgroups made ahead of need and removed behind, off the command's critical path.

Every command gets a cgroup no process was ever in, with the limits in force when it starts,
and never one that another arm's command left memory charged to; none is left behind once the
run's cgroups are swept.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from skillab.sandbox import limits, scratch
from skillab.sandbox.cgroup_keeper import STOCK
from skillab.sandbox.limits import MAX_PIDS_ENV, MEMORY_MB_ENV, cgroup_support, command_cgroup, sweep_cgroups
from skillab.sandbox.scratch import SCRATCH_ENV, roomy_tmpfs, run_scratch
from skillab.sandbox.workspace import Workspace, run_in

pytestmark = pytest.mark.skipif(cgroup_support() is None, reason="no writable pids cgroup here")


def own_cgroups() -> set[Path]:
    """This process's per-command cgroup directories on the host."""
    prefix = f"skillab-{os.getpid()}-"
    found = set()
    for parent in set(cgroup_support().parents.values()):
        found |= {parent / name for name in os.listdir(parent) if name.startswith(prefix)}
    return found


def pids_max(cgroup) -> str:
    [pids] = [d for d in cgroup.dirs if (d / "pids.max").exists()]
    return (pids / "pids.max").read_text().strip()


def test_a_command_gets_a_cgroup_ready_before_it_asked(tmp_path):
    run_in(tmp_path, "true", timeout_s=20)
    deadline = time.monotonic() + 5
    while not limits.keeper().stocked() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert limits.keeper().stocked()
    ready = limits.keeper().stocked()
    taken = command_cgroup()
    assert taken.dirs[0] in {cgroup.dirs[0] for cgroup in ready}
    taken.release()


def test_a_cgroup_with_a_process_still_in_it_is_never_handed_out():
    cgroup = command_cgroup()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        for path in cgroup.join_paths:
            Path(path).write_text(str(sleeper.pid))
        cgroup.release()
        limits.keeper().drain(timeout_s=0.3)
        taken = [command_cgroup() for _ in range(STOCK + 1)]
        assert all(set(t.dirs).isdisjoint(cgroup.dirs) for t in taken)
        for t in taken:
            t.release()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_every_command_gets_a_cgroup_no_process_was_ever_in(tmp_path):
    first, second = command_cgroup(), command_cgroup()
    assert set(first.dirs).isdisjoint(second.dirs)
    for cgroup in (first, second):
        for directory in cgroup.dirs:
            assert (directory / "cgroup.procs").read_text() == ""
    first.release()
    second.release()


def test_a_stocked_cgroup_made_under_other_limits_is_not_handed_out(tmp_path, monkeypatch):
    command_cgroup().release()  # the stock now holds cgroups with the default limit
    monkeypatch.setenv(MAX_PIDS_ENV, "77")
    taken = command_cgroup()
    assert pids_max(taken) == "77"
    taken.release()


def test_used_cgroups_are_removed_in_the_background_and_none_outlive_the_sweep(tmp_path):
    before = own_cgroups()
    for _ in range(5):
        assert run_in(tmp_path, "sleep 0.01 & echo started", timeout_s=20).stdout == "started\n"
    limits.keeper().drain()
    left = own_cgroups() - before
    stocked = {d for cgroup in limits.keeper().stocked() for d in cgroup.dirs}
    assert left <= stocked, "a used cgroup was left behind"
    sweep_cgroups()
    assert not own_cgroups()


def test_memory_an_arm_left_charged_is_never_counted_against_another_arms_command(
        tmp_path, monkeypatch):
    # Files on a tmpfs workspace stay charged to the memory cgroup of the command that wrote
    # them: a cgroup handed on with that charge would kill the next arm's command early.
    if "memory" not in cgroup_support().parents:
        pytest.skip("no memory cgroup on this host")
    if not roomy_tmpfs(scratch.TMPFS):
        pytest.skip("no tmpfs with room for workspaces here")
    monkeypatch.delenv(SCRATCH_ENV, raising=False)
    monkeypatch.setenv(MEMORY_MB_ENV, "96")
    with run_scratch() as directory:
        first, second = Workspace.create(directory, "with"), Workspace.create(directory, "without")
        wrote = run_in(first.root, "head -c 80M /dev/zero > ballast && echo wrote", timeout_s=30)
        assert wrote.stdout == "wrote\n", wrote.stderr
        # Past the whole stock, so a cgroup handed back after the write would come round.
        for _ in range(STOCK + 2):
            limits.keeper().drain()
            grow = run_in(second.root, "python3 -c \"b = bytearray(48 << 20); print('allocated')\"",
                          timeout_s=30)
            assert grow.stdout == "allocated\n", grow.describe()


def test_killing_a_command_reaches_every_process_in_its_cgroup_whatever_its_session():
    # A sandbox whose bwrap was killed while starting it is in neither the command's process
    # group nor (yet) bound to die with it; its cgroup still holds it, and so does a setsid child.
    cgroup = command_cgroup()
    join = 'for p in "$@"; do echo $$ > "$p"; done; setsid sleep 300 & setsid sleep 301 & wait'
    shell = subprocess.Popen(["sh", "-c", join, "sh", *cgroup.join_paths], start_new_session=True)
    try:
        until = time.monotonic() + 10
        while len(_procs(cgroup)) < 3 and time.monotonic() < until:
            time.sleep(0.01)
        assert len(_procs(cgroup)) == 3
        cgroup.kill()
        assert _procs(cgroup) == set()
        shell.wait(timeout=10)  # its children died with it, or it with them
    finally:
        shell.kill()
        shell.wait()
        cgroup.release()


def _procs(cgroup) -> set[int]:
    return {int(p) for d in cgroup.dirs for p in (d / "cgroup.procs").read_text().split()}
