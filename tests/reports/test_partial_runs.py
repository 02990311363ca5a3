"""Runs that stop early: Ctrl-C and the cost cap leave a valid partial document whose every
report says so, and ``--resume`` finishes it into the document an uninterrupted run writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillab.cli import main

from ..fakes.model_server import FakeModelServer, text
from ..results_golden import assert_round_trip
from ..signals import signal_when
from ..skillgen import answers, grep_case, make_skill

SKILLAB = str(Path(sys.executable).parent / "skillab")
NAMES = [f"c{i:02d}" for i in range(12)]
KEY = "sk-ant-api03-" + "Partial" * 7
MODEL = "claude-haiku-4-5"


def masked(doc: dict) -> dict:
    """The document without what differs between two identical runs: clocks and durations."""
    if isinstance(doc, dict):
        return {k: masked(v) for k, v in doc.items()
                if k not in ("timings", "started_at", "finished_at", "wall_ms") and "duration" not in k}
    if isinstance(doc, list):
        return [masked(v) for v in doc]
    return doc


def test_an_interrupted_run_says_so_everywhere_and_resumes_to_the_full_document(tmp_path):
    skill = make_skill(tmp_path, [grep_case(n) for n in NAMES],
                       responses={n: answers("SKILLED", "plain") for n in NAMES})
    common = ["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history",
              "--mock-latency-ms", "100", "--concurrency", "1"]
    reports = ["--markdown", "r.md", "--junit", "j.xml", "--html", "r.html"]
    journal = tmp_path / "partial.checkpoint.jsonl"  # a header, then a line per finished arm
    code, stdout, stderr = signal_when([SKILLAB, *common, "--output", "partial.json", *reports],
                                       lambda: journal.exists() and len(journal.read_text().splitlines()) >= 3,
                                       cwd=tmp_path)
    assert code == 130, stderr
    doc = json.loads((tmp_path / "partial.json").read_text())
    finished = doc["total_cases"]
    assert doc["interrupted"] is True and doc["planned_cases"] == len(NAMES) and 1 <= finished < len(NAMES)
    assert_round_trip(doc)
    headline = f"interrupted: {finished} of {len(NAMES)} cases"
    assert headline.upper() in stdout and "verdict      pass" not in stdout
    markdown_head = (tmp_path / "r.md").read_text().splitlines()[0]
    assert headline in markdown_head and "pass" not in markdown_head.replace("pts", "")
    assert headline in (tmp_path / "j.xml").read_text()
    assert f'class="verdict interrupted">{headline}' in (tmp_path / "r.html").read_text()
    assert f"skillab: {headline}; partial results kept (--resume partial.json continues)" in stderr

    resumed = subprocess.run([SKILLAB, *common, "--output", "partial.json", "--resume", "partial.json",
                              "--quiet"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    whole = subprocess.run([SKILLAB, *common, "--output", "whole.json", "--quiet"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert whole.returncode == 0, whole.stderr
    after = json.loads((tmp_path / "partial.json").read_text())
    assert masked(after) == masked(json.loads((tmp_path / "whole.json").read_text()))
    assert after["interrupted"] is False and after["total_cases"] == len(NAMES)


def test_resume_refuses_a_changed_skill(tmp_path):
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--quiet"]
    assert main(args) == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nEdited.\n")
    assert main([*args, "--resume", "results.json"]) == 2


@pytest.fixture
def priced_skill(tmp_path: Path) -> Path:
    names = [f"p{i}" for i in range(6)]
    return make_skill(tmp_path, [grep_case(n) for n in names])


def model_reply(request):
    # The with-skill arm carries the skill in its system prompt; its answer follows the skill.
    return text("SKILLED answer" if "SKILLED" in request.system_text else "a plain answer " * 8)


def run_llm(skill: Path, monkeypatch, *extra: str, output: str = "r.json") -> tuple[int, dict | None]:
    with FakeModelServer(model_reply) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        code = main(["run", str(skill), "--adapter", "llm", "--model", MODEL, "--no-cache",
                     "--no-history", "--quiet", "--output", output, *extra])
    path = Path(output)
    return code, (json.loads(path.read_text()) if path.exists() else None)


def test_dry_run_estimates_the_cost_of_the_run_within_ten_percent(priced_skill, monkeypatch, capsys):
    code, first = run_llm(priced_skill, monkeypatch)
    assert code == 0 and first["usage"]["total"]["cost_usd"] > 0
    capsys.readouterr()
    # The estimate for running the same command again, measured from the last run at --output.
    code, _ = run_llm(priced_skill, monkeypatch, "--dry-run")
    plan = capsys.readouterr().out
    assert code == 0
    assert "6 cases × 2 arms × 1 runs = 12 arms" in plan and "agent calls    12" in plan
    estimate = float(re.search(r"est\. cost      \$([0-9.]+)", plan).group(1))
    code, again = run_llm(priced_skill, monkeypatch, output="again.json")
    actual = again["usage"]["total"]["cost_usd"]
    assert abs(estimate - actual) / actual <= 0.10, (estimate, actual)
    # Without an earlier run the plan still prints, and says its guess is rough.
    code, _ = run_llm(priced_skill, monkeypatch, "--dry-run", output="nowhere.json")
    assert code == 0 and "rough:" in capsys.readouterr().out
    assert not Path("nowhere.json").exists()


def test_the_cost_cap_stops_within_one_arm_and_resume_finishes(priced_skill, monkeypatch, capsys):
    code, full = run_llm(priced_skill, monkeypatch, output="full.json")
    arm_costs = [r[a]["usage"]["cost_usd"] for r in full["cases"] for a in ("with_skill", "without_skill")]
    cap = sum(sorted(arm_costs)[:3]) + min(arm_costs) / 2  # three and a half of the cheapest arms
    code, partial = run_llm(priced_skill, monkeypatch, "--max-cost-usd", f"{cap:.8f}",
                            "--concurrency", "1")
    err = capsys.readouterr().err
    assert code == 1 and "stopped early: cost cap" in err
    spent = partial["usage"]["total"]["cost_usd"]
    assert cap <= spent <= cap + max(arm_costs)
    assert partial["interrupted"] is True and partial["stopped"].startswith("cost cap")
    assert partial["planned_cases"] == 6 and partial["total_cases"] < 6
    assert_round_trip(partial)
    code, finished = run_llm(priced_skill, monkeypatch, "--resume", "r.json")
    assert code == 0 and finished["total_cases"] == 6 and finished["interrupted"] is False
    # The fake server's prompt cache makes token counts differ run to run; the results do not.
    def results(doc):
        return [(r["case_name"], r["outcome"], r["with_skill"]["final_output"]) for r in doc["cases"]]

    assert results(finished) == results(full)


def test_resume_refuses_an_edited_suite(tmp_path):
    """Arms graded by the old validators must not be kept under the new suite's hash: resuming
    after an edit to eval.yaml would report outcomes the current suite never produced."""
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")], responses={
        "a": answers("SKILLED", "x"), "b": answers("SKILLED", "x")})
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    assert main([*args, "--output", str(tmp_path / "results.json")]) == 0
    suite = skill / "eval.yaml"
    suite.write_text(suite.read_text().replace("grep -q SKILLED", "grep -q NOWHERE", 1))
    assert main([*args, "--output", str(tmp_path / "again.json"),
                 "--resume", str(tmp_path / "results.json")]) == 2
    assert not (tmp_path / "again.json").exists()


def test_resume_from_a_journal_refuses_an_edited_suite(tmp_path):
    """The same after SIGKILL, when only the checkpoint journal is left to say what ran."""
    import signal

    names = [f"c{i}" for i in range(6)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out, journal = tmp_path / "results.json", tmp_path / "results.checkpoint.jsonl"
    common = [SKILLAB, "run", str(skill), "--adapter", "mock", "--no-cache", "--no-history",
              "--concurrency", "1", "--output", str(out), "--quiet"]
    code, _, _ = signal_when([*common, "--mock-latency-ms", "150"],
                             lambda: journal.exists() and len(journal.read_text().splitlines()) >= 3,
                             sig=signal.SIGKILL)
    assert code == -signal.SIGKILL and not out.exists()
    suite = skill / "eval.yaml"
    suite.write_text(suite.read_text().replace("grep -q SKILLED", "grep -q NOWHERE"))
    resumed = subprocess.run([*common, "--resume", str(out)], capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 2, resumed.stderr
    assert "eval" in resumed.stderr and "changed since that run" in resumed.stderr


def test_resume_refuses_another_agent_configuration(tmp_path):
    """A resumed run that answers differently (here another mock script; for a model, another
    skill loading, turn cap or endpoint) must not keep the earlier answers under its own name."""
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    other = tmp_path / "other.yaml"
    other.write_text("a:\n  with: x\n  without: x\n")
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    assert main([*args, "--output", str(tmp_path / "results.json")]) == 0
    assert main([*args, "--mock-responses", str(other), "--output", str(tmp_path / "again.json"),
                 "--resume", str(tmp_path / "results.json")]) == 2
    assert main([*args, "--output", str(tmp_path / "same.json"),
                 "--resume", str(tmp_path / "results.json")]) == 0


def test_resume_from_another_working_directory_keeps_the_finished_arms(tmp_path, monkeypatch, capsys):
    """The document keeps the suite's path as typed; resumed from elsewhere (a CI step's other
    cwd, a moved folder) it is still the same experiment, and its arms must not be paid again."""
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")], responses={
        "a": answers("SKILLED", "x"), "b": answers("SKILLED", "x")})
    args = ["--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    monkeypatch.chdir(tmp_path)
    assert main(["run", skill.name, *args, "--output", "results.json"]) == 0
    moved = tmp_path / "moved" / skill.name
    moved.parent.mkdir()
    skill.rename(moved)
    monkeypatch.chdir(moved.parent.parent.parent)
    capsys.readouterr()
    assert main(["run", str(moved), *args, "--resume", str(tmp_path / "results.json"), "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert "4 finished arms kept from --resume" in plan and re.search(r"arms to run\s+0\b", plan), plan


def test_resume_from_a_document_of_another_suite_is_refused(tmp_path, capsys):
    """A results file that holds none of the suites being run would keep nothing: say so before
    spending, rather than silently running every arm again."""
    one = make_skill(tmp_path / "one", [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    two = make_skill(tmp_path / "two", [grep_case("b")], responses={"b": answers("SKILLED", "x")})
    args = ["--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    assert main(["run", str(one), *args, "--output", str(tmp_path / "one.json")]) == 0
    capsys.readouterr()
    assert main(["run", str(two), *args, "--output", str(tmp_path / "two.json"),
                 "--resume", str(tmp_path / "one.json")]) == 2
    err = capsys.readouterr().err
    assert "holds no run of" in err and str(two / "eval.yaml") in err and "one" in err, err
    assert not (tmp_path / "two.json").exists()


def test_a_dry_run_over_a_malformed_earlier_document_names_the_file_and_the_field(tmp_path, monkeypatch, capsys):
    """The plan measures from the last run at --output, read as a typed run at the door: a
    document that is not one is a one-line usage error, never a silent rough guess."""
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    monkeypatch.chdir(tmp_path)
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    assert main(args) == 0
    doc = json.loads(Path("results.json").read_text())
    doc["cases"][0]["with_skill"]["usage"]["input_tokens"] = "many"
    Path("results.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main([*args, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "results.json: not a skillab results document" in err and "usage.input_tokens" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("field,value,named", [
    (("adapter", "name"), ["mock"], "adapter.name: expected str"),
    (("suite", "suite_hash"), 7, "suite.suite_hash: expected str"),
    (("models",), "mock", "models: expected an object"),
])
def test_resume_reads_the_earlier_run_typed_and_names_the_field_that_does_not_fit(tmp_path, capsys, field, value,
                                                                                   named):
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    args = ["run", str(skill), "--adapter", "mock", "--no-history", "--no-cache", "--quiet"]
    earlier = tmp_path / "earlier.json"
    assert main([*args, "--output", str(earlier)]) == 0
    doc = json.loads(earlier.read_text())
    block = doc
    for key in field[:-1]:
        block = block[key]
    block[field[-1]] = value
    earlier.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main([*args, "--resume", str(earlier), "--output", str(tmp_path / "again.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--resume {earlier}: not a skillab results document ({named}" in err and len(err.splitlines()) == 1
