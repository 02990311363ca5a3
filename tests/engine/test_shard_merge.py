"""``run --shard I/N`` and ``merge``: the shards of a run, merged, are the unsharded run's
document (timings aside), and merge refuses anything it cannot join honestly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.core.runlog import RunLog
from skillab.engine.shard import Shard, expected_cost, plan_shards
from skillab.errors import UsageError
from skillab.scoring.summary import summarize
from skillab.suite.model import Case, ValidatorSpec

from ..results_golden import ROOT, mask

SQL = str(ROOT / "examples" / "sql-migration-safety")
MOCK = ["--adapter", "mock", "--no-history", "--quiet"]


def run(tmp_path: Path, name: str, *extra: str) -> Path:
    output = tmp_path / f"{name}.json"
    code = main(["run", SQL, *MOCK, "--cache-dir", str(tmp_path / f"cache-{name}"),
                 "--output", str(output), *extra])
    assert code in (0, 1)
    return output


def merge(tmp_path: Path, *docs: Path) -> int:
    return main(["merge", *map(str, docs), "--no-history", "--output", str(tmp_path / "merged.json")])


def shards(tmp_path: Path, count: int, *extra: str) -> list[Path]:
    return [run(tmp_path, f"s{i}", "--shard", f"{i}/{count}", *extra) for i in range(1, count + 1)]


def cases(*turns: int) -> tuple[Case, ...]:
    return tuple(Case(name=f"c{i}", prompt="p", max_turns=t,
                      validators=(ValidatorSpec(cmd="true"),)) for i, t in enumerate(turns))


def test_the_plan_covers_every_unit_once_is_stable_and_balances_cost():
    suite = cases(30, 2, 2, 2, 2, 10, 10, 4, 4, 1)
    plans = [plan_shards(suite, 3, Shard(i, 4), 12) for i in range(1, 5)]
    units = [u for plan in plans for u in plan.units]
    assert sorted(units) == sorted((c.name, r) for c in suite for r in range(3))
    assert len({plan.digest() for plan in plans}) == 1
    assert plan_shards(suite, 3, Shard(2, 4), 12).units == plans[1].units
    costs = {c.name: expected_cost(c, 12) for c in suite}
    loads = [sum(costs[name] for name, _ in plan.units) for plan in plans]
    # Greedy longest-first keeps every shard within one unit's cost of the lightest.
    assert max(loads) - min(loads) <= max(costs.values())


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(text):
    with pytest.raises(UsageError, match="I"):
        Shard.parse(text)


def test_three_shards_merged_equal_the_unsharded_run(tmp_path, capsys):
    extra = ("--runs", "2", "--against", SQL)
    whole = json.loads(run(tmp_path, "whole", *extra).read_text())
    docs = shards(tmp_path, 3, *extra)
    parts = [json.loads(d.read_text()) for d in docs]
    assert [p["shard"]["index"] for p in parts] == [1, 2, 3]
    # A shard's document is a summary of its own records, like any other.
    logs = [RunLog.from_json(p) for p in parts]
    assert all(summarize(log.settings, log.records).to_json() == p for log, p in zip(logs, parts))
    assert sum(len(p["cases"]) for p in parts) == len(whole["cases"]) == 14
    assert all(0 < len(p["cases"]) < 14 for p in parts)
    assert merge(tmp_path, *reversed(docs)) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert "shard" not in merged
    # Each shard re-asks the judge a sample of its own verdicts (at least 5); merged, they pool.
    pooled, single = merged.pop("judge_consistency"), whole.pop("judge_consistency")
    assert pooled["verdicts"] == single["verdicts"] == sum(p["judge_consistency"]["verdicts"] for p in parts)
    assert pooled["sampled"] == sum(p["judge_consistency"]["sampled"] for p in parts) > single["sampled"]
    assert pooled["agreement"] == single["agreement"] == 1.0
    assert mask(merged) == mask(whole)
    assert merged["statistics"] == whole["statistics"]
    assert merged["comparison"] == whole["comparison"]


def test_a_missing_or_duplicated_shard_fails_naming_it(tmp_path, capsys):
    one, two, three = shards(tmp_path, 3)
    assert "shard 1/3 (join with skillab merge)" in capsys.readouterr().out
    assert merge(tmp_path, one, three) == 2
    assert "shard 2/3 is missing" in capsys.readouterr().err
    assert merge(tmp_path, one, two, two, three) == 2
    assert f"shard 2/3 appears twice, in {two} and {two}" in capsys.readouterr().err
    assert not (tmp_path / "merged.json").exists()


def test_shards_of_different_runs_or_versions_are_refused(tmp_path, capsys):
    one, two = shards(tmp_path, 2)
    other = run(tmp_path, "other", "--shard", "2/2", "--runs", "2")
    assert merge(tmp_path, one, other) == 2
    assert f"disagree on the runs: {one} (shard 1/2) has 1, {other} (shard 2/2) has 2" in capsys.readouterr().err

    doc = json.loads(two.read_text())
    doc["tool"]["version"] = "9.9.9"
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    assert merge(tmp_path, one, newer) == 2
    assert f"skillab version: {one} (shard 1/2) has" in capsys.readouterr().err
    doc["shard"]["index"] = 1
    older = tmp_path / "older.json"
    older.write_text(json.dumps(doc))
    assert merge(tmp_path, older, newer) == 2
    assert f"{older} (shard 1/2) was written by skillab 9.9.9, this is skillab" in capsys.readouterr().err

    whole = run(tmp_path, "whole")
    assert merge(tmp_path, one, whole) == 2
    assert f"{whole}: not a shard's document" in capsys.readouterr().err


def test_a_shard_whose_cases_were_tampered_with_is_refused(tmp_path, capsys):
    one, two = shards(tmp_path, 2)
    doc = json.loads(two.read_text())
    doc["cases"] = doc["cases"][1:]
    two.write_text(json.dumps(doc))
    assert merge(tmp_path, one, two) == 2
    assert "its cases do not match its plan (missing" in capsys.readouterr().err


def test_shards_of_several_suites_merge_into_a_set(tmp_path):
    changelog = str(ROOT / "examples" / "changelog-entry")
    docs = []
    for index in (1, 2):
        output = tmp_path / f"set{index}.json"
        assert main(["run", SQL, changelog, *MOCK, "--no-cache", "--shard", f"{index}/2",
                     "--output", str(output)]) == 0
        docs.append(output)
    assert merge(tmp_path, *docs) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["format"] == "skillab.results-set/1"
    assert [(d["suite"]["skill"], d["total_cases"]) for d in merged["suites"]] == [
        ("sql-migration-safety", 7), ("changelog-entry", 6)]


def test_shards_of_two_suite_versions_are_refused_naming_what_differs(tmp_path, capsys):
    """The suite's path and skill are long and equal; the error must show the hash that is not."""
    one, two = shards(tmp_path, 2)
    doc = json.loads(two.read_text())
    doc["suite"]["suite_hash"] = "0" * 64  # the suite was edited between the two shard jobs
    two.write_text(json.dumps(doc))
    assert merge(tmp_path, one, two) == 2
    err = capsys.readouterr().err
    assert "disagree on the suite" in err and '"suite_hash": "' + "0" * 64 in err


def test_a_shard_resumed_from_another_shards_document_keeps_only_its_own_units(tmp_path):
    """A matrix job that restores the wrong shard's results and resumes must still write its own
    share: the other shard's arms stay out of its document, and the shards merge."""
    one, two = shards(tmp_path, 2)
    resumed = run(tmp_path, "resumed", "--shard", "2/2", "--resume", str(one))
    assert sorted(map(tuple, json.loads(resumed.read_text())["shard"]["units"])) == sorted(
        (c["case_name"], c["run_index"]) for c in json.loads(resumed.read_text())["cases"])
    assert merge(tmp_path, one, resumed) == 0


def test_shards_of_a_run_under_several_agents_merge_per_agent(tmp_path, monkeypatch):
    """``--adapter mock,llm --shard I/N``: each shard holds the suite once per agent; merge joins
    each agent's shards, not every document of the suite as one run."""
    from ..fakes.model_server import FakeModelServer, text
    from ..skillgen import answers, grep_case, make_skill

    names = [f"c{i}" for i in range(4)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: answers("SKILLED", "plain") for n in names})
    with FakeModelServer(lambda request: text("SKILLED" if "SKILLED" in request.system_text else "no")) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "Shard" * 8)
        docs = []
        for index in (1, 2):
            docs.append(tmp_path / f"agents{index}.json")
            assert main(["run", str(skill), *MOCK, "--adapter", "mock,llm", "--model", "claude-haiku-4-5",
                         "--no-cache", "--shard", f"{index}/2", "--output", str(docs[-1])]) == 0
    assert merge(tmp_path, *docs) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert [(d["adapter"]["name"], d["total_cases"], d["pass_rate"]["delta_pts"]) for d in merged["suites"]] == [
        ("mock", 4, 100.0), ("llm", 4, 100.0)]


@pytest.mark.parametrize(("environ", "expected"), [
    ({"JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "3"}, (1, 3)),
    ({"JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "3"}, (3, 3)),
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, (2, 4)),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "8"}, (3, 4)),
    ({"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_MAX": "16",
      "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"}, (2, 4)),
    ({"SKILLAB_SHARD_INDEX": "3", "SKILLAB_SHARD_COUNT": "4"}, (4, 4)),
])
def test_shard_auto_reads_the_schedulers_variables(environ, expected):
    shard = Shard.parse("auto", environ=environ)
    assert (shard.index, shard.count) == expected


@pytest.mark.parametrize(("environ", "says"), [
    ({}, "no scheduler's shard variables"),
    ({"GITHUB_ACTIONS": "true"}, "SKILLAB_SHARD_INDEX"),
    ({"JOB_COMPLETION_INDEX": "1"}, "JOB_COMPLETIONS"),
    ({"JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "3"}, "shard 4 of 3"),
    ({"SLURM_ARRAY_TASK_ID": "2"}, "sbatch --array"),
    ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, "not a whole number"),
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9",
      "SLURM_ARRAY_TASK_COUNT": "3"}, "not a range"),
    ({"SKILLAB_SHARD_INDEX": "0"}, "SKILLAB_SHARD_COUNT"),
])
def test_shard_auto_without_usable_variables_says_what_to_set(environ, says):
    with pytest.raises(UsageError, match="auto") as caught:
        Shard.parse("auto", environ=environ)
    assert says in str(caught.value)


def test_shard_auto_with_nothing_set_exits_2_in_one_line(tmp_path, monkeypatch, capsys):
    for name in ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SKILLAB_SHARD_INDEX"):
        monkeypatch.delenv(name, raising=False)
    code = main(["run", SQL, *MOCK, "--shard", "auto", "--output", str(tmp_path / "x.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--shard auto" in err and "Traceback" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("scheduler", ["kubernetes", "slurm"])
def test_shard_auto_shards_merge_into_the_unsharded_run(tmp_path, monkeypatch, scheduler):
    """Each job of a 2-wide Indexed Job or SLURM array runs ``--shard auto``; merged, their
    documents hold every (case, run) once, as the unsharded run does."""
    whole = json.loads(run(tmp_path, "whole").read_text())
    docs = []
    for index in range(2):
        env = ({"JOB_COMPLETION_INDEX": str(index), "JOB_COMPLETIONS": "2"} if scheduler == "kubernetes"
               else {"SLURM_ARRAY_TASK_ID": str(index + 1), "SLURM_ARRAY_TASK_MIN": "1",
                     "SLURM_ARRAY_TASK_MAX": "2"})
        with monkeypatch.context() as patched:
            for name, value in env.items():
                patched.setenv(name, value)
            docs.append(run(tmp_path, f"auto{index}", "--shard", "auto"))
    parts = [json.loads(d.read_text()) for d in docs]
    assert [(p["shard"]["index"], p["shard"]["count"]) for p in parts] == [(1, 2), (2, 2)]
    assert merge(tmp_path, *docs) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert sorted(c["case_name"] for c in merged["cases"]) == sorted(c["case_name"] for c in whole["cases"])
    assert merged["verdict"] == whole["verdict"]
