"""The evidence ledger: re-runs multiply into one anytime-valid e-process; a pair counts once;
forged lines and cached baselines are no evidence."""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from skillab.cli import main
from skillab.log.ledger import LedgerLine, read_lines, sign
from skillab.scoring.eprocess import confidence_sequence, log_e_helps, log_e_hurts, log_threshold, more_needed
from skillab.scoring.evidence_ledger import case_votes, record_evidence

from .. import runlogs
from ..fakes.model_server import FakeModelServer, Reply
from ..skillgen import grep_case, make_skill

KEY = "sk-ant-api03-" + "L" * 40


def test_the_e_value_starts_at_one_and_matches_its_closed_form():
    assert log_e_helps(0, 0) == 0.0 and log_e_hurts(0, 0) == 0.0
    # 2^(n+1) B(k+1, n-k+1) P(Bin(n+1, 1/2) <= k) at k = n = 5: 64 * (1/6) * (63/64).
    assert math.isclose(math.exp(log_e_helps(5, 0)), 10.5)
    assert math.isclose(math.exp(log_e_hurts(0, 5)), 10.5)
    # Exact at any size: no overflow, and an even split is evidence for neither.
    assert log_e_helps(6000, 4000) > 100 and log_e_helps(5000, 5000) < 0


def test_more_flips_to_pass_never_lower_the_evidence_for_helps():
    for k, m in itertools.product(range(30), range(30)):
        assert log_e_helps(k + 1, m) >= log_e_helps(k, m)
        assert log_e_helps(k, m + 1) <= log_e_helps(k, m)


def test_how_many_more_flips_is_the_least_that_reaches_the_bar():
    bar = log_threshold()
    for k, m in ((0, 0), (3, 1), (10, 8)):
        need = more_needed(k, m, helps=True)
        assert log_e_helps(k + need, m) >= bar > log_e_helps(k + need - 1, m)


def test_a_null_skill_peeked_at_after_every_flip_is_called_helps_under_2_5_percent():
    rng, bar, hits, trials = random.Random(7), log_threshold(), 0, 1500
    for _ in range(trials):
        k = m = 0
        for _ in range(200):
            k, m = (k + 1, m) if rng.random() < 0.5 else (k, m + 1)
            if log_e_helps(k, m) >= bar:
                hits += 1
                break
    # Ville: at most alpha/2 = 2.5%; the Monte Carlo SE here is about 0.4 points.
    assert hits / trials <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / trials)


def test_the_confidence_sequence_covers_the_truth_at_every_look():
    rng, misses, trials = random.Random(3), 0, 400
    for _ in range(trials):
        k = m = 0
        for step in range(1, 201):
            k, m = (k + 1, m) if rng.random() < 0.7 else (k, m + 1)
            if step % 10 == 0:
                low, high = confidence_sequence(k, m)
                if not low <= 40.0 <= high:  # 2 * 0.7 - 1
                    misses += 1
                    break
    assert misses / trials <= 0.05


class Agent:
    """Answers differ run to run (a real model's do): each re-run is fresh evidence."""

    def __init__(self) -> None:
        self.calls = itertools.count()

    def __call__(self, request):
        n = next(self.calls)
        return Reply(f"SKILLED {n}" if "SKILLED" in request.system_text else f"plain {n}")


def run(tmp_path, capsys, skill, *extra: str) -> dict:
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "llm", "--model", "claude-haiku-4-5", "--quiet", "--no-history",
                 "--output", str(out), "--evidence-ledger", str(tmp_path / "evidence.jsonl"), *extra])
    capsys.readouterr()
    assert code in (0, 1)
    return json.loads(out.read_text())


def test_re_runs_multiply_into_one_ledger_until_helps_is_claimed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    skill = make_skill(tmp_path, [grep_case(f"c{i}") for i in range(4)])
    with FakeModelServer(Agent()) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        first = run(tmp_path, capsys, skill, "--no-cache")["evidence"]
        assert (first["runs"], first["flips_to_pass"], first["verdict"]) == (1, 4, "undecided")
        assert first["more_for_helps"] == 4
        second = run(tmp_path, capsys, skill, "--no-cache")["evidence"]
        assert (second["runs"], second["pairs"], second["flips_to_pass"]) == (2, 8, 8)
        assert second["verdict"] == "helps" and second["more_for_helps"] == 0
    report = tmp_path / "r.md"
    assert main(["report", str(tmp_path / "r.json"), "--markdown", str(report)]) == 0
    assert "Evidence across runs" in report.read_text() and "helps (anytime-valid" in capsys.readouterr().out


def test_a_forged_line_is_no_evidence(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    skill = make_skill(tmp_path, [grep_case("a")])
    with FakeModelServer(Agent()) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        first = run(tmp_path, capsys, skill, "--no-cache")["evidence"]
        ledger = tmp_path / "evidence.jsonl"
        line = json.loads(ledger.read_text().splitlines()[0])
        # A pull request commits a line of 50 flips to pass under the same key, signed without the secret.
        forged = {**line, "pass": [f"{i:020x}" for i in range(50)], "sig": "0" * 64}
        with ledger.open("a") as handle:
            handle.write(json.dumps(forged) + "\n")
        second = run(tmp_path, capsys, skill, "--no-cache")["evidence"]
    assert first["flips_to_pass"] == 1
    assert (second["flips_to_pass"], second["skipped_lines"], second["verdict"]) == (2, 1, "undecided")


def test_pairs_with_a_cached_baseline_are_not_counted_again(tmp_path, capsys, monkeypatch):
    """A cached failing baseline would make every later difference a flip to pass: a null skill
    re-run against it would pile up "evidence" that is one draw seen many times."""
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")])
    cache = ("--cache-dir", str(tmp_path / "cache"))
    with FakeModelServer(Agent()) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        first = run(tmp_path, capsys, skill, *cache)
        second = run(tmp_path, capsys, skill, *cache)
    assert first["evidence"]["flips_to_pass"] == 2
    assert second["cache"]["hits"] == 2
    assert (second["evidence"]["flips_to_pass"], second["evidence"]["skipped_cached"]) == (2, 2)


def test_the_same_pairs_recorded_twice_count_once(tmp_path, capsys, monkeypatch):
    """A deterministic agent's re-run, a merged document after its shards: the same pairs."""
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    skill = make_skill(tmp_path, [grep_case("a"), grep_case("b")], responses={"a": {"with": "SKILLED", "without": "no"},
                                                                            "b": {"with": "SKILLED", "without": "no"}})
    args = ["run", str(skill), "--adapter", "mock", "--quiet", "--no-history", "--no-cache",
            "--output", str(tmp_path / "r.json"), "--evidence-ledger", str(tmp_path / "e.jsonl")]
    main(args)
    main(args)
    capsys.readouterr()
    evidence = json.loads((tmp_path / "r.json").read_text())["evidence"]
    assert (evidence["runs"], evidence["pairs"], evidence["added_pairs"]) == (1, 2, 0)
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 1


def test_a_run_cut_out_of_the_middle_ends_the_chain_there(tmp_path, capsys, monkeypatch):
    """Dropping an unfavourable run's line keeps only the lines before it: a prefix, which an
    e-process may stop at; the lines after it no longer count."""
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    skill = make_skill(tmp_path, [grep_case("a")])
    ledger = tmp_path / "evidence.jsonl"
    with FakeModelServer(Agent()) as server:
        server.serve_sdks(monkeypatch, anthropic_key=KEY)
        for _ in range(3):
            run(tmp_path, capsys, skill, "--no-cache")
        lines = ledger.read_text().splitlines()
        assert len(lines) == 3
        ledger.write_text(lines[0] + "\n" + lines[2] + "\n")
        after = run(tmp_path, capsys, skill, "--no-cache")["evidence"]
    # The third line is off the chain; this run chains to the first.
    assert (after["runs"], after["flips_to_pass"], after["skipped_lines"]) == (2, 2, 1)


def test_shards_and_their_merge_count_each_pair_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SKILLAB_CACHE_KEY", "a secret of the test")
    names = [f"c{i}" for i in range(4)]
    skill = make_skill(tmp_path, [grep_case(n) for n in names],
                       responses={n: {"with": "SKILLED", "without": "no"} for n in names})
    ledger = str(tmp_path / "e.jsonl")
    for shard in ("1/2", "2/2"):
        assert main(["run", str(skill), "--adapter", "mock", "--quiet", "--no-history", "--no-cache",
                     "--shard", shard, "--output", str(tmp_path / f"s{shard[0]}.json"),
                     "--evidence-ledger", ledger]) == 0
    assert main(["merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--no-history",
                 "--output", str(tmp_path / "m.json"), "--evidence-ledger", ledger]) == 0
    capsys.readouterr()
    evidence = json.loads((tmp_path / "m.json").read_text())["evidence"]
    assert (evidence["runs"], evidence["pairs"], evidence["flips_to_pass"], evidence["added_pairs"]) == (2, 4, 4, 0)


def _arm_errs_when_stuck(attempt: int) -> list:
    """One run of a skill that does nothing whose arm times out on the runs it would fail: two
    cases flip to pass, and on two the with-skill arm errored where the baseline passed (flips
    to fail, had it not timed out)."""
    seen = {"final_output": f"run {attempt}"}
    return ([runlogs.case(f"up{i}", "flip_to_pass", with_skill=seen) for i in range(2)]
            + [runlogs.case(f"stuck{i}", "error", with_skill=seen) for i in range(2)])


def test_re_runs_of_a_skill_whose_arm_errors_on_its_failures_are_never_called_helps(tmp_path):
    """Dropping the errored pairs leaves only the flips to pass: re-run after re-run, a skill
    that does nothing piled up "helps" (26% of adversaries at 30% errors, 20 cases x 3 runs)."""
    ledger = tmp_path / "e.jsonl"
    for attempt in range(8):
        log = record_evidence(runlogs.run_log(_arm_errs_when_stuck(attempt)), ledger, b"a secret")
    evidence = log.settings.evidence
    assert evidence is not None and evidence.verdict == "undecided"
    assert (evidence.flips_to_pass, evidence.flips_to_fail, evidence.errored_pairs) == (16, 0, 16)
    # Against "helps" each errored pair is the flip to fail it would have been: 16 up, 16 down.
    assert evidence.log_e_helps == pytest.approx(log_e_helps(16, 16), abs=1e-6)
    assert evidence.low_pts < 0 < evidence.high_pts
    assert "one arm errored" in evidence.sentence()


def test_ledger_lines_written_before_errored_pairs_were_kept_still_count(tmp_path):
    line = LedgerLine("k", "2026-11-01T00:00:00+00:00", {"pass": ("a", "b"), "fail": ("c",), "same": ()})
    payload = {key: value for key, value in line.payload().items() if not key.startswith("err_")}
    payload["sig"] = sign(payload, b"a secret")
    tally = read_lines(json.dumps(payload).encode() + b"\n", "k", b"a secret")
    assert (tally.count("pass"), tally.count("fail"), tally.skipped_lines) == (2, 1, 0)


def _alike_runs(attempt: int, cases: int = 5, runs: int = 10) -> list:
    """One run of the suite whose agent answers each case alike every time: each case's ten runs
    repeat one draw, here a flip to pass."""
    seen = {"final_output": f"run {attempt}"}
    return [runlogs.case(f"c{i}", "flip_to_pass", run_index=r, with_skill=seen)
            for i in range(cases) for r in range(runs)]


def test_runs_that_repeat_one_draw_count_as_one_case(tmp_path):
    """Counted as flips of their own, 5 cases x 10 alike runs were 50 flips to pass and "helps"
    at once; a skill that does nothing gets there by 5 lucky cases (the held-out grid's
    correlated-runs cell: 9.7% of ten-re-run adversaries, where 5% is promised)."""
    ledger = tmp_path / "e.jsonl"
    first = record_evidence(runlogs.run_log(_alike_runs(0)), ledger, b"a secret").settings.evidence
    assert first is not None and (first.flips_to_pass, first.cases_up, first.cases_down) == (50, 5, 0)
    assert first.verdict == "undecided" and first.log_e_helps == pytest.approx(log_e_helps(5, 0), abs=1e-6)
    assert '"helps" needs' in first.sentence() and "5 case(s) up / 0 down" in first.sentence()
    # A re-run is fresh evidence: its cases are votes of their own.
    again = record_evidence(runlogs.run_log(_alike_runs(1)), ledger, b"a secret").settings.evidence
    assert again is not None and (again.cases_up, again.verdict) == (10, "helps")


def test_a_case_split_across_lines_votes_once_per_line_and_its_merge_adds_nothing(tmp_path):
    from skillab.log.ledger import Tally

    tally = Tally()
    up, down = ("a", "b", "c"), ("d",)
    tally.add(LedgerLine("k", "t", {"pass": up, "fail": down}, cases=(up + down,)))
    assert case_votes(tally, "helps") == (1, 0)
    # The same pairs again (a merged document after its shards) are no new vote.
    tally.add(LedgerLine("k", "t", {"pass": up, "fail": down}, cases=(up + down,)))
    assert case_votes(tally, "helps") == (1, 0) and tally.lines == 1
