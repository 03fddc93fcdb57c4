"""Corrections to the money rule over the API: a transaction's mark, the word on a series."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_user

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _ledger(client: Any, h: dict[str, str]) -> dict[str, int]:
    """Two EUR accounts; a move between them, a return, a salary and a card purchase."""
    checking = client.post(
        "/api/accounts", json={"name": "Giro", "kind": "checking", "currency": "EUR"}, headers=h
    ).json["id"]
    savings = client.post(
        "/api/accounts", json={"name": "Pot", "kind": "savings", "currency": "EUR"}, headers=h
    ).json["id"]
    rows = {
        "out_leg": (checking, "2026-03-02", "-500.00", "To Pot"),
        "in_leg": (savings, "2026-03-04", "500.00", "From Giro"),
        "bought": (checking, "2026-03-05", "-30.00", "Bookshop"),
        "returned": (checking, "2026-03-09", "30.00", "Bookshop"),
        "salary": (checking, "2026-03-25", "2000.00", "Acme GmbH"),
    }
    made = {}
    for name, (account, day, amount, merchant) in rows.items():
        body = {"account_id": account, "date": day, "amount": amount, "merchant": merchant}
        made[name] = client.post("/api/transactions", json=body, headers=h).json["id"]
    return made


def _flows(client: Any, h: dict[str, str]) -> dict[int, str]:
    listed = client.get("/api/transactions?limit=100", headers=h).json["transactions"]
    return {row["id"]: row["flow"] for row in listed}


def test_the_rule_finds_transfers_refunds_and_income_and_marks_override_it(
    client: Any, user: tuple[int, str]
) -> None:
    h = _auth(user[1])
    ids = _ledger(client, h)
    assert _flows(client, h) == {
        ids["out_leg"]: "transfer",
        ids["in_leg"]: "transfer",
        ids["bought"]: "spending",
        ids["returned"]: "refund",
        ids["salary"]: "income",
    }
    spent = client.get("/api/transactions?flow=net_spending", headers=h).json
    assert spent["totals"][0]["net"] == "0.00" and spent["count"] == 2

    # Not a transfer after all: both legs go back to spending and income.
    unmarked = client.put(
        f"/api/transactions/{ids['out_leg']}/flow", json={"mark": "not_transfer"}, headers=h
    )
    assert unmarked.status_code == 200
    assert unmarked.json["flow"] == "spending" and unmarked.json["flow_marked"] == "not_transfer"
    flows = _flows(client, h)
    assert (flows[ids["out_leg"]], flows[ids["in_leg"]]) == ("spending", "income")
    # The salary was a refund; the return was income: each mark sticks.
    for name, mark, flow in (("salary", "refund", "refund"), ("returned", "not_refund", "income")):
        done = client.put(f"/api/transactions/{ids[name]}/flow", json={"mark": mark}, headers=h)
        assert done.status_code == 200 and done.json["flow"] == flow
    assert client.get(f"/api/transactions/{ids['salary']}", headers=h).json["flow"] == "refund"
    # Cleared: the rule decides again.
    cleared = client.delete(f"/api/transactions/{ids['out_leg']}/flow", headers=h)
    assert cleared.status_code == 200 and cleared.json["flow"] == "transfer"
    assert "flow_marked" not in cleared.json
    assert _flows(client, h)[ids["in_leg"]] == "transfer"


def test_bad_marks_are_refused_and_change_nothing(client: Any, user: tuple[int, str]) -> None:
    h = _auth(user[1])
    ids = _ledger(client, h)
    before = _flows(client, h)
    out = client.put(f"/api/transactions/{ids['bought']}/flow", json={"mark": "refund"}, headers=h)
    assert out.status_code == 422 and out.json["error"]["details"] == {
        "mark": ["Only money coming in can be marked a refund (or not one)."]
    }
    wrong = client.put(f"/api/transactions/{ids['bought']}/flow", json={"mark": "gift"}, headers=h)
    assert wrong.status_code == 422 and "mark" in wrong.json["error"]["details"]
    other = make_user(client.application.extensions["db"], "mallory")[1]
    theirs = client.put(
        f"/api/transactions/{ids['bought']}/flow", json={"mark": "transfer"}, headers=_auth(other)
    )
    assert theirs.status_code == 404
    assert client.delete("/api/transactions/99999/flow", headers=h).status_code == 404
    assert _flows(client, h) == before


def test_a_series_is_confirmed_renamed_dismissed_and_forgotten(
    client: Any, user: tuple[int, str]
) -> None:
    h = _auth(user[1])
    path = "/api/recurring/s0123456789ab"
    made = client.put(path, json={"status": "confirmed"}, headers=h)
    assert made.status_code == 200
    assert made.json == {"series_id": "s0123456789ab", "status": "confirmed", "name": None}
    renamed = client.put(path, json={"name": "Flat rent"}, headers=h)
    assert renamed.json == {
        "series_id": "s0123456789ab",
        "status": "confirmed",
        "name": "Flat rent",
    }
    dismissed = client.put(path, json={"status": "dismissed", "name": None}, headers=h)
    assert dismissed.json == {"series_id": "s0123456789ab", "status": "dismissed", "name": None}
    assert client.put(path, json={}, headers=h).json == dismissed.json  # nothing to change
    assert client.put(path, json={"status": "maybe"}, headers=h).status_code == 422
    assert client.put("/api/recurring/netflix", json={"name": "x"}, headers=h).status_code == 404
    assert client.delete(path, headers=h).status_code == 204
    assert client.delete(path, headers=h).status_code == 404
