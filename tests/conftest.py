"""Test-wide isolation from the developer's machine."""

from __future__ import annotations

import pytest

from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.workspace import Workspace

from .fakes.model_server import FakeModelServer

# Suite fixtures carry their own verifiers' pytest files: graded inside a sandbox, never collected.
collect_ignore_glob = ["skillsbench_v11/*", "public_suites/*"]


@pytest.fixture(autouse=True)
def _private_cwd_and_cache(tmp_path_factory, monkeypatch):
    """Each test runs in its own directory with its own cache home, so runs never write history
    into the checkout or reuse baselines cached by another test or by the developer."""
    home = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(home)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # the baseline cache's key


@pytest.fixture
def server():
    """A fake model server on 127.0.0.1 (Anthropic and OpenAI wire protocols), scripted per test."""
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
def workspace(tmp_path):
    """One arm's workspace, removed after the test."""
    ws = Workspace.create(tmp_path / "arms", "arm")
    yield ws
    ws.cleanup()


@pytest.fixture
def unsandboxed():
    """The ``none`` backend, for a test to run its commands under (the control for an attack
    test): a run's backend is passed along, never set for the process."""
    return choose_sandbox("none").backend
