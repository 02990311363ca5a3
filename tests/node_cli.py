"""Find (or install) an agent CLI from npm for the tests that drive it, at the version the image pins.

The versions are the runner image's (``Dockerfile``: ``CLAUDE_CODE_VERSION``, ``CODEX_VERSION``,
``GEMINI_CLI_VERSION``, ``COPILOT_VERSION``), the one place they are written: ``.ci/run`` installs the same versions
into ``tests/.node``, and an unpinned install would test whatever the registry serves that day.

Order: the ``SKILLAB_<NAME>_BIN`` variable (the caller's choice, any version), else
``tests/.node`` when it holds the pinned version, else ``npm install --prefix tests/.node
PACKAGE@VERSION`` now. A machine without npm skips, saying which package and version it needed.

    python -m tests.node_cli             # the pinned packages, one ``package@version`` a line
    python -m tests.node_cli --install   # install them all into tests/.node (what .ci/run does)
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NODE_PREFIX = Path(__file__).parent / ".node"
DOCKERFILE = Path(__file__).resolve().parent.parent / "Dockerfile"


@dataclass(frozen=True)
class AgentCli:
    executable: str
    package: str  # on npm
    arg: str  # the Dockerfile ARG that pins its version
    env_var: str  # names a binary to use instead, any version

    @property
    def version(self) -> str:
        match = re.search(rf"^ARG {self.arg}=(\S+)$", DOCKERFILE.read_text(), re.M)
        if match is None:
            raise LookupError(f"{DOCKERFILE.name} has no 'ARG {self.arg}=VERSION' line, which pins {self.package}")
        return match.group(1)

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


CLIS = {cli.executable: cli for cli in (
    AgentCli("claude", "@anthropic-ai/claude-code", "CLAUDE_CODE_VERSION", "SKILLAB_CLAUDE_BIN"),
    AgentCli("codex", "@openai/codex", "CODEX_VERSION", "SKILLAB_CODEX_BIN"),
    AgentCli("gemini", "@google/gemini-cli", "GEMINI_CLI_VERSION", "SKILLAB_GEMINI_BIN"),
    AgentCli("copilot", "@github/copilot", "COPILOT_VERSION", "SKILLAB_COPILOT_BIN"),
)}


def installed_version(cli: AgentCli, prefix: Path = NODE_PREFIX) -> str | None:
    try:
        return str(json.loads((prefix / "node_modules" / cli.package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def npm_install(prefix: Path, specs: list[str]) -> None:
    """``npm install`` of ``specs`` into ``prefix``, each recorded at its exact version: npm
    otherwise records ``^VERSION``, and a later install into the prefix may move it. A spec
    without an exact version (``package``, ``package@latest``, ``package@^1``) is refused:
    it would install whatever the registry serves that day."""
    unpinned = [spec for spec in specs if not re.fullmatch(r"(@[\w.-]+/)?[\w.-]+@\d+\.\d+\.\d+[\w.+-]*", spec)]
    if unpinned:
        raise ValueError(f"npm_install takes package@X.Y.Z only, not {', '.join(unpinned)}")
    subprocess.run(["npm", "install", "--silent", "--prefix", str(prefix), "--no-audit", "--no-fund",
                    "--save-exact", *specs], check=True, timeout=900)


def npm_binary(executable: str, prefix: Path = NODE_PREFIX) -> str:
    import pytest  # here, not above: .ci/run asks this module for the pins before pytest is installed

    cli = CLIS[executable]
    explicit = os.environ.get(cli.env_var)
    if explicit:
        return explicit
    local = prefix / "node_modules" / ".bin" / executable
    if local.exists() and installed_version(cli, prefix) == cli.version:
        return str(local)
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not installed, so {cli.spec} cannot be fetched (or set {cli.env_var})")
    prefix.mkdir(exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once
        if installed_version(cli, prefix) != cli.version or not local.exists():
            npm_install(prefix, [cli.spec])
    return str(local)


def alone_on_path(executable: str, directory: Path, monkeypatch: Any) -> str:
    """The pinned ``executable`` (as ``npm_binary`` finds it) linked into ``directory``, and PATH
    that directory then the system's own: an adapter's ``from_config`` finds this one. Its path."""
    binary = npm_binary(executable)
    directory.mkdir()
    (directory / executable).symlink_to(binary)
    monkeypatch.setenv("PATH", f"{directory}:/usr/local/bin:/usr/bin:/bin")
    return binary


def claude_binary() -> str:
    return npm_binary("claude")


def codex_binary() -> str:
    return npm_binary("codex")


def gemini_binary() -> str:
    return npm_binary("gemini")


def copilot_binary() -> str:
    return npm_binary("copilot")


if __name__ == "__main__":
    specs = [cli.spec for cli in CLIS.values()]
    if sys.argv[1:] == ["--install"]:
        NODE_PREFIX.mkdir(exist_ok=True)
        npm_install(NODE_PREFIX, specs)
    else:
        sys.stdout.write("".join(f"{spec}\n" for spec in specs))
