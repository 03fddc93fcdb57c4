"""A chart the tools drew stays in both exports: the JSON as its spec, the Markdown as an image."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from models.db import Database
from services.chart_image import svg
from tests.routes.test_sessions_api import add_messages, auth, new_session, text

__all__ = ["auth"]  # the fixture, used by name

SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": "Spending by month <b>&</b> more (USD)",
    "currency": "USD",
    "data": {
        "values": [
            {"x": "2025-01", "series": "Spent", "y": 12.5, "amount": "12.50", "count": 2},
            {"x": "2025-02", "series": "Spent", "y": -3.0, "amount": "-3.00", "count": 1},
        ]
    },
    "mark": {"type": "bar"},
    "encoding": {"x": {"field": "x"}, "y": {"field": "y"}},
}


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
    image = re.search(r"!\[([^\]]*)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", body)
    assert image is not None
    assert image[1] == "Spending by month <b>&</b> more (USD)"
    drawn = base64.b64decode(image[2]).decode()
    assert drawn.startswith("<svg") and "<b>" not in drawn  # data is escaped, never markup
    assert drawn.count('fill="#2f7d68"') == 2
    assert "| 2025-01 | 12.50 USD |" in body and "| 2025-02 | -3.00 USD |" in body
    exported = client.get(f"/api/sessions/{sid}/export?format=json", headers=auth).get_json()
    contents = [b.get("content") for m in exported["messages"] for b in m["content"]]
    assert any(isinstance(c, str) and json.loads(c)["charts"] == [SPEC] for c in contents if c)


def test_a_line_chart_exports_as_lines_not_bars() -> None:
    line = {**SPEC, "mark": {"type": "line", "point": True}}
    drawn = svg(line)
    assert drawn.count("<polyline") == 1 and 'height="' not in drawn.split("</text>", 1)[1]
    assert "<polyline" not in svg(SPEC)
