"""The Vega-Lite specs the chart tool writes: the one definition of every chart (pure).

The page draws a spec with vega-embed and a Markdown export with vl-convert; neither has code
per chart type, so a new type is a new builder here. Every spec has the same rows in
`data.values` (docs/tools.md#chart):

- `x` (the band or point: a month, a day, a category), `series` (the colour: Spent, Income,
  a category), `y` (the number drawn), `amount` (the exact figure, as the tools write amounts),
  `count` (the rows it adds up) and `sources` (the `txns:`/`account:`/`budget:` sources that
  hold them: a bar or point with rows opens them);
- `projected: true` on a value computed forward (a forecast, a pace), never on a recorded one.
  A line draws projected rows dashed: `projection` joins them to the recorded line.

Besides Vega-Lite's own keys, a spec carries `currency` (one per chart: amounts are never
converted), `totals` (series -> exact figure) and an optional `note`.
"""

from __future__ import annotations

from typing import Any

from domain.money import format_minor, to_decimal

VEGA_LITE = "https://vega.github.io/schema/vega-lite/v6.json"
PROJECTED = "projected"
# Solid for recorded rows, dashed for projected ones.
_DASH = {"domain": [False, True], "range": [[1, 0], [6, 4]]}


def value(
    x: str, series: str, minor: int, currency: str, count: int, sources: list[str]
) -> dict[str, Any]:
    """One row of a spec's data: an exact figure in minor units, and the rows behind it."""
    return {
        "x": x,
        "series": series,
        "y": float(to_decimal(minor, currency)),
        "amount": format_minor(minor, currency),
        "count": count,
        "sources": sources,
    }


def projection(recorded: list[dict[str, Any]], ahead: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A series' recorded rows, then its projected ones, joined where the projection starts.

    The first projected row repeats the last recorded one (same x and figures, no rows behind
    it): a line is drawn per run of rows, so this is what joins the dashed part to the solid
    one. Tables show it once (they skip a repeated x and series).
    """
    rows = [{**r, PROJECTED: False} for r in recorded]
    if not ahead:
        return rows
    joined = [{**recorded[-1], "count": 0, "sources": [], PROJECTED: True}] if recorded else []
    return rows + joined + [{**r, PROJECTED: True} for r in ahead]


def bars(
    title: str, currency: str, values: list[dict[str, Any]], x_title: str, *, stacked: bool = False
) -> dict[str, Any]:
    """Bars per x: one series, several side by side, or `stacked` (a segment per series)."""
    series = _series(values)
    encoding: dict[str, Any] = {
        "x": _x(x_title),
        "y": _y(currency, stack="zero" if stacked else None),
    }
    if len(series) > 1 or stacked:
        encoding["color"] = _colour(None)
        if not stacked:
            encoding["xOffset"] = {"field": "series", "sort": None}
    encoding["tooltip"] = _tooltip(x_title, currency, series)
    shape = "stacked bar chart" if stacked else "bar chart"
    return _spec(title, f"{shape} with {len(values)} bars", currency, values, "bar", encoding)


def donut(title: str, currency: str, values: list[dict[str, Any]], x_title: str) -> dict[str, Any]:
    """A ring of one series' positive figures, a slice per x in the order given."""
    encoding = {
        "theta": {"field": "y", "type": "quantitative", "stack": True},
        "color": {"field": "x", "type": "nominal", "title": x_title, "sort": None},
        "order": {"field": "rank", "type": "quantitative"},
        "tooltip": _tooltip(x_title, currency, _series(values)),
    }
    ranked = [{**v, "rank": i} for i, v in enumerate(values)]
    mark = {"type": "arc", "innerRadius": 55, "outerRadius": 100}
    return _spec(title, f"donut chart of {len(values)} slices", currency, ranked, mark, encoding)


def line(
    title: str, currency: str, values: list[dict[str, Any]], x_title: str, y_title: str
) -> dict[str, Any]:
    """A line per series through its points; projected rows dashed and without points.

    Each recorded row is a point that opens its rows; `projection` builds the rows of a series
    that goes on past what is recorded.
    """
    series = _series(values)
    projected = any(v.get(PROJECTED) for v in values)
    if projected:
        values = [{**v, PROJECTED: bool(v.get(PROJECTED))} for v in values]
    encoding: dict[str, Any] = {"x": _x(x_title), "y": _y(currency, title=y_title)}
    if len(series) > 1:
        encoding["color"] = _colour(None)
    encoding["tooltip"] = _tooltip(x_title, currency, series)
    shape = f"line chart of {len(values)} points"
    if not projected:
        return _spec(title, shape, currency, values, {"type": "line", "point": True}, encoding)
    dash = {"field": PROJECTED, "type": "nominal", "scale": _DASH, "legend": None}
    spec = _spec(title, f"{shape}, projected part dashed", currency, values, None, encoding)
    del spec["mark"]
    spec["layer"] = [
        {"mark": {"type": "line"}, "encoding": {"strokeDash": dash}},
        {
            "mark": {"type": "point", "filled": True},
            "transform": [{"filter": {"field": PROJECTED, "equal": False}}],
        },
    ]
    return spec


def _spec(
    title: str,
    shape: str,
    currency: str,
    values: list[dict[str, Any]],
    mark: Any,
    encoding: dict[str, Any],
) -> dict[str, Any]:
    return {
        "$schema": VEGA_LITE,
        "title": title,
        "description": f"{title}: {shape}",
        "currency": currency,
        "data": {"values": values},
        "mark": mark if isinstance(mark, dict) else {"type": mark},
        "encoding": encoding,
    }


def _series(values: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(v["series"]) for v in values))


def _x(title: str) -> dict[str, Any]:
    return {"field": "x", "type": "ordinal", "title": title, "sort": None}


def _y(currency: str, title: str = "Amount", stack: str | None = None) -> dict[str, Any]:
    y: dict[str, Any] = {"field": "y", "type": "quantitative", "title": f"{title} ({currency})"}
    if stack:
        y["stack"] = stack
    return y


def _colour(title: str | None) -> dict[str, Any]:
    return {"field": "series", "type": "nominal", "title": title, "sort": None}


def _tooltip(x_title: str, currency: str, series: list[str]) -> list[dict[str, Any]]:
    tips: list[dict[str, Any]] = [{"field": "x", "type": "ordinal", "title": x_title}]
    if len(series) > 1:
        tips.append({"field": "series", "type": "nominal", "title": "Series"})
    tips.append({"field": "amount", "type": "nominal", "title": f"Amount ({currency})"})
    tips.append({"field": "count", "type": "quantitative", "title": "Transactions"})
    return tips
