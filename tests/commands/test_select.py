"""``-k EXPR`` and ``--failed``: pytest's case selection, per suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main

from ..skillgen import answers, grep_case, make_skill

RESPONSES = {"alpha-one": answers("SKILLED", "no"), "alpha-two": answers("no", "no"),
             "beta": answers("SKILLED", "SKILLED"), "gamma": answers("no", "SKILLED")}


def skill(root: Path, name: str = "demo-skill") -> Path:
    return make_skill(root, [grep_case("alpha-one", tags=["api"]), grep_case("alpha-two"),
                             grep_case("beta", tags=["docs"]), grep_case("gamma")],
                      name=name, responses=RESPONSES)


def ran(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    out = tmp_path / "results.json"
    code = main(["run", *args, "--adapter", "mock", "--no-history", "--quiet", "--output", str(out)])
    docs = json.loads(out.read_text()) if out.exists() else None
    if docs is None:
        return code, []
    docs = docs["suites"] if "suites" in docs else [docs]
    return code, sorted(c["case_name"] for d in docs for c in d["cases"])


@pytest.mark.parametrize(("expression", "expected"), [
    ("alpha", ["alpha-one", "alpha-two"]),
    ("alpha and not two", ["alpha-one"]),
    ("alpha and not two or docs", ["alpha-one", "beta"]),
    ("not (alpha or beta)", ["gamma"]),
    ("*-one", ["alpha-one"]),
    ("API", ["alpha-one"]),  # a tag, case-insensitive
])
def test_k_selects_by_substring_glob_tag_and_boolean_words(tmp_path, expression, expected):
    code, names = ran(tmp_path, str(skill(tmp_path)), "-k", expression)
    assert names == expected


@pytest.mark.parametrize("expression", ["alpha and", "(alpha", "or beta", "alpha beta"])
def test_a_malformed_k_expression_is_a_usage_error(tmp_path, expression, capsys):
    code, _ = ran(tmp_path, str(skill(tmp_path)), "-k", expression)
    assert code == 2 and "-k" in capsys.readouterr().err


def test_k_that_matches_nothing_exits_2_before_running(tmp_path, capsys):
    code, names = ran(tmp_path, str(skill(tmp_path)), "-k", "nothing-like-this")
    assert code == 2 and names == []
    assert "no case matches -k 'nothing-like-this'" in capsys.readouterr().err


def rerun_note(tmp_path: Path) -> list[str]:
    doc = json.loads((tmp_path / "results.json").read_text())
    docs = doc["suites"] if "suites" in doc else [doc]
    return [w for d in docs for w in d["warnings"] if w.startswith("--failed:")]


def test_failed_reruns_only_what_failed_or_errored_last_time(tmp_path, capsys):
    target = str(skill(tmp_path))
    assert ran(tmp_path, target)[1] == ["alpha-one", "alpha-two", "beta", "gamma"]
    code, names = ran(tmp_path, target, "--failed")
    # fail_kept and flip_to_fail rerun; the document keeps the other two from the last run.
    assert names == ["alpha-one", "alpha-two", "beta", "gamma"]
    [note] = rerun_note(tmp_path)
    assert note.startswith("--failed: 2 case(s) rerun now; 2 kept from the run that started")


def test_a_second_failed_reruns_what_still_fails(tmp_path):
    target = skill(tmp_path)
    ran(tmp_path, str(target))
    ran(tmp_path, str(target), "--failed")
    assert ran(tmp_path, str(target), "--failed")[1] == ["alpha-one", "alpha-two", "beta", "gamma"]
    assert rerun_note(tmp_path)[0].startswith("--failed: 2 case(s) rerun now")
    # Fixed: the skill now makes gamma's answer pass, so the next --failed reruns alpha-two only.
    (target / "mock-responses.yaml").write_text(
        "alpha-one: {with: SKILLED, without: 'no'}\nalpha-two: {with: 'no', without: 'no'}\n"
        "beta: {with: SKILLED, without: SKILLED}\ngamma: {with: SKILLED, without: SKILLED}\n")
    ran(tmp_path, str(target), "--failed")
    ran(tmp_path, str(target), "--failed")
    assert rerun_note(tmp_path)[0].startswith("--failed: 1 case(s) rerun now; 3 kept")


def test_failed_without_a_last_run_says_so_instead_of_running_everything(tmp_path, capsys):
    assert ran(tmp_path, str(skill(tmp_path)), "--failed") == (2, [])
    assert "--failed: no earlier run at" in capsys.readouterr().err


def test_failed_is_per_suite_and_skips_a_suite_that_passed(tmp_path, capsys):
    bad = skill(tmp_path / "a", "bad-skill")
    good = make_skill(tmp_path / "b", [grep_case("fine")], name="good-skill",
                      responses={"fine": answers("SKILLED", "no")})
    ran(tmp_path, str(bad), str(good))
    code, names = ran(tmp_path, str(bad), str(good), "--failed")
    assert names == ["alpha-one", "alpha-two", "beta", "fine", "gamma"]  # the good suite is kept
    assert rerun_note(tmp_path) == ["--failed: 2 case(s) rerun now; 2 kept from the run that started "
                                    + rerun_note(tmp_path)[0].rsplit("started ", 1)[1]]
    assert f"skipping {good}: no case failed in the last run" in capsys.readouterr().err


def test_collect_only_lists_the_selection_and_runs_nothing(tmp_path, capsys):
    code = main(["run", str(skill(tmp_path)), "-k", "alpha", "--collect-only", "--adapter", "mock",
                 "--output", str(tmp_path / "results.json")])
    out = capsys.readouterr().out
    assert code == 0 and not (tmp_path / "results.json").exists()
    assert "  alpha-one\n  alpha-two\n" in out and "beta" not in out
    assert "2 cases in 1 suite selected; none run" in out


def test_a_folder_run_ends_with_a_summary_line(tmp_path, capsys):
    skill(tmp_path / "skills", "one-skill")
    make_skill(tmp_path / "skills", [grep_case("fine")], name="two-skill", responses={"fine": answers("SKILLED", "no")})
    ran(tmp_path, str(tmp_path / "skills"))
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("== 2 suites: 1 mixed, 1 pass · 5 cases · ") and last.endswith("s ==")
