"""The Action's ``ablate`` input on a pull request: the comment shows each section's measured
role, marks the sections the PR changed, and shows the skill's context cost against the base."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillab.core.ablation import AblationDocument, AblationSpend, FullLift, PartResult

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


def large_ablation(skill: str, parts: int) -> AblationDocument:
    """An ablation document of ``parts`` parts, each with a long label and a note."""
    return AblationDocument(
        skill=skill, suite=f"skills/{skill}", heading_level=2,
        full=FullLift(40.0, "+40.0 pts (95% CI +20.0 to +60.0)"),
        spend=AblationSpend(model_calls=10 * parts, cached_arms=0, cost_usd=1.25), grader_files=(),
        cases=10, runs=1, changed_in_pr=tuple(f"## Section {i} " + "w" * 60 for i in range(0, parts, 2)),
        parts=tuple(PartResult(kind="section", name=f"s{i}", label=f"## Section {i} " + "w" * 60, lines=(i, i + 1),
                               chars=4936, tokens=1234, role="dead weight", contribution_pts=0.0, ci95=(-5.0, 5.0),
                               p_value=1.0, p_adjusted=1.0, detectable_pts=None, n_cases=10, errored_records=0,
                               calls=10, note="n" * 150)
                    for i in range(parts)),
    )


def test_the_whole_comment_fits_githubs_limit_with_a_large_ablation():
    from skillab.github.ablation import ablation_markdown, report_with_appendix
    from skillab.github.comment import with_marker
    from skillab.reports.markdown import GITHUB_COMMENT_LIMIT, render_markdown
    from skillab.reports.markdown_cases import size

    from ..reports.test_markdown_report import big_document, logs

    suites = logs(big_document(900))
    ablations = [large_ablation(f"skill-{n}", 300) for n in range(3)]
    body = report_with_appendix(lambda budget: render_markdown(suites, max_chars=budget), ablation_markdown(ablations))
    assert size(with_marker(body, "skills")) <= GITHUB_COMMENT_LIMIT
    assert body.startswith(render_markdown(suites)[:200])  # the report's head is whole
    assert "### Ablation: which part of skill-0 earns its tokens" in body
    assert "cut here to fit GitHub's comment limit" in body
    # A small ablation beside a small report is appended whole.
    small = [large_ablation("skill-small", 3)]
    body = report_with_appendix(lambda budget: render_markdown(logs(big_document(3)), max_chars=budget),
                                ablation_markdown(small))
    assert "## Section 2" in body.replace("\\#", "#") and "cut here" not in body
