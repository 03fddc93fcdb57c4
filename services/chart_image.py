"""A chart tool's Vega-Lite spec drawn as a small SVG image, for the Markdown export."""

from __future__ import annotations

import base64
from decimal import Decimal, InvalidOperation
from typing import Any
from xml.sax.saxutils import escape, quoteattr

WIDTH, HEIGHT = 640, 280
PAD_TOP, PAD_BOTTOM, PAD_SIDE = 36, 40, 12
COLOURS = ("#2f7d68", "#c27c1e")


def chart_specs(result: Any) -> list[dict[str, Any]]:
    """Return the Vega-Lite specs of a chart tool's parsed result (none for other results)."""
    charts = result.get("charts") if isinstance(result, dict) else None
    return [
        c
        for c in charts or []
        if isinstance(c, dict)
        and "vega-lite" in str(c.get("$schema", ""))
        and isinstance(c.get("data"), dict)
        and isinstance(c["data"].get("values"), list)
    ]


def svg(spec: dict[str, Any]) -> str:
    """Return the spec's bars as an SVG document; every text is escaped."""
    values = [v for v in spec["data"]["values"] if isinstance(v, dict)]
    series = list(dict.fromkeys(str(v.get("series", "")) for v in values))
    xs = list(dict.fromkeys(str(v.get("x", "")) for v in values))
    amounts = [_number(v.get("amount")) for v in values]
    top, bottom = max([Decimal(0), *amounts]), min([Decimal(0), *amounts])
    span = float(top - bottom) or 1.0
    inner_h = HEIGHT - PAD_TOP - PAD_BOTTOM

    def at(y: Decimal) -> float:
        return PAD_TOP + float(top - y) / span * inner_h

    band = (WIDTH - 2 * PAD_SIDE) / max(1, len(xs))
    bar = (band * 0.8) / max(1, len(series))
    every = max(1, -(-len(xs) // 12))
    label = quoteattr(str(spec.get("title")))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label={label}>',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{PAD_SIDE}" y="20" font-family="sans-serif" font-size="13" '
        f'font-weight="600" fill="#1f2523">{escape(str(spec.get("title", "")))}</text>',
    ]
    line = isinstance(spec.get("mark"), dict) and spec["mark"].get("type") == "line"
    if line:
        for s, name in enumerate(series):
            points = " ".join(
                f"{PAD_SIDE + xs.index(str(v.get('x', ''))) * band + band / 2:.1f},{at(amount):.1f}"
                for v, amount in zip(values, amounts, strict=True)
                if str(v.get("series", "")) == name
            )
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{COLOURS[s % 2]}" '
                'stroke-width="2"/>'
            )
    for i, x in enumerate(xs):
        left = PAD_SIDE + i * band + band * 0.1
        for v, amount in zip(values, amounts, strict=True):
            if line or str(v.get("x", "")) != x:
                continue
            s = series.index(str(v.get("series", "")))
            y0, y1 = at(max(amount, Decimal(0))), at(min(amount, Decimal(0)))
            parts.append(
                f'<rect x="{left + s * bar:.1f}" y="{y0:.1f}" width="{max(1.0, bar - 1):.1f}" '
                f'height="{max(0.0, y1 - y0):.1f}" fill="{COLOURS[s % 2]}"/>'
            )
        if i % every == 0:
            parts.append(
                f'<text x="{left + band * 0.4:.1f}" y="{HEIGHT - PAD_BOTTOM + 16}" '
                'font-family="sans-serif" font-size="10" fill="#636a66" text-anchor="middle">'
                f"{escape(x)}</text>"
            )
    zero = at(Decimal(0))
    parts.append(
        f'<line x1="{PAD_SIDE}" x2="{WIDTH - PAD_SIDE}" y1="{zero:.1f}" y2="{zero:.1f}" '
        'stroke="#636a66"/></svg>'
    )
    return "".join(parts)


def markdown(spec: dict[str, Any]) -> list[str]:
    """Return the chart as a Markdown image (an SVG data URI) and a table of its figures."""
    title = " ".join(str(spec.get("title", "Chart")).split()).replace("]", ")").replace("[", "(")
    data = base64.b64encode(svg(spec).encode()).decode()
    currency = str(spec.get("currency", ""))
    values = [v for v in spec["data"]["values"] if isinstance(v, dict)]
    series = list(dict.fromkeys(str(v.get("series", "")) for v in values))
    rows = [
        f"| {_cell(v.get('x'))} |"
        + ("" if len(series) < 2 else f" {_cell(v.get('series'))} |")
        + f" {_cell(v.get('amount'))} {_cell(currency)} |"
        for v in values
    ]
    head = "| Period |" + (" Series |" if len(series) > 1 else "") + " Amount |"
    rule = "| --- |" + (" --- |" if len(series) > 1 else "") + " ---: |"
    return [f"![{title}](data:image/svg+xml;base64,{data})", "", head, rule, *rows, ""]


def _cell(value: Any) -> str:
    return escape(" ".join(str(value if value is not None else "").split())).replace("|", "\\|")


def _number(value: Any) -> Decimal:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return Decimal(0)
