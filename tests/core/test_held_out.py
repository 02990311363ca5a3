"""Held-out cases (`held_out: true`, or the tag `held-out`): the author lift and the held-out lift
side by side, the gap with its interval, and a gate on the gap."""

from __future__ import annotations

import json

import pytest
import yaml

from skillab.cli import main
from skillab.core.held_out import HELD_OUT_TAG
from skillab.core.runlog import RunLog
from skillab.suite import load_suite

SKILL = "---\nname: greeter\ndescription: Greet in the team's style.\n---\nSay HOWDY-7 first.\n"


def case(name: str, **extra) -> dict:
    return {"name": name, "prompt": f"Greet visitor {name}.",
            "validators": [{"cmd": "grep -q HOWDY response.txt"}], **extra}


def suite(tmp_path, author: int = 4, held: int = 4, held_passes_with: bool = False):
    root = tmp_path / "greeter"
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL)
    cases = [case(f"a{i}") for i in range(author)]
    cases += [case(f"h{i}", held_out=True) if i % 2 else case(f"h{i}", tags=[HELD_OUT_TAG]) for i in range(held)]
    (root / "eval.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    answers = {f"a{i}": {"with": "HOWDY", "without": "hi"} for i in range(author)}
    answers |= {f"h{i}": {"with": "HOWDY" if held_passes_with else "hi", "without": "hi"} for i in range(held)}
    (root / "mock-responses.yaml").write_text(yaml.safe_dump(answers))
    return root


def run(root, tmp_path, *flags: str) -> tuple[int, dict, str]:
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    code = main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet",
                 "--output", str(out), "--markdown", str(md), *flags])
    return code, json.loads(out.read_text()), md.read_text()


def test_held_out_true_and_the_portable_tag_both_mark_a_held_out_case(tmp_path):
    cases = load_suite(suite(tmp_path)).cases
    assert [HELD_OUT_TAG in c.tags for c in cases] == [False] * 4 + [True] * 4
    assert all("held_out" not in c.to_spec_dict() for c in cases)  # the spec's normalized shape is unchanged


def test_the_report_gives_both_lifts_and_the_gap_and_the_gate_fails_on_it(tmp_path):
    root = suite(tmp_path, author=10, held=10)
    code, doc, md = run(root, tmp_path)
    assert code == 0
    block = doc["held_out"]
    assert (block["author"]["cases"], block["author"]["lift_pts"]) == (10, 100.0)
    assert (block["held_out"]["cases"], block["held_out"]["lift_pts"]) == (10, 0.0)
    assert block["gap_pts"] == 100.0 and 0 < block["gap_ci95"][0] < 100 <= block["gap_ci95"][1]
    assert RunLog.from_json(doc).to_json() == doc
    assert "**Held-out cases**" in md and "gap +100.0 pts" in md
    assert run(root, tmp_path, "--max-held-out-gap", "20")[0] == 1


def test_a_skill_that_generalises_has_no_gap_and_passes_the_gate(tmp_path):
    code, doc, _ = run(suite(tmp_path, held_passes_with=True), tmp_path, "--max-held-out-gap", "20")
    assert code == 0 and doc["held_out"]["gap_pts"] == 0.0


@pytest.mark.parametrize("held", [0, 8])
def test_no_block_without_both_kinds_of_case(tmp_path, held):
    _, doc, md = run(suite(tmp_path, author=0 if held else 4, held=held), tmp_path)
    assert "held_out" not in doc and "Held-out" not in md


def test_a_held_out_file_from_outside_the_suite_joins_the_run_as_held_out_cases(tmp_path):
    root = suite(tmp_path, author=10, held=0)
    kept = tmp_path / "kept-elsewhere"
    kept.mkdir()
    (kept / "eval.yaml").write_text(yaml.safe_dump({"cases": [case(f"k{i}") for i in range(10)]}, sort_keys=False))
    script = yaml.safe_load((root / "mock-responses.yaml").read_text())
    script |= {f"k{i}": {"with": "hi", "without": "hi"} for i in range(10)}
    (root / "mock-responses.yaml").write_text(yaml.safe_dump(script))
    code, doc, md = run(root, tmp_path, "--held-out", str(kept / "eval.yaml"), "--max-held-out-gap", "50")
    assert code == 1
    assert (doc["held_out"]["author"]["cases"], doc["held_out"]["held_out"]["cases"]) == (10, 10)
    assert doc["held_out"]["gap_pts"] == 100.0
    assert all(HELD_OUT_TAG in r["tags"] for r in doc["cases"] if r["case_name"].startswith("k"))


def test_a_held_out_case_named_like_an_author_case_is_refused_in_one_line(tmp_path, capsys):
    root = suite(tmp_path, author=2, held=0)
    (tmp_path / "kept.yaml").write_text(yaml.safe_dump({"cases": [case("a0")]}))
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "eval.yaml").write_text((tmp_path / "kept.yaml").read_text())
    assert main(["run", str(root), "--adapter", "mock", "--no-history", "--no-cache", "--quiet",
                 "--held-out", str(tmp_path / "kept" / "eval.yaml")]) == 2
    err = capsys.readouterr().err
    assert "held-out case 'a0'" in err and "Traceback" not in err
