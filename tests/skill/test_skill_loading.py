"""SKILL.md read as the reference runner reads it, under the suite parser's bounds, and staging
that gives an agent the skill's own files and never the evaluation's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.errors import SkillError
from skillab.skill import load_skill

REFERENCE_EXAMPLES = Path(__import__("skillevaluation").__file__).parent / "examples"
ALIAS_BOMB = (
    "---\nname: bomb\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "description: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n---\nbody\n"
)


def skill(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "my-skill"
    root.mkdir(exist_ok=True)
    (root / "SKILL.md").write_text(text)
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE_EXAMPLES.iterdir() if p.is_dir()))
def test_the_reference_examples_load_with_a_warning_as_the_reference_reads_them(name):
    loaded = load_skill(REFERENCE_EXAMPLES / name)
    assert loaded.name == name and loaded.description.startswith("Use ")
    (warning,) = loaded.warnings
    assert "SKILL.md:3: frontmatter is not valid YAML" in warning and "read leniently" in warning
    # As the reference: no metadata parsed, the whole file is the body.
    assert loaded.body.startswith("---\nname:")


def test_an_unclosed_fence_reads_as_body_with_a_warning(tmp_path):
    loaded = load_skill(skill(tmp_path, "---\nname: x\nno closing fence\n"))
    assert loaded.name == "my-skill" and "never closed" in loaded.warnings[0] and loaded.body.startswith("---")


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_a_525_byte_alias_bomb_fails_fast_with_a_clear_error(tmp_path):
    assert len(ALIAS_BOMB.encode()) < 600
    started = time.monotonic()
    with pytest.raises(SkillError, match=r"SKILL.md:\d+: frontmatter invalid YAML: aliases expand"):
        load_skill(skill(tmp_path, ALIAS_BOMB))
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("front, message", [
    ("name: " + "9" * 4400, r"SKILL.md:2: frontmatter invalid YAML: a number of 4400 characters"),
    ("name: x\nmeta: " + "[" * 200 + "]" * 200, r"SKILL.md:\d+: frontmatter invalid YAML: nesting is deeper"),
    ("name: x\ndescription: 2024-01-01", r"SKILL.md:3: frontmatter 'description' must be text, got date"),
    ("name: x\ndescription: " + "d" * 70000, r"SKILL.md:3: frontmatter 'description' is 70000 characters"),
    ("name: x\ndescription: 2024-13-45", r"SKILL.md:3: frontmatter invalid YAML: cannot read the value"),
])
def test_frontmatter_bounds_are_clear_errors_never_tracebacks(tmp_path, capsys, front, message):
    root = skill(tmp_path, f"---\n{front}\n---\nbody\n")
    with pytest.raises(SkillError, match=message):
        load_skill(root)
    (root / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    expectations: [x]\n")
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1


def test_only_the_skills_own_files_are_bundled(tmp_path):
    eval_material = ["evals/evals.json", "evals/files/input.csv", "eval.yaml", "expected-run-result.json",
                     "expected_output.md", "mock-responses.yaml", "trigger-evals.json", "trigger_evals.json",
                     "task.md", "criteria.json", "metadata.json"]
    own = ["scripts/run.py", "references/guide.md", "assets/template.txt"]
    root = skill(tmp_path, "---\nname: s\ndescription: d\n---\nbody\n", {rel: "x\n" for rel in [*own, *eval_material]})
    assert load_skill(root).bundled == tuple(sorted(own))


def test_a_description_longer_than_4096_characters_loads_with_a_warning_as_agents_accept_it(tmp_path, capsys):
    # Real suites carry descriptions past 4,096 characters that every agent loads.
    root = skill(tmp_path, "---\nname: x\ndescription: " + "d " * 2500 + "\n---\nbody\n")
    loaded = load_skill(root)
    assert len(loaded.description) == 4999 and any("4,999 characters" in w for w in loaded.warnings)
    (root / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    expectations: [x]\n")
    assert main(["validate", str(root)]) == 0
