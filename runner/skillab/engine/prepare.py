"""A suite resolved before it runs: the file parsed, the skill loaded, the cases and trigger
queries selected, the siblings found and the sandbox chosen. Everything that can fail on bad
input fails here, before the first case starts."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.settings import EngineSettings, RunConfig
from ..errors import UsageError
from ..sandbox.backend import Backend, Choice, choose_sandbox
from ..skill.loader import Skill, load_skill
from ..suite import load_suite
from ..suite.model import Case, Suite
from ..suite.trigger_sets import trigger_files
from .crowd import Crowd, load_crowd

if TYPE_CHECKING:
    from ..grading.judge import ExpectationJudge
    from ..suite.trigger import TriggerQuery


@dataclass(frozen=True)
class Prepared:
    """A suite resolved and ready to run: everything that can fail on bad input, done first."""

    suite: Suite
    skill: Skill
    graded: tuple[Case, ...]
    trigger_only: tuple[Case, ...]
    # Every trigger query (trigger-only cases and trigger sets), posed in trigger trials.
    triggers: tuple[TriggerQuery, ...] = ()
    siblings: tuple[Skill, ...] = ()
    # What was wrong with the siblings (skipped, not fatal: they are not under test).
    crowd_warnings: tuple[str, ...] = ()
    # The suite as loaded, before the --case/--tag selection (a mock script may name any case).
    whole: Suite | None = field(default=None, repr=False, compare=False)


def prepare_suite(target: Path, engine: EngineSettings) -> Prepared:
    engine = engine.for_target(target)
    suite = load_suite(Path(target), format=engine.suite_format)
    if engine.held_out_path is not None:
        suite = with_held_out(suite, engine.held_out_path)
    skill = load_skill(suite.skill_dir or suite.path.parent)
    triggers = trigger_queries(suite, skill)
    known = {c.name for c in suite.cases} | {q.name for q in triggers}
    unknown = sorted(set(engine.case_names) - known)
    if unknown:
        raise UsageError(f"{suite.path}: no case named {', '.join(map(_with_suggestion(known), unknown))}")
    whole = suite
    suite = with_reward_threshold(suite.select(list(engine.case_names), list(engine.tags)), engine.reward_threshold)
    if engine.sandbox == "image":
        suite = in_own_image(suite)
    crowd = Crowd()
    if triggers:
        from ..suite.trigger import select_queries, with_sibling_queries

        triggers = select_queries(triggers, suite, engine.case_names, engine.tags)
        # Siblings matter only to a skill with trigger queries of its own.
        if engine.siblings_dir and triggers:
            crowd = load_crowd(engine.siblings_dir, skill)
            if not engine.case_names and not engine.tags:
                triggers = with_sibling_queries(triggers, list(crowd.queries))
    if not suite.cases and not triggers:
        raise UsageError(f"{suite.path}: no case matches the --case/--tag selection")
    graded = tuple(c for c in suite.cases if not c.trigger_only)
    trigger_only = tuple(c for c in suite.cases if c.trigger_only)
    return Prepared(suite, skill, graded, trigger_only, tuple(triggers), crowd.siblings, crowd.warnings,
                    whole=whole)


def trigger_queries(suite: Suite, skill: Skill) -> list[TriggerQuery]:
    """The suite's trigger queries (``suite.trigger``); the reader is imported only for a suite
    that has some, so a run without trigger trials does not pay for loading it."""
    if all(c.should_trigger is None for c in suite.cases) and not trigger_files(skill.root, suite.path.parent):
        return []
    from ..suite.trigger import suite_trigger_queries

    return suite_trigger_queries(suite, skill.root, skill_name=skill.name)


def with_held_out(suite: Suite, path: Path) -> Suite:
    """The suite with the cases of the held-out suite at ``path`` after its own, each tagged
    held-out; a name both use is refused (the reports pair cases by name)."""
    from ..core.held_out import HELD_OUT_TAG

    held = load_suite(Path(path))
    clash = sorted({c.name for c in held.cases} & {c.name for c in suite.cases})
    if clash:
        raise UsageError(f"{held.path}: held-out case {', '.join(map(repr, clash))} has the name of a case of "
                         f"{suite.path} — rename it")
    tagged = tuple(dataclasses.replace(c, tags=(*c.tags, HELD_OUT_TAG) if HELD_OUT_TAG not in c.tags else c.tags)
                   for c in held.cases)
    return dataclasses.replace(suite, cases=(*suite.cases, *tagged), warnings=(*suite.warnings, *held.warnings))


def with_reward_threshold(suite: Suite, threshold: float) -> Suite:
    """The suite with every grader that reads a reward (a verifier) passing at the run's threshold."""
    def case(c: Case) -> Case:
        graders = tuple(dataclasses.replace(g, reward_threshold=threshold) if _reads_reward(g) else g
                        for g in c.graders)
        return dataclasses.replace(c, graders=graders)

    return dataclasses.replace(suite, cases=tuple(case(c) for c in suite.cases))


def _reads_reward(spec: Any) -> bool:
    return any(f.name == "reward_threshold" for f in dataclasses.fields(spec))


def in_own_image(suite: Suite) -> Suite:
    """The suite as ``--sandbox image`` runs it: a case that brings a Dockerfile runs on the image
    built from it, so only what that image cannot cure (the network, a GPU) keeps it unsupported."""
    def case(c: Case) -> Case:
        if c.image is None or c.image.dockerfile is None:
            return c
        return dataclasses.replace(c, unsupported=c.unsupported_in_image)

    return dataclasses.replace(suite, cases=tuple(case(c) for c in suite.cases))


def run_warnings(config: RunConfig, judge: ExpectationJudge | None) -> list[str]:
    """What the reader of the results should know about how this run was set up."""
    if judge is None or not config.agent.model.name:
        return []
    from ..providers.model_family import judge_independence_warning

    warning = judge_independence_warning(config.agent.model.name, judge.model)
    return [warning] if warning else []


def suite_sandbox(suite: Suite, config: RunConfig, stack: ExitStack) -> Choice:
    """The backend for this suite's commands, chosen once and passed along (``ArmContext``):
    ``--sandbox image`` builds the task's image, mounted until ``stack`` closes."""
    if config.engine.sandbox != "image":
        return choose_sandbox(config.engine.sandbox)
    from ..sandbox.image import image_sandbox

    environment = Path(suite.path).parent / "environment"
    if not (environment / "Dockerfile").is_file():
        raise UsageError(f"--sandbox image: {suite.path} brings no image "
                         f"({environment}/Dockerfile does not exist)")
    return stack.enter_context(image_sandbox(environment))


def sandbox_scope(backend: Backend) -> str:
    """The run's backend as the baseline cache keys it: a baseline that ran unsandboxed (or in
    another image) is not this run's baseline."""
    image = getattr(backend, "image", None)
    return f"{backend.name}:{image.digest}" if image is not None else backend.name


def _with_suggestion(known: set[str]) -> Callable[[str], str]:
    import difflib

    def one(name: str) -> str:
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        return repr(name) + (f" (did you mean {close[0]!r}?)" if close else "")
    return one
