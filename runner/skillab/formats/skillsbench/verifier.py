"""The SkillsBench / Harbor verifier: ``test.sh`` staged after the agent, run, its reward read.

Harbor rewards are fractional (a verifier may give 0.05 for one test of twenty). The arm keeps
the reward as its score and passes when it reaches the threshold (1.0 unless the run sets
another). A verifier that wrote no reward, or that could not start its test runner (a pytest
plugin flag pytest does not know, a command that is not installed), gives no verdict: the arm
is ``errored``, never a fail the model did not earn.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from ...core.checks import GraderResult
from ...core.records import CaseRecord
from ...core.summary import Reward
from ...grading.graders import (
    VERIFIER_DIR,
    GradingInput,
    no_verdict,
    output_tail,
)
from ...sandbox.nofollow import read_inside
from ...sandbox.python_runtime import grader_python, grader_python_env
from ...suite.paths import read_below
from .dockerfile import package_check
from .specs import VerifierGrader
from .verifier_deps import SKIP_DEPS

# Output that says the test runner never ran the tests (pytest exits 4 on a usage error and 3
# on an internal error, such as a plugin too new for it; a shell prints "command not found" and
# exits 127).
_FAILED_TO_START = re.compile(
    r"(?m)^.*(?:error: unrecognized arguments:|ERROR: usage:|: command not found|"
    r"No module named '?pytest|ERROR: file or directory not found:|can't open file|^INTERNALERROR>).*$"
)
_NOT_STARTED_CODES = (126, 127)
_MISSING_MODULE = re.compile(r"(?m)(?:ModuleNotFoundError|ImportError): No module named '?[\w.]+'?")
LOGS = f"{VERIFIER_DIR}/logs"
# A reward file is a number or a small JSON document; a bigger one is not read past this.
REWARD_MAX_BYTES = 64 * 1024


def grade_verifier(spec: VerifierGrader, grading: GradingInput) -> GraderResult:
    from .dockerfile import expand_variables
    from .parser import rewrite_paths

    label = f"verifier {spec.entry}"
    workspace = grading.workspace
    root = workspace.root
    from ...grading.graders import clear_entry

    clear_entry(root, VERIFIER_DIR)
    tests_dir, logs_dir = root / VERIFIER_DIR / "tests", root / LOGS
    mapping = [(path, str(root)) for path in spec.workspace_paths]
    mapping += [("/tests", str(tests_dir)), ("/verifier", str(tests_dir)), ("/logs/verifier", str(logs_dir))]
    for source, target in spec.tests.files:
        data, mode = read_below(spec.tests.root, source)
        try:
            data = rewrite_paths(data.decode("utf-8"), mapping).encode("utf-8")
        except UnicodeDecodeError:
            pass  # binary test data is staged as it is
        staged = workspace.put(f"{VERIFIER_DIR}/tests/{target}", data)
        os.chmod(staged, mode | stat.S_IRUSR)
    logs_dir.mkdir(parents=True, exist_ok=True)
    python = grader_python(workspace.backend)
    # The image's ENV, with its paths moved into the workspace and $PATH taken from the sandbox.
    env = {name: rewrite_paths(expand_variables(value, {}, base=True), mapping) for name, value in spec.env}
    if "PATH" in env:
        env["PATH"] = python.env(env["PATH"]).get("PATH", env["PATH"])
    else:
        env.update(grader_python_env(python))
    env = {**benchflow_env(root, tests_dir, logs_dir), **env}
    run = functools.partial(workspace.run, timeout_s=spec.timeout_s, read_only=python.read_only)
    if spec.guarded_packages:
        check = run(package_check(spec.guarded_packages), extra_env=env)
        if not (check.completed and check.exit_code == 0):
            missing = (check.stderr.strip() or check.describe())[-300:]
            return no_verdict("verifier", label, f"the verifier installs {', '.join(spec.guarded_packages)} from the "
                              f"network unless {SKIP_DEPS}=1, and the sandbox has no network: {missing} "
                              f"({python.describe()})", output_tail(check))
    if spec.reads_skip_deps:
        env[SKIP_DEPS] = "1"
    result = run(["bash", f"{VERIFIER_DIR}/tests/{spec.entry}"], extra_env=env)
    tail = output_tail(result)
    if result.timed_out:
        return no_verdict("verifier", label, f"the verifier {result.describe()}", tail)
    not_started = _FAILED_TO_START.search(f"{result.stdout}\n{result.stderr}")
    if not_started or result.exit_code in _NOT_STARTED_CODES:
        line = not_started.group(0).strip()[:200] if not_started else result.describe()
        return no_verdict("verifier", label,
                          f"the verifier failed to start its tests ({line}; {python.describe()})", tail)
    try:
        reward = read_reward(root)
    except ValueError as exc:
        return no_verdict("verifier", label, f"{exc} (the verifier ended with {result.describe()})", tail)
    passed = reward >= spec.reward_threshold
    reason = f"reward {reward:g} {'>=' if passed else '<'} {spec.reward_threshold:g}"
    module = _MISSING_MODULE.search(f"{result.stdout}\n{result.stderr}")
    if not passed and module:
        # Likely a tool the interpreter lacks rather than the agent's work: say which python3 ran.
        reason += f" ({module.group(0).strip()[:120]}; {python.describe()})"
    return GraderResult("verifier", label, passed, reason, score=reward, max_score=1.0, output=tail,
                        threshold=spec.reward_threshold)


def benchflow_env(root: Path, tests_dir: Path, logs_dir: Path) -> dict[str, str]:
    """The places a BenchFlow (SkillsBench v1.1) verifier reads from its environment, in the arm."""
    return {
        "BENCHFLOW_WORKSPACE": str(root),
        "BENCHFLOW_VERIFIER_DIR": str(tests_dir),
        "BENCHFLOW_REWARD_TEXT": str(logs_dir / "reward.txt"),
        "BENCHFLOW_REWARD_JSON": str(logs_dir / "reward.json"),
        "BENCHFLOW_REWARD_DETAILS_JSON": str(logs_dir / "reward-details.json"),
    }


def read_reward(root: Path, logs: str = LOGS) -> float:
    """The reward a verifier wrote: ``reward.txt`` (one number) or ``reward.json``'s ``reward``,
    in ``root/logs``. The verifier ran code the agent wrote, so the files are read without
    following a link on the way (``read_inside``) and never past a cap."""
    raw_text = read_inside(root, f"{logs}/reward.txt", REWARD_MAX_BYTES)
    if raw_text is not None:
        raw = raw_text.decode("utf-8", errors="replace").strip()
        value = _number(raw)
        if value is None:
            raise ValueError(f"reward.txt holds {raw[:40]!r}, not a number")
        return value
    raw_json = read_inside(root, f"{logs}/reward.json", REWARD_MAX_BYTES)
    if raw_json is not None:
        try:
            data = json.loads(raw_json.decode("utf-8"))
        except ValueError:
            raise ValueError("reward.json is not valid JSON") from None
        value = data.get("reward") if isinstance(data, dict) else data
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise ValueError("reward.json has no numeric 'reward'")
        return float(value)
    raise ValueError("the verifier wrote no reward.txt")


def _number(text: str) -> float | None:
    try:
        value = float(text[:64])
    except ValueError:
        return None
    return None if math.isnan(value) or math.isinf(value) else value


def mean_rewards(records: Sequence[CaseRecord]) -> Reward | None:
    """The mean verifier reward of each arm over the records that got one (errored arms have
    none), for reporting beside the pass rate; None when no case has a verifier."""
    rewards: dict[str, list[float]] = {"with_skill": [], "without_skill": []}
    thresholds: set[float] = set()
    seen = False
    for record in records:
        for arm, values in ((record.with_skill, rewards["with_skill"]), (record.without_skill, rewards["without_skill"])):
            for grader in arm.graders:
                if grader.kind != "verifier":
                    continue
                seen = True
                if not grader.errored and grader.score is not None:
                    values.append(float(grader.score))
                if grader.threshold is not None:
                    thresholds.add(float(grader.threshold))
    if not seen:
        return None

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    return Reward(
        with_skill=mean(rewards["with_skill"]),
        without_skill=mean(rewards["without_skill"]),
        arms=len(rewards["with_skill"]) + len(rewards["without_skill"]),
        threshold=min(thresholds) if thresholds else 1.0,
    )
