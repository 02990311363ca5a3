"""``--placebo``: a placebo differs from its skill in content only, and the run reports the
content lift beside the presence lift."""

from __future__ import annotations

import json

from skillab.cli import main
from skillab.skill.loader import load_skill
from skillab.skill.placebo import make_placebo

from ..fakes.model_server import FakeModelServer, Reply
from ..skillgen import grep_case, make_skill

KEY = "sk-ant-api03-" + "P" * 40
BODY = ("# Greeting rules\n\nAlways answer with the word SKILLED.\n\n- keep it short\n- never apologise\n\n"
        "1. read the question\n2. answer it")


def test_the_placebo_keeps_name_lengths_layout_and_files_but_not_a_word_of_the_content(tmp_path):
    skill = load_skill(make_skill(tmp_path, [grep_case("a")], body=BODY,
                                  files={"scripts/check.sh": "#!/bin/sh\ngrep -q SKILLED \"$1\"\n",
                                         "reference/notes.md": "SKILLED means the agent used the skill.\n"}))
    placebo = make_placebo(skill, tmp_path / "placebo")
    assert placebo.name == skill.name and placebo.root.name == skill.root.name
    assert len(placebo.description) == len(skill.description) and placebo.description != skill.description
    assert [len(line) for line in placebo.body.split("\n")] == [len(line) for line in skill.body.split("\n")]
    assert placebo.body.startswith("# ") and "\n- " in placebo.body and "\n1. " in placebo.body
    assert placebo.bundled == skill.bundled
    for rel in skill.bundled:
        original, neutral = (skill.root / rel).read_text(), (placebo.root / rel).read_text()
        assert len(original) == len(neutral) and "SKILLED" not in neutral
        assert (skill.root / rel).stat().st_mode == (placebo.root / rel).stat().st_mode
    assert "SKILLED" not in placebo.body and "answer" not in placebo.body


def test_a_mock_run_scores_content_and_presence_apart(tmp_path, capsys):
    """The placebo arm answers by the content it was shown: a rule keyed on the skill's text
    never fires for it, so all the lift is content and none is presence."""
    rules = {"by_skill": [{"contains": ["SKILLED"], "answer": "SKILLED"}], "without": "plain"}
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b"), grep_case("c")], body=BODY,
                       responses={name: rules for name in "abc"})
    out = tmp_path / "r.json"
    assert main(["run", str(skill), "--adapter", "mock", "--placebo", "--quiet", "--no-history", "--no-cache",
                 "--output", str(out), "--markdown", str(tmp_path / "r.md")]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    block = doc["placebo"]
    assert (block["content_delta_pts"], block["presence_delta_pts"], block["pass_rate"]) == (100.0, 0.0, 0.0)
    assert block["content"]["flip_to_pass"] == 3 and block["presence"]["flip_to_pass"] == 0
    assert {c["placebo_outcome"] for c in doc["cases"]} == {"flip_to_pass"}
    assert all(c["placebo"]["final_output"] == "plain" for c in doc["cases"])
    assert "content (skill vs placebo)" in printed and "presence (placebo vs none" in printed
    assert "**Placebo**" in (tmp_path / "r.md").read_text()


def test_the_agent_is_offered_the_placebo_as_it_is_offered_the_skill(tmp_path, capsys, monkeypatch):
    """A real provider round trip: the placebo arm's system prompt carries the skill's name
    and the placebo's text, of the same length, never the skill's words."""
    seen: dict[str, str] = {}

    def agent(request):
        system = request.system_text
        kind = "with" if "SKILLED" in system else "placebo" if "demo-skill" in system else "without"
        seen[kind] = system
        return Reply("SKILLED" if kind == "with" else "plain")

    skill = make_skill(tmp_path, [grep_case("a")], body=BODY)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    with FakeModelServer(agent) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        args = ["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--placebo", "--quiet",
                "--no-history", "--output", str(tmp_path / "r.json"), *cache]
        main(args)
        first = server.count
        main(args)
        second = server.count - first
    capsys.readouterr()
    assert set(seen) == {"with", "placebo", "without"}
    assert len(seen["placebo"]) == len(seen["with"])
    # With the baseline cache a re-run costs the skill's arm and the placebo's: one arm more.
    assert (first, second) == (3, 2)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["cache"]["hits"] == 1 and not doc["cases"][0]["placebo"]["cached"]


def test_the_dry_run_plans_the_placebo_arm(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")])
    assert main(["run", str(skill), "--adapter", "mock", "--placebo", "--dry-run", "--runs", "2"]) == 0
    assert "2 cases × 3 arms × 2 runs = 12 arms" in capsys.readouterr().out
