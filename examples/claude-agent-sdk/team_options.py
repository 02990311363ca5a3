"""An agent built with the Claude Agent SDK, measured by skillab as the team defined it:

    ANTHROPIC_API_KEY=sk-ant-mock PYTHONPATH=examples/claude-agent-sdk skillab run examples/team-facts \
        --case release-code-name --adapter claude-agent-sdk:team_options:options \
        --model claude-haiku-4-5 --base-url http://127.0.0.1:8766

(``python examples/claude-agent-sdk/mock_model.py`` serves that address with a scripted model;
drop ``--base-url`` and give your real key to measure against Anthropic.)

``options()`` returns the team's ``ClaudeAgentOptions``: its system prompt, its tools and its own
in-process MCP server. skillab keeps them and sets what the measurement depends on: project
settings only, strict MCP config, the arm's workspace as ``cwd``, the model and turn cap, the
credential proxy as the endpoint, telemetry off; in the with-skill arm only, the skill staged as
a project skill under ``.claude/skills/`` and the ``Skill`` tool on (``skills``), so the team's
``allowed_tools`` need not name it.
"""

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool


@tool("release_calendar", "The dates of the next releases, as the team's calendar lists them.", {})
async def release_calendar(args):
    return {"content": [{"type": "text", "text": "next release: 2026-12-01; the one after: 2027-01-12"}]}


def options() -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        system_prompt="You answer the team's questions about its releases and infrastructure. "
                      "Answer in one sentence.",
        mcp_servers={"team": create_sdk_mcp_server("team", tools=[release_calendar])},
        allowed_tools=["Read", "Glob", "Grep", "mcp__team__release_calendar"],
    )
