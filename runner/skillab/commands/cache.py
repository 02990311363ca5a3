"""``skillab cache list`` and ``skillab cache clear [--skill NAME] [--expired]``: the
without-skill baseline cache, seen and emptied without knowing its layout."""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..core.options import options_for
from ..core.wording import counted
from ..errors import EXIT_OK, UsageError

UNKNOWN = "(unknown: written before entries named their skill)"


@dataclass(frozen=True)
class Entry:
    path: Path
    skill: str
    case: str | None
    model: str | None
    created_at: float | None
    size: int

    def expired(self, ttl_days: float, now: float) -> bool:
        return self.created_at is None or now - self.created_at > ttl_days * 86400


class SkillRow(TypedDict):
    """One skill's entries: a line of ``cache list``, an object of its ``--json``."""

    skill: str
    entries: int
    cases: int
    models: list[str]
    expired: int
    bytes: int
    newest: float | None


def cache_directory(args: argparse.Namespace) -> Path:
    from ..engine.cache import default_cache_dir

    directory = args.cache_dir or default_cache_dir()
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--cache-dir {directory}: is a file, not a cache directory")
    return directory


def entries(directory: Path) -> list[Entry]:
    """Every entry file under ``directory`` (``<scope>/<key>.json``), unreadable ones included
    (as skill ``UNKNOWN``): clearing must reach them too."""
    found = []
    for path in sorted(directory.glob("*/*.json")) if directory.is_dir() else []:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        about = data.get("about") if isinstance(data, dict) else None
        about = about if isinstance(about, dict) else {}
        created = data.get("created_at") if isinstance(data, dict) else None
        found.append(Entry(path, str(about.get("skill") or UNKNOWN), about.get("case"),
                           about.get("model") or about.get("adapter"),
                           float(created) if isinstance(created, (int, float)) and not isinstance(created, bool)
                           else None, path.stat().st_size))
    return found


def cmd_cache(args: argparse.Namespace) -> int:
    directory = cache_directory(args)
    if args.cache_command == "list":
        return _list(args, directory)
    return _clear(args, directory)


def _list(args: argparse.Namespace, directory: Path) -> int:
    now, ttl = time.time(), args.cache_ttl_days
    by_skill: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries(directory):
        by_skill[entry.skill].append(entry)
    rows: list[SkillRow]
    rows = [{"skill": skill, "entries": len(items), "cases": len({e.case for e in items if e.case}),
             "models": sorted({e.model for e in items if e.model}),
             "expired": sum(e.expired(ttl, now) for e in items), "bytes": sum(e.size for e in items),
             "newest": max((e.created_at for e in items if e.created_at), default=None)}
            for skill, items in sorted(by_skill.items())]
    if args.json:
        print(json.dumps({"format": "skillab.cache-list/1", "directory": str(directory), "ttl_days": ttl,
                          "skills": rows}, indent=2))
        return EXIT_OK
    total = sum(r["entries"] for r in rows)
    print(f"baseline cache {directory}: {counted(total, 'entry', 'entries')}"
          + (f", {_size(sum(r['bytes'] for r in rows))}" if rows else ""))
    for row in rows:
        models = ", ".join(row["models"]) or "-"
        age = "-" if row["newest"] is None else _age(now - row["newest"])
        expired = f", {row['expired']} expired" if row["expired"] else ""
        print(f"  {row['skill']}: {counted(row['entries'], 'entry', 'entries')} "
              f"({counted(row['cases'], 'case')}{expired}) · model {models} · newest {age} ago · {_size(row['bytes'])}")
    if rows:
        print("clear with: skillab cache clear [--skill NAME] [--expired]")
    return EXIT_OK


def _clear(args: argparse.Namespace, directory: Path) -> int:
    now, ttl = time.time(), args.cache_ttl_days
    found = entries(directory)
    skills = set(args.skill)
    unknown = skills - {e.skill for e in found}
    chosen = [e for e in found if (not skills or e.skill in skills) and (not args.expired or e.expired(ttl, now))]
    for entry in chosen:
        entry.path.unlink(missing_ok=True)
    for scope in {e.path.parent for e in chosen}:
        if scope.is_dir() and not any(scope.iterdir()):
            shutil.rmtree(scope, ignore_errors=True)
    what = " and ".join(filter(None, [f"skill {', '.join(sorted(skills))}" if skills else "",
                                      "expired" if args.expired else ""]))
    print(f"removed {counted(len(chosen), 'entry', 'entries')}" + (f" ({what})" if what else "")
          + f" from {directory}")
    if unknown:
        print(f"no entry names the skill {', '.join(sorted(unknown))}"
              + (f"; {sum(e.skill == UNKNOWN for e in found)} entries name none (skillab cache clear "
                 "removes them)" if any(e.skill == UNKNOWN for e in found) else ""))
    return EXIT_OK


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(0, int(seconds // 60))}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def add_cache_arguments(parser: Any, formatter: Any, *, with_config: bool = False) -> None:
    """``cache list`` and ``cache clear`` under ``parser`` (the ``cache`` command); with
    ``with_config``, the config file's ``cache-dir`` and ``cache-ttl-days`` are their defaults,
    as they are ``run``'s (and under the same trust rule)."""
    from .config_file import apply_config, find_config

    found = find_config() if with_config else None
    sub = parser.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    for name, summary in (("list", "each skill's cached baselines: entries, cases, models, age, size"),
                          ("clear", "remove cached baselines: all, one skill's (--skill), or the expired")):
        p = sub.add_parser(name, help=summary, description=summary, formatter_class=formatter)
        for option in options_for("cache"):
            p.add_argument(*option.flags, **option.argparse_kwargs())
        if name == "list":
            p.add_argument("--json", action="store_true", help="print the listing as JSON")
        else:
            p.add_argument("--skill", action="append", default=[], metavar="NAME",
                           help="only this skill's entries (repeatable)")
            p.add_argument("--expired", action="store_true", help="only entries older than --cache-ttl-days")
        apply_config(p, found)
