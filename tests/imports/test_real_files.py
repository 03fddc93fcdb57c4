"""Every file of the shared corpus of real statements (../shared/statements, read in place)
through the upload API: never a 5xx or a Python repr; every row the file holds, their sum and
each statement's reconciliation right; the same file again, all duplicates. Files that hold
no movement (a sign-on, an error response, an empty QIF, a lone balance) get a clear 422."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.imports.conftest import Importer
from tests.imports.real_files import SHARED, Held, files, held

REPRS = ("object at 0x", "Decimal(", "datetime.", "Traceback", "<class ")
# Files that hold movements and still cannot be imported, and why (none so far).
REFUSED: dict[str, str] = {}
# Files that hold no movement and do not parse either: 422 unparsable_file, not no_transactions.
UNPARSABLE = {"camt__camt053.v2.wrong.xml": "a group header alone, no statement element"}

pytestmark = [
    pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/statements is missing"),
    pytest.mark.shared_app,
]


def _name(path: Path) -> str:
    return str(path.relative_to(SHARED))


def _no_repr(reply: Any) -> None:
    text = reply.get_data(as_text=True)
    for marker in REPRS:
        assert marker not in text, (marker, text[:500])


@pytest.mark.parametrize("path", files(), ids=_name)
def test_a_real_file_imports_right_or_is_refused_clearly(importer: Importer, path: Path) -> None:
    expected = held(path)
    reply = importer.upload(path.name, path.read_bytes(), currency="EUR")
    assert reply.status_code < 500, reply.get_data(as_text=True)
    _no_repr(reply)
    if expected.rows == 0 or path.name in REFUSED:
        assert reply.status_code == 422, reply.json
        error = reply.json["error"]
        expected_code = "unparsable_file" if path.name in UNPARSABLE else "no_transactions"
        assert error["code"] == expected_code, error
        assert "<" not in error["message"], error
        return
    assert reply.status_code == 201, reply.json
    draft = reply.json
    rows = _all_rows(importer, draft["id"])
    assert len(rows) == expected.rows == draft["counts"]["total"]
    for row in rows:
        assert row["status"] == "invalid" or row["amount"] is not None
        if row["reason"]:
            assert "<" not in row["reason"] and "'" not in row["reason"], row["reason"]
    if expected.total is not None:  # every movement of the file is readable
        assert [r["reason"] for r in rows if r["status"] == "invalid"] == []
        assert sum(Decimal(r["amount"]) for r in rows) == expected.total
    _reconciled(draft, expected)

    committed = importer.commit(draft["id"]).json
    # A file without account numbers goes where the user says (the same account again).
    numbered = all(a["bank_ref"] for a in committed["accounts"])
    form = {} if numbered else {"account_id": committed["accounts"][0]["account_id"]}
    again = importer.upload(path.name, path.read_bytes(), currency="EUR", **form).json
    valid = sum(1 for r in rows if r["status"] != "invalid")
    assert again["counts"]["duplicate"] == valid, again["counts"]
    assert again["counts"]["new"] == again["counts"]["possible_duplicate"] == 0


def _all_rows(importer: Importer, import_id: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = importer.get(f"/api/imports/{import_id}/rows?limit=100{cursor}").json
        found += page["rows"]
        if not page["next_cursor"]:
            return found
        cursor = f"&cursor={page['next_cursor']}"


def _reconciled(draft: dict[str, Any], expected: Held) -> None:
    """Each statement's reconciliation is what its own stated balances and rows say."""
    accounts = draft["accounts"]
    stated = [s for s in expected.statements if s[1] is not None]
    shown = [a["reconciliation"] for a in accounts if a["reconciliation"] is not None]
    if len(stated) != len(shown):
        return  # statements the reader joins or splits otherwise (fragments): counts checked
    for (opening, closing, movements), reconciliation in zip(stated, shown, strict=True):
        assert Decimal(reconciliation["closing"]) == closing, json.dumps(reconciliation)
        if opening is None:
            assert reconciliation["balanced"] is True, reconciliation  # derived: a new account
            continue
        assert Decimal(reconciliation["opening"]) == opening, reconciliation
        difference = closing - opening - movements
        assert Decimal(reconciliation["difference"]) == difference, reconciliation
        assert reconciliation["balanced"] is (difference == 0)
