"""``[tool.skillab]`` in pyproject.toml, or skillab.toml: defaults for run options, listed in
``--help``; a flag wins over the environment, which wins over the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import build_parser, main

from ..skillgen import answers, grep_case, make_skill


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLAB_MODEL", raising=False)
    make_skill(tmp_path / "skills", [grep_case("a"), grep_case("b")],
               responses={"a": answers("SKILLED", "no"), "b": answers("no", "no")})
    (tmp_path / "skills" / "sub").mkdir()
    return tmp_path


def parsed(*argv: str):
    from skillab.commands.config_file import apply_config, find_config, finish

    parser = build_parser("run")
    run = parser._subparsers._group_actions[0].choices["run"]
    apply_config(run, find_config())
    args = parser.parse_args(["run", *argv])
    finish(args)
    return args


def test_pyproject_sets_defaults_and_a_run_uses_them(project, capsys):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.skillab]\nadapter = "mock"\nno-history = true\n'
        'fail-on-verdict = ["mixed"]\noutput = "out/results.json"\nconcurrency = 2\n')
    code = main(["run", "skills/demo-skill", "--quiet"])
    assert code == 1  # the file's gate: the verdict is mixed
    doc = json.loads((project / "out" / "results.json").read_text())
    assert doc["adapter"]["name"] == "mock"
    assert "gate failed: demo-skill: verdict is mixed" in capsys.readouterr().err


def test_a_flag_wins_over_the_file_and_the_environment_over_the_file(project, monkeypatch):
    (project / "skillab.toml").write_text('concurrency = 2\nmodel = "claude-from-file"\nfail-on-verdict = ["mixed"]\n'
                                          'judge_model = "gpt-4.1"\n')
    args = parsed("skills/demo-skill")
    assert (args.concurrency, args.model, args.fail_on_verdict, args.judge_model) == (
        2, "claude-from-file", ["mixed"], "gpt-4.1")
    args = parsed("skills/demo-skill", "--concurrency", "7", "--fail-on-verdict", "fail")
    assert args.concurrency == 7 and args.fail_on_verdict == ["fail"]
    monkeypatch.setenv("SKILLAB_MODEL", "claude-from-env")
    assert parsed("skills/demo-skill").model == "claude-from-env"
    assert parsed("skills/demo-skill", "--model", "claude-from-flag").model == "claude-from-flag"


def test_skillab_toml_is_found_from_a_subdirectory_and_paths_are_the_files(project, monkeypatch):
    (project / "skillab.toml").write_text('cache-dir = ".skillab/cache"\nno-cache = true\n')
    monkeypatch.chdir(project / "skills" / "sub")
    args = parsed("x")
    assert args.cache_dir == project / ".skillab" / "cache" and args.no_cache is True


@pytest.mark.parametrize(("text", "words"), [
    ('concurency = 2\n', "unknown key 'concurency' (did you mean 'concurrency'?)"),
    ('concurrency = 0\n', "concurrency: must be a positive integer"),
    ('sandbox = "docker"\n', "sandbox: invalid choice: 'docker' (choose from 'bwrap', 'image', 'none')"),
    ('no-cache = "yes"\n', "no-cache must be true or false"),
    ('resume = "r.json"\n', "'resume' cannot be set from a config file: give --resume on the command line"),
    ('model = [\n', "not a readable TOML file"),
])
def test_a_bad_file_exits_2_naming_the_file_and_the_key(project, capsys, text, words):
    (project / "skillab.toml").write_text(text)
    assert main(["run", "skills/demo-skill", "--adapter", "mock"]) == 2
    err = capsys.readouterr().err
    assert str(project / "skillab.toml") in err and words in err


def test_run_help_lists_the_keys_and_the_file_it_reads(project, capsys):
    (project / "pyproject.toml").write_text('[tool.skillab]\nruns = 2\n')
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "[tool.skillab] in pyproject.toml, or skillab.toml" in out
    assert f"here: {project / 'pyproject.toml'} [tool.skillab]" in out
    assert "judge-model" in out.split("config file:", 1)[1] and "max-cost-usd" in out.split("config file:", 1)[1]
