"""Places: the records carry no city or country, so the demo model says so, never guesses one."""

from __future__ import annotations

from decimal import Decimal

from tests.demo_model.conftest import Seeded
from tests.demo_model.oracle import Oracle, span


def test_spending_in_a_city_is_answered_honestly_with_per_currency_totals(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend in Paris?")
    assert "no place" in turn.text and "Paris" in turn.text
    # No period named: all of the history, from the first transaction (asked for first).
    first, call = [args for name, args, _ in turn.calls]
    assert first == {"sort": "date_asc", "limit": 1}
    period = span(call["start_date"], call["end_date"])
    assert period == span("2024-04-01", "2025-09-20")
    expected = Oracle(year).total(period)
    assert expected  # the demo year has spending to offer
    for amount, currency in expected:
        assert f"{amount:,.2f} {currency}" in turn.text
    assert [name for name, _, _ in turn.calls] == ["get_transactions", "get_spending_summary"]
    assert Decimal(0) not in {a for a, _ in expected}
