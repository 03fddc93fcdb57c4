"""Issue 37's acceptance: while 8 hostile files are uploaded at once, another user's requests
are answered within 1 s, on the real host (reader processes run at a lower priority)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

from models.db import Database
from tests.conftest import make_user
from tests.imports.test_hostile_files import CDATA, NESTED
from tests.live import LiveServer

pytestmark = pytest.mark.slow

UPLOADS = 8


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """Room for the 8 uploads at once: one user may run all of them."""
    return {**app_config, "IMPORT_CONCURRENCY": UPLOADS, "IMPORT_PROCESS_CONCURRENCY": UPLOADS}


def test_eight_hostile_uploads_leave_another_user_answered_within_a_second(
    live: LiveServer, db: Database
) -> None:
    _, bobs = make_user(db, "bob")
    bob = httpx2.Client(base_url=live.url, headers={"Authorization": f"Bearer {bobs}"}, timeout=30)
    assert bob.get("/api/accounts").status_code == 200
    files = [("nested.ofx", NESTED), ("cdata.ofx", CDATA)] * (UPLOADS // 2)
    in_flight = threading.Event()
    waits: list[float] = []

    def upload(name: str, data: bytes) -> tuple[int, str, float]:
        with httpx2.Client(base_url=live.url, headers=live.headers, timeout=60) as client:
            began = time.monotonic()
            in_flight.set()
            reply = client.post("/api/imports", files={"file": (name, data)})
            return reply.status_code, reply.json()["error"]["code"], time.monotonic() - began

    with ThreadPoolExecutor(UPLOADS) as pool:
        futures = [pool.submit(upload, name, data) for name, data in files]
        in_flight.wait()
        while not all(f.done() for f in futures):
            began = time.monotonic()
            assert bob.get("/api/accounts").status_code == 200
            waits.append(time.monotonic() - began)
        answers = [f.result() for f in futures]
    bob.close()
    print(
        f"\n{UPLOADS} hostile uploads: {max(a[2] for a in answers):.2f} s the slowest; "
        f"bob's {len(waits)} GETs meanwhile: {max(waits):.3f} s the slowest"
    )
    assert {(status, code) for status, code, _ in answers} == {(422, "unparsable_file")}
    assert max(a[2] for a in answers) < 10
    assert len(waits) >= 3 and max(waits) < 1.0
