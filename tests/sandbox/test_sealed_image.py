"""Under ``--sandbox image`` a CLI whose interpreter is a system one (``/usr/bin/node``) runs the
image's own: that file, wherever the sandbox's ``PATH`` finds it in the image, is sealed
(execute-only) as ``bwrap`` seals the host's, so the agent's tools cannot read the bridge token
from the CLI's ``/proc/<pid>/environ``.

The attack: a process started from the image's token holder with a token in its environment, and
a sibling command reading that environment. The image is the busybox base of ``image_kit``, whose
``/bin/busybox`` stands in for the image's ``node``. Unsandboxed, nothing can be sealed, and the
isolation block says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillab.agents.codex import CodexAdapter
from skillab.sandbox.backend import choose_sandbox
from skillab.sandbox.image import STORE_ENV, image_sandbox
from skillab.sandbox.isolation import detect_isolation
from skillab.sandbox.sealed import sealed_binds
from skillab.sandbox.workspace import Workspace, run_in

from ..image_kit import BUSYBOX, build_base, needs_buildah, write_environment

ATTACK = ('TOKEN=bridge-secret-0123 /bin/busybox sleep 5 & sleep 0.5; '
          'tr "\\0" "\\n" < /proc/$!/environ | grep TOKEN; kill $!; echo END')


def test_unsandboxed_the_isolation_block_says_the_bridge_token_is_not_sealed():
    agent = CodexAdapter("codex", api_key="k", model="gpt-5-mini")
    none = choose_sandbox("none")
    # The agent block as the engine builds it from the contract (engine.runner).
    unsandboxed = detect_isolation(none, {"adapter": agent.name,
                                          **(agent.sandbox_profile(none.backend) or {})})
    assert unsandboxed.unsandboxed and "NOT the CLI's alone" in unsandboxed.agent["metering"]
    assert "cannot read" not in unsandboxed.agent["metering"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return build_base(tmp_path_factory.mktemp("images"))


@needs_buildah
def test_the_images_own_token_holder_is_sealed_so_a_sibling_cannot_read_its_environment(store, tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_ENV, str(store))
    with image_sandbox(write_environment(tmp_path / "environment")) as choice:
        ws = Workspace.create(tmp_path / "run", "arm", backend=choice.backend)
        try:
            # The host's system path of the CLI's interpreter.
            binds = sealed_binds([Path(BUSYBOX)], choice.backend)
            sealed = run_in(ws.root, ATTACK, timeout_s=30, read_only_at=binds, backend=ws.backend)
            control = run_in(ws.root, ATTACK, timeout_s=30, backend=ws.backend)
        finally:
            ws.cleanup()
    assert control.stdout.strip().splitlines()[0] == "TOKEN=bridge-secret-0123", control  # the attack works unsealed
    assert sealed.stdout.strip().endswith("END") and "bridge-secret" not in sealed.stdout, sealed
    assert [inside for _, inside in binds] == ["/bin/busybox"]  # found in the image, not the host's path
    assert all(copy.stat().st_mode & 0o777 == 0o111 for copy, _ in binds)
