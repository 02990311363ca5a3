"""The Action with several agents (``adapter: claude-code,codex,gemini-cli``): every suite runs
under each agent, and the one PR comment carries the portability table, one row per agent.

The end-to-end case drives the three real agent CLIs from npm against the fake model server
(each in its own wire protocol) and the fake GitHub REST server; the scripted model is the one
``test_portability`` uses: it loads the skill when offered and edits CHANGELOG.md the house way
only after reading the skill's body. The gating case pairs the mock agent with skillab's own
tool loop, so an agent that does worse fails the check by name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.github.comment import with_marker

from ..action_harness import REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.model_server import text
from ..reports.test_portability import EXAMPLE, KEYS, agents_on_path, changelog_model  # noqa: F401
from ..skillgen import answers, grep_case, make_skill
from .test_action_pull_request import pr_files

AGENTS = ("claude-code", "codex", "gemini-cli")
MODELS = "claude-haiku-4-5,gpt-5-mini,gemini-2.5-flash"
SKILL_DIR = "skills/changelog-entry"


@pytest.fixture
def changelog_repo(tmp_path: Path) -> Path:
    """A repository holding the changelog-entry example with its one file-editing case."""
    workspace = tmp_path / "workspace"
    skill = workspace / SKILL_DIR
    skill.mkdir(parents=True)
    shutil.copy(EXAMPLE / "SKILL.md", skill / "SKILL.md")
    shutil.copytree(EXAMPLE / "scripts", skill / "scripts")
    suite = yaml.safe_load((EXAMPLE / "eval.yaml").read_text())
    suite["cases"] = [c for c in suite["cases"] if c["name"] == "update-changelog-file"]
    (skill / "eval.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return workspace


def test_three_agents_one_pr_comment_with_a_row_per_agent(
    changelog_repo, github, server, agents_on_path, monkeypatch  # noqa: F811
):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    server.handler = changelog_model
    pr_files(github, 7, [f"{SKILL_DIR}/SKILL.md"])
    # The report of an earlier push: this run's report replaces it in place.
    earlier = github.state.add_comment(REPO, 7, with_marker("## skillab: an earlier report"),
                                       user="github-actions[bot]")
    inputs = {
        "adapter": ",".join(AGENTS),
        "model": MODELS,
        # Each key as its input: none enters the environment the CLIs could inherit.
        "anthropic-api-key": KEYS["ANTHROPIC_API_KEY"],
        "openai-api-key": KEYS["OPENAI_API_KEY"],
        "gemini-api-key": KEYS["GEMINI_API_KEY"],
        "fail-on-verdict": "fail,error",
    }
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)

    result = run_action(changelog_repo, event_name="pull_request", event_file="pull_request_opened.json",
                        api_url=github.url, inputs=inputs, in_process=True)

    assert result.code == 0, result.log
    assert {r.api for r in server.model_requests()} >= {"anthropic", "responses", "gemini"}
    assert json.loads(result.outputs["suites"]) == [SKILL_DIR]
    # No lift pooled across agents: each has its own baseline.
    assert result.outputs["verdict"] == "pass" and result.outputs["delta-pts"] == ""
    documents = result.results()["suites"]
    assert [d["adapter"]["name"] for d in documents] == list(AGENTS)
    for agent in AGENTS:
        on_disk = changelog_repo / "skillab-results" / "skills__changelog-entry" / agent / "results.json"
        assert json.loads(on_disk.read_text())["adapter"]["name"] == agent
    comments = github.state.comments_on(REPO, 7)
    assert [c["id"] for c in comments] == [earlier["id"]]
    assert [r.method for r in github.state.requests if "/comments" in r.path] == ["GET", "PATCH"]
    body = comments[0]["body"]
    assert "**Portability** · one row per agent" in body
    rows = [line for line in body.splitlines() if line.startswith("| changelog-entry |")]
    assert len(rows) == 3
    for agent, offered in zip(AGENTS, ("discover (.claude/skills)", "discover (.agents/skills)",
                                      "discover (.gemini/skills)")):
        row = next(line for line in rows if f"| {agent} " in line)
        # Offered, loaded in its with-skill arm, +100 pts (one case: no interval), and a cost.
        assert offered in row and f"| {offered} | 100% | 100% | 0% | +100.0 | pass | $" in row
    assert body[body.index("\n") + 1:].rstrip() == result.summary.rstrip()
    for value in KEYS.values():
        assert value not in body and value not in result.log
        assert value not in (changelog_repo / "skillab-results" / "results.json").read_text()


@pytest.fixture
def two_suites(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    for name in ("alpha", "beta"):
        make_skill(workspace / "skills", [grep_case("one"), grep_case("two")], name=name,
                   responses={"one": answers("SKILLED", "plain"), "two": answers("SKILLED", "plain")})
    return workspace


def test_each_agent_is_gated_on_its_own_and_named_when_it_fails(two_suites, github, server, monkeypatch):
    # The mock agent follows the skill; skillab's own agent, on this model, never does.
    server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "G" * 40)
    server.handler = lambda req: text("plain")
    pr_files(github, 7, ["skills/alpha/SKILL.md", "skills/beta/eval.yaml"])

    result = run_action(two_suites, event_name="pull_request", event_file="pull_request_opened.json",
                        api_url=github.url, in_process=True,
                        inputs={"adapter": "mock,agent", "model": "claude-haiku-4-5",
                                "judge-model": "claude-haiku-4-5", "judge-same-family": "true"})

    assert result.code == 1, result.log
    assert json.loads(result.outputs["suites"]) == ["skills/alpha", "skills/beta"]
    documents = result.results()["suites"]
    assert [(d["suite"]["skill"], d["adapter"]["name"]) for d in documents] == [
        ("alpha", "mock"), ("beta", "mock"), ("alpha", "agent"), ("beta", "agent")]
    assert [d["verdict"] for d in documents[:2]] == ["pass", "pass"]
    reason = next(line for line in result.log.splitlines() if "check failed" in line)
    assert "(agent agent)" in reason and "(agent mock)" not in result.log
    body = github.state.comments_on(REPO, 7)[0]["body"]
    rows = [line for line in body.splitlines() if line.startswith(("| alpha |", "| beta |"))]
    assert len(rows) == 4 and sum("| mock" in r for r in rows) == 2


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"adapter": "mock,nope"}, "input 'adapter': 'mock,nope': choose one or more of"),
        ({"adapter": "mock,mock"}, "each once"),
        ({"adapter": "mock,agent", "model": "a,b,c"}, "one model for all"),
        ({"adapter": "mock,agent"}, "needs a model"),
    ],
)
def test_bad_agent_lists_exit_2_before_any_suite(two_suites, github, inputs, message):
    result = run_action(two_suites, event_name="schedule", event_file="schedule.json",
                        api_url=github.url, inputs=inputs, in_process=True)
    assert result.code == 2 and message in result.log
    assert not (two_suites / "skillab-results" / "results.json").exists()


def test_an_agent_cli_the_image_lacks_names_the_image_that_has_it(two_suites, github, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run_action(two_suites, event_name="schedule", event_file="schedule.json",
                        api_url=github.url, in_process=True,
                        inputs={"adapter": "mock,codex", "model": "gpt-5-mini"})
    assert result.code == 2
    assert "adapter 'codex' needs the 'codex' CLI" in result.log and "skillab/claude-code@v1" in result.log


def test_an_agent_without_its_key_is_skipped_and_the_others_still_run(two_suites, github, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = run_action(two_suites, event_name="schedule", event_file="schedule.json",
                        api_url=github.url, in_process=True,
                        inputs={"adapter": "agent,mock", "model": "claude-haiku-4-5"})
    assert result.code == 1  # the agent that could not run fails the check
    assert [d["adapter"]["name"] for d in result.results()["suites"]] == ["mock", "mock"]
    # The job summary (escaped markdown) says which agent did not run and why.
    assert "skills/alpha \\[agent\\] did not run" in result.summary
    assert "set ANTHROPIC\\_API\\_KEY" in result.summary


def test_a_sharded_run_under_two_agents_merges_per_agent(two_suites, github, server, monkeypatch, tmp_path):
    """Shard jobs under ``adapter: mock,agent`` and a ``mode: merge`` job: each agent's shards
    join into its own document and results file, and the gate names the agent that failed."""
    server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "H" * 40)
    server.handler = lambda req: text("plain")
    inputs = {"adapter": "mock,agent", "model": "claude-haiku-4-5", "mode": "all", "path": "skills"}
    artifacts = tmp_path / "artifacts"
    for index in (1, 2):
        result = run_action(two_suites, event_name="schedule", event_file="schedule.json", api_url=github.url,
                            in_process=True, inputs={**inputs, "shard": f"{index}/2"})
        assert result.code == 0, result.log
        (artifacts / str(index)).mkdir(parents=True)
        shutil.move(two_suites / "skillab-results", artifacts / str(index) / "skillab-results")
    shutil.move(artifacts, two_suites / "shards")
    merged = run_action(two_suites, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        in_process=True, inputs={"mode": "merge", "path": "shards"})
    assert merged.code == 1, merged.log
    documents = merged.results()["suites"]
    assert sorted((d["suite"]["skill"], d["adapter"]["name"], d["total_cases"]) for d in documents) == [
        ("alpha", "agent", 2), ("alpha", "mock", 2), ("beta", "agent", 2), ("beta", "mock", 2)]
    out = two_suites / "skillab-results"
    kept = sorted(p.parent.relative_to(out).as_posix() for p in out.glob("*/*/results.json"))
    assert kept == ["skills__alpha/agent", "skills__alpha/mock", "skills__beta/agent", "skills__beta/mock"]
    reason = next(line for line in merged.log.splitlines() if "check failed" in line)
    assert "(agent agent)" in reason
