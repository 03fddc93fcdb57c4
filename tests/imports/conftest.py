"""Statement import fixtures: the sample files and a client that uploads them as alice."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live import LiveServer

SAMPLES = Path(__file__).resolve().parent / "samples"
# A CSV with a NUL past the part binary detection reads, and an amount no column holds.
ODD_CSV = (
    b"Date,Payee,Amount\n"
    + b"2026-03-01,Filler,-1.00\n" * 12_000
    + b"2026-03-02,Nul\x00Shop,-2.00\n2026-03-03,Huge,99999999999999999999.00\n"
)


class Importer:
    """Alice's calls to the import API, with the sample files at hand."""

    def __init__(self, client: Any, token: str) -> None:
        self.client, self.token = client, token
        self.headers = {"Authorization": f"Bearer {token}"}

    def upload(self, name: str, data: bytes | None = None, **form: Any) -> Any:
        """POST /api/imports with a sample file (or `data` under that name)."""
        body = data if data is not None else (SAMPLES / name).read_bytes()
        fields = {key: str(value) for key, value in form.items()}
        return self.client.post(
            "/api/imports",
            data={**fields, "file": (io.BytesIO(body), name)},
            headers=self.headers,
            content_type="multipart/form-data",
        )

    def get(self, path: str) -> Any:
        """GET an /api path."""
        return self.client.get(path, headers=self.headers)

    def rows(self, import_id: int, query: str = "") -> list[dict[str, Any]]:
        """Every row of an import (one page of 100)."""
        reply = self.get(f"/api/imports/{import_id}/rows?limit=100{query}")
        assert reply.status_code == 200, reply.json
        return list(reply.json["rows"])

    def commit(self, import_id: int) -> Any:
        """POST commit."""
        return self.client.post(f"/api/imports/{import_id}/commit", headers=self.headers)

    def delete(self, import_id: int) -> Any:
        """DELETE the import."""
        return self.client.delete(f"/api/imports/{import_id}", headers=self.headers)

    def patch(self, import_id: int, row_id: int, body: dict[str, Any]) -> Any:
        """PATCH a row."""
        return self.client.patch(
            f"/api/imports/{import_id}/rows/{row_id}", json=body, headers=self.headers
        )

    def transactions(self) -> list[dict[str, Any]]:
        """Alice's transactions (first 100)."""
        reply = self.get("/api/transactions?limit=100&sort=date_asc")
        assert reply.status_code == 200, reply.json
        return list(reply.json["transactions"])


@pytest.fixture
def live(app: Any, user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app on a loopback port, with alice's token."""
    server = LiveServer(app, user[1])
    yield server
    server.close()


@pytest.fixture
def importer(client: Any, user: tuple[int, str]) -> Importer:
    """Alice's import API."""
    return Importer(client, user[1])


def empty_draft(db: Any, name: str) -> int:
    """A new user's draft import with no rows yet (for tests that store rows themselves)."""
    from models import StatementImport, User

    with db.transaction() as s:
        user = User(name=name)
        s.add(user)
        s.flush()
        draft = StatementImport(user_id=user.id, status="drafting", format="csv", filename="x")
        draft.statements, draft.rows_total = [], 0
        s.add(draft)
        s.flush()
        return int(draft.id)
