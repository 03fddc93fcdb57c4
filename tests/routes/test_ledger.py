"""The caller's records managed by hand: accounts, categories, budgets, transactions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_user

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_accounts_and_categories_are_listed_and_created(client: Any, user: tuple[int, str]) -> None:
    h = _auth(user[1])
    assert client.get("/api/accounts", headers=h).json == {"accounts": []}
    made = client.post(
        "/api/accounts",
        json={"name": "Giro", "kind": "checking", "currency": "eur", "balance": "10.50"},
        headers=h,
    )
    assert made.status_code == 201
    assert made.json == {
        "id": made.json["id"],
        "name": "Giro",
        "kind": "checking",
        "currency": "EUR",
        "balance": "10.50",
    }
    assert client.get("/api/accounts", headers=h).json["accounts"] == [made.json]
    again = client.post(
        "/api/accounts", json={"name": "Giro", "kind": "checking", "currency": "EUR"}, headers=h
    )
    assert again.status_code == 409 and again.json["error"]["code"] == "name_taken"
    bad = client.post(
        "/api/accounts", json={"name": "", "kind": "boat", "currency": "E"}, headers=h
    )
    assert bad.status_code == 422
    assert set(bad.json["error"]["details"]) == {"name", "kind", "currency"}

    food = client.post("/api/categories", json={"name": "Food"}, headers=h)
    assert food.status_code == 201 and food.json["kind"] == "expense"
    assert client.get("/api/categories", headers=h).json["categories"] == [food.json]
    assert client.get("/api/budgets", headers=h).json == {"budgets": []}


def test_a_transaction_is_added_edited_and_deleted_by_hand_moving_the_balance(
    client: Any, user: tuple[int, str]
) -> None:
    h = _auth(user[1])
    account = client.post(
        "/api/accounts", json={"name": "Giro", "kind": "checking", "currency": "EUR"}, headers=h
    ).json
    client.post("/api/categories", json={"name": "Food"}, headers=h)
    body = {
        "account_id": account["id"],
        "date": "2026-03-04",
        "amount": "-12.30",
        "merchant": "Market Hall",
        "category": "Food",
    }
    added = client.post("/api/transactions", json=body, headers=h)
    assert added.status_code == 201, added.json
    assert (added.json["amount"], added.json["category"], added.json["account"]) == (
        "-12.30",
        "Food",
        "Giro",
    )
    balance = client.get(f"/api/accounts/{account['id']}", headers=h).json["balance"]
    assert balance == "-12.30"

    path = f"/api/transactions/{added.json['id']}"
    edited = client.patch(path, json={"amount": "-2.00", "category": None}, headers=h)
    assert edited.status_code == 200
    assert (edited.json["amount"], edited.json["category"]) == ("-2.00", None)
    assert client.get(f"/api/accounts/{account['id']}", headers=h).json["balance"] == "-2.00"

    assert client.delete(path, headers=h).status_code == 204
    assert client.get(path, headers=h).status_code == 404
    assert client.get(f"/api/accounts/{account['id']}", headers=h).json["balance"] == "0.00"


def test_bad_transactions_are_refused_and_change_nothing(
    client: Any, user: tuple[int, str], db: Any
) -> None:
    h = _auth(user[1])
    account = client.post(
        "/api/accounts", json={"name": "Giro", "kind": "checking", "currency": "EUR"}, headers=h
    ).json
    base = {"account_id": account["id"], "date": "2026-03-04", "amount": "-1", "merchant": "X"}
    assert (
        client.post("/api/transactions", json={**base, "amount": "1.001"}, headers=h).status_code
        == 422
    )
    unknown = client.post("/api/transactions", json={**base, "category": "Nope"}, headers=h)
    assert unknown.status_code == 422 and "category" in unknown.json["error"]["details"]
    assert (
        client.post("/api/transactions", json={**base, "date": "2026-02-30"}, headers=h).status_code
        == 422
    )
    _, bob = make_user(db, "bob")
    assert client.post("/api/transactions", json=base, headers=_auth(bob)).status_code == 404
    assert client.get("/api/transactions", headers=h).json["count"] == 0
    mine = client.post("/api/transactions", json=base, headers=h).json
    assert client.delete(f"/api/transactions/{mine['id']}", headers=_auth(bob)).status_code == 404
    assert (
        client.patch(
            f"/api/transactions/{mine['id']}", json={"merchant": "Y"}, headers=_auth(bob)
        ).status_code
        == 404
    )
