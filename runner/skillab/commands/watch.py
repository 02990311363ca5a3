"""``skillab run --watch``: run, then run again whenever a watched file changes, as
``promptfoo eval --watch`` and ``ptw`` do, until Ctrl-C (or ``--watch-max-runs``).

Watched: every file under each suite's skill directory (``SKILL.md``, bundled files, the suite,
the mock script) and the suite file itself, except what the run writes there. The baseline cache
stays on, so an edit to ``SKILL.md`` costs only the with-skill arms: the without-skill arms come
from the cache the first iteration filled. Polling keeps it dependency-free and works on every
filesystem; a change is acted on once the files have been still for ``SETTLE_S``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import EXIT_INTERRUPTED, SkillabError, UsageError
from .console import say

POLL_S = 0.3
SETTLE_S = 0.3
# Directories a skill folder may hold that are no one's edit.
IGNORED_DIRS = frozenset({".git", "__pycache__", ".skillab", "node_modules", ".venv"})

Snapshot = dict[str, tuple[int, int]]


def watch(args: argparse.Namespace, run_once: Callable[[argparse.Namespace], int],
          *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Run ``run_once`` now and after every change; the last run's exit code when
    ``--watch-max-runs`` is reached, 130 on Ctrl-C."""
    if args.no_cache:
        raise UsageError("--watch reruns only the with-skill arms, from the cached baseline: "
                         "drop --no-cache")
    if args.dry_run or args.resume is not None:
        raise UsageError("--watch runs the suite each time it changes: drop --dry-run/--resume")
    limit = args.watch_max_runs
    iteration, code = 0, 0
    try:
        while True:
            iteration += 1
            code = _one(args, run_once)
            if code == EXIT_INTERRUPTED or (limit is not None and iteration >= limit):
                return code
            roots = watched_roots(args)
            before = snapshot(roots, _outputs(args))
            say(f"watching {len(before)} files under {', '.join(map(str, roots))} (Ctrl-C stops)")
            changed = wait_for_change(roots, _outputs(args), before, sleep)
            say(f"{', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''} changed: run {iteration + 1}")
    except KeyboardInterrupt:
        say("stopped watching")
        return EXIT_INTERRUPTED


def _one(args: argparse.Namespace, run_once: Callable[[argparse.Namespace], int]) -> int:
    """One run; a mistake mid-edit (bad YAML, a missing file) is said and watched past."""
    try:
        return run_once(args)
    except SkillabError as exc:
        say(str(exc))
        return exc.exit_code


def watched_roots(args: argparse.Namespace) -> list[Path]:
    """Each target's skill directory (the suite file's folder for a file target)."""
    from .targets import suite_targets

    try:
        targets = suite_targets(args.paths, args.suite_format)
    except SkillabError:
        targets = list(args.paths)
    roots = {(Path(t) if Path(t).is_dir() else Path(t).parent).resolve() for t in targets}
    return sorted(roots)


def _outputs(args: argparse.Namespace) -> set[str]:
    """What the run writes: never a reason to run again."""
    paths = [args.output, args.junit, args.markdown, args.html, getattr(args, "trajectories", None),
             getattr(args, "cache_dir", None), getattr(args, "history", None)]
    out = {str(Path(p).resolve()) for p in paths if p is not None}
    if args.output is not None:
        stem = Path(args.output).resolve()
        out |= {str(stem.with_name(f"{stem.stem}.checkpoint.jsonl")), str(stem.with_name(f"{stem.stem}.arms.jsonl"))}
    return out


def snapshot(roots: list[Path], skip: set[str]) -> Snapshot:
    """Size and modification time of every watched file. The walk keeps its own stack: a tree
    nested deeper than Python's recursion limit (which the run refuses, and says why) is watched
    like any other, so fixing it is seen. Links are not followed."""
    seen: Snapshot = {}
    pending = [str(root) for root in roots]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.path in skip:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in IGNORED_DIRS:
                        pending.append(entry.path)
                    continue
                info = os.stat(entry.path)
            except OSError:
                continue
            seen[entry.path] = (info.st_size, info.st_mtime_ns)
    return seen


def wait_for_change(roots: list[Path], skip: set[str], before: Snapshot,
                    sleep: Callable[[float], None]) -> list[str]:
    """Block until a watched file is added, changed or removed and the files are still again;
    the changed paths, relative to the current directory where they can be."""
    while True:
        sleep(POLL_S)
        now = snapshot(roots, skip)
        if now == before:
            continue
        settled = now
        while True:  # an editor's save is several writes: act on the last one
            sleep(SETTLE_S)
            latest = snapshot(roots, skip)
            if latest == settled:
                break
            settled = latest
        changed = sorted(p for p in set(before) | set(settled) if before.get(p) != settled.get(p))
        return [_shown(p) for p in changed]


def _shown(path: str) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
