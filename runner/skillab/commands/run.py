"""``skillab run``: check everything, run each suite with live progress, write and announce
the reports, and exit with a code users can trust (see ``skillab run --help``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.runlog import RunLog
from ..core.settings import RunConfig
from ..core.wording import counted
from ..errors import EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, OutputError, SkillabError, UsageError
from ..reports.terminal import render_table
from ..session import Session, SuiteRun, suite_config
from .console import say
from .report_files import check_destinations, write_reports
from .saved_results import finished_logs, load_results
from .select import earlier_logs, keep_the_rest
from .settings import configs_from_args, gates_from_args
from .targets import suite_targets

if TYPE_CHECKING:
    from ..engine.resume import EarlierRun


def preflight(args: argparse.Namespace, config: RunConfig, targets: list[Path]) -> list:
    """Everything that can fail on bad input, for every suite, before the first case runs."""
    from ..engine.prepare import prepare_suite

    check_destinations(args)
    prepared, problems = [], []
    for target in targets:
        try:
            prepared.append(prepare_suite(target, config.engine))
        except SkillabError as exc:
            problems.append(exc)
    if problems:
        if len(targets) == 1:
            raise problems[0]
        # Every suite that cannot run, not only the first: a folder of 60 tasks is fixed in one pass.
        raise UsageError(f"{len(problems)} of {len(targets)} suites cannot run, so none ran:\n"
                         + "\n".join(str(exc) for exc in problems))
    if config.agent.adapter == "mock":
        from ..suite.mock_script import check_case_names, scripted_names

        scripts: dict[Path, set[str]] = {}
        for target, ready in zip(targets, prepared):
            script = suite_config(config, target).agent.mock_responses
            if script is not None:
                # Every case of the suite, whatever --case/--tag selected, as prepare_suite loaded it.
                names = scripted_names(ready.whole or ready.suite, ready.skill, ready.triggers)
                scripts.setdefault(Path(script), set()).update(names)
        for script, names in scripts.items():
            check_case_names(script, names)
    return prepared


def check_agents(configs: list[RunConfig], prepared: list) -> None:
    """Several agents: each one's adapter and judge are built once before the first case, so a
    later agent's missing key, CLI or same-family judge stops the run before any agent is paid
    for, as it does for a single agent."""
    from ..agents.registry import create_adapter, create_judge

    needs_judge = any(c.needs_judge for ready in prepared for c in ready.graded)
    for config in configs:
        create_adapter(config)
        if needs_judge:
            create_judge(config)


def resume_documents(args: argparse.Namespace, prepared: list) -> list[EarlierRun | None]:
    """The earlier run of each suite (``--resume``), read at the door and checked to be the
    same experiment."""
    if args.resume is None:
        return [None] * len(prepared)
    from ..engine.meta import suite_hash
    from ..engine.resume import EarlierRun

    adapter = args.adapter[0] if args.adapter else "agent"
    documents: list[EarlierRun] = []
    for loaded in load_results(args.resume):
        try:
            documents.append(EarlierRun.read(loaded))
        except ValueError as exc:
            raise UsageError(f"--resume {args.resume}: not a skillab results document ({exc})") from None
    earlier: dict[Path, EarlierRun] = {}
    for run in documents:
        # A suite run under several agents: the one this run resumes, if it is there.
        if run.resolved not in earlier or run.adapter == adapter:
            earlier[run.resolved] = run
    found: list[EarlierRun | None] = []
    for p in prepared:
        doc = earlier.get(Path(p.suite.path).resolve()) or _same_content(documents, p, adapter)
        if doc is not None and doc.skill_hash != p.skill.content_hash():
            raise UsageError(f"--resume {args.resume}: the skill {p.skill.name} changed since that "
                             "run; resuming would mix two versions (run it afresh)")
        if doc is not None and doc.suite_hash not in (None, suite_hash(p.suite)):
            raise UsageError(f"--resume {args.resume}: the suite {p.suite.path} (its cases, grading or "
                             "the --case/--tag selection) changed since that run; resuming would "
                             "mix two versions (run it afresh)")
        if doc is not None and (doc.adapter != adapter or doc.model != args.model):
            raise UsageError(f"--resume {args.resume}: that run used adapter {doc.adapter} "
                             f"and model {doc.model}; pass the same ones")
        found.append(doc)
    if documents and not any(found):
        # Nothing to keep: running on would silently pay for every arm again.
        recorded = ", ".join(sorted({run.path for run in documents}))
        raise UsageError(f"--resume {args.resume}: it holds no run of "
                         f"{', '.join(str(p.suite.path) for p in prepared)} (it has {recorded}, and "
                         "none has the same cases and skill); resume the suite it ran, or run afresh")
    return found


def _same_content(documents: list[EarlierRun], prepared, adapter: str) -> EarlierRun | None:
    """The document of this suite when its recorded path does not lead here: paths are kept as
    typed, so another working directory or a moved folder changes them, not the experiment."""
    from ..engine.meta import suite_hash

    same = [d for d in documents
            if d.suite_hash == suite_hash(prepared.suite) and d.skill_hash == prepared.skill.content_hash()]
    return next((d for d in same if d.adapter == adapter), same[0] if same else None)


def cmd_run(args: argparse.Namespace) -> int:
    if getattr(args, "watch", False):
        from .watch import watch

        return watch(args, run_once)
    return run_once(args)


def run_once(args: argparse.Namespace) -> int:
    from ..log.results import document_set, write_document
    from ..reports.progress import open_progress

    configs = configs_from_args(args)
    if len(configs) > 1 and (args.dry_run or args.resume):
        raise UsageError("--dry-run and --resume take one adapter; run them per agent")
    config = configs[0]
    targets = suite_targets(args.paths, args.suite_format)
    chosen = _selection(args, targets)
    if getattr(args, "collect_only", False):
        return collect_only(args, targets, chosen)
    if chosen is not None:
        targets = [t for t in targets if t not in chosen.skipped]
        configs = [selected(c, chosen) for c in configs]
        config = configs[0]
        if not targets:
            say("nothing to run: " + "; ".join(f"{t}: {why}" for t, why in chosen.skipped.items()))
            return EXIT_OK if args.failed and args.keyword is None else EXIT_USAGE
    prepared = preflight(args, config, targets)
    _warn_unsandboxed(config)
    if len(configs) > 1 or args.dry_run:
        # A dry run is a preflight: it fails where the run would (a missing agent or judge key).
        check_agents(configs, prepared)
    earlier = [run.document if run is not None else None for run in resume_documents(args, prepared)]
    if args.dry_run:
        return _dry_run(args, config, prepared, targets, earlier)
    logs: list[RunLog] = []
    # --failed reruns a part: the rest of the last run is kept in the document (commands.select).
    last_run = earlier_logs(args.output) if getattr(args, "failed", False) else {}
    rerun = {Path(p.suite.path).resolve() for p in prepared}
    # A suite --failed skipped (nothing failed in it) keeps its last run in the document.
    untouched = [log for path, log in last_run.items() if path not in rerun]

    def results() -> dict:
        # One suite asked for: its document; several (or several agents): a set, even if a run
        # stopped early.
        docs = [log.to_json() for log in [*logs, *untouched]]
        single = len(targets) + len(untouched) == 1 and len(configs) == 1
        return docs[0] if single else document_set(docs)

    def save(_run: SuiteRun, log: RunLog) -> None:
        log = keep_the_rest(log, last_run) if last_run else log
        logs.append(log)
        # The documents are made for the write and let go: the logs are what the run keeps.
        try:
            document = results()
            if args.compact_results:
                from ..log.compact import write_compact

                write_compact(document, args.output)
                return
            write_document(document, args.output)
        except OSError as exc:
            raise OutputError(_unwritten_results(args.output, exc, checkpoint.failure)) from None

    display = open_progress(args.quiet)
    if not args.quiet:
        from ..providers.retry import on_retry

        on_retry(lambda text: say(f"waiting: {text}"))
    checkpoint = _checkpoint(args, config)
    reporters = [r for r in (display, checkpoint) if r is not None]
    # The preflight loaded each suite under the first agent's engine settings.
    runs = [SuiteRun(target, agent_config, resume_from,
                     prepared=ready if agent_config.engine == config.engine else None)
            for agent_config in configs for target, resume_from, ready in zip(targets, earlier, prepared)]
    try:
        with display or _nothing():
            session = Session(reporters, on_document=save).run(runs)
    except OutputError:
        checkpoint.close(complete=False)  # the journal holds what the document could not
        raise
    if checkpoint.failure is not None:
        say(f"warning: the checkpoint journal {checkpoint.failure}")
    if session.interrupted and not logs:
        raise KeyboardInterrupt  # stopped before any suite had a document: nothing to keep
    checkpoint.close(complete=not (session.interrupted or session.stopped))
    write_reports(args, logs, results_path=args.output)
    return _failed_after_arms(args, session.failures, _report(args, session, logs, results, configs, prepared))


def _failed_after_arms(args: argparse.Namespace, failures: list[str], code: int) -> int:
    """One line per suite that failed once its arms had run; exit 1 for them if nothing else
    decided the exit code."""
    for failure in failures:
        say(f"{failure}; every finished arm is in {args.output} (`skillab report {args.output}` shows "
            f"them, `skillab run ... --resume {args.output}` scores them without running them again)")
    return EXIT_GATE if failures and code == EXIT_OK else code


def _dry_run(args: argparse.Namespace, config: RunConfig, prepared: list, targets: list[Path],
             earlier: list) -> int:
    """The plan of what the run would do and cost; nothing is run."""
    from ..engine.plan import models_and_keys, plan_suite, render_plan

    previous = _resumed_logs(earlier) if args.resume else _previous_logs(args.output, prepared)
    plans = [plan_suite(p, suite_config(config, t), prev, resume)
             for p, t, prev, resume in zip(prepared, targets, previous, earlier)]
    needs_judge = any(c.needs_judge for ready in prepared for c in ready.graded)
    print(render_plan(plans, config, models_and_keys(config, needs_judge)))
    return EXIT_OK


def _report(args: argparse.Namespace, session, logs: list[RunLog], results, configs: list[RunConfig],
            prepared: list) -> int:
    """The table (or the document), what was written and kept, and the exit code."""
    config = configs[0]
    interrupted = session.interrupted
    if args.json:
        print(json.dumps(results(), indent=2, ensure_ascii=False))
    else:
        print("\n\n".join(render_table(log, verbose=args.verbose) for log in logs))
        if len(configs) > 1:
            from ..reports.portability import render_terminal

            print("\n" + render_terminal(logs))
        if len(logs) > 1:
            from ..reports.terminal import render_summary_line

            print("\n" + render_summary_line(logs))
    say(f"wrote {args.output} (results document)")
    for directory in session.kept_workspaces:
        say(f"kept the arms' workspaces in {directory}/")
    history = config.engine.history_path
    if history is not None and not interrupted and Path(history).is_file():
        say(f"recorded the run in {history} (the trend's history)")
    if session.stopped:
        say(f"stopped early: {session.stopped}; partial results kept (--resume {args.output} continues)")
        return EXIT_GATE
    if interrupted:
        planned = sum(len(p.graded) for p in prepared) * config.engine.runs
        finished = sum(log.summary.aggregate.total_cases for log in logs)
        say(f"interrupted: {finished} of {planned} cases; partial results kept "
            f"(--resume {args.output} continues)")
        return EXIT_INTERRUPTED
    if config.engine.shard is not None:
        # A shard's verdict covers its share only: the gates apply to the merged document.
        return EXIT_OK
    # A run that failed after its arms ran has no verdict to gate on: its failure exits 1.
    return gate_exit(args, [log for log in logs if log.settings.failure is None])


def _selection(args: argparse.Namespace, targets: list[Path]):
    """``-k`` and ``--failed``, per suite (``commands.select``); None without either."""
    from .select import select_cases

    chosen = select_cases(targets, args.suite_format, keyword=getattr(args, "keyword", None),
                          failed_from=args.output if getattr(args, "failed", False) else None,
                          named=args.case)
    if chosen is not None:
        for target, why in chosen.skipped.items():
            say(f"skipping {target}: {why}")
    return chosen


def collect_only(args: argparse.Namespace, targets: list[Path], chosen) -> int:
    """``--collect-only``: the cases each suite would run, as pytest lists them; nothing runs."""
    from ..suite import load_suite

    total = 0
    for target in targets:
        suite = load_suite(Path(target), format=args.suite_format).select(args.case, args.tag)
        names = [c.name for c in suite.cases]
        if chosen is not None:
            names = [n for n in names if n in chosen.names.get(Path(target), ())]
        total += len(names)
        print(f"{target}: {counted(len(names), 'case')}")
        for name in names:
            print(f"  {name}")
    print(f"{counted(total, 'case')} in {counted(len(targets), 'suite')} selected; none run")
    return EXIT_OK


def selected(config: RunConfig, chosen) -> RunConfig:
    """``config`` whose engine picks, per suite, the cases ``chosen`` names."""
    from dataclasses import replace

    pairs = tuple((str(Path(t).resolve()), names) for t, names in chosen.names.items())
    return replace(config, engine=replace(config.engine, case_selection=pairs))


def _warn_unsandboxed(config: RunConfig) -> None:
    """A run without a sandbox says so before its first case, not at the end of a line."""
    from ..sandbox.backend import choose_sandbox, fallback_warning

    if config.engine.sandbox == "image":
        return
    warning = fallback_warning(choose_sandbox(config.engine.sandbox))
    if warning:
        say(warning)


def _checkpoint(args: argparse.Namespace, config: RunConfig):
    from ..log.checkpoint import Checkpoint, journal_path
    from ..secrets import Redactor

    journal = journal_path(args.output)
    # Resuming from this very journal: its arms stay in it until the run finishes whole.
    resuming_here = args.resume is not None and journal_path(args.resume).resolve() == journal.resolve()
    return Checkpoint(journal, Redactor.from_environ(config.credentials.environ), append=resuming_here)


def gate_exit(args: argparse.Namespace, logs: list[RunLog]) -> int:
    """The gates on finished runs: exit 1 with one line per failure, else 0."""
    gates = gates_from_args(args)
    reasons = [r for log in logs for r in gates.failures(log)]
    for reason in reasons:
        say(f"gate failed: {reason}")
    for note in (n for log in logs for n in gates.notes(log)):
        say(f"gate note: {note}")
    return EXIT_GATE if reasons else EXIT_OK


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _previous_logs(path: Path, prepared: list) -> list[RunLog | None]:
    """The last run of each suite at the ``--output`` path, to measure costs from; none when
    there is no file there, a usage error naming the file and the field when it is not a
    results document."""
    from ..log.results import load_documents

    if not path.is_file():
        return [None] * len(prepared)
    try:
        documents = load_documents(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a skillab results document ({exc})") from None
    logs = {Path(log.settings.suite.path).resolve(): log for log in finished_logs(path, documents)}
    return [logs.get(Path(p.suite.path).resolve()) for p in prepared]


def _resumed_logs(earlier: list[dict | None]) -> list[RunLog | None]:
    """The ``--resume`` documents that are whole runs, to measure costs from. The journal's
    partial ones and any with a damaged record are not (their arms run again), so the plan
    estimates those."""
    logs: list[RunLog | None] = []
    for doc in earlier:
        try:
            logs.append(RunLog.from_json(doc) if doc is not None else None)
        except (ValueError, KeyError, TypeError):
            logs.append(None)
    return logs


def _unwritten_results(path: Path, exc: OSError, journal_failure: str | None) -> str:
    """Why the results document is not written, and where the finished arms are."""
    from ..log.checkpoint import journal_path

    journal = journal_path(path)
    held = (f"the checkpoint journal {journal_failure}, so it holds the arms up to there"
            if journal_failure else f"every finished arm is kept in {journal}")
    return (f"cannot write {path} ({exc.strerror or exc}): {held}. Free some space, then "
            f"`skillab run ... --resume {path}` keeps them and runs the rest")
