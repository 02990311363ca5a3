"""The HTML report's trend chart is drawn from the run alone: the trend block carries the
comparable runs up to this one (its ``series``), taken from the history when the run was
recorded. A history file that grows, or is deleted, after the run does not change the report."""

from __future__ import annotations

import json
from dataclasses import replace

from skillab.cli import main

from .. import import_graph
from ..log.test_history import entry
from ..skillgen import answers, grep_case, make_skill


def test_the_trend_chart_comes_with_the_run_not_from_the_history_file(tmp_path):
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")],
                       responses={"a": answers("SKILLED", "no"), "b": answers("SKILLED", "SKILLED")})
    history = tmp_path / "h.jsonl"

    def run(name: str) -> None:
        assert main(["run", str(skill), "--adapter", "mock", "--no-cache", "--quiet", "--history", str(history),
                     "--output", str(tmp_path / f"{name}.json"), "--html", str(tmp_path / f"{name}.html")]) == 0

    def report(name: str) -> str:
        out = tmp_path / "again.html"
        assert main(["report", str(tmp_path / f"{name}.json"), "--html", str(out)]) == 0
        return out.read_text()

    run("first")
    run("second")
    written = (tmp_path / "second.html").read_text()
    assert "Trend over 2 runs" in written
    assert "Trend over" not in (tmp_path / "first.html").read_text()  # one run: nothing to chart yet
    assert report("second") == written
    # A later run adds to the history: the second run's report still shows the runs up to it.
    run("third")
    assert "Trend over 3 runs" in (tmp_path / "third.html").read_text()
    assert report("second") == written
    # The history file gone, or holding something else: the report is the same.
    history.unlink()
    assert report("second") == written
    history.write_text("not a history\n")
    assert report("second") == written
    # What the chart draws is in the document: each comparable run's time and rates, oldest first.
    series = json.loads((tmp_path / "second.json").read_text())["trend"]["series"]
    assert [point["pass_rate"] for point in series] == [{"with_skill": 1.0, "without_skill": 0.5}] * 2
    assert series[0]["recorded_at"] < series[1]["recorded_at"]


def test_the_series_keeps_the_comparable_runs_oldest_first_up_to_its_limit():
    from skillab.scoring.trend_series import SERIES_LIMIT, trend_series

    other = entry(suite="skills/other/eval.yaml")
    runs = [replace(entry(), recorded_at=f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}+00:00",
                    pass_rate={"with_skill": i / 200, "without_skill": 0.0, "original": None})
            for i in range(SERIES_LIMIT + 20)]
    current = replace(entry(), recorded_at="2026-11-02T00:00:00+00:00")
    series = trend_series([other, *runs, other], current)
    assert len(series) == SERIES_LIMIT
    # The latest comparable runs, then this one; the other suite's runs are not among them.
    assert [p.recorded_at for p in series] == [r.recorded_at for r in runs[-(SERIES_LIMIT - 1):]] + [
        current.recorded_at]
    assert series[0].pass_rate == {"with_skill": runs[21].pass_rate["with_skill"], "without_skill": 0.0}
    assert trend_series([other], current) == (trend_series([], current)[0],)


def test_no_module_of_the_html_report_reaches_the_history_storage():
    """Counted from the source, imports inside functions included: the report cannot read the file."""
    graph = import_graph.build()
    html = ["skillab.reports.html", "skillab.reports.html_cases", "skillab.reports.html_panels",
            "skillab.reports.html_trend"]
    chains = {(module, stored): graph.find_shortest_chain(importer=module, imported=stored)
              for module in html for stored in ("skillab.log.history", "skillab.log.history_entry")}
    assert {pair: chain for pair, chain in chains.items() if chain} == {}
