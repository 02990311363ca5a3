"""The command graders of task_suite.yaml.

- ``contains``: every keyword occurs in the final output, case-insensitively. The score is the
  share found, but the check passes only when every keyword is found.
- ``pytest``: the suite's fixtures are staged into a fresh ``.skillab-judge/`` after the agent
  finished, and pytest runs the test file there with ``AI_OUTPUT_FILE`` naming a file that holds
  the final output. Agent-written ``conftest.py`` or ``pytest.ini`` elsewhere in the workspace
  are out of pytest's reach (``--rootdir``/``--confcutdir``/``-c`` pin it to the fixtures).

Its ``llm-rubric`` grader is the generic rubric judge, ``grading/rubric.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys

from ...core.checks import GraderResult
from ...grading.graders import (
    AI_OUTPUT_ENV,
    JUDGE_DIR,
    GradingInput,
    clear_entry,
    no_verdict,
    output_tail,
    stage_seed,
)
from ...sandbox.python_runtime import python_view
from .specs import ContainsGrader, PytestGrader


def grade_contains(spec: ContainsGrader, grading: GradingInput) -> GraderResult:
    text = grading.final_output.lower()
    found = [k for k in spec.keywords if k.lower() in text]
    missing = [k for k in spec.keywords if k.lower() not in text]
    total = len(spec.keywords)
    reason = f"{len(found)} of {total} keywords found in the final output"
    if missing:
        reason += "; missing: " + ", ".join(repr(k) for k in missing) + " (every keyword is required)"
    return GraderResult(
        kind="contains",
        label="contains: " + ", ".join(repr(k) for k in spec.keywords),
        passed=not missing,
        reason=reason,
        score=round(len(found) / total, 4) if total else 0.0,
        max_score=1.0,
    )


# --- pytest ----------------------------------------------------------------------------------


def grade_pytest(spec: PytestGrader, grading: GradingInput) -> GraderResult:
    label = f"pytest {spec.test_file}"
    if importlib.util.find_spec("pytest") is None:
        return no_verdict("pytest", label, f"pytest is not installed for {sys.executable}; "
                           "install it (pip install pytest) to run pytest judges")
    workspace = grading.workspace
    clear_entry(workspace.root, JUDGE_DIR)
    stage_seed(workspace, spec.fixtures, under=JUDGE_DIR)
    output = workspace.put(f"{JUDGE_DIR}/ai_output.txt", grading.final_output.encode("utf-8", "replace"))
    fixtures_root = f"{JUDGE_DIR}/fixtures"
    ini = f"{fixtures_root}/pytest.ini"
    if not (workspace.root / ini).is_file():
        ini = f"{JUDGE_DIR}/pytest.ini"
        workspace.put(ini, b"[pytest]\n")
    q = shlex.quote
    python = python_view()
    command = (
        f"cd {q(JUDGE_DIR)} && exec {q(python.interpreter)} -m pytest -q -p no:cacheprovider "
        f"--rootdir fixtures --confcutdir fixtures -c {q(os.path.relpath(ini, JUDGE_DIR))} "
        f"{q(spec.test_file)}"
    )
    env = {AI_OUTPUT_ENV: str(output), "PYTHONDONTWRITEBYTECODE": "1", **python.env}
    result = workspace.run(command, timeout_s=spec.timeout_s, extra_env=env,
                           read_only=python.read_only, read_only_at=python.read_only_at)
    tail = output_tail(result)
    if result.completed and result.exit_code == 0:
        return GraderResult("pytest", label, True, "the tests passed", output=tail)
    if result.completed and result.exit_code == 1:
        return GraderResult("pytest", label, False, "some tests failed", output=tail)
    if result.completed and result.exit_code == 5:
        return no_verdict("pytest", label, f"pytest collected no tests from {spec.test_file}", tail)
    return no_verdict("pytest", label, f"pytest gave no verdict: {result.describe()}", tail)
