"""The composite Action: its step, run as GitHub runs it, `docker run`s the image with exactly the
options bubblewrap needs and nothing broader, and hands the container every input.

A fake ``docker`` on PATH records the argv and environment the real launcher gives it; the
step's ``env`` is evaluated from action.yml the way GitHub evaluates ``${{ inputs.X }}``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from skillab.github.action_yml import LAUNCHER, VARIANTS, render
from skillab.github.inputs import INPUTS

ROOT = Path(__file__).resolve().parent.parent.parent
SECRET = "sk-ant-api03-" + "Q" * 40
TOKEN = "ghs_" + "t" * 36
FAKE_DOCKER = """#!/bin/bash
n=$(ls "$DOCKER_LOG" | wc -l)
printf '%s\\0' "$@" > "$DOCKER_LOG/$n.argv"
env -0 > "$DOCKER_LOG/$n.env"
"""
# What bwrap needs inside the container, and the tightening around it: the whole set, no more.
SECURITY = [("--security-opt", "seccomp=unconfined"), ("--security-opt", "systempaths=unconfined"),
            ("--security-opt", "no-new-privileges"), ("--cap-drop", "ALL")]
BROADER = ("--privileged", "--cap-add", "--pid", "--ipc", "--userns", "--device", "--network=host",
           "--uts", "--cgroupns", "--volumes-from")


def step(variant: str, image: str | None = None) -> dict:
    action = yaml.safe_load(render(variant, image))
    assert action["runs"]["using"] == "composite"
    [only] = action["runs"]["steps"]
    return only


def evaluate(env: dict[str, str], with_: dict[str, str], action_path: Path) -> dict[str, str]:
    """The step's env as GitHub evaluates it: ``inputs.X`` is the `with:` value or the default."""
    defaults = {spec.name: spec.action_default for spec in INPUTS}
    values = {**defaults, "github-token": TOKEN, **with_}

    def one(value: str) -> str:
        value = value.replace("${{ github.action_path }}", str(action_path))
        return re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: values[m.group(1)], value)

    return {name: one(value) for name, value in env.items()}


def run_step(tmp_path: Path, variant: str, with_: dict[str, str], image: str | None = None,
             extra_env: dict[str, str] | None = None) -> list[tuple[list[str], dict[str, str]]]:
    """Run the step's `run:` with the runner's environment; returns each docker call."""
    the_step = step(variant, image)
    bin_dir, log = tmp_path / "bin", tmp_path / "docker-calls"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    temp, workflow = tmp_path / "_temp", tmp_path / "_temp" / "_github_workflow"
    commands = temp / "_runner_file_commands"
    for directory in (commands, workflow, tmp_path / "workspace"):
        directory.mkdir(parents=True, exist_ok=True)
    (workflow / "event.json").write_text("{}")
    action_path = ROOT / Path(VARIANTS[variant][0]).parent
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": "/home/runner", "CI": "true",
        "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(action_path),
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"), "GITHUB_REPOSITORY": "acme/skills",
        "GITHUB_EVENT_PATH": str(workflow / "event.json"), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_OUTPUT": str(commands / "set_output_1"),
        "GITHUB_STEP_SUMMARY": str(commands / "step_summary_1"),
        "GITHUB_API_URL": "https://api.github.com", "DOCKER_LOG": str(log),
        "AWS_SECRET_ACCESS_KEY": "not-for-the-container", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
        **(extra_env or {}),
        **evaluate(the_step["env"], with_, action_path),
    }
    done = subprocess.run([the_step["shell"], "-c", the_step["run"]], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = []
    for argv_file in sorted(log.glob("*.argv"), key=lambda p: int(p.stem)):
        argv = argv_file.read_bytes().decode().split("\0")[:-1]
        environ = dict(kv.split("=", 1) for kv in
                       (log / f"{argv_file.stem}.env").read_bytes().decode().split("\0") if "=" in kv)
        calls.append((argv, environ))
    return calls


def container_env(argv: list[str], docker_env: dict[str, str]) -> dict[str, str]:
    """What `docker run -e NAME` / `-e NAME=VALUE` puts in the container."""
    env = {}
    for flag, value in zip(argv, argv[1:]):
        if flag == "-e":
            name, _, given = value.partition("=")
            if "=" in value:
                env[name] = given
            elif name in docker_env:
                env[name] = docker_env[name]
    return env


def options(argv: list[str], flag: str) -> list[str]:
    return [value for f, value in zip(argv, argv[1:]) if f == flag]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_action_yml_is_composite_and_maps_every_input_and_output(variant):
    action = yaml.safe_load((ROOT / VARIANTS[variant][0]).read_text())
    [the_step] = action["runs"]["steps"]
    assert {spec.env_name: f"${{{{ inputs.{spec.name} }}}}" for spec in INPUTS}.items() <= the_step["env"].items()
    assert set(action["inputs"]) == {spec.name for spec in INPUTS}
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.{the_step['id']}.outputs.{name} }}}}"
    assert the_step["run"].endswith(f'/{LAUNCHER}"') and (ROOT / LAUNCHER).is_file()
    dockerfile = the_step["env"]["SKILLAB_DOCKERFILE"].replace("${{ github.action_path }}",
                                                              str((ROOT / VARIANTS[variant][0]).parent))
    assert Path(dockerfile).resolve() == (ROOT / VARIANTS[variant][1])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_step_runs_the_image_with_exactly_the_sandbox_options(tmp_path, variant):
    calls = run_step(tmp_path, variant, {"adapter": "mock", "anthropic-api-key": SECRET,
                                         "judge-model": "m-2", "sandbox": "bwrap"})
    (build, _), (run, docker_env) = calls
    assert build[:2] == ["build", "--quiet"] and Path(build[-1]).resolve() == ROOT
    assert Path(options(build, "--file")[0]).resolve() == ROOT / VARIANTS[variant][1]
    assert run[0] == "run" and run[-1] == "skillab-action:local"
    pairs = [(f, v) for f, v in zip(run, run[1:]) if f in ("--security-opt", "--cap-drop")]
    assert sorted(pairs) == sorted(SECURITY)
    assert not [a for a in run if a.startswith(BROADER)]
    assert options(run, "--user") == [f"{os.getuid()}:{os.getgid()}"]
    # Secrets travel through docker's environment, never its argv (visible in ps).
    assert not [a for a in run if SECRET in a or TOKEN in a]
    inside = container_env(run, docker_env)
    for spec in INPUTS:
        assert spec.env_name in inside, spec.env_name
    assert inside["INPUT_ANTHROPIC-API-KEY"] == SECRET and inside["INPUT_GITHUB-TOKEN"] == TOKEN
    assert inside["INPUT_JUDGE-MODEL"] == "m-2" and inside["INPUT_SANDBOX"] == "bwrap"
    assert inside["INPUT_FAIL-ON-VERDICT"] == "fail,error"  # the default
    assert "AWS_SECRET_ACCESS_KEY" not in inside  # only what a container action gets
    assert "ACTIONS_ID_TOKEN_REQUEST_TOKEN" not in inside  # and not the OIDC token either
    # The paths GitHub rewrites for a container action.
    assert inside["GITHUB_WORKSPACE"] == "/github/workspace" and inside["HOME"] == "/github/home"
    assert inside["GITHUB_EVENT_PATH"] == "/github/workflow/event.json"
    assert inside["GITHUB_OUTPUT"] == "/github/file_commands/set_output_1"
    assert inside["GITHUB_STEP_SUMMARY"] == "/github/file_commands/step_summary_1"
    mounts = {dst: src for src, dst, *_mode in (v.split(":") for v in options(run, "-v"))}
    assert mounts["/github/workspace"] == str(tmp_path / "workspace")
    assert mounts["/github/file_commands"] == str(tmp_path / "_temp" / "_runner_file_commands")
    home = Path(mounts["/github/home"])
    assert home.parent == tmp_path / "_temp" and home.is_dir()  # never the runner's HOME
    assert options(run, "--workdir") == ["/github/workspace"]


def test_a_release_runs_the_pinned_image_without_building(tmp_path):
    digest = "ghcr.io/acme/skillab@sha256:" + "a" * 64
    [(run, _)] = run_step(tmp_path, "slim", {"adapter": "mock"}, image=f"docker://{digest}")
    assert run[0] == "run" and run[-1] == digest


def test_provider_keys_given_as_env_reach_the_container(tmp_path):
    [_, (run, docker_env)] = run_step(tmp_path, "slim", {"model": "claude-x"},
                                      extra_env={"ANTHROPIC_API_KEY": SECRET})
    assert container_env(run, docker_env)["ANTHROPIC_API_KEY"] == SECRET
    assert SECRET not in " ".join(run)
