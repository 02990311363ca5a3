"""``skillab run`` end to end with the mock adapter: real workspaces, real validators."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from skillab.cli import main

from .skillgen import answers, grep_case, make_skill

SPEC_SCHEMAS = files("skillevaluation") / "schemas"


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def run(args: list[str], cache_dir: Path, capsys) -> tuple[int, str, str]:
    code = main(["run", *args, "--cache-dir", str(cache_dir), "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def four_case_skill(tmp_path: Path) -> Path:
    return make_skill(
        tmp_path,
        [grep_case("rescued"), grep_case("kept"), grep_case("broken"), grep_case("hopeless")],
        responses={
            "rescued": answers("SKILLED answer", "plain answer"),
            "kept": answers("SKILLED answer", "SKILLED too"),
            "broken": answers("plain answer", "SKILLED answer"),
            "hopeless": answers("plain", "plain"),
        },
    )


def test_run_classifies_every_outcome_and_reports_the_delta(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    out_path = tmp_path / "results.json"
    code, out, err = run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)
    assert code == 0, err
    doc = json.loads(out_path.read_text())
    outcomes = {c["case_name"]: c["outcome"] for c in doc["cases"]}
    assert outcomes == {
        "rescued": "flip_to_pass",
        "kept": "pass_kept",
        "broken": "flip_to_fail",
        "hopeless": "fail_kept",
    }
    assert doc["pass_rate"] == {"with_skill": 0.5, "without_skill": 0.5, "delta_pts": 0.0}
    assert doc["verdict"] == "mixed"
    assert doc["statistics"]["flip_to_pass"] == 1 and doc["statistics"]["flip_to_fail"] == 1
    assert "rescued" in out and "flip_to_fail" in out


def test_results_document_validates_against_the_spec_schemas(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    out_path = tmp_path / "r.json"
    assert run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)[0] == 0
    doc = json.loads(out_path.read_text())
    run_schema = json.loads((SPEC_SCHEMAS / "test-run-result.schema.json").read_text())
    case_schema = json.loads((SPEC_SCHEMAS / "test-case-result.schema.json").read_text())
    jsonschema.validate(doc, run_schema)
    for record in doc["cases"]:
        jsonschema.validate(record, case_schema)
    assert doc["format"] == "skillab.results/1"
    assert doc["isolation"]["backend"] in ("bwrap", "none")


def test_gates_fail_the_run_with_exit_1(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    out = str(tmp_path / "r.json")
    code, _, err = run([str(skill), "--adapter", "mock", "--output", out, "--fail-on-verdict", "mixed"],
                       cache_dir, capsys)
    assert code == 1 and "verdict is mixed" in err
    code, _, err = run([str(skill), "--adapter", "mock", "--output", out, "--min-delta-pts", "5"],
                       cache_dir, capsys)
    assert code == 1 and "below the minimum" in err
    assert "gate note:" in err and "a skill with no effect passes it about" in err
    code, _, _ = run([str(skill), "--adapter", "mock", "--output", out, "--min-delta-pts", "0"],
                     cache_dir, capsys)
    assert code == 0


def test_no_model_and_no_mock_says_how_to_start(tmp_path, cache_dir, capsys, monkeypatch):
    monkeypatch.delenv("SKILLAB_MODEL", raising=False)
    skill = four_case_skill(tmp_path)
    code, _, err = run([str(skill)], cache_dir, capsys)
    assert code == 2
    assert "--adapter mock" in err and "--model" in err


def test_baseline_cache_serves_repeat_runs_and_follows_the_graders(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    out_path = tmp_path / "r.json"
    args = [str(skill), "--adapter", "mock", "--output", str(out_path)]
    run(args, cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["hits"] == 0

    run(args, cache_dir, capsys)
    doc = json.loads(out_path.read_text())
    assert doc["cache"] == {"enabled": True, "hits": 4, "arms": 4}
    assert all(c["without_skill"]["cached"] for c in doc["cases"])

    # Editing the skill's instructions keeps the baseline: it does not depend on them.
    (skill / "SKILL.md").write_text("---\nname: demo-skill\ndescription: d\n---\nNew body.\n")
    run(args, cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["hits"] == 4

    # Changing what the validators check changes the baseline's grade: no reuse.
    text = (skill / "eval.yaml").read_text().replace("grep -q SKILLED", "grep -qi skilled")
    (skill / "eval.yaml").write_text(text)
    run(args, cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["hits"] == 0


def test_corrupt_and_expired_cache_entries_are_misses(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    out_path = tmp_path / "r.json"
    args = [str(skill), "--adapter", "mock", "--output", str(out_path)]
    run(args, cache_dir, capsys)
    entries = sorted(cache_dir.rglob("*.json"))
    assert len(entries) == 4
    entries[0].write_text("{not json")
    run(args, cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["hits"] == 3
    json.loads(entries[0].read_text())  # rewritten whole

    run([*args, "--cache-ttl-days", "0"], cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["hits"] == 0
    run([*args, "--no-cache"], cache_dir, capsys)
    assert json.loads(out_path.read_text())["cache"]["enabled"] is False


def test_setup_failure_is_an_error_not_a_fail(tmp_path, cache_dir, capsys):
    skill = make_skill(
        tmp_path,
        [
            grep_case("bad_setup", setup=["exit 3"]),
            grep_case("fine"),
        ],
        responses={"fine": answers("SKILLED", "no")},
    )
    out_path = tmp_path / "r.json"
    code, _, err = run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)
    doc = json.loads(out_path.read_text())
    outcomes = {c["case_name"]: c["outcome"] for c in doc["cases"]}
    assert outcomes == {"bad_setup": "error", "fine": "flip_to_pass"}
    bad = next(c for c in doc["cases"] if c["case_name"] == "bad_setup")
    assert "setup failed" in bad["with_skill"]["error"]
    # 1 of 2 errored: more than 25%, so the lift is withheld and the verdict is error.
    assert doc["error_dominated"] is True and doc["pass_rate"]["delta_pts"] is None
    assert doc["verdict"] == "error"
    # Nothing measured is a failure by default; the user can opt out.
    assert code == 1 and "verdict is error" in err
    code, _, _ = run([str(skill), "--adapter", "mock", "--output", str(out_path),
                      "--allow-error-verdict"], cache_dir, capsys)
    assert code == 0


def test_runs_repeat_every_case_and_keep_suite_order(tmp_path, cache_dir, capsys):
    cases = [grep_case(f"c{i}") for i in range(6)]
    skill = make_skill(tmp_path, cases, responses={f"c{i}": answers("SKILLED", "x") for i in range(6)})
    out_path = tmp_path / "r.json"
    code, _, err = run([str(skill), "--adapter", "mock", "--output", str(out_path), "--runs", "3",
                        "--concurrency", "8", "--mock-latency-ms", "20"], cache_dir, capsys)
    assert code == 0, err
    doc = json.loads(out_path.read_text())
    assert doc["runs"] == 3 and doc["total_cases"] == 18
    order = [(c["case_name"], c["run_index"]) for c in doc["cases"]]
    assert order == [(f"c{i}", r) for i in range(6) for r in range(3)]


def test_case_and_tag_selection(tmp_path, cache_dir, capsys):
    skill = make_skill(
        tmp_path,
        [grep_case("a", tags=["x"]), grep_case("b", tags=["y"]), grep_case("c", tags=["x"])],
        responses={},
    )
    out_path = tmp_path / "r.json"
    run([str(skill), "--adapter", "mock", "--output", str(out_path), "--tag", "x"], cache_dir, capsys)
    assert [c["case_name"] for c in json.loads(out_path.read_text())["cases"]] == ["a", "c"]
    code, _, err = run([str(skill), "--adapter", "mock", "--output", str(out_path), "--case", "zzz"],
                       cache_dir, capsys)
    assert code == 2 and "zzz" in err


def test_trigger_only_cases_run_as_trigger_trials_beside_the_ab_cases(tmp_path, cache_dir, capsys):
    skill = make_skill(
        tmp_path,
        [grep_case("graded"), {"name": "routing", "prompt": "p", "should_trigger": True}],
        responses={"graded": answers("SKILLED", "no"), "routing": {"loads": True}},
    )
    out_path = tmp_path / "r.json"
    _, out, _ = run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)
    doc = json.loads(out_path.read_text())
    assert doc["total_cases"] == 1 and doc["cases_skipped_trigger_only"] == 1
    assert doc["trigger_only_cases"] == ["routing"]
    assert "1 trigger-only" in out
    assert [(q["name"], q["rate"]) for q in doc["triggers"]["queries"]] == [("routing", 1.0)]
    assert "routing" in out[out.index("trigger set"):]


def test_reports_json_junit_markdown_and_trajectories(tmp_path, cache_dir, capsys):
    skill = four_case_skill(tmp_path)
    junit, traj = tmp_path / "j.xml", tmp_path / "traj"
    code, out, _ = run([str(skill), "--adapter", "mock", "--output", str(tmp_path / "r.json"),
                        "--json", "--junit", str(junit), "--trajectories", str(traj)], cache_dir, capsys)
    assert code == 0
    assert json.loads(out)["format"] == "skillab.results/1"
    xml = junit.read_text()
    assert xml.count("<testcase") == 4 and xml.count("<failure") == 2
    transcript = (traj / "demo-skill" / "rescued.run1.with_skill.txt").read_text()
    assert transcript.startswith("[Step 1] User: Say something for rescued.")
    assert "SKILLED answer" in transcript


def test_bundled_files_reach_validators_in_both_arms(tmp_path, cache_dir, capsys):
    skill = make_skill(
        tmp_path,
        [{"name": "graded_by_script", "prompt": "p",
          "validators": [{"cmd": "python3 scripts/grade.py response.txt"}]}],
        responses={"graded_by_script": answers("good", "good")},
        files={"scripts/grade.py": "import sys\nsys.exit(0 if 'good' in open(sys.argv[1]).read() else 1)\n"},
    )
    out_path = tmp_path / "r.json"
    run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)
    assert json.loads(out_path.read_text())["cases"][0]["outcome"] == "pass_kept"


def test_secrets_in_the_environment_never_reach_results(tmp_path, cache_dir, capsys, monkeypatch):
    secret = "sk-ant-api03-" + "Z" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "Q" * 36)
    skill = make_skill(
        tmp_path,
        [{"name": "env_dump", "prompt": "p",
          "validators": [{"cmd": "env; cat /proc/self/environ; exit 1"}]}],
        responses={"env_dump": answers(f"the key is {secret}", "none")},
    )
    out_path = tmp_path / "r.json"
    run([str(skill), "--adapter", "mock", "--output", str(out_path)], cache_dir, capsys)
    text = out_path.read_text()
    assert secret not in text and "Q" * 36 not in text
    assert json.loads(text)["cases"][0]["with_skill"]["validator_results"][0]["stdout"]


def test_a_key_the_agent_echoes_is_masked_wherever_it_travels(tmp_path, cache_dir, capsys, monkeypatch):
    secret = "sk-ant-api03-" + "E" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    skill = make_skill(
        tmp_path,
        [{"name": "echo", "prompt": "p",
          "validators": [{"cmd": "cat response.txt; cat response.txt >&2; exit 1"}],
          "expectations": ["The answer mentions \"key\"."]}],
        responses={"echo": answers(f"my key is {secret}", f"key {secret}")},
    )
    out_path = tmp_path / "r.json"
    run([str(skill), "--adapter", "mock", "--output", str(out_path), "--no-history",
         "--junit", str(tmp_path / "j.xml"), "--markdown", str(tmp_path / "r.md")], cache_dir, capsys)
    for produced in (out_path, tmp_path / "j.xml", tmp_path / "r.md"):
        assert secret not in produced.read_text(), produced
    validator = json.loads(out_path.read_text())["cases"][0]["with_skill"]["validator_results"][0]
    assert "[REDACTED]" in validator["stdout"] and "[REDACTED]" in validator["stderr"]
