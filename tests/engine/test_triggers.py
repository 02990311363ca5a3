"""Trigger evaluation: trigger sets, the trials, the metrics, the reports and the gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.errors import SuiteError
from skillab.reports.junit import render_junit
from skillab.scoring.trigger import (
    QueryCounts,
    clustered_rate,
    design_effect,
    sign_flip_p,
    trigger_metrics,
)
from skillab.suite import load_suite
from skillab.suite.trigger import load_trigger_file, suite_trigger_queries

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.model_server import FakeModelServer, http_error, text, tool_call

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "changelog-entry"
KEY = "sk-ant-api03-" + "Tr1gger" * 7


def write_skill(root: Path, name: str, description: str, *, cases: list | None = None,
                triggers: list | None = None, mock: dict | None = None) -> Path:
    skill = root / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n"
                                    f"Instructions of {name}.\n")
    if cases is not None:
        (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    if triggers is not None:
        (skill / "evals").mkdir()
        (skill / "evals" / "trigger-evals.json").write_text(json.dumps(triggers, indent=1))
    if mock is not None:
        (skill / "mock-responses.yaml").write_text(yaml.safe_dump(mock))
    return skill


def cli(*args: str) -> tuple[int, dict]:
    out = Path.cwd() / "r.json"
    code = main(["run", *args, "--quiet", "--no-cache", "--no-history", "--output", str(out)])
    return code, json.loads(out.read_text()) if out.exists() else {}


# --- trigger sets -----------------------------------------------------------------------------


def test_skill_creator_trigger_set_is_read_with_lines(tmp_path):
    path = tmp_path / "trigger-evals.json"
    path.write_text('[\n {"query": "Make a chart of sales", "should_trigger": true},\n'
                    ' {"query": "What is 2+2?", "should_trigger": false}\n]\n')
    first, second = load_trigger_file(path)
    assert (first.query, first.should_trigger, first.line) == ("Make a chart of sales", True, 2)
    assert (second.should_trigger, second.line, second.name) == (False, 3, "trigger-evals-2-what-is-2-2")


@pytest.mark.parametrize("body, expected", [
    ('[{"query": "q", "should_trigger": "yes"}]', ":1: case #1 'should_trigger' — must be true or false"),
    ('[{"query": "", "should_trigger": true}]', "case #1 'query' — must be a non-empty string"),
    ('[{"query": "q", "should_trigger": true, "shuold": 1}]', "unknown key 'shuold'"),
    ('{"query": "q"}', "must be a list of {query, should_trigger} entries"),
    ('[{"query": "q", "should_trigger": true},]', "is not valid JSON"),
])
def test_bad_trigger_sets_name_file_line_entry_and_field(tmp_path, body, expected):
    path = tmp_path / "trigger_evals.json"
    path.write_text(body)
    with pytest.raises(SuiteError) as caught:
        load_trigger_file(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


@pytest.mark.parametrize("link", ["file", "evals-folder"])
def test_a_trigger_set_that_links_out_of_the_skill_is_refused_not_read(tmp_path, capsys, link):
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "trigger-evals.json").write_text(json.dumps([{"query": "HOST-SECRET-QUERY",
                                                             "should_trigger": True}]))
    skill = write_skill(tmp_path / "skills", "linker", "Links out.",
                        cases=[{"name": "c", "prompt": "p", "validators": [{"cmd": "true"}]}])
    if link == "file":
        (skill / "trigger-evals.json").symlink_to(outside / "trigger-evals.json")
    else:
        (skill / "evals").symlink_to(outside)
    assert main(["validate", str(skill)]) == 2
    assert "is a link out of" in capsys.readouterr().err
    code, doc = cli(str(skill), "--adapter", "mock")
    assert code == 2 and "HOST-SECRET-QUERY" not in json.dumps(doc)
    # As a sibling, its queries are left out with a warning; the candidate still runs.
    write_skill(tmp_path / "skills", "main", "Main.", triggers=[{"name": "mine", "query": "Do main things",
                                                                "should_trigger": True}],
                mock={"mine": {"loads": True}})
    code, doc = cli(str(tmp_path / "skills" / "main"), "--adapter", "mock", "--siblings", str(tmp_path / "skills"))
    assert code == 0 and "HOST-SECRET-QUERY" not in json.dumps(doc)
    assert any("linker's trigger queries left out" in w and "link out" in w
               for w in doc["triggers"]["crowd"]["warnings"])


def test_eval_yaml_trigger_cases_and_trigger_sets_merge_and_conflicts_are_refused(tmp_path):
    skill = write_skill(tmp_path, "s", "d", cases=[{"name": "route", "prompt": "Do X", "should_trigger": True}],
                        triggers=[{"query": "do  x", "should_trigger": True}, {"query": "Do Y", "should_trigger": False}])
    (skill / "triggers.yaml").write_text("triggers:\n  - {query: Do Z, should_trigger: false, name: zed}\n")
    queries = suite_trigger_queries(load_suite(skill), skill, skill_name="s")
    assert [(q.name, q.should_trigger) for q in queries] == [
        ("route", True), ("zed", False), ("trigger-evals-2-do-y", False)]
    (skill / "triggers.yaml").write_text("- {query: Do Y, should_trigger: true}\n")
    with pytest.raises(SuiteError, match="one query, one label"):
        suite_trigger_queries(load_suite(skill), skill, skill_name="s")


def test_a_skill_whose_only_suite_is_a_trigger_set_runs_and_the_set_stays_hidden(tmp_path):
    skill = write_skill(tmp_path, "only-triggers", "d", triggers=[{"query": "q1", "should_trigger": True}],
                        mock={"q1": {"loads": True}})
    from skillab.skill.loader import load_skill

    assert "evals/trigger-evals.json" not in load_skill(skill).bundled
    code, doc = cli(str(skill), "--adapter", "mock", "--min-trigger-recall", "1")
    assert code == 0 and doc["total_cases"] == 0 and doc["triggers"]["metrics"]["recall"]["value"] == 1.0


# --- metrics ----------------------------------------------------------------------------------


def test_repeated_runs_of_a_deterministic_model_count_once_per_query():
    # Four queries, three runs each, every query always or never triggered: rho = 1.
    clusters = [(3, 3), (3, 3), (0, 3), (3, 3)]
    assert design_effect(clusters) == 3.0
    rate, single = clustered_rate(clusters), clustered_rate([(1, 1)] * 3 + [(0, 1)])
    assert rate.value == 0.75 and rate.n == 4.0 and (rate.low, rate.high) == (single.low, single.high)
    # Independent-looking trials (every query half the time) keep their full size.
    assert design_effect([(1, 2), (1, 2), (1, 2)]) == 1.0


def test_set_metrics_and_f1_interval():
    metrics = trigger_metrics([QueryCounts(True, 1, 1)] * 3 + [QueryCounts(True, 0, 1)]
                              + [QueryCounts(False, 1, 1)] + [QueryCounts(False, 0, 1)] * 3)
    assert (metrics.recall.value, metrics.false_trigger_rate.value, metrics.precision.value) == (0.75, 0.25, 0.75)
    assert metrics.f1.value == 0.75 and metrics.f1.low < 0.75 < metrics.f1.high


@pytest.mark.parametrize("queries", [
    [QueryCounts(True, 1, 1), QueryCounts(True, 2, 2)],           # should-trigger queries only
    [QueryCounts(False, 1, 1)],                                     # should-not only, one false trigger
    [QueryCounts(True, 1, 1), QueryCounts(False, 0, 0)],            # the should-not query errored
])
def test_precision_and_f1_are_not_claimed_without_both_kinds_of_query(queries):
    # Precision over a set with no should-not query can only be 1 (nothing could trigger
    # falsely), and with no should-trigger query only 0: neither measures anything.
    metrics = trigger_metrics(queries)
    assert metrics.precision.value is None and metrics.precision.low is None
    assert metrics.f1.value is None and metrics.f1.high is None


def test_description_change_is_tested_per_query_with_the_exact_sign_flip():
    moved, kept = (QueryCounts(True, 2, 2), QueryCounts(True, 0, 2)), (QueryCounts(True, 1, 2),) * 2
    assert sign_flip_p([moved] * 3) == 0.25
    assert sign_flip_p([moved] * 6 + [kept] * 4) == 2 / 64
    assert sign_flip_p([kept]) == 1.0
    # Unequal trial counts (an errored trial) compare rates, not counts.
    assert sign_flip_p([(QueryCounts(True, 1, 1), QueryCounts(True, 1, 2))]) == 1.0


# --- the example with the mock adapter --------------------------------------------------------


def test_the_quickstart_example_reports_its_trigger_table(capsys):
    code = main(["run", str(EXAMPLE), "--adapter", "mock", "--quiet", "--no-history",
                 "--output", "r.json", "--markdown", "r.md", "--trajectories", "traj"])
    out = capsys.readouterr().out
    doc = json.loads(Path("r.json").read_text())
    block = doc["triggers"]
    # The spec counts the trigger-only case as skipped by the A/B part even though a trigger
    # trial posed it; the terminal says the same number.
    assert code == 0 and doc["cases_skipped_trigger_only"] == 1
    assert "1 trigger-only" in out
    assert block["metrics"]["recall"]["value"] == 0.8
    assert block["metrics"]["false_trigger_rate"]["value"] == 0.25
    assert block["metrics"]["precision"]["value"] == 0.8
    assert [r["name"] for r in block["false_triggers"]] == ["semver-question"]
    assert [r["name"] for r in block["misses"]] == ["vague-what-changed"]
    # Both labelled cases of eval.yaml are trigger queries: the trigger-only one and the graded one.
    assert {"commit-message-near-miss", "security-section-question"} <= {q["name"] for q in block["queries"]}
    # False triggers and misses come first in the terminal table.
    table = out[out.index("trigger set"):]
    assert table.index("FALSE   semver-question") < table.index("MISSED  vague-what-changed") < table.index("add-unreleased-entry")
    # The transcript of each trial is the evidence: the mock's Skill call is in it.
    transcript = Path("traj/changelog-entry/trigger.semver-question.run1.candidate.txt").read_text()
    assert "Skill" in transcript and "changelog-entry" in transcript
    junit = render_junit([RunLog.from_json(doc)])
    assert 'name="trigger: semver-question"' in junit and "false_trigger: the skill should be left alone" in junit
    markdown = Path("r.md").read_text()
    assert "#### Triggers" in markdown and "❌ false trigger" in markdown and "semver" in markdown


def test_trajectories_of_long_trigger_queries_get_bounded_distinct_file_names(tmp_path):
    long = "Résumé " * 60  # 420 characters, 480 bytes: a file name may hold 255
    skill = write_skill(tmp_path, "longq", "Long queries.",
                        triggers=[{"name": long + "first", "query": "q1", "should_trigger": True},
                                  {"name": long + "second", "query": "q2", "should_trigger": False}])
    code, _ = cli(str(skill), "--adapter", "mock", "--trajectories", str(tmp_path / "traj"))
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "traj" / "longq").iterdir())
    assert len(names) == 2 and all(len(n.encode()) <= 160 for n in names), names
    assert all(n.startswith("trigger.Résumé_Résumé") for n in names)


def test_trigger_gates_fail_the_run_and_say_why(capsys):
    code, _ = cli(str(EXAMPLE), "--adapter", "mock", "--min-trigger-recall", "0.9")
    assert code == 1 and "trigger recall 0.80 is below the minimum 0.90" in capsys.readouterr().err
    code, _ = cli(str(EXAMPLE), "--adapter", "mock", "--max-false-trigger-rate", "0.2")
    assert code == 1 and "false-trigger rate 0.25 is above the maximum 0.20" in capsys.readouterr().err
    code, _ = cli(str(EXAMPLE), "--adapter", "mock", "--min-trigger-recall", "0.8",
                  "--max-false-trigger-rate", "0.25")
    assert code == 0


def test_crowd_mode_names_stolen_and_lost_queries_with_the_mock(tmp_path):
    siblings = tmp_path / "skills"
    write_skill(siblings, "sql-style", "Formats SQL.",
                triggers=[{"name": "format-sql", "query": "Format this SQL query", "should_trigger": True}])
    write_skill(siblings, "release-notes", "Writes release notes.",
                cases=[{"name": "notes-for-2", "prompt": "Release notes for 2.0 please", "should_trigger": True},
                       {"name": "dup", "prompt": "Add a changelog entry", "should_trigger": True}])
    skill = write_skill(siblings, "changelog", "Writes changelog entries.",
                        triggers=[{"name": "entry", "query": "Add a changelog entry", "should_trigger": True},
                                  {"name": "notes", "query": "Write release notes", "should_trigger": True}],
                        mock={"entry": {"loads": True}, "notes": {"loads": ["release-notes"]},
                              "sql-style/format-sql": {"loads": ["changelog", "sql-style"]}})
    code, doc = cli(str(skill), "--adapter", "mock", "--siblings", str(siblings))
    crowd = doc["triggers"]["crowd"]
    assert code == 0 and crowd["siblings"] == ["release-notes", "sql-style"]
    assert [(r["name"], r["meant_for"], r["rate"], r["owner_rate"], r["owner_rate_without_skill"])
            for r in crowd["stolen_from_siblings"]] == [("sql-style/format-sql", "sql-style", 1.0, 1.0, 1.0)]
    assert doc["triggers"]["baseline_trials"] == 2
    assert [(r["name"], r["taken_by"]) for r in crowd["lost_to_siblings"]] == [("notes", {"release-notes": 1})]
    # The sibling's eval.yaml trigger case joins as a should-not query; a text the skill's own
    # set already labels is not posed twice.
    names = [q["name"] for q in doc["triggers"]["queries"]]
    assert names == ["entry", "notes", "release-notes/notes-for-2", "sql-style/format-sql"]
    assert doc["triggers"]["metrics"]["false_trigger_rate"]["value"] == 0.5


# --- the agent adapter against the fake model server ------------------------------------------

TRIGGERING = {"Add a changelog entry for PR 12", "Turn these merged PRs into changelog bullets",
              "Write the Unreleased section", "Write a commit message"}
SHOULD = ["Add a changelog entry for PR 12", "Turn these merged PRs into changelog bullets",
          "Write the Unreleased section", "Summarize this diff"]
SHOULD_NOT = ["Write a commit message", "Draft a blog post", "What is semver?", "Format this JSON"]


def routing_model(skill_name: str):
    """An agent that first looks at its HOME for another trial's marker and leaves its own, then
    reads the listed skill's SKILL.md when the query is one it triggers on; else answers."""

    def reply(req):
        query = req.messages[0]["content"] if isinstance(req.messages[0]["content"], str) else \
            req.messages[0]["content"][0]["text"]
        if not req.tool_results:
            return tool_call("run_shell", {"command": 'cat "$HOME/marker" 2>/dev/null; '
                                                      'echo taken > "$HOME/marker"; ls .skills'})
        listed = f"- {skill_name}:" in req.system_text
        if len(req.tool_results) == 1 and listed and query in TRIGGERING:
            return tool_call("read_file", {"path": f".skills/{skill_name}/SKILL.md"})
        return text("done")

    return reply


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_scripted_model_gives_exact_rates_at_any_concurrency(tmp_path, monkeypatch, concurrency):
    skill = write_skill(tmp_path, "changelog", "Writes changelog entries.",
                        triggers=[{"query": q, "should_trigger": True} for q in SHOULD]
                        + [{"query": q, "should_trigger": False} for q in SHOULD_NOT])
    with FakeModelServer(routing_model("changelog")) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--model", "claude-haiku-4-5", "--runs", "2",
                        "--concurrency", concurrency)
        first_looks = [r.tool_results[0] for r in server.model_requests() if len(r.tool_results) == 1]
    block = doc["triggers"]
    metrics = {k: block["metrics"][k]["value"] for k in ("recall", "false_trigger_rate", "precision")}
    assert code == 0 and metrics == {"recall": 0.75, "false_trigger_rate": 0.25, "precision": 0.75}
    assert {q["query"]: q["rate"] for q in block["queries"]} == {
        **{q: (1.0 if q in TRIGGERING else 0.0) for q in SHOULD + SHOULD_NOT}}
    assert block["trials"] == 16 and block["errors"] == 0
    # Every trial had its own HOME and skills directory: none saw another's marker.
    assert len(first_looks) == 16 and all(look == "exit code: 0\nstdout:\nchangelog\n" for look in first_looks)
    # Two runs of a deterministic model are worth one per query in the intervals.
    assert block["metrics"]["recall"]["n_effective"] == 4.0


def test_description_edit_is_measured_for_both_with_its_noise_test(tmp_path, monkeypatch):
    old = tmp_path / "old"
    write_skill(old, "changelog", "Helps with docs.")
    skill = write_skill(tmp_path, "changelog", "Writes CHANGELOG.md entries from merged PRs.",
                        triggers=[{"query": f"Add a changelog entry for PR {n}", "should_trigger": True}
                                  for n in range(6)] + [{"query": "Draft a blog post", "should_trigger": False}])

    def reply(req):
        if req.tool_results:
            return text("done")
        if "CHANGELOG.md entries" in req.system_text and "changelog" in str(req.messages[0]):
            return tool_call("read_file", {"path": ".skills/changelog/SKILL.md"})
        return text("done")

    with FakeModelServer(reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--model", "claude-haiku-4-5", "--against", str(old / "changelog"))
    comparison = doc["triggers"]["comparison"]
    assert code == 0
    assert comparison["recall"]["candidate"] == 1.0 and comparison["recall"]["original"] == 0.0
    assert comparison["recall"]["delta_pts"] == 100.0 and comparison["recall"]["p_value"] == round(2 / 64, 4)
    assert comparison["recall"]["significant"] and comparison["false_trigger_rate"]["delta_pts"] == 0.0
    assert len(comparison["changed_queries"]) == 6
    trials = doc["triggers"]["trial_records"]
    assert len(trials) == 14 and {t["arm"] for t in trials} == {"candidate", "original"}
    assert all(t["loaded"] == (["changelog"] if t["arm"] == "candidate" and "changelog" in t["query"]
                               else []) for t in trials)


def test_an_errored_trial_does_not_count_as_the_sibling_losing_its_query(tmp_path, monkeypatch):
    # Beside the candidate, release-notes' own query is taken once by the candidate, once by
    # release-notes, and once the provider failed: that trial says nothing about who took it.
    skills = tmp_path / "skills"
    write_skill(skills, "release-notes", "Writes release notes.",
                triggers=[{"name": "announce", "query": "Draft the release announcement", "should_trigger": True}])
    skill = write_skill(skills, "changelog", "Writes changelog entries.",
                        triggers=[{"name": "entry", "query": "Add a changelog entry", "should_trigger": True},
                                  {"name": "haiku", "query": "Write a haiku", "should_trigger": False}])
    beside_candidate = []

    def reply(req):
        if req.tool_results:
            return text("done")
        if "release announcement" not in str(req.messages[0]):
            wanted = "changelog" if "changelog entry" in str(req.messages[0]) else None
            return tool_call("read_file", {"path": f".skills/{wanted}/SKILL.md"}) if wanted else text("no")
        if "- changelog:" in req.system_text:
            beside_candidate.append(req)
            if len(beside_candidate) == 1:
                return tool_call("read_file", {"path": ".skills/changelog/SKILL.md"})
            if len(beside_candidate) == 3:
                return http_error(400, "the provider failed", "invalid_request_error")
        return tool_call("read_file", {"path": ".skills/release-notes/SKILL.md"})

    with FakeModelServer(reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--model", "claude-haiku-4-5", "--runs", "3", "--concurrency", "1",
                        "--siblings", str(skills))
    block = doc["triggers"]
    announce = next(q for q in block["queries"] if q["name"] == "release-notes/announce")
    assert (announce["rate"], announce["trials"], announce["errors"]) == (0.5, 2, 1)
    [stolen] = block["crowd"]["stolen_from_siblings"]
    assert (stolen["rate"], stolen["owner_rate_without_skill"]) == (0.5, 1.0)
    # Of the two trials that ran, the owner took one: 0.5, not 1 of 3 with the error as a loss.
    assert stolen["owner_rate"] == 0.5


def test_original_trials_that_errored_are_counted_and_never_shown_as_a_change(tmp_path, monkeypatch):
    old = tmp_path / "old"
    write_skill(old, "changelog", "Helps with docs.")
    skill = write_skill(tmp_path, "changelog", "Writes CHANGELOG.md entries from merged PRs.",
                        triggers=[{"name": "entry", "query": "Add a changelog entry", "should_trigger": True},
                                  {"name": "blog", "query": "Draft a blog post", "should_trigger": False}])

    def reply(req):
        if "Helps with docs." in req.system_text:  # every original trial meets an outage
            return http_error(400, "the provider failed", "invalid_request_error")
        if not req.tool_results and "changelog" in str(req.messages[0]):
            return tool_call("read_file", {"path": ".skills/changelog/SKILL.md"})
        return text("done")

    with FakeModelServer(reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--model", "claude-haiku-4-5", "--against", str(old / "changelog"))
    comparison = doc["triggers"]["comparison"]
    assert comparison["recall"]["candidate"] is None and comparison["original_errors"] == 2
    # Nothing is known about the original: no query "changed" from an error to a rate.
    assert comparison["changed_queries"] == []


# --- the Action ---------------------------------------------------------------------------------


def test_action_gates_on_trigger_recall_with_siblings_from_the_skills_directory(tmp_path, github):
    workspace = tmp_path / "workspace"
    skills = workspace / "skills"
    write_skill(skills, "changelog", "Writes changelog entries.",
                triggers=[{"name": "entry", "query": "Add a changelog entry", "should_trigger": True},
                          {"name": "other", "query": "Write the changelog for 2.0", "should_trigger": True}],
                mock={"entry": {"loads": True}, "other": {"loads": ["release-notes"]}})
    write_skill(skills, "release-notes", "Writes release notes.")
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "path": "skills", "min-trigger-recall": "0.9"},
                        in_process=True)
    assert result.code == 1, result.log
    assert "changelog: trigger recall 0.50 is below the minimum 0.90" in result.log
    block = result.results()["suites"][0]["triggers"]
    assert block["crowd"]["siblings"] == ["release-notes"]
    assert block["crowd"]["lost_to_siblings"][0]["taken_by"] == {"release-notes": 1}
    assert "#### Triggers" in result.summary and "release-notes" in result.summary


def test_a_broken_sibling_is_left_out_with_a_warning_and_siblings_need_own_queries(tmp_path):
    siblings = tmp_path / "skills"
    write_skill(siblings, "fine", "A fine sibling.")
    broken = write_skill(siblings, "broken", "x", triggers=[{"query": "q", "should_trigger": "maybe"}])
    (siblings / "not-text").mkdir()
    (siblings / "not-text" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    skill = write_skill(siblings, "main", "Main.", triggers=[{"name": "mine", "query": "Do main things",
                                                               "should_trigger": True}],
                        mock={"mine": {"loads": True}})
    code, doc = cli(str(skill), "--adapter", "mock", "--siblings", str(siblings))
    crowd = doc["triggers"]["crowd"]
    assert code == 0 and crowd["siblings"] == ["broken", "fine"]
    assert any("broken's trigger queries left out" in w and str(broken) in w for w in crowd["warnings"])
    assert any("sibling not-text left out" in w for w in crowd["warnings"])
    # A skill without trigger queries of its own runs no trigger trials, siblings or not.
    plain = write_skill(tmp_path, "plain", "Plain.", cases=[{"name": "c", "prompt": "p",
                                                              "validators": [{"cmd": "true"}]}])
    code, doc = cli(str(plain), "--adapter", "mock", "--siblings", str(siblings))
    assert code == 0 and doc["triggers"] is None


def test_a_sibling_that_would_be_staged_in_the_candidates_folder_is_left_out(tmp_path):
    # Agents find skills in folders named after them (unsafe characters made '-'): a sibling
    # named "changelog entry" would overwrite the candidate "changelog-entry"'s staged SKILL.md,
    # and reading one would count as loading both.
    from skillab.engine.crowd import load_crowd
    from skillab.skill.loader import load_skill

    siblings = tmp_path / "skills"
    candidate = load_skill(write_skill(siblings, "changelog-entry", "Writes changelog entries."))
    spaced = siblings / "spaced"
    spaced.mkdir()
    (spaced / "SKILL.md").write_text("---\nname: changelog entry\ndescription: Other.\n---\nBody.\n")
    write_skill(siblings, "notes", "Notes.")
    (siblings / "notes-too").mkdir()
    (siblings / "notes-too" / "SKILL.md").write_text("---\nname: notes!\ndescription: Other.\n---\nB.\n")
    crowd = load_crowd(siblings, candidate)
    assert [s.name for s in crowd.siblings] == ["notes"]
    assert any("sibling spaced left out" in w and "changelog-entry" in w for w in crowd.warnings)
    assert any("sibling notes-too left out" in w for w in crowd.warnings)


def test_the_llm_adapter_cannot_choose_a_skill_so_its_trigger_queries_are_not_run(tmp_path, monkeypatch):
    skill = write_skill(tmp_path, "s", "d", cases=[
        {"name": "graded", "prompt": "Say hi", "validators": [{"cmd": "true"}]},
        {"name": "route", "prompt": "Do X", "should_trigger": True}])
    with FakeModelServer(lambda req: text("hi")) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5")
    assert code == 0 and doc["triggers"] is None and doc["cases_skipped_trigger_only"] == 1
    assert any("1 trigger queries not run: the llm adapter" in w for w in doc["warnings"])


def test_trigger_trials_list_the_skill_and_never_inject_its_body(tmp_path, monkeypatch):
    skill = write_skill(tmp_path, "lister", "Lists things on request.",
                        triggers=[{"query": "List my things", "should_trigger": True}])
    (skill / "SKILL.md").write_text("---\nname: lister\ndescription: Lists things on request.\n---\n"
                                    "BODY-ONLY-THROUGH-A-TOOL\n")
    with FakeModelServer(lambda req: text("done")) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code, doc = cli(str(skill), "--model", "claude-haiku-4-5", "--skill-loading", "inline")
        sent = server.model_requests()
    assert code == 0 and doc["triggers"]["queries"][0]["rate"] == 0.0
    assert sent and all("- lister: Lists things on request." in r.system_text for r in sent)
    assert not any("BODY-ONLY-THROUGH-A-TOOL" in r.raw for r in sent)
