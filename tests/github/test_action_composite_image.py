"""The composite Action's container, built and run as its step runs it, keeps the sandbox's
guarantees: the step's real launcher (``docker/run-action.sh``) is run as the runner's uid with a
recording ``docker``; its ``docker run`` argv becomes an OCI bundle (the image kit's Docker
defaults, then exactly the options that argv gives), which runc runs on the kit's image.

Opt-in (minutes, root, buildah and runc), as ``test_action_image_run.py``:
``SKILLAB_IMAGE_TESTS=1 python -m pytest tests/github/test_action_composite_image.py`` (with
``SKILLAB_IMAGE_BUILT=1`` when the kit's ``$IMAGE`` is current).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..action_harness import parse_output_file
from ..engine.test_against import commit_all, git
from ..fakes.github_server import GitHubServer
from ..skillgen import answers, grep_case, make_skill
from .test_action_composite import FAKE_DOCKER, container_env, evaluate, step
from .test_action_image_run import KIT, KIT_WORK, REPO, TOKEN, image  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parent.parent.parent
RUNNER_UID = 1001  # the runner's user on GitHub-hosted runners
KEY = "sk-ant-api03-PROBE" + "k" * 30
IMAGE = os.environ.get("IMAGE", "localhost/skillab:latest")
# A probe for setup and validators: reads every place a secret could be and names what it found.
# The secrets are spelled in two pieces so that the suite's own files do not contain them.
PROBE = r"""t=ghs_kit""0000; k=sk-ant-api03-""PROBE
hit() { echo "found: $1"; found=1; }
found=0
env | grep -q -e "$t" -e "$k" && hit env
[ -n "$(printenv INPUT_GITHUB-TOKEN)$(printenv INPUT_ANTHROPIC-API-KEY)" ] && hit input-env
tr '\0' '\n' < /proc/1/environ 2>/dev/null | grep -q -e "$t" -e "$k" && hit /proc/1/environ
for f in /proc/[0-9]*/environ; do
  tr '\0' '\n' < "$f" 2>/dev/null | grep -q -e "$t" -e "$k" && hit "$f"
done
for d in "$HOME" /github /root /home /tmp; do
  grep -rqs -e "$t" -e "$k" "$d" 2>/dev/null && hit "files under $d"
done
exit $found
"""
# Looks for a key another sandbox of the run planted in the session keyring runc gives the
# container, then plants its own: run by every arm of every case, so any shared keyring fails one.
KEY_PROBE = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
found = libc.syscall(KEYCTL, 10, -3, b"user", b"skillab-probe", 0)
print("found" if found >= 0 else f"none {ctypes.get_errno()}")
token = b"planted-by-an-arm"
planted = libc.syscall(ADD_KEY, b"user", b"skillab-probe", token, len(token), -3)
print("planted" if planted >= 0 else f"refused {ctypes.get_errno()}")
sys.exit(1 if found >= 0 else 0)
'''
pytestmark = pytest.mark.skipif(
    os.environ.get("SKILLAB_IMAGE_TESTS") != "1" or os.geteuid() != 0 or not (KIT / "oci-config.py").is_file()
    or shutil.which("setpriv") is None,
    reason="image tests are opt-in: SKILLAB_IMAGE_TESTS=1, as root, with the image kit and setpriv",
)


def kit_buildah(*args: str) -> str:
    return subprocess.run(["buildah", "--root", str(KIT_WORK / "storage"), "--runroot",
                           str(KIT_WORK / "runroot"), "--storage-driver", "vfs", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def github():
    server = GitHubServer()
    server.state.tokens[TOKEN] = "write"
    with server:
        yield server


@pytest.fixture
def runner() -> Iterator[Path]:
    """The runner's job directories: a checkout whose last commit edits a probing skill (with the
    token in .git/config, as actions/checkout leaves it), _temp, and a HOME with credentials.
    Outside pytest's tmp_path, which the runner's uid cannot enter."""
    top = Path(tempfile.mkdtemp(prefix="skillab-composite-"))
    top.chmod(0o755)
    try:
        yield _runner_dirs(top / "work")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _runner_dirs(work: Path) -> Path:
    repo = work / "checkout"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    probe = grep_case("probe", setup=[f"(\n{PROBE}) > probe-setup.txt; true"])
    probe["validators"] = [{"cmd": "! grep found probe-setup.txt", "label": "setup found nothing"},
                           {"cmd": PROBE, "label": "validator found nothing"}]
    keyring = [dict(grep_case(name), validators=[{"cmd": "python3 scripts/key_probe.py", "label": "keyring"}])
               for name in ("first", "second")]
    for version in ("v1", "v2"):
        make_skill(repo / "skills", [probe], name="alpha", body=version,
                   responses={"probe": answers("SKILLED", "SKILLED")})
        make_skill(repo / "skills", keyring, name="delta", body=version, files={"scripts/key_probe.py": KEY_PROBE},
                   responses={"first": answers("a", "b"), "second": answers("a", "b")})
        commit_all(repo, "base" if version == "v1" else "head")
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: bearer {TOKEN}")
    home = work / "runner-home"
    (home / ".docker").mkdir(parents=True)
    (home / ".docker" / "config.json").write_text(json.dumps({"auths": {"ghcr.io": {"auth": TOKEN}}}))
    (home / ".anthropic-key").write_text(KEY)
    commands = work / "_temp" / "_runner_file_commands"
    commands.mkdir(parents=True)
    for name in ("set_output_1", "step_summary_1"):
        (commands / name).touch()
    (work / "_temp" / "_github_workflow").mkdir()
    head, base = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD~1")
    def side(sha):
        return {"sha": sha, "ref": "x", "repo": {"full_name": REPO, "fork": False}}
    (work / "_temp" / "_github_workflow" / "event.json").write_text(json.dumps({
        "number": 1, "repository": {"full_name": REPO},
        "pull_request": {"number": 1, "head": side(head), "base": side(base)}}))
    subprocess.run(["chown", "-R", f"{RUNNER_UID}:{RUNNER_UID}", str(work)], check=True)
    return work


def launcher_run(work: Path, github: GitHubServer, with_: dict[str, str],
                 extra_env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """Run the step's launcher as the runner's uid; return its `docker run` argv and environment."""
    the_step = step("slim")
    bin_dir, log = work / "bin", work / "docker-calls"
    for d in (bin_dir, log):
        d.mkdir(exist_ok=True)
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    subprocess.run(["chown", "-R", f"{RUNNER_UID}:{RUNNER_UID}", str(bin_dir), str(log)], check=True)
    commands = work / "_temp" / "_runner_file_commands"
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(work / "runner-home"),
        "CI": "true", "RUNNER_TEMP": str(work / "_temp"), "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_WORKSPACE": str(work / "checkout"), "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(work / "_temp" / "_github_workflow" / "event.json"),
        "GITHUB_OUTPUT": str(commands / "set_output_1"), "GITHUB_STEP_SUMMARY": str(commands / "step_summary_1"),
        "GITHUB_API_URL": github.url, "GITHUB_REF": "refs/pull/1/merge", "DOCKER_LOG": str(log),
        **evaluate(the_step["env"], {"github-token": TOKEN, **with_}, ROOT), **(extra_env or {}),
    }
    done = subprocess.run(["setpriv", f"--reuid={RUNNER_UID}", f"--regid={RUNNER_UID}", "--clear-groups",
                           "bash", "-c", the_step["run"]], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    last = max(log.glob("*.argv"), key=lambda p: int(p.stem))
    argv = last.read_bytes().decode().split("\0")[:-1]
    docker_env = dict(kv.split("=", 1) for kv in
                      (log / f"{last.stem}.env").read_bytes().decode().split("\0") if "=" in kv)
    assert argv[0] == "run"
    return argv, docker_env


def bundle(argv: list[str], docker_env: dict[str, str], rootfs: str, inspect: Path, out: Path,
           command: list[str] | None = None) -> Path:
    """config.json for `docker run ARGV`: the kit's Docker defaults, then what ARGV changes. An
    option this does not know fails the test rather than being ignored. ``command`` replaces the
    entrypoint."""
    opts, env, binds, i = {"--security-opt": []}, container_env(argv, docker_env), [], 1
    while i < len(argv) - 1:
        flag, value = argv[i], argv[i + 1]
        if flag == "--rm":
            i += 1
            continue
        if flag == "-v":
            binds.append(value)
        elif flag == "--security-opt":
            opts["--security-opt"].append(value)
        elif flag in ("--cap-drop", "--user", "--workdir"):
            opts[flag] = value
        elif flag != "-e":
            raise AssertionError(f"the bundle does not model docker run {flag}")
        i += 2
    security = set(opts["--security-opt"])
    assert security <= {"seccomp=unconfined", "systempaths=unconfined", "no-new-privileges"}, security
    runner_env = out / "runner.env"
    runner_env.write_text("")
    config = subprocess.run(
        ["python3", str(KIT / "oci-config.py"), "--inspect", str(inspect), "--rootfs", rootfs,
         "--runner-env", str(runner_env), "--action-yml", str(out / "no-action.yml"), "--token", "unused",
         "--seccomp", "unconfined" if "seccomp=unconfined" in security else "default",
         "--bind", "/etc/hosts:/etc/hosts:ro", "--bind", "/etc/resolv.conf:/etc/resolv.conf:ro",
         *[a for b in binds for a in ("--bind", b)], *[a for kv in env.items() for a in ("--env", "=".join(kv))]],
        env={"PATH": os.environ["PATH"]}, check=True, capture_output=True, text=True).stdout
    data = json.loads(config)
    if "systempaths=unconfined" in security:
        data["linux"]["maskedPaths"], data["linux"]["readonlyPaths"] = [], []
    process = data["process"]
    process["noNewPrivileges"] = "no-new-privileges" in security
    if opts.get("--cap-drop") == "ALL":
        process["capabilities"] = {k: [] for k in ("bounding", "effective", "permitted")}
    uid, gid = opts["--user"].split(":")
    process["user"] = {"uid": int(uid), "gid": int(gid)}
    process["cwd"] = opts["--workdir"]
    if command is not None:
        process["args"] = command
    (out / "config.json").write_text(json.dumps(data))
    return out


def run_container(work: Path, github: GitHubServer, with_: dict[str, str],
                  command: list[str] | None = None, extra_env: dict[str, str] | None = None) -> tuple[int, str]:
    argv, docker_env = launcher_run(work, github, with_, extra_env)
    argv[-1] = IMAGE  # the kit built the same Dockerfile the launcher would have built
    ctr = kit_buildah("from", "--pull=never", "--quiet", IMAGE)
    out = work / "bundle"
    out.mkdir(exist_ok=True)
    cid = f"composite-{os.getpid()}"
    try:
        rootfs = kit_buildah("mount", ctr)
        (out / "inspect.json").write_text(kit_buildah("inspect", ctr))
        bundle(argv[:-1] + [IMAGE], docker_env, rootfs, out / "inspect.json", out, command)
        done = subprocess.run(["runc", "--root", str(KIT_WORK / "runc"), "run", "--bundle", str(out), cid],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        return done.returncode, done.stdout + done.stderr
    finally:
        subprocess.run(["runc", "--root", str(KIT_WORK / "runc"), "delete", "--force", cid], capture_output=True)
        kit_buildah("rm", ctr)


def probe_results(work: Path) -> tuple[dict[str, str], dict, str]:
    commands = work / "_temp" / "_runner_file_commands"
    outputs = parse_output_file((commands / "set_output_1").read_text())
    results = json.loads((work / "checkout" / outputs["results-path"]).read_text())
    return outputs, results, (commands / "step_summary_1").read_text()


def arms(results: dict) -> list[dict]:
    [suite] = results["suites"]
    return [case[arm] for case in suite["cases"] for arm in ("with_skill", "without_skill")]


def test_a_pull_request_runs_sandboxed_and_the_probes_find_no_secret(image, runner, github):  # noqa: F811
    github.state.pr_files[(REPO, 1)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    code, log = run_container(runner, github, {"adapter": "mock", "anthropic-api-key": KEY})
    print(log[-3000:])
    assert code == 0, log
    outputs, results, summary = probe_results(runner)
    print(summary.strip().splitlines()[-1])
    [suite] = results["suites"]
    assert suite["isolation"]["backend"] == "bwrap" and not suite["isolation"].get("unsandboxed")
    assert "sandbox `bwrap`" in summary and "unsandboxed" not in summary
    for arm in arms(results):
        assert arm["extra"]["sandbox"] == "bwrap"
        found = {v["label"]: v["stdout"] for v in arm["validator_results"]}
        assert [v["passed"] for v in arm["validator_results"]] == [True, True], found
    assert KEY not in log and TOKEN not in log
    assert outputs["verdict"] in ("pass", "mixed", "fail")


def test_control_unsandboxed_the_same_probes_do_find_the_secrets(image, runner, github):  # noqa: F811
    """The probes are not vacuous: with `sandbox: none` they find the token and the key. (With a
    disk budget skillab sits in a user namespace of its own, from which even an unsandboxed
    command may not read pid 1's environment: the budget is off here so that probe is tried.)"""
    github.state.pr_files[(REPO, 1)] = [{"filename": "skills/alpha/SKILL.md", "status": "modified"}]
    code, log = run_container(runner, github, {"adapter": "mock", "anthropic-api-key": KEY,
                                               "sandbox": "none", "fail-on-verdict": ""},
                              extra_env={"SKILLAB_SANDBOX_DISK_MB": "0"})
    assert code == 0, log
    _outputs, results, summary = probe_results(runner)
    assert "unsandboxed" in summary
    found = "".join(v["stdout"] for arm in arms(results) for v in arm["validator_results"])
    print(found)
    assert "found: /proc/1/environ" in found and "found: files under /github" in found


def test_no_arm_finds_a_key_another_planted_in_the_containers_session_keyring(image, runner, github):  # noqa: F811
    """runc gives the container a session keyring and the step turns Docker's seccomp profile off:
    only skillab's own filter and per-command keyring keep one arm's key from the next."""
    github.state.pr_files[(REPO, 1)] = [{"filename": "skills/delta/SKILL.md", "status": "modified"}]
    code, log = run_container(runner, github, {"adapter": "mock", "concurrency": "1", "path": "skills/delta"})
    assert code == 0, log
    _outputs, results, _summary = probe_results(runner)
    [suite] = results["suites"]
    assert suite["isolation"]["backend"] == "bwrap", suite["isolation"]
    records = arms(results)
    assert len(records) == 4
    for record in records:
        [result] = record["validator_results"]
        assert result["passed"] and "none" in result["stdout"] and "refused 1" in result["stdout"], result


def test_control_two_processes_of_the_step_do_share_the_containers_session_keyring(image, runner, github):  # noqa: F811
    """The keyring probe is not vacuous: in the step's container (Docker's seccomp profile off),
    a process outside skillab finds the key an earlier one planted."""
    code, log = run_container(runner, github, {"adapter": "mock"},
                              command=["sh", "-c", 'python3 -c "$1"; python3 -c "$1"', "sh", KEY_PROBE])
    print(log)
    assert code == 1, log  # the second probe exits 1: it found the first one's key
    assert log.count("planted") == 2 and "found" in log.split("planted", 1)[1], log
