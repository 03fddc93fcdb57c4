"""find_recurring_payments: the detector on its own, then the tool on the hand-built ledger."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import select

from models.db import Database
from models.finance import RecurringChoice
from tests.tools.conftest import Caller
from tools.finance.clock import pinned_today
from tools.finance.series import CADENCES, Row, Series, detect, detect_all, merchant_key


def days(*iso: str) -> list[date]:
    return [date.fromisoformat(d) for d in iso]


def rows(charges: list[tuple[date, int]], merchant: str = "Shop") -> list[Row]:
    return [Row(i, d, -a, merchant, "USD") for i, (d, a) in enumerate(charges, 1)]


def found(charges: list[tuple[date, int]], tolerance: int = 10) -> Series | None:
    return detect(rows(sorted(charges)), tolerance)


def test_weekly_with_an_outlier_amount() -> None:
    start = date(2025, 1, 6)
    charges = [(start + timedelta(weeks=i), 1200) for i in range(5)]
    charges.append((date(2025, 1, 17), 9900))  # a one-off at the same merchant
    series = found(charges)
    assert series is not None
    assert series.cadence.name == "weekly"
    assert len(series.rows) == 5
    assert series.typical == 1200 and series.expected == 1200
    assert series.next_expected(date(2025, 2, 4)) == date(2025, 2, 10)


def test_biweekly_quarterly_and_yearly() -> None:
    biweekly = found([(d, 500) for d in days("2025-01-03", "2025-01-17", "2025-01-31")], 0)
    assert biweekly is not None and biweekly.cadence.name == "biweekly"
    assert biweekly.next_expected(date(2025, 2, 1)) == date(2025, 2, 14)
    quarterly = found([(d, 500) for d in days("2024-01-15", "2024-04-15", "2024-07-15")], 0)
    assert quarterly is not None and quarterly.cadence.name == "quarterly"
    assert quarterly.next_expected(date(2024, 8, 1)) == date(2024, 10, 15)
    # A yearly charge seen only twice is a series when those are all the merchant's rows.
    yearly = found([(d, 9900) for d in days("2023-06-01", "2024-06-02")], 0)
    assert yearly is not None and yearly.cadence.name == "yearly"
    assert yearly.next_expected(date(2024, 7, 1)) == date(2025, 6, 2)


def test_two_yearly_looking_charges_among_other_purchases_are_not_a_series() -> None:
    charges = [(d, 9900) for d in days("2023-06-01", "2024-06-02")]
    charges += [(date(2023, 8, 3), 1500), (date(2024, 1, 9), 4200), (date(2024, 3, 2), 800)]
    assert found(charges, 0) is None


def test_monthly_on_the_31st_survives_short_months() -> None:
    charges = [(d, 999) for d in days("2025-01-31", "2025-02-28", "2025-03-31")]
    series = found(charges)
    assert series is not None and series.cadence.name == "monthly"
    assert series.next_expected(date(2025, 4, 1)) == date(2025, 4, 30)
    later = found([*charges, (date(2025, 4, 30), 999)])
    assert later is not None and later.next_expected(date(2025, 5, 1)) == date(2025, 5, 31)


def test_irregular_or_too_few_or_varying_is_not_recurring() -> None:
    irregular = days("2025-01-01", "2025-01-04", "2025-01-24", "2025-02-02", "2025-03-14")
    assert found([(d, 1000) for d in irregular]) is None
    assert found([(d, 1000) for d in days("2025-01-01", "2025-02-01")]) is None
    monthly = days("2025-01-01", "2025-02-01", "2025-03-01")
    assert found(list(zip(monthly, [1000, 1500, 2200], strict=True))) is None
    # Three similar amounts a month apart: too little to call a varying bill a series.
    assert found(list(zip(monthly, [1000, 1050, 950], strict=True)), 4) is None
    assert found(list(zip(monthly, [1000, 1050, 1000], strict=True)), 5) is not None


def test_a_varying_monthly_bill_is_a_series_and_a_varying_weekly_habit_is_not() -> None:
    months = days("2025-01-15", "2025-02-14", "2025-03-17", "2025-04-15", "2025-05-15")
    bill = found(list(zip(months, [6100, 8400, 7200, 5600, 9000], strict=True)))
    assert bill is not None and bill.varies and bill.cadence.name == "monthly"
    assert bill.expected == round((7200 + 5600 + 9000) / 3)  # a varying bill: its recent average
    weeks = [date(2025, 1, 6) + timedelta(weeks=i) for i in range(8)]
    shopping = [4100, 8800, 5200, 6900, 4400, 9100, 7000, 5100]
    assert found(list(zip(weeks, shopping, strict=True))) is None


def test_a_price_change_that_holds_is_listed_with_its_date() -> None:
    months = [date(2025, m, 5) for m in range(1, 9)]
    amounts = [1549] * 5 + [1799] * 3
    series = found(list(zip(months, amounts, strict=True)))
    assert series is not None and not series.varies
    assert [(c.before, c.after, c.since) for c in series.changes] == [
        (1549, 1799, date(2025, 6, 5))
    ]
    assert series.expected == 1799 and series.typical == 1549


def test_small_drift_is_no_price_change() -> None:
    months = [date(2025, m, 10) for m in range(1, 10)]
    drifting = [2500 + 15 * i for i in range(9)]  # +0.6 % a month
    series = found(list(zip(months, drifting, strict=True)))
    assert series is not None and series.changes == ()


def test_one_late_charge_is_tolerated_and_a_skipped_month_too_but_not_a_mess() -> None:
    base = days("2025-01-01", "2025-02-01", "2025-03-01", "2025-04-01", "2025-05-01", "2025-07-01")
    assert found([(d, 700) for d in base]) is not None  # June skipped
    late = days("2025-01-01", "2025-02-01", "2025-03-20", "2025-05-20", "2025-06-03")
    assert found([(d, 700) for d in late]) is None


def test_merchant_spellings_are_one_merchant() -> None:
    names = ["NETFLIX.COM", "Netflix", "NETFLIX *4821", "Netflix Inc.", "POS NETFLIX 0425"]
    assert {merchant_key(n) for n in names} == {"netflix"}
    assert merchant_key("Café de Flore") == "cafe de flore"
    spelled = [Row(i, date(2025, i, 3), -999, name, "USD") for i, name in enumerate(names, start=1)]
    (series,) = detect_all(spelled, 10, None)
    assert len(series.rows) == 5 and series.key == "netflix"


def test_money_in_is_a_series_too_and_each_direction_has_its_own_id() -> None:
    pay = [Row(i, date(2025, i, 25), 400000, "Acme Payroll", "USD") for i in range(1, 5)]
    back = [Row(10 + i, date(2025, i, 26), -400000, "Acme Payroll", "USD") for i in range(1, 5)]
    series = {s.direction: s for s in detect_all(pay + back, 10, None)}
    assert set(series) == {"in", "out"}
    assert series["in"].id != series["out"].id
    assert series["in"].cadence.name == "monthly"


def test_cadences_need_their_own_fewest_charges() -> None:
    assert {c.name: c.fewest for c in CADENCES} == {
        "weekly": 4,
        "biweekly": 3,
        "monthly": 3,
        "quarterly": 3,
        "yearly": 2,
    }


def test_tool_finds_rent_netflix_and_nothing_from_three_grocery_trips(call: Caller) -> None:
    result = call("find_recurring_payments")
    assert result["period"] == {"from": "2025-01-01", "to": "2025-03-15", "label": "all history"}
    assert result["count"] == 2
    rent, netflix = result["recurring"]
    assert {k: rent[k] for k in ("name", "direction", "cadence", "typical_amount")} == {
        "name": "Landlord LLC",
        "direction": "out",
        "cadence": "monthly",
        "typical_amount": "1500.00",
    }
    sources = [b["source"] for b in call.outcome("find_recurring_payments").sources]
    assert sources[0] == "txns:ids=1%2C8%2C16"  # the rent's three rows
    assert rent["next_expected_date"] == "2025-04-01"
    assert rent["next_expected_amount"] == "1500.00"
    assert netflix["name"] == "Netflix" and netflix["next_expected_date"] == "2025-04-05"
    assert netflix["status"] == "detected" and netflix["price_changes"] == []
    assert result["estimated_monthly_total"] == [{"currency": "USD", "amount": "1515.49"}]
    # The salary came twice: a monthly series needs three.
    assert result["estimated_monthly_income"] == []
    paid = call("find_recurring_payments", min_occurrences=2, direction="in")
    assert [r["name"] for r in paid["recurring"]] == ["Acme Payroll"]
    assert paid["estimated_monthly_income"] == [{"currency": "USD", "amount": "4000.00"}]


def test_filters_tolerance_occurrences_and_lookback_change_the_answer(call: Caller) -> None:
    # Whole Foods charged 82.45, 91.20 and 82.45: 10.6 % apart, so it needs 11 % tolerance.
    wider = call("find_recurring_payments", amount_tolerance_pct=11)
    whole_foods = [r for r in wider["recurring"] if r["merchant"] == "Whole Foods Market"]
    assert [(r["typical_amount"], r["occurrences"], r["cadence"]) for r in whole_foods] == [
        ("82.45", 3, "monthly")
    ]
    assert call("find_recurring_payments", min_occurrences=4)["recurring"] == []
    assert call("find_recurring_payments", lookback_months=1)["recurring"] == []
    only = call("find_recurring_payments", category="subscriptions")
    assert [r["name"] for r in only["recurring"]] == ["Netflix"]
    assert only["estimated_monthly_total"] == [{"currency": "USD", "amount": "15.49"}]


def test_stopped_payments_are_inactive_and_not_in_the_monthly_total(call: Caller) -> None:
    with pinned_today(date(2025, 9, 15)):
        result = call("find_recurring_payments")
    assert [(r["merchant"], r["active"]) for r in result["recurring"]] == [
        ("Landlord LLC", False),
        ("Netflix", False),
    ]
    assert result["estimated_monthly_total"] == []


def test_a_users_choices_rename_confirm_and_dismiss(call: Caller, db: Database) -> None:
    rent, netflix = call("find_recurring_payments")["recurring"]
    with db.transaction() as s:
        s.add(RecurringChoice(user_id=call.user_id, series_id=rent["series_id"], name="Rent"))
        s.add(
            RecurringChoice(
                user_id=call.user_id, series_id=netflix["series_id"], status="dismissed"
            )
        )
    result = call("find_recurring_payments")
    assert [(r["name"], r["status"]) for r in result["recurring"]] == [("Rent", "detected")]
    assert result["estimated_monthly_total"] == [{"currency": "USD", "amount": "1500.00"}]
    listed = call("find_recurring_payments", include_dismissed=True)
    assert [(r["name"], r["status"]) for r in listed["recurring"]] == [
        ("Rent", "detected"),
        ("Netflix", "dismissed"),
    ]
    with db.read() as s:
        assert len(s.scalars(select(RecurringChoice)).all()) == 2


def test_weekly_monthly_cost_is_rounded_half_up() -> None:
    weekly = next(c for c in CADENCES if c.name == "weekly")
    series = Series("s", "gym", "out", "USD", weekly, (), 1001, 1001, False)
    # 10.01 * 52 / 12 = 43.3766... -> 43.38
    assert series.monthly() == 4338
