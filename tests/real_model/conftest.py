"""The real-model tier: a real llama.cpp server with a real 135M model, on loopback.

Run only when ``SKILLAB_REAL_MODEL=1`` (``.ci/run`` sets it for this tier, and prints its wall
time); skipped with the reason when the server or the model is not installed. Every test is
bounded (few cases, short answers) and seeded, and runs at concurrency 1: a local server's
answers are reproducible only one request at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .server import LlamaServer, missing


def _why_skip() -> str | None:
    if os.environ.get("SKILLAB_REAL_MODEL") != "1":
        return "the real-model tier runs with SKILLAB_REAL_MODEL=1 (.ci/run sets it)"
    return missing()


@pytest.fixture(scope="session")
def llama(tmp_path_factory) -> Iterator[LlamaServer]:
    """One server for the tier (seed 1), started once, stopped by its pid."""
    reason = _why_skip()
    if reason:
        pytest.skip(reason)
    with LlamaServer(seed=1, log=tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture
def fresh_server(tmp_path):
    """Starts a new server per call (a fresh process, nothing cached), stopped at the test's end."""
    reason = _why_skip()
    if reason:
        pytest.skip(reason)
    started: list[LlamaServer] = []

    def start(seed: int) -> LlamaServer:
        server = LlamaServer(seed=seed, log=tmp_path / f"server-{len(started)}.log").start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
