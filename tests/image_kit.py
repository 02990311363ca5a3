"""A tiny image for the ``image`` sandbox backend's tests: busybox on an empty root, built with
buildah into a private store and tagged ``localhost/python:3.12-slim``, so a task's
``FROM python:3.12-slim`` resolves to it without a registry (none is reachable here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BUSYBOX = shutil.which("busybox", path="/usr/bin:/bin")
MARKER = "built-by-the-image-test"
needs_buildah = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("buildah") is None or BUSYBOX is None
    or shutil.which("bwrap") is None,
    reason="needs root, buildah, bwrap and busybox (apt-get install buildah bubblewrap busybox-static)",
)
BASE_DOCKERFILE = f"""\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox mkdir -p /usr/bin /tmp /proc /dev /root /etc && \
/bin/busybox --install -s /bin && printf '#!/bin/sh\\\\nexec /bin/sh \\"$@\\"\\\\n' > /usr/bin/bash && \
chmod 755 /usr/bin/bash && echo {MARKER} > /etc/skillab-test-image"]
"""


def build_base(root: Path) -> Path:
    """An image store under ``root`` holding the base image; returns ``root``."""
    context = root / "base"
    context.mkdir()
    shutil.copy(BUSYBOX, context / "busybox")
    (context / "Dockerfile").write_text(BASE_DOCKERFILE)
    subprocess.run(["buildah", "--root", str(root / "storage"), "--runroot", str(root / "run"),
                    "--storage-driver", "vfs", "bud", "--isolation", "chroot", "--pull=never",
                    "-t", "localhost/python:3.12-slim", str(context)],
                   check=True, capture_output=True, timeout=300)
    return root


def write_environment(directory: Path, dockerfile: str = "FROM python:3.12-slim\nWORKDIR /root\n") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Dockerfile").write_text(dockerfile)
    return directory


# --- a stand-in for ubuntu:24.04, built from Debian's packages -------------------------------

STANDIN_TAG = "localhost/ubuntu:24.04"  # what FROM ubuntu:24.04 finds with --pull=never
STANDIN_SUITE = "trixie"  # pytest 8: pytest-json-ctrf 0.3.5 needs TestReport.start
# What the tasks' Dockerfiles apt-get install (present, so the install succeeds offline); gnumeric's
# ssconvert and openpyxl are what weighted-gdp-calc's verifier runs (openpyxl 3.1.5, as its pip pins).
STANDIN_PACKAGES = ("python3", "python3-pip", "python3-pytest", "python3-venv", "python3-openpyxl", "gnumeric",
                    "libreoffice")
# The one tool SkillsBench v1.1 verifiers need that Debian does not package (MIT, pure Python).
CTRF_REQUIREMENT = "pytest-json-ctrf==0.3.5"
STANDIN_STORE_ENV = "SKILLAB_STANDIN_STORE"


def build_standin(root: Path) -> Path:
    """An image store under ``root`` holding ``localhost/ubuntu:24.04``: Debian minbase with
    python3, pip and pytest (mmdebstrap, from the host's Debian mirror) and pytest-json-ctrf,
    apt's sources emptied so a Dockerfile's ``apt-get update && apt-get install -y python3``
    succeeds offline on what is installed. Returns ``root``; reused when it already holds the tag."""
    buildah = ["buildah", "--root", str(root / "storage"), "--runroot", str(root / "run"), "--storage-driver", "vfs"]
    if subprocess.run([*buildah, "inspect", "--type", "image", STANDIN_TAG], capture_output=True).returncode == 0:
        return root
    wheels = root / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), CTRF_REQUIREMENT],
                   check=True, timeout=300)
    (wheel,) = wheels.glob("*.whl")
    tar = root / "standin.tar"
    subprocess.run([
        "mmdebstrap", "--variant=minbase", "--mode=root", "--format=tar", "--skip=output/dev",
        f"--include={','.join(STANDIN_PACKAGES)}",
        "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        f"--customize-hook=copy-in {wheel} /tmp",
        f'--customize-hook=chroot "$1" pip3 install --break-system-packages --no-deps --no-index /tmp/{wheel.name}',
        '--customize-hook=rm -rf "$1"/tmp/*.whl "$1"/etc/apt/sources.list "$1"/etc/apt/sources.list.d/* '
        '"$1"/var/lib/apt/lists/*',
        STANDIN_SUITE, str(tar), "http://deb.debian.org/debian",
    ], check=True, capture_output=True, timeout=900)
    container = subprocess.run([*buildah, "from", "scratch"], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([*buildah, "add", container, str(tar), "/"], check=True, capture_output=True, timeout=300)
    subprocess.run([*buildah, "config", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "--cmd", "bash", container], check=True, capture_output=True)
    subprocess.run([*buildah, "commit", "--rm", "--quiet", container, STANDIN_TAG], check=True, capture_output=True,
                   timeout=300)
    tar.unlink()
    return root
