"""find_recurring_payments: the detector on its own, then the tool on the hand-built ledger."""

from __future__ import annotations

from datetime import date, timedelta

from tests.tools.conftest import Caller
from tools.finance.clock import pinned_today
from tools.finance.recurring import detect


def days(*iso: str) -> list[date]:
    return [date.fromisoformat(d) for d in iso]


def test_weekly_with_an_outlier_amount() -> None:
    start = date(2025, 1, 6)
    charges = [(start + timedelta(weeks=i), 1200) for i in range(5)]
    charges.insert(2, (date(2025, 1, 17), 9900))  # a one-off at the same merchant
    pattern = detect(charges, min_occurrences=3, tolerance_pct=10)
    assert pattern is not None
    assert pattern.cadence.name == "weekly"
    assert pattern.occurrences == 5
    assert pattern.typical_minor == 1200
    assert pattern.next_expected == date(2025, 2, 10)


def test_biweekly_quarterly_and_yearly() -> None:
    biweekly = detect([(d, 500) for d in days("2025-01-03", "2025-01-17", "2025-01-31")], 3, 0)
    assert biweekly is not None and biweekly.cadence.name == "biweekly"
    assert biweekly.next_expected == date(2025, 2, 14)
    quarterly = detect([(d, 500) for d in days("2024-01-15", "2024-04-15", "2024-07-15")], 3, 0)
    assert quarterly is not None and quarterly.cadence.name == "quarterly"
    assert quarterly.next_expected == date(2024, 10, 15)
    yearly = detect([(d, 9900) for d in days("2022-06-01", "2023-06-01", "2024-06-02")], 3, 0)
    assert yearly is not None and yearly.cadence.name == "yearly"
    assert yearly.next_expected == date(2025, 6, 1)


def test_monthly_on_the_31st_survives_short_months() -> None:
    charges = [(d, 999) for d in days("2025-01-31", "2025-02-28", "2025-03-31")]
    pattern = detect(charges, 3, 10)
    assert pattern is not None and pattern.cadence.name == "monthly"
    assert pattern.next_expected == date(2025, 4, 30)
    later = detect([*charges, (date(2025, 4, 30), 999)], 3, 10)
    assert later is not None and later.next_expected == date(2025, 5, 31)


def test_irregular_or_too_few_or_varying_is_not_recurring() -> None:
    irregular = days("2025-01-01", "2025-01-04", "2025-01-24", "2025-02-02", "2025-03-14")
    assert detect([(d, 1000) for d in irregular], 3, 10) is None
    assert detect([(d, 1000) for d in days("2025-01-01", "2025-02-01")], 3, 10) is None
    monthly = days("2025-01-01", "2025-02-01", "2025-03-01")
    assert detect(list(zip(monthly, [1000, 1500, 2200], strict=True)), 3, 10) is None
    assert detect(list(zip(monthly, [1000, 1050, 950], strict=True)), 3, 4) is None
    assert detect(list(zip(monthly, [1000, 1050, 950], strict=True)), 3, 5) is not None


def test_one_late_charge_is_tolerated_but_not_two() -> None:
    base = days("2025-01-01", "2025-02-01", "2025-03-01", "2025-04-01", "2025-05-20")
    assert detect([(d, 700) for d in base], 3, 0) is not None
    late = days("2025-01-01", "2025-02-01", "2025-03-20", "2025-05-20", "2025-06-20")
    assert detect([(d, 700) for d in late], 3, 0) is None


def test_tool_finds_rent_and_netflix(call: Caller) -> None:
    result = call("find_recurring_payments")
    assert result["since"] == "2024-03-15"
    assert result["count"] == 2
    assert result["recurring"] == [
        {
            "merchant": "Landlord LLC",
            "category": "Rent",
            "typical_amount": "1500.00",
            "currency": "USD",
            "cadence": "monthly",
            "occurrences": 3,
            "first_date": "2025-01-01",
            "last_date": "2025-03-01",
            "next_expected_date": "2025-04-01",
            "active": True,
            "monthly_cost": "1500.00",
        },
        {
            "merchant": "Netflix",
            "category": "Subscriptions",
            "typical_amount": "15.49",
            "currency": "USD",
            "cadence": "monthly",
            "occurrences": 3,
            "first_date": "2025-01-05",
            "last_date": "2025-03-05",
            "next_expected_date": "2025-04-05",
            "active": True,
            "monthly_cost": "15.49",
        },
    ]
    assert result["estimated_monthly_total"] == [{"currency": "USD", "amount": "1515.49"}]


def test_tolerance_occurrences_and_lookback_change_the_answer(call: Caller) -> None:
    # Whole Foods charged 82.45, 91.20 and 82.45: 10.6 % apart, so it needs 11 % tolerance.
    wider = call("find_recurring_payments", amount_tolerance_pct=11)
    whole_foods = [r for r in wider["recurring"] if r["merchant"] == "Whole Foods Market"]
    assert [(r["typical_amount"], r["occurrences"], r["cadence"]) for r in whole_foods] == [
        ("82.45", 3, "monthly")
    ]
    assert call("find_recurring_payments", min_occurrences=4)["recurring"] == []
    assert call("find_recurring_payments", lookback_months=1)["recurring"] == []


def test_stopped_payments_are_inactive_and_not_in_the_monthly_total(call: Caller) -> None:
    with pinned_today(date(2025, 9, 15)):
        result = call("find_recurring_payments")
    assert [(r["merchant"], r["active"]) for r in result["recurring"]] == [
        ("Landlord LLC", False),
        ("Netflix", False),
    ]
    assert result["estimated_monthly_total"] == []


def test_weekly_monthly_cost_is_rounded_half_up() -> None:
    from tools.finance.recurring import CADENCES, Pattern, _item

    weekly = next(c for c in CADENCES if c.name == "weekly")
    pattern = Pattern(weekly, 1001, 3, date(2025, 1, 1), date(2025, 1, 15), date(2025, 1, 22))
    monthly, item = _item(pattern, "USD", "Gym", None, date(2025, 1, 20))
    # 10.01 * 52 / 12 = 43.3766... -> 43.38
    assert monthly == 4338
    assert item["monthly_cost"] == "43.38"
