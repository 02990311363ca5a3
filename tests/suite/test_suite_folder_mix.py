"""One bad suite file never blocks a good one beside it: a folder whose task_suite.yaml is in
another tool's dialect still runs its valid evals/evals.json, and says which file it skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.suite import load_suite

SKILL_MD = "---\nname: demo\ndescription: A demo skill.\n---\nAnswer with HELLO.\n"
# Another tool's task_suite.yaml (scenarios, not tasks): dozens of schema problems for skillab.
FOREIGN = "suite: other-tool\nscenarios:\n" + "".join(f"  - id: s{i}\n    input: hi {i}\n" for i in range(40))
EVALS = {"skill_name": "demo", "evals": [
    {"id": 1, "prompt": "greet", "assertions": [{"type": "contains", "value": "HELLO"}]}]}


def folder(root: Path, evals: object = EVALS) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "task_suite.yaml").write_text(FOREIGN)
    (root / "evals" / "evals.json").write_text(json.dumps(evals))
    (root / "mock-responses.yaml").write_text(
        "eval-1:\n  with: HELLO\n  without: hi\n")
    return root


def test_the_good_suite_runs_and_the_bad_file_is_named_in_one_warning(tmp_path, capsys):
    root = folder(tmp_path / "demo")
    suite = load_suite(root)
    assert suite.format == "evals.json" and [c.name for c in suite.cases] == ["eval-1"]
    (warning,) = [w for w in suite.warnings if "task_suite.yaml" in w]
    assert "not loaded" in warning and "more problems" in warning and "evals.json beside it" in warning
    assert main(["validate", str(root)]) == 0
    out = capsys.readouterr()
    assert "ok: " in out.out and out.err.count("task_suite.yaml") == 1  # one line
    assert main(["run", str(root), "--adapter", "mock", "--no-history", "--quiet",
                 "--output", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["total_cases"] == 1 and doc["cases"][0]["outcome"] == "flip_to_pass"
    assert any("task_suite.yaml:1: not loaded" in w for w in doc["warnings"])


def test_when_no_file_loads_the_first_files_problems_are_reported(tmp_path):
    root = folder(tmp_path / "demo", evals={"evals": []})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert {issue.path.name for issue in caught.value.issues} == {"task_suite.yaml"}


def test_a_second_valid_suite_beside_the_one_that_runs_is_named_not_dropped(tmp_path):
    root = tmp_path / "demo"
    (root / "evals" / "greets").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "evals" / "evals.json").write_text(json.dumps(EVALS))
    (root / "evals" / "greets" / "case.yaml").write_text(
        'schema_version: "1.0"\nname: greets\nexecution: {prompt: greet}\n'
        "graders: [{type: regex, name: hello, pattern: HELLO}]\n")
    suite = load_suite(root)
    assert suite.format == "evals.json"
    (warning,) = [w for w in suite.warnings if "case.yaml" in w]
    assert "claude-plugin-eval suite beside evals.json, not run here" in warning
    assert load_suite(root / "evals" / "greets").format == "claude-plugin-eval"


def test_a_ruby_skill_bench_evals_task_md_is_not_taken_for_a_second_suite(tmp_path):
    from ..formats.test_ruby_bench import make_eval

    suite = load_suite(make_eval(tmp_path))
    assert suite.format == "ruby-skill-bench"
    assert not any("not run here" in w for w in suite.warnings)


def test_a_tessl_scenarios_task_md_is_not_taken_for_a_second_suite(tmp_path):
    from ..formats.test_format_sniffing import tessl_tile

    suite = load_suite(tessl_tile(tmp_path / "tile"))
    assert suite.format == "tessl"
    assert not any("not run here" in w for w in suite.warnings)
