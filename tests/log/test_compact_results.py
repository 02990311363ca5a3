"""``--compact-results``: the document without transcripts, every arm's detail beside it."""

from __future__ import annotations

import json
from pathlib import Path

from skillab.cli import main
from skillab.log.compact import ARMS_FORMAT, arms_path, read_detail

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "changelog-entry"


def _run(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "results.json"
    code = main(["run", str(EXAMPLE), "--adapter", "mock", "--no-cache", "--no-history", "--quiet",
                 "--sandbox", "none", "--output", str(out), *extra])
    assert code in (0, 1)
    return out


def test_compact_document_keeps_grades_and_moves_transcripts_beside_it(tmp_path: Path) -> None:
    full = json.loads(_run(tmp_path / "full").read_text())
    out = _run(tmp_path / "compact", "--compact-results")
    compact = json.loads(out.read_text())
    detail = read_detail(arms_path(out))

    assert arms_path(out).read_text().splitlines()[0] == json.dumps({"format": ARMS_FORMAT})
    assert "\n " not in out.read_text()  # unindented
    assert compact["verdict"] == full["verdict"]
    assert compact["pass_rate"] == full["pass_rate"]
    assert len(compact["cases"]) == len(full["cases"]) > 0
    for slim, whole in zip(compact["cases"], full["cases"]):
        for arm in ("with_skill", "without_skill"):
            assert "transcript" not in slim[arm] and "final_output" not in slim[arm]
            assert slim[arm]["detail"] == arms_path(out).name
            assert _untimed(slim[arm]["validator_results"]) == _untimed(whole[arm]["validator_results"])
            kept = detail[(compact["suite"]["skill"], slim["case_name"], slim["run_index"], arm)]
            assert kept["transcript"] == whole[arm]["transcript"] != ""
            assert kept["final_output"] == whole[arm]["final_output"]
    assert out.stat().st_size < len(json.dumps(full, indent=2))


def _untimed(results: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "duration_ms"} for r in results]
