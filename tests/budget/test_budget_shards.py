"""One budget, one rate and one back-off for N shards: shard processes against one
``skillab budget serve`` and one fake model server on 127.0.0.1 (real SDK, real wire protocol).

- the run-wide cap holds over 4 ``skillab run --shard i/4`` processes: what they spent together
  (as the provider billed it) stays under the cap, and the service's ledger says the same;
- a 429 one shard gets holds every shard's requests for the pause the provider asked for;
- a shard that cannot reach the service runs under its own cap and its report says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from skillab.budget.client import SharedBudget
from skillab.budget.ledger import RunBudget
from skillab.budget.service import BudgetServer
from skillab.cli import main

from ..fakes.model_server import FakeModelServer, rate_limited, text

ROOT = Path(__file__).resolve().parents[2]
MODEL = "claude-sonnet-4-5"
TOKEN = "budget-token-" + "Q" * 24
KEY = "sk-ant-api03-" + "Sh4rd" * 8
# What each answer costs: 50 tokens in, 400 out at the model's price.
ANSWER = {"input_tokens": 50, "output_tokens": 400}


@contextmanager
def budget_service(**settings):
    server = BudgetServer(("127.0.0.1", 0), RunBudget(**settings), TOKEN).start()
    try:
        yield server
    finally:
        server.stop()


def shard_env(fake: FakeModelServer, url: str | None) -> dict[str, str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url,
           "PYTHONPATH": str(ROOT / "runner"), "SKILLAB_BUDGET_TOKEN": TOKEN}
    env.pop("SKILLAB_BUDGET_URL", None)
    if url is not None:
        env["SKILLAB_BUDGET_URL"] = url
    return env


def suite(root: Path, cases: int) -> Path:
    skill = root / "shared-cap"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: shared-cap\ndescription: Answer in one line.\n---\n"
                                    "Answer in one line.\n")
    (skill / "eval.yaml").write_text("cases:\n" + "".join(
        f"  - name: c{i:02d}\n    prompt: Say {i}.\n    validators:\n      - cmd: 'true'\n" for i in range(cases)))
    return skill


def test_four_shards_spend_no_more_than_the_run_wide_cap_together(tmp_path):
    cap = 0.05
    skill = suite(tmp_path, 12)
    with FakeModelServer(lambda request: text("ok", **ANSWER)) as fake, budget_service(cap_usd=cap) as service:
        shards = [subprocess.Popen(
            [sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "llm", "--model", MODEL,
             "--max-tokens", "500", "--shard", f"{i}/4", "--concurrency", "4", "--no-cache", "--no-history",
             "--quiet", "--fail-on-verdict", "none", "--output", str(tmp_path / f"shard{i}.json")],
            env=shard_env(fake, service.url), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for i in range(1, 5)]
        errors = [shard.communicate(timeout=300)[1] for shard in shards]
        answered = fake.count
        ledger = service.budget.status()
    # Exit 1: a shard the cap stopped.
    assert all(shard.returncode in (0, 1) for shard in shards), errors
    documents = [json.loads((tmp_path / f"shard{i}.json").read_text()) for i in range(1, 5)]
    # What the provider billed, as each shard read it from the answers.
    billed = sum(doc["usage"]["total"]["cost_usd"] or 0.0 for doc in documents)
    # 24 arms would make 24 calls at about $0.0065 each; the cap lets fewer out, and what got
    # out is under it: no overshoot.
    assert answered < 24 and 0 < billed <= cap
    assert ledger.spent_usd == pytest.approx(billed) and ledger.in_flight == 0 and ledger.refused >= 1
    assert ledger.granted == answered
    stops = [doc.get("stopped") or "" for doc in documents]
    assert any("run-wide cost cap ($0.05)" in stop for stop in stops), stops
    assert TOKEN not in json.dumps(documents) and all(TOKEN not in err for err in errors)


SHARD_PROGRAM = """
import json, sys, time
from skillab.core.messages import Message
from skillab.providers.registry import ProviderSettings, create_client
from skillab.providers.retry import RetryPolicy
url = sys.argv[1] if sys.argv[1] != "-" else None
client = create_client(ProviderSettings("anthropic", "claude-sonnet-4-5", budget_url=url,
                                        policy=RetryPolicy(max_attempts=3, base_delay_s=0.05)))
for i in range(int(sys.argv[2])):
    client.create([Message("user", text=f"call {i}")], system="s", max_tokens=50)
print(json.dumps({"done": True}))
"""


def run_shards(fake: FakeModelServer, url: str | None, calls: int) -> list[subprocess.CompletedProcess]:
    env = shard_env(fake, url)
    shards = [subprocess.Popen([sys.executable, "-c", SHARD_PROGRAM, url or "-", str(calls)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    return [subprocess.CompletedProcess(s.args, s.wait(timeout=300), *s.communicate()) for s in shards]


class PushBackOnce:
    """Answers every request, but the ``at``-th gets a 429 asking for ``pause_s``; notes when
    each request arrived."""

    def __init__(self, at: int, pause_s: float):
        self.at, self.pause_s = at, pause_s
        self.arrivals: list[float] = []
        self.pushed_back_at: float | None = None
        self._lock = threading.Lock()

    def __call__(self, request):
        with self._lock:
            now = time.monotonic()
            self.arrivals.append(now)
            if len(self.arrivals) == self.at:
                self.pushed_back_at = now
                return rate_limited(retry_after_s=self.pause_s)
        return text("ok", delay_s=0.02, **ANSWER)


class WatchedBudget(RunBudget):
    """The service's ledger, noting when it granted each request and when a shard reported the 429."""

    def __init__(self) -> None:
        super().__init__()
        self.grants: list[float] = []
        self.throttled_at: float | None = None

    def admit(self, provider, upper_usd, shard=""):
        decision = super().admit(provider, upper_usd, shard)
        if decision.kind == "grant":
            self.grants.append(time.monotonic())
        return decision

    def throttle(self, provider, retry_after_s):
        self.throttled_at = time.monotonic()
        super().throttle(provider, retry_after_s)


def test_a_429_to_one_shard_holds_every_shards_requests_for_the_pause_it_asked():
    pause = 2.0
    handler = PushBackOnce(at=6, pause_s=pause)
    ledger = WatchedBudget()
    server = BudgetServer(("127.0.0.1", 0), ledger, TOKEN).start()
    try:
        with FakeModelServer(handler) as fake:
            shards = run_shards(fake, server.url, calls=6)
    finally:
        server.stop()
    assert all(shard.returncode == 0 for shard in shards), [shard.stderr[-500:] for shard in shards]
    assert ledger.status().throttles == {"anthropic": 1} and ledger.throttled_at is not None
    since = ledger.throttled_at
    # From the moment the shard that got the 429 said so, no shard is let out before the pause
    # is over (each shard makes one call at a time)...
    assert [t - since for t in ledger.grants if 0 < t - since < pause - 0.05] == []
    # ...and what reaches the provider in the pause is at most the other shards' calls already
    # on their way, one each.
    assert len([t for t in handler.arrivals if 0 < t - since < pause - 0.1]) <= 3
    assert len(handler.arrivals) == 4 * 6 + 1


def test_a_shard_that_cannot_reach_the_service_runs_under_its_own_cap_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SKILLAB_BUDGET_TOKEN", TOKEN)
    with budget_service() as gone:
        url = gone.url
    output = tmp_path / "results.json"
    code = main(["run", str(ROOT / "examples" / "changelog-entry"), "--adapter", "mock", "--no-cache",
                 "--no-history", "--quiet", "--budget-url", url, "--budget-wait-s", "0.5",
                 "--max-cost-usd", "2", "--output", str(output)])
    assert code in (0, 1)
    warnings = json.loads(output.read_text())["warnings"]
    [line] = [w for w in warnings if w.startswith("shared budget not used")]
    assert f"the budget service at {url}: it could not be reached" in line
    assert "ran under its local cap ($2, --max-cost-usd), not the run-wide cap" in line
    # The terminal report says it too.
    assert "shared budget not used" in capsys.readouterr().out
    assert TOKEN not in output.read_text()


@pytest.mark.parametrize("wait_s", [0.0, 30.0])
def test_a_shard_reaches_a_service_that_comes_up_within_its_wait(wait_s):
    with budget_service() as gone:
        port = gone.server_address[1]
    started: list[BudgetServer] = []
    late = threading.Timer(1.0, lambda: started.append(BudgetServer(("127.0.0.1", port), RunBudget(), TOKEN).start()))
    late.start()
    budget = SharedBudget(f"http://127.0.0.1:{port}", TOKEN)
    try:
        status = budget.reach(wait_s)
    finally:
        late.join()
        started[0].stop()
    if wait_s:
        assert status is not None and budget.fallback is None
    else:
        assert status is None and "it could not be reached (ConnectionRefusedError)" in str(budget.fallback)


def test_a_shard_that_starts_before_the_service_waits_for_it(tmp_path):
    # The shards of a Kubernetes Job or a SLURM array start in any order, the service among them.
    with budget_service() as gone:
        port = gone.server_address[1]
    started: list[BudgetServer] = []
    late = threading.Timer(5, lambda: started.append(
        BudgetServer(("127.0.0.1", port), RunBudget(cap_usd=1.0), TOKEN).start()))
    late.start()
    output = tmp_path / "results.json"
    with FakeModelServer(lambda request: text("ok", **ANSWER)) as fake:
        shard = subprocess.run(
            [sys.executable, "-m", "skillab", "run", str(suite(tmp_path, 2)), "--adapter", "llm", "--model", MODEL,
             "--max-tokens", "500", "--no-cache", "--no-history", "--quiet", "--fail-on-verdict", "none",
             "--budget-wait-s", "60", "--output", str(output)],
            env=shard_env(fake, f"http://127.0.0.1:{port}"), capture_output=True, text=True, timeout=120)
    late.join()
    [service] = started
    try:
        assert shard.returncode == 0, shard.stderr[-2000:]
        assert not [w for w in json.loads(output.read_text())["warnings"] if w.startswith("shared budget")]
        # Every model call went through the service.
        assert service.budget.status().granted == fake.count == 4
    finally:
        service.stop()


def test_model_calls_go_on_through_a_dead_service_under_the_local_cap(tmp_path):
    with FakeModelServer(lambda request: text("ok", **ANSWER)) as fake:
        with budget_service() as gone:
            url = gone.url
        shards = run_shards(fake, url, calls=2)
        assert all(shard.returncode == 0 for shard in shards), [shard.stderr[-500:] for shard in shards]
        assert fake.count == 8


def test_a_shard_with_the_wrong_token_is_refused_and_falls_back(tmp_path, monkeypatch):
    server = BudgetServer(("127.0.0.1", 0), RunBudget(cap_usd=1.0), "another-token-" + "x" * 20).start()
    monkeypatch.setenv("SKILLAB_BUDGET_TOKEN", TOKEN)
    try:
        from skillab.budget.client import SharedBudget

        budget = SharedBudget(server.url, TOKEN, shard="s1")
        ticket = budget.admit("anthropic", 0.5)
        assert ticket.remote is None
        assert budget.fallback == (f"the budget service at {server.url}: it refused this shard's run "
                                   "token (SKILLAB_BUDGET_TOKEN)")
        assert server.budget.status().granted == 0 and TOKEN not in repr(budget)
    finally:
        server.stop()
