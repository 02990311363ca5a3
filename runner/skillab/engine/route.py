"""The routing diff (``skillab route``): the candidate skill inserted into a catalogue of skills.

Every labelled query (the candidate's own trigger sets and each catalogue skill's own
should-trigger queries) is posed to the agent twice per run: with the catalogue alone (or beside
the candidate's original, under ``--against``) and with the candidate added. One trial lists the
whole catalogue, so the cost is linear in queries × runs, never in pairs of skills. Trials run
through the trigger machinery (``engine.trigger``): their own workspace, HOME and skills
directory each, the skills' host directories hidden, at most four turns.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.events import Emit, Notice, ignore
from ..core.routing import NOT_CANDIDATE, ROUTE_FORMAT, AgentRoutes, RouteDocument
from ..errors import UsageError
from ..scoring.routing import RoutedQuery, agent_routes
from ..skill.loader import SKILL_FILE, Skill
from ..suite.trigger import TriggerQuery, with_sibling_queries
from ..suite.trigger_plan import TRIGGER_MAX_TURNS, TrialArm, TriggerPlan
from .crowd import Crowd, crowd_of
from .trigger import run_trigger_trials

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..core.settings import EngineSettings, RunConfig
    from ..sandbox.backend import Backend

# Where the agent CLIs look for the skills a user installed (``--installed``), under HOME.
INSTALLED_LOCATIONS = (".claude/skills", ".agents/skills", ".codex/skills", ".gemini/skills")
# Plugins keep their skills one level down: ``<plugin>/skills/<skill>/SKILL.md``.
PLUGIN_LOCATIONS = (".claude/plugins",)
# A catalogue is walked this deep for folders holding SKILL.md (a marketplace snapshot nests
# plugins, then their skills).
MAX_DEPTH = 6
_SKIPPED = {".git", "node_modules", "__pycache__", ".venv", "venv"}
_HIDDEN_KEPT = {".claude", ".agents", ".codex", ".gemini", ".github"}


def skill_dirs(root: Path, *, follow_links: bool = False, depth: int = MAX_DEPTH) -> Iterator[Path]:
    """Folders under ``root`` holding SKILL.md, in name order, without descending into a skill.
    A link is followed only where ``follow_links`` says (a user's own installed skills are often
    links into their checkouts; a catalogue a repository brings may not point outside itself)."""
    if (root / SKILL_FILE).is_file():
        yield root
        return
    if depth <= 0:
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in _SKIPPED or (entry.name.startswith(".") and entry.name not in _HIDDEN_KEPT):
            continue
        if entry.is_symlink() and not follow_links:
            continue
        if entry.is_dir(follow_symlinks=follow_links):
            yield from skill_dirs(Path(entry.path), follow_links=follow_links, depth=depth - 1)


def installed_roots(home: Path) -> list[Path]:
    """The installed-skill locations of the agent CLIs that exist under ``home``."""
    roots = [home / rel for rel in (*INSTALLED_LOCATIONS, *PLUGIN_LOCATIONS)]
    return [r for r in roots if r.is_dir()]


def links_left_out(root: Path) -> list[str]:
    """The links a catalogue holds (never followed), for the report's warnings."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                found.append(f"{path} left out: a link (a catalogue is read without following links)")
    return found


def load_catalogue(roots: Sequence[Path], candidate: Skill, *, installed: Sequence[Path] = ()) -> Crowd:
    """The skills of the catalogue roots (and of the user's installed locations), the candidate
    left out by path and by name, with their own queries."""
    for root in roots:
        if not Path(root).is_dir():
            raise UsageError(f"--catalogue {root}: not a directory")
    found = [d for root in roots for d in skill_dirs(Path(root))]
    found += [d for root in installed for d in skill_dirs(Path(root), follow_links=True)]
    crowd = crowd_of(list(dict.fromkeys(found)), candidate)
    links = [w for root in roots for w in links_left_out(Path(root))]
    if not crowd.siblings:
        raise UsageError("the catalogue holds no skill beside the candidate (a folder with SKILL.md): "
                         + ", ".join(str(r) for r in (*roots, *installed)))
    return Crowd(crowd.siblings, crowd.queries, (*crowd.warnings, *links))


def candidate_queries(skill_dir: Path, engine: EngineSettings) -> tuple[Skill, tuple[TriggerQuery, ...]]:
    """The candidate and its own labelled queries: its suite's trigger queries, or, for a skill
    that has trigger sets (``triggers.yaml``, ``trigger-evals.json``) and no suite, those alone."""
    from ..errors import SuiteError
    from ..skill.loader import load_skill
    from ..suite.model import Suite
    from ..suite.trigger import suite_trigger_queries
    from ..suite.trigger_sets import trigger_files
    from .prepare import prepare_suite

    try:
        prepared = prepare_suite(skill_dir, engine)
        return prepared.skill, prepared.triggers
    except SuiteError:
        files = trigger_files(skill_dir) if (Path(skill_dir) / SKILL_FILE).is_file() else []
        if not files:
            raise
    skill = load_skill(skill_dir)
    bare = Suite(files[0], "trigger-evals", (), skill.root)
    return skill, tuple(suite_trigger_queries(bare, skill.root, skill_name=skill.name))


@dataclass(frozen=True)
class RoutePlan(TriggerPlan):
    """A trigger plan whose every query is posed with the catalogue alone (``baseline``, or
    ``original`` beside it) and with the candidate added (``candidate``); ``siblings`` is the
    catalogue."""

    def trials(self) -> list[tuple[TriggerQuery, int, TrialArm, Skill, tuple[Skill, ...]]]:
        if self.original is not None:
            before: tuple[TrialArm, Skill, tuple[Skill, ...]] = ("original", self.original, self.siblings)
        else:
            before = ("baseline", self.siblings[0], self.siblings[1:])
        planned = []
        for run in range(self.runs):
            for q in self.queries:
                planned.append((q, run, *before))
                planned.append((q, run, "candidate", self.skill, self.siblings))
        return planned


def routed_queries(own: Sequence[TriggerQuery], catalogue: Crowd, candidate: Skill,
                   original: Skill | None) -> tuple[list[TriggerQuery], list[RoutedQuery], list[str]]:
    """Every query of the design with the route it is labelled for, and what was wrong with the
    labels (a query naming a skill the catalogue does not hold expects "not the candidate")."""
    names = {s.name for s in catalogue.siblings}
    merged = with_sibling_queries(list(own), list(catalogue.queries))
    routed, warnings = [], []
    for q in merged:
        owner = q.owner
        if owner is not None and owner not in names:
            warnings.append(f"query {q.name} is labelled for {owner!r}, which the catalogue does not hold")
            owner = None
        if owner is not None:
            expected = before = owner
        elif q.should_trigger:
            expected = candidate.name
            before = original.name if original is not None else NOT_CANDIDATE
        else:
            expected = before = NOT_CANDIDATE
        routed.append(RoutedQuery(q.name, q.query, q.source, expected, before, owner))
    return merged, routed, warnings


def route_agent(
    *,
    adapter: Agent,
    sandbox: Backend,
    candidate: Skill,
    catalogue: Crowd,
    own_queries: Sequence[TriggerQuery],
    original: Skill | None,
    runs: int,
    concurrency: int,
    max_turns: int,
    model: str | None,
    emit: Emit = ignore,
) -> tuple[AgentRoutes, bool]:
    """One agent's routing diff, and whether it was interrupted."""
    queries, routed, _ = routed_queries(own_queries, catalogue, candidate, original)
    if not queries:
        raise UsageError(f"{candidate.root}: no labelled query to route: the candidate and the catalogue "
                         "have no trigger sets (triggers.yaml, trigger-evals.json or should_trigger cases)")
    plan = RoutePlan(queries=tuple(queries), skill=candidate, siblings=catalogue.siblings, original=original,
                     runs=runs, concurrency=concurrency, max_turns=min(max_turns, TRIGGER_MAX_TURNS))
    emit(Notice(f"routing: {len(queries)} queries x {runs} run(s) x 2 conditions, "
                f"{len(catalogue.siblings)} catalogue skill(s), agent {adapter.name}"))
    run = run_trigger_trials(plan, adapter, sandbox, emit)
    listing = None
    if not run.interrupted:
        offered = tuple(sorted((candidate, *catalogue.siblings), key=lambda s: s.name))
        listing = adapter.skill_listing(offered, sandbox)
    routes = agent_routes(
        agent=adapter.name,
        model=model,
        candidate=candidate.name,
        catalogue=[s.name for s in catalogue.siblings],
        original=original.name if original is not None else None,
        queries=routed,
        trials=run.trials,
        listing=listing,
    )
    return routes, run.interrupted


@dataclass(frozen=True)
class RouteRequest:
    """What ``skillab route`` (or the Action's ``route`` input) asks: the candidate, the
    catalogue, the original to stand in for it, and how often each query is posed."""

    skill_dir: Path
    catalogue: tuple[Path, ...]
    installed: tuple[Path, ...] = ()
    against: str | None = None
    runs: int = 1
    concurrency: int = 4


def route_document(request: RouteRequest, agents: Sequence[tuple[RunConfig, Agent]], sandbox: Backend,
                   emit: Emit = ignore) -> RouteDocument:
    """The routing diff of every agent, in order; a Ctrl-C keeps the agents that finished."""
    from .against import open_original

    config = agents[0][0]
    candidate, own = candidate_queries(request.skill_dir, config.engine)
    catalogue = load_catalogue(request.catalogue, candidate, installed=request.installed)
    done: list[AgentRoutes] = []
    interrupted = False
    with ExitStack() as stack:
        original = (stack.enter_context(open_original(request.against, candidate.root)).skill
                    if request.against else None)
        _, _, label_warnings = routed_queries(own, catalogue, candidate, original)
        for agent_config, adapter in agents:
            try:
                routes, stopped = route_agent(
                    adapter=adapter, sandbox=sandbox, candidate=candidate, catalogue=catalogue, own_queries=own,
                    original=original, runs=request.runs, concurrency=request.concurrency,
                    max_turns=agent_config.agent.max_turns, model=agent_config.agent.model.name, emit=emit)
            except KeyboardInterrupt:
                interrupted = True
                break
            done.append(routes)
            if stopped:
                interrupted = True
                break
    queries = len(done[0].queries) if done else 0
    return RouteDocument(
        format=ROUTE_FORMAT,
        candidate=candidate.name,
        candidate_path=str(request.skill_dir),
        catalogue_path=", ".join(str(c) for c in request.catalogue) + (" + installed" if request.installed else ""),
        catalogue=tuple(s.name for s in catalogue.siblings),
        original=request.against,
        runs=request.runs,
        queries=queries,
        trials=queries * request.runs * 2,
        agents=tuple(done),
        warnings=(*catalogue.warnings, *label_warnings),
        interrupted=interrupted,
    )
