"""The run-wide ledger the budget service holds: reservations against one cap, a token bucket
and a back-off per provider, and a lease that charges what a dead shard left reserved."""

from __future__ import annotations

from skillab.budget.ledger import RunBudget


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_reservations_in_flight_never_take_the_spend_past_the_cap():
    budget = RunBudget(cap_usd=1.0)
    first = budget.admit("anthropic", 0.6)
    assert first.kind == "grant"
    # 0.6 reserved + 0.6 would cross the cap while the first may still settle for less: wait.
    assert budget.admit("anthropic", 0.6).kind == "wait"
    assert budget.settle(first.ticket, 0.1)
    second = budget.admit("anthropic", 0.6)
    assert second.kind == "grant"
    budget.settle(second.ticket, 0.6)
    # 0.7 spent: a request that may cost 0.6 can no longer fit whatever the others do.
    refused = budget.admit("openai", 0.6)
    assert refused.kind == "refuse" and "run-wide cost cap ($1)" in refused.reason
    assert budget.status().spent_usd == 0.7 and budget.status().overshoot_usd == 0.0


def test_a_ticket_released_on_error_charges_nothing_and_a_ticket_settles_once():
    budget = RunBudget(cap_usd=1.0)
    ticket = budget.admit("anthropic", 0.5).ticket
    assert budget.settle(ticket, None)
    assert not budget.settle(ticket, 0.5)
    assert budget.status().spent_usd == 0.0 and budget.status().in_flight == 0


def test_a_reservation_past_its_lease_is_charged_whole():
    # A shard that died mid-request may have been billed: the cap must not forget it.
    clock = Clock()
    budget = RunBudget(cap_usd=1.0, lease_s=60, clock=clock)
    ticket = budget.admit("anthropic", 0.4).ticket
    clock.now += 61
    assert budget.status().spent_usd == 0.4
    assert not budget.settle(ticket, 0.01)


def test_the_bucket_paces_each_provider_apart():
    clock = Clock()
    budget = RunBudget(rpm={"anthropic": 60, "*": 120}, clock=clock)
    assert budget.admit("anthropic", None).kind == "grant"
    paced = budget.admit("anthropic", None)
    assert paced.kind == "wait" and 0.9 < paced.wait_s <= 1.0
    # Another provider has its own bucket (two a second, two at once).
    assert [budget.admit("openai", None).kind for _ in range(3)] == ["grant", "grant", "wait"]
    clock.now += 1.0
    assert budget.admit("anthropic", None).kind == "grant"


def test_a_429_holds_that_provider_for_every_shard_and_no_other():
    clock = Clock()
    budget = RunBudget(clock=clock)
    budget.throttle("anthropic", 2.0)
    held = budget.admit("anthropic", None, shard="b")
    assert held.kind == "wait" and held.wait_s == 2.0
    assert budget.admit("openai", None).kind == "grant"
    clock.now += 2.0
    assert budget.admit("anthropic", None).kind == "grant"
    assert budget.status().throttles == {"anthropic": 1}
