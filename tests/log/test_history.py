"""Run history and trend: the JSONL file, comparable runs, corrupt lines, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
from dataclasses import replace
from pathlib import Path

import yaml

from skillab.cli import main
from skillab.core.wire import to_wire
from skillab.log.history import parse_history, read_history, signed_line
from skillab.log.history_entry import HISTORY_FORMAT, HistoryEntry, suite_key
from skillab.scoring.trend import compute_trend, record_run, same_skill_comparisons
from skillab.signing import cache_key, entry_mac

from ..skillgen import answers, grep_case, make_skill


def entry(**changes) -> HistoryEntry:
    base = HistoryEntry(
        suite="skills/demo/eval.yaml", skill="demo", skill_hash="h1", adapter="mock", model=None,
        pass_rate={"with_skill": 0.5, "without_skill": 0.25, "original": None}, delta_pts=25.0,
        original_delta_pts=None, verdict="mixed", cost_usd=None, recorded_at="2026-11-01T10:00:00+00:00",
    )
    return replace(base, **changes)


def line_of(e: HistoryEntry) -> bytes:
    """``e``'s line as skillab writes it: signed with this user's key."""
    return signed_line(e, cache_key())


def signed_raw(raw: bytes) -> bytes:
    """A hand-made JSON object line, signed as if skillab had written it (to reach the checks
    behind the signature)."""
    data = json.loads(raw)
    data["mac"] = entry_mac(cache_key(), data)
    return json.dumps(data).encode()


def document(rates: dict, *, suite: str = "skills/demo/eval.yaml", model: str | None = None,
             skill_hash: str = "h1", original: float | None = None) -> dict:
    """The parts of a results document the history reads."""
    return {
        "suite": {"path": suite, "skill": "demo", "skill_hash": skill_hash},
        "adapter": {"name": "mock"},
        "models": {"agent": model},
        "pass_rate": {**rates, "delta_pts": round((rates["with_skill"] - rates["without_skill"]) * 100, 2)},
        "verdict": "pass",
        "usage": {"total": {"cost_usd": 0.0125}},
        "timings": {"finished_at": "2026-11-02T09:30:00+00:00"},
        "runs": 1,
        "total_cases": 4,
        "comparison": None if original is None else {"pass_rate": {"original": original, "delta_pts": 0.0}},
    }


# -- trend -------------------------------------------------------------------------------------


def passes(counts: dict[str, list[tuple[int, int]]]) -> dict:
    """Per arm, 12 cases named c0..c11 with the given [passed, graded] cells."""
    return {arm: {f"c{i}": list(cell) for i, cell in enumerate(cells)} for arm, cells in counts.items()}


def test_the_lift_is_tested_once_and_the_arms_only_move():
    before = entry(pass_rate={"with_skill": 0.5, "without_skill": 0.25, "original": 0.75},
                   case_passes=passes({"with_skill": [(0, 1)] * 12, "without_skill": [(0, 1)] * 12,
                                       "original": [(1, 1)] * 12}))
    now = entry(pass_rate={"with_skill": 0.75, "without_skill": 0.25, "original": 0.5}, skill_hash="h2",
                case_passes=passes({"with_skill": [(1, 1)] * 12, "without_skill": [(0, 1)] * 12,
                                    "original": [(1, 1)] * 11 + [(0, 1)]}))
    trend = compute_trend(now, before, "h.jsonl")
    assert [(a.arm, a.direction, a.change_pts) for a in trend.arms] == [
        ("lift", "improved", 25.0),  # 12 of 12 cases' lift up: p = 2/4096
        ("with_skill", "changed", 25.0),
        ("without_skill", "unchanged", 0.0),
        ("original", "changed", -25.0),
    ]
    assert trend.arms[0].p_value == 2 / 4096 and trend.arms[0].paired_cases == 12
    assert trend.skill_changed is True
    assert to_wire(trend)["previous"]["pass_rate"]["with_skill"] == 0.5


def test_an_unchanged_skill_reads_regressed_in_few_histories_not_per_arm_per_run():
    """A/A: 10-run histories of one skill, both arms redrawn every run from the same rates.
    Testing each arm at every run called some run "regressed" or "improved" in a large share of
    histories; the lift's one test, its 5% spent over the history, in about 5% or fewer."""
    import random

    rng = random.Random(8)
    histories = flagged = 0
    for _ in range(150):
        rates = [rng.random() for _ in range(20)]
        entries = []
        claimed = False
        for _ in range(10):
            cells = {arm: [(int(rng.random() < r), 1) for r in rates] for arm in ("with_skill", "without_skill")}
            rate = {arm: sum(c[0] for c in cell) / len(cell) for arm, cell in cells.items()}
            current = entry(pass_rate={**rate, "original": None}, case_passes=passes(cells))
            if entries:
                trend = compute_trend(current, entries[-1], "h", same_skill=same_skill_comparisons(entries, current))
                claimed |= any(a.direction in ("improved", "regressed") for a in trend.arms)
            entries.append(current)
        histories += 1
        flagged += claimed
    assert flagged / histories <= 0.08


def test_an_arm_either_run_lacks_is_left_out_and_the_first_run_has_no_previous():
    trend = compute_trend(entry(), entry(pass_rate={"with_skill": None, "without_skill": 0.25, "original": None}), "h")
    assert [a.arm for a in trend.arms] == ["without_skill"] and trend.skill_changed is False
    first = compute_trend(entry(), None, "h")
    assert first.previous is None and to_wire(first) == {"history": "h", "previous": None,
                                                          "skill_changed": False, "original_changed": False, "arms": []}


def test_the_original_arm_trends_only_against_the_same_original(tmp_path):
    # Run 1 compared the skill with v1, run 2 with v2 (--against another ref): the original
    # arm measured two different skills, so no trend is drawn for it; the other arms keep theirs.
    path = tmp_path / "h.jsonl"

    def against(hash_: str, rate: float) -> dict:
        doc = document({"with_skill": 0.75, "without_skill": 0.25}, original=rate)
        doc["comparison"]["original"] = {"skill_hash": hash_}
        return doc

    record_run(against("v1", 0.25), path)
    moved = record_run(against("v2", 1.0), path).trend
    assert [a.arm for a in moved.arms] == ["lift", "with_skill", "without_skill"]
    assert to_wire(moved)["original_changed"] is True
    same = record_run(against("v2", 1.0), path).trend
    assert [a.arm for a in same.arms] == ["lift", "with_skill", "without_skill", "original"]
    assert to_wire(same)["original_changed"] is False


def test_only_the_same_suite_model_and_adapter_are_comparable(tmp_path):
    path = tmp_path / "h.jsonl"
    others = [
        entry(model="gpt-4o", pass_rate={"with_skill": 0.0, "without_skill": 0.0, "original": None}),
        entry(adapter="agent"),
        entry(suite="skills/other/eval.yaml"),
    ]
    path.write_bytes(b"".join(line_of(e) for e in others))
    first = record_run(document({"with_skill": 1.0, "without_skill": 0.25}), path)
    assert first.trend is not None and first.trend.previous is None
    second = record_run(document({"with_skill": 0.75, "without_skill": 0.25}), path)
    assert second.trend.previous.pass_rate["with_skill"] == 1.0  # the run just before, not the others
    # No per-case passes in these documents, so the change cannot be tested: within noise.
    assert [a.direction for a in second.trend.arms] == ["within_noise", "changed", "unchanged"]
    entries, warnings = read_history(path)
    assert len(entries) == 5 and warnings == []


def test_an_entry_keeps_what_the_issue_lists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "h.jsonl"
    record_run(document({"with_skill": 0.75, "without_skill": 0.25}, model="claude-x", original=0.5), path)
    line = json.loads(path.read_text())
    assert line == {
        "suite": "skills/demo/eval.yaml",
        "skill": "demo", "skill_hash": "h1", "adapter": "mock", "model": "claude-x",
        "pass_rate": {"with_skill": 0.75, "without_skill": 0.25, "original": 0.5},
        "delta_pts": 50.0, "original_delta_pts": 0.0, "verdict": "pass", "cost_usd": 0.0125,
        "recorded_at": "2026-11-02T09:30:00+00:00", "runs": 1, "cases": 4, "format": HISTORY_FORMAT,
        "suite_hash": "", "case_selection": line["case_selection"], "pass_k": 1,
        "adapter_identity": line["adapter_identity"], "judge": line["judge"], "case_passes": {},
        "original_hash": "", "mac": line["mac"],
    }


def test_runs_that_differ_in_what_they_measure_are_not_comparable():
    from skillab.scoring.trend import previous_comparable

    base = entry(suite_hash="s1", case_selection="c1", adapter_identity="a1", judge="j1")
    for change in ({"suite_hash": "s2"}, {"case_selection": "c2"}, {"runs": 3}, {"pass_k": 5},
                   {"adapter_identity": "a2"}, {"judge": "j2"}, {"format": "skillab.history/1"}):
        assert previous_comparable([replace(base, **change)], base) is None, change
    assert previous_comparable([base], replace(base, skill_hash="h9")) == base


def test_suite_paths_are_keyed_relative_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skills").mkdir()
    assert suite_key(str(tmp_path / "skills" / "eval.yaml")) == "skills/eval.yaml"
    assert suite_key("skills/./eval.yaml") == "skills/eval.yaml"
    assert suite_key("/elsewhere/eval.yaml") == "/elsewhere/eval.yaml"


# -- corrupt and concurrent files -------------------------------------------------------------


def test_garbage_lines_are_skipped_with_a_warning_that_names_the_line():
    good = line_of(entry())
    data = good + b"{not json\n" + b"[1, 2]\n" + signed_raw(b'{"format": "skillab.history/9"}') + b"\n\n" + good
    entries, warnings = parse_history(data, "h.jsonl")
    assert len(entries) == 2
    assert warnings == [
        "h.jsonl:2: not a history entry (not JSON); line skipped",
        "h.jsonl:3: not a history entry (not a JSON object); line skipped",
        "h.jsonl:4: not a history entry (format 'skillab.history/9' is not skillab.history/2); line skipped",
    ]


def test_many_bad_lines_give_a_capped_number_of_warnings():
    entries, warnings = parse_history(b"x\n" * 10 + b"\xff\xfe\n", "h")
    assert entries == [] and len(warnings) == 4 and warnings[-1] == "h: 8 more unreadable lines skipped"


def test_a_line_cut_short_does_not_swallow_the_next_entry(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(line_of(entry()) + b'{"suite": "skills/de')
    result = record_run(document({"with_skill": 0.5, "without_skill": 0.25}), path)
    assert result.warnings == [f"{path}:2: not a history entry (not JSON); line skipped"]
    entries, warnings = read_history(path)
    assert len(entries) == 2 and len(warnings) == 1


def test_an_unwritable_history_is_a_warning_not_a_failure(tmp_path):
    result = record_run(document({"with_skill": 0.5, "without_skill": 0.25}), tmp_path)  # a directory
    assert result.trend is None
    assert len(result.warnings) == 1 and "this run is not recorded" in result.warnings[0]


def test_lines_that_parse_but_are_no_entry_are_skipped_not_a_crash():
    bad = [
        b'{"format":"skillab.history/2","suite":"s","skill":"x","skill_hash":"h","adapter":"mock",'
        b'"pass_rate":{},"verdict":"pass","recorded_at":"t","runs":1e999}',  # infinite: int() overflowed
        b'{"format":"skillab.history/2","suite":"s","skill":"x","skill_hash":"h","adapter":"mock",'
        b'"pass_rate":{},"verdict":"pass","recorded_at":"t","case_passes":{"with_skill":{"a":[]}}}',
        b'{"format":"skillab.history/2","suite":"s","skill":"x","skill_hash":"h","adapter":"mock",'
        b'"pass_rate":{"with_skill":NaN},"verdict":"pass","recorded_at":"t"}',
        b"[" * 100_000,
    ]
    signed = [signed_raw(raw) for raw in bad[:3]] + bad[3:]
    entries, warnings = parse_history(b"\n".join(signed) + b"\n" + line_of(entry()), "h")
    assert len(entries) == 1 and len(warnings) == 4
    assert "'runs' is not a whole number" in warnings[0] and "is not a [passed, graded] pair" in warnings[1]
    assert "finite" in warnings[2] and warnings[3] == "h: 1 more unreadable lines skipped"
    assert parse_history(b"[" * 100_000, "h")[1] == ["h:1: not a history entry (nested too deep); line skipped"]


def test_a_history_that_is_no_file_is_a_warning_not_a_hang(tmp_path):
    """Committed in a checkout, the history could be a link to /dev/zero (read forever) or a FIFO
    (no writer): each is passed over with a warning."""
    import os
    import subprocess
    import sys

    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.jsonl")
    for name in ("zero.jsonl", "fifo.jsonl"):
        done = subprocess.run([sys.executable, "-m", "skillab", "run", str(skill), "--adapter", "mock",
                               "--no-cache", "--quiet", "--json", "--history", str(tmp_path / name),
                               "--output", str(tmp_path / "r.json")],
                              capture_output=True, text=True, timeout=30, preexec_fn=_small_memory)
        assert done.returncode == 0, done.stderr
        doc = json.loads((tmp_path / "r.json").read_text())
        assert f"{tmp_path / name}: history is not a regular file; not used; this run is not recorded" \
            in doc["warnings"]


def _small_memory() -> None:
    # Should reading ever run away again, the child fails fast instead of filling the machine.
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _append_many(args: tuple[str, int]) -> None:
    path, worker = args
    for i in range(25):
        rates = {"with_skill": (worker * 25 + i) / 1000, "without_skill": 0.0}
        record_run(document(rates, suite=f"skills/s{worker}/eval.yaml"), Path(path))


def test_concurrent_writers_never_interleave_lines(tmp_path):
    path = tmp_path / "h.jsonl"
    # spawn, not fork: a fork of this multithreaded test process can inherit a held lock and hang.
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map_async(_append_many, [(str(path), w) for w in range(4)]).get(timeout=120)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 101
    entries, warnings = parse_history(path.read_bytes(), str(path))
    assert warnings == [] and len(entries) == 100
    assert sorted(round(e.pass_rate["with_skill"] * 1000) for e in entries) == list(range(100))


# -- through the CLI ----------------------------------------------------------------------------


def skill_with(tmp_path: Path, responses: dict) -> Path:
    return make_skill(tmp_path, [grep_case("a"), grep_case("b")], responses=responses)


def run(skill: Path, tmp_path: Path, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["run", str(skill), "--adapter", "mock", "--quiet", "--no-cache",
                 "--output", str(tmp_path / "r.json"), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_two_consecutive_runs_produce_a_trend_line(tmp_path, capsys):
    history = str(tmp_path / "h.jsonl")
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    code, out, _ = run(skill, tmp_path, capsys, "--history", history)
    assert code == 0
    assert "trend        first comparable run: same suite content, cases, runs, pass@k, adapter and judge" in out

    (skill / "SKILL.md").write_text("---\nname: demo-skill\ndescription: d\n---\nEdited.\n")
    code, out, _ = run(skill, tmp_path, capsys, "--history", history, "--markdown", str(tmp_path / "r.md"))
    assert code == 0
    trend_line = next(line for line in out.splitlines() if line.startswith("  trend"))
    assert trend_line.startswith("  trend        vs the run of 20")
    assert ("(the skill changed since): lift unchanged at +100.0 pts · with skill unchanged at 100.0% · "
            "without skill unchanged at 0.0%") in trend_line
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [a["direction"] for a in doc["trend"]["arms"]] == ["unchanged", "unchanged", "unchanged"]
    assert "**Trend**" in (tmp_path / "r.md").read_text()

    # The mock's script is its model: a new script is a new agent, not a trend of this one.
    (skill / "mock-responses.yaml").write_text(yaml.safe_dump({"a": answers("SKILLED", "plain"),
                                                               "b": answers("plain", "SKILLED")}))
    code, out, _ = run(skill, tmp_path, capsys, "--history", history)
    assert code == 0 and "trend        first comparable run" in out


def test_a_history_with_a_garbage_line_still_works_and_says_so(tmp_path, capsys):
    history = tmp_path / "h.jsonl"
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain")})
    assert run(skill, tmp_path, capsys, "--history", str(history))[0] == 0
    with history.open("a") as handle:
        handle.write("garbage, not json\n")
    code, out, err = run(skill, tmp_path, capsys, "--history", str(history))
    assert code == 0, err
    assert f"warning      {history}:2: not a history entry (not JSON); line skipped" in out
    assert "trend        vs the run of" in out and "with skill unchanged at 50.0%" in out
    assert len(read_history(history)[0]) == 2


def test_the_default_history_is_dot_skillab_in_the_current_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain")})
    assert run(skill, tmp_path, capsys)[0] == 0
    entries, _ = read_history(tmp_path / ".skillab" / "history.jsonl")
    assert [e.suite for e in entries] == ["demo-skill/eval.yaml"]


def test_no_history_reads_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain")})
    code, out, _ = run(skill, tmp_path, capsys, "--no-history")
    assert code == 0 and "trend" not in out
    assert not (tmp_path / ".skillab").exists()
    assert json.loads((tmp_path / "r.json").read_text())["trend"] is None


def test_a_history_path_that_cannot_be_written_warns_and_the_run_passes(tmp_path, capsys):
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain")})
    code, out, _ = run(skill, tmp_path, capsys, "--history", str(tmp_path))
    assert code == 0
    assert "this run is not recorded" in out


# -- authenticity -------------------------------------------------------------------------------


def test_an_edited_line_is_ignored_with_one_notice_and_makes_no_trend(tmp_path, capsys):
    """A pull request edits the checkout's history so the last run reads 0% with the skill: the
    next run would say the skill "moved 0.0% → 100.0%". The edited line fails its signature."""
    history = tmp_path / "h.jsonl"
    skill = skill_with(tmp_path, {"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    code, _, _ = run(skill, tmp_path, capsys, "--history", str(history))
    assert code == 0
    line = json.loads(history.read_text())
    line["pass_rate"]["with_skill"] = 0.0
    line["delta_pts"] = 0.0
    history.write_text(json.dumps(line) + "\n")
    code, out, _ = run(skill, tmp_path, capsys, "--history", str(history))
    assert code == 0
    assert "0.0% → 100.0%" not in out and "moved" not in out
    assert "first comparable run" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    notices = [w for w in doc["warnings"] if "not signed with this user's key" in w]
    assert notices == [f"{history}: 1 line(s) ignored: not signed with this user's key (edited, or written "
                       "with another key)"]


def test_lines_signed_with_another_key_are_ignored_and_this_keys_lines_read(tmp_path):
    mine, theirs = b"k" * 32, b"t" * 32
    from skillab.log.history import signed_line

    data = signed_line(entry(skill_hash="theirs"), theirs) + signed_line(entry(skill_hash="mine"), mine)
    entries, warnings = parse_history(data, "h", mine)
    assert [e.skill_hash for e in entries] == ["mine"]
    assert warnings == ["h: 1 line(s) ignored: not signed with this user's key (edited, or written with another key)"]
