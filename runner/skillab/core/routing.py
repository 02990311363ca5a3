"""The routing diff's document (``skillab route``, format ``skillab.route/1``): every labelled
query posed to each agent with the catalogue alone and with the candidate added, which skill it
loaded each time, and what the candidate steals from the catalogue and loses to it.

Plain data; ``scoring.routing`` computes it. Field order is wire order (``core.wire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .triggers import RateInterval
from .usage import Usage
from .wire import wire

ROUTE_FORMAT = "skillab.route/1"
# A trial's route when the agent loaded no skill, or several.
NONE = "(none)"
MULTIPLE = "(several)"
# The expected route of a query labelled "should not load the candidate" that names no other
# skill: any route but the candidate is right.
NOT_CANDIDATE = "(not the candidate)"

Condition = Literal["catalogue", "candidate"]


@dataclass(frozen=True)
class RouteCell:
    """One cell of a confusion matrix: trials whose query expected ``expected`` and went to
    ``routed``."""

    expected: str
    routed: str
    trials: int


@dataclass(frozen=True)
class ConditionSummary:
    """One condition of the design: the skills listed, and where the queries went."""

    label: str
    skills: tuple[str, ...]
    trials: int
    errors: int
    # Trials in which the agent loaded more than one skill.
    several_loaded: int
    # Share of trials routed to exactly the expected skill, over queries that expect one.
    accuracy: RateInterval
    matrix: tuple[RouteCell, ...]


@dataclass(frozen=True)
class QueryRoute:
    """One query: where its trials went in each condition (route → trials)."""

    name: str
    query: str
    expected: str
    source: str
    catalogue: dict[str, int]
    candidate: dict[str, int]
    errors: int


@dataclass(frozen=True)
class PairTest:
    """The candidate against one skill of the catalogue over that skill's own queries
    (``steals``: are they taken by the candidate more often than the rest of the catalogue's?),
    or against the original over the candidate's own queries (``loses``: are they routed right
    less often?): how often the queries were routed right in each condition, the one-sided exact
    p (``scoring.routing``), and the Benjamini-Hochberg adjusted p across every pair of the agent."""

    skill: str
    direction: Literal["steals", "loses"]
    queries: int
    catalogue_right: int
    catalogue_trials: int
    candidate_right: int
    candidate_trials: int
    # Trials of these queries that went to the other side of the pair.
    taken: int
    taken_queries: tuple[str, ...]
    p_value: float
    p_adjusted: float
    significant: bool


@dataclass(frozen=True)
class Taken:
    """One skill of the catalogue that took some of the candidate's own queries."""

    skill: str
    trials: int
    queries: tuple[str, ...]


@dataclass(frozen=True)
class AgentRoutes:
    """One agent's routing diff."""

    agent: str
    model: str | None
    catalogue: ConditionSummary
    candidate: ConditionSummary
    # The candidate's own should-load queries, routed to it (with the candidate listed).
    own_accuracy: RateInterval
    # Queries that went to the candidate in most of their trials.
    now_routed_to_candidate: tuple[str, ...]
    # Queries of catalogue skills the candidate takes, from the pairs significant after FDR.
    stolen_queries: tuple[str, ...]
    steals: tuple[PairTest, ...]
    lost_to: tuple[Taken, ...]
    # With an original (``--against``): the candidate's own queries routed right less often
    # than the original's, tested as a pair against the original itself.
    loses: PairTest | None
    several_loaded_queries: tuple[str, ...]
    queries: tuple[QueryRoute, ...]
    # How the agent lists every skill at once, when it can tell (its own shape).
    listing: dict[str, Any] | None = field(default=None, metadata=wire(omit_none=True))
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class RouteDocument:
    format: str
    candidate: str
    candidate_path: str
    catalogue_path: str
    catalogue: tuple[str, ...]
    original: str | None
    runs: int
    queries: int
    trials: int
    agents: tuple[AgentRoutes, ...]
    warnings: tuple[str, ...]
    interrupted: bool
