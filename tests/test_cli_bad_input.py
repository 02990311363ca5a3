"""Bad input through the real command line: exit 2, one clear message, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SKILL_MD = "---\nname: broken\ndescription: d\n---\nbody\n"


def skill_with_suite(root: Path, suite: bytes) -> Path:
    skill = root / "broken"
    skill.mkdir()
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "eval.yaml").write_bytes(suite)
    return skill


def missing_skill_md(root: Path) -> Path:
    skill = root / "no-skill-md"
    skill.mkdir()
    (skill / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    expectations: [x]\n")
    return skill


def empty_dir(root: Path) -> Path:
    (root / "empty").mkdir()
    return root / "empty"


CASES = {
    "malformed YAML": (lambda r: skill_with_suite(r, b"cases:\n  - name: [unclosed\n"), "line"),
    "non-mapping top level": (lambda r: skill_with_suite(r, b"- just\n- a list\n"), "mapping"),
    "non-UTF-8 bytes": (lambda r: skill_with_suite(r, b"cases:\n  - name: caf\xe9\n"), "UTF-8"),
    "10 MB file": (lambda r: skill_with_suite(r, b"# " + b"x" * (10 * 1024 * 1024) + b"\n"), "MiB"),
    "missing SKILL.md": (missing_skill_md, "SKILL.md"),
    "empty directory": (empty_dir, "eval.yaml"),
    "path that does not exist": (lambda r: r / "nowhere", "nowhere"),
    "tab indentation": (lambda r: skill_with_suite(
        r, b"cases:\n  - name: a\n    prompt: p\n    validators:\n    \t- cmd: 'true'\n"),
        "eval.yaml:5: invalid YAML: found character that cannot start any token (while scanning for the "
        "next token that starts on line 5) — line 5 is indented with a tab; YAML indents with spaces only"),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_exits_2_with_one_clear_message(tmp_path, name, command):
    make, expected = CASES[name]
    target = make(tmp_path)
    extra = ["--adapter", "mock", "--no-history"] if command == "run" else []
    proc = subprocess.run(
        [sys.executable, "-m", "skillab", command, str(target), *extra],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    message = proc.stderr.strip()
    assert expected in message, message
    if name != "missing SKILL.md" or command == "run":
        assert len(message.splitlines()) == 1, message
    assert not (tmp_path / "results.json").exists()


def test_validate_names_a_validator_bash_cannot_parse(tmp_path):
    """A validator with an unbalanced quote makes its case an error in every arm of a run;
    ``validate`` must say so (file, line, case, field) rather than print a bare ``ok``."""
    suite = (b"cases:\n  - name: fine\n    prompt: p\n    validators:\n      - cmd: grep -q 'x' response.txt\n"
             b"  - name: quoted\n    prompt: p\n    validators:\n      - label: heading\n"
             b"        cmd: grep -q '^## Summary response.txt\n")
    skill = skill_with_suite(tmp_path, suite)
    done = subprocess.run([str(Path(sys.executable).parent / "skillab"), "validate", str(skill)],
                          capture_output=True, text=True, timeout=60)
    assert f"{skill}/eval.yaml:6: case quoted validators[0].cmd ('heading')" in done.stderr, done.stderr
    assert "unexpected EOF" in done.stderr and "case fine" not in done.stderr


def test_validate_and_a_mock_run_agree_on_a_stale_mock_responses_key(tmp_path):
    """A case renamed in eval.yaml but not in the skill's mock-responses.yaml: ``skillab init``'s
    next step (validate, then a mock run) must not pass the first and stop at the second."""
    skill = skill_with_suite(tmp_path, b"cases:\n  - name: summary-fmt\n    prompt: p\n"
                                       b"    validators:\n      - cmd: 'true'\n")
    (skill / "mock-responses.yaml").write_text("summary-format:\n  with: a\n  without: b\n")
    messages = []
    for command in (["validate"], ["run", "--adapter", "mock", "--no-history"]):
        done = subprocess.run([sys.executable, "-m", "skillab", command[0], str(skill), *command[1:]],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        messages.append(done.stderr.strip().split(": ", 1)[1])
    expected = (f"{skill}/mock-responses.yaml: mock responses for no case of the suite: "
                "'summary-format' (did you mean 'summary-fmt'?)")
    assert messages == [expected, expected]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_nul_byte_in_a_validator_command_is_one_located_line(tmp_path, command):
    """No process can be given a NUL byte: the command could never run, and ``bash -n`` raised."""
    suite = b'cases:\n  - name: nul\n    prompt: p\n    validators:\n      - label: nul\n        cmd: "echo \\0 hi"\n'
    skill = skill_with_suite(tmp_path, suite)
    extra = ["--adapter", "mock", "--no-cache"] if command == "run" else []
    done = subprocess.run([sys.executable, "-m", "skillab", command, str(skill), *extra],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{skill}/eval.yaml:2: case nul 'validators[0].cmd ('nul')'" in done.stderr
    assert "contains a NUL byte" in done.stderr and len(done.stderr.strip().splitlines()) == 1
