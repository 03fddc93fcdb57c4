"""Revoked or expired tokens end the SSE streams they opened, within seconds, on a live server."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import update

from models import ApiToken
from services.token_watch import TokenWatcher
from tests.live import LiveServer, decode
from tests.waits import PATIENCE, wait_until, wait_until_async

# A demo turn long enough to still be running when its token is revoked.
SLOW = {"DEMO_EVENT_DELAY": 0.25}


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, **SLOW}


class Reader(threading.Thread):
    """Reads one SSE response to its end in the background."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers
        self.raw = b""
        self.status = 0

    def run(self) -> None:
        with (
            httpx2.Client(timeout=60) as client,
            client.stream("GET", self.url, headers=self.headers) as response,
        ):
            self.status = response.status_code
            for chunk in response.iter_raw():
                self.raw += chunk

    def wait_for_events(self, count: int) -> None:
        def read_them() -> bool:
            assert self.is_alive(), self.raw
            return sum(1 for f in self.raw.split(b"\n\n") if f.startswith(b"id: ")) >= count

        wait_until(read_them, timeout=30, message=f"fewer than {count} events arrived")


def new_token(live: LiveServer, **body: Any) -> dict[str, Any]:
    response = live.post("/api/tokens", json={"name": "stream", **body})
    assert response.status_code == 201, response.text
    return response.json()


def start_turn(live: LiveServer, token: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    sid = live.post("/api/sessions", headers=headers).json()["id"]
    turn = live.post(f"/api/sessions/{sid}/turns", json={"message": "hi"}, headers=headers)
    assert turn.status_code == 202, turn.text
    return turn.json()


def hold_the_turn(live: LiveServer) -> None:
    """From now on the model waits an hour before each event: the turn cannot end the stream."""
    live.app.extensions["turns"].deps.model.demo_pace.delay = 3600


def ended_with_error(reader: Reader, code: str) -> None:
    reader.join(PATIENCE)
    assert not reader.is_alive(), "the stream outlived its token"
    assert reader.status == 200
    events = decode(reader.raw)
    assert events and all(kind != "turn_end" for _, kind, _ in events)
    last = reader.raw.rstrip(b"\n").rsplit(b"\n\n", 1)[-1]
    assert last.startswith(b"event: error\ndata: ")
    assert json.loads(last.split(b"data: ", 1)[1])["error"]["code"] == code


def test_revoking_through_the_api_ends_the_stream_and_the_token(live: LiveServer) -> None:
    # Same process: no poll needed (none comes within the hour), the stream ends at its next
    # wake.
    live.app.extensions["token_watcher"].interval = 3600
    made = new_token(live)
    turn = start_turn(live, made["token"])
    headers = {"Authorization": f"Bearer {made['token']}"}
    reader = Reader(f"{live.url}/api/turns/{turn['turn_id']}/events", headers)
    reader.start()
    reader.wait_for_events(3)
    hold_the_turn(live)
    assert live.http.delete(f"/api/tokens/{made['id']}").status_code == 204
    ended_with_error(reader, "token_revoked")
    refused = live.get("/api/sessions", headers=headers)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "token_revoked"
    live.post(f"/api/turns/{turn['turn_id']}/cancel")


def test_a_revocation_by_another_process_ends_signed_url_streams(
    live: LiveServer, app: Any
) -> None:
    made = new_token(live)
    turn = start_turn(live, made["token"])
    reader = Reader(live.url + turn["events_url"], {})
    reader.start()
    reader.wait_for_events(3)
    hold_the_turn(live)
    # Straight to the database, as another worker's DELETE would: only the poll (every 2 s)
    # sees it.
    with app.extensions["db"].transaction() as s:
        now = datetime.now(UTC)
        s.execute(update(ApiToken).where(ApiToken.id == made["id"]).values(revoked_at=now))
    ended_with_error(reader, "token_revoked")
    again = httpx2.get(live.url + turn["events_url"])
    assert again.status_code == 401 and again.json()["error"]["code"] == "token_revoked"
    live.post(f"/api/turns/{turn['turn_id']}/cancel")


def test_an_expiring_token_ends_its_stream(live: LiveServer, app: Any) -> None:
    made = new_token(live, expires_in=60)
    turn = start_turn(live, made["token"])
    headers = {"Authorization": f"Bearer {made['token']}"}
    reader = Reader(f"{live.url}/api/turns/{turn['turn_id']}/events", headers)
    reader.start()
    reader.wait_for_events(3)
    hold_the_turn(live)
    with app.extensions["db"].transaction() as s:
        soon = datetime.now(UTC) + timedelta(seconds=0.5)
        s.execute(update(ApiToken).where(ApiToken.id == made["id"]).values(expires_at=soon))
    ended_with_error(reader, "token_expired")
    live.post(f"/api/turns/{turn['turn_id']}/cancel")


def test_the_watcher_polls_only_while_streams_are_open(app: Any, user: tuple[int, str]) -> None:
    db = app.extensions["db"]

    async def blocking(call: Any) -> Any:
        return call()

    async def scenario() -> None:
        watcher = TokenWatcher(db, 0.01, blocking)
        token_id = 1
        watcher.open(token_id)
        watcher.open(token_id)
        with db.transaction() as s:
            s.execute(update(ApiToken).values(revoked_at=datetime.now(UTC)))
        await wait_until_async(lambda: watcher.dead(token_id))  # the poll task marks it
        assert watcher.dead(token_id) == ("token_revoked", "The API token was revoked.")
        watcher.close(token_id)
        assert watcher.dead(token_id) is not None
        watcher.close(token_id)
        assert watcher.dead(token_id) is None
        task = watcher._task
        assert task is not None
        await asyncio.wait_for(task, 5)  # nothing open: the poll task ends
        watcher.open(42)  # a token that no longer exists (its user was deleted)
        assert watcher.poll([42]) == {42: ("token_revoked", "The API token was revoked.")}
        watcher.close(42)

    asyncio.run(scenario())
