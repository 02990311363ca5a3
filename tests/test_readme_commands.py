"""Every ``skillab`` command the README gives runs as written: each is taken from the README's
text, run by bash in a scratch directory holding the examples it names, and must succeed. The
commands that need a model key run with fake keys against fake model servers on loopback (the
base-URL variables are the only addition); the install and test commands are what ``.ci/run``
runs on a fresh clone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillab.grading.judge import SYSTEM_PROMPT as JUDGE_SYSTEM

from .fakes.model_server import FakeModelServer, text

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-api03-readme-" + "R" * 32, "OPENAI_API_KEY": "sk-proj-readme" + "R" * 40}
# Commands the README shows that this test does not run, and where they are run instead.
ELSEWHERE = {
    "pip install -e '.[test]' && python -m pytest": ".ci/run, on a fresh clone",
    "pip install -e . &&": ".ci/run installs the package the same way",
}


def readme_commands() -> list[str]:
    """Each skillab command in the README: the lines of its shell blocks and its inline code."""
    text = README.read_text()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #", 1)[0].strip()
            if "skillab " in line:
                commands.append(line[line.index("skillab "):] if "&& skillab " in line else line)
    commands += re.findall(r"`(skillab (?:run|init|validate) [^`]+)`", text)
    return list(dict.fromkeys(commands))


def scratch(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("workflows"))
    return tmp_path


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", *KEYS)}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # the skillab under test
    return {**env, **extra}


def test_the_readme_gives_the_commands_this_test_runs():
    commands = readme_commands()
    assert "skillab run examples/changelog-entry --adapter mock" in commands
    assert any("--dry-run" in c for c in commands) and any("--html report.html" in c for c in commands)
    for skipped in ELSEWHERE:
        assert skipped in README.read_text(), f"the README no longer shows {skipped!r}: drop it from ELSEWHERE"


@pytest.mark.parametrize("command", [c for c in readme_commands() if "--model" not in c])
def test_each_keyless_command_runs_as_written(command, tmp_path):
    done = run(command, scratch(tmp_path), environment())
    assert done.returncode == 0, f"{command}\n{done.stderr}"


def test_the_commands_with_a_model_run_as_written_with_their_keys(tmp_path):
    def reply(request):
        if request.system_text == JUDGE_SYSTEM:
            return text(json.dumps({"passed": True, "reason": "It does."}))
        return text("### Fixed\n- Crash when the config file is empty (#412)")

    work = scratch(tmp_path)
    with FakeModelServer(reply) as model:
        env = environment(**KEYS, ANTHROPIC_BASE_URL=model.url, OPENAI_BASE_URL=model.openai_url)
        for command in [c for c in readme_commands() if "--model" in c]:
            done = run(command, work, env)
            assert done.returncode in (0, 1), f"{command}\n{done.stderr}"  # 1: a gate, never a usage error
            assert "API key" not in done.stderr, done.stderr
        auths = {r.auth for r in model.model_requests()}
    # x-api-key or Authorization: Bearer, as each SDK sends its key.
    assert auths and auths <= {KEYS["ANTHROPIC_API_KEY"], *(f"Bearer {key}" for key in KEYS.values())}
    assert (work / "report.html").is_file()
