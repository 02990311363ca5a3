"""Three arms: candidate, no skill, and the original skill (``--against``), end to end.

The scenario throughout: the edit lifts the suite well above no skill, yet breaks one case the
original skill passed. The reports must name that case as a regression of the edit.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from skillab.agents.base import AgentResult
from skillab.cli import main
from skillab.engine.arm import ArmContext, ArmJob, execute_arm
from skillab.grading.trajectory import Trajectory
from skillab.sandbox.backend import default_backend
from skillab.skill.loader import load_skill
from skillab.suite.model import Case, ValidatorSpec

from ..action_harness import EVENTS, REPO, run_action
from ..fakes.github_server import GitHubServer
from ..fakes.model_server import FakeModelServer, text
from ..skillgen import grep_case, make_skill
from .test_against import commit_all, git, two_version_repo

CASES = [grep_case(name) for name in ("kept-a", "kept-b", "broken", "rescued")]
# Which cases each version of the skill gets right; without a skill the agent gets none right.
KNOWS = {"candidate": {"kept-a", "kept-b", "rescued"}, "original": {"kept-a", "kept-b", "broken"}}


def scripted(case: str) -> dict[str, str]:
    def answer(version: str) -> str:
        return "SKILLED" if case in KNOWS[version] else "plain"

    return {"with": answer("candidate"), "without": "plain", "original": answer("original")}


RESPONSES = {c["name"]: scripted(c["name"]) for c in CASES}


def run_cli(tmp_path: Path, capsys, *args: str) -> tuple[int, dict, str, str]:
    out = tmp_path / "results.json"
    code = main(["run", *args, "--quiet", "--no-history", "--output", str(out),
                 "--markdown", str(tmp_path / "report.md")])
    stdout, stderr = capsys.readouterr()
    doc = json.loads(out.read_text()) if out.exists() else {}
    return code, doc, stdout, stderr


def assert_the_edit_broke_one_case(doc: dict, stdout: str, markdown: str) -> None:
    # The headline lift over no skill is positive and unchanged in meaning.
    assert doc["pass_rate"] == {"with_skill": 0.75, "without_skill": 0.0, "delta_pts": 75.0}
    assert {c["case_name"]: c["outcome"] for c in doc["cases"]} == {
        "kept-a": "flip_to_pass", "kept-b": "flip_to_pass", "broken": "fail_kept", "rescued": "flip_to_pass",
    }
    comparison = doc["comparison"]
    assert comparison["pass_rate"] == {"candidate": 0.75, "original": 0.75, "delta_pts": 0.0}
    # Within noise, so not named broken in results.json either (the report calls it noise).
    assert comparison["broken_by_edit"] == [] and comparison["changed_within_noise"] == ["broken"]
    assert comparison["rescued_by_edit"] == ["rescued"]
    assert comparison["outcome_counts"] == {"flip_to_pass": 1, "pass_kept": 2, "fail_kept": 0,
                                            "flip_to_fail": 1, "error": 0}
    assert comparison["statistics"]["flip_to_fail"] == 1 and comparison["statistics"]["mcnemar_p"] == 1.0
    assert {c["case_name"]: c["original_outcome"] for c in doc["cases"]}["broken"] == "flip_to_fail"

    # One flip each way over four cases is noise: listed as changed, never called a regression.
    assert comparison["statistics"]["regression"] is False
    assert "REGRESSION" not in stdout and "broken by the edit" not in markdown.lower()
    assert "changed      within noise (passed with the original, fail now): broken" in stdout
    assert "rescued      by the edit (failed with the original, pass now): rescued" in stdout
    row = next(line for line in stdout.splitlines() if line.lstrip().startswith("broken "))
    assert re.search(r"broken\s+fail\s+fail\s+pass\s+fail_kept\s+\[worse with the edit, within noise\]", row)

    headline = markdown.splitlines()[0]
    assert "+75.0 pts" in headline and "1 case the original passed fails now: changed, within noise" in headline
    section = markdown[markdown.index("### Candidate vs original"):]
    broken_at = section.index("**Changed, within noise** (passed with the original, fail with the candidate "
                              "in this run): broken")
    assert broken_at < section.index("**✅ Rescued by the edit**")
    # The candidate-vs-original section comes before the lift's own flips and table.
    assert markdown.index("### Candidate vs original") < markdown.index("**Rescued by the skill**")
    assert re.search(r"\| broken \| failed in both arms \| ❌ fail \| ❌ fail \| ✅ pass \| worse with the edit, within noise \|", markdown)


def test_mock_three_arm_run_names_the_regression_of_the_edit(tmp_path, capsys):
    original = make_skill(tmp_path / "before", [], body="The original skill.")
    skill = make_skill(tmp_path / "after", CASES, body="The edited skill.", responses=RESPONSES)
    code, doc, stdout, stderr = run_cli(tmp_path, capsys, str(skill), "--adapter", "mock", "--no-cache",
                                        "--against", str(original))
    assert code == 0, stderr
    assert doc["comparison"]["original"]["source"] == "directory"
    assert doc["usage"]["original"]["total_tokens"] > 0
    assert_the_edit_broke_one_case(doc, stdout, (tmp_path / "report.md").read_text())


def test_fake_model_server_three_arm_run_against_a_git_ref(tmp_path, capsys, monkeypatch):
    """The real agent adapter and provider client; each arm's system prompt decides the answer."""
    skill, first, _ = two_version_repo(tmp_path, cases=CASES)

    def answer(request):
        case = re.search(r"Say something for ([\w-]+)\.", request.last_user_text).group(1)
        if "Version two" in request.system_text:
            return text("SKILLED" if case in KNOWS["candidate"] else "plain")
        if "Version one" in request.system_text:
            return text("SKILLED" if case in KNOWS["original"] else "plain")
        return text("plain")

    with FakeModelServer(answer) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "F" * 40)
        code, doc, stdout, stderr = run_cli(
            tmp_path, capsys, str(skill), "--adapter", "agent", "--model", "claude-haiku-4-5",
            "--no-cache", "--against", "HEAD~1",
        )
        systems = [r.system_text for r in server.model_requests()]
    assert code == 0, stderr
    assert len(systems) == 12  # four cases, three arms, one turn each
    assert sum("Version one" in s for s in systems) == 4 and sum("Version two" in s for s in systems) == 4
    assert doc["comparison"]["original"]["commit"] == first
    assert_the_edit_broke_one_case(doc, stdout, (tmp_path / "report.md").read_text())


def test_the_baseline_cache_never_serves_or_stores_the_original_arm(tmp_path, capsys):
    original = make_skill(tmp_path / "before", [], body="The original skill.")
    skill = make_skill(tmp_path / "after", CASES, body="The edited skill.", responses=RESPONSES)
    cache = tmp_path / "cache"
    args = [str(skill), "--adapter", "mock", "--cache-dir", str(cache), "--against", str(original)]
    assert run_cli(tmp_path, capsys, *args)[0] == 0
    stored = sorted(p for p in cache.rglob("*") if p.is_file())
    assert len(stored) == len(CASES)  # one baseline per case, nothing for the original arm
    code, doc, _, _ = run_cli(tmp_path, capsys, *args)
    assert code == 0
    assert doc["cache"]["hits"] == len(CASES)
    assert all(c["without_skill"]["cached"] for c in doc["cases"])
    assert not any(c["original"]["cached"] for c in doc["cases"])
    assert sorted(p for p in cache.rglob("*") if p.is_file()) == stored


class WorkspaceLister:
    """An adapter that answers with the files it finds in its workspace."""

    name = "lister"
    staging_dirs: tuple[str, ...] = ()

    def identity(self) -> dict:
        return {"adapter": self.name}

    def run(self, request) -> AgentResult:
        found = sorted(p.relative_to(request.workspace).as_posix()
                       for p in request.workspace.rglob("*") if p.is_file() and ".home" not in p.parts
                       and ".tmp" not in p.parts)
        contents = {rel: (request.workspace / rel).read_text() for rel in found}
        return AgentResult(final_output=json.dumps(contents), trajectory=Trajectory(user_input="x"))


@pytest.mark.parametrize("arm", ["with_skill", "without_skill", "original"])
def test_each_arm_sees_its_own_bundled_files_and_is_graded_by_the_candidates(tmp_path, arm):
    candidate = load_skill(make_skill(tmp_path / "new", [], files={
        "scripts/grade.sh": "grep -q '' response.txt && echo candidate-grader\n",
        "templates/guide.md": "new guide\n",
    }))
    original = load_skill(make_skill(tmp_path / "old", [], files={
        "scripts/grade.sh": "echo original-grader; exit 1\n",
        "templates/guide.md": "old guide\n",
        "templates/legacy.md": "legacy\n",
    }))
    case = Case(name="c", prompt="p", validators=(ValidatorSpec(cmd="sh scripts/grade.sh", label="grade"),))
    ctx = ArmContext(adapter=WorkspaceLister(), judge=None, skill=candidate,
                     workspace_parent=tmp_path / "arms", max_turns=3, sandbox=default_backend())
    skill = {"with_skill": candidate, "without_skill": None, "original": original}[arm]
    record = execute_arm(ArmJob(case, arm, 0, skill), ctx)

    seen = json.loads(record.final_output)
    expected = {
        "with_skill": {"scripts/grade.sh": candidate, "templates/guide.md": candidate},
        "without_skill": {},
        "original": {"scripts/grade.sh": original, "templates/guide.md": original,
                     "templates/legacy.md": original},
    }[arm]
    assert {rel: text for rel, text in seen.items() if rel != "response.txt"} == {
        rel: (source.root / rel).read_text() for rel, source in expected.items()
    }
    # Whatever the agent saw, the candidate's grader graded it.
    assert record.passed and record.validator_results[0].stdout.strip() == "candidate-grader"


# -- the Action on a pull request ----------------------------------------------------------------


def pr_checkout(tmp_path: Path) -> tuple[Path, str]:
    """A shallow clone of a repo whose PR edits demo-skill and adds fresh-skill; the base commit."""
    skill, base, _ = two_version_repo(tmp_path / "upstream", cases=CASES, responses=RESPONSES)
    upstream = skill.parent.parent
    make_skill(upstream / "skills", [grep_case("only")], name="fresh-skill",
               responses={"only": {"with": "SKILLED", "without": "plain"}})
    commit_all(upstream, "add fresh-skill")
    workspace = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{upstream}", str(workspace))
    return workspace, base


def pr_event(tmp_path: Path, base: str) -> str:
    event = json.loads((EVENTS / "pull_request_opened.json").read_text())
    event["pull_request"]["base"]["sha"] = base
    # The checkout is the pull request's head, as the Action verifies.
    event["pull_request"]["head"]["sha"] = git(tmp_path / "workspace", "rev-parse", "HEAD")
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return str(path)


def test_a_pr_editing_a_skill_is_compared_with_its_base_commit(tmp_path):
    workspace, base = pr_checkout(tmp_path)
    with GitHubServer() as github:
        github.state.pr_files[(REPO, 7)] = [
            {"filename": "skills/demo-skill/SKILL.md", "status": "modified"},
            {"filename": "skills/fresh-skill/SKILL.md", "status": "added"},
            {"filename": "skills/fresh-skill/eval.yaml", "status": "added"},
        ]
        result = run_action(workspace, event_name="pull_request", event_file=pr_event(tmp_path, base),
                            api_url=github.url, inputs={"adapter": "mock"})
        comments = github.state.comments_on(REPO, 7)
    assert result.code == 0, result.log
    demo, fresh = result.results()["suites"]
    assert demo["comparison"]["original"]["commit"] == base  # fetched into the shallow clone
    assert demo["comparison"]["broken_by_edit"] == [] and demo["comparison"]["changed_within_noise"] == ["broken"]
    assert fresh["comparison"] is None and all("original" not in c for c in fresh["cases"])
    body = comments[0]["body"]
    assert "### Candidate vs original" in body
    assert ("**Changed, within noise** (passed with the original, fail with the candidate in this run): "
            "demo-skill / broken") in body
    assert f"skills/fresh-skill: a new skill, with no original at the base commit {base[:12]}" in body
    assert (workspace / ".skillab" / "history.jsonl").is_file()


def test_a_pr_whose_base_cannot_be_fetched_runs_two_arms_with_a_note(tmp_path):
    workspace, base = pr_checkout(tmp_path)
    shutil.rmtree(tmp_path / "upstream")
    with GitHubServer() as github:
        github.state.pr_files[(REPO, 7)] = [{"filename": "skills/demo-skill/SKILL.md", "status": "modified"}]
        result = run_action(workspace, event_name="pull_request", event_file=pr_event(tmp_path, base),
                            api_url=github.url, inputs={"adapter": "mock"})
    assert result.code == 0, result.log
    assert result.results()["suites"][0]["comparison"] is None
    assert f"the original skill at the base commit {base[:12]} could not be read" in result.summary
    assert "::warning::" in result.stdout
