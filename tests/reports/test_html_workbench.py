"""The HTML report as a place to work: the case table filters (failing, by outcome, by tag) and
sorts (failing first, by outcome, by tag) in the page without a script, read back from headless
Chromium; and it carries what the markdown has (cost, disclosures, judge consistency, the
same-family warning, a callout for broken cases) and a trend chart with a y-axis and values."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape
from pathlib import Path

from skillab.cli import main
from skillab.core.run_info import JudgeConsistency, ModelsInfo
from skillab.core.usage import Usage
from skillab.reports.html import render_html

from ..browser import open_page
from ..runlogs import case, run_log
from ..skillgen import answers, grep_case, make_skill
from .test_html_report import ARTIFACTS, needs_chromium

VISIBLE = """[...document.querySelectorAll('#s0-cases tr.row')]
    .filter(r => getComputedStyle(r).display !== 'none')
    .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
    .map(r => r.dataset.case)"""


def click(ident: str) -> str:
    return f"(() => {{ document.getElementById({json.dumps(ident)}).click(); return {VISIBLE}; }})()"


def tagged_report(tmp_path: Path) -> Path:
    skill = make_skill(
        tmp_path,
        [grep_case("rescued", tags=["docs"]), grep_case("broken", tags=["api"]),
         grep_case("kept", tags=["api", "docs"]), grep_case("hopeless")],
        responses={"rescued": answers("SKILLED", "plain"), "broken": answers("plain", "SKILLED"),
                   "kept": answers("SKILLED", "SKILLED"), "hopeless": answers("plain", "plain")},
    )
    out = tmp_path / "report.html"
    main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
          "--output", str(tmp_path / "r.json"), "--html", str(out)])
    return out


@needs_chromium
def test_the_case_table_filters_and_sorts_in_the_page(tmp_path):
    report = tagged_report(tmp_path)
    page = open_page(report, {
        "default": VISIBLE,  # failing first, the rest as run
        "as_run": click("s0-sort-run"),
        "by_outcome": click("s0-sort-outcome"),
        "tag_docs": click("s0-show-t1"),
        "by_tag": f"(() => {{ document.getElementById('s0-show-all').click(); return {click('s0-sort-tag')}; }})()",
        "kept_only": click("s0-show-o-pass_kept"),
        "failing": click("s0-show-failing"),
        "scripts": "document.querySelectorAll('script').length",
    }, screenshot=ARTIFACTS / "html-report-filtered.png")
    assert page.console_errors == [] and page.requests == []
    probes = page.probes
    assert probes["as_run"] == ["rescued", "broken", "kept", "hopeless"]
    assert probes["default"] == ["broken", "hopeless", "rescued", "kept"]
    assert probes["by_outcome"] == ["broken", "hopeless", "rescued", "kept"]  # flip_to_fail, fail_kept, ...
    assert sorted(probes["tag_docs"]) == ["kept", "rescued"]
    assert probes["by_tag"] == ["broken", "kept", "rescued", "hopeless"]  # api, then docs, untagged last
    assert probes["kept_only"] == ["kept"]
    assert sorted(probes["failing"]) == ["broken", "hopeless"]
    assert probes["scripts"] == 0


def test_the_report_carries_cost_disclosures_judge_and_a_broken_case_callout():
    spent = {"usage": Usage(input_tokens=100, output_tokens=20, cost_usd=0.02)}
    log = run_log(
        [case("rescued", "flip_to_pass", with_skill=spent),
         case("broken", "flip_to_fail", with_skill=spent, without_skill={"contaminated": True}),
         case("down", "error")],
        warnings=("the judge model is of the agent's family",), cache_hits=2,
        models=ModelsInfo(agent="claude-sonnet-4-5", judge="claude-haiku-4-5", judge_prompt_sha256=None,
                          judge_same_family=True),
        judge_usage=Usage(input_tokens=280, output_tokens=20, cost_usd=0.01),
        judge_consistency=JudgeConsistency(verdicts=10, sampled=5, agreed=5, errored=0, agreement=1.0, floor=0.8,
                                           lift_withheld=False, ci95=(0.55, 1.0), decided="cap"))
    # The broken case's drop passed its own noise test (three cases are too few for that to happen).
    statistics = replace(log.summary.statistics, regression=True, regressed_cases=("broken",))
    html = render_html([replace(log, summary=replace(log.summary, statistics=statistics))])
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert "Broken by the skill" in text and "broken" in text.split("Broken by the skill", 1)[1][:200]
    assert "Not measured" in text and "down" in text.split("Not measured", 1)[1][:200]
    assert "$0.0500" in text and "judge $0.0100" in text
    assert "disclosures" in text and "1 contaminated arms" in text and "2 cached baselines" in text
    assert "the judge model is of the agent's family" in text
    assert "Judged by a model of the agent's family" in text
    # The agreement with its interval, as the terminal and the markdown report give it.
    assert "agreed with itself on 5/5 re-asked verdicts, 95% CI 55–100%, undecided when the re-asks ran out" in text


def test_the_trend_chart_has_a_y_axis_values_and_no_repeated_date(tmp_path):
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")],
                       responses={"a": answers("SKILLED", "no"), "b": answers("SKILLED", "SKILLED")})
    args = ["run", str(skill), "--adapter", "mock", "--no-cache", "--quiet", "--history",
            str(tmp_path / "h.jsonl"), "--html", str(tmp_path / "r.html"), "--output", str(tmp_path / "r.json")]
    assert main(args) == 0 and main(args) == 0 and main(args) == 0
    svg = re.search(r"<h3>Trend over 3 runs</h3>(<svg.*?</svg>)", (tmp_path / "r.html").read_text()).group(1)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert {"0%", "50%", "100%"} <= set(labels)  # the y-axis
    assert labels.count("100%") >= 1 + 3 and labels.count("50%") >= 1 + 3  # with 100%, without 50%, each run
    dates = [t for t in re.findall(r'class="x-label">([^<]*)<', svg)]
    assert len(dates) == len(set(dates)), dates  # one date, two times of day
