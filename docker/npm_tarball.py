"""An npm package's tarball, fetched without npm and checked against a pinned digest.

Shared by the image's installers (``install-claude-code.py``, ``install-agent-clis.py``), which
run beside it in the build: a registry or mirror serving any other bytes fails the build.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import urllib.request
from pathlib import Path

BIN = Path("/usr/local/bin")
# platform.machine() -> npm's platform suffix of the CLIs' native packages.
ARCH = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64", "arm64": "linux-arm64"}


def fetch(package: str, version: str, integrity: str, *, timeout_s: float = 600) -> bytes:
    """The tarball of ``package@version`` from $NPM_REGISTRY (default registry.npmjs.org); the
    build stops unless its sha512 is ``integrity`` (npm's ``dist.integrity``)."""
    registry = os.environ.get("NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
    url = f"{registry}/{package}/-/{package.split('/')[-1]}-{version}.tgz"
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        data = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != integrity:
        raise SystemExit(f"{url}: sha512 {digest} is not the pinned {integrity}")
    return data


def link(name: str, target: Path) -> None:
    """``/usr/local/bin/name`` -> ``target``, made executable, checked by running ``--version``."""
    target.chmod(0o755)
    path = BIN / name
    path.unlink(missing_ok=True)
    path.symlink_to(target)
    subprocess.run([str(path), "--version"], check=True)
