"""Defaults for ``skillab run`` from a file: ``[tool.skillab]`` in ``pyproject.toml``, or the
top level of ``skillab.toml`` (it wins when a directory has both), found in the current
directory or the nearest one above it, as pytest finds its ini file.

Each key is a run option's long flag without its dashes (``judge-model = "gpt-4.1"``;
``judge_model`` works too). Precedence: a flag on the command line, then the environment
(``SKILLAB_MODEL`` and friends), then this file, then skillab's own default. Values are checked
as the flag's would be; a relative path is taken from the file's directory. A bad file stops the
run before anything starts (exit 2), naming the file and the key.

The file is the repository's, and in a checked-out pull request its author's: it may not widen
what the run reaches (the trust rules of ``core.options``). Such a key is refused unless the command line gives the
flag itself or ``--trust-config``. Every report names the file and the keys it set.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.options import BY_NAME, CONFIG_KEYS
from ..errors import UsageError

FILE_NAMES = ("skillab.toml", "pyproject.toml")
# The run options a file may set (``core.options``, rows with ``config=True``): what a team shares
# (models, sandbox, concurrency, cache, gates, reports), not what names one invocation (paths,
# --resume, --dry-run, -k, --failed).
KEYS = CONFIG_KEYS


@dataclass(frozen=True)
class FromFile:
    """A parser default the config file gave, until ``finish`` admits it. Shown in ``--help`` as
    the value itself."""

    key: str
    value: Any

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    table: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.path} [tool.skillab]" if self.path.name == "pyproject.toml" else str(self.path)


def find_config(start: Path | None = None) -> ConfigFile | None:
    """The nearest config file at or above ``start`` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in FILE_NAMES:
            path = directory / name
            if not path.is_file():
                continue
            import tomllib  # only once there is a file to read

            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise UsageError(f"{path}: not a readable TOML file ({exc})") from None
            if name == "skillab.toml" and set(data) != {"tool"}:
                return ConfigFile(path, data)
            # skillab.toml may also hold its keys under the [tool.skillab] header pyproject uses.
            table = (data.get("tool") or {}).get("skillab")
            if table is not None:
                if not isinstance(table, dict):
                    raise UsageError(f"{path}: [tool.skillab] must be a table")
                return ConfigFile(path, table)
    return None


def apply_config(parser: argparse.ArgumentParser, found: ConfigFile | None) -> None:
    """Make ``found``'s values the run parser's defaults: a flag given still wins."""
    if found is None:
        return
    actions = {a.option_strings[-1].lstrip("-"): a for a in parser._actions
               if a.option_strings and a.option_strings[-1].startswith("--")}
    defaults: dict[str, Any] = {}
    appends: dict[str, FromFile] = {}
    for raw_key, value in found.table.items():
        key = str(raw_key).replace("_", "-")
        if key in KEYS and key not in actions:
            continue  # a setting of another command (run's gates, for ablate)
        if key not in KEYS and key in BY_NAME:
            flag = f"--{key}"
            raise UsageError(f"{found.where}: {key!r} cannot be set from a config file: give {flag} "
                             f"on the command line" + (f" or {BY_NAME[key].env}" if BY_NAME[key].env else ""))
        if key not in KEYS:
            import difflib

            close = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; keys: {', '.join(KEYS)}"
            raise UsageError(f"{found.where}: unknown key {raw_key!r}{hint}")
        env = BY_NAME[key].env
        if env and os.environ.get(env):
            continue  # the environment is closer to this invocation than a shared file
        action = actions[key]
        if isinstance(action, argparse._AppendAction):
            # argparse appends a flag's values to a list default; the flag must replace it.
            appends[action.dest] = FromFile(key, _value(found, key, action, value))
        else:
            # Marked as the file's: a flag given replaces it, so what is still marked after
            # parsing is what the file set (``finish``).
            defaults[action.dest] = FromFile(key, _value(found, key, action, value))
    parser.set_defaults(**defaults, config_appends=appends, config_file=found)


def finish(args: argparse.Namespace) -> None:
    """After parsing: the file's values that no flag replaced take effect, once each passes the
    trust rule (else exit 2, naming the file, the key and why); ``args.config_source`` records
    them for the reports."""
    found = getattr(args, "config_file", None)
    if not isinstance(found, ConfigFile):
        return
    consent = bool(getattr(args, "trust_config", False))
    used: list[str] = []
    trusted: list[str] = []
    for dest, marked in (getattr(args, "config_appends", None) or {}).items():
        if not getattr(args, dest, None):
            setattr(args, dest, marked.value)
            used.append(marked.key)
    for dest, marked in list(vars(args).items()):
        if not isinstance(marked, FromFile):
            continue
        why = BY_NAME[marked.key].refusal(marked.value, found.path.parent)
        if why is not None and not consent:
            consent_flag = ", or --trust-config to accept the file's value" if hasattr(args, "trust_config") else ""
            raise UsageError(f"{found.where}: {marked.key}: {why}. A repository's config file may not "
                             f"widen what the run reaches: give --{marked.key} on the command line"
                             f"{consent_flag}")
        setattr(args, dest, marked.value)
        used.append(marked.key)
        if why is not None:
            trusted.append(marked.key)
    # Relative to where the run started, as the reports show paths (no runner's home in a comment).
    shown = found.where.replace(str(found.path), os.path.relpath(found.path), 1)
    from ..core.run_info import ConfigSource  # the results document's types: not for --help

    args.config_source = ConfigSource(shown, tuple(sorted(used)), tuple(sorted(trusted))) if used else None


def _value(found: ConfigFile, key: str, action: argparse.Action, value: Any) -> Any:
    where = f"{found.where}: {key}"
    if action.nargs == 0:  # a switch: --no-cache, --judge-same-family
        if not isinstance(value, bool):
            raise UsageError(f"{where} must be true or false, got {value!r}")
        return value if action.const is not False else not value
    if isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        return [_one(found, key, action, item) for item in items]
    return _one(found, key, action, value)


def _one(found: ConfigFile, key: str, action: argparse.Action, value: Any) -> Any:
    where = f"{found.where}: {key}"
    if isinstance(value, (dict, list)) or isinstance(value, bool):
        raise UsageError(f"{where} must be a single value, got {value!r}")
    text = str(value)
    try:
        converted = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    if action.choices is not None and converted not in action.choices:
        raise UsageError(f"{where}: {text!r} is not one of {', '.join(map(str, action.choices))}")
    if isinstance(converted, Path) and not converted.is_absolute():
        converted = found.path.parent / converted
    return converted


def help_text() -> str:
    """What ``skillab run --help`` says of the file, with the one it would read here."""
    try:
        found = find_config()
    except UsageError as exc:
        found_line = f"  here: {exc}"
    else:
        found_line = f"  here: {found.where}" if found else "  here: none found"
    keys, line = [], "  keys:"
    for key in KEYS:
        if len(line) + len(key) + 2 > 96:
            keys.append(line)
            line = "       "
        line += f" {key},"
    keys.append(line.rstrip(","))
    return "\n".join([
        "config file:",
        "  [tool.skillab] in pyproject.toml, or skillab.toml, in this directory or the nearest above;",
        "  each key is a flag's long name (judge-model = \"gpt-4.1\", no-cache = true,",
        "  fail-on-verdict = [\"fail\"]). A flag wins over the environment, which wins over the file.",
        found_line, *keys])
