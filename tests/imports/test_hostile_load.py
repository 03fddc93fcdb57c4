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


# Wall-clock bounds on a shared machine: a stall of the whole machine (another process's burst)
# can delay one GET for reasons no server controls, as once in a loaded run of the suite (2.2 s
# among 226 GETs under 0.15 s), and the niced readers get little CPU while other processes
# keep both cores busy (11.8 s for the slowest upload beside three busy loops). Such a stall
# does not come twice, a slow server does: the scenario runs again once before a bound fails.
TRIES = 2


def test_eight_hostile_uploads_leave_another_user_answered_within_a_second(
    live: LiveServer, db: Database
) -> None:
    _, bobs = make_user(db, "bob")
    bob = httpx2.Client(base_url=live.url, headers={"Authorization": f"Bearer {bobs}"}, timeout=30)
    try:
        assert bob.get("/api/accounts").status_code == 200
        for attempt in range(1, TRIES + 1):
            answers, waits = hostile_uploads_while_bob_reads(live, bob)
            print(
                f"\n{UPLOADS} hostile uploads: {max(a[2] for a in answers):.2f} s the slowest; "
                f"bob's {len(waits)} GETs meanwhile: {max(waits):.3f} s the slowest"
            )
            assert {(status, code) for status, code, _ in answers} == {(422, "unparsable_file")}
            assert len(waits) >= 3
            slowest = max(a[2] for a in answers)
            if (max(waits) < 1.0 and slowest < 10) or attempt == TRIES:
                break
        assert max(waits) < 1.0, waits
        assert slowest < 10
    finally:
        bob.close()


def hostile_uploads_while_bob_reads(
    live: LiveServer, bob: httpx2.Client
) -> tuple[list[tuple[int, str, float]], list[float]]:
    """Upload the hostile files at once; while they are read, Bob lists his accounts again
    and again. Each upload's (status, error code, seconds), and each of Bob's waits."""
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
        return [f.result() for f in futures], waits
