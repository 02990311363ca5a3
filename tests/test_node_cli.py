"""The agent CLIs the tests drive are the versions the image pins, on a fresh clone too: where
``tests/.node`` is missing (or holds another version) the tests install ``PACKAGE@VERSION`` with the
Dockerfile's version, and ``.ci/run`` installs the same list from the same place."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .node_cli import CLIS, installed_version, npm_binary, npm_install

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for npm on PATH: it records its arguments and lays out what `npm install --prefix P
# PKG@VERSION` leaves (the package's package.json and its .bin link), offline.
FAKE_NPM = r"""#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
with open(os.environ["NPM_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
prefix = args[args.index("--prefix") + 1]
spec = args[-1]
name, _, version = spec.rpartition("@")
package = os.path.join(prefix, "node_modules", name)
os.makedirs(package, exist_ok=True)
with open(os.path.join(package, "package.json"), "w") as f:
    json.dump({"name": name, "version": version}, f)
bin_dir = os.path.join(prefix, "node_modules", ".bin")
os.makedirs(bin_dir, exist_ok=True)
exe = os.path.join(bin_dir, os.environ["NPM_EXE"])
open(exe, "w").write("#!/bin/sh\n")
os.chmod(exe, 0o755)
"""


@pytest.fixture
def fake_npm(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(0o755)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("NPM_LOG", str(log))
    monkeypatch.delenv("SKILLAB_CODEX_BIN", raising=False)
    return log


def test_the_pins_are_the_dockerfiles():
    dockerfile = (ROOT / "Dockerfile").read_text()
    for cli in CLIS.values():
        assert f"ARG {cli.arg}={cli.version}\n" in dockerfile


def test_every_install_hint_pins_the_tested_version():
    # What a user is told to install is what CI and the image test: the registry's latest can
    # be older than the pin. The adapters' hints and every `npm install -g` in the docs.
    from skillab.agents.cli_agent import CliAgent
    from skillab.core import plugins

    adapters = [a for a in (plugins.load("agents", n) for n in plugins.BUILTINS["agents"])
                if isinstance(a, type) and issubclass(a, CliAgent) and a.package.startswith("@")]
    by_package = {cli.package: cli for cli in CLIS.values()}
    assert {a.package for a in adapters} == set(by_package)
    for adapter in adapters:
        assert adapter.install_hint() == f"npm install -g {by_package[adapter.package].spec}"
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for package, version in re.findall(r"npm install -g (@?[\w./-]+?)(?:@([\w.-]+))?[`\s]", page.read_text()):
            assert version == by_package[package].version, f"{page.name}: npm install -g {package}@{version}"


def test_a_fresh_clone_installs_the_pinned_version(tmp_path, fake_npm, monkeypatch):
    monkeypatch.setenv("NPM_EXE", "codex")
    prefix = tmp_path / ".node"
    binary = npm_binary("codex", prefix)
    assert Path(binary) == prefix / "node_modules" / ".bin" / "codex"
    [call] = fake_npm.read_text().splitlines()
    assert call.split()[-1] == CLIS["codex"].spec == "@openai/codex@" + CLIS["codex"].version, call
    assert "--save-exact" in call.split(), call
    # Installed once: the next test that asks finds it.
    npm_binary("codex", prefix)
    assert len(fake_npm.read_text().splitlines()) == 1


def test_another_version_left_in_the_prefix_is_replaced_by_the_pinned_one(tmp_path, fake_npm, monkeypatch):
    monkeypatch.setenv("NPM_EXE", "codex")
    prefix = tmp_path / ".node"
    old = prefix / "node_modules" / "@openai" / "codex"
    old.mkdir(parents=True)
    (old / "package.json").write_text(json.dumps({"version": "9.9.9"}))
    (prefix / "node_modules" / ".bin").mkdir()
    (prefix / "node_modules" / ".bin" / "codex").write_text("#!/bin/sh\n")
    npm_binary("codex", prefix)
    assert installed_version(CLIS["codex"], prefix) == CLIS["codex"].version != "9.9.9"


def test_without_npm_the_skip_names_the_package_and_version(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SKILLAB_GEMINI_BIN", raising=False)
    with pytest.raises(pytest.skip.Exception, match=re.escape(CLIS["gemini"].spec)):
        npm_binary("gemini", tmp_path / ".node")


def test_ci_installs_the_same_pins_from_the_same_place():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m tests.node_cli --install" in ci and "npm install" not in ci
    for cli in CLIS.values():
        assert f"{cli.package}@" not in ci, f".ci/run pins {cli.package} by hand"
    listed = subprocess.run([sys.executable, "-m", "tests.node_cli"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    assert listed == [cli.spec for cli in CLIS.values()]


@pytest.mark.parametrize("spec", ["@openai/codex", "@openai/codex@latest", "@google/gemini-cli@^0.9.0", "codex"])
def test_the_installer_refuses_a_spec_without_an_exact_version(tmp_path, fake_npm, spec):
    with pytest.raises(ValueError, match="package@X.Y.Z only"):
        npm_install(tmp_path / ".node", [spec])
    assert not fake_npm.exists() or fake_npm.read_text() == ""


def test_every_test_gets_its_cli_through_the_one_installer():
    # npm run anywhere else in tests/ would choose its own version.
    others = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
              if ".node" not in p.parts and p.name not in {"node_cli.py", "test_node_cli.py"}
              and re.search(r"[\[(,]\s*['\"]npm['\"]", p.read_text())]
    assert others == []


def test_the_installed_clis_are_recorded_at_their_exact_pins():
    # npm records `^VERSION` unless told otherwise, and a later install into the same prefix
    # (the next CLI a test asks for) may then move an earlier one to whatever the registry
    # serves: tests/.node's own package.json must name each pin exactly.
    from .node_cli import NODE_PREFIX

    manifest = NODE_PREFIX / "package.json"
    if not manifest.exists():
        pytest.skip("tests/.node holds no installed CLI (npm installs them on first use)")
    recorded = json.loads(manifest.read_text()).get("dependencies", {})
    for cli in CLIS.values():
        if cli.package in recorded:
            assert recorded[cli.package] == cli.version, f"tests/.node/package.json: {cli.package} {recorded[cli.package]}"
