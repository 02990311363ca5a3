"""The documentation holds together: the README stays a first screen, every page is in the site's
nav and the index, every relative link and anchor in the README and docs/ resolves (as GitHub
renders them and as MkDocs does), and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_MAX_LINES = 400
# Pages being written in other branches at the same time; linked already, so a link to one of them
# may dangle until it lands. Each name leaves this set when its page exists.
PENDING: set[str] = set()

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6}) +(.*?) *#*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?: \"[^\"]*\")?\)")
REFERENCE = re.compile(r"^\[[^\]]+\]: +(\S+)", re.M)


def prose(text: str) -> Iterator[str]:
    """The lines outside fenced code blocks."""
    fenced = False
    for line in text.split("\n"):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def heading_text(raw: str) -> str:
    """What a heading renders as: code spans keep their text, links their label, emphasis goes."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), raw)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)


def github_slug(text: str) -> str:
    # github-slugger: lower case, drop what is not a letter, digit, space, hyphen or underscore.
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def mkdocs_slug(text: str) -> str:
    # Python-Markdown's toc.slugify, MkDocs' default: ASCII only, runs of spaces and hyphens fold.
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path, slug, dup: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(heading_text(match.group(2)))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}{dup}{n}")
    return out


def links(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, target) of every inline link and reference definition outside code."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if fenced:
            continue
        bare = CODE_SPAN.sub("", line)
        for match in LINK.finditer(bare):
            yield number, match.group(2)
        for match in REFERENCE.finditer(bare):
            yield number, match.group(1)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def broken_links(path: Path) -> Iterator[str]:
    for number, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check offline
            continue
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            if not (resolved.parent == DOCS and resolved.name in PENDING):
                yield f"{where} — no such file"
            continue
        if not anchor:
            continue
        if resolved.suffix != ".md":
            yield f"{where} — an anchor into a file that is not markdown"
        elif anchor not in anchors(resolved, github_slug, "-"):
            yield f"{where} — no heading with that anchor on GitHub"
        elif DOCS in path.parents and anchor not in anchors(resolved, mkdocs_slug, "_"):
            # The site renders docs/ with MkDocs, whose slugs differ (runs of '-' fold): a heading
            # whose two slugs differ cannot be linked from both.
            yield f"{where} — the heading's MkDocs anchor differs: reword the heading"


def test_the_readme_is_a_first_screen():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path):
    assert list(broken_links(path)) == []


def test_the_checker_finds_a_broken_anchor_and_a_missing_page(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Which `uses:` line\n\n## --pass-k K\n")
    (docs / "b.md").write_text("[ok](a.md#which-uses-line) [x](a.md#nope) [y](gone.md) [p](scale.md)\n"
                               "[z](a.md#--pass-k-k) `[not](a link)`\n```\n[in](code.md)\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "DOCS", docs)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PENDING", {"scale.md"})
    problems = list(broken_links(docs / "b.md"))
    assert [p.split(" — ")[0] for p in problems] == [
        "docs/b.md:1: a.md#nope", "docs/b.md:1: gone.md", "docs/b.md:2: a.md#--pass-k-k"]
    assert "MkDocs anchor differs" in problems[2]


def nav_pages(nav) -> Iterator[str]:
    for entry in nav:
        if isinstance(entry, str):
            yield entry
        else:
            for value in entry.values():
                yield from ([value] if isinstance(value, str) else nav_pages(value))


def mkdocs_config() -> dict:
    # mkdocs.yml may carry !!python/name tags; none is needed to read the nav.
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)


def test_every_page_is_in_the_nav_and_the_index():
    nav = list(nav_pages(mkdocs_config()["nav"]))
    assert len(nav) == len(set(nav)), "a page is twice in the nav"
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages - set(nav) == set(), "pages missing from mkdocs.yml's nav"
    assert set(nav) - pages - PENDING == set(), "nav entries with no page"
    index = {target.partition("#")[0] for _, target in links(DOCS / "index.md")}
    assert pages - index - {"index.md"} == set(), "pages missing from docs/index.md"
    readme = {Path(target.partition("#")[0]).name for _, target in links(ROOT / "README.md")
              if target.startswith("docs/")}
    assert set(nav) - readme - {"index.md"} == set(), "pages missing from the README's index"


def test_the_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[test]')")
    # Build a copy, with an empty page for each page still being written elsewhere, so strict
    # mode judges everything that exists.
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for name in PENDING:
        page = tmp_path / "docs" / name
        if not page.exists():
            page.write_text(f"# {name}\n")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_development_pages_suite_commands_are_what_ci_runs():
    page = (DOCS / "development.md").read_text(encoding="utf-8").split("## Running the suite faster", 1)[1]
    block = re.search(r"```bash\n(.*?)```", page, re.S)
    assert block, "the page lost its commands"
    ci = (ROOT / ".ci" / "run").read_text()
    for command in block.group(1).strip().splitlines():
        assert re.search(rf"^{re.escape(command)}( |$)", ci, re.M), f".ci/run does not run {command!r}"


def fenced_skillab_commands(text: str) -> list[str]:
    """Each ``skillab`` command in the page's code blocks, cut at the first shell operator; lines
    with shell variables or placeholders (``$``, ``...``, ``[``, ``<``) are left to the reader."""
    commands = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #", 1)[0].strip()
            found = re.search(r"(?:^|[\s;&|(])(skillab\s+[a-z-]+.*)", line)
            if found is None or line.startswith("#"):
                continue
            command = re.split(r"\s(?:\||&&|;|&|>|2>|<)\s?|\s&$|>\s", found.group(1))[0]
            if not any(mark in command for mark in ("$", "...", "[", "<")):
                commands.append(command)
    return commands


def _refusal(command: str) -> str | None:
    import contextlib
    import io
    import shlex

    from skillab.cli import build_parser

    argv = shlex.split(command)[1:]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser(argv[0]).parse_args(argv)
    except SystemExit as exc:
        return err.getvalue().strip() if exc.code else None
    return None


def test_every_skillab_command_in_the_docs_code_blocks_parses():
    # A flag renamed, moved to another command or given new bounds leaves no command in the docs
    # that argparse would refuse.
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    from skillab.cli import COMMANDS

    commands = [(page.name, c) for page in pages for c in fenced_skillab_commands(page.read_text(encoding="utf-8"))
                if c.split()[1] in (*COMMANDS, "action")]  # not prose in a diagram ("skillab does not...")
    assert len(commands) > 50
    refused = [(page, command, _refusal(command)) for page, command in commands]
    assert [r for r in refused if r[2] is not None] == []
    # ...and the check refuses what argparse refuses.
    sample = "```bash\nskillab route skills/x --catalogue skills --max-turns 0  # too few\n```\n"
    [command] = fenced_skillab_commands(sample)
    assert "--max-turns: must be a positive integer" in str(_refusal(command))
