"""The `cache-dir` input: the baseline cache in the workspace, where `actions/cache` keeps it."""

from __future__ import annotations


from .action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from .skillgen import answers, grep_case, make_skill


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
    return Action(env, Log(io.StringIO())).config()


def test_max_cost_usd_becomes_the_engines_spend_cap(tmp_path):
    assert _config(tmp_path, adapter="mock", **{"max-cost-usd": "2.5"}).max_cost_usd == 2.5
