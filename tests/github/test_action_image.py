"""The Action's image recipe. No Docker engine runs here, so these read the Dockerfile and the
build context it gets (CI builds both image variants for real)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def instructions(text: str = DOCKERFILE) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", text)
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _pattern(text: str) -> re.Pattern[str]:
    """A .dockerignore line as Docker matches it: ``**`` any depth, ``*`` within one name, and a
    match on a directory covers everything under it."""
    out = ""
    i = 0
    while i < len(text):
        if text.startswith("**", i):
            out, i = out + ".*", i + 2
        elif text[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif text[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(text[i]), i + 1
    return re.compile(out + "(/.*)?")


def in_context(rel: str) -> bool:
    """Whether ``rel`` reaches the build: the last .dockerignore line that matches decides."""
    included = True
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if _pattern(line.lstrip("!").rstrip("/")).fullmatch(rel):
            included = negate
    return included


def test_pinned_base_no_user_and_tini_in_front_of_the_entrypoint():
    steps = instructions()
    assert steps[0][0] == "ARG" and re.fullmatch(r"BASE_IMAGE=python:3\.11-slim\S*@sha256:[0-9a-f]{64}", steps[0][1])
    assert steps[1] == ("FROM", "${BASE_IMAGE}")
    assert ("ARG", "WITH_CLAUDE_CODE=false") in steps
    # GitHub: Docker actions must not set USER; the entrypoint drops to the workspace owner.
    assert not [arg for op, arg in steps if op == "USER"]
    assert steps[-1] == ("ENTRYPOINT", '["/usr/bin/tini", "--", "skillab", "action"]')
    runs = [arg for op, arg in steps if op == "RUN"]
    assert "tini" in runs[0]
    assert 'if [ "$WITH_CLAUDE_CODE" = "true" ]' in " ".join(runs)


def test_dependencies_install_from_the_lock_in_a_layer_before_the_code():
    steps = instructions()
    copies = [arg for op, arg in steps if op == "COPY"]
    assert copies[0].startswith("requirements/action.txt ")
    runs = [arg for op, arg in steps if op == "RUN"]
    assert "--no-deps -r /tmp/skillab-requirements.txt" in runs[1]
    assert "--no-deps /tmp/skillab-src" in runs[-1] and "pip check" in runs[-1]
    lock = {line.split("==")[0].lower().replace("_", "-")
            for line in (ROOT / "requirements" / "action.txt").read_text().splitlines()
            if line and not line.startswith("#")}
    assert all("==" in line for line in (ROOT / "requirements" / "action.txt").read_text().splitlines()
               if line and not line.startswith("#"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = {re.split(r"[<>=!~\[ ;]", dep)[0].lower().replace("_", "-")
              for dep in pyproject["project"]["dependencies"]}
    assert wanted <= lock, wanted - lock


def test_the_claude_code_dockerfile_is_the_dockerfile_with_the_cli():
    theirs = [step for step in instructions((ROOT / "claude-code.Dockerfile").read_text())]
    ours = instructions()
    assert [s for s in theirs if s != ("ARG", "WITH_CLAUDE_CODE=true")] == \
        [s for s in ours if s != ("ARG", "WITH_CLAUDE_CODE=false")]
    assert ("ARG", "WITH_CLAUDE_CODE=true") in theirs
    pinned = (ROOT / "docker" / "install-claude-code.py").read_text()
    version = dict(arg.split("=", 1) for op, arg in ours if op == "ARG" and "=" in arg)["CLAUDE_CODE_VERSION"]
    assert re.search(rf'"{re.escape(version)}": {{\s*"linux-x64": "sha512-', pinned)


def test_the_agent_clis_variant_pins_codex_and_gemini_as_ci_tests_them():
    args = dict(arg.split("=", 1) for op, arg in instructions() if op == "ARG" and "=" in arg)
    runs = " ".join(arg for op, arg in instructions() if op == "RUN")
    assert 'install-agent-clis.py "$CODEX_VERSION" "$GEMINI_CLI_VERSION"' in runs
    # .ci/run and the tests install what tests/node_cli.py reads from these ARGs (tests/test_node_cli.py).
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m tests.node_cli --install" in ci
    pinned = (ROOT / "docker" / "install-agent-clis.py").read_text()
    for package, version in (("@openai/codex", args["CODEX_VERSION"]),
                             ("@openai/codex", args["CODEX_VERSION"] + "-linux-x64"),
                             ("@openai/codex", args["CODEX_VERSION"] + "-linux-arm64"),
                             ("@google/gemini-cli", args["GEMINI_CLI_VERSION"])):
        assert re.search(rf'\("{re.escape(package)}", "{re.escape(version)}"\): "sha512-', pinned), version


def test_the_build_context_holds_what_pip_install_needs_and_nothing_else():
    assert in_context("pyproject.toml") and in_context("README.md")
    package = [p.relative_to(ROOT).as_posix() for p in (ROOT / "runner" / "skillab").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    assert package and all(in_context(rel) for rel in package)
    assert in_context("requirements/action.txt") and in_context("docker/install-claude-code.py")
    assert in_context("docker/install-agent-clis.py") and in_context("docker/npm_tarball.py")
    for left_out in ("tests/github/test_action_image.py", ".git/HEAD", "examples/changelog-entry/SKILL.md",
                     "runner/skillab/__pycache__/cli.cpython-311.pyc", ".venv/bin/python"):
        assert not in_context(left_out), left_out
    copied = [arg.split()[0] for op, arg in instructions() if op == "COPY"]
    assert all(in_context(src) for src in copied)


def test_action_yml_points_at_this_dockerfile():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    [step] = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    assert step["env"]["SKILLAB_DOCKERFILE"] == "${{ github.action_path }}/Dockerfile"
    assert step["env"]["SKILLAB_CONTEXT"] == "${{ github.action_path }}"
