"""The Action when things go wrong: broken suites, signals, files it may not write, whom it runs as.

Whatever happens, the comment, the job summary and the step outputs are written, and every
problem is an annotation, never a traceback that ends the step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from skillab.github.runtime import drop_to_owner

from ..action_harness import EVENTS, REPO, github, parse_output_file, private_cache, run_action  # noqa: F401
from ..skillgen import answers, grep_case, make_skill

# Inputs that crashed the Action before any GitHub call: YAML that reads as an impossible date,
# a tag that cannot construct, a date in the frontmatter.
BROKEN_SUITES = {
    "bad-date": ("eval.yaml", "cases:\n  - name: x\n    description: 2024-02-30\n    prompt: hi\n"),
    "bad-tag": ("eval.yaml", "cases:\n  - name: y\n    prompt: !!int x\n"),
    "frontmatter-date": ("SKILL.md", "---\nname: frontmatter-date\ndescription: 2024-02-30\n---\nbody\n"),
}


@pytest.fixture
def mixed_repo(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    skills = workspace / "skills"
    make_skill(skills, [grep_case("one")], name="good", responses={"one": answers("SKILLED", "plain")})
    for name, (file, text) in BROKEN_SUITES.items():
        skill = make_skill(skills, [grep_case("z")], name=name)
        (skill / file).write_text(text)
    return workspace


def test_broken_suites_become_error_rows_and_the_good_one_still_runs(mixed_repo, github):
    github.state.pr_files[(REPO, 7)] = [{"filename": f"skills/{n}/SKILL.md", "status": "modified"}
                                        for n in ["good", *BROKEN_SUITES]]
    result = run_action(mixed_repo, event_name="pull_request", event_file="pull_request_opened.json",
                        api_url=github.url, inputs={"adapter": "mock"})
    assert result.code == 1, result.log
    assert "Traceback" not in result.stderr
    for name in BROKEN_SUITES:
        assert re.search(rf"^::error file=skills/{name}/\S+::", result.stdout, re.M), name
        assert re.search(rf"^\| skills/{name} \| 0 \| .*⚠️ error \|$", result.summary, re.M), name
    assert re.search(r"^\| good \| 1 \| 100% \| 0% \| \+100\.0", result.summary, re.M)
    assert result.outputs["verdict"] == "error"
    assert json.loads(result.outputs["suites"]) == sorted(f"skills/{n}" for n in ["good", *BROKEN_SUITES])
    assert [d["suite"]["skill"] for d in result.results()["suites"]] == ["good"]
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 1 and "skills/bad-date" in comments[0]["body"]


@pytest.mark.serial  # bounds its own wall time: alone, not beside other tests' load
def test_sigterm_stops_the_run_kills_its_commands_and_writes_everything(tmp_path, github):
    workspace = tmp_path / "workspace"
    marker = f"{time.time_ns() % 10**6}.5"  # a unique sleep length, to find the command again
    slow = grep_case("slow")
    slow["validators"] = [{"cmd": f"sleep {marker}", "label": "slow"}]
    make_skill(workspace / "skills", [grep_case("quick"), slow], name="alpha",
               responses={"quick": answers("SKILLED", "plain"), "slow": answers("SKILLED", "plain")})
    runner_dir = tmp_path / "runner"
    runner_dir.mkdir()
    output, summary = runner_dir / "output", runner_dir / "summary.md"
    env = {**_action_env(workspace, github.url, output, summary), "INPUT_CONCURRENCY": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "skillab", "action"], cwd=workspace, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _running(marker):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stdout + stderr
    assert took < 5, f"took {took:.1f}s to stop"
    assert "Traceback" not in stderr and "interrupted" in stdout
    # Killed already; its pid namespace is torn down by the kernel a moment later.
    deadline = time.monotonic() + 3
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(marker), "the validator outlived the run"
    outputs = parse_output_file(output.read_text())
    assert outputs["suites"] == '["skills/alpha"]' and outputs["report-path"]
    assert "Interrupted: these are partial results." in summary.read_text()
    document = json.loads((workspace / outputs["results-path"]).read_text())["suites"][0]
    assert document["interrupted"] is True


def test_unwritable_summary_and_outputs_are_annotated_and_results_still_written(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    # A directory where the runner's file should be: writing it fails as a foreign owner would.
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock"}, in_process=True,
                        env={"GITHUB_STEP_SUMMARY": str(blocked), "GITHUB_OUTPUT": str(blocked)})
    assert result.code == 0, result.log
    assert re.search(r"^::error::skillab could not write the job summary to .*blocked", result.stdout, re.M)
    assert re.search(r"^::error::skillab could not write the step outputs to .*blocked", result.stdout, re.M)
    assert (workspace / "skillab-results" / "results.json").is_file()


@pytest.mark.skipif(os.geteuid() != 0, reason="changing uid needs root")
def test_as_root_the_entrypoint_becomes_the_workspace_owner(tmp_path):
    # Outside pytest's root-only temporary directory, which uid 4242 could not enter.
    outer = Path(tempfile.mkdtemp(prefix="skillab-uid-"))
    outer.chmod(0o755)
    workspace = outer / "workspace"
    workspace.mkdir()
    os.chown(workspace, 4242, 4343)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child drops, then writes a file as the entrypoint would
        try:
            environ = {"HOME": "/root"}
            identity = drop_to_owner(workspace, environ)
            (workspace / "written").write_text("x")
            os.write(write, json.dumps([identity.uid, identity.gid, environ["HOME"]]).encode())
        finally:
            os._exit(0)
    os.close(write)
    uid, gid, home = json.loads(os.read(read, 4096))
    os.waitpid(child, 0)
    assert (uid, gid) == (4242, 4343)
    written = (workspace / "written").stat()
    assert (written.st_uid, written.st_gid) == (4242, 4343)
    assert home != "/root" and Path(home).stat().st_uid == 4242  # root's HOME is not writable
    shutil.rmtree(outer)
    shutil.rmtree(home)


def test_a_root_owned_workspace_keeps_root(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    if os.geteuid() != 0:
        assert drop_to_owner(workspace, {}).uid == os.geteuid()
        return
    identity = drop_to_owner(workspace, {})
    assert (identity.uid, identity.note) == (0, None) and os.geteuid() == 0


def _running(marker: str) -> bool:
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    return bool(found.stdout.strip())


def _action_env(workspace: Path, api_url: str, output: Path, summary: Path) -> dict[str, str]:
    from skillab.github.inputs import INPUTS

    for path in (output, summary):
        path.write_text("")
    env = {spec.env_name: spec.default for spec in INPUTS}
    env.update({
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workspace.parent),
        "XDG_CACHE_HOME": str(workspace.parent / "cache"), "INPUT_ADAPTER": "mock",
        "GITHUB_EVENT_NAME": "schedule", "GITHUB_EVENT_PATH": str(EVENTS / "schedule.json"),
        "GITHUB_REPOSITORY": REPO, "GITHUB_WORKSPACE": str(workspace), "GITHUB_API_URL": api_url,
        "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
    })
    return env
