"""``skillab regrade``: a run whose judge was down is judged again from its document, with no
agent call; a judge still down leaves the arms ``error``, never failed."""

from __future__ import annotations

import json

from skillab.cli import main

from ..fakes.model_server import FakeModelServer, Reply, server_error
from ..skillgen import make_skill

ANTHROPIC_KEY = "sk-ant-api03-" + "R" * 40
OPENAI_KEY = "sk-proj-" + "R" * 40


def judged_case(name: str) -> dict:
    return {"name": name, "prompt": f"Answer for {name}.", "expectations": ["The answer says SKILLED."]}


class Judge:
    """The judge's server: down (HTTP 500) or up, grading honestly on the answer's text."""

    def __init__(self) -> None:
        self.down = True

    def __call__(self, request):
        if self.down:
            return server_error(retry_after_ms=1)
        answer = request.last_user_text.split("BEGIN FINAL_OUTPUT", 1)[-1]
        passed = "SKILLED" in answer
        return Reply(json.dumps({"passed": passed, "reason": f"the answer {'says' if passed else 'lacks'} it",
                                 "score": 0.9}))


def agent(request):
    return Reply("SKILLED answer" if "SKILLED" in request.system_text else "plain answer")


def servers(monkeypatch, judge):
    agent_server, judge_server = FakeModelServer(agent).start(), FakeModelServer(judge).start()
    agent_server.serve_sdks(monkeypatch, anthropic_key=ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.openai_url)
    return agent_server, judge_server


def run(tmp_path, capsys, skill) -> tuple[int, dict]:
    out = tmp_path / "results.json"
    code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--judge-model", "gpt-4.1",
                 "--judge-consistency", "0", "--quiet", "--no-history", "--no-cache", "--output", str(out)])
    capsys.readouterr()
    return code, json.loads(out.read_text())


def test_a_judge_outage_is_regraded_without_any_agent_call(tmp_path, capsys, monkeypatch):
    skill = make_skill(tmp_path, [judged_case("a"), judged_case("b"), judged_case("c")])
    judge = Judge()
    agent_server, judge_server = servers(monkeypatch, judge)
    try:
        code, first = run(tmp_path, capsys, skill)
        assert code == 1 and first["verdict"] == "error"
        # The outage is an error of the grading, never a failed case.
        assert {c["outcome"] for c in first["cases"]} == {"error"}
        assert all(c["with_skill"]["final_output"] == "SKILLED answer" for c in first["cases"])
        agent_calls = agent_server.count

        still_down = main(["regrade", str(tmp_path / "results.json"), "--output", str(tmp_path / "down.json")])
        capsys.readouterr()
        down = json.loads((tmp_path / "down.json").read_text())
        assert still_down == 1 and {c["outcome"] for c in down["cases"]} == {"error"}

        judge.down = False
        asked_before = judge_server.count
        code = main(["regrade", str(tmp_path / "results.json"), "--markdown", str(tmp_path / "r.md")])
        printed = capsys.readouterr()
        regraded = json.loads((tmp_path / "results.json").read_text())
        assert code == 0, printed.err
        assert agent_server.count == agent_calls  # no agent ran
        assert judge_server.count - asked_before == 6  # one verdict per arm, asked again
        assert {c["outcome"] for c in regraded["cases"]} == {"flip_to_pass"}
        assert regraded["verdict"] == "pass"
        assert "regraded by gpt-4.1" in " ".join(regraded["warnings"])
        assert (tmp_path / "r.md").is_file()
    finally:
        agent_server.close()
        judge_server.close()


def test_another_judge_is_asked_every_verdict_and_recorded(tmp_path, capsys, monkeypatch):
    skill = make_skill(tmp_path, [judged_case("a"), judged_case("b")])
    judge = Judge()
    judge.down = False
    agent_server, judge_server = servers(monkeypatch, judge)
    try:
        code, first = run(tmp_path, capsys, skill)
        assert code == 0 and first["verdict"] == "pass"
        asked_before, agent_calls = judge_server.count, agent_server.count
        code = main(["regrade", str(tmp_path / "results.json"), "--judge-model", "gpt-4o",
                     "--output", str(tmp_path / "other.json")])
        capsys.readouterr()
        other = json.loads((tmp_path / "other.json").read_text())
        assert code == 0 and other["models"]["judge"] == "gpt-4o"
        assert judge_server.count - asked_before == 4 and agent_server.count == agent_calls
        assert {r.model for r in judge_server.model_requests()[-4:]} == {"gpt-4o"}
    finally:
        agent_server.close()
        judge_server.close()


def test_a_suite_edited_since_the_run_is_refused(tmp_path, capsys, monkeypatch):
    skill = make_skill(tmp_path, [judged_case("a")])
    judge = Judge()
    judge.down = False
    agent_server, judge_server = servers(monkeypatch, judge)
    try:
        run(tmp_path, capsys, skill)
        suite = skill / "eval.yaml"
        suite.write_text(suite.read_text().replace("Answer for a.", "Answer for b."))
        code = main(["regrade", str(tmp_path / "results.json")])
        err = capsys.readouterr().err
        assert code == 2 and "changed since that run" in err and "Traceback" not in err
    finally:
        agent_server.close()
        judge_server.close()


def test_a_placebo_arm_is_regraded_too_and_its_lifts_recomputed(tmp_path, capsys, monkeypatch):
    skill = make_skill(tmp_path, [judged_case("a"), judged_case("b")])
    judge = Judge()
    agent_server, judge_server = servers(monkeypatch, judge)
    try:
        out = tmp_path / "results.json"
        main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--judge-model", "gpt-4.1",
              "--judge-consistency", "0", "--quiet", "--no-history", "--no-cache", "--placebo", "--output", str(out)])
        first = json.loads(out.read_text())
        assert {c["placebo_outcome"] for c in first["cases"]} == {"error"}
        judge.down = False
        agent_calls, asked = agent_server.count, judge_server.count
        assert main(["regrade", str(out)]) == 0
        capsys.readouterr()
        regraded = json.loads(out.read_text())
        assert agent_server.count == agent_calls and judge_server.count - asked == 6
        assert {c["placebo_outcome"] for c in regraded["cases"]} == {"flip_to_pass"}
        assert regraded["placebo"]["content_delta_pts"] == 100.0
        assert regraded["placebo"]["presence_delta_pts"] == 0.0
    finally:
        agent_server.close()
        judge_server.close()
