"""On the real server, the import route's body limit is IMPORT_MAX_BYTES, not the API's."""

from __future__ import annotations

from tests.live import LiveServer


def _csv(rows: int) -> bytes:
    lines = [b"Date,Payee,Amount"] + [b"2026-03-01,Shop number %06d,-1.00" % i for i in range(rows)]
    return b"\n".join(lines) + b"\n"


def test_a_statement_over_the_api_limit_is_taken_by_the_import_route(live: LiveServer) -> None:
    data = _csv(12_000)
    assert len(data) > 256 * 1024
    reply = live.post(
        "/api/imports",
        files={"file": ("big.csv", data, "text/csv")},
        data={"currency": "EUR", "account_name": "Giro"},
    )
    assert reply.status_code == 201, reply.text
    assert reply.json()["counts"]["new"] == 12_000
    elsewhere = live.post("/api/sessions", content=data, headers={"Content-Type": "text/csv"})
    assert elsewhere.status_code == 413
