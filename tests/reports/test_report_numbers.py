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
