"""One bad file never stops the Action: each is reported against its own suite, or skipped with
a warning, and every other suite still runs and the pull request gets its comment."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from skillab.sandbox.trees import remove_tree

from ..action_harness import REPO, github, private_cache, run_action  # noqa: F401 (fixtures)
from ..skillgen import answers, grep_case, make_skill

# A history line that parses as JSON but is no entry this version writes: ``runs`` is infinite.
BAD_HISTORY_LINE = ('{"format":"skillab.history/2","suite":"skills/alpha/eval.yaml","skill":"alpha",'
                    '"skill_hash":"h","adapter":"mock","pass_rate":{},"verdict":"pass",'
                    '"recorded_at":"t","runs":1e999}\n')


@pytest.fixture
def deep_trees():
    """Makes deep trees, and removes them after the test (pytest's own clean-up recurses)."""
    made: list[Path] = []

    def make(where: Path) -> None:
        deep_tree(where)
        made.append(where)

    yield make
    for where in made:
        remove_tree(where)


def deep_tree(where: Path, depth: int = 1500) -> None:
    """``depth`` nested directories below ``where``, made relative to a descriptor (the whole
    path is longer than the system lets one path be)."""
    where.mkdir(parents=True, exist_ok=True)
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("dd", dir_fd=fd)
        inner = os.open("dd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def test_a_deep_tree_a_bad_sibling_trigger_set_and_a_bad_history_line_stop_nothing(tmp_path, github,
                                                                                   deep_trees):
    workspace = tmp_path / "workspace"
    skills = workspace / "skills"
    make_skill(skills, [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain"),
                                                                  "t": {"loads": True}},
               files={"trigger-evals.json": json.dumps([{"name": "t", "query": "Do alpha things",
                                                          "should_trigger": True}])})
    beta = make_skill(skills, [grep_case("b")], name="beta", responses={"b": answers("SKILLED", "plain")})
    # Beta's trigger set nests 100,000 deep: beta fails, and alpha (its sibling) is not touched.
    (beta / "trigger-evals.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    make_skill(skills, [grep_case("g")], name="gamma", responses={"g": answers("SKILLED", "plain")})
    deep_trees(workspace / "vendor" / "junk")
    deep_trees(skills / "delta" / "refs")
    make_skill(skills, [grep_case("d")], name="delta", responses={"d": answers("SKILLED", "plain")})
    (workspace / ".skillab").mkdir()
    (workspace / ".skillab" / "history.jsonl").write_text(BAD_HISTORY_LINE)
    github.state.pr_files[(REPO, 7)] = [{"filename": f"skills/{n}/SKILL.md"}
                                        for n in ("alpha", "beta", "gamma", "delta")]

    result = run_action(workspace, event_name="pull_request", event_file="pull_request_opened.json",
                        api_url=github.url, inputs={"adapter": "mock"}, in_process=True)

    assert "Traceback" not in result.log and "internal error" not in result.log, result.log
    assert result.code == 1  # beta and delta are broken: the check fails, naming them
    assert re.search(r"^::warning::not searched for skills: skills/delta/refs/dd/dd/.*/dd \(File name too long\) "
                     r"and \d+ more directories$", result.stdout, re.M), result.stdout
    assert "::error file=skills/beta/trigger-evals.json::" in result.stdout
    assert "nests too deep" in result.stdout
    assert "skills/delta" in result.stdout and "the skill's files cannot be listed" in result.stdout
    suites = {doc["suite"]["skill"]: doc for doc in result.results()["suites"]}
    assert sorted(suites) == ["alpha", "gamma"]
    assert suites["alpha"]["pass_rate"]["with_skill"] == 1.0 and suites["gamma"]["verdict"] == "pass"
    crowd = suites["alpha"]["triggers"]["crowd"]
    assert crowd["siblings"] == ["beta", "gamma"]  # delta's skill cannot load: left out
    assert any("beta's trigger queries left out" in w for w in crowd["warnings"])
    # Unsigned (a hand edit): ignored with a notice, before its content is even read.
    assert any("history.jsonl: 1 line(s) ignored: not signed" in w for w in suites["alpha"]["warnings"])
    # The bad line stays, and both good runs were appended after it.
    lines = (workspace / ".skillab" / "history.jsonl").read_text().splitlines()
    assert lines[0] == BAD_HISTORY_LINE.strip() and len(lines) == 3
    body = github.state.comments_on(REPO, 7)[0]["body"]
    assert "| alpha | 1 | 100% |" in body and "| gamma | 1 | 100% |" in body
    assert "| skills/beta | 0 |" in body and "| skills/delta | 0 |" in body
    assert "Not searched for skills: skills/delta/refs/dd" in body


def test_corrupt_cache_entries_are_skipped_with_a_warning_and_rerun(tmp_path, github):
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case(n) for n in "abc"], name="alpha",
               responses={n: answers("SKILLED", "plain") for n in "abc"})

    def run():
        return run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                          inputs={"adapter": "mock", "cache-dir": ".skillab/cache"}, in_process=True)

    assert run().code == 0
    entries = sorted((workspace / ".skillab" / "cache").rglob("*.json"))
    assert len(entries) == 3
    shaped = json.loads(entries[0].read_text())
    shaped["record"]["usage"] = []  # a list where an object belongs
    entries[0].write_text(json.dumps(shaped))
    entries[1].write_bytes(b"[" * 100_000)
    entries[2].write_bytes(b"\xff\xfe garbage")
    result = run()
    assert result.code == 0 and "Traceback" not in result.log, result.log
    suite = result.results()["suites"][0]
    assert suite["cache"]["hits"] == 0 and suite["pass_rate"]["without_skill"] == 0.0
    assert sum("skipped and re-run" in w for w in suite["warnings"]) == 3


def test_mode_merge_finds_the_shards_results_beside_a_deep_tree(tmp_path, deep_trees):
    from skillab.github.merge_mode import shard_files

    shards = tmp_path / "shards"
    for index in (1, 2):
        (shards / f"skillab-shard-{index}" / "skillab-results").mkdir(parents=True)
        (shards / f"skillab-shard-{index}" / "skillab-results" / "results.json").write_text("{}")
    deep_trees(shards / "skillab-shard-1" / "junk")
    found = shard_files(shards, tmp_path / "skillab-results")
    assert [p.relative_to(shards).parts[0] for p in found] == ["skillab-shard-1", "skillab-shard-2"]


def test_a_cache_entry_that_is_no_file_is_skipped_not_read_forever(tmp_path):
    """In a checkout, a pull request can put a link to /dev/zero or a FIFO where an entry is
    looked up (its path is a digest anyone can compute)."""
    import subprocess
    import sys

    script = f"""
import os, sys
from pathlib import Path
from skillab.core.records import ArmRecord
from skillab.engine.cache import BaselineCache
cache = BaselineCache(Path({str(tmp_path / "cache")!r}))
(Path(cache.directory) / "s").mkdir(parents=True)
os.symlink("/dev/zero", cache.directory / "s" / "zero.json")
os.mkfifo(cache.directory / "s" / "fifo.json")
assert cache.get("s", "zero") is None and cache.get("s", "fifo") is None
print("\\n".join(cache.warnings))
"""

    def small_memory() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                          preexec_fn=small_memory, env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert done.returncode == 0, done.stderr
    assert "zero.json skipped and re-run: unreadable (Too many levels of symbolic links)" in done.stdout
    assert "fifo.json skipped and re-run: unreadable (not a regular file)" in done.stdout
