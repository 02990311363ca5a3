"""What a run does with the shared budget (``--budget-url``) beyond each call's admission: asks
it once before the first arm (a shard that cannot reach it says so at once, not after its first
model call), stops starting arms once it refused a request for the run-wide cap, and says in
the report when the shard fell back to its local cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.settings import RunConfig

if TYPE_CHECKING:
    from ..budget.client import SharedBudget


def run_budget(config: RunConfig) -> SharedBudget | None:
    """The run's shared budget, asked once, given ``--budget-wait-s`` to come up (None without
    ``--budget-url``)."""
    if not config.tuning.budget_url:
        return None  # and the client (sockets, threads) is never imported
    from ..budget.client import shared_budget

    budget = shared_budget(config.tuning.budget_url, config.credentials.environ)
    if budget is not None and budget.fallback is None:
        budget.reach(config.tuning.budget_wait_s)
    return budget


def fallback_line(budget: SharedBudget | None, local_cap_usd: float | None) -> str | None:
    """The report's line for a shard that ran without the shared budget, or None."""
    if budget is None or budget.fallback is None:
        return None
    cap = f"its local cap (${local_cap_usd:g}, --max-cost-usd)" if local_cap_usd is not None else (
        "no cap at all (no --max-cost-usd on this shard)")
    return (f"shared budget not used: {budget.fallback}; this shard's model calls ran under {cap}, "
            "not the run-wide cap")


def refused_line(budget: SharedBudget | None) -> str | None:
    """Why the run stops starting arms: the service refused a request for the run-wide cap."""
    return None if budget is None or budget.refused is None else budget.refused
