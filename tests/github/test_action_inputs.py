"""One inputs table: action.yml, the entrypoint, docs/action.md and the example workflows agree on it."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

from skillab.errors import UsageError
from skillab.github.action_yml import VARIANTS, render
from skillab.github.entrypoint import main
from skillab.github.inputs import INPUT_NAMES, INPUTS, read_inputs
from skillab.secrets import SECRET_ENV_VARS

from ..action_harness import EVENTS, parse_output_file
from ..skillgen import answers, grep_case, make_skill

ROOT = Path(__file__).resolve().parent.parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
PACKAGE = ROOT / "runner" / "skillab"
OUTPUTS = {"verdict", "delta-pts", "suites", "results-path", "report-path", "html-path"}


class RecordingEnv(Mapping[str, str]):
    """An environment that remembers every variable the code looked up by name."""

    def __init__(self, values: dict[str, str]):
        self._values = values
        self.looked_up: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.looked_up.add(key)
        return self._values[key]

    def get(self, key, default=None):
        self.looked_up.add(key)
        return self._values.get(key, default)

    def __contains__(self, key: object) -> bool:
        self.looked_up.add(str(key))
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def items(self):
        # Scanning every variable (the redactor looks for secret values) is not reading an input.
        return self._values.items()

    def __len__(self) -> int:
        return len(self._values)


def readme_inputs() -> list[str]:
    text = (ROOT / "docs" / "action.md").read_text()
    match = re.search(r"^## Inputs\n(.*?)(?=^#)", text, re.S | re.M)
    assert match, "docs/action.md has no '## Inputs' section for the Action"
    return re.findall(r"^\| `([a-z-]+)` \|", match.group(1), re.M)


def test_action_yml_declares_exactly_the_inputs_table_with_its_defaults():
    declared = ACTION["inputs"]
    assert list(declared) == list(INPUT_NAMES)
    for spec in INPUTS:
        assert str(declared[spec.name]["default"]) == spec.action_default, spec.name
        assert declared[spec.name]["description"].strip()
    assert set(ACTION["outputs"]) == OUTPUTS
    assert ACTION["runs"]["using"] == "composite"  # see tests/github/test_action_composite.py


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_action_yml_is_what_the_generator_writes(variant):
    path, dockerfile, _ = VARIANTS[variant]
    assert (ROOT / path).read_text() == render(variant), (
        f"regenerate: python -m skillab.github.action_yml --variant {variant} > {path}")
    assert (ROOT / dockerfile).is_file()
    assert set(yaml.safe_load((ROOT / path).read_text())["outputs"]) == OUTPUTS


def test_readme_documents_every_input_and_no_other():
    assert readme_inputs() == list(INPUT_NAMES)


def test_env_names_keep_hyphens_and_secret_inputs_are_masked():
    assert {s.name: s.env_name for s in INPUTS}["judge-model"] == "INPUT_JUDGE-MODEL"
    secret_inputs = {s.env_name for s in INPUTS if s.secret}
    assert secret_inputs == {"INPUT_GITHUB-TOKEN", "INPUT_ANTHROPIC-API-KEY", "INPUT_OPENAI-API-KEY",
                             "INPUT_GEMINI-API-KEY", "INPUT_CACHE-KEY"}
    assert secret_inputs <= SECRET_ENV_VARS
    masked_inputs = {name for name in SECRET_ENV_VARS if name.startswith("INPUT_")}
    assert masked_inputs <= {s.env_name for s in INPUTS}


def test_no_module_names_an_input_variable_outside_the_table():
    named = {
        name
        for path in PACKAGE.rglob("*.py")
        for name in re.findall(r"[\"'](INPUT_[A-Z][A-Z0-9_-]*)[\"']", path.read_text())
    }
    assert named and named <= {spec.env_name for spec in INPUTS}


def test_a_whole_action_run_reads_every_input_of_the_table_and_no_other(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    values = {spec.env_name: spec.default for spec in INPUTS}
    values.update({"INPUT_ADAPTER": "mock", "INPUT_PATH": "skills", "INPUT_SOMETHING-ELSE": "ignored"})
    env = RecordingEnv({
        **values,
        "GITHUB_EVENT_NAME": "schedule",
        "GITHUB_EVENT_PATH": str(EVENTS / "schedule.json"),
        "GITHUB_REPOSITORY": "octo-org/skills-repo",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    })
    log = io.StringIO()
    assert main([], env=env, stdout=log) == 0, log.getvalue()
    read = {name for name in env.looked_up if name.startswith("INPUT_")}
    assert read == {spec.env_name for spec in INPUTS}
    assert set(parse_output_file(output.read_text())) == OUTPUTS
    assert json.loads(parse_output_file(output.read_text())["suites"]) == ["skills/alpha"]


@pytest.mark.parametrize("workflow", sorted((ROOT / "examples" / "workflows").glob("*.yml")), ids=lambda p: p.name)
def test_example_workflows_use_only_real_inputs_and_outputs(workflow):
    data = yaml.safe_load(workflow.read_text())
    steps = [step for job in data["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if str(step.get("uses", "")).startswith("OWNER/skillab@")]
    assert ours, "the example does not use the action"
    for step in ours:
        assert set(step.get("with", {})) <= set(INPUT_NAMES)
    used_outputs = set(re.findall(r"steps\.skillab\.outputs\.([a-z-]+)", workflow.read_text()))
    assert used_outputs <= OUTPUTS


def test_repository_ci_runs_the_ci_script_on_python_3_11():
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = ci["jobs"]["test"]["steps"]
    assert any(s.get("with", {}).get("python-version") == "3.11" for s in steps)
    assert any(s.get("run") == "bash .ci/run" for s in steps)


@pytest.mark.parametrize("name,value,message", [
    ("mode", "sometimes", "input 'mode' must be one of auto, changed, all"),
    ("runs", "0", "input 'runs': must be a positive integer, got '0'"),
    ("concurrency", "x", "input 'concurrency': expected an integer, got 'x'"),
    ("min-delta-pts", "five", "input 'min-delta-pts': expected a number, got 'five'"),
    ("target-lift-pts", "-5", "input 'target-lift-pts': must be a number of points from 0.1 (what a report prints) to 100"),
    ("target-lift-pts", "500", "input 'target-lift-pts': must be a number of points from 0.1 (what a report prints) to 100"),
    ("target-lift-pts", "0.001", "input 'target-lift-pts': must be a number of points from 0.1 (what a report prints) to 100"),
    ("target-lift-pts", "0", "input 'target-lift-pts': must be a number of points from 0.1 (what a report prints) to 100"),
    ("comment", "maybe", "input 'comment' must be true or false"),
    ("fail-on-verdict", "fail,bad", "input 'fail-on-verdict' takes fail, mixed, error"),
    ("shard", "4/3", "input 'shard' '4/3': I must be between 1 and N"),
    ("shard", "two", "input 'shard' takes I/N (for example 2/3), got 'two'"),
    ("sandbox", "docker", "input 'sandbox': invalid choice: 'docker' (choose from 'bwrap', 'image', 'none')"),
])
def test_bad_values_name_the_input(name, value, message):
    env = {spec.env_name: spec.default for spec in INPUTS}
    env[f"INPUT_{name.upper()}"] = value
    with pytest.raises(UsageError, match=re.escape(message)):
        read_inputs(env)


def test_parsed_inputs_and_their_repr_keep_secrets_out():
    key = "sk-ant-api03-" + "S" * 40
    inputs = read_inputs({"INPUT_ANTHROPIC-API-KEY": key, "INPUT_GITHUB-TOKEN": "ghs_" + "t" * 36,
                          "INPUT_FAIL-ON-VERDICT": "", "INPUT_MIN-DELTA-PTS": "2.5", "INPUT_RUNS": " "})
    assert inputs.fail_on_verdict == () and inputs.min_delta_pts == 2.5 and inputs.runs == 1
    assert inputs.provider_keys() == {"ANTHROPIC_API_KEY": key}
    for text in (repr(inputs), repr(inputs.provider_keys()), str(inputs.provider_keys())):
        assert key not in text and "ghs_" not in text


def test_the_placebo_and_evidence_ledger_inputs_reach_the_run_and_the_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    values = {spec.env_name: spec.default for spec in INPUTS}
    values.update({"INPUT_ADAPTER": "mock", "INPUT_PATH": "skills", "INPUT_PLACEBO": "true",
                   "INPUT_EVIDENCE-LEDGER": ".skillab/evidence.jsonl", "INPUT_CACHE-KEY": "a secret"})
    env = RecordingEnv({
        **values,
        "GITHUB_EVENT_NAME": "schedule",
        "GITHUB_EVENT_PATH": str(EVENTS / "schedule.json"),
        "GITHUB_REPOSITORY": "octo-org/skills-repo",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    })
    log = io.StringIO()
    assert main([], env=env, stdout=log) == 0, log.getvalue()
    text = summary.read_text()
    assert "**Placebo**" in text and "content (skill vs placebo)" in text
    assert "**Evidence across runs**" in text and "1 flips to pass" in text
    assert (workspace / ".skillab" / "evidence.jsonl").is_file()
