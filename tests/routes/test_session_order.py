"""The list shows the most recently active chats first: a chat continued today moves up."""

from __future__ import annotations

from tests.live import LiveServer


def listed(live: LiveServer, **params: object) -> list[str]:
    return [s["id"] for s in live.get("/api/sessions", params=params).json()["sessions"]]


def searched(live: LiveServer, q: str) -> list[str]:
    """Every session a search finds, its pages followed as a client follows them (a search
    cut short by its time budget answers a partial page and a cursor)."""
    found: list[str] = []
    params: dict[str, object] = {"q": q}
    while True:
        page = live.get("/api/sessions", params=params).json()
        found += [s["id"] for s in page["sessions"]]
        if page.get("next_cursor") is None:
            return found
        params = {"q": q, "cursor": page["next_cursor"]}


def test_a_turn_moves_its_chat_to_the_top_and_paging_follows_the_same_order(
    live: LiveServer,
) -> None:
    older = live.post("/api/sessions", json={"title": "Older"}).json()["id"]
    newer = live.post("/api/sessions", json={"title": "Newer"}).json()["id"]
    assert listed(live) == [newer, older]  # created last, active last
    turn = live.start_turn("What are my account balances?", older)
    live.read_events(f"/api/turns/{turn['turn_id']}/events")
    assert listed(live) == [older, newer]  # continued: first now
    shown = live.get("/api/sessions").json()["sessions"][0]
    assert shown["updated_at"] > shown["created_at"]
    first = live.get("/api/sessions", params={"limit": 1}).json()
    after = listed(live, limit=1, cursor=first["next_cursor"])
    assert [first["sessions"][0]["id"], *after] == [older, newer]
    # A search lists by creation, newest first, as before.
    assert searched(live, "e") == [newer, older]
