"""CSV columns that are not recognised: 422 mapping_required, then a mapping saved per account."""

from __future__ import annotations

import json

import pytest

from tests.imports.conftest import SAMPLES, Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

MAPPING = {"date": "Posted", "payee": "What", "amount": "Value"}


def test_unknown_columns_get_mapping_required_with_a_suggestion(importer: Importer) -> None:
    reply = importer.upload("unknown_columns.tsv", currency="EUR", account_name="Wallet")
    assert reply.status_code == 422
    error = reply.json["error"]
    assert error["code"] == "mapping_required"
    assert error["details"]["columns"] == ["Posted", "What", "Value"]
    assert error["details"]["suggested_mapping"] == MAPPING
    assert importer.get("/api/imports").json["imports"] == []


def test_a_given_mapping_is_saved_for_the_account_and_reused(importer: Importer) -> None:
    first = importer.upload(
        "unknown_columns.tsv", currency="EUR", account_name="Wallet", mapping=json.dumps(MAPPING)
    )
    assert first.status_code == 201, first.json
    assert [r["amount"] for r in importer.rows(first.json["id"])] == ["-12.00", "-3.50"]
    importer.commit(first.json["id"])
    account_id = (
        first.json["accounts"][0]["account_id"]
        or importer.get(f"/api/imports/{first.json['id']}").json["accounts"][0]["account_id"]
    )

    data = (SAMPLES / "unknown_columns.tsv").read_bytes() + b"2026-03-03\tNew Shop\t-1.00\n"
    second = importer.upload("next.tsv", data, account_id=account_id)
    assert second.status_code == 201, second.json
    statuses = [r["status"] for r in importer.rows(second.json["id"])]
    assert statuses == ["duplicate", "duplicate", "new"]


def test_a_mapping_naming_a_missing_column_is_422(importer: Importer) -> None:
    bad = {**MAPPING, "payee": "Who"}
    reply = importer.upload("unknown_columns.tsv", currency="EUR", mapping=json.dumps(bad))
    assert reply.status_code == 422
    assert reply.json["error"]["details"]["mapping"] == {"payee": ['The file has no column "Who".']}


def test_a_mapping_that_is_not_json_is_422(importer: Importer) -> None:
    reply = importer.upload("unknown_columns.tsv", currency="EUR", mapping="{date:")
    assert reply.status_code == 422
    assert "mapping" in reply.json["error"]["details"]
