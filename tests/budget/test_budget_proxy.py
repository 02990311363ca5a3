"""A CLI arm's model requests under the shared budget: the credential proxy asks the budget
service after the run's own meter, settles there what it metered, and a 429 from upstream holds
the provider for every shard."""

from __future__ import annotations

import json
import socket

from skillab.budget.client import SharedBudget
from skillab.budget.ledger import RunBudget
from skillab.budget.service import BudgetServer
from skillab.providers.pricing import cost_usd
from skillab.sandbox.proxy import OVER_BUDGET_STATUS, CredentialProxy

from ..fakes.model_server import rate_limited, text

MODEL = "claude-haiku-4-5"
KEY = "sk-ant-api03-" + "Pr0xy" * 9
TOKEN = "proxy-budget-" + "T" * 24
MESSAGE = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}


def post(body: dict) -> bytes:
    raw = json.dumps(body).encode()
    return (f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw)}\r\n\r\n").encode() + raw


def exchange(proxy: CredentialProxy, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(proxy.socket_path))
        client.sendall(request)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    return data


def proxied(server, service: BudgetServer) -> CredentialProxy:
    lane = SharedBudget(service.url, TOKEN, shard="cli").lane("anthropic")
    return CredentialProxy(server.url, {"x-api-key": KEY}, model=MODEL,
                           price=lambda usage: cost_usd(MODEL, usage), shared=lane)


def test_the_proxy_settles_on_the_service_what_it_metered(server):
    service = BudgetServer(("127.0.0.1", 0), RunBudget(cap_usd=1.0), TOKEN).start()
    try:
        server.push(text("hello", input_tokens=20, output_tokens=30))
        with proxied(server, service) as proxy:
            reply = exchange(proxy, post(MESSAGE))
            metered = proxy.tally.usage.cost_usd
        ledger = service.budget.status()
    finally:
        service.stop()
    assert reply.startswith(b"HTTP/1.1 200") and metered
    assert ledger.granted == 1 and ledger.in_flight == 0 and ledger.spent_usd == round(metered, 8)


def test_a_request_the_run_wide_cap_has_no_room_for_never_goes_upstream(server):
    service = BudgetServer(("127.0.0.1", 0), RunBudget(cap_usd=0.0001), TOKEN).start()
    try:
        with proxied(server, service) as proxy:
            reply = exchange(proxy, post(MESSAGE))
            reasons = proxy.tally.reasons
            local = proxy.meter.reserved_usd
    finally:
        service.stop()
    assert reply.startswith(f"HTTP/1.1 {OVER_BUDGET_STATUS}".encode())
    assert b"run-wide cost cap ($0.0001)" in reply and any("run-wide" in r for r in reasons)
    # Nothing was sent, and the run's own meter let go of its reservation.
    assert server.model_requests() == [] and local == 0


def test_a_429_through_the_proxy_holds_the_provider_for_every_shard(server):
    service = BudgetServer(("127.0.0.1", 0), RunBudget(), TOKEN).start()
    try:
        server.push(rate_limited(retry_after_s=30))
        with proxied(server, service) as proxy:
            reply = exchange(proxy, post(MESSAGE))
        held = service.budget.admit("anthropic", None, shard="another")
        status = service.budget.status()
    finally:
        service.stop()
    assert reply.startswith(b"HTTP/1.1 429")
    assert status.throttles == {"anthropic": 1} and held.kind == "wait" and 29 < held.wait_s <= 30
    # The refused answer cost nothing.
    assert status.spent_usd == 0 and status.in_flight == 0
