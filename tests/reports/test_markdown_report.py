"""The markdown report, rendered from results documents built by hand.

Where ``cmarkgfm`` (GitHub's own cmark-gfm) is installed, reports are also rendered to HTML with
raw HTML allowed, so an escaping slip shows up as a real tag or a broken table.
"""

from __future__ import annotations

import re
from typing import Any

from skillab.core.runlog import RunLog
from skillab.reports import escape
from skillab.reports.markdown import (
    GITHUB_COMMENT_LIMIT,
    overall_verdict,
    pooled_delta_pts,
    render_markdown,
    size,
)

KEY = "sk-ant-api03-" + "Q" * 40
EVIL = f"Hi @octocat <img src=x onerror=alert(1)> a | b `tick` {KEY} #42 [link](https://evil.example)"


# -- a small results-document builder ---------------------------------------------------------


def arm(passed: bool, *, errored: bool = False, output: str = "answer", reason: str = "",
        tokens: tuple[int, int] = (120, 40), cost: float | None = 0.0012, cached: bool = False,
        error: str | None = None) -> dict[str, Any]:
    validators = [{
        "label": "mentions SKILLED", "passed": passed, "exit_code": 0 if passed else 1,
        "expect_exit_code": 0, "stdout": "", "stderr": "" if passed else "no SKILLED in response.txt",
        "errored": False, "duration_ms": 5,
    }]
    expectations = [{
        "expectation": "The answer names the house rule.", "passed": passed,
        "reason": reason or ("It does." if passed else "The answer never names the rule."),
        "errored": False,
    }]
    return {
        "passed": passed, "task_attempted": True, "errored": errored, "error": error,
        "duration_ms": 1500, "turns": 1, "total_tokens": sum(tokens), "tool_call_count": 0,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1], "cache_read_tokens": 0,
                  "cache_write_tokens": 0, "total_tokens": sum(tokens), "cost_usd": cost},
        "final_output": output, "transcript": "", "validator_results": validators,
        "expectation_results": expectations, "cached": cached, "skill_activated": None,
        "contaminated": False,
    }


ARMS = {
    "flip_to_pass": (True, False),
    "flip_to_fail": (False, True),
    "pass_kept": (True, True),
    "fail_kept": (False, False),
}


def record(name: str, outcome: str, run_index: int = 0, **arm_kwargs: Any) -> dict[str, Any]:
    if outcome == "error":
        with_arm = arm(False, errored=True, error="provider returned HTTP 529 after 4 attempts")
        without_arm = arm(True)
    else:
        w, wo = ARMS[outcome]
        with_arm, without_arm = arm(w, **arm_kwargs), arm(wo, **arm_kwargs)
    return {"case_name": name, "run_index": run_index, "outcome": outcome, "tags": [],
            "error": None, "with_skill": with_arm, "without_skill": without_arm}


def document(records: list[dict[str, Any]], *, skill: str = "changelog-entry", runs: int = 1,
             ci: list[float] | None = None, p: float | None = None, **overrides: Any) -> dict[str, Any]:
    counted = [r for r in records if r["outcome"] != "error"]
    with_pass = sum(r["with_skill"]["passed"] for r in counted)
    without_pass = sum(r["without_skill"]["passed"] for r in counted)
    n = len(counted)
    delta = round(100 * (with_pass - without_pass) / n, 2) if n else None
    flips_up = sum(r["outcome"] == "flip_to_pass" for r in records)
    flips_down = sum(r["outcome"] == "flip_to_fail" for r in records)
    doc = {
        "format": "skillab.results/1",
        "tool": {"name": "skillab", "version": "0.1.0"},
        "suite": {"path": f"skills/{skill}/eval.yaml", "format": "eval.yaml", "skill": skill,
                  "skill_dir": f"skills/{skill}", "skill_hash": "ab" * 32},
        "adapter": {"name": "mock", "identity": {"adapter": "mock"}},
        "models": {"agent": "claude-sonnet-4-5", "judge": "claude-haiku-4-5", "judge_prompt_sha256": None},
        "isolation": {"network": "none", "detail": "test"},
        "runs": runs, "pass_k": 1,
        "pass_rate": {"with_skill": with_pass / n if n else None,
                      "without_skill": without_pass / n if n else None, "delta_pts": delta},
        **{f"{dimension}{gated}": None for gated in ("", "_correctness_gated")
           for dimension in ("duration_ms", "turns", "tokens", "tool_calls")},
        "errors": len(records) - n, "error_dominated": False,
        "cases_aggregated": n, "cases_correctness_gated": 0, "cases_skipped_apples_oranges": 0,
        "total_cases": len(records), "cases_skipped_trigger_only": 1,
        "verdict": "pass" if delta and delta > 0 else ("fail" if delta and delta < 0 else "mixed"),
        "verdict_classified": "pass",
        "outcome_counts": {},
        "statistics": {"n_cases": n, "n_records": n, "flip_to_pass": flips_up,
                       "flip_to_fail": flips_down, "delta_pts": delta, "lift_pts": delta, "ci95": ci,
                       "p_value": p, "mcnemar_p": p, "method": "exact McNemar", "distinguishable": False,
                       "summary": "+25.0 pts (95% CI −10.0 to +60.0, McNemar p=0.62): cannot be "
                                  "told from noise with 4 cases; about 31 cases would be needed "
                                  "to detect a lift this size."},
        "cache": {"enabled": True, "hits": 2, "arms": n},
        "usage": {arm: {"input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 0,
                        "cache_write_tokens": 0, "total_tokens": 1200, "cost_usd": 0.05}
                  for arm in ("with_skill", "without_skill", "total")} | {"original": None, "judge": None},
        "timings": {"started_at": "2026-11-22T00:00:00+00:00",
                    "finished_at": "2026-11-22T00:01:00+00:00", "wall_ms": 60000},
        "interrupted": False, "activation": None, "contaminated_arms": 1,
        "warnings": [], "trigger_only_cases": ["routes-here"], "comparison": None, "judge_consistency": None,
        "triggers": None, "criteria": None, "pass_at_k": None, "trend": None,
        "cases": records,
    }
    doc.update(overrides)
    return doc


def logs(*documents: dict[str, Any]) -> list[RunLog]:
    """The runs the hand-built documents hold, read as a report reads a results file."""
    return [RunLog.from_json(doc) for doc in documents]


def four_cases(**kwargs: Any) -> dict[str, Any]:
    return document(
        [record("rescued", "flip_to_pass"), record("kept", "pass_kept"),
         record("broken", "flip_to_fail"), record("hopeless", "fail_kept")],
        ci=[-10.0, 60.0], p=0.62, **kwargs,
    )


# -- helpers to read a report ------------------------------------------------------------------


def outside_code(markdown: str) -> str:
    """The report with fenced code blocks removed (GitHub neither links nor pings inside them)."""
    return re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", markdown, flags=re.S | re.M)


def table_rows(markdown: str, header_start: str) -> list[str]:
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def cells(row: str) -> list[str]:
    """A GFM row split on unescaped pipes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def to_html(markdown: str) -> str:
    # GitHub's own renderer (a test dependency): what the comment will really look like.
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


# -- what the report says ----------------------------------------------------------------------


def test_headline_table_and_footer_carry_the_numbers():
    report = render_markdown(logs(four_cases()), run_url="https://github.com/o/r/actions/runs/42")
    first = report.split("\n")[0]
    assert first.startswith("## ") and "mixed" in first and "+0.0 pts" in first
    rows = table_rows(report, "| Suite |")
    assert len(rows) == 3
    assert cells(rows[2]) == ["changelog-entry", "4", "50%", "50%", "+0.0 (−10.0 to +60.0)", "0.62", "🟡 mixed"]
    footer = report.rstrip().split("\n")[-1]
    for needed in ("skillab 0.1.0", "`mock`", "`claude-sonnet-4-5`", "`claude-haiku-4-5`", "runs `1`",
                   "[workflow run](https://github.com/o/r/actions/runs/42)"):
        assert needed in footer


def test_flips_within_noise_are_not_called_broken():
    report = render_markdown(logs(four_cases()))
    assert "**Broken by the skill**" not in report
    worse = report.index("**Worse with the skill, within noise**")
    assert worse < report.index("**Rescued by the skill**")


def test_flips_come_first_broken_before_rescued():
    doc = four_cases()
    # Only a drop that passed its noise test (statistics.regression) is called broken.
    doc["statistics"]["regression"] = True
    report = render_markdown(logs(doc))
    broken = report.index("**Broken by the skill**")
    rescued = report.index("**Rescued by the skill**")
    table = report.index("| Suite |")
    assert broken < rescued < table
    assert "broken" in report[broken:rescued] and "rescued" in report[rescued:table]


def test_disclosures_count_everything_left_out_of_the_lift():
    doc = document([record("a", "flip_to_pass"), record("b", "error"), record("c", "pass_kept")],
                   cases_skipped_apples_oranges=2, warnings=["judge fell back to the agent model"])
    report = render_markdown(logs(doc))
    disclosures = report[report.index("**Disclosures**"):report.index("### Cases")]
    for needed in ("1 errored", "2 skipped (apples-to-oranges)", "1 trigger-only",
                   "2 cached baselines", "1 contaminated arms", "judge fell back to the agent model"):
        assert needed in disclosures


def test_case_details_show_failed_checks_judge_reason_tokens_and_cost():
    report = render_markdown(logs(four_cases()))
    block = re.search(r"<details><summary>broken: .*?</details>", report, re.S).group(0)
    assert "validator mentions SKILLED: exit 1, expected 0" in block
    assert "no SKILLED in response.txt" in block
    assert "The answer never names the rule." in block
    assert "| tokens | 160 | 160 |" in block and "$0.0012" in block
    assert block.index("**With skill**") < block.index("Answer:")


def test_error_dominated_suite_withholds_the_lift():
    doc = document([record("a", "error"), record("b", "error"), record("c", "pass_kept")],
                   error_dominated=True, verdict="error")
    doc["pass_rate"]["delta_pts"] = None
    report = render_markdown(logs(doc))
    assert "n/a (error-dominated)" in report
    assert "error-dominated: the lift is withheld" in report
    assert report.startswith("## ⚠️ skillab: error")


def test_several_suites_pool_the_delta_and_take_the_worst_verdict():
    good = document([record("a", "flip_to_pass"), record("b", "pass_kept")], skill="good")
    bad = document([record("c", "flip_to_fail"), record("d", "pass_kept"),
                    record("e", "pass_kept"), record("f", "pass_kept")], skill="bad")
    assert good["pass_rate"]["delta_pts"] == 50.0 and bad["pass_rate"]["delta_pts"] == -25.0
    assert overall_verdict(logs(good, bad)) == "fail"
    assert pooled_delta_pts(logs(good, bad)) == round((50.0 * 2 - 25.0 * 4) / 6, 2)
    report = render_markdown(logs(good, bad))
    assert report.startswith("## ❌ skillab: fail — 2 suites, pooled +0.0 pts (95% CI −")
    assert "6 cases)" in report.split("\n")[0]  # every case of every suite, pooled as one sample
    assert "bad / c" in report and "good / a" in report


def test_runs_are_counted_per_case_in_flips():
    doc = document([record("a", "flip_to_pass", 0), record("a", "flip_to_pass", 1),
                    record("a", "pass_kept", 2)], runs=3)
    report = render_markdown(logs(doc))
    assert "a (2/3 runs)" in report
    assert "| Case | Run | Outcome |" in report


def test_no_documents_still_reports_the_notes():
    report = render_markdown([], notes=["This pull request touches no skill suite: nothing to evaluate."])
    assert report.startswith("## skillab: no suite ran")
    assert "touches no skill suite" in report


# -- escaping ------------------------------------------------------------------------------------


def hostile_document() -> dict[str, Any]:
    rec = record(EVIL, "flip_to_fail", output=EVIL, reason=EVIL)
    rec["with_skill"]["validator_results"][0]["stderr"] = EVIL
    rec["with_skill"]["validator_results"][0]["label"] = EVIL
    return document([rec, record("fine", "pass_kept")], skill=f"skill {EVIL}",
                    warnings=[EVIL])


def test_text_from_models_and_suites_renders_inert():
    report = render_markdown(logs(hostile_document()))
    assert KEY not in report and "[REDACTED]" in report
    prose = outside_code(report)
    assert "@octocat" not in prose and "@\u200doctocat" in prose
    assert "#42" not in prose
    assert "<img" not in prose and "&lt;img src=x onerror=alert(1)&gt;" in prose
    assert "](https://evil.example)" not in prose.replace("\\]", "")
    for header in ("| Suite |", "| Case |"):
        rows = table_rows(report, header)
        assert len(rows) > 2 and {len(cells(row)) for row in rows} == {len(cells(rows[0]))}


def test_hostile_text_keeps_every_table_whole_in_githubs_renderer():
    html = to_html(render_markdown(logs(hostile_document())))
    assert "<img" not in html and "<a href" not in html.replace('<a href="https://github.com', "")
    # Every row of the suite table and the case table keeps its column count.
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {len(re.findall(r"<t[hd][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1, table
    assert "@octocat" not in re.sub(r"<pre.*?</pre>", "", html, flags=re.S)


def test_code_block_fence_outgrows_backticks_in_the_text():
    block = escape.code_block("before\n````\nstill inside\n")
    assert block.startswith("`````text\n") and block.endswith("\n`````")


def test_inline_escape_collapses_newlines_and_pipes():
    assert escape.inline("a\nb | c") == "a b \\| c"
    assert escape.inline("x" * 50, limit=10) == "x" * 9 + "…"


# -- the comment size limit ------------------------------------------------------------------------


def big_document(n: int) -> dict[str, Any]:
    outcomes = ["flip_to_pass", "flip_to_fail", "pass_kept", "fail_kept", "error"]
    long_reason = "The judge explains at length why this is wrong. " * 8
    records = [
        record(f"case-{i:04d}-" + "y" * 30, outcomes[i % 5], output="line of output\n" * 40,
               reason=long_reason)
        for i in range(n)
    ]
    return document(records, ci=[-3.0, 5.0], p=0.4)


def test_a_900_case_suite_fits_the_comment_limit_with_the_table_whole():
    doc = big_document(900)
    report = render_markdown(logs(doc), run_url="https://github.com/o/r/actions/runs/1")
    assert size(report) <= 65000 < GITHUB_COMMENT_LIMIT
    rows = table_rows(report, "| Suite |")
    assert len(rows) == 3 and cells(rows[2])[0] == "changelog-entry"
    assert "left out to stay under GitHub's comment limit" in report
    assert report.rstrip().endswith("</sub>")  # the footer survives
    # Broken cases are kept before anything else is.
    case_rows = table_rows(report, "| Case |")
    kept = [cells(r)[1] for r in case_rows[2:]]
    # (within noise here: the document names no regression, so they read "worse with the skill")
    assert kept and all(k.startswith(("❌", "🟡 worse")) for k in kept[: min(len(kept), 180)])
    assert report.count("<details>") == report.count("</details>")


def test_details_go_before_rows_do():
    doc = big_document(40)
    full = render_markdown(logs(doc))
    assert full.count("<details>") == 40 and "left out" not in full
    budget = size(full) - 2000
    trimmed = render_markdown(logs(doc), max_chars=budget)
    assert size(trimmed) <= budget
    assert 0 < trimmed.count("<details>") < 40
    assert len(table_rows(trimmed, "| Case |")) == 42  # every row stays
    assert "Details of" in trimmed


def test_hundreds_of_suites_keep_whole_lines():
    docs = [document([record("a", "pass_kept")], skill=f"skill-{i:03d}-" + "z" * 40) for i in range(250)]
    report = render_markdown(logs(*docs), max_chars=12000)
    assert size(report) <= 12000 and "cut here to fit" in report
    assert all(line.count("|") in (0, 8) for line in report.split("\n") if line.startswith("| skill-"))


def test_a_regression_in_one_suite_does_not_call_another_suites_flips_broken():
    """Two suites in one PR comment: only the cases whose drop passed their own suite's noise test
    are "broken beyond noise"; a lone flip in a suite without a regression is within noise."""
    regressed = document([record(f"r{i}", "flip_to_fail") for i in range(8)], skill="alpha")
    regressed["statistics"].update(regression=True, regressed_cases=[f"r{i}" for i in range(8)])
    calm = document([record("slipped", "flip_to_fail"), record("fine", "pass_kept"),
                     record("up", "flip_to_pass")], skill="beta")
    for doc in (regressed, calm):
        # The same cases against the original skill (--against): the edit's flips.
        for case in doc["cases"]:
            case["original_outcome"] = case["outcome"]
        doc["comparison"] = {
            "original": {"source": "git", "spec": "main", "commit": None, "label": "main",
                         "skill": doc["suite"]["skill"], "skill_hash": "cd" * 32},
            "pass_rate": {"candidate": None, "original": None, "delta_pts": None},
            "broken_by_edit": [], "changed_within_noise": [], "rescued_by_edit": [], "outcome_counts": {},
            "errors": 0, "error_dominated": False, "cases_aggregated": len(doc["cases"]),
            "efficiency": {"duration_ms": None, "turns": None, "tokens": None, "tool_calls": None},
            "statistics": dict(doc["statistics"])}
    report = render_markdown(logs(regressed, calm))
    broken = report[report.index("**Broken by the skill**"):].split("\n\n")[0]
    within = report[report.index("**Worse with the skill, within noise**"):].split("\n\n")[0]
    assert "alpha / r0" in broken and "slipped" not in broken
    assert "beta / slipped" in within and "alpha" not in within
    edit_broken = report[report.index("**❌ Broken by the edit**"):].split("\n\n")[0]
    edit_within = report[report.index("**Changed, within noise**"):].split("\n\n")[0]
    assert "alpha / r0" in edit_broken and "slipped" not in edit_broken
    assert "beta / slipped" in edit_within and "alpha" not in edit_within


def test_an_interrupted_run_has_no_pass_in_its_table():
    """The headline reads "interrupted": the table's verdict cell must not say pass."""
    doc = document([record("rescued", "flip_to_pass")])
    doc.update(interrupted=True, planned_cases=4, verdict="pass")
    report = render_markdown(logs(doc))
    assert "interrupted: 1 of 4 cases" in report.split("\n")[0]
    row = cells(table_rows(report, "| Suite |")[2])
    assert row[-1] == "⏹️ interrupted"
    assert "✅ pass" not in "\n".join(table_rows(report, "| Suite |"))


def test_a_flip_within_noise_has_one_label_everywhere_in_the_comment():
    report = render_markdown(logs(four_cases()))
    assert "broken by the skill" not in report.lower()
    row = next(r for r in table_rows(report, "| Case |") if cells(r)[0] == "broken")
    assert cells(row)[1] == "🟡 worse with the skill, within noise"
    assert "broken: 🟡 worse with the skill, within noise</summary>" in report


def test_why_the_check_failed_is_right_under_the_headline():
    report = render_markdown(logs(big_document(300)), checks=["Check failed: changelog-entry: verdict is fail"],
                             notes=["This pull request touches one suite."])
    lines = [line for line in report.split("\n") if line.strip()]
    assert lines[1] == "> Check failed: changelog-entry: verdict is fail"
    assert report.index("Check failed") < report.index("| Suite |")


def test_the_markdown_entry_points_take_typed_runs_never_a_document_dict():
    """The PR comment's path reads ``RunLog`` fields: no entry point takes a results document
    (``dict[str, Any]``) for a run, so a renamed field is a type error, not a silent ``n/a``."""
    import inspect
    import typing

    from skillab.formats.ruby_bench import report as ruby_report
    from skillab.github import agents
    from skillab.reports import markdown, portability
    from skillab.reports.markdown_view import SuiteView

    entry_points = [markdown.render_markdown, markdown.overall_verdict, markdown.pooled_delta_pts,
                    markdown.pooled_scope, portability.render_markdown, portability.render_terminal,
                    portability.is_portability_run, portability.portability_rows,
                    portability.PortabilityRow.from_log, SuiteView.from_log, agents.run_delta_pts,
                    ruby_report.markdown_section]
    for function in entry_points:
        hints = typing.get_type_hints(function)
        params = [name for name in inspect.signature(function).parameters if name not in ("cls", "self")]
        assert params and all(name in hints for name in params), function.__qualname__
        for name in params:
            assert "dict[str, typing.Any]" not in str(hints[name]), f"{function.__qualname__}({name})"


def test_the_cases_after_a_trigger_set_keep_their_own_suite(tmp_path):
    """A suite of trigger queries only has no row and no cases; the cases of the suites after it
    are still shown under their own suite (indexed by run, they once pointed past the rows)."""
    import json

    from skillab.cli import main

    from ..engine.test_triggers import write_skill

    skill = write_skill(tmp_path, "only-triggers", "d", triggers=[{"query": "q1", "should_trigger": True}],
                        mock={"q1": {"loads": True}})
    out = tmp_path / "t.json"
    assert main(["run", str(skill), "--adapter", "mock", "--quiet", "--no-cache", "--no-history",
                 "--output", str(out)]) == 0
    triggers = RunLog.from_json(json.loads(out.read_text()))
    graded = document([record("rescued", "flip_to_pass"), record("kept", "pass_kept", run_index=1)], runs=2)
    report = render_markdown([triggers, *logs(graded)])
    assert "#### Triggers" in report
    # The graded suite's own settings shape its rows: two runs, so a Run column.
    assert "| Case | Run | Outcome |" in table_rows(report, "| Case |")[0]
    assert "| rescued | 1 |" in report and "| kept | 2 |" in report


def test_a_suite_that_produced_no_results_is_an_error_row_beside_the_others():
    """The Action's invalid suite has no run: it is a ``FailedSuite`` row, its verdict an error
    that outranks the other suites', with nothing measured and no footer facts of its own."""
    from skillab.reports.markdown_view import FailedSuite

    runs, failed = logs(four_cases()), [FailedSuite("skills/bad")]
    assert overall_verdict(runs) == "mixed" and overall_verdict(runs, failed) == "error"
    assert overall_verdict([], failed) == "error" and overall_verdict([]) is None
    report = render_markdown(runs, failed=failed)
    assert report.startswith("## ⚠️ skillab: error — 2 suites")
    row = table_rows(report, "| Suite |")[-1]
    assert cells(row) == ["skills/bad", "0", "n/a", "n/a", "n/a", "n/a", "⚠️ error"]
    assert "- skills/bad: 0 errored" in report
    assert "adapter `mock` ·" in report.rsplit("---", 1)[1]  # the footer names only the suite that ran
