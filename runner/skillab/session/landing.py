"""Settings built from the options table: each row's value put where its ``lands`` says.

The one function both front ends build a run's settings and gates with: the CLI hands it every
parsed flag, the Action its parsed inputs, each by the row's name. A row added to
``core.options`` whose ``lands`` names a field (``engine.runs``, ``agent.model.seed``,
``gates.max_leaks``) reaches that field with no code here or in either front end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..core.option_row import KEEP, Option
from ..core.options import OPTIONS
from ..core.settings import RunConfig
from .gates import Gates


@dataclass(frozen=True)
class Landed:
    """A run's settings (the agent's role filled per agent by ``for_agent``) and its gates."""

    config: RunConfig = RunConfig()
    gates: Gates = Gates()

    def for_agent(self, adapter: str, model: str | None, **rest: Any) -> RunConfig:
        """The settings for one agent of the run; ``rest`` sets ``RunConfig``'s other fields
        (credentials, config_source), which no row gives."""
        agent = self.config.agent
        agent = replace(agent, adapter=adapter, model=replace(agent.model, name=model))
        return replace(self.config, agent=agent, **rest)


def land(values: Mapping[str, Any], options: Iterable[Option] = OPTIONS) -> Landed:
    """Every row named in ``values`` put in its fields, in table order (a later row settles on
    what an earlier one landed: ``--no-history`` after ``--history``); fields no given row
    fills keep their defaults."""
    fields: dict[str, tuple[Option, Any]] = {}
    for option in options:
        if option.name not in values:
            continue
        for target in option.targets:
            landed = fields[target][1] if target in fields else KEEP
            fields[target] = (option, option.landed(values[option.name], landed))
    result = Landed()
    for target, (option, value) in fields.items():
        if value is not KEEP:
            path = target.split(".")
            path = path if path[0] == "gates" else ["config", *path]
            result = _put(result, path, value, option)
    return result


def _put(node: Any, path: list[str], value: Any, option: Option) -> Any:
    head, rest = path[0], path[1:]
    names = {f.name for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else set()
    if head not in names:
        raise LookupError(f"core.options: {option.name} lands in {option.lands!r}, which has no field {head!r}")
    return replace(node, **{head: _put(getattr(node, head), rest, value, option) if rest else value})
