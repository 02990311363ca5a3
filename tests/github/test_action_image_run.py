"""The built image, run as GitHub runs a Docker action, against the fake GitHub server.

Opt-in (minutes, root, buildah and runc): ``SKILLAB_IMAGE_TESTS=1 python -m pytest
tests/github/test_action_image_run.py``. It builds the image with the image kit
(``SKILLAB_IMAGE_KIT``, default /work/shared/tools/image) unless ``SKILLAB_IMAGE_BUILT=1`` says the
kit's ``$IMAGE`` is current, then runs ``run-action.sh`` on a pull request, on SIGTERM, and on a
workspace owned by a uid the image has never heard of.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..action_harness import parse_output_file
from ..engine.test_against import commit_all, git
from ..fakes.github_server import GitHubServer
from ..skillgen import answers, grep_case, make_skill

KIT = Path(os.environ.get("SKILLAB_IMAGE_KIT", "/work/shared/tools/image"))
ROOT = Path(__file__).resolve().parent.parent.parent
REPO = "acme/skills"
TOKEN = "ghs_kit000000000000000000000000000000000"
# The kit's store, read before any fixture points HOME or XDG_CACHE_HOME elsewhere.
KIT_WORK = Path(os.environ.get("WORK") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                / "skillab-image-kit")

pytestmark = pytest.mark.skipif(
    os.environ.get("SKILLAB_IMAGE_TESTS") != "1" or os.geteuid() != 0 or not (KIT / "run-action.sh").is_file(),
    reason="image tests are opt-in: SKILLAB_IMAGE_TESTS=1, as root, with the image kit",
)


@pytest.fixture(scope="module")
def image():
    if os.environ.get("SKILLAB_IMAGE_BUILT") != "1":
        subprocess.run(["env", f"WORK={KIT_WORK}", "bash", str(KIT / "build.sh"), "--build-arg", "BASE_IMAGE=python:3.11-slim", str(ROOT)],
                       check=True, timeout=1800)


@pytest.fixture
def github():
    server = GitHubServer()
    server.state.tokens[TOKEN] = "write"
    with server:
        yield server


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository whose last commit edits a skill: the pull request's head."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    responses = {"rescued": answers("SKILLED", "plain"), "kept": answers("SKILLED", "SKILLED")}
    cases = [grep_case("rescued"), grep_case("kept")]
    make_skill(repo / "skills", cases, name="alpha", body="Version one.", responses=responses)
    make_skill(repo / "skills", cases, name="beta", responses=responses)
    shutil.copy(ROOT / "action.yml", repo / "action.yml")  # the kit reads the inputs' defaults
    commit_all(repo, "base")
    make_skill(repo / "skills", cases, name="alpha", body="Version two: say SKILLED.", responses=responses)
    commit_all(repo, "head")
    return repo


def run_kit(checkout: Path, github: GitHubServer, *args: str, background: bool = False):
    env = {**os.environ, "WORK": str(KIT_WORK), "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": REPO, "KIT_GITHUB_TOKEN": TOKEN}
    command = ["bash", str(KIT / "run-action.sh"), "--input", "adapter=mock", *args, str(checkout)]
    if background:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def where(text: str, name: str) -> Path:
    return Path(re.search(rf"^{re.escape(name)}:\s+(\S+)$", text, re.M).group(1))


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_a_pull_request_through_the_image(image, checkout, github):
    github.state.pr_files[(REPO, 1)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    github.state.add_comment(REPO, 1, "<!-- skillab:report path=. -->\nfake", user="mallory")
    started = time.monotonic()
    done = run_kit(checkout, github, "--event", "pull_request")
    took = time.monotonic() - started
    print(f"image PR run: {took:.1f}s")
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    outputs = parse_output_file(where(text, "GITHUB_OUTPUT").read_text())
    assert json.loads(outputs["suites"]) == ["skills/alpha"] and outputs["verdict"] == "pass"
    workspace = where(text, "workspace")
    results = workspace / outputs["results-path"]
    assert results.stat().st_uid == 1001  # written as the workspace's owner, not root
    assert json.loads(results.read_text())["suites"][0]["comparison"]  # the base commit arm ran
    comments = github.state.comments_on(REPO, 1)
    assert [c["user"]["login"] for c in comments] == ["mallory", "github-actions[bot]"]
    assert comments[0]["body"].endswith("fake")


def test_a_workspace_owned_by_another_uid(image, checkout, github):
    github.state.pr_files[(REPO, 1)] = [{"filename": "skills/beta/SKILL.md", "status": "modified"}]
    done = run_kit(checkout, github, "--event", "pull_request", "--uid", "4242")
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "running as uid 4242" in text
    outputs = parse_output_file(where(text, "GITHUB_OUTPUT").read_text())
    assert (where(text, "workspace") / outputs["results-path"]).stat().st_uid == 4242
    assert where(text, "step summary").read_text().startswith("## ")


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_sigterm_to_the_container_writes_partial_results_and_exits(image, checkout, github):
    slow = grep_case("slow")
    slow["validators"] = [{"cmd": "sleep 300", "label": "slow"}]
    make_skill(checkout / "skills", [grep_case("quick"), slow], name="gamma",
               responses={"quick": answers("SKILLED", "plain"), "slow": answers("SKILLED", "plain")})
    commit_all(checkout, "gamma")
    proc = run_kit(checkout, github, "--input", "concurrency=1", "--input", "path=skills/gamma",
                   background=True)
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "quick (run 1)" in line:
                break
        time.sleep(1.0)  # the slow validator is running now
        cid = _container(proc.pid)
        started = time.monotonic()
        subprocess.run(["runc", "--root", str(_kit_work() / "runc"), "kill", cid, "TERM"], check=True)
        rest, _ = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = "".join(lines) + rest
    print(f"SIGTERM to exit: {took:.1f}s")
    assert proc.returncode == 130, text
    assert took < 10
    outputs = parse_output_file(where(text, "GITHUB_OUTPUT").read_text())
    assert outputs["results-path"] and "Interrupted" in where(text, "step summary").read_text()


def _kit_work() -> Path:
    return KIT_WORK


def _container(kit_pid: int) -> str:
    listed = subprocess.run(["runc", "--root", str(_kit_work() / "runc"), "list", "-q"],
                            capture_output=True, text=True, check=True).stdout.split()
    mine = [cid for cid in listed if cid.startswith(f"kit-{kit_pid}-")]
    assert len(mine) == 1, listed
    return mine[0]
