"""The llm adapter: one completion per arm, the skill in the with-skill system prompt only."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillab.agents.base import ArmRequest
from skillab.agents.llm import LlmAdapter
from skillab.errors import ProviderAuthError, UsageError
from skillab.providers import RetryPolicy
from skillab.providers.openai_compat import OpenAICompatClient
from skillab.skill.loader import load_skill
from skillab.suite.model import Case

from ..configs import run_config
from ..fakes.model_server import server_error, text
from ..skillgen import make_skill

BODY = "Answer in exactly three bullet points."



def adapter(server) -> LlmAdapter:
    client = OpenAICompatClient(
        "gpt-4o-mini",
        api_key="sk-test-" + "z" * 20,
        base_url=server.openai_url,
        policy=RetryPolicy(max_attempts=2, base_delay_s=0.001),
    )
    return LlmAdapter(client)


def arm(tmp_path: Path, skill=None) -> ArmRequest:
    return ArmRequest(
        case=Case(name="bullets", prompt="Summarize the release."),
        arm="with_skill" if skill else "without_skill",
        skill=skill,
        workspace=tmp_path,
    )


def test_one_completion_per_arm_with_the_skill_only_in_the_with_skill_prompt(server, tmp_path):
    skill = load_skill(make_skill(tmp_path, [], name="bullets", body=BODY))
    server.handler = lambda req: text(
        "- a\n- b\n- c" if BODY in req.system_text else "A paragraph."
    )
    llm = adapter(server)
    with_skill = llm.run(arm(tmp_path, skill))
    without = llm.run(arm(tmp_path))

    assert with_skill.final_output == "- a\n- b\n- c" and without.final_output == "A paragraph."
    for result in (with_skill, without):
        assert (result.turns, result.tool_call_count, result.error) == (1, 0, None)
        assert result.usage.total_tokens > 0 and result.usage.cost_usd is not None
        assert result.trajectory.user_input == "Summarize the release."
    first, second = server.model_requests()
    assert BODY not in second.raw and "bullets" not in second.system_text
    assert "tools" not in first.body and "tools" not in second.body
    assert server.count == 2


def test_provider_failure_is_an_errored_arm(server, tmp_path):
    server.push(server_error(retry_after_ms=1), server_error(retry_after_ms=1))
    result = adapter(server).run(arm(tmp_path))
    assert result.error is not None and "HTTP 500" in result.error
    assert result.final_output == "" and result.turns == 0


def test_model_echoing_a_key_is_redacted(server, tmp_path):
    server.push(text("Here you go: sk-ant-api03-" + "Q" * 40))
    result = adapter(server).run(arm(tmp_path))
    assert "sk-ant-api03" not in result.final_output
    assert "[REDACTED]" in result.final_output


def test_from_config_checks_the_key_and_the_loading_mode(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderAuthError, match="OPENAI_API_KEY"):
        LlmAdapter.from_config(run_config(adapter="llm", model="gpt-4o"))
    with pytest.raises(UsageError, match="--adapter agent"):
        LlmAdapter.from_config(run_config(adapter="llm", model="gpt-4o", skill_loading="discover"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 20)
    identity = LlmAdapter.from_config(run_config(adapter="llm", model="gpt-4o")).identity()
    assert identity["adapter"] == "llm" and identity["model"] == "gpt-4o"
    assert "sk-test" not in repr(identity)
