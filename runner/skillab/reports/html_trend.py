"""The HTML report's trend chart: each arm's pass rate over the comparable runs up to this one,
oldest first, on a labelled 0-100% axis with every point's value. The runs are the trend's
``series``, which the run took from the history when it was recorded: the chart is drawn from
the run alone, never from the history file as it is now."""

from __future__ import annotations

from html import escape
from typing import Any

from ..core.runlog import RunLog
from .findings import ARM_TITLES

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 560, 170, 44, 16, 18, 34
# Past this many runs a value over every point would overlap: the points keep their tooltips.
LABELLED_UP_TO = 12
COLOURS = (("with_skill", "#0969da"), ("without_skill", "#8c959f"))


def trend_chart(log: RunLog) -> list[str]:
    # A run with no arm measured (trigger queries only, every case errored) has no point to plot.
    series = [(when, rates) for when, rates in _series(log) if any(v is not None for v in rates.values())]
    if len(series) < 2:
        return []
    step = (WIDTH - LEFT - RIGHT) / (len(series) - 1)
    plot_h = HEIGHT - TOP - BOTTOM

    def y(rate: float) -> float:
        return TOP + (1 - rate) * plot_h

    parts = [f'<h3>Trend over {len(series)} runs</h3><svg role="img" aria-label="pass rate trend" '
             f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">']
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<line x1="{LEFT}" y1="{y(tick):.1f}" x2="{WIDTH - RIGHT}" y2="{y(tick):.1f}" '
                     f'stroke="{"#999" if tick == 0 else "#e5e7eb"}"/>'
                     f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    parts.append(f'<text x="12" y="{TOP + plot_h / 2:.1f}" transform="rotate(-90 12 {TOP + plot_h / 2:.1f})" '
                 'text-anchor="middle">pass rate</text>')
    for arm, colour in COLOURS:
        points = [(LEFT + i * step, y(rate), rate, when) for i, (when, rates) in enumerate(series)
                  for rate in [rates.get(arm)] if rate is not None]
        if not points:
            continue
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2">'
                     f'<title>{ARM_TITLES[arm]}</title></polyline>')
        for px, py, rate, when in points:
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}" class="point" '
                         f'data-arm="{arm}"><title>{ARM_TITLES[arm]} {rate:.0%} · {_e(when[:16])}</title></circle>')
            if len(points) <= LABELLED_UP_TO:
                dy = -7 if arm == "with_skill" else 14
                parts.append(f'<text x="{px:.1f}" y="{py + dy:.1f}" text-anchor="middle" class="value">{rate:.0%}</text>')
        px, py, _, _ = points[-1]
        parts.append(f'<text x="{WIDTH - RIGHT:.1f}" y="{py - 16 if arm == "with_skill" else py + 26:.1f}" '
                     f'text-anchor="end" fill="{colour}">{ARM_TITLES[arm]}</text>')
    parts += _x_labels([when for when, _ in series], step)
    return ["".join(parts) + "</svg>"]


def _x_labels(times: list[str], step: float) -> list[str]:
    """First and last run, each labelled once; the date said once under them when they share it."""
    first, last = times[0], times[-1]
    same_day = first[:10] == last[:10]
    # The shortest stamp that tells the two apart: the date, else the time to the minute, else
    # to the second, else the run's number.
    cut = next(((a, b) for a, b in ((0, 10), (11, 16), (11, 19)) if first[a:b] != last[a:b]), None)
    labels = (first[cut[0]:cut[1]], last[cut[0]:cut[1]]) if cut else ("run 1", f"run {len(times)}")
    baseline = HEIGHT - BOTTOM + 16
    out = [f'<text x="{LEFT}" y="{baseline}" class="x-label">{_e(labels[0])}</text>',
           f'<text x="{LEFT + (len(times) - 1) * step:.1f}" y="{baseline}" text-anchor="end" class="x-label">'
           f'{_e(labels[1])}</text>']
    if same_day:
        out.append(f'<text x="{(WIDTH + LEFT - RIGHT) / 2:.1f}" y="{baseline}" text-anchor="middle" '
                   f'class="x-label">{_e(first[:10])}</text>')
    return out


def _series(log: RunLog) -> list[tuple[str, dict[str, Any]]]:
    """(recorded at, pass rate per arm) of each run in the trend's series; none for a run that
    kept no history (or was recorded before the series was)."""
    trend = log.settings.trend
    return [(p.recorded_at, p.pass_rate) for p in (trend.series or ())] if trend is not None else []


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
