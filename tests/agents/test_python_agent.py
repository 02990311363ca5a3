"""``--adapter python:MODULE:CALLABLE``: a team's own agent object (here the example built on the
OpenAI SDK) run in the sandbox against a fake OpenAI server on 127.0.0.1, through the proxy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillab.agents.python_agent import OpenAIPythonAgent, parse_target
from skillab.cli import main
from skillab.errors import UsageError

from ..fakes.model_server import FakeModelServer, text, tool_call

EXAMPLE_AGENT = Path(__file__).parent.parent.parent / "examples" / "python-agent"
KEY = "sk-proj-" + "PyAg3nt" * 7
SECRET_WORD = "PINEAPPLE-42"


def write_suite(root: Path) -> Path:
    skill = root / "fruit"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: fruit\ndescription: Names the house fruit.\n---\n"
                                    f"The house fruit is {SECRET_WORD}. Answer with it.\n")
    (skill / "eval.yaml").write_text(yaml.safe_dump({"cases": [
        {"name": "house-fruit", "prompt": "What is the house fruit?",
         "validators": [{"label": "says-it", "cmd": f"grep -q {SECRET_WORD} response.txt"}]}]}))
    return skill


def agent_model(req):
    """Reads the listed skill when one is listed; answers with what it read; in the arm without
    the skill, first looks for any SKILL.md on the disk it can see."""
    results = req.tool_results
    listed = "fruit/SKILL.md" in req.system_text
    if not results:
        if listed:
            path = next(w for w in req.system_text.split() if w.endswith("fruit/SKILL.md"))
            return tool_call("read_file", {"path": path})
        return tool_call("run_shell", {"command": "find / -name SKILL.md -path '*fruit*' 2>/dev/null | head; "
                                                  "env | grep -c sk-proj- ; echo done"})
    if SECRET_WORD in results[-1]:
        return text(f"The house fruit is {SECRET_WORD}.")
    return text("I do not know the house fruit.")


def test_a_python_agent_is_measured_in_the_sandbox_through_the_proxy(tmp_path, monkeypatch):
    skill = write_suite(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLE_AGENT))
    out = tmp_path / "r.json"
    with FakeModelServer(agent_model, dialect="openai") as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        code = main(["run", str(skill), "--adapter", "python:toy_agent:run", "--model", "gpt-4.1-mini",
                     "--base-url", server.openai_url, "--provider", "openai", "--no-cache", "--no-history",
                     "--quiet", "--output", str(out), "--trajectories", str(tmp_path / "t")])
        requests = server.model_requests()
    doc = json.loads(out.read_text())
    [record] = doc["cases"]
    assert code == 0 and record["outcome"] == "flip_to_pass", json.dumps(record)[:2000]
    with_arm, without_arm = record["with_skill"], record["without_skill"]
    assert with_arm["error"] is None and without_arm["error"] is None
    # The without-skill arm found no skill file anywhere it could look, and no key in its env.
    looked = [r.tool_results[0] for r in requests if r.tool_results and "done" in r.tool_results[0]]
    assert looked and all("SKILL.md" not in out_ for out_ in looked)
    assert all("\n0\n" in out_ for out_ in looked)
    # Every model call carried the arm's token to the proxy, never the key; the proxy sent the key.
    assert requests and all(r.auth == f"Bearer {KEY}" for r in requests)
    # Usage is what the proxy counted.
    assert with_arm["usage"]["input_tokens"] > 0 and without_arm["usage"]["input_tokens"] > 0
    assert KEY not in out.read_text()
    assert doc["adapter"]["name"] == "python:toy_agent:run"


def test_an_agent_that_raises_is_an_error_of_the_arm_never_a_failed_case(tmp_path, monkeypatch):
    skill = write_suite(tmp_path)
    (tmp_path / "broken_agent.py").write_text("def run(task):\n    raise RuntimeError('model client misconfigured')\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    with FakeModelServer(agent_model, dialect="openai") as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        main(["run", str(skill), "--adapter", "python:broken_agent:run", "--model", "gpt-4.1-mini",
              "--base-url", server.openai_url, "--provider", "openai", "--no-cache", "--no-history",
              "--quiet", "--output", str(out)])
    [record] = json.loads(out.read_text())["cases"]
    assert record["outcome"] == "error"
    assert "model client misconfigured" in record["with_skill"]["error"]


def test_a_with_skill_arm_without_proof_of_offer_is_invalid():
    agent = OpenAIPythonAgent.__new__(OpenAIPythonAgent)
    stdout = json.dumps({"type": "result", "answer": "hi", "events": []}) + "\n"
    summary = agent.parse(stdout, Path("/w"), "fruit", offered=("fruit",))
    assert summary.error and "was not offered" in summary.error
    proved = json.dumps({"type": "offered", "skills": ["fruit"]}) + "\n" + stdout
    assert agent.parse(proved, Path("/w"), "fruit", offered=("fruit",)).error is None


@pytest.mark.parametrize("name", ["python:", "python:mod", "python:mod:", "python:1mod:run", "python:mod:run-x"])
def test_a_bad_target_is_refused_with_its_form(name):
    with pytest.raises(UsageError, match="python:MODULE:CALLABLE"):
        parse_target(name)
