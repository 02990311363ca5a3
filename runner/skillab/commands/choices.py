"""The argparse types of the names a plugin can add (agents, model providers, reporters): they
resolve through ``core.plugins`` only when such a flag is given, and read the installed
plugins only for a name no built-in has (or to list them in the error)."""

from __future__ import annotations

import argparse
from pathlib import Path


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


def reporter_choice(text: str) -> tuple[str, Path | None]:
    """``--reporter NAME[=PATH]``: a built-in reporter or a plugin's, and where it writes."""
    from ..core import plugins

    name, sep, path = text.partition("=")
    if not plugins.is_known("reporters", name):
        raise argparse.ArgumentTypeError(f"unknown reporter {name!r} (choose from {', '.join(plugins.names('reporters'))})")
    if sep and not path:
        raise argparse.ArgumentTypeError(f"{text!r}: a path after '=' (--reporter {name}=PATH)")
    return name, Path(path) if sep else None
