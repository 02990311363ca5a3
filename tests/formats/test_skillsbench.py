"""SkillsBench task packages: both layouts, every rule, what cannot run, the skill kept from the
baseline, and whole runs (mock and fake model server)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from skillab.cli import main
from skillab.engine.prepare import prepare_suite
from skillab.engine.runner import Execution
from skillab.errors import SuiteError
from skillab.formats.skillsbench.parser import prompt_section, rewrite_paths
from skillab.formats.skillsbench.specs import VerifierGrader
from skillab.suite import load_suite

from ..configs import run_config
from ..fakes.agents import ListingAdapter
from ..fakes.model_server import FakeModelServer, text, tool_call

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
SALES = EXAMPLES / "skillsbench-sales-report"
INI = EXAMPLES / "skillsbench-ini-migration"
SKILL_MD = "---\nname: {name}\ndescription: A skill for a test.\n---\nUse the helper script.\n"
TEST_SH = "mkdir -p /logs/verifier\ntest -f /root/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
FRONTMATTER = """\
---
schema_version: "1.1"
metadata:
  anything: goes
  tags: [one, two]
verifier:
  timeout_sec: 30
agent:
  timeout_sec: 120
environment:
  cpus: 1
---
"""


def make_task(root: Path, task_md: str | None = None, *, dockerfile: str | None = None,
              skills: tuple[str, ...] = ("helper",), verifier: str = "verifier", test_sh: str = TEST_SH) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if task_md is not None:
        (root / "task.md").write_text(task_md)
    env = root / "environment"
    (env / "data").mkdir(parents=True, exist_ok=True)
    (env / "data" / "input.csv").write_text("a,b\n1,2\n")
    for name in skills:
        (env / "skills" / name / "scripts").mkdir(parents=True, exist_ok=True)
        (env / "skills" / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
        (env / "skills" / name / "scripts" / "helper.py").write_text("print('helped')\n")
    if dockerfile is not None:
        (env / "Dockerfile").write_text(dockerfile)
    (root / verifier).mkdir(exist_ok=True)
    (root / verifier / "test.sh").write_text(test_sh)
    return root


def task_md(front: str = FRONTMATTER, body: str = "# Title\n\n## prompt\n\nWrite /root/out.txt from /root/data/input.csv.\n\n## notes\nignored\n") -> str:
    return front + body


# --- valid shapes ----------------------------------------------------------------------------


def test_the_task_md_example_loads_with_its_dockerfile_mapping():
    suite = load_suite(SALES)
    assert suite.format == "skillsbench" and suite.skill_dir == SALES / "environment" / "skills" / "finance-report"
    (case,) = suite.cases
    assert case.name == "skillsbench-sales-report"
    assert case.prompt.startswith("The sales export for Q3 is in ./data/sales.csv. Write") and "./report.json" in case.prompt
    assert "## notes" not in case.prompt and "/root" not in case.prompt
    assert [t for _, t in case.seed.files] == ["data/sales.csv"]  # COPY sales.csv /root/data/sales.csv
    assert case.timeout_s == 300 and case.unsupported is None and case.skill_files_in_every_arm is False
    assert case.tags == ("csv", "json", "finance")
    (grader,) = case.graders
    assert isinstance(grader, VerifierGrader) and grader.timeout_s == 60
    assert sorted(t for _, t in grader.tests.files) == ["check_report.py", "test.sh"]


def test_the_task_toml_example_loads_without_a_dockerfile():
    (case,) = load_suite(INI / "task.toml").cases
    assert case.prompt.endswith("Migrate\n./service.ini to ./config.json in the platform's configuration format.")
    assert [t for _, t in case.seed.files] == ["service.ini"]  # environment/ at the root, minus skills/
    assert case.timeout_s == 300 and case.graders[0].timeout_s == 60
    assert sorted(t for _, t in case.graders[0].tests.files) == ["test.sh", "test_outputs.py"]


def test_the_whole_body_is_the_prompt_without_a_prompt_heading(tmp_path):
    make_task(tmp_path / "t", task_md(body="Work in /root and write /root/out.txt.\n"))
    assert load_suite(tmp_path / "t").cases[0].prompt == "Work in . and write ./out.txt."


def test_prompt_section_stops_at_the_next_heading():
    body = "# T\n\n## Prompt\n\nline one\n### detail\nline two\n## Grading\nsecret\n"
    assert prompt_section(body) == "line one\n### detail\nline two"


@pytest.mark.parametrize("version", ['"1.0"', "1.0", "1.3", '"1.2.1"', "1"])
def test_schema_versions_1_x_are_read(tmp_path, version):
    make_task(tmp_path / "t", task_md(FRONTMATTER.replace('"1.1"', version)))
    assert load_suite(tmp_path / "t").cases[0].unsupported is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Save to /root/out.json.", "Save to ./out.json."),
        ("cd /root && ls", "cd . && ls"),
        ("/rootfs and a/root stay", "/rootfs and a/root stay"),
        ("/root/.claude/skills", "./.claude/skills"),
        ("/app/data then /application", "./data then /application"),
        ("Work in /root. Keep /root.bak", "Work in .. Keep /root.bak"),
    ],
)
def test_absolute_paths_in_the_prompt_become_workspace_paths(text, expected):
    assert rewrite_paths(text, [("/root", "."), ("/app", ".")]) == expected


def test_longer_prefixes_win_when_rewriting():
    mapping = [("/logs", "L"), ("/logs/verifier", "V")]
    assert rewrite_paths("echo 1 > /logs/verifier/reward.txt; ls /logs", mapping) == "echo 1 > V/reward.txt; ls L"


# --- the Dockerfile --------------------------------------------------------------------------


def test_dockerfile_copies_workdir_env_pip_and_mkdir_are_reproduced(tmp_path):
    dockerfile = textwrap.dedent(
        """\
        FROM python:3.12-slim
        WORKDIR /app
        ENV MODE=strict LEVEL=3
        COPY data/ ./inputs/
        COPY data/input.csv /root/raw.csv
        COPY skills /root/.claude/skills
        RUN pip install --no-cache-dir pyyaml==6.0.1 \\
            && mkdir -p /app/out
        CMD ["bash"]
        """
    )
    make_task(tmp_path / "t", task_md(), dockerfile=dockerfile)
    (case,) = load_suite(tmp_path / "t").cases
    assert case.unsupported is None
    assert sorted(t for _, t in case.seed.files) == ["inputs/input.csv", "raw.csv"]
    check, mkdir = case.setup.commands
    assert check.startswith("python3 -c ") and check.endswith(" pyyaml") and mkdir == "mkdir -p out"
    (grader,) = case.graders
    assert grader.workspace_paths == ("/root", "/app")
    assert ("MODE", "strict") in grader.env and ("LEVEL", "3") in grader.env


UNSUPPORTED = [
    ({"environment": "  docker_image: ghcr.io/org/task:1\n"}, None, "prebuilt image 'ghcr.io/org/task:1'"),
    ({"environment": "  gpus: 1\n"}, None, "needs a GPU"),
    ({"environment": "  gpu_types: [H100]\n"}, None, "needs a GPU"),
    ({"environment": "  allow_internet: true\n"}, None, "allow_internet: true"),
    ({"environment": "  os: windows\n"}, None, "operating system 'windows'"),
    ({}, "FROM node:20\n", "builds on 'node:20'"),
    ({}, "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y jq\n", "RUN 'apt-get update'"),
    ({}, "FROM python:3.12 AS build\nFROM python:3.12\n", "multi-stage"),
    ({}, "FROM python:3.12\nCOPY --from=build /x /root/x\n", "copies from another image"),
    ({}, "FROM python:3.12\nCOPY data /opt/data\n", "outside the paths skillab maps"),
    ({}, "FROM python:3.12\nADD https://example.com/x.tgz /root/\n", "downloads"),
    ({}, "FROM python:3.12\nCOPY missing.csv /root/\n", "not in environment/"),
    ({}, "FROM python:3.12\nHEALTHCHECK NONE\nONBUILD RUN x\n", "ONBUILD"),
]


@pytest.mark.parametrize("sections, dockerfile, reason", UNSUPPORTED)
def test_what_skillab_cannot_give_makes_the_case_unsupported(tmp_path, sections, dockerfile, reason):
    front = FRONTMATTER
    for name, extra in sections.items():
        front = front.replace(f"{name}:\n", f"{name}:\n{extra}", 1)
    make_task(tmp_path / "t", task_md(front), dockerfile=dockerfile)
    (case,) = load_suite(tmp_path / "t").cases
    assert case.unsupported and reason in case.unsupported, case.unsupported


@pytest.mark.parametrize(
    "script, reason",
    [
        ("apt-get install -y curl\n", "apt-get install"),
        ("curl -LsSf https://astral.sh/uv/install.sh | sh\n", "curl -LsSf"),
        ("pip install pytest==8.0\n", "pip install"),
        ("uv run pytest /tests\n", "uv run"),
        ("uvx pytest /tests\n", "uvx"),
    ],
)
def test_a_verifier_that_needs_the_network_makes_the_case_unsupported(tmp_path, script, reason):
    make_task(tmp_path / "t", task_md(), test_sh="#!/bin/bash\n# apt-get in a comment is fine\n" + script + TEST_SH)
    (case,) = load_suite(tmp_path / "t").cases
    assert "the verifier needs network (verifier/test.sh line 3" in case.unsupported and reason in case.unsupported


def test_several_containers_are_unsupported(tmp_path):
    make_task(tmp_path / "t", task_md())
    (tmp_path / "t" / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    assert "several containers" in load_suite(tmp_path / "t").cases[0].unsupported


# --- every rule, made to fail ----------------------------------------------------------------


INVALID = [
    (FRONTMATTER.replace("timeout_sec: 30", "timeout_sec: -1"), 7, "verifier.timeout_sec", "positive number"),
    (FRONTMATTER.replace("timeout_sec: 120", "timeout_sec: soon"), 9, "agent.timeout_sec", "positive number"),
    (FRONTMATTER.replace("  timeout_sec: 30\n", "  env: {TOKENS: 3}\n"), 7, "verifier.env", "string values"),
    (FRONTMATTER.replace("  cpus: 1\n", "  gpus: two\n"), 11, "environment.gpus", "whole number of GPUs"),
    (FRONTMATTER.replace("  cpus: 1\n", "  allow_internet: sometimes\n"), 11, "environment.allow_internet", "true or false"),
    (FRONTMATTER.replace("agent:\n  timeout_sec: 120\n", "agent: fast\n"), 8, "agent", "must be a mapping"),
    (FRONTMATTER + "", None, None, None),  # sanity: the base frontmatter is valid
    (FRONTMATTER.replace("metadata:", "verifier:\n  user: root\nmetadata:"), 8, "verifier", "duplicate key 'verifier' (first on line 3)"),
]


@pytest.mark.parametrize("front, line, field, message", INVALID)
def test_each_frontmatter_rule_names_file_line_and_field(tmp_path, front, line, field, message):
    make_task(tmp_path / "t", task_md(front))
    if field is None:
        load_suite(tmp_path / "t")
        return
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "t")
    found = [i for i in caught.value.issues if i.field == field]
    assert found, [str(i) for i in caught.value.issues]
    assert message in found[0].message and found[0].line == (line or 1)
    assert found[0].path == tmp_path / "t" / "task.md"


def test_frontmatter_yaml_errors_count_lines_from_the_top_of_the_file(tmp_path):
    make_task(tmp_path / "t", task_md(FRONTMATTER.replace("  cpus: 1\n", "  cpus: [1\n")))
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "t")
    assert caught.value.issues[0].line in (11, 12) and "invalid YAML" in caught.value.issues[0].message


@pytest.mark.parametrize(
    "content, message",
    [
        ("Just an instruction.\n", "needs YAML frontmatter"),
        ("---\nschema_version: '1.0'\nno end\n", "never closed"),
        ("---\n---\nbody\n", "the frontmatter is empty"),
        (FRONTMATTER + "\n## prompt\n\n## other\n", "has no instruction"),
    ],
)
def test_the_task_md_needs_frontmatter_and_an_instruction(tmp_path, content, message):
    make_task(tmp_path / "t", content)
    with pytest.raises(SuiteError, match=message):
        load_suite(tmp_path / "t")


def test_a_task_md_beside_criteria_json_points_at_ruby_skill_bench(tmp_path):
    make_task(tmp_path / "t", "# Task\nDo it.\n")
    with pytest.raises(SuiteError, match="needs YAML frontmatter") as caught:
        load_suite(tmp_path / "t" / "task.md")
    assert "ruby-skill-bench" not in str(caught.value)
    (tmp_path / "t" / "criteria.json").write_text("{}")
    with pytest.raises(SuiteError, match="ruby-skill-bench eval"):
        load_suite(tmp_path / "t" / "task.md")


def test_a_package_needs_a_skill(tmp_path):
    make_task(tmp_path / "t", task_md(), skills=())
    with pytest.raises(SuiteError, match="holds no skill"):
        load_suite(tmp_path / "t")


# Keys Harbor's TaskConfig accepts (or, being a pydantic model that ignores extras, tolerates):
# each loads, and one it does not use is a warning naming it.
HARBOR_TOML = """\
version = "0.0"
source = "skillsbench"

[task]
name = "org/sales-report"
version = "2"
authors = [{ name = "A. Author" }]

[metadata]
difficulty = "easy"

[agent]
timeout_sec = 120.0
network_mode = "no-network"

[verifier]
timeout_sec = 30.0
user = "root"

[environment]
cpus = 2
memory = "2G"
storage_mb = 1024
skills_dir = "/root/.claude/skills"
workdir = "/app"
healthcheck = { command = "true" }
env = { REPORT_DIR = "/app/reports" }
frobnicate = 1

[solution]
env = { SEED = "1" }
"""


def test_every_key_harbor_accepts_loads_and_an_unknown_one_is_a_warning(tmp_path):
    make_task(tmp_path / "t", None, verifier="tests")
    (tmp_path / "t" / "task.toml").write_text(HARBOR_TOML)
    (tmp_path / "t" / "instruction.md").write_text("Write /app/out.txt.\n")
    suite = load_suite(tmp_path / "t")
    (case,) = suite.cases
    assert case.unsupported is None and case.prompt == "Write ./out.txt."
    (grader,) = case.graders
    assert "/app" in grader.workspace_paths and ("REPORT_DIR", "/app/reports") in grader.env
    (warning,) = suite.warnings
    assert "'frobnicate'" in warning and "task.toml:28" in warning


def test_a_task_without_a_network_policy_runs_offline_with_a_warning(tmp_path):
    make_task(tmp_path / "t", task_md())
    suite = load_suite(tmp_path / "t")
    assert suite.cases[0].unsupported is None
    assert any("gives it the network by default" in w for w in suite.warnings)


@pytest.mark.parametrize("policy", ['network_mode = "public"', "allow_internet = true"])
def test_a_task_that_declares_the_network_is_unsupported_in_one_line(tmp_path, policy):
    make_task(tmp_path / "t", None, verifier="tests", dockerfile="FROM ubuntu:24.04\nRUN apt-get install -y jq\n")
    (tmp_path / "t" / "task.toml").write_text(f'version = "1.0"\n\n[environment]\n{policy}\n')
    (tmp_path / "t" / "instruction.md").write_text("Do it.\n")
    (case,) = load_suite(tmp_path / "t").cases
    assert case.unsupported.startswith("declares") and "\n" not in case.unsupported
    assert "and 1 more reason" in case.unsupported
    assert case.image is not None and case.image.dockerfile == tmp_path / "t" / "environment" / "Dockerfile"


def test_every_skill_of_a_multi_skill_task_goes_to_the_with_skill_arm_only(tmp_path):
    from skillab.skill import load_skill

    make_task(tmp_path / "t", task_md(), skills=("one", "two", "three"),
              dockerfile="FROM python:3.12\nWORKDIR /root\nCOPY ./skills /root/.claude/skills\nCOPY data /root/data\n")
    suite = load_suite(tmp_path / "t")
    skill = load_skill(suite.skill_dir)
    assert skill.index is not None and "one/SKILL.md" in skill.index and "three" in skill.body
    assert {"one/SKILL.md", "two/scripts/helper.py", "three/SKILL.md"} <= set(skill.bundled)
    (case,) = suite.cases
    staged = {target for _, target in case.seed.files}
    assert staged == {"data/input.csv"} and not case.skill_files_in_every_arm


def test_a_package_needs_a_verifier(tmp_path):
    make_task(tmp_path / "t", task_md(), verifier="checks")
    with pytest.raises(SuiteError, match=r"has no verifier — expected verifier/test.sh or tests/test.sh"):
        load_suite(tmp_path / "t")


TOML = 'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n\n[verifier]\ntimeout_sec = 30.0\n'


@pytest.mark.parametrize(
    "toml, line, field, message",
    [
        (TOML.replace("timeout_sec = 30.0", "timeout_sec = 0"), 7, "verifier.timeout_sec", "positive number"),
        (TOML.replace('version = "1.0"', "version = true"), 1, "version", "version string"),
        (TOML + '\n[environment]\nnetwork_mode = "sometimes"\n', 10, "environment.network_mode", "must be one of"),
    ],
)
def test_each_task_toml_rule_names_file_line_and_field(tmp_path, toml, line, field, message):
    make_task(tmp_path / "t", None, verifier="tests")
    (tmp_path / "t" / "task.toml").write_text(toml)
    (tmp_path / "t" / "instruction.md").write_text("Write /root/out.txt.\n")
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "t")
    found = [i for i in caught.value.issues if i.field == field]
    assert found, [str(i) for i in caught.value.issues]
    assert message in found[0].message and found[0].line == (line or 1)


def test_task_toml_syntax_errors_and_a_missing_instruction(tmp_path):
    make_task(tmp_path / "t", None, verifier="tests")
    (tmp_path / "t" / "task.toml").write_text(TOML + "[agent\n")
    with pytest.raises(SuiteError, match="invalid TOML") as caught:
        load_suite(tmp_path / "t")
    assert caught.value.issues[0].line == 8
    (tmp_path / "t" / "task.toml").write_text(TOML)
    with pytest.raises(SuiteError, match="instruction.md: is missing"):
        load_suite(tmp_path / "t")


# --- the skill never reaches the without-skill arm -------------------------------------------


def test_the_skill_directory_is_absent_from_the_without_skill_arm(tmp_path):
    adapter = ListingAdapter()
    config = run_config(adapter="listing", cache_enabled=False, keep_workspaces=True)
    prepared = prepare_suite(INI, config.engine)
    report = Execution(prepared, config, adapter, None, None, None).run()
    (record,) = report.log.records
    skill_files = {"scripts/ini_to_json.py", "SKILL.md"}
    # While the agent works: the with-skill arm has the skill's script, the baseline has nothing of it.
    assert "scripts/ini_to_json.py" in adapter.seen["with_skill"]
    assert "service.ini" in adapter.seen["with_skill"] and "service.ini" in adapter.seen["without_skill"]
    for arm in ("with_skill", "without_skill"):
        assert not any("skills" in f.split("/") for f in adapter.seen[arm])  # environment/skills/ never staged
    assert not skill_files & set(adapter.seen["without_skill"])
    # Nor is it there afterwards, when the verifier ran: it was never staged, so never restored.
    without_root = Path(record.without_skill.workspace)
    try:
        left = {str(p.relative_to(without_root)) for p in without_root.rglob("*") if p.is_file()}
        assert not skill_files & left and not any("ini_to_json" in f for f in left)
        assert record.without_skill.graders[0].kind == "verifier"
    finally:
        shutil.rmtree(without_root.parents[1], ignore_errors=True)



@pytest.mark.parametrize("copy", ["COPY * /root/", "COPY sk* /root/", "COPY skill[s] /root/kit/"])
def test_every_skill_reaches_the_with_skill_arm_and_no_pattern_copies_one_into_the_baseline(tmp_path, copy):
    """A task with two skills whose Dockerfile copies by pattern: the pattern matches
    ``skills/`` too, which Docker would copy into every arm's image."""
    make_task(tmp_path / "t", task_md(), dockerfile=f"FROM python:3.12-slim\nWORKDIR /root\n{copy}\n",
              skills=("alpha", "beta"))
    adapter = ListingAdapter()
    config = run_config(adapter="listing", cache_enabled=False)
    prepared = prepare_suite(tmp_path / "t", config.engine)
    Execution(prepared, config, adapter, None, None, None).run()
    with_arm, without_arm = adapter.seen["with_skill"], adapter.seen["without_skill"]
    for name in ("alpha", "beta"):
        assert any(f.endswith(f"{name}/SKILL.md") for f in with_arm), (name, with_arm)
        assert any(f.endswith(f"{name}/scripts/helper.py") for f in with_arm), (name, with_arm)
    assert not any(f.endswith(("SKILL.md", "helper.py")) for f in without_arm), without_arm


# --- whole runs ------------------------------------------------------------------------------


def run(targets: list[Path], tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "results.json"
    code = main(["run", *map(str, targets), "--output", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--no-history", "--quiet", *extra])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("package", [SALES, INI], ids=["task.md", "task.toml"])
def test_the_examples_run_with_the_mock_adapter(tmp_path, capsys, package):
    code, doc = run([package], tmp_path, "--adapter", "mock")
    assert code == 0, capsys.readouterr().err
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and doc["verdict"] == "pass"
    assert record["with_skill"]["extra"]["graders"][0]["reason"] == "reward 1 >= 1"
    assert record["without_skill"]["extra"]["graders"][0]["score"] == 0.0


def test_an_unsupported_package_is_an_error_record_with_its_reason_never_a_crash(tmp_path, capsys):
    package = make_task(tmp_path / "gpu-task", task_md(FRONTMATTER.replace("  cpus: 1\n", "  gpus: 1\n")))
    code, doc = run([package, INI], tmp_path / "out", "--adapter", "mock", "--fail-on-verdict", "error")
    err = capsys.readouterr().err
    assert code == 1 and "gpu-task" not in err.split("gate failed")[0]  # only the gate complains
    gpu, ini = doc["suites"]
    (record,) = gpu["cases"]
    assert record["outcome"] == "error" and gpu["verdict"] == "error"
    for arm in ("with_skill", "without_skill"):
        assert record[arm]["errored"] and record[arm]["error"].startswith("unsupported: needs a GPU")
        assert record[arm]["turns"] == 0 and record[arm]["task_attempted"] is False
    # The other package of the same run went on.
    assert ini["cases"][0]["outcome"] == "flip_to_pass"
    assert main(["validate", str(package)]) == 0
    assert "note: case gpu-task is unsupported" in capsys.readouterr().out


def test_only_what_the_tasks_own_image_cures_is_lifted_by_sandbox_image(tmp_path, capsys):
    dockerfile = "FROM alpine:3.20\nRUN apk add jq\n"
    cured = make_task(tmp_path / "cured", task_md(), dockerfile=dockerfile)
    (case,) = load_suite(cured / "task.md").cases
    assert case.unsupported.startswith("needs a custom image: Dockerfile line 1")
    assert case.image.dockerfile == cured / "environment" / "Dockerfile" and case.unsupported_in_image is None
    assert main(["validate", str(cured)]) == 0
    assert "note: case cured runs with --sandbox image" in capsys.readouterr().out
    (lifted,) = prepare_suite(cured, run_config(adapter="mock", sandbox="image").engine).graded
    assert lifted.unsupported is None
    # A GPU is not something a built image provides: the case stays unsupported under the backend.
    gpu = make_task(tmp_path / "gpu", task_md(FRONTMATTER.replace("  cpus: 1\n", "  gpus: 1\n")), dockerfile=dockerfile)
    (case,) = prepare_suite(gpu, run_config(adapter="mock", sandbox="image").engine).graded
    assert case.unsupported.startswith("needs a GPU") and "custom image" not in case.unsupported


def test_a_missing_pip_package_errors_the_arms_with_a_clear_message(tmp_path, capsys):
    dockerfile = "FROM python:3.12-slim\nWORKDIR /root\nRUN pip install surely-not-installed-pkg==1.0\n"
    package = make_task(tmp_path / "t", task_md(), dockerfile=dockerfile)
    code, doc = run([package], tmp_path / "out", "--adapter", "mock")
    (record,) = doc["cases"]
    assert record["outcome"] == "error"
    assert "needs the Python packages surely-not-installed-pkg" in record["with_skill"]["error"]


# --- through the fake model server -----------------------------------------------------------


def agent(req):
    """With the skill, the agent runs the skill's bundled script on the staged data; without it,
    it writes the report by hand in euros."""
    with_skill = "scripts/report.py" in req.system_text
    if not req.tool_results:
        if with_skill:
            return tool_call("run_shell", {"command": "python3 scripts/report.py data/sales.csv report.json"})
        return tool_call("write_file", {"path": "report.json", "content": '{"total": 450.24}\n'})
    return text("Wrote report.json.")


@pytest.fixture
def model_server(monkeypatch):
    with FakeModelServer(agent) as fake:
        fake.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "SkillsBench" * 4)
        yield fake


def test_the_example_runs_through_the_fake_model_server(model_server, tmp_path, capsys):
    code, doc = run([SALES], tmp_path, "--model", "claude-haiku-4-5")
    assert code == 0, capsys.readouterr().err
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass" and doc["verdict"] == "pass", record
    # The with-skill agent ran the bundled script on data the Dockerfile's COPY put in place.
    shell = [r for r in model_server.requests if r.tool_results and "scripts/report.py" in r.system_text]
    assert shell and "exit code: 0" in shell[0].tool_results[0]
    # The instruction reached the model with workspace paths.
    first = next(r for r in model_server.requests if not r.tool_results)
    assert "./data/sales.csv" in first.last_user_text and "/root" not in first.last_user_text
    assert doc["models"]["judge"] is None  # a verifier needs no judge


def test_the_one_line_reason_never_cuts_a_reason_mid_word():
    from skillab.formats.skillsbench.parser import one_line

    # As benchflow-ai/skillsbench's organize-messy-files reads: 127 reasons, each a Dockerfile line.
    reasons = [f"needs a custom image: Dockerfile line {n}: RUN 'apt-get install -y libreoffice poppler-utils'"
               for n in range(1, 128)]
    line = one_line(reasons)
    assert line.startswith(reasons[0] + " (and 126 more reasons: ") and line.endswith("; …)")
    listed = line[len(reasons[0] + " (and 126 more reasons: "):-len("; …)")].split("; ")
    assert listed and all(reason in reasons for reason in listed)


def test_a_harbor_task_working_in_app_with_no_dockerfile_maps_app_into_the_workspace(tmp_path, capsys):
    # Harbor's template works in /app; without a Dockerfile the verifier's /app/out.txt could
    # never be found and the error blamed the missing reward file.
    test_sh = ("mkdir -p /logs/verifier\n"
               "test -f /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    root = make_task(tmp_path / "t", verifier="tests", test_sh=test_sh)
    (root / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = 30\n')
    (root / "instruction.md").write_text("Write /app/out.txt with the answer.\n")
    (root / "mock-responses.yaml").write_text(yaml.safe_dump(
        {"t": {"with": {"text": "done", "files": {"out.txt": "42\n"}}, "without": "no"}}))
    (case,) = load_suite(root / "task.toml").cases
    assert "/app" in case.graders[0].workspace_paths and "/app" not in case.prompt
    code, doc = run([root], tmp_path / "out", "--adapter", "mock")
    (record,) = doc["cases"]
    assert record["outcome"] == "flip_to_pass", capsys.readouterr().err


def test_metadata_parent_task_is_named_on_the_case(tmp_path):
    root = make_task(tmp_path / "variant-2", verifier="tests")
    (root / "task.toml").write_text('version = "1.0"\n[metadata]\nparent_task = "sales-report"\n')
    (root / "instruction.md").write_text("Write /root/out.txt.\n")
    (case,) = load_suite(root / "task.toml").cases
    assert "parent-task:sales-report" in case.tags


def test_a_verifier_finds_the_console_scripts_of_the_virtualenv_skillab_runs_from(tmp_path, monkeypatch):
    # The quickstart's activated virtualenv holds skillab and pytest: the verifier's `pytest` is
    # that virtualenv's, mounted with its python3, never covered as skillab's own.
    import sys

    if sys.prefix == sys.base_prefix or not (Path(sys.executable).parent / "pytest").is_file():
        pytest.skip("runs only from a virtualenv that has pytest")
    monkeypatch.setenv("SKILLAB_GRADER_PYTHON", sys.executable)
    test_sh = ("mkdir -p /logs/verifier\n"
               "pytest --version && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    root = make_task(tmp_path / "t", verifier="tests", test_sh=test_sh)
    (root / "task.toml").write_text('version = "1.0"\n')
    (root / "instruction.md").write_text("Say hi.\n")
    code, doc = run([root], tmp_path / "out", "--adapter", "mock")
    (record,) = doc["cases"]
    assert record["outcome"] == "pass_kept", record["with_skill"]["extra"]["graders"][0]["reason"]
