"""Graders grade from a pristine copy of the skill's bundled files in every arm (issue #23).

Each test is an attack on ``examples/changelog-entry``, whose validator is the bundled
``python3 scripts/check_changelog.py``: the with-skill agent rewrites the grader, the baseline
plants a module beside it, or a ``.pth`` file where Python looks for one. Both arms answer with
text the honest grader fails, so a pass anywhere is the attack's doing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.sandbox.backend import choose_sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "changelog-entry"
HONEST_FAIL = "I did not write a changelog entry."
# A grader that passes whatever it is given, and a module that ends any program importing it
# with success before the grader's own code runs.
FORGED_GRADER = "raise SystemExit(0)\n"
SHADOW = "import os\nos._exit(0)\n"

needs_bwrap = pytest.mark.skipif(
    choose_sandbox(None).backend.name != "bwrap", reason=f"bwrap does not work here: {choose_sandbox(None).reason}"
)


def suite(tmp_path: Path, with_files: dict[str, str], without_files: dict[str, str]) -> Path:
    """The changelog skill with one impossible case and the agents' scripted files."""
    skill = tmp_path / "changelog-entry"
    shutil.copytree(EXAMPLE, skill)
    (skill / "trigger-evals.json").unlink()
    case = {
        "name": "bugfix-entry",
        "prompt": "PR #412 fixes a crash. Write the changelog entry for it.",
        "validators": [{"label": "house rules", "cmd": "python3 scripts/check_changelog.py --require Fixed"}],
    }
    (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": [case]}), encoding="utf-8")
    responses = {"bugfix-entry": {
        "with": {"text": HONEST_FAIL, "files": with_files} if with_files else HONEST_FAIL,
        "without": {"text": HONEST_FAIL, "files": without_files} if without_files else HONEST_FAIL,
    }}
    (skill / "mock-responses.yaml").write_text(yaml.safe_dump(responses), encoding="utf-8")
    return skill


def run(skill: Path, tmp_path: Path, capsys, *extra: str) -> tuple[dict, str]:
    out = tmp_path / "results.json"
    code = main(["run", str(skill), "--adapter", "mock", "--output", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--quiet", "--no-history",
                 "--markdown", str(tmp_path / "report.md"), "--junit", str(tmp_path / "junit.xml"),
                 "--html", str(tmp_path / "report.html"), *extra])
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err
    return json.loads(out.read_text()), printed.out + printed.err


def only_case(doc: dict) -> dict:
    [case] = doc["cases"]
    return case


def assert_tampering_reported(doc: dict, arm: str, path: str, tmp_path: Path, printed: str) -> None:
    case = only_case(doc)
    assert case["outcome"] == "error", case["outcome"]
    record = case[arm]
    assert record["errored"] and record["passed"] is False
    assert "tamper" in record["error"] and path in record["error"]
    assert path in record["extra"]["tampering"]
    assert doc["pass_rate"]["delta_pts"] in (0.0, None)
    for report in ("report.md", "junit.xml", "report.html"):
        text = (tmp_path / report).read_text().replace("\\_", "_")  # markdown escapes _
        assert "tamper" in text and path in text, report
    assert "tamper" in printed


@needs_bwrap
@pytest.mark.parametrize("arm, path, content", [
    # Today a +100 lift: the with-skill agent's grader passes anything.
    ("with_skill", "scripts/check_changelog.py", FORGED_GRADER),
    # Today a -100 loss: check_changelog.py imports argparse, and Python looks in the script's
    # own directory first, where the baseline left a module the restore kept.
    ("without_skill", "scripts/argparse.py", SHADOW),
    ("with_skill", "scripts/re.py", SHADOW),
], ids=["with-skill-rewrites-the-grader", "baseline-plants-a-module", "with-skill-plants-a-module"])
def test_changing_the_grader_or_beside_it_is_tampering_never_a_lift(tmp_path, capsys, arm, path, content):
    planted = {path: content}
    skill = suite(tmp_path, planted if arm == "with_skill" else {}, planted if arm == "without_skill" else {})
    doc, printed = run(skill, tmp_path, capsys)
    assert_tampering_reported(doc, arm, path, tmp_path, printed)


@needs_bwrap
def test_a_user_site_pth_file_never_runs_in_a_grader(tmp_path, capsys):
    # Not beside a bundled file, so no tampering: but Python runs a .pth file's import lines
    # from the user's site directory at start-up, and HOME is inside the workspace.
    site = ".home/.local/lib/python3.11/site-packages/zz-shadow.pth"
    versions = [f".home/.local/lib/python3.{minor}/site-packages/zz-shadow.pth" for minor in range(8, 16)]
    planted = {rel: "import os; os._exit(0)\n" for rel in versions}
    assert site in planted
    skill = suite(tmp_path, {}, planted)
    doc, _ = run(skill, tmp_path, capsys)
    case = only_case(doc)
    assert case["outcome"] == "fail_kept", case
    assert case["without_skill"]["validator_results"][0]["passed"] is False


@needs_bwrap
def test_an_honest_run_is_not_tampering(tmp_path, capsys):
    # The with-skill agent runs the grader itself and writes its answer file beside the work.
    skill = suite(tmp_path, {"CHANGELOG.md": "# Changelog\n"}, {"notes.txt": "x"})
    doc, _ = run(skill, tmp_path, capsys)
    case = only_case(doc)
    assert case["outcome"] == "fail_kept", case
    assert "tampering" not in (case["with_skill"].get("extra") or {})


@needs_bwrap
def test_tampering_in_one_pass_k_attempt_errors_the_whole_arm(tmp_path, capsys):
    skill = suite(tmp_path, {"scripts/check_changelog.py": FORGED_GRADER}, {})
    doc, _ = run(skill, tmp_path, capsys, "--pass-k", "2")
    record = only_case(doc)["with_skill"]
    assert record["errored"] and "tamper" in record["error"], record["error"]


@needs_bwrap
def test_grading_commands_see_the_pristine_files_whatever_the_workspace_holds(tmp_path):
    # The pinned view holds on its own, beside the fingerprint: a forged grader, a sibling
    # module and a stale __pycache__ are all out of the grading command's view.
    from skillab.sandbox.workspace import Workspace

    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "grade.py").write_text("import helper\nprint(helper.VERDICT)\n")
    (skill / "scripts" / "helper.py").write_text("VERDICT = 'pristine'\n")
    workspace = Workspace.create(tmp_path / "run", "arm")
    rels = ["scripts/grade.py", "scripts/helper.py"]
    workspace.stage(skill, rels)
    workspace.keep_pristine(rels)
    (workspace.root / "scripts" / "grade.py").write_text("print('forged')\n")
    (workspace.root / "scripts" / "json.py").write_text("print('shadow')\n")
    (workspace.root / "scripts" / "__pycache__").mkdir()
    before = workspace.run("python3 scripts/grade.py; ls scripts", timeout_s=20)
    assert before.stdout.startswith("forged")
    workspace.pin_pristine()
    after = workspace.run("python3 scripts/grade.py; ls -A scripts; echo x > scripts/new || echo refused",
                          timeout_s=20)
    assert after.stdout.splitlines() == ["pristine", "grade.py", "helper.py", "refused"], after
    assert (workspace.root / "scripts" / "grade.py").read_text() == "print('forged')\n"


@needs_bwrap
def test_what_setup_wrote_beside_a_bundled_grader_is_part_of_the_pristine_copy(tmp_path, capsys):
    skill = suite(tmp_path, {}, {})
    case = yaml.safe_load((skill / "eval.yaml").read_text())["cases"][0]
    case["setup"] = ["echo '## [Unreleased]' > scripts/expected.txt"]
    case["validators"].append({"label": "setup's file", "cmd": "grep -q Unreleased scripts/expected.txt"})
    (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    doc, _ = run(skill, tmp_path, capsys)
    for arm in ("with_skill", "without_skill"):
        results = only_case(doc)[arm]["validator_results"]
        assert results[1]["passed"], (arm, results)
