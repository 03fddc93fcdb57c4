"""A chart tool's Vega-Lite spec in the Markdown export: drawn by vl-convert, and as a table.

The spec is the chart's one definition (tools/finance/chart_specs.py); the page draws it with
vega-embed, the export with vl-convert (the same vega and vega-lite versions, web/vendor/), in
the page's light colours: web/chart-theme.json with web/css/theme.css's variables.

Drawing is CPU work in the thread that renders the export's batch (the engine's `store` pool),
and it is bounded: a spec is drawn only in the shape the chart tool writes (inline rows, no
expressions, no URLs, small numbers), and an export draws at most `MAX_IMAGES` charts of
`MAX_ROWS` rows in all; any other chart is exported as its table alone.
"""

from __future__ import annotations

import base64
import json
import re
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import vl_convert

WEB = Path(__file__).resolve().parent.parent / "web"
VL_VERSION = "6.4"  # vega-lite 6.4.1, as web/vendor/ ships it
WIDTH, HEIGHT = 560, 220
MAX_IMAGES = 20  # charts drawn per export
MAX_ROWS = 2000  # their rows, all together (drawing takes about 2 ms a row, more when busy)
MAX_VALUES = 300  # rows of one chart: the tool writes at most 252 (36 months x 7 categories)
MAX_SPEC_BYTES = 256 * 1024
MAX_NUMBER = 1000  # tick counts, sizes, radii: nothing outside the rows makes work beyond this
TOP_KEYS = {
    "$schema",
    "title",
    "description",
    "currency",
    "data",
    "mark",
    "encoding",
    "layer",
    "totals",
    "note",
}
LAYER_KEYS = {"mark", "encoding", "transform"}
CHANNELS = {"x", "y", "xOffset", "color", "theta", "order", "tooltip", "strokeDash", "detail"}
# Keys whose values Vega evaluates or fetches; "filter" only as a field predicate.
_ACTIVE = {"expr", "signal", "test", "calculate", "url", "params", "param", "sequence", "sphere"}
_VAR = re.compile(r"var\((--[\w-]+)\)")
_ROOT = re.compile(r"(?m)^:root\s*\{([^}]*)\}")
_PROPERTY = re.compile(r"(--[\w-]+)\s*:\s*([^;]+);")


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


class Images:
    """What an export may still draw: charts and rows (the rest are exported as tables)."""

    def __init__(self, limit: int = MAX_IMAGES, rows: int = MAX_ROWS) -> None:
        self.left, self.rows = limit, rows

    def take(self, rows: int) -> bool:
        """Whether a chart of `rows` rows is drawn; if so, it is counted."""
        if self.left < 1 or rows > self.rows:
            return False
        self.left, self.rows = self.left - 1, self.rows - rows
        return True


def markdown(spec: dict[str, Any], images: Images) -> list[str]:
    """Return the chart as a Markdown image (an SVG data URI) and a table of its figures."""
    title = " ".join(str(spec.get("title", "Chart")).split()).replace("]", ")").replace("[", "(")
    out = []
    if drawable(spec) and images.take(len(spec["data"]["values"])):
        data = base64.b64encode(svg(spec).encode()).decode()
        out += [f"![{title}](data:image/svg+xml;base64,{data})", ""]
    else:
        out += [f"_{_cell(title)}: shown as a table only._", ""]
    return out + table(spec)


def svg(spec: dict[str, Any]) -> str:
    """The spec drawn by vl-convert as an SVG document (its texts are escaped by vega)."""
    sized = {**spec, "width": WIDTH, "height": HEIGHT}
    return str(
        vl_convert.vegalite_to_svg(
            sized, vl_version=VL_VERSION, config=theme(), allowed_base_urls=[]
        )
    )


def table(spec: dict[str, Any]) -> list[str]:
    """The spec's figures as a Markdown table: one row per figure, each shown once."""
    currency = str(spec.get("currency", ""))
    values = [v for v in spec["data"]["values"] if isinstance(v, dict)]
    series = list(dict.fromkeys(str(v.get("series", "")) for v in values))
    encoding = spec.get("encoding")
    channels = [encoding.get(c) for c in ("x", "color")] if isinstance(encoding, dict) else []
    titles = [c["title"] for c in channels if isinstance(c, dict) and c.get("title")]
    x_title = str(titles[0]) if titles else "Item"
    several = len(series) > 1
    rows, seen = [], set()
    for v in values:
        key = (str(v.get("x")), str(v.get("series")))
        if key in seen:  # a projection's first row repeats the last recorded one
            continue
        seen.add(key)
        projected = " (projected)" if v.get("projected") else ""
        rows.append(
            f"| {_cell(v.get('x'))} |"
            + (f" {_cell(v.get('series'))} |" if several else "")
            + f" {_cell(v.get('amount'))} {_cell(currency)}{projected} |"
        )
    head = f"| {_cell(x_title)} |" + (" Series |" if several else "") + " Amount |"
    rule = "| --- |" + (" --- |" if several else "") + " ---: |"
    return [head, rule, *rows, ""]


def drawable(spec: dict[str, Any]) -> bool:
    """Whether drawing `spec` is bounded work: the shape the chart tool writes, and no more."""
    values = spec["data"]["values"]
    layers = spec.get("layer", [])
    if (
        set(spec) - TOP_KEYS
        or set(spec["data"]) != {"values"}
        or len(values) > MAX_VALUES
        or not all(isinstance(v, dict) for v in values)
        or not isinstance(layers, list)
        or len(layers) > 4
        or any(not isinstance(layer, dict) or set(layer) - LAYER_KEYS for layer in layers)
        or len(json.dumps(spec)) > MAX_SPEC_BYTES
    ):
        return False
    encodings = [spec.get("encoding") or {}, *(layer.get("encoding") or {} for layer in layers)]
    if any(not isinstance(e, dict) or set(e) - CHANNELS for e in encodings):
        return False
    rest = {k: v for k, v in spec.items() if k != "data"}
    return _bounded(rest)


def _bounded(node: Any) -> bool:
    if isinstance(node, dict):
        return all(_inert(key, item) and _bounded(item) for key, item in node.items())
    if isinstance(node, list):
        return all(_bounded(item) for item in node)
    if isinstance(node, bool) or not isinstance(node, int | float):
        return True
    return abs(node) <= MAX_NUMBER


def _inert(key: str, item: Any) -> bool:
    """Whether a key holds plain settings, not what Vega evaluates or fetches."""
    active = key in _ACTIVE or key.endswith("Expr")
    return not (active or (key == "filter" and isinstance(item, str)))


@cache
def theme() -> dict[str, Any]:
    """web/chart-theme.json in the page's light colours (web/css/theme.css's `:root` variables)."""
    css = (WEB / "css" / "theme.css").read_text()
    colours = {k: v.strip() for block in _ROOT.findall(css) for k, v in _PROPERTY.findall(block)}
    text = (WEB / "chart-theme.json").read_text()
    return dict(json.loads(_VAR.sub(lambda m: colours[m[1]], text)))


def _cell(value: Any) -> str:
    return escape(" ".join(str(value if value is not None else "").split())).replace("|", "\\|")
