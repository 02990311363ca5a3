"""Every in-process model client of a run asks the shared budget: the agent's model and the
judge's alike, since both are built from the run's settings (``--budget-url``)."""

from __future__ import annotations

from dataclasses import replace

from skillab.budget.ledger import RunBudget
from skillab.budget.service import BudgetServer
from skillab.core.messages import Message
from skillab.core.settings import AgentSettings, Credentials, JudgeSettings, ModelRole, ProviderTuning, RunConfig
from skillab.providers.registry import client_for

from ..fakes.model_server import text

TOKEN = "roles-budget-" + "R" * 24
KEY = "sk-ant-api03-" + "R0les" * 8


def test_the_agent_and_the_judge_each_ask_the_service_before_every_call(server):
    service = BudgetServer(("127.0.0.1", 0), RunBudget(cap_usd=5.0), TOKEN).start()
    try:
        config = RunConfig(agent=AgentSettings(adapter="llm", model=ModelRole("claude-sonnet-4-5")),
                           judge=JudgeSettings(model=ModelRole("claude-haiku-4-5"), same_family=True),
                           tuning=ProviderTuning(budget_url=service.url),
                           credentials=Credentials({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url,
                                                    "SKILLAB_BUDGET_TOKEN": TOKEN}))
        for role in ("agent", "judge"):
            server.push(text("ok", input_tokens=10, output_tokens=20))
            client_for(config, role).create([Message("user", text="hi")], system="s", max_tokens=50)
        ledger = service.budget.status()
        # Without --budget-url nothing asks it.
        server.push(text("ok"))
        client_for(replace(config, tuning=ProviderTuning()), "agent").create(
            [Message("user", text="hi")], system="s", max_tokens=50)
        after = service.budget.status()
    finally:
        service.stop()
    assert ledger.granted == 2 and ledger.in_flight == 0 and ledger.spent_usd > 0
    assert after.granted == 2
