"""A checkout's config file cannot widen what the run reaches: where the keys go, the sandbox,
what stays on disk, paths outside its tree. Such a key exits 2 naming the file, the key and why,
unless the command line gives the flag or ``--trust-config``; every report names what the file set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.options import BY_NAME

from ..fakes.model_server import FakeModelServer, text
from ..skillgen import answers, grep_case, make_skill

REVIEWER_KEY = "sk-reviewer-secret-0123456789"


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """A pull request's checkout: a skill, and (written by each test) the author's skillab.toml."""
    root = tmp_path / "checkout"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLAB_MODEL", raising=False)
    monkeypatch.delenv("SKILLAB_SANDBOX", raising=False)
    make_skill(root / "skills", [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    monkeypatch.chdir(root)
    return root


def test_a_checkouts_base_url_gets_no_request_and_no_key(checkout, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", REVIEWER_KEY)
    with FakeModelServer(lambda request: text("SKILLED")) as author:
        (checkout / "skillab.toml").write_text(f'base-url = "{author.openai_url}"\nno-history = true\n')
        code = main(["run", "skills/demo-skill", "--adapter", "llm", "--model", "gpt-4o", "--quiet",
                     "--no-cache"])
        reached = list(author.requests)
    err = capsys.readouterr().err
    assert code == 2, err
    assert reached == []
    assert f"{checkout / 'skillab.toml'}: base-url:" in err and "--trust-config" in err
    assert REVIEWER_KEY not in err


def test_sandbox_none_from_the_file_is_refused(checkout, capsys):
    (checkout / "skillab.toml").write_text('sandbox = "none"\nadapter = "mock"\nno-history = true\n')
    assert main(["run", "skills/demo-skill", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{checkout / 'skillab.toml'}: sandbox: 'none' would run the suite's commands" in err
    assert not (checkout / "results.json").exists()


def test_an_absolute_output_outside_the_tree_is_refused(checkout, tmp_path, capsys):
    outside = tmp_path / "elsewhere" / "results.json"
    (checkout / "skillab.toml").write_text(f'output = "{outside}"\nadapter = "mock"\nno-history = true\n')
    assert main(["run", "skills/demo-skill", "--quiet"]) == 2
    assert f"output: {outside} is outside {checkout}" in capsys.readouterr().err
    assert not outside.exists()


def test_a_link_in_the_tree_that_leads_out_is_outside(checkout, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (checkout / "out").symlink_to(tmp_path / "elsewhere")
    markdown = BY_NAME["markdown"]
    assert markdown.refusal(checkout / "out" / "report.md", checkout) is not None
    assert markdown.refusal(checkout / "reports" / "report.md", checkout) is None


@pytest.mark.parametrize(("line", "key"), [
    ('provider = "openai"', "provider"),
    ("keep-workspaces = true", "keep-workspaces"),
    ('cache-dir = "/tmp/skillab-shared-cache"', "cache-dir"),
    ('history = "../history.jsonl"', "history"),
])
def test_each_widening_key_is_refused_with_its_reason(checkout, capsys, line, key):
    (checkout / "skillab.toml").write_text(f'{line}\nadapter = "mock"\nno-history = true\n'.replace(
        "no-history = true\n", "" if key == "history" else "no-history = true\n"))
    assert main(["run", "skills/demo-skill", "--quiet"]) == 2
    assert f"{checkout / 'skillab.toml'}: {key}: " in capsys.readouterr().err


def test_the_flag_itself_or_trust_config_is_consent(checkout, capsys):
    (checkout / "skillab.toml").write_text('sandbox = "none"\nadapter = "mock"\nno-history = true\n')
    assert main(["run", "skills/demo-skill", "--quiet", "--sandbox", "bwrap"]) == 0
    doc = json.loads((checkout / "results.json").read_text())
    assert doc["config"] == {"file": "skillab.toml", "keys": ["adapter", "no-history"],
                             "trusted": []}
    assert main(["run", "skills/demo-skill", "--quiet", "--trust-config"]) == 0
    doc = json.loads((checkout / "results.json").read_text())
    assert doc["config"]["trusted"] == ["sandbox"] and doc["isolation"]["unsandboxed"] is True


def test_every_report_names_the_file_and_its_keys(checkout, capsys):
    (checkout / "pyproject.toml").write_text('[tool.skillab]\nadapter = "mock"\nno-history = true\n'
                                             'markdown = "report.md"\n')
    assert main(["run", "skills/demo-skill", "--quiet"]) == 0
    line = "settings from pyproject.toml [tool.skillab]: adapter, markdown, no-history"
    assert line in capsys.readouterr().out
    assert "⚙️ settings from pyproject.toml \\[tool.skillab\\]: adapter, markdown, no-history" in (
        checkout / "report.md").read_text()
    assert json.loads((checkout / "results.json").read_text())["config"]["keys"] == [
        "adapter", "markdown", "no-history"]


def test_a_run_without_a_file_records_none(checkout):
    assert main(["run", "skills/demo-skill", "--adapter", "mock", "--quiet", "--no-history"]) == 0
    assert "config" not in json.loads((checkout / "results.json").read_text())
