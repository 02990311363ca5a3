"""Plain-text similarity with no model: words, word n-grams, containment and where a piece of
text sits in a file. Enough to tell a copy (or a near copy) from a paraphrase."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_WORD = re.compile(r"[a-z0-9]+")
# A bundled file larger than this is data, not instructions an author writes answers into.
MAX_TEXT_BYTES = 512 * 1024

Grams = frozenset[tuple[str, ...]]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(tokens: list[str], n: int) -> Grams:
    if len(tokens) < n:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


# Words too common to tell two texts apart: a pair of them ("of the") is no evidence of a copy.
STOPWORDS = frozenset("""a an and are as at be by do does for from has have how i in is it its me my of on or
our please so that the their then this to us was we what when where which who why will with you your""".split())


def content_ngrams(tokens: list[str], n: int) -> Grams:
    """Word n-grams with at least one word that is not a stopword."""
    return frozenset(g for g in ngrams(tokens, n) if any(w not in STOPWORDS for w in g))


def contains_run(part: list[str], whole: list[str]) -> bool:
    """Whether the words ``part`` appear in ``whole`` in a row."""
    if not part or len(part) > len(whole):
        return False
    return f" {' '.join(part)} " in f" {' '.join(whole)} "


def containment(part: Grams, whole: Grams) -> float:
    """The share of ``part``'s n-grams found in ``whole`` (1.0: every one is there)."""
    return len(part & whole) / len(part) if part else 0.0


def jaccard(a: Grams, b: Grams) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def squeeze(text: str) -> str:
    """Lower case, whitespace runs as one space: how a literal is looked for."""
    return " ".join(text.split()).lower()


@dataclass(frozen=True)
class TextFile:
    """A file the with-skill agent reads (SKILL.md or a bundled file), with its n-grams by line."""

    rel: str
    text: str

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def find(self, literal: str) -> int | None:
        """The line holding ``literal`` (case and whitespace runs ignored), or None."""
        needle = squeeze(literal)
        lines = self.text.splitlines()
        for number, line in enumerate(lines, 1):
            if needle in squeeze(line):
                return number
        # Across a line break: a literal wrapped in the file.
        flat = squeeze(self.text)
        at = flat.find(needle)
        if at < 0:
            return None
        return _line_by_words(lines, at)

    def best_line(self, grams: Grams, n: int) -> int:
        """The line sharing most of ``grams``; when no line alone shares any (a passage wrapped
        over lines), the first of the three lines that share most together."""
        lines = self.text.splitlines()
        alone = [len(ngrams(words(line), n) & grams) for line in lines]
        if alone and max(alone) > 0:
            return alone.index(max(alone)) + 1
        together = [len(ngrams(words(" ".join(lines[i:i + 3])), n) & grams) for i in range(len(lines))]
        return together.index(max(together)) + 1 if together else 1


def _line_by_words(lines: list[str], flat_offset: int) -> int:
    """The line that the ``flat_offset``-th character of the squeezed text falls on."""
    seen = 0
    for number, line in enumerate(lines, 1):
        if not line.split():
            continue  # squeezing drops a blank line altogether
        seen += len(squeeze(line)) + 1
        if seen > flat_offset:
            return number
    return len(lines)


def read_text(path: Path) -> str | None:
    """A file's text when it is a small UTF-8 file, else None (binaries and data are not read)."""
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
