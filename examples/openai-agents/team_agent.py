"""An agent built with the OpenAI Agents SDK, measured by skillab as the team defined it:

    OPENAI_API_KEY=sk-mock PYTHONPATH=examples/openai-agents skillab run examples/team-facts \
        --case release-code-name --adapter openai-agents:team_agent:agent --model gpt-4.1-mini \
        --base-url http://127.0.0.1:8765/v1 --provider openai

(``python examples/openai-agents/mock_model.py`` serves that address with a scripted model; drop
``--base-url`` and give your real key to measure against OpenAI.)

``agent()`` returns the team's ``Agent``: its instructions and its own tools. skillab wraps it in
a ``SandboxAgent`` with the SDK's filesystem and shell tools and, in the with-skill arm only, the
``Skills`` capability; it points the model client at its credential proxy and turns tracing off.
"""

from agents import Agent, function_tool


@function_tool
def release_calendar() -> str:
    """The dates of the next releases, as the team's calendar lists them."""
    return "next release: 2026-12-01; the one after: 2027-01-12"


def agent() -> Agent:
    return Agent(
        name="release-helper",
        instructions="You answer the team's questions about its releases and infrastructure. "
                     "Answer in one sentence.",
        tools=[release_calendar],
    )
