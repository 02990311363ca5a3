"""``skillab route``: the candidate among a catalogue, end to end through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.core.routing import RouteDocument
from skillab.core.wire import from_wire, to_wire

from ..action_harness import github  # noqa: F401 (fixture)
from ..fakes.model_server import FakeModelServer, text, tool_call

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "routing"
KEY = "sk-ant-api03-" + "R0ute" * 9


def route(*args: str, out: Path) -> tuple[int, dict]:
    code = main(["route", *args, "--output", str(out)])
    return code, json.loads(out.read_text()) if out.exists() else {}


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(EXAMPLE.parent.parent)


@pytest.mark.usefixtures("in_repo")
def test_the_documented_example_names_what_the_candidate_steals(tmp_path, capsys):
    # The command docs/routing.md gives, verbatim but for the output path.
    code, doc = route("examples/routing/release-notes", "--catalogue", "examples/routing/catalogue",
                      "--adapter", "mock", "--runs", "3", out=tmp_path / "route.json")
    printed = capsys.readouterr().out
    assert code == 0
    [agent] = doc["agents"]
    assert agent["stolen_queries"] == ["changelog/summarize-release", "changelog/unreleased-section"]
    [changelog] = [t for t in agent["steals"] if t["skill"] == "changelog"]
    assert changelog["significant"] and changelog["p_adjusted"] <= 0.05
    assert not any(t["significant"] for t in agent["steals"] if t["skill"] != "changelog")
    assert "2 stolen from changelog" in printed
    # Cost is linear in queries: 14 queries x 3 runs x 2 conditions, with 4 catalogue skills listed.
    assert doc["trials"] == 84 and agent["candidate"]["trials"] == 42 and agent["catalogue"]["trials"] == 42
    # The document reads back into its type and writes the same bytes.
    assert to_wire(from_wire(RouteDocument, doc)) == doc


@pytest.mark.usefixtures("in_repo")
def test_gates_fail_the_run_and_say_why(tmp_path, capsys):
    args = ("examples/routing/release-notes", "--catalogue", "examples/routing/catalogue", "--adapter", "mock",
            "--runs", "3", "--json")
    code, _ = route(*args, "--max-stolen", "0", out=tmp_path / "a.json")
    assert code == 1 and "2 queries stolen beyond noise (--max-stolen 0)" in capsys.readouterr().err
    code, _ = route(*args, "--max-stolen", "2", "--min-route-accuracy", "1", out=tmp_path / "b.json")
    assert code == 0


def test_one_run_per_query_names_nothing_however_it_looks(tmp_path):
    # Each query once: two queries taken once each is no evidence of a steal on its own.
    code, doc = route(str(EXAMPLE / "release-notes"), "--catalogue", str(EXAMPLE / "catalogue"),
                      "--adapter", "mock", out=tmp_path / "r.json")
    [agent] = doc["agents"]
    assert code == 0 and agent["stolen_queries"] == [] and agent["now_routed_to_candidate"]


def test_against_lists_the_original_in_the_catalogue_condition(tmp_path):
    original = tmp_path / "original"
    shutil.copytree(EXAMPLE / "release-notes", original)
    code, doc = route(str(EXAMPLE / "release-notes"), "--catalogue", str(EXAMPLE / "catalogue"), "--adapter", "mock",
                      "--runs", "3", "--against", str(original), "--markdown", str(tmp_path / "r.md"),
                      "--html", str(tmp_path / "r.html"), out=tmp_path / "r.json")
    [agent] = doc["agents"]
    assert code == 0 and "release-notes" in agent["catalogue"]["skills"]
    # The original routed the same way, so nothing moved: no steal, and the candidate loses nothing.
    assert agent["stolen_queries"] == [] and agent["loses"]["skill"] == "release-notes"
    assert not agent["loses"]["significant"] and agent["loses"]["p_value"] == 1.0
    assert "<!-- skillab:route -->" in (tmp_path / "r.md").read_text()
    assert "<table>" in (tmp_path / "r.html").read_text()


def test_a_link_in_the_catalogue_is_never_followed(tmp_path, capsys):
    catalogue = tmp_path / "catalogue"
    shutil.copytree(EXAMPLE / "catalogue", catalogue)
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "SKILL.md").write_text("---\nname: outside\ndescription: host canary 7f3a\n---\nCANARY-7f3a\n")
    (catalogue / "outside").symlink_to(secret)
    code, doc = route(str(EXAMPLE / "release-notes"), "--catalogue", str(catalogue), "--adapter", "mock",
                      out=tmp_path / "r.json")
    assert code == 0 and "outside" not in doc["catalogue"]
    assert any("left out: a link" in w for w in doc["warnings"])


@pytest.mark.parametrize("args, message", [
    ((), "route needs a catalogue"),
    (("--catalogue", "nowhere"), "--catalogue nowhere: not a directory"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    code, _ = route(str(EXAMPLE / "release-notes"), "--adapter", "mock", *args, out=tmp_path / "r.json")
    assert code == 2 and message in capsys.readouterr().err


def test_an_empty_catalogue_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _ = route(str(EXAMPLE / "release-notes"), "--catalogue", str(tmp_path / "empty"), "--adapter", "mock",
                    out=tmp_path / "r.json")
    assert code == 2 and "holds no skill beside the candidate" in capsys.readouterr().err


def _skill(root: Path, name: str, description: str, queries: list[str]) -> Path:
    skill = root / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo {name} things.\n")
    (skill / "triggers.yaml").write_text(yaml.safe_dump([{"query": q, "should_trigger": True} for q in queries]))
    return skill


def test_the_agent_adapter_routes_from_its_listing_against_a_fake_server(tmp_path, monkeypatch):
    """skillab's own tool loop against a fake Anthropic server: the model reads the SKILL.md of
    the skill whose keyword the query holds, among those its system prompt lists."""
    catalogue = tmp_path / "catalogue"
    _skill(catalogue, "changelog", "Changelog entries.", ["changelog: add PR 1", "changelog: release summary",
                                                        "changelog: unreleased"])
    _skill(catalogue, "semver", "Version bumps.", ["semver: major or minor", "semver: drop python 3.8"])
    candidate = _skill(tmp_path, "notes", "Release notes.", ["notes: draft 2.0", "notes: announce 3.4"])

    def reply(req):
        if req.tool_results:
            return text("done")
        query = str(req.messages[0]["content"])
        listed = {name for name in ("changelog", "semver", "notes") if f"- {name}:" in req.system_text}
        # With notes listed, it also takes changelog's "release summary" query.
        want = "notes" if "notes" in listed and ("notes:" in query or "release summary" in query) else \
            next((n for n in ("changelog", "semver") if f"{n}:" in query), None)
        if want is None or want not in listed:
            return text("done")
        return tool_call("read_file", {"path": f".skills/{want}/SKILL.md"})

    with FakeModelServer(reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = route(str(candidate), "--catalogue", str(catalogue), "--model", "claude-haiku-4-5",
                          "--runs", "6", out=tmp_path / "r.json")
    [agent] = doc["agents"]
    assert code == 0 and agent["agent"] == "agent" and agent["candidate"]["errors"] == 0
    assert agent["own_accuracy"]["value"] == 1.0
    [changelog] = [t for t in agent["steals"] if t["skill"] == "changelog"]
    [taken] = changelog["taken_queries"]
    assert "release-summary" in taken and changelog["significant"]
    assert changelog["catalogue_right"] == 18 and changelog["candidate_right"] == 12
    assert KEY not in (tmp_path / "r.json").read_text()


def test_the_action_adds_the_routing_diff_to_the_comment_and_gates_on_it(tmp_path, github):
    from ..action_harness import run_action

    skills = tmp_path / "workspace" / "skills"
    shutil.copytree(EXAMPLE / "catalogue", skills)
    candidate = skills / "release-notes"
    shutil.copytree(EXAMPLE / "release-notes", candidate)
    # A suite the Action discovers: the same labelled queries as a trigger set file.
    queries = yaml.safe_load((candidate / "triggers.yaml").read_text())
    (candidate / "triggers.yaml").unlink()
    (candidate / "trigger-evals.json").write_text(json.dumps(queries))
    result = run_action(tmp_path / "workspace", event_name="schedule", event_file="schedule.json",
                        api_url=github.url, in_process=True,
                        inputs={"adapter": "mock", "path": "skills", "runs": "3", "route": "skills",
                                "max-stolen": "0"})
    assert result.code == 1, result.log
    assert "routing of release-notes: mock: 2 queries stolen beyond noise (--max-stolen 0)" in result.log
    assert "### Routing: `release-notes` among 4 skills" in result.summary
    assert "2 stolen from changelog" in result.summary


def test_route_takes_the_agents_settings_from_their_rows():
    # The agent a routing trial poses queries to is tuned as a run's is: the same rows, the same
    # parsing, landed in the same fields (route declared its own --runs, --model... and took no
    # --max-turns or --temperature).
    from skillab.cli import build_parser
    from skillab.commands.route import route_configs
    from skillab.core.options import options_for

    args = build_parser("route").parse_args(
        ["route", str(EXAMPLE / "release-notes"), "--catalogue", str(EXAMPLE / "catalogue"),
         "--adapter", "agent", "--model", "claude-sonnet-4-5", "--max-turns", "3", "--temperature", "0.2",
         "--max-tokens", "700", "--runs", "2"])
    [config] = route_configs(args)
    assert (config.agent.max_turns, config.agent.model.temperature, config.agent.max_tokens) == (3, 0.2, 700)
    assert config.engine.runs == 2 and not config.engine.cache_enabled
    shared = {o.name for o in options_for("route")}
    assert {"adapter", "model", "runs", "concurrency", "sandbox", "against", "max-turns"} <= shared


def test_route_refuses_a_bad_setting_as_run_does(capsys):
    assert main(["route", str(EXAMPLE / "release-notes"), "--catalogue", str(EXAMPLE / "catalogue"),
                 "--adapter", "mock", "--max-turns", "0"]) == 2
    assert "--max-turns: must be a positive integer" in capsys.readouterr().err
