"""A chart the tools drew stays in both exports: the JSON as its spec, the Markdown as the same
spec drawn by vl-convert (an SVG image) and a table of its figures."""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from xml.etree import ElementTree

from models.db import Database
from services.chart_export import MAX_VALUES, Images, drawable, markdown, table, theme
from tests.routes.test_sessions_api import add_messages, auth, new_session, text
from tools.finance import chart_specs

__all__ = ["auth"]  # the fixture, used by name

SVG = "{http://www.w3.org/2000/svg}"
TITLE = "Spending by month <b>&</b> more (USD)"
SPEC = chart_specs.bars(
    TITLE,
    "USD",
    [
        chart_specs.value("2025-01", "Spent", 1250, "USD", 2, ["txns:a"]),
        chart_specs.value("2025-02", "Spent", -300, "USD", 1, ["txns:b"]),
    ],
    "Month",
)
IMAGE = re.compile(r"!\[([^\]]*)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)")


def drawn(markdown_lines: list[str]) -> list[ElementTree.Element]:
    """The SVG documents of the Markdown's images, parsed."""
    found = IMAGE.findall("\n".join(markdown_lines))
    return [ElementTree.fromstring(base64.b64decode(data)) for _, data in found]


def marks(svg: ElementTree.Element, role: str) -> list[ElementTree.Element]:
    """The items vega drew of one mark type (`bar`, `point`, `arc mark`, ...)."""
    return [e for e in svg.iter() if e.get("aria-roledescription") == role]


def test_a_chart_is_an_image_and_a_table_in_markdown_and_its_spec_in_json(
    client: Any, auth: dict[str, str], db: Database
) -> None:
    sid = new_session(client, auth, "Charts")
    result = json.dumps({"kind": "spending_by_month", "charts": [SPEC]})
    add_messages(
        db,
        sid,
        ("user", text("Chart my spending")),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "chart", "input": {"k": 1}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": result}]),
        ("assistant", text("Here is your chart.")),
    )
    body = client.get(f"/api/sessions/{sid}/export?format=md", headers=auth).get_data(as_text=True)
    image = IMAGE.search(body)
    assert image is not None
    assert image[1] == TITLE
    svg = ElementTree.fromstring(base64.b64decode(image[2]))
    assert svg.tag == f"{SVG}svg" and "marks" in svg.get("class", "")
    # vega drew the spec's two bars in the page's first series colour (light)
    bars = marks(svg, "bar")
    assert [b.get("fill") for b in bars] == [theme()["range"]["category"][0]] * 2
    # the title is text in the image, never markup
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert TITLE in texts and not list(svg.iter(f"{SVG}b"))
    assert "| 2025-01 | 12.50 USD |" in body and "| 2025-02 | -3.00 USD |" in body
    exported = client.get(f"/api/sessions/{sid}/export?format=json", headers=auth).get_json()
    contents = [b.get("content") for m in exported["messages"] for b in m["content"]]
    assert any(isinstance(c, str) and json.loads(c)["charts"] == [SPEC] for c in contents if c)


def test_each_chart_type_is_drawn_from_its_spec_alone() -> None:
    usd = "USD"
    months = [
        chart_specs.value(m, s, n, usd, 1, ["txns:x"])
        for m in ("2025-01", "2025-02", "2025-03")
        for s, n in (("Rent", 150000), ("Food", 9000), ("Other categories", 1200))
    ]
    stacked = chart_specs.bars("Stacked (USD)", usd, months, "Month", stacked=True)
    slices = [chart_specs.value(c, "Spent", n, usd, 1, []) for c, n in (("Rent", 3), ("Fun", 1))]
    donut = chart_specs.donut("Share (USD)", usd, slices, "Category")
    recorded = [chart_specs.value(f"2025-03-0{d}", "Spent", 100 * d, usd, d, []) for d in (1, 2)]
    ahead = [chart_specs.value(f"2025-03-0{d}", "Spent", 100 * d, usd, 0, []) for d in (3, 4)]
    line = chart_specs.line("Pace (USD)", usd, chart_specs.projection(recorded, ahead), "Day", "$")
    images = Images()
    (stacked_svg,) = drawn(markdown(stacked, images))
    assert len(marks(stacked_svg, "bar")) == 9
    (donut_svg,) = drawn(markdown(donut, images))
    assert len(marks(donut_svg, "arc mark")) == 2
    (line_svg,) = drawn(markdown(line, images))
    # the recorded part solid, the projected part (from its join) dashed; points where recorded
    dashes = sorted(e.get("stroke-dasharray") for e in line_svg.iter() if e.get("stroke-dasharray"))
    assert dashes == ["1,0", "6,4"]
    assert len(marks(line_svg, "point")) == 2
    # the table shows the join once, and says which figures are projected
    assert table(line)[2:-1] == [
        "| 2025-03-01 | 1.00 USD |",
        "| 2025-03-02 | 2.00 USD |",
        "| 2025-03-03 | 3.00 USD (projected) |",
        "| 2025-03-04 | 4.00 USD (projected) |",
    ]


def test_a_spec_that_would_make_unbounded_work_is_exported_as_its_table_only() -> None:
    values = SPEC["data"]["values"]
    hostile = [
        {**SPEC, "data": {"url": "file:///etc/passwd", "values": values}},
        {**SPEC, "data": {"values": values * (MAX_VALUES // 2 + 1)}},
        {**SPEC, "data": {"sequence": {"start": 0, "stop": 1e9}, "values": values}},
        {**SPEC, "transform": [{"calculate": "datum.y * 2", "as": "z"}]},
        {**SPEC, "params": [{"name": "p", "expr": "now()"}]},
        {**SPEC, "encoding": {**SPEC["encoding"], "row": {"field": "x"}}},
        {**SPEC, "encoding": {**SPEC["encoding"], "y": {"field": "y", "axis": {"tickCount": 1e9}}}},
        {**SPEC, "encoding": {**SPEC["encoding"], "x": {"field": "x", "axis": {"labelExpr": "1"}}}},
        {**SPEC, "layer": [{"mark": "bar", "transform": [{"filter": "datum.y > 0"}]}]},
    ]
    for spec in hostile:
        assert not drawable(spec), spec
        out = markdown(spec, Images())
        assert not IMAGE.search("\n".join(out)) and out[0].endswith("shown as a table only._")
    assert drawable(SPEC)


def test_an_export_draws_a_bounded_number_of_charts_and_rows() -> None:
    images = Images(limit=2)
    shown = [bool(drawn(markdown(SPEC, images))) for _ in range(3)]
    assert shown == [True, True, False]
    rows = Images(rows=3)  # two rows a chart: the second would pass the bound
    assert [bool(drawn(markdown(SPEC, rows))) for _ in range(2)] == [True, False]
    assert (images.left, rows.rows) == (0, 1)
