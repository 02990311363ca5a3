"""No key in any environment a suite's code can read: not its own, not skillab's, not an ancestor's.

A suite's validator looks for the keys in its environment and in ``/proc/<pid>/environ`` of
every ancestor it can read. Unsandboxed (``--sandbox none``) that includes skillab's own process,
whose ``/proc/<pid>/environ`` is the environment it was started with, whatever it later removes
from ``os.environ``: skillab hands the keys to a fresh image of itself over an inherited file
descriptor, so that environment never held them. A control variable proves the walk reached
skillab's own environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillab.key_handoff import HANDOFF_ENV, held_keys

from .action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from .skillgen import answers, make_skill

MARKER = "handoff0marker0"
KEYS = {
    "ANTHROPIC_API_KEY": f"sk-ant-api03-{MARKER}aaaaaaaa",
    "OPENAI_API_KEY": f"sk-proj-{MARKER}bbbbbbbbbbbb",
    "INPUT_ANTHROPIC-API-KEY": f"sk-ant-api03-{MARKER}cccccccc",
    "INPUT_OPENAI-API-KEY": f"sk-{MARKER}dddddddddddddddd",
    "GITHUB_TOKEN": f"ghp_{MARKER}eeeeeeeeeeeeeeeeeeee",
    "MY_SERVICE_API_KEY": f"{MARKER}ffff",
}
VISIBLE = "SKILLAB_TEST_VISIBLE=seen-by-the-walk"
# Every environment the command can read: its own, then each ancestor's up to pid 1.
WALK = ("{ env; p=$PPID; while [ \"${p:-0}\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null; "
        "p=$(awk '/^PPid:/{print $2}' /proc/$p/status 2>/dev/null); done; }")
CASES = [{
    "name": "hunt",
    "prompt": "Say something.",
    "validators": [
        {"cmd": f"! {WALK} | grep -q {MARKER}", "label": "no key anywhere"},
        {"cmd": f"{WALK} | grep -q {VISIBLE}", "label": "the walk reached skillab"},
    ],
}]


def hunting_skill(root: Path) -> Path:
    return make_skill(root, CASES, responses={"hunt": answers("SKILLED", "no")})


def validator_outcomes(doc: dict) -> list[tuple[str, bool]]:
    return [(result["label"], result["passed"]) for record in doc["cases"]
            for arm in ("with_skill", "without_skill") for result in record[arm]["validator_results"]]


def child_env(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not held_keys({name: value})}
    return {**env, **KEYS, VISIBLE.split("=")[0]: VISIBLE.split("=")[1],
            "PYTHONPATH": os.pathsep.join(sys.path), **extra}


def test_an_unsandboxed_validator_finds_no_key_in_skillabs_environment_or_any_ancestors(tmp_path):
    skill = hunting_skill(tmp_path)
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock", "--sandbox", "none",
         "--no-cache", "--no-history", "--output", str(out)],
        capture_output=True, text=True, timeout=120, env=child_env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = validator_outcomes(json.loads(out.read_text()))
    assert len(outcomes) == 4 and all(passed for _, passed in outcomes), outcomes
    assert MARKER not in out.read_text()


def test_the_action_hands_its_key_inputs_over_and_keeps_none(tmp_path, github):  # noqa: F811
    repo = tmp_path / "repo"
    hunting_skill(repo / "skills")
    env = {name: value for name, value in child_env().items() if name.startswith(("INPUT_A", "INPUT_O", "MY_"))}
    result = run_action(repo, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
                        api_url=github.url, inputs={"adapter": "mock", "path": "skills", "sandbox": "none"},
                        env={**env, VISIBLE.split("=")[0]: VISIBLE.split("=")[1],
                             "PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.code == 0, result.log
    (doc,) = result.results()["suites"]
    outcomes = validator_outcomes(doc)
    assert len(outcomes) == 4 and all(passed for _, passed in outcomes), outcomes


def test_the_keys_still_reach_skillab_itself(tmp_path):
    """The handed-over keys are skillab's again: a provider that needs one finds it."""
    code = ("import os, sys; from skillab.cli import main; "
            "print(os.environ.get('ANTHROPIC_API_KEY'), os.environ.get('INPUT_OPENAI-API-KEY'), "
            f"os.environ.get('{HANDOFF_ENV}'), open('/proc/self/environ','rb').read().count(b'{MARKER}'))")
    probe = tmp_path / "probe.py"
    probe.write_text("from skillab import key_handoff\nkey_handoff.isolate_keys()\n" + code.replace("; ", "\n"))
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=60,
                          env=child_env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [KEYS["ANTHROPIC_API_KEY"], KEYS["INPUT_OPENAI-API-KEY"], "None", "0"]


@pytest.mark.parametrize("value", ["0", "1", "99", "not-a-number"])
def test_a_handoff_variable_the_caller_set_is_not_read(tmp_path, value):
    """Only skillab's own memfd is read as keys: a descriptor named in the environment by someone
    else (stdin, a terminal, nothing) is ignored, and the run goes on."""
    skill = hunting_skill(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "skillab", "validate", str(skill)],
        capture_output=True, text=True, timeout=60, input="",
        env={**child_env(), HANDOFF_ENV: value})
    assert done.returncode == 0, done.stderr
