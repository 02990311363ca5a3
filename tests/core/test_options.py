"""The options table (``core.options``) is the one declaration of every run setting: the flags,
the config keys, the Action's inputs and docs/options.md are read off it, a command takes only
the options it reads, and the flag and the input accept and refuse the same values."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from skillab.cli import add_run_arguments, build_parser, main
from skillab.commands.settings import configs_from_args, landed_from_args
from skillab.core.choices import non_negative_int, positive_float
from skillab.core.defaults import DEFAULT_HISTORY_PATH
from skillab.core.option_row import Option
from skillab.core.options import OPTIONS, render_reference
from skillab.core.settings import RunConfig
from skillab.errors import UsageError
from skillab.github.inputs import INPUTS, read_inputs
from skillab.session.gates import Gates
from skillab.session.landing import land

from ..skillgen import answers, grep_case, make_skill

ROOT = Path(__file__).resolve().parents[2]
# What reads a parsed flag itself rather than a settings field.
READERS = {"report", "selection", "invocation"}


def test_docs_options_md_is_generated_from_the_table():
    assert (ROOT / "docs" / "options.md").read_text(encoding="utf-8") == render_reference(), (
        "stale: python -m skillab.core.options > docs/options.md")


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_each_row_lands_in_a_settings_field_or_names_its_reader(option):
    named = [part.strip() for part in option.lands.split(",")]
    assert set(named) - set(option.targets) <= READERS, option.lands
    for target in option.targets:
        root, *path = target.split(".")
        node: object = Gates() if root == "gates" else getattr(RunConfig(), root)
        for part in path:
            assert dataclasses.is_dataclass(node), target
            assert part in {f.name for f in dataclasses.fields(node)}, f"{option.name}: no field {target}"
            node = getattr(node, part)


def _run_args(argv: list[str], options=OPTIONS) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser, "run", options)
    return parser.parse_args(["skills/x", *argv])


def test_a_row_added_to_the_table_reaches_its_setting_with_no_other_code():
    """The attack: a new row whose ``lands`` names a field (the agent CLI's timeout has none yet)
    reaches the settings through the parser and the one mapping, settings.py untouched."""
    extra = Option("agent-timeout-s", "agent.timeout_s", group="agent and models", parse=positive_float,
                   metavar="S", help="an agent CLI's timeout per arm")
    gate = Option("most-leaks", "gates.max_leaks", group="gates (exit 1)", parse=non_negative_int, help="x",
                  commands=frozenset({"run"}))
    table = (*[o for o in OPTIONS if o.name != "max-leaks"], extra, gate)
    args = _run_args(["--adapter", "mock", "--agent-timeout-s", "30", "--most-leaks", "2"], table)
    config = configs_from_args(args, table)[0]
    assert config.agent.timeout_s == 30.0 and config.agent.adapter == "mock"
    assert landed_from_args(args, table).gates.max_leaks == 2
    assert configs_from_args(_run_args(["--adapter", "mock"]))[0].agent.timeout_s is None


def test_a_row_landing_in_no_field_is_refused_by_name():
    table = (*OPTIONS, Option("typo", "engine.runz", group="what to run", help="x"))
    with pytest.raises(LookupError, match="typo lands in 'engine.runz'"):
        land({"typo": "1"}, table)


def test_the_flags_land_as_the_settings_and_gates_expect():
    args = _run_args(["--adapter", "mock", "--no-cache", "--no-history", "--case", "a", "--tag", "t",
                      "--stop-early", "none", "--fail-on-verdict", "mixed", "--min-delta-pts", "5",
                      "--gate-on", "lower-bound", "--shard", "2/3", "--temperature", "0.5"])
    config = configs_from_args(args)[0]
    engine = config.engine
    assert (engine.cache_enabled, engine.history_path, engine.case_names, engine.tags) == (False, None, ("a",), ("t",))
    assert (engine.stop_early, engine.pass_n, str(engine.shard), engine.min_delta_pts, engine.gate_on) == (
        None, 0, "2/3", 5.0, "lower-bound")
    assert config.agent.model.temperature == 0.5
    gates = landed_from_args(args).gates
    assert (gates.fail_on, gates.min_delta_pts, gates.gate_on) == (("error", "mixed"), 5.0, "lower-bound")
    default = landed_from_args(_run_args(["--adapter", "mock", "--allow-error-verdict"]))
    assert default.gates.fail_on == ("fail",) and default.config.engine.history_path == Path(DEFAULT_HISTORY_PATH)
    assert landed_from_args(_run_args(["--fail-on-verdict", "none", "--allow-error-verdict"])).gates.fail_on == ()


def _flags(command: str) -> set[str]:
    parser = build_parser(command)
    sub = parser._subparsers._group_actions[0].choices[command]
    return {o for action in sub._actions for o in action.option_strings} - {"-h", "--help"}


@pytest.mark.parametrize("command,extra", [("run", set()), ("ablate", {"--heading-level"})])
def test_a_command_takes_exactly_its_rows(command, extra):
    rows = {flag for option in OPTIONS if command in option.commands for flag in option.flags}
    assert _flags(command) == rows | extra


# Flags of another command that share a row's name but mean something else, and why.
OWN_MEANING = {
    ("route", "--output"): "the routing document, not a results document",
    ("regrade", "--output"): "defaults to RESULTS itself",
    ("regrade", "--judge-model"): "defaults to the judge that graded the run",
    ("regrade", "--judge-same-family"): "about the stored run's agent",
    ("regrade", "--provider"): "the judge's provider; the row is the agent's",
    ("regrade", "--base-url"): "the judge's endpoint; the row is the agent's",
    ("calibrate-judge", "--judge-model"): "defaults to the mock judge",
    ("calibrate-judge", "--provider"): "the judge's provider; the row is the agent's",
    ("calibrate-judge", "--base-url"): "the judge's endpoint; the row is the agent's",
    ("calibrate-judge", "--json"): "the scores, not a results document",
    ("audit", "--json"): "the findings, not a results document",
    ("diff", "--json"): "the comparison, not a results document",
    ("cache list", "--json"): "the listing, not a results document",
    ("budget serve", "--max-cost-usd"): "the service's cap over every shard",
}


def _declared(parser: argparse.ArgumentParser, name: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _declared(sub, f"{name} {sub_name}".strip())
        else:
            yield name, action


def test_no_command_declares_a_rows_flag_again():
    # A setting is declared once: a command that takes a row's flag takes the row
    # (``cli.add_option_rows``), with its parsing, default and help.
    rows = {flag: option for option in OPTIONS for flag in option.flags}
    again = []
    for command, action in _declared(build_parser(None), ""):
        top = command.split(" ")[0]
        for flag in action.option_strings:
            option = rows.get(flag)
            if option is None or (command, flag) in OWN_MEANING:
                continue
            if top not in option.commands or action.help != option.help:
                again.append(f"{command} {flag}")
    assert again == []


@pytest.mark.parametrize("flag", ["--junit", "--reporter", "--fail-on-verdict", "--min-delta-pts", "-k",
                                  "--watch", "--against", "--shard", "--resume"])
def test_ablate_refuses_the_run_flags_it_never_reads(flag, capsys):
    argv = {"--watch": [flag], "--reporter": [flag, "junit"], "--fail-on-verdict": [flag, "fail"]}.get(
        flag, [flag, "x"])
    assert main(["ablate", "skills/x", *argv]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_every_shared_input_is_its_rows_input():
    rows = {o.name: o for o in OPTIONS if o.input is not None}
    for spec in INPUTS:
        if spec.name in rows:
            declared = rows[spec.name].input
            assert (spec.default, spec.description) == (declared.default, declared.description)
    assert set(rows) <= {spec.name for spec in INPUTS}


def _cli_accepts(option, text: str) -> bool:
    try:
        value = option.parse(text)
    except (argparse.ArgumentTypeError, ValueError):
        return False
    return option.choices is None or value in option.choices


def _action_accepts(name: str, text: str) -> bool:
    env = {spec.env_name: spec.default for spec in INPUTS}
    env[f"INPUT_{name.upper()}"] = text
    try:
        read_inputs(env)
    except UsageError:
        return False
    return True


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.input is not None and o.parse is not None],
                         ids=lambda o: o.name)
@pytest.mark.parametrize("text", ["-5", "0", "0.5", "1", "3", "10", "500", "many", "nan", "inf", "1e400"])
def test_the_flag_and_the_input_accept_the_same_values(option, text):
    assert _cli_accepts(option, text) == _action_accepts(option.name, text)


def test_target_lift_pts_zero_is_refused_not_turned_into_ten():
    env = {spec.env_name: spec.default for spec in INPUTS}
    assert read_inputs(env).target_lift_pts == 10.0
    env["INPUT_TARGET-LIFT-PTS"] = "25"
    assert read_inputs(env).target_lift_pts == 25.0
    env["INPUT_TARGET-LIFT-PTS"] = "0"
    with pytest.raises(UsageError, match="target-lift-pts"):
        read_inputs(env)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLAB_MODEL", raising=False)
    make_skill(tmp_path / "skills", [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    return tmp_path


def test_the_config_file_takes_max_skill_tokens_and_the_sampling_settings(project):
    (project / "skillab.toml").write_text(
        'adapter = "mock"\nno-history = true\nmax-skill-tokens = 1\ntemperature = 0.5\nseed = 7\n'
        "judge-temperature = 0\njudge-seed = 3\nmax-tokens = 100\n")
    assert main(["run", "skills/demo-skill", "--quiet"]) == 1  # the file's context gate: 1 token
    keys = json.loads((project / "results.json").read_text())["config"]["keys"]
    assert {"max-skill-tokens", "temperature", "seed", "judge-temperature", "judge-seed", "max-tokens"} <= set(keys)


def test_skillab_toml_with_a_tool_skillab_header_works(project):
    (project / "skillab.toml").write_text('[tool.skillab]\nadapter = "mock"\nno-history = true\n')
    assert main(["run", "skills/demo-skill", "--quiet"]) == 0


def test_a_bad_value_names_the_file_and_key_in_words(project, capsys):
    (project / "skillab.toml").write_text('max-turns = "many"\n')
    assert main(["run", "skills/demo-skill", "--adapter", "mock"]) == 2
    err = capsys.readouterr().err
    assert f"{project / 'skillab.toml'}: max-turns: expected an integer, got 'many'" in err
    assert "invalid literal" not in err


def test_the_config_file_does_not_stop_ablate_over_a_run_only_key(project):
    make_skill(project / "sectioned", [grep_case("a")], body="## Say it\nSKILLED\n\n## Why\nBecause.")
    (project / "skillab.toml").write_text('adapter = "mock"\nfail-on-verdict = ["fail"]\n')
    assert main(["ablate", "sectioned/demo-skill", "--dry-run"]) == 0


def test_cache_list_and_clear_honour_the_config_files_cache_dir(project, capsys):
    (project / "skillab.toml").write_text('adapter = "mock"\nno-history = true\ncache-dir = ".cache"\n')
    assert main(["run", "skills/demo-skill", "--quiet"]) == 0
    assert any((project / ".cache").rglob("*.json"))
    capsys.readouterr()
    assert main(["cache", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert main(["cache", "clear"]) == 0
    assert not any((project / ".cache").rglob("*.json"))


def test_the_action_and_the_cli_build_the_same_settings_and_gates(tmp_path):
    """Both front ends go through ``session.landing``: the same values give the same run."""
    import io

    from skillab.github.action import Action
    from skillab.github.workflow_commands import Log

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    values = {"runs": "3", "concurrency": "2", "target-lift-pts": "25", "min-delta-pts": "5",
              "gate-on": "lower-bound", "max-leaks": "1", "max-skill-tokens": "900", "max-held-out-gap": "4",
              "min-trigger-recall": "0.5", "max-false-trigger-rate": "0.2", "max-cost-usd": "2.5",
              "judge-model": "claude-haiku-4-5", "provider": "openai", "sandbox": "none"}
    env = {spec.env_name: spec.default for spec in INPUTS}
    env.update({f"INPUT_{name.upper()}": value for name, value in {**values, "adapter": "mock",
                                                                      "fail-on-verdict": "fail,mixed"}.items()})
    env.update({"GITHUB_EVENT_NAME": "schedule", "GITHUB_WORKSPACE": str(workspace)})
    action = Action(env, Log(io.StringIO()))
    flags = [arg for name, value in values.items() for arg in (f"--{name}", value)]
    args = _run_args(["--adapter", "mock", *flags, "--fail-on-verdict", "fail", "--fail-on-verdict", "mixed",
                      "--allow-error-verdict", "--fail-on-broken",
                      "--history", str(workspace / ".skillab" / "history.jsonl")])
    cli, by_action = configs_from_args(args)[0], action.configs()[0]
    assert by_action.engine == cli.engine and by_action.agent == cli.agent and by_action.judge == cli.judge
    assert action.landed().gates == landed_from_args(args).gates
