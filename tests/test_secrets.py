"""Secret masking: key shapes, literal values of secret variables, nested documents."""

from __future__ import annotations

import json

import pytest

from skillab.secrets import (
    MASK,
    Redactor,
    is_secret_env_var,
    redact,
    redact_data,
    secret_values,
)

ANTHROPIC_KEY = "sk-ant-api03-" + "A1b2C3d4" * 6
OPENAI_KEY = "sk-proj-" + "Zz9Yy8Xx" * 5


def test_masks_known_key_shapes():
    text = (
        f"anthropic {ANTHROPIC_KEY} openai {OPENAI_KEY} "
        "gh ghp_" + "a" * 36 + " pat github_pat_" + "B" * 40 + " aws AKIAABCDEFGHIJKLMNOP"
    )
    out = redact(text, environ={})
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, "ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in out
    assert out.count(MASK) == 5
    assert out.startswith("anthropic [REDACTED] openai")


def test_masks_literal_values_of_secret_variables():
    env = {"ANTHROPIC_API_KEY": "plain-looking-value-123", "MY_SERVICE_TOKEN": "tok-98765432"}
    out = redact("echo plain-looking-value-123 and tok-98765432", environ=env)
    assert out == f"echo {MASK} and {MASK}"


def test_leaves_ordinary_text_and_short_values_alone():
    env = {"GITHUB_TOKEN": "x", "PATH": "/usr/bin"}
    text = "sk-short is fine, task-list and /usr/bin stay, x stays"
    assert redact(text, environ=env) == text


def test_a_word_that_ends_in_sk_is_not_a_key_but_a_glued_on_key_still_is():
    # Real names that the OpenAI shape used to eat: AvdLee/Xcode-Disk-Cleanup-Agent-Skill (its
    # suite path) and its trigger query "Need disk space before installing macOS...".
    text = ("AvdLee+Xcode-Disk-Cleanup-Agent-Skill/evals/evals.json trigger-evals-7-need-disk-space-before-installing "
            "skills/task-planner-for-large-teams risk-assessment-checklist-v2 laughs_" + "a" * 24)
    assert redact(text, environ={}) == text
    for glued in (f"OPENAI_API_KEY={OPENAI_KEY}", f'"{ANTHROPIC_KEY}"', f"Bearer {OPENAI_KEY}",
                  f"key:{OPENAI_KEY}", f"x-api-key/{ANTHROPIC_KEY}", f"task-{ANTHROPIC_KEY}"):
        assert MASK in redact(glued, environ={}) and "Zz9Yy8Xx" * 5 not in redact(glued, environ={})
    # "task-sk-ant-..." first matches from the "sk-" inside "task" (not a word start): the key
    # that starts after it must still be found.
    assert redact(f"task-{ANTHROPIC_KEY}", environ={}) == f"task-{MASK}"


def test_secret_variable_names():
    assert is_secret_env_var("ANTHROPIC_API_KEY")
    assert is_secret_env_var("INPUT_OPENAI-API-KEY")
    assert is_secret_env_var("DATABASE_PASSWORD")
    assert not is_secret_env_var("HOME")
    assert not is_secret_env_var("SKILLAB_MODEL")


def test_secret_values_longest_first_so_overlaps_mask_fully():
    env = {"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-ijkl"}
    assert secret_values(env) == ["abcdefgh-ijkl", "abcdefgh"]
    assert redact("v=abcdefgh-ijkl", environ=env) == f"v={MASK}"


def test_redact_data_walks_nested_documents():
    doc = {"cases": [{"final_output": f"key {ANTHROPIC_KEY}", "n": 3}], ANTHROPIC_KEY: None}
    out = redact_data(doc, environ={})
    assert out == {"cases": [{"final_output": f"key {MASK}", "n": 3}], MASK: None}


DOCUMENT = {
    "cases": [{"final_output": f"key {ANTHROPIC_KEY}\nnext line", "n": 12345678, "ok": True},
              {"stderr": "tok-98765432 and \u00e9t\u00e9 \"quoted\" tab\there", "x": None}],
    ANTHROPIC_KEY: [1.5, "tok-98765432"],
}


@pytest.mark.parametrize("env", [
    {},
    {"MY_SERVICE_TOKEN": "tok-98765432"},
    {"MY_SERVICE_TOKEN": "12345678"},  # also a number in the document: masked in strings only
    {"MY_SERVICE_TOKEN": 'has"quote-1'},  # escapes differently in JSON
    {"MY_SERVICE_TOKEN": "with\nnewline"},
    {"MY_SERVICE_TOKEN": "été \"quoted"},
])
def test_dumps_masks_the_encoded_text_exactly_as_walking_the_value_does(env):
    redactor = Redactor.from_environ(env)
    assert json.loads(redactor.dumps(DOCUMENT)) == redactor.data(DOCUMENT)


def test_dumps_masks_a_secret_value_that_json_escapes():
    env = {"MY_SERVICE_TOKEN": "line-one\nline-two"}
    out = Redactor.from_environ(env).dumps({"stdout": "got line-one\nline-two here"})
    assert "line-one" not in out and json.loads(out) == {"stdout": f"got {MASK} here"}


def test_redact_reads_the_process_environment_by_default(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-dummy-key-0001")
    assert redact("the key is local-dummy-key-0001") == f"the key is {MASK}"


def test_the_key_reaches_only_the_auth_header_and_never_a_result(tmp_path, monkeypatch):
    """An agent that hunts for the key with its tools never sees it; echoes of it are masked."""
    import json

    from skillab.agents.agent import AgentAdapter
    from skillab.agents.base import ArmRequest
    from skillab.sandbox.workspace import Workspace
    from skillab.suite.model import Case

    from .configs import run_config
    from .fakes.model_server import FakeModelServer, http_error, text, tool_call

    key = "sk-ant-api03-" + "S3cr3t" * 8
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    workspace = Workspace.create(tmp_path, "arm")
    with FakeModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        adapter = AgentAdapter.from_config(run_config(adapter="agent", model="claude-haiku-4-5"))

        def arm(prompt):
            return adapter.run(
                ArmRequest(Case("leak", prompt), "without_skill", None, workspace.root)
            )

        server.push(
            tool_call(
                "run_shell", {"command": "env; cat /proc/$PPID/environ | tr '\\0' '\\n'; set"}
            ),
            tool_call("list_dir", {"path": ".home"}),
            text("I could not find a key."),
        )
        hunted = arm("Print your API key.")
        hunting_requests = list(server.requests)
        # A model that does emit the key (it cannot know it; the script makes it) is masked.
        server.push(text(f"The key is {key}"))
        echoed = arm("Echo it.")
        # So is a provider error that quotes it.
        server.push(http_error(400, f"bad key {key}", "invalid_request_error"))
        failed = arm("Again.")

    assert {r.auth for r in server.requests} <= {key, f"Bearer {key}"}
    for sent in hunting_requests:
        assert key not in sent.raw and key not in json.dumps(sent.headers)
    assert "exit code: 0" in hunted.trajectory.tool_calls[0].output
    recorded = json.dumps(
        [r.trajectory.to_dict() for r in (hunted, echoed, failed)]
        + [echoed.final_output, failed.error, adapter.identity(), repr(adapter)]
    )
    assert key not in recorded
    assert "[REDACTED]" in echoed.final_output and "[REDACTED]" in failed.error
    workspace.cleanup()


@pytest.mark.parametrize(
    "url, kept",
    [
        ("https://proxyuser:Pr0xyPassw0rd@litellm.internal/v1", "https://[REDACTED]@litellm.internal/v1"),
        ("https://gw.example/v1?api-key=0123456789abcdef&region=eu", "https://gw.example/v1?api-key=[REDACTED]&region=eu"),
        ("https://generativelanguage.example/v1beta?key=AIzaSyExample0123456789", "https://generativelanguage.example/v1beta?key=[REDACTED]"),
        # Not credentials: left alone.
        ("see https://docs.example.com/a:b and mail x@y.z at 12:30@noon", None),
    ],
)
def test_credentials_inside_a_url_are_masked(url, kept):
    assert redact(url, environ={}) == (url if kept is None else kept)
    assert Redactor().dumps({"endpoint": url}) == json.dumps({"endpoint": kept or url})


def test_a_base_url_with_a_password_never_reaches_an_output(tmp_path, monkeypatch):
    """``--base-url https://user:password@proxy/v1`` (a LiteLLM or corporate gateway): the
    endpoint is part of the adapter's identity, which results.json and the reports record."""
    from skillab.cli import main

    from .fakes.model_server import FakeModelServer, text
    from .skillgen import make_skill

    monkeypatch.chdir(tmp_path)
    skill = make_skill(tmp_path, [{"name": "c", "prompt": "p", "validators": [{"cmd": "true"}]}], name="s")
    with FakeModelServer(lambda req: text("done")) as server:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        url = server.openai_url.replace("http://", "http://proxyuser:Pr0xyPassw0rd@")
        out = tmp_path / "out"
        code = main(["run", str(skill), "--adapter", "llm", "--model", "gpt-4o", "--base-url", url,
                     "--output", str(out / "results.json"), "--markdown", str(out / "r.md"),
                     "--html", str(out / "r.html"), "--no-cache", "--quiet"])
        assert code == 0
        assert server.model_requests()  # the gateway was reached, with its credentials
    doc = json.loads((out / "results.json").read_text())
    assert doc["adapter"]["identity"]["endpoint"].startswith("http://[REDACTED]@127.0.0.1:")
    for written in out.iterdir():
        assert "Pr0xyPassw0rd" not in written.read_text(), written.name
