"""Every workflow skillab ships runs as written: each one in ``examples/workflows/``, and the ones
the README and docs/action.md print, job by job against the fake GitHub (``tests/workflow_sim.py``),
with the model it names and only the keys it passes from the repository's secrets. The agent and
the judge are fake model servers on loopback, which record the key each request came with.

A workflow that leaves out the judge's key fails here: the judge defaults to another family than
the agent's (OpenAI's for a Claude agent), so it needs ``openai-api-key``. The PR comment's footer
sends reviewers to ``report.html`` in the run's artifacts only when the job uploads it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from skillab.grading.judge import SYSTEM_PROMPT as JUDGE_SYSTEM

from ..action_harness import EVENTS, REPO, github, private_cache  # noqa: F401 (fixtures)
from ..engine.test_against import commit_all, git
from ..fakes.model_server import FakeModelServer, text
from ..results_golden import ROOT
from ..skillgen import grep_case, make_skill
from ..workflow_sim import OURS, WorkflowSim

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-api03-wf-" + "A" * 32, "OPENAI_API_KEY": "sk-proj-wf" + "O" * 40,
           "GEMINI_API_KEY": "AIza" + "G" * 35, "SKILLAB_CACHE_KEY": "a cache key for the test"}
CASES = [grep_case("a", expectations=["The answer says \"SKILLED\""]), grep_case("b")]


def printed_workflow(page: Path, marker: str, tmp: Path) -> Path:
    """The first yaml block after ``marker`` on a page, as a workflow file."""
    block = re.search(r"```yaml\n(.*?)```", page.read_text().split(marker, 1)[1], re.S)
    assert block, f"{page.name} lost its workflow"
    path = tmp / f"{page.stem}.yml"
    path.write_text(block.group(1))
    return path


WORKFLOWS = {p.name: p for p in sorted((ROOT / "examples" / "workflows").glob("*.yml"))}
PRINTED = {"README.md": (ROOT / "README.md", "## In a pull request"),
           "docs/action.md": (ROOT / "docs" / "action.md", "# GitHub Action")}


@pytest.fixture
def pristine(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose pull request edits a skill: (checkout, base sha, head sha)."""
    repo = tmp_path / "pristine"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    make_skill(repo / "skills", CASES, name="alpha", body="Version one.")
    base = commit_all(repo, "base")
    make_skill(repo / "skills", CASES, name="alpha", body="Always answer with the word SKILLED.")
    head = commit_all(repo, "head")
    return repo, base, head


def event_for(workflow: Path, tmp_path: Path, base: str, head: str) -> tuple[str, str, int | None]:
    """(event name, event file, PR number) of the workflow's first trigger, pointed at the repository."""
    triggers = yaml.safe_load(workflow.read_text())[True]
    name = next(iter(triggers)) if isinstance(triggers, dict) else str(triggers)
    source = {"pull_request": "pull_request_opened.json", "pull_request_target": "pull_request_fork.json",
              "schedule": "schedule.json", "workflow_dispatch": "workflow_dispatch.json"}[name]
    payload = json.loads((EVENTS / source).read_text())
    if "pull_request" in payload:
        payload["pull_request"]["base"]["sha"] = base
        payload["pull_request"]["head"]["sha"] = head
        payload["pull_request"]["labels"] = [{"name": "safe-to-evaluate"}]
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return name, str(path), payload.get("number")


def jobs_in_order(sim: WorkflowSim) -> list[tuple[str, dict | None]]:
    order: list[tuple[str, dict | None]] = []
    done: set[str] = set()
    while len(done) < len(sim.jobs):
        for name, job in sim.jobs.items():
            needs = job.get("needs") or []
            if name in done or not set([needs] if isinstance(needs, str) else needs) <= done:
                continue
            matrix = (job.get("strategy") or {}).get("matrix") or {}
            if matrix:
                [(key, values)] = matrix.items()
                order += [(name, {key: value}) for value in values]
            else:
                order.append((name, None))
            done.add(name)
    return order


def reply(request):
    if request.system_text == JUDGE_SYSTEM:
        return text(json.dumps({"passed": "SKILLED" in json.dumps(request.body), "reason": "Read it."}))
    return text("SKILLED" if "SKILLED" in request.system_text else "plain")


def run_workflow(workflow: Path, tmp_path: Path, pristine, github):
    repo, base, head = pristine
    event_name, event_file, number = event_for(workflow, tmp_path, base, head)
    if number is not None:
        github.state.pr_files[(REPO, number)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    with FakeModelServer(reply) as model:
        sim = WorkflowSim(workflow, repo, tmp_path / "runner", github.url, event_file=event_file,
                          event_name=event_name, secrets=SECRETS,
                          env={"ANTHROPIC_BASE_URL": model.url, "OPENAI_BASE_URL": model.openai_url})
        runs = [sim.run_job(name, matrix) for name, matrix in jobs_in_order(sim)]
        requests = model.model_requests()
    return sim, [run for run in runs if run.action is not None], requests, number


def check(workflow: Path, tmp_path: Path, pristine, github) -> None:
    sim, runs, requests, number = run_workflow(workflow, tmp_path, pristine, github)
    assert runs, "no skillab step ran"
    for run in runs:
        log = run.action.log
        assert "no provider credentials" not in log and "needs an API key" not in log, log
        assert run.action.code in (0, 1), log
    judged = [r for r in requests if r.system_text == JUDGE_SYSTEM]
    agent = [r for r in requests if r.system_text != JUDGE_SYSTEM]
    assert agent and judged, "the agent and the judge both answer a suite with expectations"
    # Each reached with the secret the workflow passes (a base URL alone would let a fake server
    # answer keyless; on GitHub the key is what reaches the API).
    assert {r.auth for r in agent} <= {SECRETS["ANTHROPIC_API_KEY"], f"Bearer {SECRETS['ANTHROPIC_API_KEY']}"}
    assert {r.auth for r in judged} == {f"Bearer {SECRETS['OPENAI_API_KEY']}"}
    if number is not None:
        [comment] = github.state.comments_on(REPO, number)
        footer = comment["body"].rstrip().split("\n")[-1]
        commenting_job = [name for name, job in sim.jobs.items()
                          if any(str(s.get("uses", "")).startswith(OURS) and (s.get("with") or {}).get("shard") is None
                                 for s in job["steps"])][0]
        uploads = any(str(s.get("uses", "")).startswith("actions/upload-artifact@")
                      and "skillab-results" in str((s.get("with") or {}).get("path", ""))
                      and "results.json" not in str((s.get("with") or {}).get("path", ""))
                      for s in sim.jobs[commenting_job]["steps"])
        assert ("`report.html` in its artifacts" in footer) == uploads, footer


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_each_example_workflow_runs_with_the_keys_it_names(name, tmp_path, pristine, github):
    check(WORKFLOWS[name], tmp_path, pristine, github)


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_each_printed_workflow_runs_with_the_keys_it_names(name, tmp_path, pristine, github):
    page, marker = PRINTED[name]
    check(printed_workflow(page, marker, tmp_path), tmp_path, pristine, github)


def test_a_workflow_without_the_upload_gets_a_footer_without_the_artifact(tmp_path, pristine, github):
    page, marker = PRINTED["README.md"]
    workflow = printed_workflow(page, marker, tmp_path)
    document = yaml.safe_load(workflow.read_text())
    steps = document["jobs"]["skillab"]["steps"]
    document["jobs"]["skillab"]["steps"] = [s for s in steps if "upload-artifact" not in str(s.get("uses", ""))]
    bare = tmp_path / "bare.yml"
    bare.write_text(yaml.safe_dump(document).replace("true:", "on:", 1))
    check(bare, tmp_path, pristine, github)


def test_a_missing_key_on_pull_request_target_blames_the_workflow_not_fork_secrets(tmp_path, pristine, github):
    # pull_request_target hands the run this repository's secrets: a key that is missing is one
    # the workflow does not pass, which no fork contributor can fix.
    workflow = yaml.safe_load(WORKFLOWS["skillab-fork-pr.yml"].read_text())
    [step] = [s for s in workflow["jobs"]["skillab"]["steps"] if str(s.get("uses", "")).startswith(OURS)]
    step["with"].pop("openai-api-key", None)
    bare = tmp_path / "fork-without-judge-key.yml"
    bare.write_text(yaml.safe_dump(workflow).replace("true:", "on:", 1))
    repo, base, head = pristine
    event_name, event_file, number = event_for(bare, tmp_path, base, head)
    github.state.pr_files[(REPO, number)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    sim = WorkflowSim(bare, repo, tmp_path / "runner", github.url, event_file=event_file, event_name=event_name,
                      secrets=SECRETS)
    run = sim.run_job("skillab")
    assert run.action is not None and run.action.code == 1
    notice = re.search(r"^::notice::skillab did not run: (.*)$", run.action.stdout, re.M)
    assert notice and "OPENAI_API_KEY" in notice.group(1), run.action.log
    assert "fork" not in notice.group(1)
    assert "openai-api-key" in notice.group(1) and "pull_request_target" in notice.group(1)


def test_the_examples_are_committed_as_they_run():
    # The simulation reads the files as they are; a workflow git does not track is not shipped.
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "examples/workflows"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert sorted(Path(p).name for p in tracked) == sorted(WORKFLOWS)
