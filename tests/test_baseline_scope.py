"""The baseline cache serves a selection as it serves the whole suite: a validator-only case's
baseline does not depend on whether the selected cases hold a judged one (``-k``, ``--failed``)."""

from __future__ import annotations

import json

from skillab.cli import main

from .skillgen import answers, grep_case, make_skill

JUDGED = {"name": "judged", "prompt": "Say it.", "expectations": ["The answer says SKILLED."]}


def test_a_selection_without_a_judged_case_takes_its_baseline_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_skill(tmp_path / "skills", [grep_case("plain"), JUDGED],
               responses={"plain": answers("SKILLED", "no"), "judged": answers("SKILLED", "no")})
    common = ["skills/demo-skill", "--adapter", "mock", "--cache-dir", "cache", "--no-history", "--quiet",
              "--fail-on-verdict", "none"]
    assert main(["run", *common]) == 0
    assert main(["run", *common, "-k", "plain"]) == 0
    assert json.loads((tmp_path / "results.json").read_text())["cache"] == {"enabled": True, "hits": 1, "arms": 1}
    assert main(["run", *common]) == 0
    assert json.loads((tmp_path / "results.json").read_text())["cache"]["hits"] == 2
