"""kill -9 in the middle of a turn: after restart the turn is interrupted, nothing is lost."""

from __future__ import annotations

from pathlib import Path

import httpx2

from models.db import Database
from streaming.history import validate_history
from streaming.protocol import decode_stream
from tests.conftest import make_user
from tests.helpers import assert_well_formed
from tests.recovery.server_process import ServerProcess


def read_until(client: httpx2.Client, path: str, predicate) -> list:  # type: ignore[no-untyped-def]
    """Read SSE events until `predicate(events)` holds, then drop the connection."""
    raw = b""
    with client.stream("GET", path) as response:
        for chunk in response.iter_raw():
            raw += chunk
            complete = raw[: raw.rfind(b"\n\n") + 2]
            events = decode_stream(complete)
            if predicate(events):
                return events
    return decode_stream(raw)


def deltas_after_tool_result(n: int):  # type: ignore[no-untyped-def]
    """True once `n` block deltas followed the first tool_result (the 2nd model round)."""

    def check(events: list) -> bool:  # type: ignore[type-arg]
        kinds = [t for _, t, _ in events]
        if "tool_result" not in kinds:
            return False
        return kinds[kinds.index("tool_result") :].count("block_delta") >= n

    return check


def test_kill_9_mid_turn_leaves_a_valid_history_and_the_next_turn_completes(
    db_url: str, tmp_path: Path
) -> None:
    db = Database(db_url)
    _, token = make_user(db, "carol")
    env = {
        "DATABASE_URL": db_url,
        "INSTANCE_PATH": str(tmp_path),
        "SECRET_KEY": "s",
        "ANTHROPIC_API_KEY": "",
        "DEMO_EVENT_DELAY": "0.01",
        "HEARTBEAT_SECONDS": "0.2",
        "STALE_TURN_SECONDS": "1.0",
    }
    server = ServerProcess(env)
    server.start()
    try:
        http = server.client(token)
        sid = http.post("/api/sessions").json()["id"]
        turn = http.post(
            f"/api/sessions/{sid}/turns",
            json={"message": "What did I spend on groceries last month?"},
        ).json()
        # Wait for the second model round to be streaming text, after a tool result.
        seen = read_until(
            http,
            f"/api/turns/{turn['turn_id']}/events",
            deltas_after_tool_result(5),
        )
        server.kill9()
    finally:
        server.stop()
    assert not any(t == "turn_end" for _, t, _ in seen)

    restarted = ServerProcess(env, port=server.port)
    with restarted:
        http = restarted.client(token)
        status = _wait_for_status(http, turn["turn_id"])
        assert status["status"] == "interrupted"
        session = http.get(f"/api/sessions/{sid}").json()
        tool_results = [
            b for m in session["messages"] for b in m["content"] if b.get("type") == "tool_result"
        ]
        assert tool_results, "the tool result committed before the crash must be kept"
        assert session["messages"][1]["role"] == "assistant"
        assert session["messages"][1]["content"], "completed blocks survive the crash"
        replay = decode_stream(http.get(f"/api/turns/{turn['turn_id']}/events").content)
        assert_well_formed(replay)
        assert replay[-1][2]["status"] == "interrupted"

        nxt = http.post(f"/api/sessions/{sid}/turns", json={"message": "Am I over budget?"})
        assert nxt.status_code == 202, nxt.text
        events = decode_stream(
            http.get(nxt.json()["events_url"], headers={"Authorization": ""}).content
        )
        assert events[-1][2]["status"] == "completed", events[-3:]
        history = [
            {"role": m["role"], "content": m["content"]}
            for m in http.get(f"/api/sessions/{sid}").json()["messages"]
            if m["status"] != "discarded"
        ]
    from streaming.history import repair_history

    assert validate_history(repair_history(history), expect_user_last=False) == []
    db.dispose()


def _wait_for_status(http: httpx2.Client, turn_id: str) -> dict:  # type: ignore[type-arg]
    import time

    deadline = time.monotonic() + 10
    while True:
        status = http.get(f"/api/turns/{turn_id}").json()
        if status["status"] != "running" or time.monotonic() > deadline:
            return status
        time.sleep(0.2)
