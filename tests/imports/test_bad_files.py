"""Hostile and broken files get the right 4xx in the one error shape, and store nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from models import Account, ImportRow, StatementImport, Transaction
from models.db import Database
from tests.imports.conftest import SAMPLES, Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

CAMT = (SAMPLES / "statement.camt.xml").read_bytes()
LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>
<Acct><Id><IBAN>&lol3;</IBAN></Id></Acct></Stmt></BkToCstmrStmt></Document>
"""


def external(target: Path) -> bytes:
    """A CAMT file whose IBAN is an external entity naming `target`."""
    return (
        b'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file://'
        + str(target).encode()
        + b'">]>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">'
        b"<BkToCstmrStmt><Stmt><Acct><Id><IBAN>&x;</IBAN></Id></Acct></Stmt>"
        b"</BkToCstmrStmt></Document>"
    )


@pytest.fixture
def nothing_stored(db: Database) -> Iterator[None]:
    """After the test, no import, row, account or transaction exists."""
    yield
    with db.read() as s:
        for model in (StatementImport, ImportRow, Account, Transaction):
            assert s.scalar(select(func.count()).select_from(model)) == 0, model.__name__


def refused(reply: Any, status: int, code: str) -> dict[str, Any]:
    """The error of `reply`, checked for its status, code and shape."""
    assert reply.status_code == status, reply.json
    assert set(reply.json["error"]) == {"code", "message", "details"}
    assert reply.json["error"]["code"] == code
    details: dict[str, Any] = reply.json["error"]["details"]
    return details


@pytest.mark.usefixtures("nothing_stored")
def test_a_truncated_ofx_is_422_naming_the_element(importer: Importer) -> None:
    data = (SAMPLES / "multi_account.ofx").read_bytes()[:900]
    details = refused(importer.upload("cut.ofx", data), 422, "unparsable_file")
    assert details["element"] == "LEDGERBAL"


@pytest.mark.usefixtures("nothing_stored")
def test_entity_expansion_is_refused_unread(importer: Importer) -> None:
    details = refused(importer.upload("laughs.xml", LAUGHS), 422, "unparsable_file")
    assert details == {"element": "DOCTYPE"}


@pytest.mark.usefixtures("nothing_stored")
def test_an_external_entity_is_refused_without_reading_it(
    importer: Importer, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("DE00SECRET")
    reply = importer.upload("xxe.xml", external(secret))
    refused(reply, 422, "unparsable_file")
    assert "SECRET" not in reply.get_data(as_text=True)


@pytest.mark.usefixtures("nothing_stored")
def test_broken_xml_says_the_line(importer: Importer) -> None:
    details = refused(importer.upload("cut.xml", CAMT[:700]), 422, "unparsable_file")
    assert details["line"] >= 1 and "column" in details


@pytest.mark.usefixtures("nothing_stored")
def test_an_xml_declaration_naming_an_unknown_encoding_is_422_not_a_crash(
    importer: Importer,
) -> None:
    declared = CAMT.replace(b'encoding="UTF-8"', b'encoding="UTF-DBIT8"', 1)
    assert declared != CAMT
    details = refused(importer.upload("odd.xml", declared), 422, "unparsable_file")
    assert details["line"] == 1


@pytest.mark.usefixtures("nothing_stored")
@pytest.mark.parametrize(
    "name, data",
    [
        ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01"),
        ("notes.txt", b"just some words about money\nand nothing else\n"),
        (
            "feed.xml",
            b'<?xml version="1.0"?>\n<rss><channel><title>a, b; c</title></channel></rss>',
        ),
    ],
)
def test_binary_or_unknown_files_are_415(importer: Importer, name: str, data: bytes) -> None:
    refused(importer.upload(name, data), 415, "unknown_format")


@pytest.mark.usefixtures("nothing_stored")
def test_a_file_without_one_is_422_naming_it(importer: Importer) -> None:
    reply = importer.client.post("/api/imports", data={}, headers=importer.headers)
    assert refused(reply, 422, "validation_error") == {"file": ["Missing data for required field."]}


@pytest.mark.usefixtures("nothing_stored")
def test_a_csv_without_a_currency_or_account_says_so(importer: Importer) -> None:
    data = b"Date,Payee,Amount\n2026-03-01,Kiosk,-1.00\n"
    details = refused(importer.upload("plain.csv", data), 422, "validation_error")
    assert "currency" in details


def test_a_csv_whose_currency_column_says_it_needs_no_currency_field(importer: Importer) -> None:
    draft = importer.upload("german.csv", account_name="Giro")
    assert draft.status_code == 201, draft.json
    assert draft.json["accounts"][0]["currency"] == "EUR"


@pytest.mark.usefixtures("nothing_stored")
def test_another_users_account_is_404(importer: Importer, db: Database) -> None:
    refused(importer.upload("german.csv", account_id=12345), 404, "not_found")


def test_a_csv_in_windows_1252_reads_its_umlauts(importer: Importer) -> None:
    data = (SAMPLES / "german.csv").read_text(encoding="utf-8").encode("cp1252")
    draft = importer.upload("latin.csv", data, currency="EUR", account_name="Giro").json
    merchants = {r["merchant"] for r in importer.rows(draft["id"])}
    assert "Bäckerei Sonnenschein" in merchants and "Stadtwerke München" in merchants


def test_formula_cells_are_stored_as_text(importer: Importer) -> None:
    data = b'Date,Payee,Amount\n2026-03-01,=HYPERLINK("http://x"),-1.00\n2026-03-02,@SUM(A1),2\n'
    draft = importer.upload("f.csv", data, currency="EUR", account_name="Giro").json
    importer.commit(draft["id"])
    merchants = sorted(t["merchant"] for t in importer.transactions())
    assert merchants == ['=HYPERLINK("http://x")', "@SUM(A1)"]


def test_unreadable_rows_are_invalid_with_why_and_cannot_be_included(importer: Importer) -> None:
    data = (
        b"Date;Payee;Amount\n01.03.2026;Kiosk;-1,00\n31.02.2026;Kiosk;-2,00\n02.03.2026;Kiosk;abc\n"
    )
    draft = importer.upload("bad.csv", data, currency="EUR", account_name="Giro").json
    rows = importer.rows(draft["id"])
    assert [r["status"] for r in rows] == ["new", "invalid", "invalid"]
    assert "line 3" in rows[1]["reason"] and "not a date" in rows[1]["reason"]
    assert "line 4" in rows[2]["reason"] and "not an amount" in rows[2]["reason"]
    again = importer.patch(draft["id"], rows[1]["id"], {"include": True})
    assert again.status_code == 422
    assert importer.commit(draft["id"]).json["added"] == 1


@pytest.fixture(scope="module")
def shared_config() -> dict[str, Any]:
    """Small limits: an oversized file is cheap to send, and the API's limit is below it."""
    return {"IMPORT_MAX_BYTES": 8192, "MAX_REQUEST_BYTES": 1024}


@pytest.mark.usefixtures("nothing_stored")
def test_a_file_over_import_max_bytes_is_413(importer: Importer) -> None:
    data = (SAMPLES / "german.csv").read_bytes() * 40
    details = refused(importer.upload("big.csv", data, currency="EUR"), 413, "content_too_large")
    assert details == {"limit": 8192}


def test_the_upload_limit_is_import_max_bytes_not_the_apis(importer: Importer) -> None:
    lines = [b"Date,Payee,Amount"] + [b"2026-03-01,Shop %d,-1.00" % i for i in range(150)]
    data = b"\n".join(lines)
    assert 1024 < len(data) < 8000
    reply = importer.upload("ok.csv", data, currency="EUR", account_name="Giro")
    assert reply.status_code == 201, reply.json
    assert reply.json["counts"]["new"] == 150
    too_big = importer.client.post(
        "/api/sessions", json={"title": "x" * 2000}, headers=importer.headers
    )
    assert too_big.status_code == 413


@pytest.mark.usefixtures("nothing_stored")
def test_text_that_is_not_what_its_byte_order_mark_says_is_422_naming_the_byte(
    importer: Importer,
) -> None:
    data = b"\xff\xfe" + "Date,Payee,Amount\n".encode("utf-16-le") + b"\x00\xd8\x41"
    details = refused(importer.upload("odd.csv", data, currency="EUR"), 422, "unparsable_file")
    assert isinstance(details["byte"], int)


def test_a_statement_for_an_account_given_by_id_lets_its_next_file_find_it(
    importer: Importer,
) -> None:
    made = importer.client.post(
        "/api/accounts",
        json={"name": "Main", "kind": "checking", "currency": "GBP"},
        headers=importer.headers,
    ).json
    one = (SAMPLES / "statement_v2.qfx").read_text()
    single = (
        one[: one.index("<STMTTRNRS>", one.index("</STMTTRNRS>"))]
        + one[one.index("</BANKMSGSRSV1>") :]
    )
    draft = importer.upload("one.qfx", single.encode(), account_id=made["id"]).json
    assert draft["accounts"][0]["account_id"] == made["id"]
    # Checked against the account's balance (0.00): its rows come to 85.00, LEDGERBAL says 80.00.
    reconciliation = draft["accounts"][0]["reconciliation"]
    assert (reconciliation["basis"], reconciliation["difference"]) == ("account", "-5.00")
    importer.commit(draft["id"])
    again = importer.upload("one.qfx", single.encode()).json
    assert again["accounts"][0]["account_id"] == made["id"]
    assert again["counts"]["duplicate"] == 2


@pytest.mark.usefixtures("nothing_stored")
def test_a_csv_of_a_header_alone_is_422(importer: Importer) -> None:
    details = refused(
        importer.upload("empty.csv", b"Date,Payee,Amount\n", currency="EUR"), 422, "unparsable_file"
    )
    assert details == {"line": 2}
