"""One run of N suites, shared by ``skillab run`` and the Action: run, report, gate.

The names load on first use, so a module of this package (``outputs``, which ``skillab report``
writes with) does not pull in the session and the suite parsing it runs.
"""

from ..lazy import lazy_exports

_EXPORTS = {
    "Gates": ".gates",
    "gate_failures": ".gates",
    "Session": ".session",
    "SessionResult": ".session",
    "SuiteRun": ".session",
    "into_ledger": ".session",
    "suite_config": ".session",
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
