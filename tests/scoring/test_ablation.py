"""``skillab ablate``: sections and files cut as written, each part's role measured against a
suite whose answer is known by construction, and the context budget against hand counts."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from skillab.agents.context_budget import context_cost
from skillab.cli import main
from skillab.core.ablation import AblationDocument, AblationSpend, FullLift, PartResult
from skillab.errors import SkillabError
from skillab.scoring.ablation import Contrast, can_still_claim, classify, holm
from skillab.scoring.inference import CasePair
from skillab.scoring.interval import infer_lift
from skillab.skill.loader import load_skill
from skillab.skill.sections import partition, split_sections, without_part
from skillab.suite.mock_script import load_mock_responses

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "examples" / "ablation" / "incident-summary"

SKILL = """---
name: demo
description: A demo.
---

# Title

Intro text.

## First

One.

```markdown
## Not a heading (inside a fence)
```

### Sub of first

Still first.

## Second

Two.

# Appendix

Closes Second.
"""


def test_sections_follow_the_heading_level_and_skip_fenced_headings():
    parts = split_sections(SKILL, 2)
    assert [p.name for p in parts] == ["First", "Second"]
    first, second = parts
    assert first.lines == (10, 21)  # the '### Sub' and the fenced '## ...' stay inside First
    text = without_part(SKILL, first)
    assert "## First" not in text and "Sub of first" not in text and "## Second" in text
    assert "Intro text." in text and text.startswith("---\nname: demo")
    # The level-1 heading closes Second: the appendix stays in every variant.
    assert "Closes Second." in without_part(SKILL, second)
    # Level 3: the '###' headings are the parts; a '##' heading only closes one.
    assert [(p.name, p.lines) for p in split_sections(SKILL, 3)] == [("Sub of first", (18, 21))]


def test_a_bundled_file_a_grader_calls_is_never_ablated(tmp_path):
    (tmp_path / "SKILL.md").write_text(SKILL)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.py").write_text("print('ok')\n")
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "api.md").write_text("x" * 40)
    found = partition(load_skill(tmp_path), ['{"cmd": "python3 scripts/check.py"}'])
    assert found.grader_files == ("scripts/check.py",)
    assert [p.label for p in found.parts] == ["## First", "## Second", "references/api.md"]
    assert found.parts[-1].chars == 40


def test_holm_adjusts_step_down_and_keeps_untested_parts():
    assert holm([0.01, None, 0.04, 0.03]) == [0.03, None, 0.06, 0.06]


def test_no_effect_parts_are_never_load_bearing_on_identical_answers():
    same = Contrast([CasePair(1, 1, 1)] * 10, [f"c{i}" for i in range(10)], 0, 10)
    (only,) = classify([same])
    # Ten cases whose arms never differ, one run each: dead weight, with the size this suite
    # would have detected (a contribution that moves every case is found every time).
    assert only["role"] == "dead weight" and "this suite detects about 69 pts or more" in only["note"]


def test_a_variant_that_mostly_errored_is_not_measured():
    broken = Contrast([CasePair(1, 0, 1)] * 3, ["a", "b", "c"], errored=7, records=10)
    (only,) = classify([broken, None])[:1]
    assert only["role"] == "not measured" and "errored" in only["note"]


def test_null_parts_claim_nothing_at_the_family_wise_rate():
    """Five parts with no effect, noisy cases: a load-bearing or harmful claim in at most 5% of
    seeded suites (Holm over the parts). A bounded version of benchmarks/ablation.py."""
    rng = random.Random(7)
    claims = 0
    for _ in range(200):
        contrasts = []
        for _part in range(5):
            rates = [rng.random() for _ in range(20)]
            pairs = [CasePair(sum(rng.random() < r for _ in range(3)), sum(rng.random() < r for _ in range(3)), 3)
                     for r in rates]
            contrasts.append(Contrast(pairs, [str(i) for i in range(20)], 0, 60))
        claims += any(r["role"] in ("load-bearing", "harmful") for r in classify(contrasts))
    assert claims / 200 <= 0.05


def _parts(rng: random.Random, cases: int, runs: int, parts: int, contribution_pts: float) -> list[Contrast]:
    """Seeded parts of one suite: the first contributes ``contribution_pts`` (leaving it out
    scales every case's pass rate down alike), the rest nothing."""
    rates = [rng.random() for _ in range(cases)]
    loss = contribution_pts / 100 / (sum(rates) / cases)
    full = [sum(rng.random() < r for _ in range(runs)) for r in rates]
    contrasts = []
    for part in range(parts):
        kept = [r * (1 - loss) if part == 0 else r for r in rates]
        pairs = [CasePair(f, sum(rng.random() < k for _ in range(runs)), runs) for f, k in zip(full, kept)]
        contrasts.append(Contrast(pairs, [str(i) for i in range(cases)], 0, cases * runs))
    return contrasts


@pytest.mark.parametrize("runs", [1, 3])
def test_the_dead_weight_note_names_a_contribution_found_after_holm(runs):
    """16 parts, 40 cases: the contribution "dead weight" says the suite detects is found, as
    load-bearing after Holm's correction over the 16 parts, in about 80% of suites (it was sized
    for one test at 5% and found 38-50% of the time)."""
    rng = random.Random(11)
    said = []
    for _ in range(2):  # each pilot's notes cost seconds at three runs (simulated power)
        note = classify(_parts(rng, 40, runs, 16, 0.0))[0]["note"]
        assert "detects about" in note, note
        said.append(float(note.split("detects about ")[1].split(" pts")[0]))
    x = min(said)
    found = 0
    reps = 300
    for _ in range(reps):
        contrasts = _parts(rng, 40, runs, 16, x)
        adjusted = holm([infer_lift(c.pairs).p_value for c in contrasts])
        found += adjusted[0] < 0.05 and infer_lift(contrasts[0].pairs).lift_pts > 0
    assert found / reps >= 0.74, (x, found / reps)


def test_ablate_classifies_the_demo_known_by_construction(tmp_path, capsys):
    skill = tmp_path / "incident-summary"
    shutil.copytree(DEMO, skill)
    output = tmp_path / "ablation.json"
    code = main(["ablate", str(skill), "--adapter", "mock", "--no-cache", "--quiet", "--stop-early", "none",
                 "--output", str(output), "--markdown", str(tmp_path / "a.md"), "--html", str(tmp_path / "a.html")])
    assert code == 0
    doc = json.loads(output.read_text())
    assert doc["format"] == "skillab.ablation/1"
    roles = {p["label"]: p["role"] for p in doc["parts"]}
    assert roles == {"## Cite the ticket": "load-bearing", "## House style history": "dead weight",
                     "## Be exhaustive": "harmful"}
    cite = next(p for p in doc["parts"] if p["label"] == "## Cite the ticket")
    assert cite["contribution_pts"] == 50.0 and cite["p_adjusted"] < 0.05
    # The full run's 16 baselines are reused by each of the three variants.
    assert doc["spend"] == {"model_calls": 32 + 3 * 16, "cached_arms": 3 * 16, "cost_usd": None,
                            "calls_saved": 0}
    out = capsys.readouterr().out
    assert "1 load-bearing · 1 dead weight · 1 harmful" in out
    markdown = (tmp_path / "a.md").read_text()
    assert "| \\#\\# Cite the ticket | ▲ load-bearing | +50.0 |" in markdown
    assert "\n- \\#\\# House style history: no contribution detectable" in markdown
    page = (tmp_path / "a.html").read_text()
    assert "<svg" in page and "House style history" in page


def test_curtailment_stops_a_variant_only_once_its_role_cannot_change(tmp_path):
    output = tmp_path / "ablation.json"
    assert main(["ablate", str(DEMO), "--adapter", "mock", "--no-cache", "--quiet", "--stop-seed", "3",
                 "--output", str(output)]) == 0
    doc = json.loads(output.read_text())
    assert doc["stop_early"] == "curtail" and doc["order_seed"] == 3
    parts = {p["label"]: p for p in doc["parts"]}
    # The same roles as the whole suite gives (test above); only the null part could stop early.
    assert [parts[k]["role"] for k in ("## Cite the ticket", "## House style history", "## Be exhaustive")] == [
        "load-bearing", "dead weight", "harmful"]
    assert parts["## Cite the ticket"]["stopped_at"] is None and parts["## Be exhaustive"]["stopped_at"] is None
    stopped = parts["## House style history"]["stopped_at"]
    assert stopped == 12 and "stopped at 12 of 16 cases" in parts["## House style history"]["note"]
    assert doc["spend"]["calls_saved"] == 16 - stopped
    assert doc["spend"]["model_calls"] == 32 + 16 + 16 + stopped


def test_can_still_claim_looks_at_both_extremes():
    ties = Contrast([CasePair(1, 1, 1)] * 11, [str(i) for i in range(11)], 0, 11)
    assert can_still_claim(ties, remaining=6, runs=1)  # six more flips: p = 2/64 < 0.05
    assert not can_still_claim(ties, remaining=5, runs=1)  # five: p = 2/32, never below 0.05
    assert not can_still_claim(ties, remaining=0, runs=1)


def test_ablate_dry_run_lists_parts_and_arms_without_running(tmp_path, capsys):
    code = main(["ablate", str(DEMO), "--adapter", "mock", "--dry-run", "--output", str(tmp_path / "a.json")])
    assert code == 0
    out = capsys.readouterr().out
    assert "3 parts, tried largest first" in out
    assert "64 with-skill (16 cases x 1 runs x 4 skills" in out
    assert not (tmp_path / "a.json").exists()


def test_ablate_refuses_a_second_skill_and_a_skill_without_parts(tmp_path, capsys):
    assert main(["ablate", str(DEMO), "--adapter", "mock", "--against", str(DEMO)]) == 2
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "SKILL.md").write_text("---\nname: bare\ndescription: d\n---\nNo sections here.\n")
    (bare / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    validators:\n      - cmd: 'true'\n")
    assert main(["ablate", str(bare), "--adapter", "mock", "--quiet"]) == 2
    assert "nothing to ablate" in capsys.readouterr().err


def test_by_skill_rules_are_checked_with_file_case_and_field(tmp_path):
    script = tmp_path / "mock-responses.yaml"
    script.write_text("a:\n  with: x\n  by_skill:\n    - contains: '## X'\n")
    with pytest.raises(SkillabError, match=r"case a 'by_skill\[0\]' — 'answer' is missing"):
        load_mock_responses(script)
    script.write_text("a:\n  by_skill:\n    - answer: y\n")
    with pytest.raises(SkillabError, match="give 'contains' or 'lacks'"):
        load_mock_responses(script)


def test_context_budget_against_hand_counts(tmp_path):
    description = "d" * 1600  # over Claude Code's 1,536-character cut
    (tmp_path / "SKILL.md").write_text(f"---\nname: hand\ndescription: {description}\n---\n" + "b" * 400)
    (tmp_path / "notes.md").write_text("n" * 81)
    cost = context_cost(load_skill(tmp_path), "claude-code")
    # 4 + 11 + 1,614 + 4 characters of frontmatter and 400 of body: 2,033 characters, the whole file.
    skill_md = len(f"---\nname: hand\ndescription: {description}\n---\n") + 400
    assert skill_md == 2033 and cost.body_tokens == 509
    assert cost.files_tokens == 21  # 81 characters
    claude = next(item for item in cost.listings if item.agent == "claude-code")
    line = len("- hand: ") + 1600  # 1,608 characters of an 8,000-character budget
    assert claude.tokens == 402 and claude.share == round(line / 8000, 4) == 0.201
    assert claude.description_cut is True
    assert cost.total_tokens == 402 + 509


def test_max_skill_tokens_gates_the_run(tmp_path, capsys):
    args = ["run", str(DEMO), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
            "--output", str(tmp_path / "r.json")]
    assert main(args + ["--max-skill-tokens", "5000"]) == 0
    assert main(args + ["--max-skill-tokens", "50"]) == 1
    err = capsys.readouterr().err
    assert "above --max-skill-tokens 50" in err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["context_budget"]["listings"]["claude-code"]["description_cut"] is False


def test_ablate_says_before_spending_when_the_suite_is_too_small_to_label_any_part(tmp_path, capsys):
    small = tmp_path / "incident-summary"
    shutil.copytree(DEMO, small)
    suite = small / "eval.yaml"
    text = suite.read_text()
    # The demo's suite cut to its first six cases: 2^-5 = 0.031 is never below 5% / 3 parts.
    starts = [i for i, line in enumerate(text.splitlines()) if line.startswith("- name:")]
    suite.write_text("\n".join(text.splitlines()[:starts[6]]) + "\n")
    (small / "mock-responses.yaml").unlink()  # it scripts the cases cut
    code = main(["ablate", str(small), "--adapter", "mock", "--dry-run", "--output", str(tmp_path / "a.json")])
    out = capsys.readouterr().out
    assert code == 0 and "6 cases x 1 runs" in out
    assert "warning: this suite is too small to label any part: with 6 cases the smallest p is 0.0312" in out
    assert "7 cases or more can label one" in out  # 2^-6 = 0.016 < 5% / 3
    main(["ablate", str(DEMO), "--adapter", "mock", "--dry-run", "--output", str(tmp_path / "b.json")])
    assert "too small" not in capsys.readouterr().out


def test_the_ablation_document_reads_back_typed_and_writes_the_same_bytes(tmp_path, capsys):
    output = tmp_path / "ablation.json"
    assert main(["ablate", str(DEMO), "--adapter", "mock", "--no-cache", "--quiet", "--stop-seed", "3",
                 "--output", str(output)]) == 0
    text = output.read_text()
    document = AblationDocument.from_json(json.loads(text))
    assert document.parts[0].role in ("load-bearing", "dead weight", "harmful") and document.spend.model_calls > 0
    assert json.dumps(document.to_json(), indent=2, ensure_ascii=False) + "\n" == text
    marked = replace(document, changed_in_pr=("## Cite the ticket",))
    assert AblationDocument.from_json(marked.to_json()) == marked


@pytest.mark.parametrize("damage,where", [
    (lambda d: d["parts"][0].update(role="great"), "ablation.parts[0].role"),
    (lambda d: d["spend"].pop("model_calls"), "ablation.spend"),
    (lambda d: d.update(format="skillab.results/1"), "format"),
])
def test_a_malformed_ablation_document_is_refused_naming_the_field(damage, where):
    part = PartResult(kind="section", name="a", label="## A", lines=(1, 2), chars=10, tokens=3, role="dead weight",
                      contribution_pts=0.0, ci95=(-5.0, 5.0), p_value=1.0, p_adjusted=1.0, detectable_pts=None,
                      n_cases=4, errored_records=0, calls=4)
    doc = AblationDocument(skill="s", suite="skills/s", heading_level=2, full=FullLift(None, None), parts=(part,),
                           grader_files=(), cases=4, runs=1, spend=AblationSpend(8, 4, None)).to_json()
    damage(doc)
    with pytest.raises(ValueError, match=where.replace("[", r"\[").replace("]", r"\]")):
        AblationDocument.from_json(doc)
