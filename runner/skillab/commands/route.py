"""``skillab route SKILL_DIR --catalogue DIR``: what adding (or editing) a skill does to where the
agent routes every labelled query of a catalogue, per agent, with error control."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from ..core.events import Emit, Event, Notice
from ..core.options import options_for
from ..core.routing import RouteDocument
from ..core.settings import RunConfig
from ..core.wire import to_wire
from ..errors import EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK, UsageError
from ..secrets import Redactor
from ..session import suite_config
from ..session.gates import route_gate_failures
from .console import say
from .settings import GETTING_STARTED, configs_from_args


def route_configs(args: argparse.Namespace) -> list[RunConfig]:
    """One configuration per agent, as ``run`` builds them from the rows ``route`` takes."""
    if not args.adapter and not args.model:
        raise UsageError(GETTING_STARTED.replace("skillab run PATH", "skillab route SKILL_DIR --catalogue DIR"))
    configs = configs_from_args(args, options_for("route"))
    # Routing trials are never the baseline cache's: its entries are suite arms.
    return [suite_config(replace(c, engine=replace(c.engine, cache_enabled=False)), Path(args.skill))
            for c in configs]


def cmd_route(args: argparse.Namespace) -> int:
    from ..agents.registry import create_adapter
    from ..engine.route import RouteRequest, installed_roots, route_document
    from ..sandbox.backend import choose_sandbox, fallback_warning
    from ..writable import check_file_destination

    if not args.catalogue and not args.installed:
        raise UsageError("route needs a catalogue: --catalogue DIR (a folder of skills) or --installed")
    configs = route_configs(args)
    for flag, path in (("--output", args.output), ("--markdown", args.markdown), ("--html", args.html)):
        if path is not None:
            check_file_destination(path, flag)
    adapters = [create_adapter(c) for c in configs]
    choice = choose_sandbox(args.sandbox)
    if choice.fallback and any(c.agent.adapter != "mock" for c in configs):
        raise UsageError(f"{choice.reason}: a routing run with a model needs the sandbox "
                         "(or --sandbox none, and every report says unsandboxed)")
    warning = fallback_warning(choice)
    if warning:
        say(warning)
    request = RouteRequest(
        skill_dir=Path(args.skill),
        catalogue=tuple(Path(c) for c in args.catalogue),
        installed=tuple(installed_roots(Path.home())) if args.installed else (),
        against=args.against,
        runs=args.runs,
        concurrency=args.concurrency,
    )
    doc = route_document(request, list(zip(configs, adapters)), choice.backend, emit=_notices(args.json))
    _write(doc, args, Redactor.from_environ(configs[0].credentials.environ))
    if doc.interrupted:
        return EXIT_INTERRUPTED
    failures = route_gate_failures(doc, max_stolen=args.max_stolen, min_accuracy=args.min_route_accuracy)
    for line in failures:
        say(f"gate failed: {line}")
    return EXIT_GATE if failures else EXIT_OK


def _notices(quiet: bool) -> Emit:
    def emit(event: Event) -> None:
        if isinstance(event, Notice) and not quiet:
            say(event.text)
    return emit


def _write(doc: RouteDocument, args: argparse.Namespace, redactor: Redactor) -> None:
    from ..atomic import write_json
    from ..reports.routing import render_html, render_markdown, render_text

    data = redactor.data(to_wire(doc))
    write_json(args.output, data, indent=2)
    if args.markdown is not None:
        Path(args.markdown).write_text(redactor.text(render_markdown(doc)), encoding="utf-8")
    if args.html is not None:
        Path(args.html).write_text(redactor.text(render_html(doc)), encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(redactor.text(render_text(doc)))
        say(f"wrote {args.output}")
