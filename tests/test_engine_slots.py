"""``--concurrency N`` bounds the agents working at once; the arms around them overlap."""

from __future__ import annotations

import threading
from pathlib import Path

from skillab.agents.mock import MockAdapter
from skillab.core.events import CaseFinished
from skillab.engine.prepare import prepare_suite
from skillab.engine.runner import Execution, arms_in_flight

from .configs import run_config


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


def _suite(root: Path, cases: int) -> Path:
    skill = root / "slots"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: slots\ndescription: Counts agents.\n---\nAnswer.\n")
    lines = ["cases:"]
    for i in range(cases):
        lines += [f"  - name: c{i}", f"    prompt: \"Task {i}.\"", "    validators:",
                  "      - cmd: \"true\""]
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
