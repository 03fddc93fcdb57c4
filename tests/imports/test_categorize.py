"""Imported rows left uncategorized: the assistant proposes categories, the user approves."""

from __future__ import annotations

import io
from typing import Any

import pytest

from tests.helpers import text_of
from tests.live import LiveServer, decode

ASK = "Categorise my imported transactions"
STATEMENT = (
    b"Date,Payee,Amount\n"
    b"2026-10-03,Copper Kettle Tea Room,-18.75\n"
    b"2026-10-04,Sunrise Supermarket,-30.00\n"
    b"2026-10-05,Mystery Shop,-5.00\n"
)


@pytest.fixture
def imported(live: LiveServer) -> dict[str, int | None]:
    """Alice's history (rows entered by hand) and a committed statement; its rows by payee."""
    for name in ("Restaurants", "Groceries"):
        assert live.post("/api/categories", json={"name": name}).status_code == 201
    account = live.post(
        "/api/accounts", json={"name": "Checking", "kind": "checking", "currency": "USD"}
    ).json()["id"]
    for merchant, category in (
        ("Copper Kettle Tea Room", "Restaurants"),
        ("Green Grocer", "Groceries"),
        ("Sunrise Supermarket", None),  # entered by hand: not an imported row
    ):
        row = {"account_id": account, "date": "2026-09-01", "amount": "-10.00"}
        added = live.post(
            "/api/transactions", json={**row, "merchant": merchant, "category": category}
        )
        assert added.status_code == 201, added.text
    files = {"file": ("bank.csv", io.BytesIO(STATEMENT))}
    draft = live.post("/api/imports", files=files, data={"account_id": str(account)})
    assert draft.status_code == 201, draft.text
    assert live.post(f"/api/imports/{draft.json()['id']}/commit").json()["added"] == 3
    return categories(live)


def categories(live: LiveServer) -> dict[str, str | None]:
    """Alice's transactions' categories, by merchant (the statement's rows and her history)."""
    rows = live.get("/api/transactions?limit=100").json()["transactions"]
    return {r["merchant"]: r["category"] for r in rows if r["date"] >= "2026-10-01"}


def test_the_imported_filter_selects_exactly_the_statements_rows(
    live: LiveServer, imported: dict[str, str | None]
) -> None:
    rows = live.get("/api/transactions?imported=true&category=Uncategorized").json()
    assert sorted(r["merchant"] for r in rows["transactions"]) == sorted(imported)
    others = live.get("/api/transactions?imported=false").json()["transactions"]
    assert [r["date"] for r in others] == ["2026-09-01"] * 3


def ask(live: LiveServer) -> tuple[str, dict[str, Any]]:
    """Ask for categories; return the paused turn's id and its one approval request."""
    turn = live.start_turn(ASK)
    events = decode(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
    assert events[-1][2]["status"] == "awaiting_approval", events[-3:]
    [request] = [d for _, kind, d in events if kind == "approval_requested"]
    return turn["turn_id"], request


def decide(live: LiveServer, turn_id: str, request: dict[str, Any], approved: bool) -> str:
    """Approve or decline; return the text of the turn that goes on."""
    body = {"tool_use_id": request["tool_use_id"], "approved": approved}
    decided = live.post(f"/api/turns/{turn_id}/approvals", json=body)
    assert decided.status_code == 200, decided.text
    goes_on = decided.json()["continuation_turn_id"]
    events = decode(live.read_events(f"/api/turns/{goes_on}/events"))
    assert events[-1][2]["status"] == "completed", events[-3:]
    return text_of(events)


def test_approved_proposals_categorise_the_imported_rows(
    live: LiveServer, imported: dict[str, str | None]
) -> None:
    assert set(imported.values()) == {None}
    turn_id, request = ask(live)
    assert request["name"] == "categorize_transactions"
    preview = request["preview"]
    assert preview["summary"] == "Categorize 2 transactions: 1 to Groceries, 1 to Restaurants"
    assert [(c["before"], c["after"]) for c in preview["changes"]] == [
        ("Uncategorized", "Groceries"),
        ("Uncategorized", "Restaurants"),
    ]
    assert categories(live) == imported, "nothing changes before the approval"
    text = decide(live, turn_id, request, approved=True)
    hand = live.get("/api/transactions?imported=false&category=Uncategorized").json()
    assert [r["merchant"] for r in hand["transactions"]] == ["Sunrise Supermarket"]
    assert categories(live) == {
        "Copper Kettle Tea Room": "Restaurants",  # the merchant's own history
        "Sunrise Supermarket": "Groceries",  # a word of its name
        "Mystery Shop": None,  # nothing to go on: left alone
    }
    assert "Done: I categorized 2 transactions: 1 to **Groceries**, 1 to **Restaurants**." in text
    assert "I left 1 transaction uncategorized" in text and "Mystery Shop" in text


def test_declined_proposals_change_nothing(
    live: LiveServer, imported: dict[str, str | None]
) -> None:
    turn_id, request = ask(live)
    text = decide(live, turn_id, request, approved=False)
    assert categories(live) == imported
    assert "I did not make that change" in text


def test_nothing_to_sort_asks_for_nothing(live: LiveServer) -> None:
    turn = live.start_turn("Sort the uncategorised rows into categories")
    events = decode(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
    assert events[-1][2]["status"] == "completed"
    assert not [d for _, kind, d in events if kind == "approval_requested"]
    assert "nothing to sort" in text_of(events)
