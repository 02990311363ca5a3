"""The HTML report opened in headless Chromium: it renders with no console error and no network
request, and both arms of a case are visible side by side. The screenshot is kept for CI
(``$SKILLAB_ARTIFACTS``, default ``.ci/artifacts`` in the checkout)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.core.triggers import QueryCount, QueryOutcome, RateInterval, TriggerBlock, TriggerMetrics
from skillab.core.usage import Usage
from skillab.reports.html import files_changed, render_html

from ..browser import chromium_binary, open_page
from ..json_paths import paths, replaced
from ..runlogs import case, run_log
from ..skillgen import answers, grep_case, make_skill

ARTIFACTS = Path(os.environ.get("SKILLAB_ARTIFACTS") or Path(__file__).parent.parent.parent / ".ci" / "artifacts")
needs_chromium = pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed "
                                    "(.ci/run installs the Debian package)")

PROBES = {
    # Both arms of the failed case are laid out next to each other, with a size on screen.
    "arms": """(() => {
        const box = document.querySelector('details[open] .arms');
        const [w, wo] = ['with_skill', 'without_skill'].map(a => box.querySelector(`[data-arm=${a}]`)
            .getBoundingClientRect());
        return {with_w: w.width, without_w: wo.width, same_row: Math.abs(w.top - wo.top) < 2,
                side_by_side: wo.left >= w.right};
    })()""",
    "answers": "[...document.querySelectorAll('details[open] .arm pre')].map(p => p.innerText).join('\\n')",
    "svg": "document.querySelectorAll('svg').length",
    "injected": "document.querySelectorAll('script, img, iframe, [onerror]').length",
}


@pytest.fixture
def report(tmp_path: Path) -> Path:
    hostile = "<img src=http://127.0.0.1:9/x.png onerror=alert(1)><script>console.error(1)</script>"
    skill = make_skill(
        tmp_path, [grep_case("broken"), grep_case("rescued"), grep_case("markup")],
        responses={"broken": answers("plain answer", "SKILLED baseline answer"),
                   "rescued": {"with": {"text": "SKILLED", "files": {"notes/out.md": "x"}}, "without": "no"},
                   "markup": answers(hostile, hostile)},
    )
    out = tmp_path / "report.html"
    code = main(["run", str(skill), "--adapter", "mock", "--no-cache", "--quiet",
                 "--output", str(tmp_path / "r.json"), "--html", str(out)])
    assert code == 0
    return out


@needs_chromium
def test_the_report_renders_offline_with_both_arms_side_by_side(report):
    page = open_page(report, PROBES, screenshot=ARTIFACTS / "html-report.png")
    assert page.console_errors == []
    assert page.requests == []
    arms = page.probes["arms"]
    assert arms["with_w"] > 100 and arms["without_w"] > 100
    assert arms["same_row"] and arms["side_by_side"]
    assert "plain answer" in page.probes["answers"] and "SKILLED baseline answer" in page.probes["answers"]
    assert page.probes["svg"] >= 1
    # The agent's markup arrived as text: nothing it wrote became an element.
    assert page.probes["injected"] == 0
    assert (ARTIFACTS / "html-report.png").stat().st_size > 10_000


@needs_chromium
def test_the_checker_sees_network_requests_and_console_errors(tmp_path):
    """The two assertions above can fail: a page that fetches and logs is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<img src='http://127.0.0.1:9/x.png'><script>console.error('boom')</script>")
    page = open_page(bad, {})
    assert "http://127.0.0.1:9/x.png" in page.requests
    assert "boom" in page.console_errors


def test_the_report_names_the_files_each_arm_changed_and_an_interrupted_headline():
    transcript = ('[Step 2] Agent → tool: write_file(path="notes/out.md")\n'
                  '[Step 3] Agent → tool: read_file(path="README.md")\n'
                  '[Step 4] Agent → tool: Edit(file_path="src/a.py", old_string="x")')
    assert files_changed(transcript) == ["notes/out.md", "src/a.py"]
    html = render_html([run_log([case("c", "pass_kept")], interrupted=True, planned_cases=4)])
    assert '<span class="verdict interrupted">interrupted: 1 of 4 cases</span>' in html
    assert 'class="verdict pass"' not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_report_charts_the_trend_over_the_history(tmp_path):
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    args = ["run", str(skill), "--adapter", "mock", "--no-cache", "--quiet", "--history",
            str(tmp_path / "h.jsonl"), "--html", str(tmp_path / "r.html")]
    assert main(args) == 0 and main(args) == 0
    html = (tmp_path / "r.html").read_text()
    assert "Trend over 2 runs" in html and html.count("<polyline") == 2


def test_trigger_trials_get_their_table():
    never = RateInterval(value=None, low=None, high=None, n_effective=0.0, trials=0)
    query = QueryOutcome(name="q1", query="<b>convert</b> it", should_trigger=True, source="eval.yaml", line=3,
                         owner=None, rate=0.5, triggered=1, trials=2, errors=0, taken_by={}, verdict="ok")
    block = TriggerBlock(
        format="skillab.triggers/1", skill="s", runs=2, sources=("eval.yaml",), query_count=QueryCount(1, 0),
        trials=2, baseline_trials=0, errors=0,
        metrics=TriggerMetrics(recall=RateInterval(value=0.5, low=0.1, high=0.9, n_effective=2.0, trials=2),
                               false_trigger_rate=never, precision=never, f1=never),
        false_triggers=(), misses=(), queries=(query,), crowd=None, comparison=None, usage=Usage(),
        trial_records=(), interrupted=False)
    html = render_html([run_log([case("c", "pass_kept")], triggers=block)])
    assert "recall 0.50 [0.10, 0.90] · false_trigger_rate n/a" in html and "&lt;b&gt;convert&lt;/b&gt; it" in html


def test_a_suite_of_trigger_queries_only_reads_as_one_with_misses_first_not_as_an_error(tmp_path):
    # As alexgreensh/punderstruck ships it: evals/trigger-evals.json beside SKILL.md, nothing else.
    import json

    skill = tmp_path / "punderstruck"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: punderstruck\ndescription: Puns on demand.\n---\nMake puns.\n")
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(
        [{"query": "Write a serious GTM memo", "should_trigger": False},
         {"query": "Give me three puns about marketing", "should_trigger": True}]))
    out = tmp_path / "r.html"
    args = ["run", str(skill), "--adapter", "mock", "--no-cache", "--quiet", "--history", str(tmp_path / "h.jsonl"),
            "--output", str(tmp_path / "r.json"), "--html", str(out)]
    assert main(args) == 0 and main(args) == 0
    html = out.read_text()
    assert "Trend over" not in html  # two runs, but neither has a pass rate to plot
    assert 'class="verdict note">triggers<' in html and 'class="verdict error"' not in html
    assert "every case errored" not in html and "<h3>Cases</h3>" not in html and "pass rate" not in html
    table = html[html.index("<h3>Triggers</h3>"):]
    assert table.index("<td>missed</td>") < table.index("Give me three puns") < table.index("serious GTM memo")
    assert "<td>True</td>" not in table and "<td>yes</td>" in table


PAYLOAD = "<script>alert(1)</script>"


def _at(doc, at):
    for step in at:
        doc = doc[step]
    return doc


def test_no_field_of_a_hand_edited_document_becomes_markup(tmp_path, capsys):
    """Every scalar of a real document (arms, triggers, trend, statistics), one at a time, turned
    into a script: the report either renders it as text or refuses the document, never runs it."""
    import json

    from skillab.log.results import load_documents

    example = Path(__file__).parent.parent.parent / "examples" / "changelog-entry"
    history = tmp_path / "h.jsonl"
    args = ["run", str(example), "--adapter", "mock", "--no-cache", "--quiet", "--history", str(history),
            "--output", str(tmp_path / "r.json")]
    assert main(args) == 0 and main(args) == 0
    doc = load_documents(tmp_path / "r.json")[0]
    leaves = [at for at in paths(doc) if not isinstance(_at(doc, at), (dict, list))]
    assert len(leaves) > 200 and {"triggers", "trend", "statistics"} <= {p[0] for p in leaves}
    injected = []
    for path in leaves:
        try:
            html = render_html([RunLog.from_json(replaced(doc, path, PAYLOAD))])
        except (TypeError, ValueError, KeyError, AttributeError):
            continue  # a field of the wrong type may be refused; it must not be run
        if "<script" in html:
            injected.append(".".join(map(str, path)))
    assert injected == [], sorted({re.sub(r"\.\d+\.", ".N.", p) for p in injected})
    # The field the red team used, through `skillab report` as a user would run it.
    raw = json.loads((tmp_path / "r.json").read_text())
    raw["cases"][0]["with_skill"]["turns"] = PAYLOAD
    raw["cases"][0]["with_skill"]["tool_call_count"] = PAYLOAD
    (tmp_path / "edited.json").write_text(json.dumps(raw))
    # Counts that are not numbers make no run: the document is refused, naming it, and no report is written.
    code = main(["report", str(tmp_path / "edited.json"), "--html", str(tmp_path / "edited.html")])
    assert code == 2 and not (tmp_path / "edited.html").exists()
    assert "edited.json: not a skillab results document" in capsys.readouterr().err
