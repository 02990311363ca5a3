"""The value parsers of the options table (``core.options``), shared by the flags, the config
file and the Action's inputs: numbers within bounds, and the names a plugin can add (agents,
model providers, reporters, sandbox backends). Those resolve through ``core.plugins`` only when
such a value is given, and read the installed plugins only for a name no built-in has (or to
list them in the error). Each raises ``argparse.ArgumentTypeError`` with a sentence a user can
act on; the caller says where the value came from."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


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


# The built-in sandbox backends (``sandbox.backend``); ``image`` is built per suite.
SANDBOX_CHOICES = ("bwrap", "image", "none")


def sandbox_name(text: str) -> str:
    """``--sandbox NAME``: a built-in sandbox backend or a plugin's."""
    from . import plugins

    if text not in SANDBOX_CHOICES and not plugins.is_known("sandboxes", text):
        known = (*SANDBOX_CHOICES, *plugins.plugins("sandboxes"))
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(map(repr, known))})")
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


def budget_url(text: str) -> str:
    """The address of ``skillab budget serve``: http, a host, a port, and no credentials (the run
    token goes in SKILLAB_BUDGET_TOKEN, never in a URL that is printed and recorded)."""
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or "@" in parts.netloc or port is None:
        # A URL with credentials in it is not echoed: it is printed to CI logs.
        shown = "a URL with credentials in it" if "@" in parts.netloc else repr(text)
        raise argparse.ArgumentTypeError(
            f"expected http://HOST:PORT of `skillab budget serve`, got {shown} (the run token goes in "
            "SKILLAB_BUDGET_TOKEN, never in the URL)")
    return text.rstrip("/")


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        # nan compares false with everything, so a nan gate would silently never fail.
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _bounded(parse: Callable[[str], Any], accept: Callable[[Any], bool], requirement: str,
             name: str) -> Callable[[str], Any]:
    """An argparse type: ``parse`` the text, then insist on ``accept``."""

    def convert(text: str) -> Any:
        value = parse(text)
        if not accept(value):
            raise argparse.ArgumentTypeError(requirement)
        return value

    convert.__name__ = name  # argparse names the type in "invalid <name> value"
    return convert


positive_float = _bounded(finite_float, lambda v: v > 0, "must be greater than zero", "number")
lift_pts = _bounded(finite_float, lambda v: 0.1 <= v <= 100,
                    "must be a number of points from 0.1 (what a report prints) to 100", "number")
share = _bounded(finite_float, lambda v: 0 <= v <= 1, "must be a share between 0 and 1", "number")
unit_interval = _bounded(finite_float, lambda v: 0 <= v <= 1, "must be a number from 0 to 1", "number")
non_negative_float = _bounded(finite_float, lambda v: v >= 0, "must be zero or more", "number")
probability = _bounded(finite_float, lambda v: 0 < v < 1, "must be between 0 and 1", "number")
positive_int = _bounded(integer, lambda v: v >= 1, "must be a positive integer", "integer")
non_negative_int = _bounded(integer, lambda v: v >= 0, "must be zero or more", "integer")
