"""CPU time to read and write a large results document through the typed run log.

A mock run of the changelog example against itself (three arms, trigger trials, the comparison
block) is written once; its records are repeated to ``--records`` and the document is read
(``RunLog.from_json``) and written (``RunLog.to_json``) ``--repeats`` times. Prints the fastest
CPU time of each (process time: a shared machine's load does not count), in ms.

    python benchmarks/runlog_serialization.py [--records 3000] [--repeats 5]

Compare two checkouts by running it under each (``PYTHONPATH=<checkout>/runner``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from skillab.cli import main
from skillab.core.runlog import RunLog

ROOT = Path(__file__).resolve().parent.parent


def example_document(directory: Path) -> dict:
    output = directory / "results.json"
    example = str(ROOT / "examples" / "changelog-entry")
    code = main(["run", example, "--against", example, "--adapter", "mock", "--no-cache", "--no-history",
                 "--quiet", "--output", str(output)])
    assert code in (0, 1), code
    return json.loads(output.read_text(encoding="utf-8"))


def fastest(action, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best * 1000


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        doc = example_document(Path(directory))
    cases = doc["cases"]
    doc["cases"] = (cases * (args.records // len(cases) + 1))[: args.records]
    log = RunLog.from_json(doc)
    read = fastest(lambda: RunLog.from_json(doc), args.repeats)
    write = fastest(log.to_json, args.repeats)
    print(f"{args.records} records, fastest of {args.repeats}: from_json {read:.0f} ms, to_json {write:.0f} ms "
          f"(CPU time)")


if __name__ == "__main__":
    main_()
