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


def test_failed_reruns_only_what_failed_or_errored_last_time(tmp_path, capsys):
    target = str(skill(tmp_path))
    assert ran(tmp_path, target)[1] == ["alpha-one", "alpha-two", "beta", "gamma"]
    code, names = ran(tmp_path, target, "--failed")
    assert names == ["alpha-two", "gamma"]  # fail_kept and flip_to_fail


def test_failed_without_a_last_run_runs_everything(tmp_path):
    assert ran(tmp_path, str(skill(tmp_path)), "--failed")[1] == ["alpha-one", "alpha-two", "beta", "gamma"]


def test_failed_is_per_suite_and_skips_a_suite_that_passed(tmp_path, capsys):
    bad = skill(tmp_path / "a", "bad-skill")
    good = make_skill(tmp_path / "b", [grep_case("fine")], name="good-skill",
                      responses={"fine": answers("SKILLED", "no")})
    ran(tmp_path, str(bad), str(good))
    code, names = ran(tmp_path, str(bad), str(good), "--failed")
    assert names == ["alpha-two", "gamma"]
    assert f"skipping {good}: no case failed in the last run" in capsys.readouterr().err
