"""A session's detail shows its newest messages and pages the rest; exports stream in batches,
escape what is not Markdown, and keep a cited sentence in one paragraph."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from sqlalchemy import insert

from models import ChatSession, Message, new_id
from models.db import Database
from tests.backends import migrated_postgres
from tests.conftest import make_user
from tests.live import LiveServer


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def store_branch(db: Database, session_id: str, contents: list[tuple[str, Any]]) -> list[str]:
    """Messages in one branch, each following the one before; the last is the leaf."""
    ids, rows, parent = [], [], None
    for position, (role, content) in enumerate(contents):
        mid = new_id("msg")
        rows.append(
            {
                "id": mid,
                "session_id": session_id,
                "position": position,
                "role": role,
                "content": content,
                "parent_id": parent,
                "status": "complete",
            }
        )
        ids.append(mid)
        parent = mid
    with db.begin() as conn:
        conn.execute(insert(Message.__table__), rows)
        conn.execute(
            ChatSession.__table__.update()
            .where(ChatSession.__table__.c.id == session_id)
            .values(active_leaf_id=parent)
        )
    return ids


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


def chat(count: int) -> list[tuple[str, Any]]:
    return [("user" if n % 2 == 0 else "assistant", text(f"message {n}")) for n in range(count)]


def new_session(client: Any, token: str, title: str = "t") -> str:
    made = client.post("/api/sessions", json={"title": title}, headers=bearer(token))
    assert made.status_code == 201
    return str(made.get_json()["id"])


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, app_config: dict[str, Any]) -> Iterator[Any]:
    from app import create_app

    if request.param == "sqlite":
        app = create_app(app_config)
        yield app
    else:
        with migrated_postgres() as url:
            app = create_app({**app_config, "DATABASE_URL": url})
            yield app
    app.extensions["engine"].close()
    app.extensions["db"].dispose()


# Paged detail


def test_the_detail_shows_the_newest_messages_and_pages_back_to_the_first(backend: Any) -> None:
    db, client = backend.extensions["db"], backend.test_client()
    _, token = make_user(db, "alice")
    auth = bearer(token)
    sid = new_session(client, token)
    ids = store_branch(db, sid, chat(250))
    # An edit of the first question: a sibling of ids[0] on another branch, never shown here.
    with db.begin() as conn:
        conn.execute(
            insert(Message.__table__).values(
                id="msg_other", session_id=sid, position=250, role="user", content=text("x")
            )
        )
    detail = client.get(f"/api/sessions/{sid}", headers=auth).get_json()
    assert [m["id"] for m in detail["messages"]] == ids[150:]
    assert detail["earlier_cursor"] == "150" and detail["message_count"] == 250
    shown = detail["messages"]
    cursor = detail["earlier_cursor"]
    while cursor is not None:
        page = client.get(
            f"/api/sessions/{sid}/messages",
            query_string={"before": cursor, "limit": 100},
            headers=auth,
        ).get_json()
        shown = page["messages"] + shown
        cursor = page["earlier_cursor"]
    assert [m["id"] for m in shown] == ids
    assert shown[0]["sibling_ids"] == [ids[0], "msg_other"]
    # The forward pages agree, message for message.
    forward: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = client.get(f"/api/sessions/{sid}/messages", query_string=query, headers=auth)
        body = page.get_json()
        forward += body["messages"]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert forward == shown
    # The page the detail shows is the page its cursor names.
    same = client.get(
        f"/api/sessions/{sid}/messages", query_string={"cursor": "150", "limit": 100}, headers=auth
    ).get_json()
    assert same["messages"] == detail["messages"] and same["earlier_cursor"] == "150"


def test_a_short_session_is_shown_whole(client: Any, user: tuple[int, str], db: Database) -> None:
    sid = new_session(client, user[1])
    ids = store_branch(db, sid, chat(3))
    detail = client.get(f"/api/sessions/{sid}", headers=bearer(user[1])).get_json()
    assert [m["id"] for m in detail["messages"]] == ids
    assert detail["earlier_cursor"] is None and detail["message_count"] == 3


def test_cursor_and_before_together_name_the_messages_between(
    client: Any, user: tuple[int, str], db: Database
) -> None:
    sid = new_session(client, user[1])
    ids = store_branch(db, sid, chat(10))
    path = f"/api/sessions/{sid}/messages"
    page = client.get(f"{path}?cursor=2&before=8&limit=4", headers=bearer(user[1])).get_json()
    assert [m["id"] for m in page["messages"]] == ids[4:8]
    assert page["earlier_cursor"] == "4" and page["next_cursor"] == "8"
    page = client.get(f"{path}?cursor=6&before=3", headers=bearer(user[1])).get_json()
    assert page["messages"] == [] and page["earlier_cursor"] == "3"


# Streamed exports


@pytest.fixture
def big_session(db: Database, user: tuple[int, str], client: Any) -> str:
    sid = new_session(client, user[1], "Big")
    words = "You spent 412.10 USD on groceries in May, 82% of the budget you set. " * 6
    store_branch(
        db, sid, [(role, text(f"{n}: {words}")) for n, (role, _) in enumerate(chat(10_000))]
    )
    return sid


def peak_while_reading(client: Any, path: str, auth: dict[str, str]) -> tuple[int, bytes, bytes]:
    """Peak traced memory (every thread) while the export is read chunk by chunk, and its
    first and last kilobyte."""
    client.get("/api/sessions", headers=auth)  # the engine and its pools are started
    gc.collect()
    tracemalloc.start()
    try:
        response = client.get(path, headers=auth, buffered=False)
        assert response.status_code == 200
        head, tail = b"", b""
        for chunk in response.response:
            head = head or chunk[:1024]
            tail = (tail + chunk)[-1024:]
        response.close()
        return tracemalloc.get_traced_memory()[1], head, tail
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_an_export_of_10000_messages_keeps_memory_flat(
    client: Any, user: tuple[int, str], big_session: str, fmt: str
) -> None:
    path = f"/api/sessions/{big_session}/export?format={fmt}"
    peak, head, tail = peak_while_reading(client, path, bearer(user[1]))
    # The files are 4.9 MB (md) and 7.9 MB (json). Built whole, the export peaked at 34 and
    # 57 MB; read in batches of 200 messages it peaks near 2.5 MB.
    assert peak < 8_000_000, peak
    if fmt == "md":
        assert head.startswith(b"# Big\n") and b"9999: You spent" in tail
    else:
        assert head.startswith(b'{\n  "id"') and tail.endswith(b"\n  ]\n}\n")


def test_an_export_is_whole_and_valid(client: Any, user: tuple[int, str], big_session: str) -> None:
    auth = bearer(user[1])
    body = client.get(f"/api/sessions/{big_session}/export?format=json", headers=auth)
    exported = json.loads(body.get_data())
    assert len(exported["messages"]) == 10_000 and "exported_at" in exported
    assert exported["messages"][-1]["content"][0]["text"].startswith("9999: ")
    markdown = client.get(f"/api/sessions/{big_session}/export", headers=auth).get_data(True)
    assert markdown.count("## You\n") == 5000 and markdown.count("## Assistant\n") == 5000


def test_the_host_streams_an_export_as_it_is_read(
    app: Any, user: tuple[int, str], big_session: str
) -> None:
    live = LiveServer(app, user[1])
    try:
        path = f"/api/sessions/{big_session}/export?format=md"
        with (
            httpx2.Client(base_url=live.url, headers=live.headers, timeout=60) as http,
            http.stream("GET", path) as response,
        ):
            assert response.status_code == 200
            # Streamed in parts, not built whole first: no length known in advance.
            assert response.headers.get("transfer-encoding") == "chunked"
            assert "content-length" not in response.headers
            assert response.headers["content-disposition"] == 'attachment; filename="chat-Big.md"'
            parts = sum(1 for _ in response.iter_raw())
            assert parts > 1
    finally:
        live.close()


# Markdown escaping and citations


def test_markdown_export_escapes_stored_text_and_keeps_cited_sentences_whole(
    client: Any, user: tuple[int, str], db: Database
) -> None:
    auth = bearer(user[1])
    sid = new_session(client, user[1])
    title = "# Spend\u202egnp.exe <b>me</b> | `x` [link](javascript:1)"
    with db.begin() as conn:  # as stored before titles were checked at input
        conn.execute(
            ChatSession.__table__.update()
            .where(ChatSession.__table__.c.id == sid)
            .values(title=title + "\x1b[31m\nnext")
        )
    cite = {"type": "search_result_location", "source": "txns:x", "cited_text": "9.50"}
    store_branch(
        db,
        sid,
        [
            ("user", text("- not a list\n1. nor this\n# nor a heading\n    nor code\u2066")),
            (
                "assistant",
                [
                    {"type": "text", "text": "You spent "},
                    {"type": "text", "text": "**9.50 USD** on food", "citations": [cite]},
                    {"type": "text", "text": " in May.\n\n- Groceries: "},
                    {"type": "text", "text": "5.00 USD", "citations": [cite]},
                    {"type": "text", "text": "\n- Rent: 4.50 USD"},
                    {"type": "tool_use", "id": "t1", "name": "a`b\u202e", "input": {"k": "```"}},
                ],
            ),
            (
                "user",
                [{"type": "tool_result", "tool_use_id": "t1", "content": "ok\u0007 ``` done"}],
            ),
        ],
    )
    body = client.get(f"/api/sessions/{sid}/export?format=md", headers=auth).get_data(True)
    lines = body.split("\n")
    assert lines[0] == (
        r"# \# Spend\u202egnp.exe \<b\>me\</b\> \| \`x\` \[link\](javascript:1)\u001b\[31m next"
    )
    for char in "\u202e\u2066\x1b\x07":
        assert char not in body
    assert "\\- not a list\n1\\. nor this\n\\# nor a heading\nnor code\\u2066" in body
    assert (
        "You spent **9.50 USD** on food in May.\n\n- Groceries: 5.00 USD\n- Rent: 4.50 USD\n"
        in body
    )
    assert "**Tool call** ``a`b\\u202e``" in body
    assert '````json\n{\n  "k": "```"\n}\n````' in body
    assert "````\nok\\u0007 ``` done\n````" in body
