"""Model calls in flight: ``--concurrency`` of them, shaped by the provider's own 429s."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from skillab.providers import Message
from skillab.providers.rate import AdaptiveLimit, provider_slot
from skillab.providers.registry import create_client

from ..configs import agent_settings_of, judge_settings_of, run_config
from ..fakes.model_server import FakeModelServer, rate_limited, text

KEY = "sk-ant-test-" + "r" * 24


def test_concurrency_governs_the_calls_in_flight():
    """``--concurrency 32`` used to reach the provider as 8 calls at once (a per-provider cap of 8
    that no flag set): against a 200 ms server it took 4x the ideal. The cap is now the run's
    concurrency, for the agent's model and the judge's alike."""
    config = run_config(adapter="agent", model="claude-haiku-4-5", concurrency=32)
    settings = agent_settings_of(config)
    assert settings.concurrency == 32 and judge_settings_of(config).concurrency == 32
    # The first 32 calls are answered only once all 32 are in (a barrier, not a sleep, so a loaded
    # machine cannot make the count depend on timing); a cap below 32 breaks the barrier.
    together = threading.Barrier(32, timeout=30)
    arrived = iter(range(64))
    lock = threading.Lock()

    def reply(request):
        with lock:
            order = next(arrived)
        if order < 32:
            together.wait()
        return text("ok")

    with FakeModelServer(reply) as server:
        client = create_client(settings, {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        with ThreadPoolExecutor(max_workers=40) as pool:
            list(pool.map(lambda i: client.create([Message.user(f"q{i}")], system="s"), range(64)))
        assert not together.broken and server.max_in_flight == 32


def test_a_set_provider_concurrency_still_wins():
    config = run_config(adapter="agent", model="claude-haiku-4-5", concurrency=32, provider_concurrency=3)
    assert agent_settings_of(config).concurrency == 3


def test_a_429_halves_the_window_and_recovers_with_answers():
    limit = AdaptiveLimit(16)
    limit.throttled(None)
    assert limit.window == 8 and limit.throttles == 1
    limit.throttled(None)  # the same push-back seen by another request in flight
    assert limit.window == 8
    for _ in range(8):
        with limit:
            pass
    assert 8.9 < limit.window < 9.1  # about one more per window of answers
    for _ in range(1000):
        with limit:
            pass
    assert limit.window == 16


def test_the_window_bounds_the_requests_in_flight():
    limit = AdaptiveLimit(8)
    limit.throttled(None)
    inside, most = 0, 0
    lock = threading.Lock()

    def one(_: int) -> None:
        nonlocal inside, most
        with limit:
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.02)
            with lock:
                inside -= 1

    # 12 requests: the window is 4 after the halving and grows by 1/window an answer, so it passes 5
    # after 5 answers and 6 only after 10, when 2 requests are left: at most 5 are ever inside,
    # whatever the timing (with 16, 6 could be, once 6 were left).
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one, range(12)))
    assert most <= 5


def test_a_retry_after_holds_every_arm_not_just_the_one_throttled():
    """The first request is answered 429 with retry-after-ms 300; the other arms' requests, sent
    once the 429 is in, through the same endpoint, start no earlier than that pause ends (they used
    to go straight into the provider's 429s)."""
    arrivals: list[tuple[float, str]] = []
    lock = threading.Lock()
    throttled_at: list[float] = []

    def reply(request):
        now = time.monotonic()
        with lock:
            arrivals.append((now, request.last_user_text))
            if not throttled_at:
                throttled_at.append(now)
                return rate_limited(retry_after_ms=300)
        return text("ok")

    config = run_config(adapter="agent", model="claude-haiku-4-5", concurrency=4)
    with FakeModelServer(reply) as server:
        client = create_client(agent_settings_of(config),
                               {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        with ThreadPoolExecutor(max_workers=5) as pool:
            first = pool.submit(client.create, [Message.user("first")], system="s")
            shared = provider_slot(f"anthropic:{server.url}", 4)
            while not shared.throttles:  # the 429 is in; its retry waits out the pause
                time.sleep(0.01)
            rest = [pool.submit(client.create, [Message.user(f"q{i}")], system="s") for i in range(4)]
            for future in (first, *rest):
                future.result()
    later = [t for t, prompt in arrivals if prompt.startswith("q")]
    assert len(later) == 4 and min(later) >= throttled_at[0] + 0.29


def _pool_connections(sdk_client) -> int:
    """Connections one SDK client's HTTP pool holds (httpcore's listing, read, never changed)."""
    return len(sdk_client._client._transport._pool.connections)


def test_calls_in_flight_spread_over_pools_of_eight():
    """One SDK client's connection pool scans all its connections under one lock twice a call,
    polling each idle one: at 128 calls in flight the calls waited on that lock longer than on the
    provider. A client at ``--concurrency 32`` sends over pools of at most 8 connections each,
    every request with the run's key, and still reaches 32 calls at once."""
    config = run_config(adapter="agent", model="claude-haiku-4-5", concurrency=32)
    together = threading.Barrier(32, timeout=30)

    def reply(request):
        together.wait()
        return text("ok")

    with FakeModelServer(reply) as server:
        client = create_client(agent_settings_of(config),
                               {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        with ThreadPoolExecutor(max_workers=32) as pool:
            list(pool.map(lambda i: client.create([Message.user(f"q{i}")], system="s"), range(32)))
        assert not together.broken and server.max_in_flight == 32
        sent = {r.auth for r in server.model_requests()}
        assert len(sent) == 1 and KEY in sent.pop()
        sdks = getattr(client, "_pools", None)
        per_pool = [_pool_connections(sdk) for sdk in (sdks.clients if sdks else [client._sdk])]
        assert sum(per_pool) == 32 and max(per_pool) <= 8


def test_up_to_eight_calls_use_the_sdks_own_client():
    settings = agent_settings_of(run_config(adapter="agent", model="claude-haiku-4-5", concurrency=8))
    client = create_client(settings, {"ANTHROPIC_API_KEY": KEY})
    assert client._pools.clients == [client._sdk]


def _call_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name == "skillab-model-call" and t.ident}


def test_model_call_threads_are_kept_for_the_next_calls():
    """Each attempt ran in a thread started for it, and starting one waits for it to run: with a
    hundred calls in flight that wait took a tenth of a second a call. Threads are now kept: 8
    calls at once still get 8 threads (none waits behind another: the server answers none before
    all 8 arrived), and the next 8 use the same ones."""
    settings = agent_settings_of(run_config(adapter="agent", model="claude-haiku-4-5", concurrency=8))
    together = threading.Barrier(8, timeout=30)

    def reply(request):
        together.wait()
        return text("ok")

    with FakeModelServer(reply) as server:
        client = create_client(settings, {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url})
        seen = []
        for _ in range(2):
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(lambda i: client.create([Message.user(f"q{i}")], system="s"), range(8)))
            assert not together.broken
            seen.append(_call_threads())
        assert len(seen[0]) >= 8 and seen[1] == seen[0]
