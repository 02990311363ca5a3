"""Another package adds a suite format, an agent and a reporter through entry points, and
``skillab run`` runs a suite through all three without a line of skillab changed.

The package is real: a module plus a ``.dist-info`` directory that ``importlib.metadata`` finds
on ``PYTHONPATH``, exactly as ``pip install`` would leave it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillab.core import plugins

PLUGIN = textwrap.dedent('''
    """A throwaway skillab plugin: the "lines" suite format, the "echo-agent" agent (and
    "bare-agent", which skips the contract's base), the "tally" reporter and the "logged"
    sandbox backend."""

    import json
    from dataclasses import dataclass
    from pathlib import Path

    from skillab.agents.base import Agent, AgentResult
    from skillab.core.checks import GraderResult
    from skillab.grading.trajectory import Trajectory
    from skillab.suite.model import Case, Suite, ValidatorSpec


    @dataclass(frozen=True)
    class SaysGrader:
        """A grader the format brings along: the answer must contain ``word``."""

        word: str
        judged = False  # asks no judge model
        reads_work = False  # nor the files the agent changed

        def grade(self, grading):
            found = self.word in grading.final_output
            return GraderResult("says", f"says {self.word}", found,
                                "found" if found else f"{self.word!r} is missing")


    class LinesFormat:
        filenames = ("cases.lines",)

        def load(self, path):
            cases = []
            for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
                name, _, prompt = line.partition(":")
                cases.append(Case(name=name.strip(), prompt=prompt.strip(), line=number,
                                  validators=(ValidatorSpec("grep -q SKILLED answer.txt"),),
                                  graders=(SaysGrader("SKILLED"),)))
            return Suite(Path(path), "lines", tuple(cases))


    FORMAT = LinesFormat()


    class EchoAgent(Agent):
        """Answers SKILLED when offered the skill, plain without it; writes its answer down.
        It stages nothing and chooses no skill itself: the contract's defaults say so."""

        name = "echo-agent"

        @classmethod
        def from_config(cls, config):
            return cls()

        def identity(self):
            return {"adapter": self.name}

        def run(self, request):
            answer = "SKILLED" if request.skill is not None else "plain"
            (request.workspace / "answer.txt").write_text(answer)
            return AgentResult(final_output=answer, trajectory=Trajectory(user_input=request.case.prompt))


    class BareAgent:
        """The same agent without the contract's base: it lacks the optional capabilities."""

        name = "bare-agent"
        staging_dirs = ()
        identity, run = EchoAgent.identity, EchoAgent.run

        @classmethod
        def from_config(cls, config):
            return cls()


    class Tally:
        description = "tally of outcomes"

        def write(self, logs, path):
            tally = {log.settings.suite.skill: {"verdict": log.verdict, "format": log.settings.suite.format,
                                                   "outcomes": [r.outcome for r in log.records],
                                                   "graders": [g.label for r in log.records for g in r.with_skill.graders]}
                     for log in logs}
            Path(path).write_text(json.dumps(tally))


    REPORTER = Tally()


    class LoggedBackend:
        """Runs each command on the host, as ``none`` does, once it has logged its argv."""

        name = "logged"
        log = Path(__file__).with_name("commands.log")

        def problem(self):
            return None

        def wrap(self, argv, view, env):
            from skillab.sandbox.view import Wrapped

            with self.log.open("a") as out:
                out.write(json.dumps(list(argv)) + "\\n")
            return Wrapped(list(argv), dict(env))

        def guarantees(self):
            return {"enforced_by": "nothing: a test backend that logs each command"}
''')

ENTRY_POINTS = """\
[skillab.formats]
lines = skillab_lines_plugin:FORMAT

[skillab.agents]
echo-agent = skillab_lines_plugin:EchoAgent
bare-agent = skillab_lines_plugin:BareAgent

[skillab.reporters]
tally = skillab_lines_plugin:REPORTER

[skillab.sandboxes]
logged = skillab_lines_plugin:LoggedBackend
"""


def install_package(site: Path, module: str, source: str, entry_points: str) -> None:
    """What ``pip install`` of a one-module package leaves on disk: the module and its metadata."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    name = module.replace("_", "-")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def install_plugin(site: Path) -> None:
    install_package(site, "skillab_lines_plugin", PLUGIN, ENTRY_POINTS)


def skill_with_lines_suite(root: Path) -> Path:
    skill = root / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets people in a known way.\n---\n"
                                    "Always answer SKILLED.\n")
    (skill / "cases.lines").write_text("hello: Say hello.\nbye: Say goodbye.\n")
    return skill


def skillab(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "skillab", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_format_an_agent_and_a_reporter_from_another_package_run_a_suite(tmp_path):
    site = tmp_path / "site"
    install_plugin(site)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "echo-agent", "--model", "any", "--no-cache",
                    "--no-history", "--quiet", "--output", "results.json", "--reporter", "tally=tally.json"],
                   site, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wrote tally.json (tally of outcomes)" in done.stderr
    tally = json.loads((tmp_path / "tally.json").read_text())
    assert tally == {"greeter": {"verdict": "pass", "format": "lines", "outcomes": ["flip_to_pass"] * 2,
                                 "graders": ["says SKILLED"] * 2}}
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["adapter"]["name"] == "echo-agent" and doc["suite"]["format"] == "lines"
    assert [c["case_name"] for c in doc["cases"]] == ["hello", "bye"]
    for case in doc["cases"]:
        assert case["with_skill"]["validator_results"][0]["passed"] is True
        assert case["without_skill"]["validator_results"][0]["passed"] is False
        assert case["without_skill"]["extra"]["graders"][0]["reason"] == "'SKILLED' is missing"


def test_an_agent_that_lacks_part_of_the_contract_is_refused_naming_what_it_lacks(tmp_path):
    # The engine reads every capability as an attribute; a plugin is checked once, when built.
    site = tmp_path / "site"
    install_plugin(site)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "bare-agent", "--model", "any", "--no-cache",
                    "--no-history", "--quiet", "--output", "results.json"], site, tmp_path)
    assert done.returncode == 2, done.stderr
    assert ("adapter 'bare-agent' (skillab_lines_plugin:BareAgent) lacks against_warning, discovers_skills, measured_listing, "
            "reports_served_model, sandbox_profile, skill_listing: subclass skillab.agents.base.Agent") in done.stderr
    assert not (tmp_path / "results.json").exists()


def test_a_sandbox_backend_from_another_package_runs_every_command_of_the_suite(tmp_path):
    site = tmp_path / "site"
    install_plugin(site)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "echo-agent", "--model", "any", "--sandbox", "logged",
                    "--no-cache", "--no-history", "--quiet", "--output", "results.json"], site, tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["isolation"]["backend"] == "logged" and doc["isolation"]["unsandboxed"] is False
    assert doc["isolation"]["guarantees"]["enforced_by"] == "nothing: a test backend that logs each command"
    assert {case[arm]["extra"]["sandbox"] for case in doc["cases"] for arm in ("with_skill", "without_skill")} == {
        "logged"}
    # Both validators of both arms of both cases went through the backend's wrap.
    logged = [json.loads(line) for line in (site / "commands.log").read_text().splitlines()]
    assert sum("grep -q SKILLED answer.txt" in " ".join(argv) for argv in logged) == 4
    done = skillab(["run", str(skill), "--adapter", "mock", "--sandbox", "nope"], site, tmp_path)
    assert done.returncode == 2 and "'bwrap', 'image', 'none', 'logged'" in done.stderr


def test_unknown_names_list_the_plugins_beside_the_built_ins(tmp_path):
    site = tmp_path / "site"
    install_plugin(site)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "nope"], site, tmp_path)
    assert done.returncode == 2 and "mock, llm, agent" in done.stderr and "echo-agent" in done.stderr
    done = skillab(["run", str(skill), "--adapter", "mock", "--reporter", "nope=x"], site, tmp_path)
    assert done.returncode == 2 and "junit, markdown, html, tally" in done.stderr
    done = skillab(["validate", str(skill), "--format", "nope"], site, tmp_path)
    assert done.returncode == 2 and "lines" in done.stderr


def test_without_the_plugin_its_names_are_unknown():
    assert "echo-agent" not in plugins.names("agents")
    assert plugins.names("reporters")[:3] == ("junit", "markdown", "html")
    with pytest.raises(plugins.UnknownPlugin, match="choose from mock, llm, agent"):
        plugins.load("agents", "echo-agent")


def test_every_built_in_agent_declares_its_capabilities_on_the_contract():
    # The engine reads capabilities as attributes: each built-in takes them from ``Agent``.
    from skillab.agents.base import Agent

    for name in plugins.BUILTINS["agents"]:
        assert Agent in plugins.load("agents", name).__mro__, name
    assert {n for n in plugins.BUILTINS["agents"] if plugins.load("agents", n).discovers_skills} == {
        "mock", "agent", "claude-code", "claude-agent-sdk", "openai-agents"}


BAD_GRADER_PLUGIN = PLUGIN.replace(
    "found = self.word in grading.final_output",
    "found = self.word in grading.final_output\n"
    "        if self.word == 'RAISE':\n"
    "            raise RuntimeError('the grader broke')").replace(
    '"found" if found else f"{self.word!r} is missing")',
    '"found" if found else f"{self.word!r} is missing", score="high")').replace(
    'graders=(SaysGrader("SKILLED"),)', 'graders=(SaysGrader("RAISE" if name.strip() == "bye" else "SKILLED"),)')


@pytest.mark.parametrize("command", ["report", "regrade"])
def test_a_plugin_grader_that_breaks_its_contract_errors_its_case_and_the_run_reads_back(tmp_path, command):
    # A grader from another package returned a non-numeric score (hello) or raised (bye): each is
    # that arm's grading error, named, and the results document reads back in every command.
    assert BAD_GRADER_PLUGIN.count("RAISE") == 2 and 'score="high"' in BAD_GRADER_PLUGIN
    site = tmp_path / "site"
    install_package(site, "skillab_lines_plugin", BAD_GRADER_PLUGIN, ENTRY_POINTS)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "echo-agent", "--model", "any", "--no-cache",
                    "--no-history", "--quiet", "--output", "results.json"], site, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [c["outcome"] for c in doc["cases"]] == ["error", "error"]
    hello, bye = (c["with_skill"]["extra"]["graders"][0] for c in doc["cases"])
    assert hello["errored"] and "score" in hello["reason"] and "'high'" in hello["reason"]
    assert bye["errored"] and "RuntimeError: the grader broke" in bye["reason"]
    args = ["report", "results.json"] if command == "report" else ["regrade", "results.json", "--output", "again.json"]
    again = skillab(args, site, tmp_path)
    assert "Traceback" not in again.stderr, again.stderr


@pytest.mark.parametrize(("source", "said"), [
    (PLUGIN.replace("class LinesFormat:", "class LinesFormat(:"), "SyntaxError: invalid syntax"),
    (PLUGIN + "\nraise RuntimeError('no config here')\n", "RuntimeError: no config here"),
    (PLUGIN.replace("FORMAT = LinesFormat()", "FORMATS = LinesFormat()"), "AttributeError"),
])
def test_a_plugin_that_fails_to_load_is_named_in_one_line(tmp_path, source, said):
    site = tmp_path / "site"
    install_package(site, "skillab_lines_plugin", source, ENTRY_POINTS)
    skill = skill_with_lines_suite(tmp_path)
    done = skillab(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet"], site, tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    line, = done.stderr.strip().splitlines()
    assert line.startswith("skillab: the installed skillab.formats plugin 'lines' "
                           "(skillab_lines_plugin:FORMAT) failed to load: ") and said in line, line
