"""What an author reads in the reports is counted and printed one way: the Cases column counts
cases (not case × run records), a bound prints the same in the table and in the lift sentence,
and the HTML report does not carry the runner's absolute path."""

from __future__ import annotations

from pathlib import Path

from skillab.cli import main
from skillab.reports.escape import path_text
from skillab.reports.markdown_view import fmt_pts
from skillab.scoring.sentences import pts

from ..skillgen import answers, grep_case, make_skill


def test_a_bound_prints_as_the_sentence_prints_it():
    for value in (-20.95, 20.95, -2.45, 0.05, -0.04, 12.0):
        assert fmt_pts(value) == pts(value)
    assert fmt_pts(-20.95) == "−21.0"


def test_the_cases_column_counts_cases_not_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_skill(tmp_path, [grep_case("a"), grep_case("b")],
               responses={"a": answers("SKILLED", "no"), "b": answers("SKILLED", "SKILLED")})
    assert main(["run", "demo-skill", "--adapter", "mock", "--runs", "3", "--no-history", "--no-cache",
                 "--quiet", "--markdown", "report.md"]) in (0, 1)
    row = next(line for line in (tmp_path / "report.md").read_text().splitlines()
               if line.startswith("| demo-skill |"))
    assert row.split("|")[2].strip() == "2"


def test_the_html_report_shows_no_absolute_path_of_the_runner(tmp_path, monkeypatch):
    skills = tmp_path / "home" / "runner" / "work" / "skills"
    make_skill(skills, [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["run", str(skills / "demo-skill"), "--adapter", "mock", "--no-history", "--no-cache",
                 "--quiet", "--html", "report.html"]) == 0
    html = Path("report.html").read_text()
    assert str(tmp_path) not in html
    assert "…/demo-skill" in html


def test_a_path_under_the_working_directory_is_shown_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert path_text(str(tmp_path / "skills" / "x")) == "skills/x"
    assert path_text("skills/x") == "skills/x"


def test_the_html_report_of_an_against_run_has_the_candidate_vs_original_section(tmp_path):
    import dataclasses
    import json

    from skillab.core.runlog import RunLog
    from skillab.reports.html import render_html

    example = str(Path(__file__).resolve().parents[2] / "examples" / "sql-migration-safety")
    out = tmp_path / "r.json"
    assert main(["run", example, "--against", example, "--adapter", "mock", "--no-cache", "--no-history",
                 "--quiet", "--fail-on-verdict", "none", "--output", str(out)]) == 0
    log = RunLog.from_json(json.loads(out.read_text()))
    assert log.summary.comparison is not None
    broke = dataclasses.replace(log.summary.comparison, broken_by_edit=("drop-column",),
                                rescued_by_edit=("add-index",))
    log = dataclasses.replace(log, summary=dataclasses.replace(log.summary, comparison=broke))
    html = render_html([log])
    assert "<h3>Candidate vs original</h3>" in html
    assert "❌ Broken by the edit</b> (passed with the original, fail with the candidate; beyond noise): " \
           "<code>drop-column</code>" in html
    assert "✅ Rescued by the edit" in html and "<code>add-index</code>" in html
    assert "Candidate vs original" not in render_html([dataclasses.replace(
        log, summary=dataclasses.replace(log.summary, comparison=None))])
