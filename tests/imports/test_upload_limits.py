"""Uploads at once: at most IMPORT_CONCURRENCY per user and IMPORT_PROCESS_CONCURRENCY in all
(429 with Retry-After beyond, nothing stored); a client that hangs up stops its file's read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from models.db import Database
from services.imports.reader import StatementReader
from tests.conftest import make_user
from tests.imports.conftest import SAMPLES, Importer
from tests.live import LiveServer
from tests.rawhttp import Client
from tests.statements.readers import doze
from tests.waits import wait_until


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """Two uploads per user, three in all; a read may take 10 minutes."""
    return {
        **app_config,
        "IMPORT_CONCURRENCY": 2,
        "IMPORT_PROCESS_CONCURRENCY": 3,
        "IMPORT_READ_WALL_SECONDS": 600,
    }


def reader_of(app: Any) -> StatementReader:
    found: StatementReader = app.extensions["statement_reader"]
    return found


def busy(reply: Any, limit: int) -> None:
    """`reply` is the one 429 of a busy import."""
    assert reply.status_code == 429, reply.json
    assert reply.json["error"]["code"] == "import_busy"
    assert reply.json["error"]["details"] == {"limit": limit, "retry_after": 2}
    assert reply.headers["Retry-After"] == "2"


def test_a_third_upload_of_one_user_is_429_and_another_user_gets_in(
    app: Any, importer: Importer, db: Database
) -> None:
    reader = reader_of(app)
    user_id = make_user(db, "carol")[0]
    with ExitStack() as held:
        held.enter_context(reader.admit(1))
        held.enter_context(reader.admit(1))
        busy(importer.upload("german.csv", account_name="Giro"), 2)
        assert reader.running() == 2
        # Carol takes the third place of the process: now no one gets in.
        held.enter_context(reader.admit(user_id))
        with pytest.raises(Exception) as full:
            held.enter_context(reader.admit(99))
        assert getattr(full.value, "code", None) == "import_busy"
    assert reader.running() == 0
    assert importer.get("/api/imports").json["imports"] == []
    draft = importer.upload("german.csv", account_name="Giro")
    assert draft.status_code == 201, draft.json


@pytest.fixture
def live(app: Any, user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app on a loopback port, its reader one that never finishes."""
    reader_of(app).reader = doze
    server = LiveServer(app, user[1])
    yield server
    server.close()


def multipart(name: str, data: bytes, **fields: str) -> tuple[bytes, str]:
    """A multipart/form-data body of one file and `fields`; its content type."""
    boundary = "b0undary"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n".encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def test_a_client_that_hangs_up_stops_its_files_read(app: Any, live: LiveServer) -> None:
    reader = reader_of(app)
    body, kind = multipart("a.csv", (SAMPLES / "german.csv").read_bytes(), account_name="Giro")
    client = Client(live.port)
    client.request(
        "POST", "/api/imports", body, Content_Type=kind, Authorization=live.headers["Authorization"]
    )
    wait_until(lambda: reader.running() == 1, message="the read never started")
    client.close()
    # The read never ends by itself (a 10-minute wall clock): the client's leaving ends it.
    assert reader.limits.wall_seconds == 600
    wait_until(lambda: reader.running() == 0, message="the read went on")
    assert live.get("/api/imports").json()["imports"] == []
