"""The trend's series: each arm's pass rate over the comparable runs up to this one, as the
history held them when the run was recorded. The HTML report charts it from the run alone, so a
history file that grows, changes or goes later does not change the chart."""

from __future__ import annotations

from ..core.trend import TrendPoint
from ..log.history_entry import HistoryEntry

# The runs a series keeps, the latest: past this a chart's points are closer than a pixel or
# two, and the document would grow with every run recorded.
SERIES_LIMIT = 100
# The arms a point carries: the ones the HTML chart draws.
SERIES_ARMS = ("with_skill", "without_skill")


def trend_series(entries: list[HistoryEntry], current: HistoryEntry) -> tuple[TrendPoint, ...]:
    """The entries comparable with ``current`` (``HistoryEntry.key``, in file order), then
    ``current``: the latest ``SERIES_LIMIT`` of them."""
    runs = [*(e for e in entries if e.key == current.key), current][-SERIES_LIMIT:]
    return tuple(TrendPoint(e.recorded_at, {arm: e.pass_rate.get(arm) for arm in SERIES_ARMS}) for e in runs)
