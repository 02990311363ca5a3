"""Formats told apart by what their files hold: Tessl scenarios beside ruby-skill-bench evals,
and one clear line for eval.yaml dialects skillab does not import (waza, Vally, dotnet/skills) and
for skill-eval-action's evals/*.yaml. Each sample follows its format's published docs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.errors import SuiteError
from skillab.formats.evals_json.specs import ChecklistGrader
from skillab.formats.ruby_bench.specs import DimensionGrader
from skillab.suite import load_suite

SKILL_MD = "---\nname: {name}\ndescription: d.\n---\nFollow the house rules.\n"
TESSL_CRITERIA = {
    "context": "Tests whether the agent writes a deployment plan with a rollback step.",
    "type": "weighted_checklist",
    "checklist": [
        {"name": "mentions deployment", "description": "The plan mentions 'deploy'", "max_score": 40},
        {"name": "considers rollback", "description": "The plan mentions 'rollback'", "max_score": 35,
         "category": "INTENT"},
        {"name": "names the service", "description": "The plan names 'orders-api'", "max_score": 25},
    ],
}


def tessl_tile(root: Path, criteria: dict = TESSL_CRITERIA, scenario_json: dict | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="deploy-plans"))
    (root / "tile.json").write_text('{"name": "acme/deploy-plans"}')
    scenario = root / "evals" / "scenario-1"
    (scenario / "inputs").mkdir(parents=True)
    (scenario / "task.md").write_text("Write deploy-plan.md for the orders-api rollout.\n")
    (scenario / "criteria.json").write_text(json.dumps(criteria, indent=2))
    (scenario / "inputs" / "service.txt").write_text("orders-api v2\n")
    if scenario_json is not None:
        (scenario / "scenario.json").write_text(json.dumps(scenario_json))
    return scenario


def test_a_tessl_scenario_is_told_from_ruby_skill_bench_and_imported(tmp_path):
    scenario = tessl_tile(tmp_path / "tile")
    suite = load_suite(scenario)
    assert suite.format == "tessl" and suite.skill_dir == tmp_path / "tile"
    (case,) = suite.cases
    (grader,) = case.graders
    assert isinstance(grader, ChecklistGrader) and grader.total == 100 and grader.pass_threshold == 70
    assert [i.weight for i in grader.items] == [40, 35, 25]
    assert {t for _, t in case.seed.files} == {"inputs/service.txt"}


def test_the_scenario_capability_label_is_not_staged(tmp_path):
    # igmarin/rails-agent-skills and nicholasjackson/tessl-tile-opa-rego-language scenarios carry
    # capability.txt / capability.text: which instruction of the skill the scenario tests.
    scenario = tessl_tile(tmp_path / "tile")
    (scenario / "capability.txt").write_text("rollback-before-deploy\n")
    (scenario / "capability.text").write_text("rollback-before-deploy\n")
    (case,) = load_suite(scenario).cases
    assert {t for _, t in case.seed.files} == {"inputs/service.txt"}


def test_the_scenario_threshold_comes_from_scenario_json(tmp_path):
    scenario = tessl_tile(tmp_path / "tile", scenario_json={"threshold": 0.6})
    (case,) = load_suite(scenario).cases
    assert case.graders[0].pass_threshold == 60


def test_a_tessl_scenario_runs_each_item_judged_and_the_weighted_score_against_the_threshold(tmp_path):
    scenario = tessl_tile(tmp_path / "tile")
    responses = tmp_path / "mock.yaml"
    responses.write_text(yaml.safe_dump({"scenario-1": {
        "with": "We deploy orders-api v2 with a canary, and rollback by pinning v1.",
        "without": "We deploy the new version.",
    }}))
    out = tmp_path / "results.json"
    code = main(["run", str(scenario), "--adapter", "mock", "--mock-responses", str(responses), "--output", str(out),
                 "--no-cache", "--no-history", "--quiet"])
    (record,) = json.loads(out.read_text())["cases"]
    with_grade = record["with_skill"]["extra"]["graders"][0]
    without_grade = record["without_skill"]["extra"]["graders"][0]
    assert with_grade["score"] == 100 and without_grade["score"] == 40
    assert [d["score"] for d in without_grade["dimensions"]] == [40, 0, 0]
    assert record["outcome"] == "flip_to_pass" and code == 0


def test_a_ruby_skill_bench_eval_still_loads_and_reads_metadata_target_name(tmp_path):
    criteria = {"context": "c", "dimensions": [
        {"name": n, "max_score": 20} for n in
        ("correctness", "skill_adherence", "code_quality", "test_coverage", "documentation")]}
    eval_dir = tmp_path / "evals" / "skills" / "anything" / "case-1"
    eval_dir.mkdir(parents=True)
    (eval_dir / "task.md").write_text("Refactor it.\n")
    (eval_dir / "criteria.json").write_text(json.dumps(criteria))
    (eval_dir / "metadata.json").write_text('{"target_name": "service-object"}')
    for name in ("service-object", "other"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
    suite = load_suite(eval_dir)
    assert suite.format == "ruby-skill-bench" and isinstance(suite.cases[0].graders[0], DimensionGrader)
    assert suite.skill_dir == tmp_path / "skills" / "service-object"
    assert not any(t == "metadata.json" for _, t in suite.cases[0].seed.files)


FOREIGN = {
    "waza": ({"name": "deploy-eval", "skill": "azure-deploy", "config": {"trials_per_task": 3},
              "graders": [{"type": "code", "name": "ok", "config": {"assertions": ["len(output) > 0"]}}],
              "tasks": ["tasks/*.yaml"]}, "a waza eval spec"),
    "vally": ({"config": {"runs": 1}, "stimuli": [{"name": "hello", "prompt": "Say hello", "graders": [
               {"type": "output-contains", "config": {"substring": "hello"}}]}]}, "a Vally eval spec"),
    "dotnet-skills": ({"scenarios": [{"name": "s", "prompt": "p", "assertions": [{"type": "output_contains",
                                                                                  "value": "x"}]}]},
                      "dotnet/skills"),
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_an_eval_yaml_of_another_tool_gets_one_line_naming_it(tmp_path, capsys, name):
    spec, what = FOREIGN[name]
    root = tmp_path / "skill"
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL_MD.format(name="skill"))
    (root / "eval.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    (issue,) = caught.value.issues
    assert what in issue.message and "does not import" in issue.message
    assert main(["validate", str(root)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_skill_eval_action_cases_get_one_line_naming_the_format(tmp_path, capsys):
    root = tmp_path / "skills" / "tf-guide"
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.format(name="tf-guide"))
    (root / "evals" / "001-basic.yaml").write_text(yaml.safe_dump({
        "name": "Basic usage", "prompt": "Write a resource block",
        "criteria": ["Output contains a valid resource block"], "expect_skill": True}))
    with pytest.raises(SuiteError, match="skill-eval-action case"):
        load_suite(root)
    # The folder walk finds it too, so the refusal is reported rather than the skill skipped.
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "skill-eval-action" in err and err.count("\n") == 1


def test_format_tessl_forces_the_format_and_a_tile_with_several_skills_gives_them_all(tmp_path):
    from skillab.skill import load_skill

    scenario = tessl_tile(tmp_path / "tile")
    (tmp_path / "tile" / "SKILL.md").unlink()
    for name in ("plans", "rollbacks"):
        (tmp_path / "tile" / "skills" / name).mkdir(parents=True)
        (tmp_path / "tile" / "skills" / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
    suite = load_suite(scenario, format="tessl")
    assert suite.format == "tessl" and suite.skill_dir == tmp_path / "tile" / "skills"
    assert {"plans/SKILL.md", "rollbacks/SKILL.md"} <= set(load_skill(suite.skill_dir).bundled)


def tile_with_manifest(root: Path, manifest: dict) -> Path:
    """A tile laid out as igmarin/rails-agent-skills and nicholasjackson/tessl-tile-opa-rego-language
    publish theirs: no SKILL.md at the root, tile.json saying what the tile ships."""
    scenario = tessl_tile(root)
    (root / "SKILL.md").unlink()
    (root / "tile.json").write_text(json.dumps(manifest, indent=2))
    return scenario


def test_a_tile_whose_tile_json_declares_its_skills_gives_them_all(tmp_path):
    from skillab.skill import load_skill

    tile = tmp_path / "tile"
    scenario = tile_with_manifest(tile, {"name": "acme/rails", "version": "3.1.4", "docs": "docs/index.md",
                                         "skills": {n: {"path": f"{n}/SKILL.md"} for n in ("plans", "rollbacks")}})
    for name in ("plans", "rollbacks"):
        (tile / name).mkdir()
        (tile / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
    suite = load_suite(scenario)
    assert suite.format == "tessl" and suite.skill_dir == tile
    skill = load_skill(suite.skill_dir)
    assert skill.index is not None and set(skill.bundled) == {"plans/SKILL.md", "rollbacks/SKILL.md"}
    # One declared skill is that skill.
    (tile / "tile.json").write_text(json.dumps({"name": "acme/rails", "skills": {"plans": {"path": "plans/SKILL.md"}}}))
    assert load_suite(scenario).skill_dir == tile / "plans"


def test_a_tile_that_ships_no_skill_or_names_a_missing_one_says_so(tmp_path):
    tile = tmp_path / "tile"
    scenario = tile_with_manifest(tile, {"name": "acme/rego", "docs": "docs/index.md",
                                         "steering": {"rego": {"rules": "rules.md"}}})
    with pytest.raises(SuiteError) as raised:
        load_suite(scenario)
    assert str(raised.value.issues[0]) == (
        f"{scenario}: the tile's {tile / 'tile.json'} declares no skills (it ships docs and steering only) — "
        "skillab evaluates a skill, so this scenario has nothing to give the with-skill arm")
    (tile / "tile.json").write_text('{\n  "name": "acme/rails",\n  "skills": {\n    "plans": {"path": "plans/SKILL.md"}\n  }\n}\n')
    with pytest.raises(SuiteError) as raised:
        load_suite(scenario)
    assert str(raised.value.issues[0]).startswith(f"{tile / 'tile.json'}:4")
    assert "skill 'plans': 'path' must name a SKILL.md inside the tile, got 'plans/SKILL.md'" in str(raised.value)


def test_a_promptfoo_config_and_a_repository_root_get_one_line_naming_the_tool(tmp_path, capsys):
    config = tmp_path / "pf" / "promptfooconfig.yaml"
    config.parent.mkdir()
    config.write_text("prompts: ['{{q}}']\nproviders: [openai:gpt-4o]\ntests:\n  - vars: {q: hi}\n")
    vally = tmp_path / "repo" / "tests" / "csharp-scripts" / "eval.yaml"
    vally.parent.mkdir(parents=True)
    vally.write_text("name: csharp\nstimuli:\n  - prompt: hi\n")
    for target, tool in ((config, "promptfoo eval"), (config.parent, "promptfoo eval"),
                         (tmp_path / "repo", "vally eval")):
        assert main(["validate", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and tool in err and "rename" not in err and "no eval.yaml" not in err
    assert "2 levels below" in (main(["validate", str(tmp_path / "repo")]), capsys.readouterr().err)[1]
