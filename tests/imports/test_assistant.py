"""The assistant (the offline demo model) answers over imported rows at once, citing them."""

from __future__ import annotations

import io
import json
from typing import Any

from tests.helpers import text_of
from tests.imports.conftest import SAMPLES
from tests.live import LiveServer


def events(raw: bytes) -> list[tuple[int, str, dict[str, Any]]]:
    """The (id, type, data) of an SSE body."""
    found = []
    for block in raw.decode().split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != ":"
        )
        if "data" in fields and "event" in fields:
            found.append((int(fields.get("id", 0)), fields["event"], json.loads(fields["data"])))
    return found


def test_a_merchant_found_only_in_the_file_is_answered_with_its_figure(live: LiveServer) -> None:
    data = (SAMPLES / "multi_account.ofx").read_bytes()
    draft = live.post("/api/imports", files={"file": ("bank.ofx", io.BytesIO(data))}).json()
    assert live.post(f"/api/imports/{draft['id']}/commit").json()["added"] == 4
    turn = live.start_turn("How much did I spend at Blue Heron Bakery in March 2026?")
    assert live.app.extensions["turns"].wait(turn["turn_id"])
    found = events(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
    text = text_of(found)
    assert "**42.50 USD**, across 1 transaction" in text, text
    sources = {
        citation["source"]
        for _, kind, data in found
        if kind == "block_end"
        for citation in data.get("citations") or []
    }
    rows = [s for s in sources if s.startswith("txn:")]
    assert rows, sources
    for source in rows:
        cited = live.get(f"/api/transactions/{source.removeprefix('txn:')}").json()
        assert (cited["merchant"], cited["amount"]) == ("Blue Heron Bakery", "-42.50")
