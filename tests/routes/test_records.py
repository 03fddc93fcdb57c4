"""The records cited sources name resolve for their owner only, as the read tools show them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import func, select

from demo_data.generator import seed_finance
from models import ChatSession, Message
from models.db import Database
from models.finance import Account, Budget, Transaction
from tests.conftest import make_user
from tests.live import LiveServer, decode
from tests.routes.test_sessions_api import add_messages
from tests.tools.conftest import (
    ALICE_ACCOUNTS,
    ALICE_BUDGETS,
    ALICE_CATEGORIES,
    ALICE_ROWS,
    BOB_ACCOUNTS,
    BOB_BUDGETS,
    BOB_CATEGORIES,
    BOB_ROWS,
    Caller,
    insert_ledger,
)
from tools.finance.clock import pinned_today

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

TODAY = date(2025, 3, 15)


@pytest.fixture
def ledger_auth(db: Database, user: tuple[int, str], frozen_today: date) -> dict[str, Any]:
    """Alice (the `user`) and Bob with the finance tests' ledgers; their ids and tokens."""
    bob, bob_token = make_user(db, "bob")
    insert_ledger(db, user[0], ALICE_ACCOUNTS, ALICE_CATEGORIES, ALICE_ROWS, ALICE_BUDGETS)
    insert_ledger(db, bob, BOB_ACCOUNTS, BOB_CATEGORIES, BOB_ROWS, BOB_BUDGETS)
    return {"alice": user[0], "bob": bob, "alice_auth": auth(user[1]), "bob_auth": auth(bob_token)}


@pytest.fixture
def frozen_today() -> Iterator[date]:
    """The views run in the test's thread (Flask's client), so the pinned day reaches them."""
    with pinned_today(TODAY) as day:
        yield day


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ids_of(db: Database, model: Any, user_id: int) -> list[int]:
    with db.read() as s:
        return list(s.scalars(select(model.id).where(model.user_id == user_id)))


def get(client: Any, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.get(path, headers=headers)
    return response.status_code, response.get_json()


# One record


def test_a_transaction_is_the_row_get_transactions_shows(
    client: Any, db: Database, ledger_auth: dict[str, Any]
) -> None:
    tool = Caller(db, ledger_auth["alice"])("get_transactions", limit=200)["transactions"]
    assert len(tool) == len(ALICE_ROWS)
    for row in tool:
        status, body = get(client, f"/api/transactions/{row['id']}", ledger_auth["alice_auth"])
        assert status == 200 and body == row


def test_an_account_is_the_row_get_account_balances_shows_with_its_id(
    client: Any, db: Database, ledger_auth: dict[str, Any]
) -> None:
    tool = Caller(db, ledger_auth["alice"])("get_account_balances")["accounts"]
    shown = [
        get(client, f"/api/accounts/{i}", ledger_auth["alice_auth"])[1]
        for i in ids_of(db, Account, ledger_auth["alice"])
    ]
    by_name = sorted(shown, key=lambda a: a["name"])
    assert [{k: v for k, v in a.items() if k != "id"} for a in by_name] == sorted(
        tool, key=lambda a: a["name"]
    )
    assert all(isinstance(a["id"], int) for a in shown)


def test_a_budget_is_the_row_get_budget_status_shows_over_its_month(
    client: Any, db: Database, ledger_auth: dict[str, Any]
) -> None:
    call = Caller(db, ledger_auth["alice"])
    march = {(r["category"], r["budget_type"]): r for r in call("get_budget_status")["budgets"]}
    for budget_id in ids_of(db, Budget, ledger_auth["alice"]):
        status, body = get(client, f"/api/budgets/{budget_id}", ledger_auth["alice_auth"])
        assert status == 200 and body["id"] == budget_id and body["month"] == "2025-03"
        row = {k: v for k, v in body.items() if k not in ("id", "month")}
        key = (row["category"], row["budget_type"])
        if key in march:
            assert row == march[key]
        else:  # the recurring Groceries budget, which March's own budget overrides
            assert key == ("Groceries", "recurring")
            assert row["spent"] == march[("Groceries", "this_month")]["spent"]
            assert row["limit"] == "200.00"


@pytest.mark.parametrize("kind", ["transactions", "budgets", "accounts"])
def test_another_users_or_an_unknown_record_is_not_found(
    client: Any, db: Database, ledger_auth: dict[str, Any], kind: str
) -> None:
    model = {"transactions": Transaction, "budgets": Budget, "accounts": Account}[kind]
    theirs = ids_of(db, model, ledger_auth["bob"])
    mine = ids_of(db, model, ledger_auth["alice"])
    assert theirs and mine
    for ident in [*theirs, max(theirs + mine) + 1, 0]:
        status, body = get(client, f"/api/{kind}/{ident}", ledger_auth["alice_auth"])
        assert status == 404, ident
        assert body["error"]["code"] == "not_found" and set(body["error"]) == {
            "code",
            "message",
            "details",
        }
    # Bob sees his own, so the 404s above were about ownership, not the ids.
    assert get(client, f"/api/{kind}/{theirs[0]}", ledger_auth["bob_auth"])[0] == 200


@pytest.mark.parametrize("ident", ["abc", "1.5", "-1", "99999999999", "1e3", "%20"])
def test_an_id_that_is_no_integer_is_not_found(
    client: Any, ledger_auth: dict[str, Any], ident: str
) -> None:
    for kind in ("transactions", "budgets", "accounts"):
        status, body = get(client, f"/api/{kind}/{ident}", ledger_auth["alice_auth"])
        assert status == 404 and body["error"]["code"] == "not_found"


def test_records_need_a_token(client: Any, ledger_auth: dict[str, Any]) -> None:
    for path in ("/api/transactions/1", "/api/budgets/1", "/api/accounts/1", "/api/transactions"):
        assert client.get(path).status_code == 401


# The rows behind a figure: txns:<query>

QUERIES = [
    {},
    {"category": "Groceries", "start_date": "2025-01-01", "end_date": "2025-01-31"},
    {"category": "groceries", "direction": "out"},
    {"category": "Uncategorized"},
    {"merchant": "pizza", "pending": "true"},
    {"account": "Euro Card"},
    {"direction": "in", "min_amount": "100"},
    {"min_amount": "20", "max_amount": "90.5", "sort": "amount_desc"},
    {"pending": "false", "start_date": "2025-03-01"},
]


def tool_input(query: dict[str, str]) -> dict[str, Any]:
    """The same filters as the tool takes them (JSON types, not URL text)."""
    out: dict[str, Any] = dict(query)
    if "pending" in out:
        out["pending"] = out["pending"] == "true"
    return out


def walk(client: Any, query: dict[str, str], headers: dict[str, str]) -> tuple[list[Any], Any]:
    """Every page of GET /api/transactions?<query>; return the rows and the first page."""
    rows: list[Any] = []
    first, cursor = None, None
    while True:
        params = {**query, "limit": "3", **({"cursor": cursor} if cursor else {})}
        status, page = get(client, f"/api/transactions?{urlencode(params)}", headers)
        assert status == 200, page
        first = first or page
        assert page["count"] == first["count"] and page["totals"] == first["totals"]
        rows += page["transactions"]
        cursor = page["next_cursor"]
        if cursor is None:
            return rows, first


@pytest.mark.parametrize("query", QUERIES, ids=[urlencode(q) or "all" for q in QUERIES])
def test_a_query_lists_what_get_transactions_finds_and_totals_add_up(
    client: Any, db: Database, ledger_auth: dict[str, Any], query: dict[str, str]
) -> None:
    rows, first = walk(client, query, ledger_auth["alice_auth"])
    tool = Caller(db, ledger_auth["alice"])("get_transactions", limit=200, **tool_input(query))
    assert rows == tool["transactions"] and first["totals"] == tool["totals"]
    assert first["count"] == len(rows) == tool["count"]
    assert len({r["id"] for r in rows}) == len(rows)
    sums: dict[str, list[Decimal]] = {}
    for row in rows:
        amount = Decimal(row["amount"])
        out, in_, n = sums.setdefault(row["currency"], [Decimal(0), Decimal(0), Decimal(0)])
        sums[row["currency"]] = [out + min(amount, 0), in_ + max(amount, 0), n + 1]
    assert {
        t["currency"]: [Decimal(t["money_out"]), Decimal(t["money_in"]), t["count"]]
        for t in first["totals"]
    } == sums
    for total in first["totals"]:
        assert Decimal(total["net"]) == sum(sums[total["currency"]][:2])


def test_a_query_never_reaches_another_users_rows(
    client: Any, db: Database, ledger_auth: dict[str, Any]
) -> None:
    mine = set(ids_of(db, Transaction, ledger_auth["alice"]))
    rows, _ = walk(client, {"merchant": "netflix"}, ledger_auth["alice_auth"])
    assert rows and {r["id"] for r in rows} <= mine
    # Bob's own category is not Alice's: nothing of his is named or listed.
    status, body = get(client, "/api/transactions?category=Hobbies", ledger_auth["alice_auth"])
    assert status == 422
    named = body["error"]["details"]["category"][0].split("Use one of:")[1]
    assert "Hobbies" not in named and "Groceries" in named


BAD_QUERIES = [
    ("start_date=2025-13-01", "start_date"),
    ("start_date=yesterday", "start_date"),
    ("start_date=2025-03-01&end_date=2025-02-01", "end_date"),
    ("direction=sideways", "direction"),
    ("pending=yes", "pending"),
    ("pending=1", "pending"),
    ("min_amount=-5", "min_amount"),
    ("max_amount=1e3", "max_amount"),
    ("sort=random", "sort"),
    ("limit=0", "limit"),
    ("limit=101", "limit"),
    ("limit=ten", "limit"),
    ("category=", "category"),
    ("category=Nope", "category"),
    ("account=Nope", "account"),
    ("merchant=a%00b", "merchant"),
    ("cursor=not-a-cursor", "cursor"),
    ("category=Rent&category=Groceries", "category"),
    ("user_id=2", "user_id"),
    ("q=x", "q"),
]


@pytest.mark.parametrize("query,field", BAD_QUERIES)
def test_a_bad_query_is_422_naming_the_parameter_and_changes_nothing(
    client: Any, db: Database, ledger_auth: dict[str, Any], query: str, field: str
) -> None:
    before = rows_in(db)
    status, body = get(client, f"/api/transactions?{query}", ledger_auth["alice_auth"])
    assert status == 422, body
    assert body["error"]["code"] == "validation_error" and field in body["error"]["details"]
    assert rows_in(db) == before


def test_a_cursor_continues_only_its_own_query(client: Any, ledger_auth: dict[str, Any]) -> None:
    status, page = get(client, "/api/transactions?limit=2", ledger_auth["alice_auth"])
    assert status == 200 and page["next_cursor"]
    cursor = page["next_cursor"]
    status, body = get(
        client,
        f"/api/transactions?limit=2&direction=out&cursor={cursor}",
        ledger_auth["alice_auth"],
    )
    assert status == 422 and "cursor" in body["error"]["details"]
    status, body = get(
        client, f"/api/transactions?limit=2&cursor={cursor}", ledger_auth["bob_auth"]
    )
    assert status == 422, "another user's cursor continues nothing"


def rows_in(db: Database) -> tuple[int, ...]:
    with db.read() as s:
        return tuple(
            s.scalar(select(func.count()).select_from(m)) or 0
            for m in (Transaction, Budget, Message, ChatSession)
        )


# Stored answers keep their citations

CITATION = {
    "type": "search_result_location",
    "source": "txn:3",
    "title": "2025-01-07 · Whole Foods Market · -82.45 USD",
    "cited_text": "2025-01-07 Whole Foods Market -82.45 USD",
    "search_result_index": 0,
    "start_block_index": 0,
    "end_block_index": 1,
}


def test_a_stored_answer_keeps_its_citations_in_every_view(
    client: Any, db: Database, ledger_auth: dict[str, Any]
) -> None:
    headers = ledger_auth["alice_auth"]
    sid = client.post("/api/sessions", headers=headers).get_json()["id"]
    cited = {"type": "text", "text": "82.45 USD at Whole Foods", "citations": [CITATION]}
    answer = [{"type": "text", "text": "You spent "}, cited, {"type": "text", "text": "."}]
    add_messages(db, sid, ("user", [{"type": "text", "text": "Groceries?"}]), ("assistant", answer))
    shown = client.get(f"/api/sessions/{sid}", headers=headers).get_json()["messages"]
    assert shown[1]["content"] == answer
    paged = client.get(f"/api/sessions/{sid}/messages", headers=headers).get_json()["messages"]
    assert paged[1]["content"] == answer
    exported = client.get(f"/api/sessions/{sid}/export?format=json", headers=headers).get_json()
    assert exported["messages"][1]["content"] == answer
    # And the cited source resolves for its owner.
    assert get(client, "/api/transactions/3", headers)[1]["amount"] == "-82.45"


# End to end: what the demo model cites resolves through these endpoints

URLS = {"txn": "/api/transactions/", "budget": "/api/budgets/", "account": "/api/accounts/"}


def source_url(source: str) -> str:
    """The contract's URL of a source id."""
    kind, _, rest = source.partition(":")
    return f"/api/transactions?{rest}" if kind == "txns" else URLS[kind] + rest


@pytest.mark.parametrize(
    "question",
    ["What did I spend on groceries last month?", "How am I doing against my budgets?"],
)
def test_every_source_a_demo_answer_cites_resolves_for_its_owner_only(
    live: LiveServer, db: Database, user: tuple[int, str], question: str
) -> None:
    seed_finance(db, user[0], months=3, seed=5)
    stranger = auth(make_user(db, "mallory")[1])
    started = live.start_turn(question)
    events = decode(live.read_events(started["events_url"]))
    cited = [
        c
        for _, kind, data in events
        if kind == "block_end" and data.get("type") == "text"
        for c in data.get("citations") or []
    ]
    assert cited, "the demo's answer cites its figures"
    for source in {c["source"] for c in cited}:
        mine = live.get(source_url(source))
        assert mine.status_code == 200, (source, mine.text)
        theirs = live.http.get(source_url(source), headers=stranger)
        if source.startswith("txns:"):
            page = mine.json()
            assert page["count"] >= len(page["transactions"]) > 0
            assert theirs.status_code in (200, 422)
            if theirs.status_code == 200:
                assert theirs.json()["count"] == 0, "a stranger's query finds none of them"
        else:
            assert theirs.status_code == 404, source
