"""The example runs whose results documents, markdown reports, JUnit files and terminal tables are
pinned in ``tests/golden/results/``.

Regenerate after an intended change to what a run writes: ``python -m tests.results_golden`` from the
repository root. What varies from run to run or machine to machine is masked: timings and
durations, pytest's own timing line, the checkout's own path, the isolation the machine offers,
the tool version, and the statistics (pinned by tests/scoring/test_statistics.py; the round trip in
tests/log/test_results_summary.py holds the document to exactly what the statistics functions
return).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "results"
MOCK = ["--adapter", "mock", "--no-cache", "--no-history", "--quiet"]
# name -> the ``skillab run`` arguments, paths relative to the repository root.
EXAMPLE_RUNS: dict[str, list[str]] = {
    "changelog-entry": ["examples/changelog-entry"],
    "changelog-entry-runs3": ["examples/changelog-entry", "--runs", "3"],
    "changelog-entry-pass-k": ["examples/changelog-entry", "--pass-k", "2", "--pass-n", "3"],
    "sql-migration-safety": ["examples/sql-migration-safety"],
    "sql-migration-safety-against": ["examples/sql-migration-safety",
                                     "--against", "examples/sql-migration-safety"],
    "skillsbench-ini-migration": ["examples/skillsbench-ini-migration"],
    "skillsbench-sales-report": ["examples/skillsbench-sales-report"],
    "ruby-skill-bench": ["examples/ruby-skill-bench/evals/skills/service-object/extract-order-total"],
    "task-suite": ["examples/task-suite/task_suites/commit-message"],
}
# suite_hash: seed formats hash their fixtures' absolute paths, which differ between checkouts.
_VARYING = {"started_at", "finished_at", "wall_ms", "isolation", "statistics", "suite_hash", "recorded_at"}
_PYTEST_TIME = re.compile(r" in \d+\.\d+s\b")


def assert_round_trip(doc: dict):
    """The document is its run log's JSON form, byte for byte (key order included); the log."""
    from skillab.core.runlog import RunLog

    log = RunLog.from_json(doc)
    assert json.dumps(log.to_json(), indent=2) == json.dumps(doc, indent=2)
    return log


def mask(value, key: str = ""):
    """The document with what varies between runs and machines replaced by a placeholder."""
    if isinstance(value, dict):
        return {k: "<varies>" if k in _VARYING or k.startswith("duration_ms") else mask(v, k)
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    if key == "version":
        return "<version>"
    if isinstance(value, str) and str(ROOT) in value:
        value = value.replace(str(ROOT), "<checkout>")
    if key == "output" and isinstance(value, str) and _PYTEST_TIME.search(value):
        # pytest's report: its timing line, and set reprs whose order is hash-seeded.
        return "<pytest output>"
    return value


_TEXT_VARYING = (
    (re.compile(r'time="[0-9.]+"'), 'time="<varies>"'),
    (re.compile(r"\| duration \| [^|]* \| [^|]* \|"), "| duration | <varies> | <varies> |"),
    (re.compile(r"skillab \d+\.\d+\.\d+\S*"), "skillab <version>"),
    (re.compile(r"sandbox `[^`]*`"), "sandbox `<varies>`"),
    # The terminal table's wall time and the sandbox this machine offers.
    (re.compile(r"[0-9.]+s wall · sandbox: .*"), "<varies>s wall · sandbox: <varies>"),
)


def mask_text(text: str) -> str:
    """A rendered report with what varies between runs and machines replaced by a placeholder."""
    text = _PYTEST_TIME.sub(" in <varies>", text.replace(str(ROOT), "<checkout>"))
    for pattern, placeholder in _TEXT_VARYING:
        text = pattern.sub(placeholder, text)
    return text


def run_example(name: str, output: Path) -> dict:
    """Run one pinned example; its markdown report and JUnit land beside ``output``."""
    from skillab.cli import main

    code = main(["run", *EXAMPLE_RUNS[name], *MOCK, "--output", str(output),
                 "--markdown", str(output.with_suffix(".md")),
                 "--junit", str(output.with_suffix(".xml"))])
    assert code in (0, 1), f"{name}: skillab run exited {code}"
    return json.loads(output.read_text(encoding="utf-8"))


def rendered(output: Path) -> dict[str, str]:
    """The masked reports a pinned run wrote beside ``output``, by golden file suffix, and its
    terminal table (``.txt``)."""
    reports = {suffix: mask_text(output.with_suffix(suffix).read_text(encoding="utf-8"))
               for suffix in (".md", ".xml")}
    reports[".txt"] = mask_text(terminal_table(output)) + "\n"
    return reports


def terminal_table(output: Path) -> str:
    from skillab.core.runlog import RunLog
    from skillab.reports.terminal import render_table

    return render_table(RunLog.from_json(json.loads(output.read_text(encoding="utf-8"))))


def main() -> int:
    import contextlib
    import io
    import os
    import tempfile

    os.chdir(ROOT)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name in EXAMPLE_RUNS:
            with contextlib.redirect_stdout(io.StringIO()):
                doc = run_example(name, Path(scratch) / f"{name}.json")
            text = json.dumps(mask(doc), indent=2, ensure_ascii=False) + "\n"
            (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")
            for suffix, report in rendered(Path(scratch) / f"{name}.json").items():
                (GOLDEN / f"{name}{suffix}").write_text(report, encoding="utf-8")
            print(f"wrote {GOLDEN / name}.json, .md, .xml and .txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
