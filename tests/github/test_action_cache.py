"""The `cache-dir` input: the baseline cache in the workspace, where `actions/cache` keeps it."""

from __future__ import annotations

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..skillgen import answers, grep_case, make_skill


def test_the_baseline_cache_lives_in_the_workspace_and_is_reused(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a"), grep_case("b")], name="alpha",
               responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    inputs = {"adapter": "mock", "cache-dir": ".skillab/cache"}
    first = run_action(workspace, event_name="schedule", event_file="schedule.json",
                       api_url=github.url, inputs=inputs, in_process=True)
    assert first.code == 0, first.log
    cached = [p for p in (workspace / ".skillab" / "cache").rglob("*") if p.is_file()]
    assert len(cached) >= 2  # one entry per without-skill arm
    second = run_action(workspace, event_name="schedule", event_file="schedule.json",
                        api_url=github.url, inputs=inputs, in_process=True)
    assert second.results()["suites"][0]["cache"]["hits"] == 2


def test_a_cache_dir_outside_the_workspace_is_refused(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "cache-dir": "../elsewhere"}, in_process=True)
    assert result.code == 2
    assert "input 'cache-dir' must stay inside the repository" in result.stdout
    assert result.outputs["verdict"] == "error"



def _config(tmp_path, **inputs):
    import io

    from skillab.github.action import Action
    from skillab.github.inputs import INPUTS
    from skillab.github.workflow_commands import Log

    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha")
    env = {spec.env_name: spec.default for spec in INPUTS}
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    env.update({"GITHUB_EVENT_NAME": "schedule", "GITHUB_WORKSPACE": str(workspace)})
    return Action(env, Log(io.StringIO())).configs()[0]


def test_max_cost_usd_becomes_the_engines_spend_cap(tmp_path):
    assert _config(tmp_path, adapter="mock", **{"max-cost-usd": "2.5"}).engine.max_cost_usd == 2.5


# -- a pull request forging a baseline -------------------------------------------------------------


def _run(workspace, github, **inputs):
    return run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                      inputs={"adapter": "mock", "cache-dir": ".skillab/cache", **inputs}, in_process=True)


def _forge(entry_path, *, mac: str | None = None) -> None:
    """What a pull request can commit: the entry turned into a baseline that passed, consistent
    with its own checks (so the old validation accepted it)."""
    import json

    entry = json.loads(entry_path.read_text())
    record = entry["record"]
    record["passed"] = True
    for check in record.get("validator_results") or []:
        check["passed"] = True
    if mac is not None:
        entry["mac"] = mac
    entry_path.write_text(json.dumps(entry))


def test_a_forged_but_self_consistent_cache_entry_is_refused_and_rerun(tmp_path, github):
    import hashlib
    import hmac
    import json

    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a"), grep_case("b")], name="alpha",
               responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    first = _run(workspace, github, **{"cache-key": "the-repository-secret"})
    assert first.results()["suites"][0]["pass_rate"]["without_skill"] == 0.0
    entries = sorted(p for p in (workspace / ".skillab" / "cache").rglob("*.json"))
    assert len(entries) == 2
    _forge(entries[0])
    # The second forger signs with the key it can guess (none, or the digest of an empty secret).
    guessed = hashlib.sha256(b"").digest()
    body = json.loads(entries[1].read_text())
    body["record"]["passed"] = True
    for check in body["record"].get("validator_results") or []:
        check["passed"] = True
    body.pop("mac", None)
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    _forge(entries[1], mac=hmac.new(guessed, blob.encode(), hashlib.sha256).hexdigest())

    second = _run(workspace, github, **{"cache-key": "the-repository-secret"})
    suite = second.results()["suites"][0]
    # Forged, the baseline would pass both cases and the +100 pts lift would vanish.
    assert suite["pass_rate"]["without_skill"] == 0.0 and suite["pass_rate"]["delta_pts"] == 100.0
    assert suite["cache"]["hits"] == 0
    assert sum("skipped and re-run" in w and "signature does not match" in w for w in suite["warnings"]) == 2
    assert "the-repository-secret" not in second.log
    # Re-run, the entries are rewritten and signed again: the next job reuses them.
    third = _run(workspace, github, **{"cache-key": "the-repository-secret"})
    assert third.results()["suites"][0]["cache"]["hits"] == 2


def test_without_a_cache_key_a_job_trusts_only_the_entries_it_wrote(tmp_path, github, monkeypatch):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    assert _run(workspace, github).code == 0
    # The next job has a fresh HOME, as the Action's container does: its own key.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "next-job-home"))
    suite = _run(workspace, github).results()["suites"][0]
    assert suite["cache"]["hits"] == 0 and any("signature does not match" in w for w in suite["warnings"])
    # With the secret, jobs with different homes share the cache.
    _run(workspace, github, **{"cache-key": "s3cret-shared"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "third-job-home"))
    assert _run(workspace, github, **{"cache-key": "s3cret-shared"}).results()["suites"][0]["cache"]["hits"] == 1


def test_a_cache_of_another_key_names_a_few_skipped_entries_then_counts(tmp_path):
    from skillab.core.records import ArmRecord
    from skillab.engine.cache import BaselineCache

    theirs = BaselineCache(tmp_path / "cache", key=b"t" * 32)
    for index in range(6):
        theirs.put("scope", f"k{index}", ArmRecord(passed=True, errored=False))
    ours = BaselineCache(tmp_path / "cache", key=b"o" * 32)
    assert [ours.get("scope", f"k{index}") for index in range(6)] == [None] * 6
    assert len(ours.warnings) == 4 and all("signature does not match" in w for w in ours.warnings[:3])
    assert ours.warnings[3] == "baseline cache: 3 more entries skipped and re-run"
    assert BaselineCache(tmp_path / "cache", key=b"t" * 32).get("scope", "k0") is not None


def test_runs_starting_together_make_one_owner_only_key(tmp_path):
    import os
    import stat
    from concurrent.futures import ThreadPoolExecutor

    from skillab.engine.cache import cache_key, key_file

    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: cache_key(env), range(32)))
    assert len(keys) == 1 and isinstance(next(iter(keys)), bytes)
    assert stat.S_IMODE(os.stat(key_file(env)).st_mode) == 0o600
    assert os.listdir(key_file(env).parent) == ["baseline-cache.key"]
    assert cache_key({**env, "SKILLAB_CACHE_KEY": "shared"}) not in keys
