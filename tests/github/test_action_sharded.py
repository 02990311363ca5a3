"""The example sharded workflow, end to end against the fake GitHub server: its matrix of shard
jobs (each its own ``skillab action`` process on a fresh checkout) and its merge job, with
artifacts and the shared baseline cache as directories (``tests/workflow_sim.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..action_harness import REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..results_golden import ROOT, mask
from ..skillgen import answers, grep_case, make_skill
from ..workflow_sim import WorkflowSim

WORKFLOW = ROOT / "examples" / "workflows" / "skillab-sharded.yml"
NAMES = ["rescued", "kept", "lost", "both-fail", "also-rescued"]


@pytest.fixture
def sim(tmp_path: Path, github) -> WorkflowSim:
    repo = tmp_path / "pristine"
    make_skill(repo / "skills", [grep_case(n) for n in NAMES], name="alpha", responses={
        "rescued": answers("SKILLED", "plain"), "kept": answers("SKILLED", "SKILLED"),
        "lost": answers("plain", "SKILLED"), "both-fail": answers("plain", "plain"),
        "also-rescued": answers("SKILLED", "plain"),
    })
    return WorkflowSim(WORKFLOW, repo, tmp_path / "runner", github.url)


def shard_documents(sim: WorkflowSim, indices) -> list[dict]:
    documents = []
    for index in indices:
        job = sim.run_job("shard", {"index": index})
        assert job.code == 0, job.action.log
        document = json.loads((job.workspace / "skillab-results" / "results.json").read_text())["suites"][0]
        assert document["shard"]["index"] == index
        assert f"Shard {index}/3 of the run" in job.action.summary
        documents.append(document)
    return documents


def test_the_matrix_and_merge_jobs_give_one_comment_and_the_unsharded_result(sim, github):
    matrix = sim.jobs["shard"]["strategy"]["matrix"]["index"]
    assert matrix == [1, 2, 3]
    first = shard_documents(sim, matrix)
    assert all(doc["cache"]["hits"] == 0 for doc in first)
    assert github.state.comments_on(REPO, 7) == []

    merged = sim.run_job("merge")
    assert merged.code == 0, merged.action.log
    result = merged.action
    comments = github.state.comments_on(REPO, 7)
    assert len(comments) == 1
    # One case flips to fail: the gate (min-delta-pts 0) holds, the verdict is mixed.
    assert result.outputs["verdict"] == "mixed" and result.outputs["delta-pts"] == "20"
    assert json.loads(result.outputs["suites"]) == ["skills/alpha"]
    assert "alpha" in result.summary and "+20.0 pts" in comments[0]["body"]
    merged_doc = result.results()["suites"][0]
    runs = int(sim.jobs["shard"]["steps"][2]["with"]["runs"])
    assert merged_doc["total_cases"] == len(NAMES) * runs

    # The same suite, unsharded, in one job: the merged document is its document.
    whole_ws = sim.workspace
    shutil.rmtree(whole_ws)
    shutil.copytree(sim.pristine, whole_ws)
    whole = run_action(whole_ws, event_name="pull_request", event_file="pull_request_opened.json",
                       api_url=github.url, inputs={"path": "skills", "mode": "all", "runs": str(runs),
                                                   "adapter": "mock", "comment": "false"})
    assert whole.code == 0, whole.log
    assert mask(merged_doc) == mask(whole.results()["suites"][0])

    # The next push: every shard finds all of its baselines in the cache the merge job saved.
    sim.next_run("pull_request_synchronize.json")
    again = shard_documents(sim, matrix)
    assert [doc["cache"]["hits"] for doc in again] == [doc["cache"]["arms"] for doc in again]
    assert sum(doc["cache"]["hits"] for doc in again) == len(NAMES) * runs


def test_merge_job_with_a_shard_missing_fails_naming_it(sim, github):
    shard_documents(sim, [1, 3])
    merged = sim.run_job("merge")
    assert merged.code == 2
    assert "alpha: shard 2/3 is missing (have 1/3, 3/3)" in merged.action.log
    assert "shard 2/3 is missing" in merged.action.summary
    # The one comment says why the check failed.
    [comment] = github.state.comments_on(REPO, 7)
    assert "Check failed: alpha: shard 2/3 is missing" in comment["body"]
    # The steps marked always() still ran: the baselines the two shards made are saved.
    assert [key for key, _ in sim.caches] == ["skillab-baseline-1-1"]


def test_a_suite_broken_in_every_shard_is_an_error_row_of_the_merged_report(sim, github):
    """A PR touching two suites, one of them broken: the shard jobs annotate it, and the merge
    job, which sees only the shards' documents, must not report the good suite alone as a pass."""
    broken = make_skill(sim.pristine / "skills", [grep_case("z")], name="broken")
    (broken / "eval.yaml").write_text("cases:\n  - name: x\n    description: 2024-02-30\n    prompt: hi\n")
    for index in (1, 2, 3):
        job = sim.run_job("shard", {"index": index})
        assert job.code == 1 and "skills/broken" in job.action.log
    merged = sim.run_job("merge")
    result = merged.action
    assert merged.code == 1, result.log
    assert result.outputs["verdict"] == "error"
    assert json.loads(result.outputs["suites"]) == ["skills/alpha", "skills/broken"]
    [comment] = github.state.comments_on(REPO, 7)
    assert "skills/broken" in comment["body"] and "+20.0 pts" in comment["body"]
    assert "skills/broken" in result.summary


def test_merge_job_reads_shards_uploaded_as_whole_results_directories(sim, github):
    """A shard job that uploads all of ``skillab-results/`` (as the merge job does its own) also
    ships each suite's own results.json beside the set: merge must read each shard once."""
    for index in (1, 2, 3):
        job = sim.run_job("shard", {"index": index})
        assert job.code == 0, job.action.log
        artifact = sim.artifacts[f"skillab-shard-{index}"]
        shutil.copytree(job.workspace / "skillab-results", artifact / "skillab-results", dirs_exist_ok=True)
        assert len(list(artifact.rglob("results.json"))) == 2
    merged = sim.run_job("merge")
    assert merged.code == 0, merged.action.log
    assert merged.action.outputs["verdict"] == "mixed"
