"""Crowd mode with the real Claude Code CLI: the skill among siblings, a fake model that routes
by the skill listing Claude Code itself sends, and the listing's budget measured."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillab.agents.claude_code import ClaudeCodeAdapter
from skillab.core.wire import to_wire
from skillab.engine.prepare import prepare_suite
from skillab.engine.trigger import run_triggers
from skillab.sandbox.backend import default_backend

from ..agents.test_claude_code import KEY, turns_so_far
from ..configs import run_config
from ..fakes.model_server import text, tool_call
from ..node_cli import claude_binary

LISTING = "The following skills are available for use with the Skill tool:"
ENTRY = re.compile(r"^- ([\w.-]+)(?:: (.*))?$")
FILLERS = 14


def skill(root: Path, name: str, description: str, triggers: list | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo it well.\n")
    if triggers is not None:
        (folder / "trigger-evals.json").write_text(json.dumps(triggers))
    return folder


def listing_of(req) -> dict[str, str | None]:
    """The skills Claude Code listed in this request: name → description (None: name only)."""
    for message in req.messages:
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else [b.get("text", "") for b in content or []
                                                              if isinstance(b, dict)]
        for block in blocks:
            if LISTING in block:
                body = block.split(LISTING, 1)[1].split("</system-reminder>", 1)[0]
                return {m[1]: m[2] for m in map(ENTRY.match, body.splitlines()) if m}
    return {}


def request_text(req) -> str:
    """The user's own words: the last text block of the first user message (the blocks before
    it are the CLI's system reminders)."""
    content = req.messages[0]["content"]
    if isinstance(content, str):
        return content
    return [b["text"] for b in content if b.get("type") == "text"][-1]


def routing_model(req):
    """Invokes the first listed skill whose description shares a topic word with the request
    (descriptions the listing dropped cannot match); otherwise answers without a skill."""
    if "Skill" not in req.tool_names:
        return text("ok")  # a side request of the CLI, not the agent loop
    if turns_so_far(req) > 0:
        return text("done")
    query = request_text(req).lower()
    for name, description in listing_of(req).items():
        topics = {t for found in re.findall(r"topics=([\w,]+)", description or "") for t in found.split(",")}
        if topics & set(re.findall(r"\w+", query)):
            return tool_call("Skill", {"skill": name})
    return text("done")


@pytest.fixture(scope="module")
def claude() -> str:
    return claude_binary()


def test_candidate_among_siblings_steals_a_query_and_the_listing_overflows(claude, server, tmp_path):
    skills = tmp_path / "skills"
    candidate = skill(skills, "changelog", "Changelog entries and release notes (topics=changelog,release).",
                      [{"name": "entry", "query": "Add a changelog line for PR 9", "should_trigger": True},
                       {"name": "haiku", "query": "Write a haiku about autumn", "should_trigger": False}])
    skill(skills, "release-notes", "Release announcements for customers (topics=release,announcement).",
          [{"name": "announce", "query": "Draft the release announcement", "should_trigger": True}])
    # Enough siblings that Claude Code's listing goes over its budget: the last ones lose their
    # descriptions, so a query only their description matches goes unrouted.
    for n in range(FILLERS):
        skill(skills, f"zz-filler-{n:02d}", f"Filler skill number {n} (topics=filler{n}) " + "padding " * 40)
    skill(skills, "zzz-sql", "SQL formatting (topics=sql) " + "padding " * 40,
          [{"name": "format", "query": "Format this sql please", "should_trigger": True}])

    server.handler = routing_model
    config = run_config(adapter="claude-code", model="claude-haiku-4-5", siblings_dir=skills, concurrency=4)
    prepared = prepare_suite(candidate, config.engine)
    adapter = ClaudeCodeAdapter(claude, api_key=KEY, model="claude-haiku-4-5", base_url=server.url,
                                max_retries=0, version="test")
    # The block as the results document holds it.
    block = to_wire(run_triggers(prepared, config, adapter, None, default_backend()))

    rates = {q["name"]: q["rate"] for q in block["queries"]}
    assert rates == {"entry": 1.0, "haiku": 0.0, "release-notes/announce": 1.0, "zzz-sql/format": 0.0}
    crowd = block["crowd"]
    # Without the candidate, release-notes took its own query; beside it, the candidate does.
    assert [(r["name"], r["meant_for"], r["owner_rate_without_skill"], r["owner_rate"])
            for r in crowd["stolen_from_siblings"]] == [("release-notes/announce", "release-notes", 1.0, 0.0)]
    assert crowd["lost_to_siblings"] == []
    listing = crowd["listing"]
    assert listing["overflow"] is True and listing["agent"] == "claude-code test"
    assert "zzz-sql" in listing["descriptions_dropped"]
    assert not {"changelog", "release-notes"} & set(listing["descriptions_dropped"])
    # What the probe reports is what the model was shown in the trials.
    listings = [listing_of(r) for r in server.model_requests() if "Skill" in r.tool_names]
    shown = [s for s in listings if "changelog" in s]  # the baseline trials list the siblings only
    assert shown and len(listings) > len(shown)
    assert shown and all(s.get("zzz-sql", "x") is None and s["changelog"] for s in shown)
    assert {n for n, d in shown[0].items() if d is None} == {
        *listing["descriptions_dropped"], *listing["others_dropped"]}
    metrics = block["metrics"]
    assert (metrics["recall"]["value"], metrics["false_trigger_rate"]["value"],
            metrics["precision"]["value"]) == (1.0, 0.3333, 0.5)
