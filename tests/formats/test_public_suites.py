"""Suites shaped like real public ones (tests/public_suites/README.md names each source, its
commit and licence), each run with `validate` and `run --adapter mock`: faithful (the graders the
source defines ran in both arms, and the baseline was clean) or refused in one clear line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillab.cli import main

SUITES = Path(__file__).resolve().parent.parent / "public_suites"
# folder -> ("faithful", the grader kinds every arm must show) or ("refused", words of the one line)
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "evals-json-scorers": ("faithful", ("validator", "checklist")),
    "evals-json-test-cases": ("faithful", ("checklist",)),
    "evals-json-fixture-folders": ("faithful", ("checklist",)),
    "evals-json-assertion-objects": ("faithful", ("checklist",)),
    "evals-json-expected-output": ("faithful", ("checklist",)),
    "evals-json-fixture-scripts": ("faithful", ("validator",)),
    "evals-json-must-have": ("faithful", ("validator",)),
    "evals-json-typed-assertions": ("faithful", ("checklist",)),
    "evals-json-named-assertions": ("faithful", ("checklist",)),
    "evals-json-expect-fail": ("refused", ("evals/evals.json:1", "is a JSON array")),
    "claude-plugin-eval-prompt-md": ("faithful", ("plugin-eval",)),
    "claude-plugin-eval-case-yaml": ("faithful", ("plugin-eval",)),
    "skillgrade-graders-script": ("faithful", ("verifier",)),
    "skillgrade-superlint": ("refused", ("/usr/local/bin/superlint", "outside the workspace", "skillgrade")),
    "skillgrade-inline-run": ("faithful", ("verifier",)),
    "skillgrade-detected-skills": ("faithful", ("verifier",)),
    "skillgrade-tool-usage": ("refused", ("trialConfig", "tool_usage", "activate_skill", "`skillgrade`")),
    "agent-eval-harness-eval-yaml": ("refused", ("Agent Eval Harness", "agent-eval-harness")),
    "dotnet-skills-scenarios": ("refused", ("skill-validator", "'scenarios'")),
    "vally-eval-yaml": ("refused", ("Vally", "vally eval")),
    "vally-dot-vally-yaml": ("refused", ("Vally", "vally eval")),
    "waza-eval-yaml": ("refused", ("waza", "waza run")),
}


def test_every_public_suite_folder_is_in_the_table():
    assert sorted(p.name for p in SUITES.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_public_suite_runs_faithfully_or_is_refused_in_one_line(name, tmp_path, capsys, monkeypatch):
    verdict, expected = EXPECTED[name]
    suite = tmp_path / name
    shutil.copytree(SUITES / name, suite)
    monkeypatch.chdir(suite)
    code = main(["validate", "."])
    err = capsys.readouterr().err
    out_path = tmp_path / "r.json"
    run_code = main(["run", ".", "--adapter", "mock", "--no-history", "--no-cache", "--quiet",
                     "--output", str(out_path)])
    run_err = capsys.readouterr().err
    if verdict == "refused":
        if code == 2:  # the whole suite is another tool's: one line, in validate and in run alike
            (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
            assert all(word in line for word in expected) and run_code == 2 and line[7:] in run_err
            return
        doc = json.loads(out_path.read_text())
        reasons = {c["with_skill"]["error"] for c in doc["cases"]} | {c["without_skill"]["error"] for c in doc["cases"]}
        (reason,) = reasons
        assert all(word in reason for word in expected)
        return
    assert code == 0 and run_code in (0, 1)
    doc = json.loads(out_path.read_text())
    assert doc["cases"] and doc["contaminated_arms"] == 0
    for record in doc["cases"]:
        for arm in ("with_skill", "without_skill"):
            result = record[arm]
            assert not result["errored"], (record["case_name"], arm, result["error"])
            kinds = {g["kind"] for g in (result.get("extra") or {}).get("graders", [])}
            kinds |= {"validator"} if result["validator_results"] else set()
            assert kinds & set(expected), (record["case_name"], arm, kinds)
