"""The argparse types of the command line: numbers within bounds, and the names a plugin can
add (agents, model providers, reporters, sandbox backends). Those resolve through ``core.plugins`` only when such
a flag is given, and read the installed plugins only for a name no built-in has (or to list
them in the error)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any


def adapter_list(text: str) -> tuple[str, ...]:
    """``--adapter A,B,...``: known adapters (built-in or plugin), each once."""
    from ..core import plugins

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if not plugins.is_known("agents", name)]
    if not names or unknown or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"{text!r}: choose one or more of {', '.join(plugins.names('agents'))}, comma-separated, each once"
        )
    return names


def provider_name(text: str) -> str:
    """``--provider NAME``: a built-in model provider or a plugin's."""
    from ..core import plugins

    if not plugins.is_known("models", text):
        known = plugins.names("models")
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(map(repr, known))})")
    return text


def sandbox_name(text: str) -> str:
    """``--sandbox NAME``: a built-in sandbox backend or a plugin's."""
    from ..sandbox.backend import is_sandbox_name, sandbox_names

    if not is_sandbox_name(text):
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(map(repr, sandbox_names()))})")
    return text


def reporter_choice(text: str) -> tuple[str, Path | None]:
    """``--reporter NAME[=PATH]``: a built-in reporter or a plugin's, and where it writes."""
    from ..core import plugins

    name, sep, path = text.partition("=")
    if not plugins.is_known("reporters", name):
        raise argparse.ArgumentTypeError(f"unknown reporter {name!r} (choose from {', '.join(plugins.names('reporters'))})")
    if sep and not path:
        raise argparse.ArgumentTypeError(f"{text!r}: a path after '=' (--reporter {name}=PATH)")
    return name, Path(path) if sep else None


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        # nan compares false with everything, so a nan gate would silently never fail.
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def _bounded(parse: Callable[[str], Any], accept: Callable[[Any], bool], requirement: str, name: str):
    """An argparse type: ``parse`` the text, then insist on ``accept``."""

    def convert(text: str) -> Any:
        value = parse(text)
        if not accept(value):
            raise argparse.ArgumentTypeError(requirement)
        return value

    convert.__name__ = name  # argparse names the type in "invalid <name> value"
    return convert


positive_float = _bounded(finite_float, lambda v: v > 0, "must be greater than zero", "number")
lift_pts = _bounded(finite_float, lambda v: 0 < v <= 100,
                    "must be a number of points above 0 and at most 100", "number")
share = _bounded(finite_float, lambda v: 0 <= v <= 1, "must be a share between 0 and 1", "number")
unit_interval = _bounded(finite_float, lambda v: 0 <= v <= 1, "must be a number from 0 to 1", "number")
non_negative_float = _bounded(finite_float, lambda v: v >= 0, "must be zero or more", "number")
probability = _bounded(finite_float, lambda v: 0 < v < 1, "must be between 0 and 1", "number")
positive_int = _bounded(int, lambda v: v >= 1, "must be a positive integer", "integer")
non_negative_int = _bounded(int, lambda v: v >= 0, "must be zero or more", "integer")


def add_sampling_arguments(agent: argparse._ArgumentGroup) -> None:
    """How the agent's and the judge's models sample and how long they may answer."""
    agent.add_argument("--temperature", type=non_negative_float, metavar="T",
                       help="the agent model's sampling temperature (default: the model's own); "
                            "recorded in the run")
    agent.add_argument("--seed", type=non_negative_int, metavar="N",
                       help="the agent model's sampling seed, for servers that take one (OpenAI-"
                            "compatible); with --concurrency 1 a local server then answers a rerun "
                            "the same way; recorded in the run")
    agent.add_argument("--judge-temperature", type=non_negative_float, metavar="T",
                       help="the judge model's sampling temperature (default 0)")
    agent.add_argument("--judge-seed", type=non_negative_int, metavar="N",
                       help="the judge model's sampling seed (OpenAI-compatible servers)")
    agent.add_argument("--max-tokens", type=positive_int, metavar="N",
                       help="llm and agent adapters: the answer budget per model call (default "
                            "4096 for llm, 8192 for agent, cut to the server's context where it "
                            "says its size); an answer cut at it is recorded as truncated and fails")
