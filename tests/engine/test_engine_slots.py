"""``--concurrency N`` bounds the agents working at once; the arms around them overlap."""

from __future__ import annotations

import threading
from pathlib import Path

from skillab.agents.agent import AgentAdapter
from skillab.agents.mock import MockAdapter
from skillab.core.events import CaseFinished
from skillab.engine.prepare import prepare_suite
from skillab.engine.runner import Execution, arms_in_flight
from skillab.providers import RetryPolicy
from skillab.providers.anthropic import AnthropicClient

from ..configs import run_config
from ..fakes.model_server import FakeModelServer, http_error, text, tool_call


class CountingAdapter(MockAdapter):
    """The mock adapter, counting how many of its runs overlap."""

    def __init__(self) -> None:
        super().__init__(latency_ms=40)
        self._lock = threading.Lock()
        self.now = self.most = self.calls = 0

    def run(self, request):
        with self._lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        try:
            return super().run(request)
        finally:
            with self._lock:
                self.now -= 1


def _suite(root: Path, cases: int, validator: str = "true") -> Path:
    skill = root / "slots"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: slots\ndescription: Counts agents.\n---\nAnswer.\n")
    lines = ["cases:"]
    for i in range(cases):
        lines += [f"  - name: c{i}", f"    prompt: \"Task {i}.\"", "    validators:",
                  f"      - cmd: \"{validator}\""]
    (skill / "eval.yaml").write_text("\n".join(lines) + "\n")
    return skill


def test_never_more_agents_than_the_concurrency_and_every_tick_counted_once(tmp_path):
    config = run_config(adapter="mock", cache_enabled=False, concurrency=3, runs=2)
    prepared = prepare_suite(_suite(tmp_path, 6), config.engine)
    adapter = CountingAdapter()
    ticks: list[int] = []
    execution = Execution(prepared, config, adapter, None,
                          lambda event: ticks.append(event.done) if isinstance(event, CaseFinished) else None)
    report = execution.run()
    assert adapter.calls == 6 * 2 * 2
    assert 1 < adapter.most <= 3
    assert ticks == list(range(1, 13)) and len(report.log.records) == 12
    assert all(r.outcome == "pass_kept" for r in report.log.records)


def test_arms_in_flight_leave_room_for_set_up_and_grading():
    assert arms_in_flight(1) == 1
    assert arms_in_flight(4) == 8


def test_the_agent_loop_keeps_exactly_concurrency_model_calls_in_flight(tmp_path):
    """Every model call waits at the server until ``--concurrency`` calls are there at once: the
    run finishes only if the engine keeps that many in flight at every turn of every arm (none
    held back by a lock or a step between turns) and never more."""
    concurrency, cases = 4, 8  # 16 arms of two turns: eight full rounds of four calls
    barrier = threading.Barrier(concurrency, timeout=20)
    broken: list[str] = []

    def reply(request):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            broken.append(request.last_user_text)
            return http_error(400, "fewer calls in flight than the concurrency", "invalid_request_error")
        if not request.tool_results:
            return tool_call("write_file", {"path": "out.txt", "content": "done\n"})
        return text("Done.")

    config = run_config(adapter="agent", model="claude-haiku-4-5", cache_enabled=False,
                        concurrency=concurrency)
    prepared = prepare_suite(_suite(tmp_path, cases, "test -s out.txt"), config.engine)
    with FakeModelServer(reply) as server:
        client = AnthropicClient("claude-haiku-4-5", api_key="sk-ant-test-" + "s" * 20,
                                 base_url=server.url, policy=RetryPolicy(max_attempts=1),
                                 concurrency=2 * concurrency)
        report = Execution(prepared, config, AgentAdapter(client), None).run()
        assert not broken
        assert server.max_in_flight == concurrency
        assert server.count == cases * 2 * 2
    assert all(r.outcome == "pass_kept" for r in report.log.records)
