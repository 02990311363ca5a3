"""The Action's ``ablate`` input on a pull request: the comment shows each section's measured
role, marks the sections the PR changed, and shows the skill's context cost against the base."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..action_harness import EVENTS, REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..engine.test_against import commit_all, git

DEMO = Path(__file__).resolve().parent.parent.parent / "examples" / "ablation" / "incident-summary"
EXHAUSTIVE = "\n## Be exhaustive\n"


def test_a_pr_adding_a_harmful_section_and_growing_the_description(tmp_path, github):
    repo = tmp_path / "workspace"
    skill = repo / "skills" / "incident-summary"
    shutil.copytree(DEMO, skill)
    text = (skill / "SKILL.md").read_text()
    head_text = text.replace("cites the ticket it came from.", "cites the ticket it came from, " + "and more " * 40 + ".")
    (skill / "SKILL.md").write_text(text[: text.index(EXHAUSTIVE)] + "\n")  # the base: no harmful section
    git(repo, "init", "-q", "-b", "main")
    base = commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (skill / "SKILL.md").write_text(head_text)
    head = commit_all(repo, "head")
    payload = json.loads((EVENTS / "pull_request_opened.json").read_text())
    payload["pull_request"]["base"]["sha"] = base
    payload["pull_request"]["head"]["sha"] = head
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    number = payload["pull_request"]["number"]
    github.state.pr_files[(REPO, number)] = [{"filename": "skills/incident-summary/SKILL.md", "status": "modified"}]
    result = run_action(repo, event_name="pull_request", event_file=str(event), api_url=github.url,
                        inputs={"adapter": "mock", "ablate": "true", "max-skill-tokens": "100000"},
                        in_process=True)
    assert result.code == 0, result.log
    (comment,) = github.state.comments_on(REPO, number)
    body = comment["body"]
    assert "Ablation: which part of incident-summary earns its tokens" in body
    assert "| \\#\\# Be exhaustive ✏️ changed in this PR | ▼ harmful |" in body
    assert "| \\#\\# Cite the ticket | ▲ load-bearing |" in body  # unchanged: not marked
    # The description grew by 360 characters: 90 estimated tokens in the listing, body and total.
    budget = result.results()["suites"][0]["context_budget"]
    assert budget["change_tokens"] > 90 and f"{budget['change_tokens']:+,} tok against the original" in body
