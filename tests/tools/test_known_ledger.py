"""The known ledger (tests/tools/known_ledger.py), built over the API, against its true figures:
through the tools, through /mcp (tools/call), and through the demo model's answers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.backends import migrated_postgres
from tests.conftest import make_user
from tests.demo_model.conftest import Demo
from tests.tools import known_ledger as k
from tests.tools.conftest import Caller
from tools.finance.clock import pinned_today


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(
    request: pytest.FixtureRequest,
    migrated_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """The ledger's database, on SQLite and on PostgreSQL (the rule is SQL: both must agree)."""
    if request.param == "postgresql":
        with migrated_postgres() as url:
            yield url
        return
    folder = tmp_path_factory.mktemp("known")
    shutil.copy(migrated_template, folder / "known.db")
    yield f"sqlite:///{folder / 'known.db'}"


@pytest.fixture(scope="module")
def built(
    database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Caller, dict[str, str], Any]]:
    """The ledger posted over the API once for the module: a tool caller for its user, their
    auth headers and the test client."""
    from app import create_app

    folder = tmp_path_factory.mktemp("spool")
    config = {
        "TESTING": True,
        "DATABASE_URL": database,
        "ANTHROPIC_API_KEY": None,
        "SECRET_KEY": "test-secret",
        "DEMO_EVENT_DELAY": 0.0,
        "EVENT_SPOOL_DIR": str(folder / "spool"),
    }
    app = create_app(config)
    client, db = app.test_client(), app.extensions["db"]
    user_id, token = make_user(db, "known")
    h = {"Authorization": f"Bearer {token}"}
    ids = {}
    for name, kind, currency, opening in k.ACCOUNTS:
        body = {"name": name, "kind": kind, "currency": currency, "balance": str(opening)}
        ids[name] = client.post("/api/accounts", json=body, headers=h).json["id"]
    for name, kind in k.CATEGORIES:
        made = client.post("/api/categories", json={"name": name, "kind": kind}, headers=h)
        assert made.status_code == 201
    for r in k.rows():
        body = {"account_id": ids[r.account], "date": r.day.isoformat(),
                "amount": str(r.amount), "merchant": r.merchant,
                **({"category": r.category} if r.category else {})}  # fmt: skip
        assert client.post("/api/transactions", json=body, headers=h).status_code == 201
    with pinned_today(k.TODAY):
        yield Caller(db, user_id), h, client
    app.extensions["engine"].close()
    db.dispose()


@pytest.fixture(autouse=True)
def frozen_today() -> Iterator[date]:
    """The ledger is seen on its own day (this replaces the folder's 2025-03-15)."""
    with pinned_today(k.TODAY) as day:
        yield day


def mcp(client: Any, h: dict[str, str], name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool over /mcp as an MCP client does; return its decoded result."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}  # fmt: skip
    reply = client.post("/mcp", json=body, headers=h).json
    assert reply["result"]["isError"] is False, reply
    decoded: dict[str, Any] = json.loads(reply["result"]["content"][0]["text"])
    return decoded


def money(value: Decimal) -> str:
    return f"{value:.2f}"


def by_currency(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {b["currency"]: b for b in blocks}


def test_the_new_read_tools_are_served_over_mcp(built: tuple[Caller, dict[str, str], Any]) -> None:
    _, h, client = built
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    tools = client.post("/mcp", json=body, headers=h).json["result"]["tools"]
    read_only = {t["name"] for t in tools if t.get("annotations", {}).get("readOnlyHint")}
    assert {"get_cash_flow", "forecast_balance", "get_upcoming_bills"} <= read_only
    assert "set_budget" not in read_only  # a write: listed, but it waits for the user's approval


def test_money_in_and_out_by_the_rule(built: tuple[Caller, dict[str, str], Any]) -> None:
    call, h, client = built
    flow = call("get_cash_flow")
    assert flow == mcp(client, h, "get_cash_flow")  # /mcp gives the same truth
    assert flow["period"] == {"from": "2025-01-01", "to": "2026-06-30", "label": "all history"}
    gbp, eur = by_currency(flow["currencies"])["GBP"], by_currency(flow["currencies"])["EUR"]
    # Salary and freelance carry no category: income all the same.
    assert gbp["income"] == money(k.total("income", "GBP")) == "45800.00"
    assert eur["income"] == money(k.total("income", "EUR")) == "150.00"
    # The untagged return and the tagged one are refunds; transfers count in neither.
    assert gbp["refunds"] == money(k.total("refund", "GBP")) == "65.00"
    spent = -k.total("spending", "GBP")
    assert gbp["spending_before_refunds"] == money(spent)
    assert gbp["spending"] == money(spent - Decimal(65))
    assert gbp["net"] == money(Decimal(45800) - spent + Decimal(65))
    moved = [r for r in k.rows() if r.kind == "transfer"]
    assert gbp["transfers_excluded"]["count"] == len(moved)
    summary = call("get_spending_summary")
    assert summary["period"]["label"] == "all history"
    usd_like = by_currency(summary["currencies"])
    assert usd_like["GBP"]["total_spent"] == gbp["spending"]
    assert usd_like["GBP"]["spent_before_refunds"] == gbp["spending_before_refunds"]
    assert usd_like["EUR"]["total_spent"] == money(-k.total("spending", "EUR")) == "540.00"


def test_each_row_is_what_the_rule_says_and_a_correction_sticks(
    built: tuple[Caller, dict[str, str], Any],
) -> None:
    call, h, client = built
    listed = call("get_transactions", limit=200, sort="date_asc")
    assert listed["count"] == len(k.rows()) and listed["period"]["label"] == "all history"
    truth = {(r.day.isoformat(), r.account, money(r.amount)): r.kind for r in k.rows()}
    rows = call("get_transactions", limit=200)["transactions"]
    rows += call("get_transactions", limit=200, sort="date_asc")["transactions"]
    for row in rows:
        assert row["flow"] == truth[(row["date"], row["account"], row["amount"])], row
    salary = next(r for r in rows if r["merchant"] == "Globex Payroll")
    marked = client.put(
        f"/api/transactions/{salary['id']}/flow", json={"mark": "refund"}, headers=h
    )
    assert marked.status_code == 200
    income = by_currency(call("get_cash_flow")["currencies"])["GBP"]["income"]
    assert income == money(k.total("income", "GBP") - Decimal(2500))
    assert client.delete(f"/api/transactions/{salary['id']}/flow", headers=h).status_code == 200
    assert by_currency(call("get_cash_flow")["currencies"])["GBP"]["income"] == "45800.00"


def test_balances_keep_their_sign(built: tuple[Caller, dict[str, str], Any]) -> None:
    call, _, _ = built
    accounts = {a["name"]: a["balance"] for a in call("get_account_balances")["accounts"]}
    assert accounts == {name: money(k.balance(name)) for name, _, _, _ in k.ACCOUNTS}
    assert accounts["Euro"] == "-190.00"  # overdrawn: 200 - 18 x 30 + 150


def test_recurring_series_precision_and_recall(built: tuple[Caller, dict[str, str], Any]) -> None:
    call, h, client = built
    found = call("find_recurring_payments")
    assert found == mcp(client, h, "find_recurring_payments")
    named = {s["name"]: s for s in found["recurring"]}
    right = set(named) & set(k.SERIES)
    precision, recall = len(right) / len(named), len(right) / len(k.SERIES)
    print(f"known ledger: precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.95 and recall >= 0.95, sorted(named)
    for name, (cadence, next_date, amount) in k.SERIES.items():
        s = named[name]
        assert (s["cadence"], s["next_expected_date"], s["next_expected_amount"]) == (
            cadence, next_date, amount
        ), name  # fmt: skip
    assert [c["text"] for c in named["Netflix"]["price_changes"]] == [
        "10.99 -> 12.99 GBP since January 2026"
    ]
    assert named["Globex Payroll"]["direction"] == "in"
    moved = call("find_recurring_payments", include_transfers=True)["recurring"]
    assert {"To Savings", "From Main"} <= {s["name"] for s in moved if s["flow"] == "transfer"}


def test_a_forecast_is_the_truth_and_names_its_series(
    built: tuple[Caller, dict[str, str], Any],
) -> None:
    call, h, client = built
    day = k.FORECAST_DAY.isoformat()
    result = call("forecast_balance", date=day)
    assert result == mcp(client, h, "forecast_balance", date=day)
    projected = {a["name"]: Decimal(a["projected_balance"]) for a in result["accounts"]}
    for name, truth in k.forecast().items():
        assert abs(projected[name] - truth) <= abs(truth) / 100, name  # within 1%
        assert projected[name] == truth, name  # and here exactly
    used = {s["name"] for s in result["series_used"]}
    assert {"Oakwood Lettings", "Globex Payroll", "Netflix", "Gym Berlin", "To Savings"} <= used
    assert "Card payment" not in used  # a varying transfer pays for spending no series projects


def test_the_demo_answers_from_the_same_truth(built: tuple[Caller, dict[str, str], Any]) -> None:
    call, _, _ = built

    def ask(question: str) -> str:
        return Demo(call.db, call.user_id, k.TODAY).ask(question).text

    text = ask("How much did I earn?")
    assert "45,800.00 GBP" in text and "150.00 EUR" in text and "all your history" in text
    assert "-190.00 EUR" in ask("What are my account balances?")
    text = ask("What will my balance be on 31 July?")
    for name, truth in k.forecast().items():
        currency = next(c for n, _, c, _ in k.ACCOUNTS if n == name)
        shown = f"{'-' if truth < 0 else ''}{abs(truth):,.2f} {currency}"
        assert f"expected on {day(k.FORECAST_DAY)}: **{shown}**" in text, (name, text)
    assert "2026-07-01" in ask("When is my next rent?")
    assert "up from 10.99 GBP since January 2026" in ask("What went up in price?")
    text = ask("Money in vs out")
    assert "45,800.00 GBP" in text and f"{-k.total('spending', 'GBP') - 65:,.2f} GBP" in text


def day(value: Any) -> str:
    return str(value.isoformat())
