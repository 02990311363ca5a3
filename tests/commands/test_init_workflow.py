"""The workflow ``skillab init`` writes runs as written: its ``with:`` inputs, with the secrets
docs/action.md asks for, go through ``skillab action`` against a fake model server."""

from __future__ import annotations

import json
import re
import subprocess

import yaml

from skillab.cli import main
from skillab.grading.judge import SYSTEM_PROMPT as JUDGE_SYSTEM

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..fakes.model_server import FakeModelServer, text

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-api03-init-" + "A" * 32, "OPENAI_API_KEY": "sk-proj-init" + "O" * 40,
           "SKILLAB_CACHE_KEY": "a cache key for the test"}


def test_the_scaffolded_workflow_runs_with_its_judge(tmp_path, github):
    workspace = tmp_path / "workspace"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    assert main(["init", str(workspace / "skills" / "my-skill")]) == 0
    steps = yaml.safe_load((workspace / ".github" / "workflows" / "skillab.yml").read_text())["jobs"]["skillab"]["steps"]
    [with_] = [s["with"] for s in steps if str(s.get("uses", "")).startswith("OWNER/skillab@")]
    inputs = {name: re.sub(r"\$\{\{ secrets\.([A-Z_]+) \}\}", lambda m: SECRETS[m.group(1)], str(value))
              for name, value in with_.items()}

    def reply(request):
        if request.system_text == JUDGE_SYSTEM:
            return text(json.dumps({"passed": True, "reason": "It does."}))
        return text("## Summary\n- one\n- two\n- three\nThe time zone is the user's.")

    with FakeModelServer(reply) as model:
        result = run_action(workspace, event_name="workflow_dispatch", event_file="workflow_dispatch.json",
                            api_url=github.url, inputs=inputs,
                            env={"ANTHROPIC_BASE_URL": model.url, "OPENAI_BASE_URL": model.openai_url})
        judged = [r for r in model.model_requests() if r.system_text == JUDGE_SYSTEM]
    assert "API key" not in result.log, result.log
    assert result.code in (0, 1), result.log
    assert judged and json.loads(result.outputs["suites"]) == ["skills/my-skill"]
    # The judge is reached with the workflow's own OpenAI secret (a base URL alone would let the
    # fake server answer keyless; on GitHub there is none, and the run stopped at the key).
    assert {r.auth for r in judged} == {f"Bearer {SECRETS['OPENAI_API_KEY']}"}
