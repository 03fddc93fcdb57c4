"""get_spending_summary and compare_spending on the hand-built ledger, exact numbers."""

from __future__ import annotations

from tests.tools.conftest import Caller

JAN = {"start_date": "2025-01-01", "end_date": "2025-01-31"}
FEB = {"start_date": "2025-02-01", "end_date": "2025-02-28"}
Q1 = {"start_date": "2025-01-01", "end_date": "2025-03-31"}


def group(key: str, spent: str, count: int, share: str | None) -> dict[str, object]:
    return {"key": key, "spent": spent, "count": count, "share_pct": share}


def test_by_category_nets_refunds_and_skips_income_and_transfers(call: Caller) -> None:
    result = call("get_spending_summary", **JAN)
    assert result == {
        "period": {"from": "2025-01-01", "to": "2025-01-31", "label": "January 2025"},
        "start_date": "2025-01-01",
        "end_date": "2025-01-31",
        "group_by": "category",
        "category": None,
        "currencies": [
            {
                "currency": "USD",
                "total_spent": "1659.04",
                # The Whole Foods refund of 20.00 is taken off; the salary is income.
                "spent_before_refunds": "1679.04",
                "refunds": "20.00",
                "count": 6,
                "groups": [
                    group("Rent", "1500.00", 1, "90.4"),
                    group("Groceries", "107.55", 3, "6.5"),
                    group("Restaurants", "36.00", 1, "2.2"),
                    group("Subscriptions", "15.49", 1, "0.9"),
                ],
            }
        ],
    }


def test_uncategorized_money_out_and_separate_currencies(call: Caller) -> None:
    result = call("get_spending_summary", **FEB)
    eur, usd = result["currencies"]
    assert eur == {
        "currency": "EUR",
        "total_spent": "45.00",
        "spent_before_refunds": "45.00",
        "refunds": "0.00",
        "count": 1,
        "groups": [group("Restaurants", "45.00", 1, "100.0")],
    }
    assert usd["total_spent"] == "1704.68"
    assert usd["count"] == 5
    assert usd["groups"] == [
        group("Rent", "1500.00", 1, "88.0"),
        group("Groceries", "91.20", 1, "5.3"),
        group("Restaurants", "78.00", 1, "4.6"),
        group("Uncategorized", "19.99", 1, "1.2"),
        group("Subscriptions", "15.49", 1, "0.9"),
    ]


def test_top_n_sums_the_rest_under_other(call: Caller) -> None:
    result = call("get_spending_summary", top_n=2, **FEB)
    eur, usd = result["currencies"]
    assert [g["key"] for g in usd["groups"]] == ["Rent", "Groceries"]
    assert usd["truncated"] is True
    assert usd["other"] == {"groups": 3, "spent": "113.48", "count": 3, "share_pct": "6.7"}
    assert "truncated" not in eur
    assert result["truncated"] is True
    assert "other" in result["note"]


def test_by_merchant(call: Caller) -> None:
    eur, usd = call("get_spending_summary", group_by="merchant", **Q1)["currencies"]
    assert [(g["key"], g["spent"], g["count"]) for g in usd["groups"]] == [
        ("Landlord LLC", "4500.00", 3),
        ("Whole Foods Market", "236.10", 4),
        ("Pizza Place", "139.99", 3),
        ("Trader Joe's", "108.85", 2),
        ("Netflix", "46.47", 3),
        ("Corner Store", "19.99", 1),
    ]
    assert usd["total_spent"] == "5051.40"
    assert eur["groups"] == [group("Cafe de Paris", "80.00", 2, "100.0")]


def test_by_month_is_chronological(call: Caller) -> None:
    eur, usd = call("get_spending_summary", group_by="month", top_n=1, **Q1)["currencies"]
    assert usd["groups"] == [
        group("2025-01", "1659.04", 6, "32.8"),
        group("2025-02", "1704.68", 5, "33.7"),
        group("2025-03", "1687.68", 5, "33.4"),
    ]
    assert [g["key"] for g in eur["groups"]] == ["2025-02", "2025-03"]
    assert "truncated" not in usd  # top_n only caps category and merchant groups


def test_by_iso_week(call: Caller) -> None:
    eur, usd = call("get_spending_summary", group_by="week", **FEB)["currencies"]
    assert [(g["key"], g["week_start"], g["spent"], g["count"]) for g in usd["groups"]] == [
        ("2025-W05", "2025-01-27", "1500.00", 1),
        ("2025-W06", "2025-02-03", "106.69", 2),
        ("2025-W07", "2025-02-10", "78.00", 1),
        ("2025-W08", "2025-02-17", "19.99", 1),
    ]
    assert [(g["key"], g["spent"]) for g in eur["groups"]] == [("2025-W07", "45.00")]


def test_category_filter(call: Caller) -> None:
    result = call("get_spending_summary", category="groceries", **Q1)
    assert result["category"] == "Groceries"
    (usd,) = result["currencies"]
    assert usd["total_spent"] == "344.95"
    assert usd["groups"] == [group("Groceries", "344.95", 6, "100.0")]
    merchants = call("get_spending_summary", category="Groceries", group_by="merchant", **Q1)
    assert [(g["key"], g["spent"]) for g in merchants["currencies"][0]["groups"]] == [
        ("Whole Foods Market", "236.10"),
        ("Trader Joe's", "108.85"),
    ]
    uncategorized = call("get_spending_summary", category="Uncategorized", **Q1)
    assert uncategorized["currencies"][0]["total_spent"] == "19.99"


def test_period_without_spending(call: Caller) -> None:
    result = call("get_spending_summary", start_date="2024-01-01", end_date="2024-12-31")
    assert result["currencies"] == []
    salary_only = call("get_spending_summary", start_date="2025-01-25", end_date="2025-01-25")
    assert salary_only["currencies"] == []


def test_refund_only_period_reports_negative_spend(call: Caller) -> None:
    (usd,) = call("get_spending_summary", start_date="2025-01-28", end_date="2025-01-28")[
        "currencies"
    ]
    assert usd["total_spent"] == "-20.00"
    assert usd["groups"] == [group("Groceries", "-20.00", 1, None)]


def change(name: str, a: str, b: str, delta: str, pct: str | None) -> dict[str, object]:
    return {"category": name, "period_a": a, "period_b": b, "change": delta, "change_pct": pct}


def test_compare_months(call: Caller) -> None:
    result = call(
        "compare_spending",
        period_a_start="2025-01-01",
        period_a_end="2025-01-31",
        period_b_start="2025-02-01",
        period_b_end="2025-02-28",
    )
    assert result["period_a"] == {
        "start_date": "2025-01-01",
        "end_date": "2025-01-31",
        "label": "January 2025",
    }
    assert result["period_b"] == {
        "start_date": "2025-02-01",
        "end_date": "2025-02-28",
        "label": "February 2025",
    }
    assert result["period"] == {
        "from": "2025-01-01",
        "to": "2025-02-28",
        "label": "February 2025 against January 2025",
    }
    eur, usd = result["currencies"]
    assert eur == {
        "currency": "EUR",
        "period_a": "0.00",
        "period_b": "45.00",
        "change": "45.00",
        "change_pct": None,
        "categories": [change("Restaurants", "0.00", "45.00", "45.00", None)],
    }
    assert {k: v for k, v in usd.items() if k != "categories"} == {
        "currency": "USD",
        "period_a": "1659.04",
        "period_b": "1704.68",
        "change": "45.64",
        "change_pct": "2.8",
    }
    assert usd["categories"] == [
        change("Restaurants", "36.00", "78.00", "42.00", "116.7"),
        change("Uncategorized", "0.00", "19.99", "19.99", None),
        change("Groceries", "107.55", "91.20", "-16.35", "-15.2"),
        change("Rent", "1500.00", "1500.00", "0.00", "0.0"),
        change("Subscriptions", "15.49", "15.49", "0.00", "0.0"),
    ]
    assert "truncated" not in result


def test_compare_is_directional(call: Caller) -> None:
    result = call(
        "compare_spending",
        period_a_start="2025-02-01",
        period_a_end="2025-02-28",
        period_b_start="2025-01-01",
        period_b_end="2025-01-31",
    )
    usd = result["currencies"][1]
    assert usd["change"] == "-45.64"
    assert usd["categories"][0] == change("Restaurants", "78.00", "36.00", "-42.00", "-53.8")
    assert usd["categories"][1] == change("Uncategorized", "19.99", "0.00", "-19.99", "-100.0")


def test_without_a_period_a_summary_covers_all_history_and_says_so(call: Caller) -> None:
    result = call("get_spending_summary")
    assert result["period"] == {"from": "2025-01-01", "to": "2025-03-15", "label": "all history"}
    everything = call("get_spending_summary", start_date="2025-01-01", end_date="2025-03-15")
    assert result["currencies"] == everything["currencies"]
    # March's pending rows count: all history runs to today.
    # USD: January 1659.04 + February 1704.68 + March 1500 + 15.49 + 63.75 + 25.99 + 82.45.
    assert [c["total_spent"] for c in result["currencies"]] == ["80.00", "5051.40"]
