"""Start-up imports only what the command uses (issue 10): `skillab validate` of a native suite
loads no other format, neither the Action's discovery nor the engine, and reads no entry
points; parsing `run`'s plugin-name flags with built-in names reads no entry points either.
Each check runs in a fresh interpreter, so what an earlier test imported cannot hide a regression.
(How long start-up takes is measured by benchmarks/startup.py, not here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules_after(code: str, *args: str) -> set[str]:
    """The modules loaded once ``code`` has run in a fresh interpreter."""
    script = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60)
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
