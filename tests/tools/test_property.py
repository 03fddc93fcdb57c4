"""Property: spending summary totals equal the sum of the matching get_transactions rows that
the money rule (worked out again in tests/tools/money_oracle.py) counts as spending."""

from __future__ import annotations

import itertools
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.db import Database
from tests.conftest import make_user
from tests.tools.conftest import Caller, insert_ledger
from tests.tools.money_oracle import Money, flows

CATEGORIES = [("Food", "expense"), ("Fun", "expense"), ("Pay", "income"), ("Move", "transfer")]
ACCOUNTS = [
    ("Main", "checking", "USD", 0),
    ("Euro", "checking", "EUR", 0),
    ("Yen", "checking", "JPY", 0),
    ("Spare", "savings", "USD", 0),
]
CURRENCY = {"Main": "USD", "Euro": "EUR", "Yen": "JPY", "Spare": "USD"}
START = date(2025, 1, 1)
_names = itertools.count()

rows_strategy = st.lists(
    st.tuples(
        st.integers(0, 89),
        st.sampled_from(list(CURRENCY)),
        # A few shared amounts, so that opposite rows (transfer legs, refunds) come up.
        st.one_of(
            st.integers(-500_000, 500_000).filter(bool),
            st.sampled_from([-2500, 2500, -1000, 1000]),
        ),
        st.sampled_from(["Shop A", "Shop B", "Cafe"]),
        st.sampled_from([None, "Food", "Fun", "Pay", "Move"]),
        st.booleans(),
    ),
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=rows_strategy,
    first=st.integers(0, 89),
    length=st.integers(0, 89),
    category=st.sampled_from([None, "Food", "fun", "Pay", "Move", "Uncategorized"]),
    group_by=st.sampled_from(["category", "merchant", "month", "week"]),
)
def test_summary_matches_transactions(
    db: Database,
    rows: list[tuple[int, str, int, str, str | None, bool]],
    first: int,
    length: int,
    category: str | None,
    group_by: str,
) -> None:
    # A fresh user per example: other examples' rows in the same database must not leak in.
    user_id = make_user(db, f"prop{next(_names)}")[0]
    ledger = [
        (
            (START + timedelta(days=d)).isoformat(),
            acct,
            amount,
            CURRENCY[acct],
            merchant,
            cat,
            pending,
        )
        for d, acct, amount, merchant, cat, pending in rows
    ]
    insert_ledger(db, user_id, ACCOUNTS, CATEGORIES, ledger, [])
    call = Caller(db, user_id)
    period = {
        "start_date": (START + timedelta(days=first)).isoformat(),
        "end_date": (START + timedelta(days=first + length)).isoformat(),
    }
    filters = {**period, **({"category": category} if category else {})}

    everything = call("get_transactions", limit=200)["transactions"]
    kinds = dict(CATEGORIES)
    rule = flows(
        [
            Money(
                r["id"],
                date.fromisoformat(r["date"]),
                int(Decimal(r["amount"]).scaleb(0 if r["currency"] == "JPY" else 2)),
                r["currency"],
                r["account"],
                r["merchant"],
                kinds.get(r["category"]),
            )
            for r in everything
        ]
    )
    listed = call("get_transactions", limit=200, **filters)
    assert listed["has_more"] is False
    expected: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, int] = defaultdict(int)
    for row in listed["transactions"]:
        assert row["flow"] == rule[row["id"]], (row, rule)
        if rule[row["id"]] in ("spending", "refund"):
            expected[row["currency"]] -= Decimal(row["amount"])
            counts[row["currency"]] += 1

    summary = call("get_spending_summary", group_by=group_by, top_n=50, **filters)
    got = {c["currency"]: Decimal(c["total_spent"]) for c in summary["currencies"]}
    assert got == dict(expected)
    assert {c["currency"]: c["count"] for c in summary["currencies"]} == dict(counts)
    for block in summary["currencies"]:
        assert sum(Decimal(g["spent"]) for g in block["groups"]) == Decimal(block["total_spent"])
        if block["currency"] == "JPY":
            assert "." not in block["total_spent"]  # yen has no minor unit
    # Net totals of get_transactions are the plain signed sum of its rows.
    for total in listed["totals"]:
        same = [
            Decimal(r["amount"])
            for r in listed["transactions"]
            if r["currency"] == total["currency"]
        ]
        assert Decimal(total["net"]) == sum(same)
        assert total["count"] == len(same)
