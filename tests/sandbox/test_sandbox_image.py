"""--sandbox image: a SkillsBench-style task's own Dockerfile, built with buildah, is the root
filesystem both arms and the verifier run on.

The base image is a tiny busybox root (no registry is reachable here), tagged
``localhost/python:3.12-slim`` so the task's ``FROM python:3.12-slim`` resolves to it. Building
both takes a few seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.sandbox.image import STORE_ENV, image_sandbox
from skillab.sandbox.workspace import Workspace, run_in

from ..formats.test_skillsbench import make_task, task_md
from ..image_kit import MARKER, build_base, needs_buildah

VERIFIER = """\
mkdir -p /logs/verifier
if grep -q built-by /etc/skillab-test-image && ! ls -A /root/.claude/skills 2>/dev/null | grep -q .; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
pytestmark = needs_buildah


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """An image store holding the busybox base, built once for the module."""
    return build_base(tmp_path_factory.mktemp("images"))


@pytest.fixture
def task(tmp_path) -> Path:
    dockerfile = "FROM python:3.12-slim\nWORKDIR /root\nCOPY data/ /root/data/\nCOPY skills /root/.claude/skills\n"
    return make_task(tmp_path / "image-task", task_md(), dockerfile=dockerfile, test_sh=VERIFIER)


def test_commands_see_the_images_root_and_nothing_of_the_host(store, task, tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_ENV, str(store))
    with image_sandbox(task / "environment") as choice:
        ws = Workspace.create(tmp_path / "run", "arm", backend=choice.backend)
        result = run_in(ws.root, "cat /etc/skillab-test-image; ls /usr/lib | head -3; "
                                 "ls -A /root/.claude/skills; echo made > out.txt; echo END",
                        timeout_s=30, backend=ws.backend)
        again = choice.backend.image
    assert MARKER in result.stdout and result.stdout.strip().endswith("END")
    assert "python3" not in result.stdout  # the host's /usr is not the root
    assert "helper" not in result.stdout  # the image was built without the skill
    assert (ws.root / "out.txt").read_text() == "made\n"
    with image_sandbox(task / "environment") as choice:  # same digest: built once
        assert choice.backend.image.tag == again.tag and choice.backend.image.built is False


def test_both_arms_and_the_verifier_run_in_the_tasks_image(store, task, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(STORE_ENV, str(store))
    out = tmp_path / "results.json"
    code = main(["run", str(task), "--adapter", "mock", "--sandbox", "image", "--no-cache",
                 "--no-history", "--quiet", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["isolation"]["backend"] == "image"
    assert "localhost/skillab-task:" in doc["isolation"]["guarantees"]["view"]
    (record,) = doc["cases"]
    for arm in ("with_skill", "without_skill"):
        assert record[arm]["extra"]["sandbox"] == "image"
        assert record[arm]["extra"]["graders"][0]["score"] == 1.0, record[arm]["extra"]["graders"]
    # The control: the same verifier on the host's system finds no image marker.
    code = main(["run", str(task), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", str(out)])
    (record,) = json.loads(out.read_text())["cases"]
    assert record["with_skill"]["extra"]["graders"][0]["score"] == 0.0


# --- a task whose Dockerfile a workspace cannot reproduce ------------------------------------

OWN_IMAGE_DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /root
RUN echo only-in-the-task-image > /etc/task-marker
COPY skills /opt/skills
"""
# Reward 1 only for the oracle answer, and only where the Dockerfile's RUN ran; says what it saw.
OWN_IMAGE_VERIFIER = """\
mkdir -p /logs/verifier
echo "marker: $(cat /etc/task-marker 2>/dev/null || echo none)"
echo "skills in image: $(ls -A /opt/skills 2>/dev/null | wc -l)"
echo "SKILL.md visible: $(find / -path /proc -prune -o -name SKILL.md -print 2>/dev/null | wc -l)"
if [ "$(cat /etc/task-marker 2>/dev/null)" = only-in-the-task-image ] && [ "$(cat /root/answer.txt 2>/dev/null)" = 42 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
MOCK = """\
own-image-task:
  with: {text: "The answer is in answer.txt.", files: {answer.txt: "42"}}
  without: {text: "I could not work it out.", files: {answer.txt: ""}}
"""


def test_a_task_that_needs_its_own_image_runs_in_it_under_sandbox_image(store, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(STORE_ENV, str(store))
    task = make_task(tmp_path / "own-image-task", task_md(), dockerfile=OWN_IMAGE_DOCKERFILE,
                     test_sh=OWN_IMAGE_VERIFIER)
    (tmp_path / "mock.yaml").write_text(MOCK)
    out = tmp_path / "results.json"
    common = ["--adapter", "mock", "--mock-responses", str(tmp_path / "mock.yaml"), "--no-cache",
              "--no-history", "--quiet", "--output", str(out)]
    # Without the image backend the RUN line makes the task unsupported, as before.
    main(["run", str(task), *common])
    (record,) = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "error"
    assert record["with_skill"]["error"].startswith("unsupported: needs a custom image: Dockerfile line 3: RUN")

    code = main(["run", str(task), "--sandbox", "image", *common])
    assert code == 0, capsys.readouterr().err
    (record,) = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "flip_to_pass", record
    with_skill, without = (record[arm]["extra"]["graders"][0] for arm in ("with_skill", "without_skill"))
    assert with_skill["score"] == 1.0 and without["score"] == 0.0
    for grader in (with_skill, without):
        # The verifier ran on the image (its RUN's marker), which holds no skill despite the COPY.
        assert "marker: only-in-the-task-image" in grader["output"], grader
        assert "skills in image: 0" in grader["output"]
    # The baseline's environment, as its verifier saw it after the agent, has no skill at all.
    assert "SKILL.md visible: 0" in without["output"]


# --- a base image the store does not hold ----------------------------------------------------


@pytest.mark.parametrize("base, pull, said", [
    ("ubuntu:24.04", "never", "SKILLAB_IMAGE_PULL=never"),
    # A registry on the host's loopback: never pulled from (a Dockerfile must not reach the host).
    ("127.0.0.1:9/nothing/base:1", "", "loopback or link-local"),
])
def test_a_missing_base_is_pulled_or_the_error_says_how_to_provide_it(store, tmp_path, monkeypatch, base, pull, said):
    monkeypatch.setenv(STORE_ENV, str(store))
    monkeypatch.setenv("SKILLAB_IMAGE_PULL", pull)
    from skillab.errors import UsageError

    environment = tmp_path / "env"
    environment.mkdir()
    (environment / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /root\n")
    with pytest.raises(UsageError) as caught:
        with image_sandbox(environment):
            pass
    message = str(caught.value)
    assert f"the base image {base} is not in skillab's image store ({store})" in message and said in message
    # Exactly how: the store's own buildah command line, an archive, or a local tag of the name FROM asks for.
    assert f"buildah --root {store}/storage --runroot {store}/run --storage-driver vfs pull" in message
    assert "docker-archive:" in message and f"localhost/{base.split('/')[-1]}" in message
