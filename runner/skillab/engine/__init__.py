"""The engine: runs a suite's cases in both arms and gathers the records.

The names load on first use, so importing the package does not pull in the whole engine for
``--help`` or ``validate``.
"""

from ..lazy import lazy_exports

_EXPORTS = {
    "RunReport": ".runner",
    "prepare_suite": ".prepare",
    "run_suite": ".runner",
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
