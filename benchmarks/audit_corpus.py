"""How much of a planted leak or contamination ``skillab audit`` finds, and how often it raises
an alarm on suites nobody planted anything in.

The corpus is every suite under ``tests/public_suites/`` that skillab loads (shaped like real
public suites; ``--with-examples`` adds ``examples/``). Each is first audited as it is: every
(case, check) pair flagged there is a false alarm, over all (case, check) pairs. Then, case by
case, one defect at a time is planted in a fresh copy, in one of several shapes drawn with a
seeded generator, and the audit must report that check on that case (a finding the clean
suite did not have):

- answer leak: one thing the case grades by (a validator literal, an expectation's quote, an
  expected value or a judged statement) written into SKILL.md or a new bundled file, verbatim,
  in another case, marked up as code or bold, or wrapped over two lines;
- example contamination: the case's prompt added to SKILL.md as an example, verbatim, with a
  word dropped, with one word changed, or wrapped at 60 columns under "User:";
- prompt contamination: the prompt names the skill ("Use the NAME skill", "/NAME", "the NAME
  skill" with the name in words, "With the NAME skill,");
- near duplicate: a second case with the prompt copied, a word changed, a word dropped, or a
  sentence added, on the same workspace.

Leaks and examples are written to the copied skill's files on disk (loading included); prompts
and duplicates are planted in the loaded suite. A case with nothing to plant (no answer a
grader checks by text, a prompt under six words for an example) still counts: its trial is a
miss when the audit cannot find it. Printed: detected / planted per check and overall, false
alarms / pairs, and each false alarm.

Usage: ``python benchmarks/audit_corpus.py [--seed S] [--reps N] [--with-examples]``; standard
library only, a few seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
import shutil
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

from skillab.errors import SkillabError
from skillab.skill import load_skill
from skillab.suite import load_suite
from skillab.suite.model import Case, Suite
from skillab.suite_audit import audit_suite, skill_text_files
from skillab.suite_audit.answers import case_answers
from skillab.suite_audit.text import squeeze

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("answer_leak", "example_contamination", "prompt_contamination", "near_duplicate")
LEAK_SHAPES = ("verbatim", "case", "markup", "wrapped", "bundled")
EXAMPLE_SHAPES = ("verbatim", "dropped", "changed", "wrapped")
PROMPT_SHAPES = ("use", "slash", "words", "with")
DUPLICATE_SHAPES = ("copy", "changed", "dropped", "added")
VERBOSE = False


def corpus(with_examples: bool) -> list[Path]:
    roots = [ROOT / "tests/public_suites"] + ([ROOT / "examples"] if with_examples else [])
    found = []
    for root in roots:
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            try:
                load_suite(folder)
            except SkillabError:
                continue  # a format skillab refuses (in one line) has no suite to audit
            found.append(folder)
    return found


def loaded(folder: Path) -> tuple[Suite, object]:
    suite = load_suite(folder)
    return suite, load_skill(suite.skill_dir or suite.path.parent)


Finding = tuple[str, str, str, str, str]  # kind, case, where, detail, severity


def flagged(suite: Suite, skill: object) -> set[Finding]:
    return {(f.kind, f.case, f.located(), f.detail, f.severity)
            for f in audit_suite(suite, skill).findings}  # type: ignore[arg-type]


def _edit_words(text: str, rng: random.Random, how: str) -> str:
    tokens = text.split()
    if len(tokens) < 4:
        return text
    at = rng.randrange(1, len(tokens) - 1)
    if how == "dropped":
        del tokens[at]
    elif how == "changed":
        digits = [i for i, t in enumerate(tokens) if re.search(r"\d", t)]
        if digits:
            at = rng.choice(digits)
            tokens[at] = re.sub(r"\d", lambda m: str((int(m.group(0)) + 1) % 10), tokens[at], count=1)
        else:
            tokens[at] = "another"
    return " ".join(tokens)


def plantable(case: Case, skill: object) -> list[str]:
    """What a case grades by that can be planted: not a regex (no text to write), not an absence
    check, not what the prompt already says (both arms are given it), not already in the skill."""
    files = skill_text_files(skill)  # type: ignore[arg-type]
    prompt = squeeze(case.prompt)
    return [a.text.strip() for a in case_answers(case)
            if not a.negated and a.kind != "regex" and squeeze(a.text) not in prompt
            and not any(f.find(a.text) for f in files)]


def plant_leak(copy: Path, skill_root: Path, answers: list[str], rng: random.Random) -> str | None:
    if not answers:
        return None
    answer = rng.choice(answers)
    shape = rng.choice(LEAK_SHAPES)
    text = {"verbatim": answer, "case": answer.swapcase() if rng.random() < 0.5 else answer.lower(),
            "markup": f"`{answer}`" if rng.random() < 0.5 else f"**{answer}**",
            "wrapped": "\n".join(textwrap.wrap(answer, max(20, len(answer) // 2))),
            "bundled": answer}[shape]
    line = f"\nWhen asked, answer with: {text}\n"
    target = skill_root / ("references/notes.md" if shape == "bundled" else "SKILL.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as handle:
        handle.write(line)
    return f"{shape}: {answer[:70]!r}"


def plant_example(skill_root: Path, case: Case, rng: random.Random) -> bool:
    shape = rng.choice(EXAMPLE_SHAPES)
    prompt = " ".join(case.prompt.split())
    text = {"verbatim": prompt, "dropped": _edit_words(prompt, rng, "dropped"),
            "changed": _edit_words(prompt, rng, "changed"),
            "wrapped": "User: " + "\n".join(textwrap.wrap(prompt, 60))}[shape]
    with (skill_root / "SKILL.md").open("a", encoding="utf-8") as handle:
        handle.write(f"\n## Example\n\n{text}\n")
    return True


def plant_prompt(suite: Suite, case: Case, name: str, rng: random.Random) -> Suite:
    shape = rng.choice(PROMPT_SHAPES)
    spaced = re.sub(r"[-_]+", " ", name)
    prompt = {"use": f"{case.prompt}\n\nUse the {name} skill.", "slash": f"/{name} {case.prompt}",
              "words": f"{case.prompt} Apply the {spaced} skill here.",
              "with": f"With the {name} skill, {case.prompt}"}[shape]
    cases = tuple(dataclasses.replace(c, prompt=prompt) if c is case else c for c in suite.cases)
    return dataclasses.replace(suite, cases=cases)


def plant_duplicate(suite: Suite, case: Case, rng: random.Random) -> tuple[Suite, str]:
    shape = rng.choice(DUPLICATE_SHAPES)
    prompt = {"copy": case.prompt, "changed": _edit_words(case.prompt, rng, "changed"),
              "dropped": _edit_words(case.prompt, rng, "dropped"), "added": case.prompt + " Be brief."}[shape]
    twin = dataclasses.replace(case, name=case.name + "-twin", prompt=prompt)
    return dataclasses.replace(suite, cases=(*suite.cases, twin)), twin.name


def trial(folder: Path, index: int, kind: str, rng: random.Random, work: Path) -> str | None:
    """Plant ``kind`` in case ``index`` of a fresh copy of ``folder``; the severity of the new
    finding of that check on that case (the highest), or None when the audit missed it."""
    copy = work / f"t{rng.randrange(10**9)}"
    shutil.copytree(folder, copy, symlinks=True)
    try:
        suite, skill = loaded(copy)
        case = suite.cases[index]
        before = flagged(suite, skill)
        if kind == "prompt_contamination" and any(f[0] == kind and f[1] == case.name for f in before):
            return "n/a"  # the prompt names the skill already: one more mention is the same finding
        target, what = case.name, ""
        if kind == "answer_leak":
            what = plant_leak(copy, skill.root, plantable(case, skill), rng) or ""  # type: ignore[attr-defined]
            if not what:
                return "n/a"
            suite, skill = loaded(copy)
        elif kind == "example_contamination":
            plant_example(skill.root, case, rng)  # type: ignore[attr-defined]
            suite, skill = loaded(copy)
        elif kind == "prompt_contamination":
            suite = plant_prompt(suite, case, skill.name, rng)  # type: ignore[attr-defined]
        else:
            suite, target = plant_duplicate(suite, case, rng)
        new = [f for f in flagged(suite, skill) - before if f[0] == kind and f[1] == target]
        if not new:
            if VERBOSE:
                print(f"    miss: {folder.name} {kind} {target} {what}")
            return None
        return min((f[4] for f in new), key=("high", "medium", "low").index)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reps", type=int, default=3, help="plants per case and check (default 3)")
    parser.add_argument("--with-examples", action="store_true", help="add examples/ to the corpus")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each planted defect it missed")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    rng = random.Random(args.seed)
    folders = corpus(args.with_examples)

    pairs, alarms = 0, {}
    for folder in folders:
        suite, skill = loaded(folder)
        pairs += len(suite.cases) * len(KINDS)
        for kind, case, _where, _, level in sorted(flagged(suite, skill)):
            if kind in KINDS:
                key = (folder.name, kind, case)
                alarms[key] = min(alarms.get(key, "low"), level, key=("high", "medium", "low").index)

    planted: Counter[str] = Counter()
    found: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    unplantable: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="audit-corpus-") as tmp:
        for folder in folders:
            suite, _ = loaded(folder)
            for index in range(len(suite.cases)):
                for kind in KINDS:
                    for _ in range(args.reps):
                        level = trial(folder, index, kind, rng, Path(tmp))
                        if level == "n/a":
                            unplantable[kind] += 1
                            continue
                        planted[kind] += 1
                        found[kind] += level is not None
                        counted[kind] += level in ("high", "medium")

    cases = sum(len(loaded(f)[0].cases) for f in folders)
    print(f"audit corpus: {len(folders)} suites, {cases} cases, seed {args.seed}, {args.reps} plants per case and check")
    print(f"  {'check':<22} {'detected, any severity':>26}   {'detected, high or medium':>26}")
    for kind in (*KINDS, "all"):
        n = sum(planted.values()) if kind == "all" else planted[kind]
        hit = sum(found.values()) if kind == "all" else found[kind]
        top = sum(counted.values()) if kind == "all" else counted[kind]
        print(f"  {kind:<22} {hit:9d} / {n:4d} ({hit / n:6.1%})   {top:9d} / {n:4d} ({top / n:6.1%})")
    if unplantable:
        print(f"  not planted (nothing to plant: the case grades by nothing writable that is not already in the "
              f"prompt or the skill, or its prompt names the skill already): "
              f"{', '.join(f'{k} {n}' for k, n in unplantable.items())}")
    above = sum(level != "low" for level in alarms.values())
    print(f"  false alarms on the unplanted suites, per (case, check) pair: any severity {len(alarms)} / {pairs} "
          f"({len(alarms) / pairs:.1%}); high or medium {above} / {pairs} ({above / pairs:.1%})")
    for (name, kind, case), level in sorted(alarms.items()):
        print(f"    {name}: {kind} ({level}) on case {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
