"""``skillab diff`` compares two runs case by case with a noise test; ``skillab init`` scaffolds a
suite that validates and runs as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.scoring.compare import noise_test

from ..skillgen import answers, grep_case, make_skill

NAMES = [f"c{i}" for i in range(8)]


def run_with(tmp_path: Path, passing: set[str], output: str) -> Path:
    skill = make_skill(tmp_path, [grep_case(n) for n in NAMES],
                       responses={n: answers("SKILLED" if n in passing else "plain", "plain") for n in NAMES})
    assert main(["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--output", output, "--allow-error-verdict"]) in (0, 1)
    return Path(output)


def test_diff_names_each_flip_and_tests_it_against_noise(tmp_path, capsys):
    before = run_with(tmp_path, {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}, "a.json")
    after = run_with(tmp_path, {"c0", "c5"}, "b.json")
    capsys.readouterr()
    assert main(["diff", str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "regressed    c1, c2, c3, c4, c6, c7" in out
    assert "100.0% → 25.0% (-75.00 pts)" in out
    assert "0 improved vs 6 regressed: p=0.031" in out and "more than noise" in out
    assert main(["diff", str(before), str(after), "--fail-on-regression"]) == 1
    assert "skillab: regression: demo-skill: 6 cases regressed" in capsys.readouterr().err
    # The same comparison the other way round is an improvement, and no gate fails.
    assert main(["diff", str(after), str(before), "--fail-on-regression", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["suites"][0]["improved"] == ["c1", "c2", "c3", "c4", "c6", "c7"]
    assert data["suites"][0]["delta_pts"] == 75.0


def test_a_single_flip_is_noise(tmp_path, capsys):
    before = run_with(tmp_path, {"c0", "c1"}, "a.json")
    after = run_with(tmp_path, {"c0"}, "b.json")
    capsys.readouterr()
    assert main(["diff", str(before), str(after), "--fail-on-regression"]) == 0
    assert "cannot be told from noise" in capsys.readouterr().out
    assert noise_test([-1])[0] == 1.0 and noise_test([-1] * 5)[0] == pytest.approx(0.0625)


def test_diff_of_a_file_that_is_not_results_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "x.json").write_text("[]")
    assert main(["diff", str(tmp_path / "x.json"), str(tmp_path / "x.json")]) == 2
    assert main(["diff", str(tmp_path / "nope.json"), str(tmp_path / "x.json")]) == 2


def test_init_scaffolds_a_suite_that_validates_and_runs_and_never_overwrites(tmp_path, capsys):
    (tmp_path / ".git").mkdir()  # a repository root for the workflow, found by git
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    skill = tmp_path / "skills" / "my-skill"
    assert main(["init", str(skill)]) == 0
    err = capsys.readouterr().err
    for name in ("SKILL.md", "eval.yaml", "mock-responses.yaml"):
        assert f"skillab: wrote {skill / name}" in err
    workflow = tmp_path / ".github" / "workflows" / "skillab.yml"
    steps = yaml.safe_load(workflow.read_text())["jobs"]["skillab"]["steps"]
    # The folder that holds the skill: the next skill beside it is run too.
    assert any(s.get("with", {}).get("path") == "skills" for s in steps)
    assert main(["validate", str(skill)]) == 0
    assert main(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "--output",
                 str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    # The scaffold's trigger-only case runs as a trigger trial, beside the two A/B cases.
    assert doc["total_cases"] == 2 and doc["cases_skipped_trigger_only"] == 1
    assert [q["should_trigger"] for q in doc["triggers"]["queries"]] == [False]
    before = (skill / "eval.yaml").read_text()
    assert main(["init", str(skill)]) == 2
    assert (skill / "eval.yaml").read_text() == before


def test_diff_weighs_runs_on_one_scale(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case(n) for n in NAMES],
                       responses={n: answers("SKILLED", "plain") for n in NAMES})
    base = ["run", str(skill), "--adapter", "mock", "--no-cache", "--no-history", "--quiet"]
    assert main([*base, "--runs", "2", "--output", "two.json"]) == 0
    (skill / "mock-responses.yaml").write_text(yaml.safe_dump(
        {n: answers("SKILLED" if n in ("c0", "c1") else "plain", "plain") for n in NAMES}))
    assert main([*base, "--output", "one.json", "--allow-error-verdict"]) in (0, 1)
    capsys.readouterr()
    assert main(["diff", "two.json", "one.json", "--json"]) == 0
    suite = json.loads(capsys.readouterr().out)["suites"][0]
    assert suite["regressed"] == NAMES[2:] and suite["p_value"] == pytest.approx(2 / 2**6)


def test_diff_says_which_side_is_a_partial_run(tmp_path, capsys):
    """An interrupted run's unfinished cases would read as cases "only in" the other run."""
    import subprocess
    import sys

    from ..signals import signal_when

    skill = make_skill(tmp_path, [grep_case(n) for n in NAMES],
                       responses={n: answers("SKILLED", "plain") for n in NAMES})
    common = [str(Path(sys.executable).parent / "skillab"), "run", str(skill), "--adapter", "mock", "--no-cache",
              "--no-history", "--quiet", "--concurrency", "1", "--mock-latency-ms", "100"]
    journal = tmp_path / "partial.checkpoint.jsonl"
    code, _, _ = signal_when([*common, "--output", "partial.json"],
                             lambda: journal.exists() and len(journal.read_text().splitlines()) >= 3, cwd=tmp_path)
    assert code == 130
    subprocess.run([*common, "--output", "whole.json"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    finished = json.loads((tmp_path / "partial.json").read_text())["total_cases"]
    assert main(["diff", str(tmp_path / "partial.json"), str(tmp_path / "whole.json")]) == 0
    assert (f"skillab: A {tmp_path / 'partial.json'}: demo-skill is a partial run (interrupted: {finished} of "
            f"{len(NAMES)} cases); its missing cases are not compared") in capsys.readouterr().err


def test_diff_refuses_a_document_whose_fields_do_not_fit_naming_it(tmp_path, capsys):
    """The runs are read as typed logs: a count written as text is refused, naming the file and
    the field, under --json too (it used to be compared as if it were fine)."""
    before = run_with(tmp_path, {"c0"}, "a.json")
    doc = json.loads(before.read_text())
    doc["cases"][0]["with_skill"]["turns"] = "many"
    doc["statistics"]["n_cases"] = "eight"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["diff", str(before), str(edited), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"{edited}: not a skillab results document" in err and "n_cases" in err
