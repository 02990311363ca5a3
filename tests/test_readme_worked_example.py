"""The worked example of docs/architecture.md is real: its reporter, copied out of the page as written, is
installed as a package with its entry point and writes its report from a run of an example."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- worked-example: reporter"


def worked_example() -> tuple[str, str]:
    """The python and toml blocks that follow the page's marker."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    after = text[text.index(MARKER):]
    python = re.search(r"```python\n(.*?)```", after, re.S)
    toml = re.search(r"```toml\n(.*?)```", after, re.S)
    assert python and toml, "the worked example lost a code block"
    return python.group(1), toml.group(1)


def install(site: Path) -> str:
    """What ``pip install ./my_reports`` leaves on disk: the package and its metadata, the entry
    point taken from the page's pyproject lines."""
    code, toml = worked_example()
    entry = re.search(r'^(\S+) = "([\w.]+:\w+)"$', toml, re.M)
    assert entry and "skillab.reporters" in toml
    package = site / "my_reports"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "outcomes.py").write_text(code)
    info = site / "my_reports-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-reports\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[skillab.reporters]\n{entry.group(1)} = {entry.group(2)}\n")
    return entry.group(1)


def test_the_readme_reporter_installs_and_writes_its_report(tmp_path):
    site = tmp_path / "site"
    name = install(site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "skillab", "run", str(ROOT / "examples" / "changelog-entry"), "--adapter", "mock",
         "--no-cache", "--no-history", "--quiet", "--output", "results.json", "--reporter", f"{name}=out.csv"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "wrote out.csv (outcomes as CSV)" in done.stderr
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    doc = json.loads((tmp_path / "results.json").read_text())
    # One row per (case, run), each as the results document records it.
    assert [(r["case"], r["outcome"], r["verdict"]) for r in rows] == [
        (c["case_name"], c["outcome"], doc["verdict"]) for c in doc["cases"]]
    assert {r["with_skill"] for r in rows} <= {"True", "False"} and len(rows) == 6
    unknown = subprocess.run([sys.executable, "-m", "skillab", "run", str(ROOT / "examples" / "changelog-entry"),
                              "--adapter", "mock", "--reporter", "nope=x"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and f"html, {name}" in unknown.stderr
