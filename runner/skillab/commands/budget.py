"""``skillab budget serve``: the run-wide budget service N shards share (``skillab.budget``).

It listens where every shard can reach it (127.0.0.1 for shards on this machine; a private
address or a cluster Service otherwise), holds the run token from ``SKILLAB_BUDGET_TOKEN``
(never from a flag: argv is visible in ``ps``), prints the ``--budget-url`` to give each shard
and, on Ctrl-C or SIGTERM, the ledger it ends with.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from dataclasses import asdict

from ..core.choices import positive_float
from ..errors import EXIT_OK, UsageError

EPILOG = """\
examples:
  export SKILLAB_BUDGET_TOKEN=$(openssl rand -hex 24)
  skillab budget serve --max-cost-usd 20 --rpm anthropic=500 --listen 127.0.0.1:8765 &
  SKILLAB_BUDGET_URL=http://127.0.0.1:8765 skillab run skills/my-skill --shard 1/4 --max-cost-usd 5 ...

exit codes:
  0  stopped (Ctrl-C or SIGTERM); the final ledger is printed as JSON
  2  a bad flag, no SKILLAB_BUDGET_TOKEN, or the address cannot be listened on"""


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Hold one cost cap, one request rate and one back-off per provider for every "
                          "shard of a run. Shards reach it with --budget-url (or SKILLAB_BUDGET_URL) and "
                          "the same SKILLAB_BUDGET_TOKEN; their API keys never leave them.")
    parser.epilog = EPILOG
    actions = parser.add_subparsers(dest="budget_action", required=True, metavar="ACTION")
    serve = actions.add_parser("serve", help="serve the run-wide budget until stopped",
                               description=parser.description, epilog=EPILOG,
                               formatter_class=parser.formatter_class)
    serve.add_argument("--max-cost-usd", type=positive_float, metavar="USD",
                       help="the run-wide spend cap over every shard (default: none, spend is only counted)")
    serve.add_argument("--rpm", action="append", default=[], metavar="[PROVIDER=]N",
                       help="requests per minute to PROVIDER (anthropic, openai, gemini...), every "
                            "shard together; without PROVIDER=, to each provider not named (repeatable)")
    serve.add_argument("--listen", default="127.0.0.1:8765", metavar="HOST:PORT",
                       help="the address to listen on (default %(default)s; port 0 picks a free one)")


def rpm_table(values: list[str]) -> dict[str, float]:
    from ..budget.ledger import ANY_PROVIDER

    table: dict[str, float] = {}
    for value in values:
        provider, _, number = value.rpartition("=")
        try:
            rate = float(number)
        except ValueError:
            rate = -1.0
        if not rate > 0 or rate == float("inf"):
            raise UsageError(f"--rpm {value!r}: expected [PROVIDER=]N with N requests per minute above 0")
        table[provider or ANY_PROVIDER] = rate
    return table


def listen_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT (127.0.0.1:8765, 0.0.0.0:8765)")
    return host.strip("[]"), int(port)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_budget(args: argparse.Namespace) -> int:
    # The service and its HTTP server load when one is served, not for every `skillab --help`.
    from ..budget.client import TOKEN_ENV
    from ..budget.ledger import RunBudget
    from ..budget.service import MIN_TOKEN_CHARS, BudgetServer

    token = os.environ.get(TOKEN_ENV, "").strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(f"set {TOKEN_ENV} to a secret of at least {MIN_TOKEN_CHARS} characters "
                         "(every shard sets the same): the service answers no request without it")
    budget = RunBudget(cap_usd=args.max_cost_usd, rpm=rpm_table(args.rpm))
    address = listen_address(args.listen)
    try:
        server = BudgetServer(address, budget, token)
    except OSError as exc:
        raise UsageError(f"--listen {args.listen}: cannot listen there ({exc.strerror or exc})") from None
    cap = f"${args.max_cost_usd:g}" if args.max_cost_usd is not None else "no cap"
    print(f"skillab budget: serving the run-wide budget ({cap}) at {server.url}; give every shard "
          f"--budget-url {server.url} and the same {TOKEN_ENV}", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print(json.dumps(asdict(budget.status()), sort_keys=True), flush=True)
    return EXIT_OK
