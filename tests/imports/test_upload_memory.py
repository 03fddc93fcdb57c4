"""An upload is never held in the worker's memory: its file part goes to disk as it is
parsed, hashed on the way, and the reader's process reads it there. A slow link that keeps
sending is not cut by the body deadline."""

from __future__ import annotations

import io
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from werkzeug.datastructures import FileStorage

from domain.errors import Unprocessable
from models import StatementImport
from models.db import Database
from routes.uploads import spooled
from services.imports.files import file_digest
from services.imports.reader import StatementReader
from statements.parsed import ParsedFile
from statements.read import ReadOptions, read_statement
from tests.conftest import close_app
from tests.imports.conftest import SAMPLES
from tests.imports.test_upload_limits import multipart
from tests.live import LiveServer
from tests.rawhttp import Client

MIB = 1024 * 1024
SIZE = 8 * MIB
HEAD = b"Date,Payee,Amount\n"
LINE = b"2026-03-01,Corner shop,-1.00\n"


def first_rows(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader (in the reader's process) that reads the file's first lines only: what the
    worker gets back stays small, whatever the file's size."""
    return read_statement(data[: len(HEAD) + 3 * len(LINE)], filename, options)


def big_csv() -> bytes:
    """A CSV of SIZE bytes or a little more."""
    return HEAD + LINE * (SIZE // len(LINE) + 1)


def post(client: Any, token: str, body: bytes, kind: str) -> Any:
    return client.post(
        "/api/imports",
        input_stream=io.BytesIO(body),
        content_length=len(body),
        content_type=kind,
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """Uploads of up to 16 MiB."""
    return {**app_config, "IMPORT_MAX_BYTES": 16 * MIB}


def test_an_upload_of_8_mib_does_not_raise_the_workers_memory_by_its_size(
    app: Any, client: Any, user: tuple[int, str], db: Database
) -> None:
    reader: StatementReader = app.extensions["statement_reader"]
    reader.reader = first_rows
    data = big_csv()
    small, kind = multipart("small.csv", HEAD + LINE * 3, currency="EUR")
    assert post(client, user[1], small, kind).status_code == 201  # what a first request loads
    body, kind = multipart("big.csv", data, currency="EUR")
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        reply = post(client, user[1], body, kind)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reply.status_code == 201, reply.json
    assert reply.json["counts"]["new"] == 3
    # Held whole once, it would be SIZE bytes at least.
    assert peak - before < SIZE / 8, (
        f"the upload raised the peak by {(peak - before) / MIB:.1f} MiB"
    )
    with db.read() as s:
        stored = s.scalar(
            select(StatementImport.sha256).where(StatementImport.id == reply.json["id"])
        )
    # Hashed as it was written to disk: the same digest as the bytes'.
    assert stored == file_digest(data)


def test_a_file_part_spooled_elsewhere_is_copied_to_disk_a_chunk_at_a_time() -> None:
    data = big_csv()[:MIB]
    sent = FileStorage(io.BytesIO(data), "a.csv", "file")
    spool = spooled(sent)
    try:
        assert spool.path.read_bytes() == data and spool.digest() == file_digest(data)
        assert sent.stream is spool  # closed, and removed, with the request
    finally:
        sent.close()
    assert not spool.path.exists()
    with pytest.raises(Unprocessable):
        spooled("a plain field")


@pytest.fixture
def slow_link(app_config: dict[str, Any], user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app with every timing at 0.15 of its default, at their real ratios: a body deadline
    of 1.5 s (a slow upload's pieces come a quarter of it apart; a loaded machine's stall of
    half a second cut one at a deadline of 0.5 s)."""
    from app import create_app

    app = create_app({**app_config, "TIME_SCALE": 0.15})
    server = LiveServer(app, user[1])
    yield server
    server.close()
    close_app(app)


def test_a_slow_upload_that_keeps_sending_outlasts_the_body_deadline(
    slow_link: LiveServer,
) -> None:
    live = slow_link
    deadline = live.app.config["SETTINGS"].timings.body_timeout
    body, kind = multipart("german.csv", (SAMPLES / "german.csv").read_bytes(), account_name="Giro")
    pieces, gap = 10, deadline / 4
    assert pieces * gap > 2 * deadline  # the whole body comes well past the deadline
    client = Client(live.port)
    head = (
        f"POST /api/imports HTTP/1.1\r\nHost: test\r\nContent-Type: {kind}\r\n"
        f"Content-Length: {len(body)}\r\nAuthorization: {live.headers['Authorization']}\r\n\r\n"
    )
    client.send(head.encode())
    step = -(-len(body) // pieces)
    for start in range(0, len(body), step):
        time.sleep(gap)
        client.send(body[start : start + step])
    reply = client.reply()
    client.close()
    assert reply.status == 201, reply.body
    assert live.get("/api/imports").json()["imports"][0]["filename"] == "german.csv"
