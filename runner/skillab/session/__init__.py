"""One run of N suites, shared by ``skillab run`` and the Action: run, report, gate."""

from .gates import Gates, gate_failures
from .session import Session, SessionResult, SuiteRun, into_ledger, suite_config

__all__ = ["Gates", "Session", "SessionResult", "SuiteRun", "gate_failures", "into_ledger", "suite_config"]
