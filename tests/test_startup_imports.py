"""Start-up imports only what the command uses (issue 10): `skillab validate` of a native suite
loads no other format, neither the Action's discovery nor the engine, and reads no entry
points; parsing `run`'s plugin-name flags with built-in names reads no entry points either.
Each check runs in a fresh interpreter, so what an earlier test imported cannot hide a regression.
(How long start-up takes is measured by benchmarks/startup.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules_after(code: str, *args: str, cwd: Path | None = None) -> set[str]:
    """The modules loaded once ``code`` has run in a fresh interpreter."""
    script = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_validate_of_an_eval_yaml_suite_imports_only_its_own_format():
    loaded = modules_after("from skillab.cli import main\nassert main(['validate', sys.argv[1]]) == 0",
                           str(ROOT / "examples" / "changelog-entry"))
    assert "skillab.formats.eval_yaml.parser" in loaded  # the suite was parsed
    unwanted = {"importlib.metadata", "jsonschema", "hashlib", "skillab.engine", "skillab.github.discovery",
                "skillab.formats.task_suite", "skillab.formats.ruby_bench", "skillab.formats.skillsbench",
                "skillab.formats.evals_json", "skillab.formats.trigger", "skillab.formats.tessl",
                # The reports' section hooks name the run's type; validate has no run to read.
                "skillab.core.runlog"}
    assert unwanted & loaded == set()


def test_a_suite_without_a_trigger_set_does_not_load_the_trigger_reader(tmp_path):
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    validators:\n"
                                        "      - cmd: 'true'\n")
    loaded = modules_after("from skillab.cli import main\nassert main(['validate', sys.argv[1]]) == 0",
                           str(tmp_path))
    assert "skillab.suite.trigger_sets" in loaded and "skillab.suite.trigger" not in loaded


def test_built_in_plugin_names_are_parsed_without_reading_entry_points():
    loaded = modules_after(
        "from skillab.cli import build_parser\n"
        "args = build_parser('run').parse_args(['run', 'x', '--adapter', 'mock,llm', '--provider', "
        "'anthropic', '--reporter', 'junit=out.xml'])\n"
        "assert args.adapter == ('mock', 'llm') and args.reporter == [('junit', __import__('pathlib').Path('out.xml'))]"
    )
    assert {"importlib.metadata", "skillab.agents.registry", "skillab.core.settings"} & loaded == set()


def test_a_command_about_to_run_gets_the_same_parser_as_in_the_whole_command_line():
    from skillab.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    for name, parser in commands.items():
        alone = build_parser(name)._subparsers._group_actions[0].choices
        assert list(alone) == [name]
        assert alone[name].format_help() == parser.format_help()


def test_the_action_starts_without_the_engine_or_the_sandbox_runner():
    # Inputs, event and suite selection come first; what runs a suite loads once one runs.
    loaded = modules_after("import skillab.github.action")
    unwanted = {"skillab.log.results", "skillab.sandbox.process", "skillab.grading", "skillab.session",
                "skillab.engine.runner", "skillab.formats.grading", "jsonschema"}
    assert unwanted & loaded == set()


def test_a_mock_run_of_a_native_suite_loads_no_other_format_and_reads_no_entry_points(tmp_path):
    # The table at the end asks the suite's own format for its sections, not every format.
    loaded = modules_after(
        "from skillab.cli import main\n"
        "assert main(['run', sys.argv[1], '--adapter', 'mock', '--sandbox', 'none', '--no-cache',"
        " '--no-history', '--quiet', '--output', sys.argv[2]]) == 0",
        str(ROOT / "examples" / "changelog-entry"), str(tmp_path / "results.json"))
    assert "skillab.engine.runner" in loaded  # the suite ran
    unwanted = {"importlib.metadata", "email", "tarfile", "uuid", "skillab.formats.task_suite",
                "skillab.formats.ruby_bench", "skillab.formats.skillsbench", "skillab.formats.evals_json",
                "skillab.formats.tessl"}
    assert unwanted & loaded == set()


# What a plain run does not use: trigger trials, a shared budget (its socket client), --resume,
# --shard, --against, --stop-early, route gates, a config file's TOML reader, an HTML report's
# entity table. Each is imported where the run asks for it (issue 37: start-up is most of a
# small run's cost beyond the reference runner).
PLAIN_RUN_UNUSED = {"skillab.suite.trigger", "skillab.engine.trigger", "skillab.suite.trigger_plan",
                    "skillab.budget.client", "socket", "skillab.engine.resume", "skillab.engine.shard",
                    "skillab.engine.against", "skillab.engine.stop_early", "skillab.core.routing",
                    "skillab.skill.placebo", "tomllib", "html"}


def test_a_plain_mock_run_imports_none_of_the_options_it_does_not_use(tmp_path):
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    validators:\n"
                                        "      - cmd: 'true'\n")
    loaded = modules_after(
        "from skillab.cli import main\n"
        "assert main(['run', sys.argv[1], '--adapter', 'mock', '--sandbox', 'none', '--no-cache',"
        " '--no-history', '--quiet', '--output', sys.argv[2]]) == 0",
        str(tmp_path), str(tmp_path / "results.json"), cwd=tmp_path)
    assert "skillab.engine.runner" in loaded  # the suite ran
    assert PLAIN_RUN_UNUSED & loaded == set()


def test_a_run_with_a_trigger_set_still_runs_its_trigger_trials(tmp_path):
    # The other side of the test above: the trigger reader loads when the suite has a set.
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    validators:\n"
                                        "      - cmd: 'true'\n")
    (tmp_path / "trigger-evals.json").write_text('[{"query": "use s please", "should_trigger": true}]')
    out = tmp_path / "results.json"
    loaded = modules_after(
        "from skillab.cli import main\n"
        "assert main(['run', sys.argv[1], '--adapter', 'mock', '--sandbox', 'none', '--no-cache',"
        " '--no-history', '--quiet', '--output', sys.argv[2]]) == 0",
        str(tmp_path), str(out), cwd=tmp_path)
    assert {"skillab.suite.trigger", "skillab.engine.trigger"} <= loaded
    assert [q["query"] for q in json.loads(out.read_text())["triggers"]["queries"]] == ["use s please"]


def test_report_reads_a_saved_document_without_the_session_or_the_suite_parser(tmp_path):
    from tests.runlogs import case, run_log

    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(run_log([case("a", "flip_to_pass"), case("b", "pass_kept")]).to_json()))
    loaded = modules_after("from skillab.cli import main\nassert main(['report', sys.argv[1]]) == 0",
                           str(saved), cwd=tmp_path)
    assert "skillab.reports.terminal" in loaded  # the table was printed
    assert {"yaml", "skillab.session.session", "skillab.commands.run", "skillab.engine.resume",
            "skillab.suite.mock_script", "skillab.agents.base"} & loaded == set()


def test_the_command_listing_loads_no_command_s_machinery():
    # `skillab --help` builds every command's parser; what a command does when it runs (a budget
    # service's HTTP server, serve-local's installer, the results document's types) loads then.
    loaded = modules_after("from skillab.cli import main\nassert main(['--help']) == 0")
    assert "skillab.commands.serve_local" in loaded  # its parser was built
    assert {"http.server", "urllib.request", "importlib.metadata", "socket", "skillab.budget.service",
            "skillab.budget.client", "skillab.engine.shard", "skillab.core.run_info", "skillab.core.settings"} \
        & loaded == set()
