"""How many skills keep their description in Claude Code's skill listing, measured.

Generates N skills with descriptions of W words, runs the installed ``claude`` CLI once through
skillab's listing probe (the adapter's own launch, against a loopback capture endpoint: no key,
no network), and prints how many of them the listing shows in full, cut short, or by name only,
with the listing's size in characters.

    SKILLAB_CLAUDE_BIN=/path/to/claude python benchmarks/claude_listing.py [--skills 3 30 40] \
        [--words 10 60 50] [--model claude-haiku-4-5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "runner"))

from skillab.agents.claude_code import ClaudeCodeAdapter, claude_version  # noqa: E402
from skillab.sandbox.backend import default_backend  # noqa: E402
from skillab.skill.loader import load_skill  # noqa: E402


def measure(binary: str, model: str, count: int, words: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="skillab-listing-bench-"))
    try:
        skills = []
        for i in range(count):
            folder = root / f"bench-{i:02d}"
            folder.mkdir()
            (folder / "SKILL.md").write_text(
                f"---\nname: bench-{i:02d}\ndescription: {'word ' * words}end{i}\n---\nBody.\n")
            skills.append(load_skill(folder))
        adapter = ClaudeCodeAdapter(binary, api_key="unused", model=model,
                                    version=claude_version(binary))
        return adapter.skill_listing(tuple(skills), default_backend())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, nargs="+", default=[3, 30, 40])
    parser.add_argument("--words", type=int, nargs="+", default=[10, 60, 50])
    parser.add_argument("--model", default="claude-haiku-4-5")
    args = parser.parse_args()
    binary = os.environ.get("SKILLAB_CLAUDE_BIN") or shutil.which("claude")
    if not binary:
        print("set SKILLAB_CLAUDE_BIN or put claude on PATH", file=sys.stderr)
        return 2
    for count, words in zip(args.skills, args.words):
        found = measure(binary, args.model, count, words)
        if found.get("error"):
            print(f"{count} skills x {words} words: {found['error']}")
            continue
        dropped, cut = len(found["descriptions_dropped"]), len(found["descriptions_cut"])
        print(f"{found['agent']}, {args.model}: {count} skills x {words}-word descriptions -> "
              f"{count - dropped - cut} in full, {cut} cut, {dropped} name only; listing "
              f"{found['chars']:,} chars, {found['skills']} entries with the CLI's own; "
              f"overflow {found['overflow']}; CLI skills that lost theirs: {found['others_dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
