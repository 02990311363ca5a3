"""The session: settings per component, the engine's typed event stream, reporters on it."""

from __future__ import annotations

import dataclasses
import errno
import json
from pathlib import Path

import pytest

from skillab.core import settings as settings_module
from skillab.core.events import ArmFinished, Broadcast, CaseFinished, RunFinished, RunStarted, SubscriberFailed
from skillab.core.runlog import RunLog
from skillab.core.settings import Credentials, Shard
from skillab.engine.resume import with_journal
from skillab.log.checkpoint import Checkpoint, read_journal
from skillab.log.results import document
from skillab.secrets import Redactor
from skillab.session import Session, SuiteRun

from ..configs import run_config
from ..skillgen import answers, grep_case, make_skill

KEY = "sk-ant-api03-" + "Session" * 7


class Collect:
    name = "collector"

    def __init__(self) -> None:
        self.events: list = []

    def on_event(self, event) -> None:
        self.events.append(event)


def test_settings_are_typed_per_component_with_no_untyped_bag():
    for cls in (settings_module.EngineSettings, settings_module.AgentSettings,
                settings_module.JudgeSettings, settings_module.ModelRole,
                settings_module.ProviderTuning, settings_module.RunConfig):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert all(f.type not in ("dict", "dict[str, Any]") for f in dataclasses.fields(cls)), cls


def test_credentials_are_read_once_and_never_printed(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    config = run_config(adapter="agent", model="claude-haiku-4-5")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert config.credentials.environ["ANTHROPIC_API_KEY"] == KEY
    assert KEY not in repr(config) and KEY not in str(config.credentials)
    given = Credentials.resolve({"OPENAI_API_KEY": "sk-given", "ANTHROPIC_API_KEY": ""}, environ={})
    assert dict(given.environ) == {"OPENAI_API_KEY": "sk-given"}


def test_the_engine_tells_each_step_in_order_and_the_checkpoint_journals_every_arm(tmp_path):
    names = ["a", "b"]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    seen = Collect()
    journal = tmp_path / "out.checkpoint.jsonl"
    checkpoint = Checkpoint(journal, Redactor.from_environ({}))
    config = run_config(adapter="mock", cache_enabled=False, concurrency=1)
    result = Session([seen, checkpoint]).run([SuiteRun(skill, config)])
    checkpoint.close(complete=False)
    kinds = [type(e).__name__ for e in seen.events]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    arms = [e for e in seen.events if isinstance(e, ArmFinished)]
    assert sorted((e.case, e.arm) for e in arms) == [(n, a) for n in names for a in ("with_skill", "without_skill")]
    for event in (e for e in seen.events if isinstance(e, CaseFinished)):
        position = seen.events.index(event)
        finished = {(e.case, e.arm) for e in seen.events[:position] if isinstance(e, ArmFinished)}
        assert {(event.record.case_name, "with_skill"), (event.record.case_name, "without_skill")} <= finished
    assert [e.done for e in seen.events if isinstance(e, CaseFinished)] == [1, 2]
    # The session's log is the finished run's, redacted once on its way out.
    assert document(seen.events[-1].log, {}) == result.logs[0].to_json() and not seen.events[-1].interrupted
    start = seen.events[0]
    assert isinstance(start, RunStarted) and (start.cases, start.adapter) == (2, "mock")
    # The journal reads back as a partial document whose arms match the finished document's.
    (partial,) = read_journal(journal)
    assert partial["suite"]["skill_hash"] == result.logs[0].settings.suite.skill_hash
    assert len(partial["cases"]) == 2 and len(journal.read_text().splitlines()) == 5
    (merged,) = with_journal([], [partial])
    assert sorted(c["case_name"] for c in merged["cases"]) == names
    assert all(c["with_skill"]["passed"] and not c["without_skill"]["passed"] for c in merged["cases"])


def test_the_checkpoint_journal_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    skill = make_skill(tmp_path, [grep_case("leak")], responses={"leak": answers(f"SKILLED {KEY}", KEY)})
    journal = tmp_path / "r.checkpoint.jsonl"
    config = run_config(adapter="mock", cache_enabled=False)
    checkpoint = Checkpoint(journal, Redactor.from_environ(config.credentials.environ))
    Session([checkpoint]).run([SuiteRun(skill, config)])
    checkpoint.close(complete=False)
    text = journal.read_text()
    assert KEY not in text and json.loads(text.splitlines()[1])["arm"] in ("with_skill", "without_skill")


def test_a_secret_in_an_agents_output_never_reaches_a_log_the_session_yields(tmp_path):
    # A key handed over as an Action input: not in the process environment (where the engine's
    # own masking finds it) and not key-shaped, so only the session's redaction can mask it.
    secret = "correct-horse-battery-staple-4711"
    skill = make_skill(tmp_path, [grep_case("leak")],
                       responses={"leak": answers(f"SKILLED {secret}", f"no {secret}")})
    config = dataclasses.replace(run_config(adapter="mock", cache_enabled=False),
                                 credentials=Credentials.resolve({"OPENAI_API_KEY": secret}, environ={}))
    handed: list = []
    result = Session(on_document=lambda run, log: handed.append(log)).run([SuiteRun(skill, config)])
    assert len(result.logs) == 1 and handed == result.logs
    (log,) = result.logs
    assert isinstance(log, RunLog)
    # Typed fields too, not only the JSON form: a reporter reading the log sees the mask.
    (record,) = log.records
    assert secret not in record.with_skill.final_output and "SKILLED" in record.with_skill.final_output
    assert secret not in record.with_skill.transcript and secret not in record.without_skill.final_output
    assert secret not in json.dumps(log.to_json())


def test_the_session_not_the_engine_records_the_history(tmp_path):
    from skillab.engine import run_suite

    skill = make_skill(tmp_path / "s", [grep_case("a")], responses={"a": answers("SKILLED", "plain")})
    history = tmp_path / "history.jsonl"
    config = run_config(adapter="mock", cache_enabled=False, history_path=history)
    report = run_suite(skill, config)
    assert not history.exists() and report.log.settings.trend is None
    (log,) = Session().run([SuiteRun(skill, config)]).logs
    assert len(history.read_text().splitlines()) == 1
    assert log.settings.trend is not None and log.settings.trend.previous is None
    # A shard is part of a run: only the merged document takes a place in the trend.
    shard = dataclasses.replace(config, engine=dataclasses.replace(config.engine, shard=Shard(1, 2)))
    Session().run([SuiteRun(skill, shard)])
    assert len(history.read_text().splitlines()) == 1


def test_a_failing_reporter_does_not_keep_the_others_from_the_event():
    class Broken:
        name = "checkpoint"

        def on_event(self, event) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    seen = Collect()
    with pytest.raises(SubscriberFailed, match="a checkpoint could not be written"):
        Broadcast([Broken(), seen])(RunFinished("s", {}, False))
    assert len(seen.events) == 1


def test_a_session_stops_at_a_failure_it_is_told_to_stop_at(tmp_path):
    good = make_skill(tmp_path / "one", [grep_case("a")], responses={"a": answers("SKILLED", "x")})
    missing = tmp_path / "nowhere"
    failed: list[Path] = []

    def stop(run: SuiteRun, exc: Exception) -> bool:
        failed.append(run.target)
        return False

    config = run_config(adapter="mock", cache_enabled=False)
    result = Session(on_error=stop).run([SuiteRun(missing, config), SuiteRun(good, config)])
    assert failed == [missing] and result.logs == []


def test_one_suite_under_two_agents_is_two_experiments_in_the_journal(tmp_path):
    journal = tmp_path / "r.checkpoint.jsonl"
    lines = []
    for adapter in ("mock", "agent"):
        lines.append({"format": "skillab.checkpoint/1", "suite": {"path": "s/eval.yaml", "skill": "s",
                      "skill_hash": "h", "adapter": adapter, "model": None}})
        lines.append({"suite": "s/eval.yaml", "adapter": adapter, "case_name": "a", "run_index": 0,
                      "arm": "with_skill", "record": {"by": adapter}})
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"suite": "s/eval.y')
    docs = read_journal(journal)
    assert [(d["adapter"]["name"], d["cases"][0]["with_skill"]["by"]) for d in docs] == [
        ("mock", "mock"), ("agent", "agent")]
    earlier = {**docs[0], "cases": [{"case_name": "a", "run_index": 0, "with_skill": {"errored": True}}]}
    (merged, _) = with_journal([earlier], docs)
    assert merged["cases"][0]["with_skill"] == {"by": "mock"}  # the errored arm gives way
