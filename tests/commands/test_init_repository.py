"""``skillab init`` in a real repository: a second skill, outside git, the ignore entries, the
workflow's cache, cap and timeout, the Action's `uses:` line and the eval.yaml schema."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from skillab.cli import main


def workflow_steps(root: Path) -> list[dict]:
    return yaml.safe_load((root / ".github" / "workflows" / "skillab.yml").read_text())["jobs"]["skillab"]["steps"]


def ours(steps: list[dict]) -> dict:
    [step] = [s for s in steps if "skillab" in str(s.get("uses", "")) and "path" in (s.get("with") or {})
              and not str(s["uses"]).startswith("actions/")]
    return step


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_a_second_skill_is_scaffolded_beside_the_first_and_the_workflow_reaches_both(repo, capsys):
    assert main(["init", str(repo / "skills" / "one")]) == 0
    assert main(["init", str(repo / "skills" / "two")]) == 0
    err = capsys.readouterr().err
    assert (repo / "skills" / "two" / "eval.yaml").is_file()
    assert "its `path:` already reaches this skill" in err
    assert ours(workflow_steps(repo))["with"]["path"] == "skills"
    assert main(["validate", str(repo / "skills" / "one"), str(repo / "skills" / "two")]) == 0


def test_outside_git_the_workflow_goes_to_the_current_directory_not_the_skill(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "skills/mine"]) == 0
    assert not (tmp_path / "skills" / "mine" / ".github").exists()
    assert (tmp_path / ".github" / "workflows" / "skillab.yml").is_file()


def test_init_ignores_what_a_run_leaves_behind_once(repo):
    (repo / ".gitignore").write_text("node_modules/")
    assert main(["init", str(repo / "skills" / "one")]) == 0
    assert main(["init", str(repo / "skills" / "two")]) == 0
    lines = (repo / ".gitignore").read_text().splitlines()
    assert lines[0] == "node_modules/"
    for entry in ("results.json", "results.checkpoint.jsonl", ".skillab/", "skillab-results/"):
        assert lines.count(entry) == 1, lines
    ignored = subprocess.run(["git", "-C", str(repo), "check-ignore", "results.json", ".skillab/cache/x"],
                             capture_output=True, text=True)
    assert ignored.stdout.split() == ["results.json", ".skillab/cache/x"]


def test_the_workflow_caches_the_baseline_caps_the_spend_and_times_out(repo):
    assert main(["init", str(repo / "skills" / "one")]) == 0
    job = yaml.safe_load((repo / ".github" / "workflows" / "skillab.yml").read_text())["jobs"]["skillab"]
    assert job["timeout-minutes"] == 30
    steps = job["steps"]
    with_ = ours(steps)["with"]
    assert with_["cache-dir"] == ".skillab/cache" and float(with_["max-cost-usd"]) > 0
    uses = [s["uses"] for s in steps]
    assert uses.index("actions/cache/restore@v4") < uses.index(ours(steps)["uses"]) < uses.index("actions/cache/save@v4")
    saved = next(s for s in steps if s["uses"] == "actions/cache/save@v4")
    assert saved["if"] == "always()" and ".skillab/cache" in saved["with"]["path"]


@pytest.mark.parametrize("ref", ["acme/skillab@v1", "acme/skillab@" + "0" * 40, "./vendor/skillab"])
def test_action_ref_is_what_the_uses_line_says(repo, ref, capsys):
    assert main(["init", str(repo / "skills" / "one"), "--action-ref", ref]) == 0
    assert ours(workflow_steps(repo))["uses"] == ref
    assert "OWNER" not in (repo / ".github" / "workflows" / "skillab.yml").read_text()
    assert "replace OWNER" not in capsys.readouterr().err


def test_without_action_ref_a_vendored_copy_is_used_else_the_placeholder_is_explained(repo, capsys):
    assert main(["init", str(repo / "a" / "one")]) == 0
    text = (repo / ".github" / "workflows" / "skillab.yml").read_text()
    assert "uses: OWNER/skillab@v1" in text and "OWNER/skillab: the GitHub repository you take" in text
    assert "replace OWNER" in capsys.readouterr().err
    other = repo / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / ".github" / "actions" / "skillab").mkdir(parents=True)
    (other / ".github" / "actions" / "skillab" / "action.yml").write_text("name: skillab\n")
    assert main(["init", str(other / "skills" / "one")]) == 0
    assert ours(workflow_steps(other))["uses"] == "./.github/actions/skillab"


def test_eval_yaml_points_editors_at_the_shipped_schema(repo):
    skill = repo / "skills" / "one"
    assert main(["init", str(skill)]) == 0
    first = (skill / "eval.yaml").read_text().splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema_file = (skill / first.split("$schema=", 1)[1]).resolve()
    schema = json.loads(schema_file.read_text())
    shipped = Path(__file__).resolve().parent.parent.parent / "runner/skillab/formats/eval_yaml/schemas/eval-yaml.schema.json"
    assert schema == json.loads(shipped.read_text())
    jsonschema.validate(yaml.safe_load((skill / "eval.yaml").read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"cases": [{"name": "x", "prompt": "p", "validators": "nope"}]}, schema)


def test_the_docs_document_every_eval_yaml_key_of_the_shipped_schema():
    root = Path(__file__).resolve().parent.parent.parent
    schema = json.loads((root / "runner/skillab/formats/eval_yaml/schemas/eval-yaml.schema.json").read_text())
    readme = (root / "docs" / "suite-formats.md").read_text().split("## `eval.yaml`", 1)[1].split("\n## ", 1)[0]
    keys = ["cases", *(f"cases[].{k}" for k in schema["$defs"]["case"]["properties"]),
            *(f"cases[].validators[].{k}" for k in schema["$defs"]["validator"]["properties"])]
    for key in keys:
        assert f"| `{key}` |" in readme, key
