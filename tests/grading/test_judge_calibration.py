"""The hand-labelled judge calibration set and `skillab calibrate-judge`."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from skillab.cli import main
from skillab.errors import UsageError
from skillab.grading.calibration import Agreement, Item, load_set
from skillab.grading.judge import fenced_blocks

from ..fakes.model_server import FakeModelServer, text


def test_the_shipped_set_has_fifty_labelled_items_per_arm_of_every_kind():
    items = load_set()
    assert len({i.id for i in items}) == len(items)
    per_arm = Counter(i.arm for i in items)
    assert per_arm["with_skill"] >= 50 and per_arm["without_skill"] >= 50
    for arm in ("with_skill", "without_skill"):
        kinds = Counter((i.kind, i.label) for i in items if i.arm == arm)
        assert kinds[("met", True)] >= 10 and kinds[("unmet", False)] >= 10
        assert kinds[("adversarial", False)] >= 5


def test_kappa_sensitivity_and_specificity_by_hand():
    table = Agreement()
    item = lambda label: Item("x", "a", "met", "e", "p", "o", label)  # noqa: E731
    for label, verdict, n in ((True, True, 40), (True, False, 10), (False, False, 35), (False, True, 15)):
        for _ in range(n):
            table.add(item(label), verdict)
    # po = 0.75; pe = 0.5 * 0.55 + 0.5 * 0.45 = 0.5; kappa = 0.25 / 0.5
    assert (table.sensitivity, table.specificity, table.kappa) == (0.8, 0.7, pytest.approx(0.5))


def test_the_mock_judge_is_scored_honestly(capsys):
    assert main(["calibrate-judge", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judge"] == "mock-judge"
    overall = report["arms"]["all"]
    assert overall["items"] == len(load_set()) and 0 <= overall["kappa"] < 1


def test_a_model_judge_that_matches_the_labels_scores_kappa_one(capsys, monkeypatch):
    labels = {(i.expectation, i.output): i.label for i in load_set()}

    def judge(req):
        blocks = fenced_blocks(req.last_user_text)
        passed = labels[(blocks["EXPECTATION"], blocks["FINAL_OUTPUT"])]
        return text(json.dumps({"passed": passed, "reason": "Matches the label."}))

    with FakeModelServer(judge) as server:
        server.serve_sdks(monkeypatch, anthropic_key="sk-ant-api03-" + "K" * 40, openai_key="sk-" + "k" * 40)
        assert main(["calibrate-judge", "--judge-model", "gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("judge gpt-4o: agreement with the hand labels")
    assert "  all              108   1.00   1.00   1.00" in out


def test_a_malformed_set_names_the_item(tmp_path):
    bad = tmp_path / "set.yaml"
    bad.write_text("format: skillab.judge-calibration/1\nitems:\n- {id: q1, arm: with_skill, kind: met}\n")
    with pytest.raises(UsageError, match=r"item 1 \(q1\): missing or malformed field"):
        load_set(bad)
