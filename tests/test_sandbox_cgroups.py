"""Per-command cgroups made ahead of need and removed behind, off the command's critical path.

Every command still gets a cgroup no process has ever been in, with the limits in force when it
starts; none is left behind once the run's cgroups are swept.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillab.sandbox import limits
from skillab.sandbox.limits import MAX_PIDS_ENV, cgroup_support, command_cgroup, sweep_cgroups
from skillab.sandbox.workspace import run_in

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
