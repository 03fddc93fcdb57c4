"""get_transactions on the hand-built ledger: every filter, sort, page and total."""

from __future__ import annotations

import pytest

from tests.tools.conftest import ALL_IDS, Caller, ids

AMOUNT_DESC = [14, 6, 16, 8, 1, 15, 10, 21, 3, 11, 18, 4, 12, 5, 19, 20, 7, 13, 17, 9, 2]
ORDERS = {
    "date_desc": [21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    "date_asc": ALL_IDS,
    "amount_desc": AMOUNT_DESC,
    "amount_asc": AMOUNT_DESC[::-1],
}


def test_unfiltered_rows_count_and_totals(call: Caller) -> None:
    result = call("get_transactions")
    assert result["count"] == 21
    assert result["returned"] == 21
    assert result["has_more"] is False
    assert result["next_cursor"] is None
    assert "truncated" not in result
    assert result["totals"] == [
        {"currency": "EUR", "net": "-80.00", "money_out": "-80.00", "money_in": "0.00", "count": 2},
        {
            "currency": "USD",
            "net": "2448.60",
            "money_out": "-5571.40",
            "money_in": "8020.00",
            "count": 19,
        },
    ]


def test_row_shape(call: Caller) -> None:
    row = call("get_transactions", limit=1)["transactions"][0]
    assert row == {
        "id": 21,
        "date": "2025-03-14",
        "amount": "-82.45",
        "currency": "USD",
        "merchant": "Whole Foods Market",
        "description": "Whole Foods Market purchase",
        "category": "Groceries",
        "account": "Visa",
        "pending": True,
        "flow": "spending",
    }
    uncategorized = call("get_transactions", merchant="corner")["transactions"][0]
    assert uncategorized["category"] is None
    assert uncategorized["amount"] == "-19.99"


@pytest.mark.parametrize("sort", list(ORDERS))
def test_sort_orders_break_ties_by_id(call: Caller, sort: str) -> None:
    assert ids(call("get_transactions", sort=sort)) == ORDERS[sort]


def test_default_sort_is_newest_first(call: Caller) -> None:
    result = call("get_transactions")
    assert result["sort"] == "date_desc"
    assert ids(result) == ORDERS["date_desc"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"start_date": "2025-02-01", "end_date": "2025-02-28"}, [8, 9, 10, 11, 12, 13, 14, 15]),
        ({"start_date": "2025-02-14", "end_date": "2025-02-14"}, [11, 12]),
        ({"start_date": "2025-03-12"}, [19, 20, 21]),
        ({"end_date": "2025-01-05"}, [1, 2]),
        ({"category": "GROCERIES"}, [3, 4, 7, 10, 18, 21]),
        ({"category": " restaurants "}, [5, 11, 12, 19, 20]),
        ({"category": "uncategorized"}, [13]),
        ({"category": "Travel"}, []),
        ({"merchant": "whole"}, [3, 7, 10, 21]),
        ({"merchant": "PIZZA"}, [5, 11, 20]),
        ({"merchant": "%"}, []),
        ({"merchant": "_"}, []),
        ({"account": "visa"}, [2, 3, 4, 5, 7, 9, 10, 11, 17, 18, 20, 21]),
        ({"account": "Euro Card"}, [12, 19]),
        ({"direction": "in"}, [6, 7, 14]),
        ({"direction": "out", "category": "groceries"}, [3, 4, 10, 18, 21]),
        ({"min_amount": "1500"}, [1, 6, 8, 14, 16]),
        ({"min_amount": "1500.00", "direction": "out"}, [1, 8, 16]),
        ({"max_amount": "20"}, [2, 7, 9, 13, 17]),
        ({"min_amount": "35", "max_amount": "45"}, [5, 12, 19]),
        ({"min_amount": "45.001", "max_amount": "46"}, [4]),
        ({"min_amount": "35.001", "max_amount": "45.009"}, [5, 12]),
        ({"pending": True}, [20, 21]),
        ({"pending": False}, [i for i in range(1, 20)]),
        ({"category": "restaurants", "account": "visa", "start_date": "2025-02-01"}, [11, 20]),
    ],
)
def test_filters(call: Caller, filters: dict[str, object], expected: list[int]) -> None:
    result = call("get_transactions", sort="date_asc", **filters)
    assert ids(result) == expected
    assert result["count"] == len(expected)


def test_totals_follow_filters(call: Caller) -> None:
    result = call("get_transactions", category="groceries")
    assert result["totals"] == [
        {
            "currency": "USD",
            "net": "-344.95",
            "money_out": "-364.95",
            "money_in": "20.00",
            "count": 6,
        }
    ]
    assert call("get_transactions", category="travel")["totals"] == []


@pytest.mark.parametrize("sort", list(ORDERS))
@pytest.mark.parametrize("limit", [1, 2, 5, 20, 21])
def test_pages_cover_every_row_once(call: Caller, sort: str, limit: int) -> None:
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        extra = {"cursor": cursor} if cursor else {}
        page = call("get_transactions", sort=sort, limit=limit, **extra)
        pages += 1
        assert page["count"] == 21  # totals always cover every match, not the page
        assert page["returned"] == len(page["transactions"]) <= limit
        seen += ids(page)
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        assert page["truncated"] is True
        assert "cursor=next_cursor" in page["note"]
        cursor = page["next_cursor"]
    assert seen == ORDERS[sort]
    assert pages == -(-21 // limit)


def test_pages_with_filters(call: Caller) -> None:
    first = call("get_transactions", category="groceries", sort="amount_desc", limit=4)
    assert ids(first) == [10, 21, 3, 18]
    assert first["has_more"] is True
    assert first["note"].startswith("Showing 4 of 6 matching transactions")
    second = call(
        "get_transactions",
        category="groceries",
        sort="amount_desc",
        limit=4,
        cursor=first["next_cursor"],
    )
    assert ids(second) == [4, 7]
    assert second["has_more"] is False


def test_limit_defaults_to_50(call: Caller) -> None:
    assert len(call("get_transactions")["transactions"]) == 21  # all of 21 fit in 50
    assert call("get_transactions", limit=3)["returned"] == 3
