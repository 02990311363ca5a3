"""Ctrl-C mid-run keeps what finished, marks the document interrupted, and exits 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from ..signals import signal_when
from ..skillgen import answers, grep_case, make_skill


def test_sigint_keeps_finished_cases_and_marks_the_document(tmp_path: Path):
    names = [f"c{i:02d}" for i in range(30)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out = tmp_path / "results.json"
    # The checkpoint journal: a header, then one line per finished arm (both arms: one case).
    code, _, stderr = signal_when(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
         "--mock-latency-ms", "150", "--concurrency", "1", "--output", str(out), "--quiet"],
        lambda: journal_lines(tmp_path / "results.checkpoint.jsonl") >= 3, what="no checkpoint was written")
    assert code == 130, stderr
    assert "Traceback" not in stderr
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True
    finished = [c["case_name"] for c in doc["cases"]]
    assert 1 <= len(finished) < len(names)
    assert finished == names[: len(finished)]  # concurrency 1: the finished ones are a prefix
    assert all(c["outcome"] == "flip_to_pass" for c in doc["cases"])
    assert doc["total_cases"] == len(finished)
    assert doc["statistics"] is not None  # the final document, not a checkpoint


def journal_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_run_resumes_from_its_checkpoint_journal(tmp_path: Path):
    """SIGKILL leaves no results document, only the journal: --resume runs only what it lacks."""
    names = [f"c{i:02d}" for i in range(8)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out, journal = tmp_path / "results.json", tmp_path / "results.checkpoint.jsonl"
    common = [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
              "--no-history", "--concurrency", "1", "--output", str(out), "--quiet"]
    code, _, _ = signal_when([*common, "--mock-latency-ms", "150"], lambda: journal_lines(journal) >= 7,
                             what="no checkpoint was written", sig=signal.SIGKILL)
    assert code == -signal.SIGKILL and not out.exists()
    kept = [json.loads(line) for line in journal.read_text().splitlines()[1:] if line.endswith("}")]
    resumed = subprocess.run([*common, "--resume", str(out), "--json"], capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(out.read_text())
    assert [c["case_name"] for c in doc["cases"]] == names and doc["interrupted"] is False
    assert all(c["outcome"] == "flip_to_pass" for c in doc["cases"])
    # Arms from the journal were kept, not run again: their records are the journal's.
    first = next(c for c in doc["cases"] if c["case_name"] == kept[0]["case_name"])
    assert first[kept[0]["arm"]]["duration_ms"] == kept[0]["record"]["duration_ms"]
    assert not journal.exists()  # the run finished whole: nothing left to resume


def test_a_full_disk_at_a_checkpoint_warns_and_the_run_goes_on(tmp_path: Path):
    import errno

    from skillab.core.events import ArmFinished, Broadcast
    from skillab.engine.runner import run_suite

    from ..configs import run_config

    names = ["a", "b", "c"]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    attempts = []

    class FullDisk:
        name = "checkpoint"

        def on_event(self, event) -> None:
            if isinstance(event, ArmFinished):
                attempts.append(event)
                raise OSError(errno.ENOSPC, "No space left on device")

    config = run_config(adapter="mock", cache_enabled=False, concurrency=1,
                       mock_responses=skill / "mock-responses.yaml")
    report = run_suite(skill, config, emit=Broadcast([FullDisk()]))
    assert attempts, "no checkpoint was attempted"
    assert not report.log.interrupted
    assert [c.outcome for c in report.log.records] == ["flip_to_pass"] * 3
    assert any("checkpoint could not be written (No space left on device)" in w
               for w in report.log.settings.warnings)


def test_damaged_journal_lines_are_skipped_by_name_and_their_arms_run_again(tmp_path: Path):
    """A journal line that is valid JSON but not an entry (a wrong type where the run index goes,
    a bare null) must not end --resume in a traceback or refuse the whole journal."""
    names = ["a", "b"]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out, journal = tmp_path / "results.json", tmp_path / "results.checkpoint.jsonl"
    common = [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
              "--no-history", "--output", str(out), "--quiet"]
    assert subprocess.run(common, capture_output=True, timeout=120).returncode == 0
    whole = json.loads(out.read_text())
    # What a killed run leaves: the journal only; here with damaged lines among the good ones.
    header = {"format": "skillab.checkpoint/1", "suite": {
        "path": whole["suite"]["path"], "skill": whole["suite"]["skill"],
        "skill_hash": whole["suite"]["skill_hash"], "suite_hash": whole["suite"]["suite_hash"],
        "adapter": "mock", "model": None}}
    arm = {"suite": whole["suite"]["path"], "adapter": "mock", "case_name": "a", "run_index": 0,
           "arm": "with_skill", "record": whole["cases"][0]["with_skill"]}
    journal.write_text("\n".join(json.dumps(x) for x in (
        header, arm, {**arm, "arm": "without_skill", "run_index": "x"}, None, [1, 2],
        {**arm, "case_name": "b", "record": {"passed": "x", "turns": "many"}})) + "\n")
    out.unlink()
    resumed = subprocess.run([*common, "--resume", str(out)], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert "skipped 3 line(s) that are not journal entries (line 3, 4, 5)" in resumed.stderr
    doc = json.loads(out.read_text())
    assert [(c["case_name"], c["outcome"]) for c in doc["cases"]] == [("a", "flip_to_pass"), ("b", "flip_to_pass")]


def test_report_renders_an_interrupted_run_and_flags_its_half_finished_case(tmp_path: Path):
    """After SIGTERM the journal beside the document is merged in: every finished case keeps its
    outcome, and a case with one arm done is shown as unfinished, not a crash."""
    names = [f"c{i:02d}" for i in range(12)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out, journal = tmp_path / "results.json", tmp_path / "results.checkpoint.jsonl"
    code, _, stderr = signal_when(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache", "--no-history",
         "--mock-latency-ms", "150", "--concurrency", "2", "--output", str(out), "--quiet"],
        lambda: journal_lines(journal) >= 5, what="no checkpoint was written", sig=signal.SIGTERM)
    assert code in (130, 143), stderr
    finished = [c["case_name"] for c in json.loads(out.read_text())["cases"]]
    # One more arm of a case the document does not hold: the half-finished case.
    lines = journal.read_text().splitlines()
    half = json.loads(next(line for line in lines[1:] if '"with_skill"' in line))
    half["case_name"] = "half-done"
    journal.write_text("\n".join([*lines, json.dumps(half)]) + "\n")
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    report = subprocess.run([sys.executable, "-m", "skillab", "report", str(out), "--html", str(html),
                             "--markdown", str(md)], capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in report.stderr
    rows = {line.split()[0]: line for line in report.stdout.splitlines() if line.startswith("  c") or "half-done" in line}
    assert all("flip_to_pass" in rows[name] for name in finished)
    assert "unfinished: the run stopped before its without-skill arm finished" in rows["half-done"]
    assert "INTERRUPTED" in report.stdout
    assert "half-done" in md.read_text() and "unfinished" in html.read_text()


def test_report_of_a_killed_run_with_only_its_journal_says_how_to_finish_it(tmp_path: Path):
    (tmp_path / "results.checkpoint.jsonl").write_text(json.dumps(
        {"format": "skillab.checkpoint/1", "suite": {"path": "s/eval.yaml", "skill": "s", "skill_hash": "h",
                                                    "suite_hash": "h", "adapter": "mock", "model": None}}) + "\n")
    report = subprocess.run([sys.executable, "-m", "skillab", "report", str(tmp_path / "results.json")],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 2 and "Traceback" not in report.stderr
    assert "--resume" in report.stderr


def test_a_damaged_case_name_in_the_resumed_document_runs_its_arms_again(tmp_path: Path):
    """A case record whose name is not text (here a list, as a hand-edited document may hold)
    is damaged like any other: --resume runs its arms again rather than ending in a traceback."""
    names = ["a", "b"]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    out = tmp_path / "results.json"
    common = [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--no-cache",
              "--no-history", "--output", str(out), "--quiet"]
    assert subprocess.run(common, capture_output=True, timeout=120).returncode == 0
    doc = json.loads(out.read_text())
    doc["cases"][1]["case_name"] = ["b"]
    out.write_text(json.dumps(doc))
    resumed = subprocess.run([*common, "--resume", str(out)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in resumed.stderr
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(out.read_text())
    assert [(c["case_name"], c["outcome"]) for c in doc["cases"]] == [("a", "flip_to_pass"), ("b", "flip_to_pass")]
