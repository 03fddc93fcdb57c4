"""The chart types that come from specs alone: a donut of categories, bars stacked by category,
a line with a projection; and every spec the tool writes is one Vega-Lite compiles."""

from __future__ import annotations

import importlib
from decimal import Decimal
from typing import Any

import pytest
import vl_convert

from models.db import Database
from services.chart_export import VL_VERSION
from tests.tools.conftest import Caller
from tests.tools.test_chart import Q1, bars, rows_total
from tools.finance import chart_specs
from tools.finance.inputs import CHARTS

MARCH = {"start_date": "2025-03-01", "end_date": "2025-03-31"}
# the module (tools.finance.chart is also the name of its tool function)
chart = importlib.import_module("tools.finance.chart")


def test_a_donut_has_a_slice_per_category_each_resting_on_its_rows(
    call: Caller, db: Database
) -> None:
    (donut,) = [
        c for c in call("chart", kind="category_share", **Q1)["charts"] if c["currency"] == "USD"
    ]
    (by_bars,) = [
        c
        for c in call("chart", kind="spending_by_category", **Q1)["charts"]
        if c["currency"] == "USD"
    ]
    assert donut["mark"]["type"] == "arc" and donut["encoding"]["theta"]["field"] == "y"
    assert bars(donut) == bars(by_bars)  # the same figures as the bars, largest first
    assert [v["rank"] for v in donut["data"]["values"]] == list(range(len(bars(donut))))
    assert donut["totals"] == by_bars["totals"]
    for v in donut["data"]["values"]:
        assert -rows_total(db, call.user_id, v["sources"], "USD") == Decimal(v["amount"])


def test_a_donut_adds_up_the_smallest_categories_and_leaves_out_refunds(
    call: Caller, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chart, "MAX_SLICES", 2)
    (donut,) = [
        c for c in call("chart", kind="category_share", **Q1)["charts"] if c["currency"] == "USD"
    ]
    slices = bars(donut)
    assert list(slices) == ["Rent", "Groceries", "Other categories"]
    everything = bars(call("chart", kind="spending_by_category", **Q1)["charts"][1])
    assert Decimal(slices["Other categories"]) == sum(
        (Decimal(a) for c, a in everything.items() if c not in ("Rent", "Groceries")), Decimal(0)
    )
    other = donut["data"]["values"][-1]
    assert -rows_total(db, call.user_id, other["sources"], "USD") == Decimal(other["amount"])
    assert "The 2 largest categories" in donut["note"]
    assert chart._cut(["a", "b", "c"], 2) == (["a", "b", "c"], [])  # one more is no "other"
    # 20 to 28 January: 36.00 at Pizza Place, and a grocery refund of 20.00 that is no slice
    (short,) = call("chart", kind="category_share", start_date="2025-01-20", end_date="2025-01-28")[
        "charts"
    ]
    assert bars(short) == {"Restaurants": "36.00"}
    assert "refunds" in short["note"]


def test_stacked_bars_add_up_each_month_by_category(
    call: Caller, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chart, "MAX_STACKED", 2)
    result = call("chart", kind="category_by_month", **Q1)
    by_month = call("chart", kind="spending_by_month", **Q1)
    for spec, month_spec in zip(result["charts"], by_month["charts"], strict=True):
        assert spec["encoding"]["y"]["stack"] == "zero" and "xOffset" not in spec["encoding"]
        months: dict[str, Decimal] = {}
        for v in spec["data"]["values"]:
            months[v["x"]] = months.get(v["x"], Decimal(0)) + Decimal(v["amount"])
            net = rows_total(db, call.user_id, v["sources"], spec["currency"])
            assert -net == Decimal(v["amount"]), v
        assert {m: str(a) for m, a in months.items()} == bars(month_spec)
    usd = next(c for c in result["charts"] if c["currency"] == "USD")
    assert list(usd["totals"]) == ["Rent", "Groceries", "Other categories"]


def test_a_budget_under_way_goes_on_dashed_to_its_projection(call: Caller) -> None:
    (spec,) = call("chart", kind="budget_progress", category="Groceries", **MARCH)["charts"]
    spent = [v for v in spec["data"]["values"] if v["series"] == "Spent"]
    recorded = [v for v in spent if not v["projected"]]
    ahead = [v for v in spent if v["projected"]]
    assert [v["x"] for v in recorded] == [f"2025-03-{d:02d}" for d in range(1, 16)]  # to today
    # the projection starts where the recorded line ends, then one point a day to the 31st
    assert ahead[0] == {**recorded[-1], "count": 0, "sources": [], "projected": True}
    assert [v["x"] for v in ahead[1:]] == [f"2025-03-{d:02d}" for d in range(16, 32)]
    assert ahead[-1]["amount"] == spec["totals"]["Projected"] == "302.15"  # 146.20 / 15 * 31
    limit = [v for v in spec["data"]["values"] if v["series"] == "Limit"]
    assert len(limit) == 31 and not any(v["projected"] for v in limit)
    line, points = spec["layer"]
    assert line["encoding"]["strokeDash"]["field"] == "projected"
    assert points["transform"] == [{"filter": {"field": "projected", "equal": False}}]
    # January is over: recorded to its end, nothing projected
    (january,) = call("chart", kind="budget_progress", category="Groceries", **Q1)["charts"]
    assert "layer" not in january and "Projected" not in january["totals"]
    assert not any(v.get("projected") for v in january["data"]["values"])


def test_a_projection_joins_the_recorded_line() -> None:
    recorded = [chart_specs.value(x, "S", 100, "USD", 1, ["a"]) for x in ("1", "2")]
    ahead = [chart_specs.value("3", "S", 150, "USD", 0, [])]
    rows = chart_specs.projection(recorded, ahead)
    assert [(r["x"], r["projected"], r["count"]) for r in rows] == [
        ("1", False, 1),
        ("2", False, 1),
        ("2", True, 0),
        ("3", True, 0),
    ]
    assert chart_specs.projection(recorded, []) == [{**r, "projected": False} for r in recorded]
    plain = chart_specs.line("T", "USD", recorded, "X", "Y")
    assert plain["mark"] == {"type": "line", "point": True} and "strokeDash" not in str(plain)


SPECS: dict[str, dict[str, Any]] = {
    "budget_progress": {"category": "Groceries", **MARCH},
    "account_balance": {"account": "Checking", **Q1},
}


@pytest.mark.parametrize("kind", CHARTS)
def test_every_spec_the_tool_writes_compiles_with_vega_lite(call: Caller, kind: str) -> None:
    args = SPECS.get(kind, {**Q1, "category": None})
    result = call("chart", kind=kind, **{k: v for k, v in args.items() if v is not None})
    assert result["charts"]
    for spec in result["charts"]:
        assert spec["$schema"] == chart_specs.VEGA_LITE
        compiled = vl_convert.vegalite_to_vega(spec, vl_version=VL_VERSION)
        assert compiled["$schema"].startswith("https://vega.github.io/schema/vega/v6")
        names = [d.get("name") for d in compiled["data"]]
        assert any(d.get("values") == spec["data"]["values"] for d in compiled["data"]), (
            names
        )  # drawn from the spec's own rows
