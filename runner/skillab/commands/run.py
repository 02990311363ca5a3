"""``skillab run``: check everything, run each suite with live progress, write and announce
the reports, and exit with a code users can trust (see ``skillab run --help``)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from ..cli import configs_from_args, gate_failures, suite_config, suite_targets
from ..core.runlog import RunLog
from ..engine.config import RunConfig
from ..errors import EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK, UsageError
from ..reports.terminal import render_table


def say(message: str) -> None:
    """Every message skillab prints about the run goes to stderr in one style."""
    print(f"skillab: {message}", file=sys.stderr, flush=True)


def check_destinations(args: argparse.Namespace) -> None:
    """Every path the run will write, checked before any case runs (exit 2, nothing spent).
    The history is not among them: a history that cannot be written is a warning, the run's
    results stand without it."""
    from ..writable import check_directory_destination, check_file_destination

    for flag, attr in (("--output", "output"), ("--junit", "junit"), ("--markdown", "markdown"),
                       ("--html", "html")):
        path = getattr(args, attr, None)
        if path is not None:
            check_file_destination(path, flag)
    for name, path in getattr(args, "reporter", None) or []:
        if path is not None:
            check_file_destination(path, f"--reporter {name}")
    if getattr(args, "trajectories", None) is not None:
        check_directory_destination(args.trajectories, "--trajectories")
    # A cache directory the user named must work; the default one degrades as it always has.
    if getattr(args, "cache_dir", None) is not None and not args.no_cache:
        check_directory_destination(args.cache_dir, "--cache-dir")


def preflight(args: argparse.Namespace, config: RunConfig, targets: list[Path]) -> list:
    """Everything that can fail on bad input, for every suite, before the first case runs."""
    from ..providers.mock_script import check_case_names
    from ..engine.runner import prepare_suite
    from ..suite import load_suite
    from ..suite.trigger import suite_trigger_queries

    check_destinations(args)
    prepared = [prepare_suite(target, suite_config(config, target)) for target in targets]
    if config.adapter == "mock":
        scripts: dict[Path, set[str]] = {}
        for target, ready in zip(targets, prepared):
            script = suite_config(config, target).mock_responses
            if script is not None:
                suite = load_suite(Path(target), format=config.suite_format)
                names = {c.name for c in suite.cases}
                # Trigger queries are scripted by name or by their text (``loads:``).
                queries = [*ready.triggers, *suite_trigger_queries(suite, ready.skill.root,
                                                                   skill_name=ready.skill.name)]
                names |= {q.name for q in queries} | {q.query for q in queries}
                scripts.setdefault(Path(script), set()).update(names)
        for script, names in scripts.items():
            check_case_names(script, names)
    return prepared


def resume_documents(args: argparse.Namespace, prepared: list) -> list[dict | None]:
    """The earlier document of each suite (``--resume``), checked to be the same experiment."""
    if args.resume is None:
        return [None] * len(prepared)
    earlier = {Path(d["suite"]["path"]).resolve(): d for d in load_results(args.resume)}
    found = []
    for p in prepared:
        doc = earlier.get(Path(p.suite.path).resolve())
        if doc is not None and doc["suite"].get("skill_hash") != p.skill.content_hash():
            raise UsageError(f"--resume {args.resume}: the skill {p.skill.name} changed since that "
                             "run; resuming would mix two versions (run it afresh)")
        adapter = args.adapter[0] if args.adapter else "agent"
        if doc is not None and (doc["adapter"]["name"] != adapter
                                or doc["models"].get("agent") != args.model):
            raise UsageError(f"--resume {args.resume}: that run used adapter {doc['adapter']['name']} "
                             f"and model {doc['models'].get('agent')}; pass the same ones")
        found.append(doc)
    return found


def load_results(path: Path) -> list[dict]:
    """The suite documents of a results file; a usage error when it is not one."""
    from ..reports.results import load_documents

    try:
        return load_documents(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such results document") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a skillab results document ({exc})") from None


def cmd_run(args: argparse.Namespace) -> int:
    from ..engine import run_suite
    from ..reports.progress import open_progress
    from ..providers.registry import provider_environ
    from ..reports.results import document, document_set, write_document

    configs = configs_from_args(args)
    if len(configs) > 1 and (args.dry_run or args.resume):
        raise UsageError("--dry-run and --resume take one adapter; run them per agent")
    config = configs[0]
    targets = suite_targets(args.paths, args.suite_format)
    prepared = preflight(args, config, targets)
    earlier = resume_documents(args, prepared)
    if args.dry_run:
        from ..engine.plan import plan_suite, render_plan

        previous = earlier if args.resume else _previous_documents(args.output, prepared)
        plans = [plan_suite(p, suite_config(config, t), prev, resume)
                 for p, t, prev, resume in zip(prepared, targets, previous, earlier)]
        print(render_plan(plans, config))
        return EXIT_OK
    documents: list[dict] = []

    def results(docs: list[dict]) -> dict:
        # One suite asked for: its document; several (or several agents): a set, even if a run
        # stopped early.
        return docs[0] if len(targets) == 1 and len(configs) == 1 else document_set(docs)

    def save(checkpoint: RunLog | None = None) -> None:
        current = None if checkpoint is None else document(checkpoint, provider_environ(config))
        docs = documents + ([current] if current is not None else [])
        if args.compact_results and current is None:
            from ..reports.compact import write_compact

            write_compact(results(docs), args.output)
            return
        write_document(results(docs), args.output, compact=current is not None)

    interrupted = False
    kept: list[Path] = []
    display = open_progress(args.quiet)
    with display or _nothing():
        for config, target, resume_from in _agent_runs(configs, targets, earlier):
            if interrupted:
                break
            suite = suite_config(config, target)
            if config.max_cost_usd is not None:
                suite = replace(suite, max_cost_usd=max(1e-9, config.max_cost_usd - _spent(documents)))
            report = run_suite(target, suite, progress=display.message if display else None,
                               observer=display.tick if display else None,
                               checkpoint=save, resume_from=resume_from)
            documents.append(document(report.log, provider_environ(config)))
            save()
            if report.kept_workspaces is not None:
                kept.append(report.kept_workspaces)
            if report.log.interrupted:
                interrupted = True
                break
    write_reports(args, documents)
    if args.json:
        print(json.dumps(results(documents), indent=2, ensure_ascii=False))
    else:
        print("\n\n".join(render_table(doc, verbose=args.verbose) for doc in documents))
        if len(configs) > 1:
            from ..reports.portability import render_terminal

            print("\n" + render_terminal(documents))
    say(f"wrote {args.output} (results document)")
    for directory in kept:
        say(f"kept the arms' workspaces in {directory}/")
    if config.history_path is not None and not interrupted and Path(config.history_path).is_file():
        say(f"recorded the run in {config.history_path} (the trend's history)")
    stopped = [d["stopped"] for d in documents if d.get("stopped")]
    if stopped:
        say(f"stopped early: {stopped[0]}; partial results kept (--resume {args.output} continues)")
        return EXIT_GATE
    if interrupted:
        planned = sum(len(p.graded) for p in prepared) * config.runs
        finished = sum(int(d.get("total_cases", 0)) for d in documents)
        say(f"interrupted: {finished} of {planned} cases; partial results kept "
            f"(--resume {args.output} continues)")
        return EXIT_INTERRUPTED
    if config.shard is not None:
        # A shard's verdict covers its share only: the gates apply to the merged document.
        return EXIT_OK
    return gate_exit(args, documents)


def gate_exit(args: argparse.Namespace, documents: list[dict]) -> int:
    """The gates on finished documents: exit 1 with one line per failure, else 0."""
    fail_on = set(args.fail_on_verdict) | (set() if args.allow_error_verdict else {"error"})
    reasons = [r for doc in documents
               for r in gate_failures(doc, sorted(fail_on), args.min_delta_pts, gate_on=args.gate_on,
                                      min_trigger_recall=args.min_trigger_recall,
                                      max_false_trigger_rate=args.max_false_trigger_rate)]
    for reason in reasons:
        say(f"gate failed: {reason}")
    return EXIT_GATE if reasons else EXIT_OK


def _agent_runs(configs: list[RunConfig], targets: list[Path], earlier: list):
    """Every (agent, suite) pair in order: all suites under the first agent, then the next."""
    for config in configs:
        for target, resume_from in zip(targets, earlier):
            yield config, target, resume_from


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _spent(documents: list[dict]) -> float:
    return sum(((d.get("usage") or {}).get("total") or {}).get("cost_usd") or 0.0 for d in documents)


def _previous_documents(path: Path, prepared: list) -> list[dict | None]:
    """The last run's document of each suite at the ``--output`` path, to measure costs from."""
    from ..reports.results import load_documents

    try:
        docs = {Path(d["suite"]["path"]).resolve(): d for d in load_documents(path)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return [None] * len(prepared)
    return [docs.get(Path(p.suite.path).resolve()) for p in prepared]


def write_reports(args: argparse.Namespace, documents: list[dict]) -> None:
    """The optional report files, each announced."""
    if getattr(args, "trajectories", None):
        write_trajectories(documents, args.trajectories)
        say(f"wrote {args.trajectories}/ (one transcript per arm)")
    from ..reports.reporters import write_reports as write_selected

    selected = [(name, getattr(args, name)) for name in ("junit", "markdown", "html") if getattr(args, name, None)]
    selected += getattr(args, "reporter", None) or []
    for written in write_selected(selected, documents):
        say(f"wrote {written}")


def write_trajectories(documents: list[dict], directory: Path) -> None:
    """One canonical v1 transcript per arm, ``<skill>/<case>.run<k>.<arm>.txt``, and per trigger
    trial, ``<skill>/trigger.<query>.run<k>.<arm>.txt``."""
    from ..reports.results import safe_file_name

    for doc in documents:
        base = directory / safe_file_name(doc["suite"]["skill"])
        base.mkdir(parents=True, exist_ok=True)
        for record in doc["cases"]:
            for arm in ("with_skill", "without_skill", "original"):
                if record.get(arm):
                    name = f"{safe_file_name(record['case_name'])}.run{record['run_index'] + 1}.{arm}.txt"
                    (base / name).write_text(record[arm]["transcript"] + "\n", encoding="utf-8")
        for trial in (doc.get("triggers") or {}).get("trial_records", []):
            name = f"trigger.{safe_file_name(trial['query'])}.run{trial['run_index'] + 1}.{trial['arm']}.txt"
            (base / name).write_text(trial["transcript"] + "\n", encoding="utf-8")
