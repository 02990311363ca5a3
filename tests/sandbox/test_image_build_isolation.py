"""A task's Dockerfile is a pull request's code: its build gets no more than an arm does.

The attack Dockerfile's ``RUN`` step tries the three ways out the red team used: it reads a
root-only canary on the host and writes a file outside, both through a chroot escape (a static
binary that chroots into a subdirectory and climbs out, which a build under ``--isolation chroot``
with ``CAP_SYS_CHROOT`` allows) and through ``/proc/1/root``, and it calls a server the test runs
on the host's loopback. ``ADD <url>``, fetched by buildah itself, gets no network either. An
honest Dockerfile that installs a file, chowns it and runs its commands still builds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skillab.errors import UsageError
from skillab.sandbox.image import BUILD_NETWORK_ENV, STORE_ENV, build_network, image_sandbox

from ..image_kit import build_base, needs_buildah, write_environment

ESCAPE_C = r"""
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
    mkdir("/escape-dir", 0755);
    chroot("/escape-dir");
    for (int i = 0; i < 64; i++) chdir("..");
    chroot(".");
    execv(argv[1], argv + 1);
    return 1;
}
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return build_base(tmp_path_factory.mktemp("images"))


@pytest.fixture
def loopback() -> Iterator[tuple[int, list[str]]]:
    """A server on the host's 127.0.0.1 that records every request it gets."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached-the-host\n")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()


def escape_binary(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler with a static libc (apt-get install gcc libc6-dev)")
    source = directory / "escape.c"
    source.write_text(ESCAPE_C)
    done = subprocess.run([compiler, "-static", "-O", "-o", str(directory / "escape"), str(source)],
                          capture_output=True, timeout=120)
    if done.returncode != 0:
        pytest.skip("needs a C compiler with a static libc (apt-get install gcc libc6-dev)")
    source.unlink()
    return directory / "escape"


@needs_buildah
def test_a_run_step_reaches_no_host_file_and_no_host_network(store, tmp_path, monkeypatch, loopback):
    port, hits = loopback
    monkeypatch.setenv(STORE_ENV, str(store))
    canary = tmp_path / "canary"
    canary.write_text("host-canary-7f3a\n")
    canary.chmod(0o600)
    outside = tmp_path / "written-outside"
    environment = tmp_path / "environment"
    environment.mkdir()
    escape_binary(environment)
    steal = f"cat {canary}; echo pwned > {outside}"
    write_environment(environment, f"""\
FROM python:3.12-slim
COPY escape /escape
RUN (/escape /bin/sh -c '{steal}'; cat /proc/1/root{canary}; echo pwned > /proc/1/root{outside}; \
wget -q -T 5 -O - http://127.0.0.1:{port}/run-step) > /loot 2>&1; echo built > /built
""")
    with image_sandbox(environment) as choice:
        rootfs = choice.backend.rootfs
        loot = (rootfs / "loot").read_text(errors="replace")
        assert (rootfs / "built").read_text() == "built\n"  # the step ran
    assert "host-canary" not in loot, loot
    assert not outside.exists()
    assert hits == [] and "reached-the-host" not in loot, (hits, loot)


@needs_buildah
def test_add_from_a_url_reaches_no_host_network(store, tmp_path, monkeypatch, loopback):
    port, hits = loopback
    monkeypatch.setenv(STORE_ENV, str(store))
    environment = write_environment(tmp_path / "environment",
                                    f"FROM python:3.12-slim\nADD http://127.0.0.1:{port}/add /fetched\n")
    with pytest.raises(UsageError, match="buildah bud failed"):
        with image_sandbox(environment):
            pass
    assert hits == []


@needs_buildah
def test_an_honest_dockerfile_still_builds(store, tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_ENV, str(store))
    environment = write_environment(tmp_path / "environment", """\
FROM python:3.12-slim
COPY data.txt /opt/data.txt
RUN mkdir -p /home/app && chown 1000:1000 /home/app && cp /opt/data.txt /home/app/ && \
    echo ok > /home/app/made && ls -ln /home | grep -q " 1000 "
""")
    (environment / "data.txt").write_text("data\n")
    with image_sandbox(environment) as choice:
        home = choice.backend.rootfs / "home" / "app"
        assert (home / "made").read_text() == "ok\n"
        assert (home / "data.txt").read_text() == "data\n"
        assert home.stat().st_uid == 1000  # ownership as the Dockerfile set it, not shifted


def test_an_unknown_build_network_is_a_usage_error(monkeypatch):
    monkeypatch.setenv(BUILD_NETWORK_ENV, "bridge")
    with pytest.raises(UsageError, match="SKILLAB_IMAGE_BUILD_NETWORK='bridge': expected one of none, host"):
        build_network()


@needs_buildah
@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "169.254.169.254"])
def test_a_base_image_is_never_pulled_from_the_hosts_loopback_or_link_local_addresses(
        store, tmp_path, monkeypatch, loopback, host):
    port, hits = loopback
    monkeypatch.setenv(STORE_ENV, str(store))
    name = host.format(port=port)
    environment = write_environment(tmp_path / "environment", f"FROM {name}/base:1\n")
    with pytest.raises(UsageError, match=f"the base image {re.escape(name)}/base:1 .* loopback or link-local"):
        with image_sandbox(environment):
            pass
    assert hits == []
