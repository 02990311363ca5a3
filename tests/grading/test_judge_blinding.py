"""The judge never sees which arm it grades: no skill name, no SKILL.md text, in any arm."""

from __future__ import annotations

import json

from skillab.cli import main
from skillab.grading.blinding import WITHHELD_OUTPUT, blind_transcript
from skillab.grading.judge import fenced_blocks
from skillab.skill.loader import load_skill

from ..fakes.model_server import FakeModelServer, HttpError, http_error, text, tool_call
from ..skillgen import make_skill

BODY = "When you write the weekly status report, always close with a line reading SIGNED-OFF."


def test_blinding_masks_the_skill_and_keeps_everything_else(tmp_path):
    skill = load_skill(make_skill(tmp_path, [], name="status-writer", body=BODY))
    transcript = "\n".join([
        "[Step 1] User: Write the report.",
        "[Step 2] Agent → tool: read_file(path=.skills/status-writer/SKILL.md)",
        f"[Step 3] Tool output: ---\nname: status-writer\n---\n{BODY}",
        "[Step 4] Agent → tool: read_file(path=notes.txt)",
        "[Step 5] Tool output: three tasks done",
        "[Step 6] Agent: Report written. SIGNED-OFF",
    ])
    blinded = blind_transcript(transcript, [skill])
    assert BODY not in blinded and "status-writer" not in blinded and "SKILL.md" not in blinded
    assert f"[Step 3] {WITHHELD_OUTPUT}" in blinded
    assert "[Step 5] Tool output: three tasks done" in blinded and "SIGNED-OFF" in blinded
    assert blind_transcript("[Step 1] User: hi", [skill]) == "[Step 1] User: hi"


def test_no_judge_request_tells_the_arms_apart(tmp_path, capsys, monkeypatch):
    case = {"name": "weekly", "prompt": "Write the weekly status report.",
            "expectations": ["The report ends with a sign-off line."]}
    skill = make_skill(tmp_path, [case], name="status-writer", body=BODY)
    judged: list[str] = []

    def handler(req):
        if req.api == "openai":  # the judge
            judged.append(req.raw)
            return text(json.dumps({"passed": True, "reason": "It ends with a sign-off."}))
        if "SKILL.md" in req.system_text and not req.tool_results:
            return tool_call("read_file", {"path": ".skills/status-writer/SKILL.md"})
        return text("Report: three tasks done. SIGNED-OFF")

    with FakeModelServer(handler) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "B" * 40, openai_key="sk-" + "b" * 40)
        code = main(["run", str(skill), "--adapter", "agent", "--skill-loading", "discover",
                     "--model", "claude-haiku-4-5", "--judge-model", "gpt-4o", "--no-cache",
                     "--no-history", "--quiet", "--output", str(tmp_path / "r.json")])
    assert code == 0, capsys.readouterr().err
    # One expectation, two arms; then both verdicts asked again, round after round, until 14
    # agreeing re-asks put the agreement's lower bound above 80%.
    assert len(judged) == 2 + 14
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["judge_consistency"]["sampled"] == 14 and doc["judge_consistency"]["agreement"] == 1.0
    assert any("withheld from the judge" in raw for raw in judged)  # the with-skill arm read it
    for raw in judged:
        for needle in ("status-writer", "SKILL.md", "always close with a line reading"):
            assert needle not in raw


def test_a_judge_that_disagrees_with_itself_withholds_the_lift(tmp_path, capsys, monkeypatch):
    cases = [{"name": f"c{i}", "prompt": f"Task {i}.", "expectations": ["The answer is complete."]}
             for i in range(6)]
    skill = make_skill(tmp_path, cases, name="status-writer", body=BODY)
    asked: dict[str, int] = {}

    def handler(req):
        if req.api == "openai":
            # First asks: the with-skill arm passes. Asked again (a new fence tag): the opposite.
            blocks = fenced_blocks(req.last_user_text)
            key = blocks["PROMPT"] + blocks["FINAL_OUTPUT"]
            asked[key] = asked.get(key, 0) + 1
            first = asked[key] == 1
            passed = ("SIGNED-OFF" in req.raw) == first
            return text(json.dumps({"passed": passed, "reason": "Judged."}))
        with_skill = BODY in req.system_text
        return text("Done. SIGNED-OFF" if with_skill else "Done.")

    with FakeModelServer(handler) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "C" * 40, openai_key="sk-" + "c" * 40)
        code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5",
                     "--judge-model", "gpt-4o", "--no-cache", "--no-history",
                     "--output", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md")])
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "r.json").read_text())
    check = doc["judge_consistency"]
    # Asked again until the interval decides: 10 compared re-asks (the least it decides on), none agreed.
    assert check["sampled"] == 10 and check["agreement"] == 0.0 and check["lift_withheld"] is True
    assert check["decided"] == "interval" and check["ci95"][1] < 0.8
    stats = doc["statistics"]
    assert stats["summary"] is None and stats["ci95"] is None and "judge agreed" in stats["withheld"]
    assert "below 80%, so the lift is withheld" in out and "evidence" not in out
    assert "the lift is withheld**" in (tmp_path / "r.md").read_text()
    assert code == 0


def test_a_judge_outage_during_the_consistency_check_is_disclosed(tmp_path, capsys, monkeypatch):
    """The verdicts were read, then every re-ask failed (the judge's quota ran out): the check
    measured nothing, and the reports say so instead of dropping it without a word."""
    cases = [{"name": f"c{i}", "prompt": f"Task {i}.", "expectations": ["The answer is complete."]}
             for i in range(3)]
    skill = make_skill(tmp_path, cases, name="status-writer", body=BODY)
    judged = []

    def handler(req):
        if req.api == "openai":
            judged.append(req)
            if len(judged) > 6:  # 3 cases x 2 arms graded; every re-ask after that fails
                return http_error(400, "quota exhausted", "invalid_request_error")
            return text(json.dumps({"passed": True, "reason": "Complete."}))
        return text("Done. SIGNED-OFF")

    with FakeModelServer(handler) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "D" * 40, openai_key="sk-" + "d" * 40)
        code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5",
                     "--judge-model", "gpt-4o", "--no-cache", "--no-history",
                     "--output", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md")])
    out = capsys.readouterr().out
    check = json.loads((tmp_path / "r.json").read_text())["judge_consistency"]
    assert check["sampled"] == 5 and check["errored"] == 5 and check["agreement"] is None
    assert "consistency check failed: all 5 re-asked verdicts errored" in out
    assert "consistency check failed: all 5 re-asked verdicts errored" in (tmp_path / "r.md").read_text()
    assert code == 0


def test_a_judge_reply_of_the_wrong_shape_in_the_consistency_check_does_not_end_the_run(
    tmp_path, monkeypatch
):
    """A 200 whose body is no reply (a choice without its message) once escaped the re-asks as
    an AttributeError: the finished, paid-for run ended in a traceback with no results. It is
    an unreadable answer: retried, then an errored re-ask."""
    from skillab.core.events import Broadcast
    from skillab.engine.runner import run_suite

    from ..configs import run_config

    cases = [{"name": f"c{i}", "prompt": f"Task {i}.", "expectations": ["The answer is complete."]}
             for i in range(2)]
    skill = make_skill(tmp_path, cases, name="status-writer", body=BODY)
    no_message = HttpError(200, {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                                 "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]})
    judged = []

    def handler(req):
        if req.api == "openai":
            judged.append(req)
            return no_message if len(judged) > 4 else text(json.dumps({"passed": True, "reason": "Complete."}))
        return text("Done.")

    with FakeModelServer(handler) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "E" * 40, openai_key="sk-" + "e" * 40)
        config = run_config(adapter="llm", model="claude-haiku-4-5", judge_model="gpt-4o",
                            cache_enabled=False, max_attempts=2, retry_base_delay_s=0.001)
        report = run_suite(skill, config, emit=Broadcast([]))
    check = report.log.settings.judge_consistency
    # Five errored re-asks with none compared: the judge is down, the check stops.
    assert check.sampled == 5 and check.errored == 5 and check.agreement is None
    assert len(judged) == 4 + 5 * 2  # each re-ask tried twice (max_attempts), then errored
    assert [r.outcome for r in report.log.records] == ["pass_kept", "pass_kept"]
