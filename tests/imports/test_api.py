"""Statement imports through the API: draft, review, commit, undo, duplicates, isolation."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from models import Transaction
from models.db import Database
from tests.conftest import make_user
from tests.imports.conftest import ODD_CSV, Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def test_a_multi_account_ofx_becomes_a_draft_then_two_accounts_of_transactions(
    importer: Importer,
) -> None:
    reply = importer.upload("multi_account.ofx")
    assert reply.status_code == 201, reply.json
    draft = reply.json
    assert draft["status"] == "draft" and draft["format"] == "ofx"
    assert draft["counts"]["new"] == 4 and draft["counts"]["total"] == 4
    refs = [a["bank_ref"] for a in draft["accounts"]]
    assert refs == ["1234567890", "4111000011112222"]
    assert all(a["new_account"] for a in draft["accounts"])
    assert importer.transactions() == []  # a draft touches no transaction

    committed = importer.commit(draft["id"])
    assert committed.status_code == 200, committed.json
    assert committed.json["added"] == 4 and committed.json["status"] == "committed"
    rows = importer.transactions()
    assert [(r["merchant"], r["amount"]) for r in rows] == [
        ("Blue Heron Bakery", "-42.50"),
        ("Streamflix", "-9.99"),
        ("Acme Payroll", "2500.00"),
        ("Harbor Lights Cinema", "-63.20"),
    ]
    checking = committed.json["accounts"][0]
    balance = importer.get(f"/api/accounts/{checking['account_id']}").json["balance"]
    assert balance == "2447.51"  # the statement's LEDGERBAL


def test_each_row_shows_its_statements_account_none_until_the_commit_creates_it(
    importer: Importer,
) -> None:
    draft = importer.upload("multi_account.ofx").json
    assert {r["account_id"] for r in importer.rows(draft["id"])} == {None}
    committed = importer.commit(draft["id"]).json
    accounts = [a["account_id"] for a in committed["accounts"]]
    rows = importer.rows(draft["id"])
    assert [r["account_id"] for r in rows] == [accounts[0]] * 3 + [accounts[1]]
    edited = importer.patch(draft["id"], rows[0]["id"], {"include": False})
    assert edited.status_code == 409  # committed: the row is shown, not changed

    again = importer.upload("multi_account.ofx").json  # the accounts exist now
    assert [r["account_id"] for r in importer.rows(again["id"])] == [accounts[0]] * 3 + [
        accounts[1]
    ]


def test_committing_twice_adds_nothing_and_the_same_file_again_is_all_duplicates(
    importer: Importer,
) -> None:
    first = importer.upload("multi_account.ofx").json
    assert importer.commit(first["id"]).json["added"] == 4
    assert importer.commit(first["id"]).json["added"] == 0
    assert len(importer.transactions()) == 4

    again = importer.upload("multi_account.ofx").json
    assert again["counts"]["duplicate"] == 4 and again["counts"]["new"] == 0
    assert not any(a["new_account"] for a in again["accounts"])
    assert importer.commit(again["id"]).json["added"] == 0
    assert len(importer.transactions()) == 4


def test_two_identical_debits_on_one_day_stay_two_rows(importer: Importer) -> None:
    draft = importer.upload("german.csv", currency="EUR", account_name="Girokonto").json
    assert draft["counts"]["new"] == 4
    importer.commit(draft["id"])
    bakery = [t for t in importer.transactions() if t["merchant"] == "Bäckerei Sonnenschein"]
    assert [t["amount"] for t in bakery] == ["-4.20", "-4.20"]

    account_id = draft_account(importer, draft["id"])
    again = importer.upload("german.csv", account_id=account_id).json
    assert again["counts"]["duplicate"] == 4


def test_one_of_two_identical_debits_already_stored_leaves_the_other_new(
    importer: Importer,
) -> None:
    lines = (importer_sample("german.csv")).splitlines(keepends=True)
    one = "".join(lines[:2]).encode()
    draft = importer.upload("one.csv", one, currency="EUR", account_name="Girokonto").json
    importer.commit(draft["id"])
    account_id = draft_account(importer, draft["id"])
    both = importer.upload("german.csv", account_id=account_id).json
    statuses = [r["status"] for r in importer.rows(both["id"])]
    assert statuses == ["duplicate", "new", "new", "new"]


def test_german_debit_and_credit_columns_read_as_signed_amounts(importer: Importer) -> None:
    draft = importer.upload("german.csv", currency="eur", account_name="Girokonto").json
    rows = importer.rows(draft["id"])
    assert [(r["date"], r["amount"], r["merchant"]) for r in rows] == [
        ("2026-03-05", "-4.20", "Bäckerei Sonnenschein"),
        ("2026-03-05", "-4.20", "Bäckerei Sonnenschein"),
        ("2026-03-12", "-1234.56", "Stadtwerke München"),
        ("2026-03-15", "2500.00", "Arbeitgeber GmbH"),
    ]
    assert {r["currency"] for r in rows} == {"EUR"}


def test_a_csv_export_of_ofx_rows_without_bank_ids_is_a_possible_duplicate(
    importer: Importer,
) -> None:
    draft = importer.upload("multi_account.ofx").json
    importer.commit(draft["id"])
    checking = draft_account(importer, draft["id"])
    csv = (
        b"Date,Description,Amount\n"
        b"03/06/2026,BLUE HERON BAKERY #12,-42.50\n"
        b"03/12/2026,Streamflix,-9.99\n"
        b"03/20/2026,Corner Kiosk,-42.50\n"
    )
    again = importer.upload("export.csv", csv, account_id=checking, locale="en_US").json
    rows = importer.rows(again["id"])
    assert [r["status"] for r in rows] == ["possible_duplicate", "possible_duplicate", "new"]
    assert rows[0]["matches"]["merchant"] == "Blue Heron Bakery"
    assert rows[0]["include"] is False and rows[2]["include"] is True


def test_different_bank_ids_are_never_merged(importer: Importer) -> None:
    ofx = importer_sample("multi_account.ofx")
    importer.commit(importer.upload("multi_account.ofx").json["id"])
    changed = ofx.replace("CHK-0002", "CHK-0099").encode()
    again = importer.upload("changed.ofx", changed).json
    rows = importer.rows(again["id"])
    assert [r["status"] for r in rows] == ["duplicate", "new", "duplicate", "duplicate"]


def test_undo_removes_exactly_the_imports_rows_and_restores_the_balance(
    importer: Importer, db: Database, user: tuple[int, str]
) -> None:
    first = importer.upload("german.csv", currency="EUR", account_name="Girokonto").json
    importer.commit(first["id"])
    account_id = draft_account(importer, first["id"])
    with db.transaction() as s:
        s.add(
            Transaction(
                user_id=user[0],
                account_id=account_id,
                posted_on=date(2026, 3, 20),
                amount_minor=-700,
                currency="EUR",
                merchant="Hand-entered",
            )
        )
    before = importer.get(f"/api/accounts/{account_id}").json["balance"]
    second = importer.upload("mt.csv", MORE_CSV, account_id=account_id).json
    assert second["counts"]["new"] == 1
    importer.commit(second["id"])
    assert len(importer.transactions()) == 6

    undone = importer.delete(second["id"])
    assert undone.status_code == 200
    assert undone.json == {"id": second["id"], "status": "undone", "removed_transactions": 1}
    merchants = [t["merchant"] for t in importer.transactions()]
    assert len(merchants) == 5 and "Hand-entered" in merchants and "Eisdiele" not in merchants
    assert importer.get(f"/api/accounts/{account_id}").json["balance"] == before
    assert importer.get(f"/api/imports/{second['id']}").json["status"] == "undone"
    assert importer.commit(second["id"]).status_code == 409


def test_discarding_a_draft_leaves_nothing(importer: Importer) -> None:
    draft = importer.upload("multi_account.ofx").json
    assert importer.delete(draft["id"]).json["status"] == "discarded"
    assert importer.get(f"/api/imports/{draft['id']}").status_code == 404
    assert importer.get("/api/imports").json["imports"] == []


def test_rows_are_reviewed_then_committed_as_reviewed(importer: Importer) -> None:
    draft = importer.upload("german.csv", currency="EUR", account_name="Girokonto").json
    rows = importer.rows(draft["id"])
    excluded = importer.patch(draft["id"], rows[2]["id"], {"include": False})
    assert excluded.status_code == 200 and excluded.json["include"] is False
    named = importer.patch(draft["id"], rows[3]["id"], {"category": "Salary"})
    assert named.json["category"] == "Salary"
    assert importer.commit(draft["id"]).json["added"] == 3
    found = {t["merchant"]: t for t in importer.transactions()}
    assert "Stadtwerke München" not in found
    assert found["Arbeitgeber GmbH"]["category"] == "Salary"
    late = importer.patch(draft["id"], rows[2]["id"], {"include": True})
    assert late.status_code == 409 and late.json["error"]["code"] == "not_a_draft"


def test_rows_page_and_filter_by_status(importer: Importer) -> None:
    importer.commit(importer.upload("multi_account.ofx").json["id"])
    changed = importer_sample("multi_account.ofx").replace("CHK-0002", "CHK-0099").encode()
    draft = importer.upload("changed.ofx", changed).json
    new = importer.rows(draft["id"], "&status=new")
    assert [r["bank_id"] for r in new] == ["CHK-0099"]
    page = importer.get(f"/api/imports/{draft['id']}/rows?limit=3").json
    assert len(page["rows"]) == 3 and page["next_cursor"]
    rest = importer.get(f"/api/imports/{draft['id']}/rows?limit=3&cursor={page['next_cursor']}")
    assert [r["bank_id"] for r in rest.json["rows"]] == ["CC-0001"]
    assert rest.json["next_cursor"] is None


def test_another_users_import_is_not_found(importer: Importer, client: Any, db: Database) -> None:
    draft = importer.upload("multi_account.ofx").json
    _, bob = make_user(db, "bob")
    other = Importer(client, bob)
    assert other.get(f"/api/imports/{draft['id']}").status_code == 404
    assert other.get(f"/api/imports/{draft['id']}/rows").status_code == 404
    assert other.commit(draft["id"]).status_code == 404
    assert other.delete(draft["id"]).status_code == 404
    row = importer.rows(draft["id"])[0]["id"]
    assert other.patch(draft["id"], row, {"include": False}).status_code == 404
    assert other.get("/api/imports").json["imports"] == []
    assert importer.get(f"/api/imports/{draft['id']}").json["status"] == "draft"


MORE_CSV = (
    "Buchungstag;Auftraggeber/Empfänger;Verwendungszweck;Soll;Haben\n"
    "05.03.2026;Bäckerei Sonnenschein;Kartenzahlung;4,20;\n"
    "21.03.2026;Eisdiele;Kartenzahlung;3,50;\n"
).encode()


def importer_sample(name: str) -> str:
    """A sample file's text."""
    from tests.imports.conftest import SAMPLES

    return (SAMPLES / name).read_text(encoding="utf-8")


def draft_account(importer: Importer, import_id: int) -> int:
    """The account of an import's first statement."""
    found: int = importer.get(f"/api/imports/{import_id}").json["accounts"][0]["account_id"]
    return found


def test_category_rules_the_user_keeps_run_on_every_draft(importer: Importer) -> None:
    client, h = importer.client, importer.headers
    for name in ("Bakery", "Bills"):
        assert client.post("/api/categories", json={"name": name}, headers=h).status_code == 201
    bakery = {"category": "Bakery", "payee_contains": "bäckerei"}
    bills = {"category": "Bills", "min_amount": "-2000", "max_amount": "-1000"}
    for rule in (bakery, bills):
        assert client.post("/api/category-rules", json=rule, headers=h).status_code == 201
    listed = client.get("/api/category-rules", headers=h).json["rules"]
    assert [(r["category"], r["min_amount"]) for r in listed] == [
        ("Bakery", None),
        ("Bills", "-2000"),
    ]
    refused = client.post("/api/category-rules", json={"category": "Bills"}, headers=h)
    assert refused.status_code == 422

    draft = importer.upload("german.csv", currency="EUR", account_name="Girokonto").json
    categories = [r["category"] for r in importer.rows(draft["id"])]
    assert categories == ["Bakery", "Bakery", "Bills", None]
    importer.commit(draft["id"])
    found = {t["merchant"]: t["category"] for t in importer.transactions()}
    assert found["Stadtwerke München"] == "Bills"

    assert client.delete(f"/api/category-rules/{listed[0]['id']}", headers=h).status_code == 204
    assert len(client.get("/api/category-rules", headers=h).json["rules"]) == 1


def test_two_drafts_of_one_file_committed_in_turn_add_its_rows_once(importer: Importer) -> None:
    first = importer.upload("multi_account.ofx").json
    second = importer.upload("multi_account.ofx").json
    assert second["counts"]["new"] == 4  # nothing was committed when it was drafted
    assert importer.commit(first["id"]).json["added"] == 4
    stale = importer.commit(second["id"]).json
    assert stale["added"] == 0 and stale["counts"]["duplicate"] == 4
    assert len(importer.transactions()) == 4
    assert {r["reason"] for r in importer.rows(second["id"])} == {"added since the draft was made"}
    accounts = importer.get("/api/accounts").json["accounts"]
    assert len(accounts) == 2  # the second commit found the accounts the first created


def test_nul_characters_and_huge_amounts_never_reach_the_database(importer: Importer) -> None:
    draft = importer.upload("odd.csv", ODD_CSV, currency="EUR", account_name="Giro")
    assert draft.status_code == 201, draft.json
    odd = importer.rows(draft.json["id"], "&status=invalid")
    assert [r["merchant"] for r in odd] == ["Huge"] and "15 digits" in odd[0]["reason"]
    assert draft.json["counts"]["new"] == 12_001
    assert importer.commit(draft.json["id"]).json["added"] == 12_001
    found = importer.get("/api/transactions?merchant=NulShop").json["transactions"]
    assert [t["amount"] for t in found] == ["-2.00"]
