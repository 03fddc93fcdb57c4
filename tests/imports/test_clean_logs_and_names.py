"""A file that fails leaves one log line (the request's), with nothing of the file in it; control
and bidi characters never reach a stored filename or payee."""

from __future__ import annotations

import logging

import pytest

from tests.imports.conftest import Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

# An MT940 whose only balance is no balance: 422, the account's number in the file.
BROKEN_MT940 = b":20:STARTUMS\n:25:DE00SECRETIBAN\n:60F:CSECRETBALANCE\n"


def test_a_failed_parse_logs_one_line_without_the_file(
    importer: Importer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reply = importer.upload("statement.sta", BROKEN_MT940, currency="EUR")
    assert reply.status_code == 422, reply.json
    assert "SECRET" not in caplog.text
    lines = [r.getMessage() for r in caplog.records if "/api/imports" in r.getMessage()]
    assert len(lines) == 1 and '"status":422' in lines[0]


def test_control_and_bidi_characters_are_stripped_from_names(importer: Importer) -> None:
    data = (
        "Date,Payee,Amount,Purpose\n"
        '2026-03-01,"Evil\u202egnp.exe",-1.00,"line\none"\n'
        "2026-03-02,Tab\tand\x07bell\u2066,-2.00,plain\n"
    ).encode()
    draft = importer.upload("state\u202ement\x1b[31m.csv", data, currency="EUR", account_name="G")
    assert draft.status_code == 201, draft.json
    assert draft.json["filename"] == "statement[31m.csv"
    rows = importer.rows(draft.json["id"])
    assert [(r["merchant"], r["description"]) for r in rows] == [
        ("Evilgnp.exe", "line one"),
        ("Tab andbell", "plain"),
    ]
