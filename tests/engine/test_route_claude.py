"""The routing diff with the real Claude Code CLI: a catalogue staged under .claude/skills, a fake
model that routes by the listing Claude Code itself sends, the listing's truncation reported."""

from __future__ import annotations

from skillab.agents.claude_code import ClaudeCodeAdapter
from skillab.engine.route import candidate_queries, load_catalogue, route_agent
from skillab.sandbox.backend import default_backend

from ..agents.test_claude_code import KEY
from ..configs import run_config
from .test_trigger_crowd_claude import FILLERS, claude, routing_model, skill  # noqa: F401 (fixture)


def test_claude_code_routes_the_catalogue_and_the_candidate_steals_one_skills_query(claude, server, tmp_path):
    catalogue = tmp_path / "catalogue"
    skill(catalogue, "release-notes", "Release announcements for customers (topics=release,announcement).",
          [{"name": "announce", "query": "Draft the release announcement", "should_trigger": True}])
    skill(catalogue, "sql", "SQL formatting (topics=sql).",
          [{"name": "format", "query": "Format this sql please", "should_trigger": True}])
    for n in range(FILLERS):
        skill(catalogue, f"zz-filler-{n:02d}", f"Filler skill number {n} (topics=filler{n}) " + "padding " * 40)
    candidate_dir = skill(tmp_path, "changelog", "Changelog entries and announcement notes (topics=changelog,draft).",
                          [{"name": "entry", "query": "Add a changelog line for PR 9", "should_trigger": True}])
    server.handler = routing_model
    config = run_config(adapter="claude-code", model="claude-haiku-4-5", concurrency=4)
    candidate, own = candidate_queries(candidate_dir, config.engine)
    crowd = load_catalogue([catalogue], candidate)
    adapter = ClaudeCodeAdapter(claude, api_key=KEY, model="claude-haiku-4-5", base_url=server.url,
                                max_retries=0, version="test")
    routes, interrupted = route_agent(adapter=adapter, sandbox=default_backend(), candidate=candidate,
                                      catalogue=crowd, own_queries=own, original=None, runs=2, concurrency=4,
                                      max_turns=4, model="claude-haiku-4-5")
    assert not interrupted and routes.candidate.errors == 0 and routes.catalogue.errors == 0
    by_query = {q.name: q for q in routes.queries}
    # With the catalogue alone, release-notes takes its own query; with the candidate listed
    # first among the matching descriptions ("draft"), the candidate takes it.
    assert by_query["release-notes/announce"].catalogue == {"release-notes": 2}
    assert by_query["release-notes/announce"].candidate == {"changelog": 2}
    assert by_query["entry"].candidate == {"changelog": 2}
    [steal] = [t for t in routes.steals if t.skill == "release-notes"]
    assert steal.taken_queries == ("release-notes/announce",) and steal.taken == 2
    # Claude Code's listing budget: the fillers (listed last) lose their descriptions.
    assert routes.listing is not None and routes.listing["overflow"] is True
    assert "changelog" not in routes.listing["descriptions_dropped"]
