import json
import os
from pathlib import Path

WORKSPACE = Path(os.environ.get("BENCHFLOW_WORKSPACE", "/root"))


def test_summary_follows_the_conventions():
    summary = json.loads((WORKSPACE / "summary.json").read_text())
    assert summary == {"net_cents": 2100, "voided": 2}
