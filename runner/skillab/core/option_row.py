"""One row of the options table (``core.options``): what a setting is, where it lands, how it is
parsed and offered (flag, environment, config file, Action input), and which commands take it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .config_trust import TrustRule

Command = Literal["run", "ablate", "route", "merge", "import", "report", "regrade", "audit", "validate", "export",
                  "cache"]
Kind = Literal["value", "switch", "append"]
RUN: frozenset[Command] = frozenset({"run"})
BOTH: frozenset[Command] = frozenset({"run", "ablate"})
# ``skillab route`` poses queries to the same agents: it takes the rows that choose and tune them.
ROUTED: frozenset[Command] = frozenset({"run", "ablate", "route"})
# Commands that build a results document without running (``merge``, ``import``) write and gate
# it as ``run`` does; ``report`` and ``regrade`` write its reports.
DOCUMENT: frozenset[Command] = frozenset({"run", "merge", "import"})
REPORTS: frozenset[Command] = frozenset({"run", "merge", "import", "report", "regrade"})
# The parsed value, and what earlier rows landed in the same field (``KEEP``: nothing) -> the
# field's value; ``KEEP`` leaves the field as it was.
Settle = Callable[[Any, Any], Any]
# The roots a row may land under: ``RunConfig``'s components and the run's ``Gates``.
SETTINGS_ROOTS = ("engine", "agent", "judge", "tuning", "gates")


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()


@dataclass(frozen=True)
class ActionInput:
    """The Action input of the same name: its ``action.yml`` default and description."""

    description: str
    default: str = ""
    # A blank value the workflow sets on purpose means "off" instead of "the default".
    keep_blank: bool = False


@dataclass(frozen=True)
class Option:
    """One setting. ``lands`` says what reads it: ``engine.runs`` is ``RunConfig.engine.runs``,
    ``gates.max_leaks`` is the run's ``Gates.max_leaks`` (several, comma-separated, fill each;
    ``session.landing`` puts them there); ``report``, ``selection`` and ``invocation`` name the
    code that reads the parsed flag itself (the report writers, case selection, this invocation)."""

    name: str
    lands: str
    help: str
    group: str
    kind: Kind = "value"
    parse: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    metavar: str | None = None
    env: str | None = None
    short: str | None = None
    # False: only the short flag (``-k``); the name is then the config key and the attribute.
    long: bool = True
    dest: str | None = None
    config: bool = False
    trust: TrustRule | None = None
    input: ActionInput | None = None
    commands: frozenset[Command] = BOTH
    # How the parsed value becomes the field's (None: as parsed); see ``Settle``.
    settle: Settle | None = None

    @property
    def targets(self) -> tuple[str, ...]:
        """The settings fields this row fills (``engine.runs``, ``gates.max_leaks``); none when a
        reader named in ``lands`` takes the parsed flag itself."""
        named = tuple(part.strip() for part in self.lands.split(","))
        return tuple(t for t in named if t.split(".")[0] in SETTINGS_ROOTS)

    def landed(self, value: Any, landed: Any = KEEP) -> Any:
        """``value`` as its field holds it, given what earlier rows ``landed`` there."""
        return self.settle(value, landed) if self.settle is not None else value

    @property
    def flag(self) -> str:
        return f"--{self.name}" if self.long else str(self.short)

    @property
    def flags(self) -> tuple[str, ...]:
        """What argparse is given: the short flag, then the long one."""
        if not self.long:
            return (str(self.short),)
        return (self.short, self.flag) if self.short else (self.flag,)

    @property
    def attr(self) -> str:
        """The parsed flag's attribute on the argparse namespace."""
        return self.dest or self.name.replace("-", "_")

    def initial(self) -> Any:
        """The default before any flag or file: the environment's value, else the row's."""
        if self.env and os.environ.get(self.env):
            return os.environ[self.env]
        return list(self.default or []) if self.kind == "append" else self.default

    def argparse_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"help": self.help, "dest": self.attr}
        if self.kind == "switch":
            kwargs["action"] = "store_true"
            return kwargs
        if self.kind == "append":
            kwargs["action"] = "append"
        kwargs["default"] = self.initial()
        if self.parse is not None:
            kwargs["type"] = self.parse
        if self.choices is not None:
            kwargs["choices"] = self.choices
        if self.metavar is not None:
            kwargs["metavar"] = self.metavar
        return kwargs

    def refusal(self, value: Any, root: Path) -> str | None:
        """Why a config file at ``root`` may not set this to ``value`` unasked; None if it may."""
        return self.trust(value, root) if self.trust is not None else None
