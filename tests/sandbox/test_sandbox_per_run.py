"""A run's sandbox backend is passed along, never kept for the process: two runs in one process,
side by side, each run every command under its own backend.

The backends are a real plugin (``skillab.sandboxes`` entry points, found by
``importlib.metadata`` as ``pip install`` would leave them), each logging the argv it wraps.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import threading
from pathlib import Path

from skillab.engine.runner import RunReport, run_suite

from ..configs import run_config
from ..core.test_plugins import install_package
from ..skillgen import make_skill

PLUGIN = "skillab_two_backends_plugin"
SOURCE = textwrap.dedent('''
    """Two logging sandbox backends and an agent whose first run waits for the second to start."""

    import json
    import threading
    from pathlib import Path

    from skillab.agents.base import Agent, AgentResult
    from skillab.grading.trajectory import Trajectory
    from skillab.sandbox.view import Wrapped
    from skillab.sandbox.workspace import run_in

    FIRST_WAITING, SECOND_STARTED = threading.Event(), threading.Event()


    class _Logged:
        """Runs each command on the host, as ``none`` does, once it has logged its argv."""

        def problem(self):
            return None

        def wrap(self, argv, view, env):
            with Path(__file__).with_name(f"{self.name}.log").open("a") as out:
                out.write(json.dumps(list(argv)) + "\\n")
            return Wrapped(list(argv), dict(env))

        def guarantees(self):
            return {"enforced_by": f"nothing: {self.name} logs each command"}


    class LoggedA(_Logged):
        name = "logged-a"


    class LoggedB(_Logged):
        name = "logged-b"


    class GatedAgent(Agent):
        """Case "first" waits (in both arms) until case "second" has started in the other run:
        by then the second run has chosen its backend, and the first run's validators follow."""

        name = "gated-agent"

        @classmethod
        def from_config(cls, config):
            return cls()

        def identity(self):
            return {"adapter": self.name}

        def run(self, request):
            if request.case.name == "first":
                FIRST_WAITING.set()
                SECOND_STARTED.wait(60)
            else:
                SECOND_STARTED.set()
            # A command of the agent's own, under the backend its request carries.
            run_in(request.workspace, f"echo agent {request.case.name}", timeout_s=30, backend=request.sandbox)
            return AgentResult(final_output=f"answer for {request.case.name}",
                               trajectory=Trajectory(user_input=request.case.prompt))
''')
ENTRY_POINTS = f"""\
[skillab.sandboxes]
logged-a = {PLUGIN}:LoggedA
logged-b = {PLUGIN}:LoggedB

[skillab.agents]
gated-agent = {PLUGIN}:GatedAgent
"""


def install_plugin(site: Path) -> None:
    install_package(site, PLUGIN, SOURCE, ENTRY_POINTS)


def logged(site: Path, backend: str) -> list[str]:
    path = site / f"{backend}.log"
    return [" ".join(json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


def test_two_runs_side_by_side_each_run_every_command_under_its_own_backend(tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_plugin(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, PLUGIN, raising=False)
    plugin = importlib.import_module(PLUGIN)
    suites = {name: make_skill(tmp_path / name, [{
        "name": name, "prompt": f"Answer for {name}.", "setup": [f"echo setup {name}"],
        "validators": [{"cmd": f"grep -q {name} response.txt"}]}], name=f"{name}-skill")
        for name in ("first", "second")}
    reports: dict[str, RunReport] = {}
    failures: list[BaseException] = []

    def run(name: str, backend: str) -> None:
        config = run_config(adapter="gated-agent", model="any", sandbox=backend, cache_enabled=False,
                            concurrency=1)
        try:
            reports[name] = run_suite(suites[name], config)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    first = threading.Thread(target=run, args=("first", "logged-a"))
    first.start()
    try:
        # The first run has chosen its backend and its agent is working: the second starts now.
        assert plugin.FIRST_WAITING.wait(60)
        second = threading.Thread(target=run, args=("second", "logged-b"))
        second.start()
        second.join(120)
    finally:
        plugin.SECOND_STARTED.set()  # never leave the first run waiting, whatever happened
        first.join(120)
    assert not failures, failures
    assert not first.is_alive() and not second.is_alive()

    # Each backend wrapped exactly its own run's commands: setup, the agent's, the validator,
    # in each of both arms.
    for name, backend in (("first", "logged-a"), ("second", "logged-b")):
        wrapped = logged(site, backend)
        for command in (f"echo setup {name}", f"echo agent {name}", f"grep -q {name} response.txt"):
            assert sum(command in c for c in wrapped) == 2, (command, wrapped)
        assert len(wrapped) == 6, wrapped
    for name, backend in (("first", "logged-a"), ("second", "logged-b")):
        log = reports[name].log
        assert log.settings.isolation.backend == backend
        (record,) = log.records
        assert record.with_skill.sandbox == record.without_skill.sandbox == backend
        assert record.with_skill.validator_results[0].passed
