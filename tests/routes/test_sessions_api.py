"""Renaming, searching and exporting sessions (searches on SQLite and PostgreSQL alike)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from models import ChatSession, Message, new_id
from models.db import Database
from models.searchable import search_text
from tests.backends import migrated_postgres
from tests.conftest import make_user

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def auth(user: tuple[int, str]) -> dict[str, str]:
    return bearer(user[1])


def new_session(client: Any, auth: dict[str, str], title: str | None = None) -> str:
    response = client.post("/api/sessions", json={"title": title}, headers=auth)
    assert response.status_code == 201
    return response.get_json()["id"]


def add_messages(db: Database, session_id: str, *messages: tuple[str, list[Any]]) -> None:
    """Store messages as a turn would: one branch, each following the one before."""
    with db.transaction() as s:
        parent = None
        for position, (role, content) in enumerate(messages):
            row = Message(
                id=new_id("msg"),
                session_id=session_id,
                position=position,
                role=role,
                content=content,
                parent_id=parent,
                search_text=search_text(content),
            )
            s.add(row)
            parent = row.id
        s.get(ChatSession, session_id).active_leaf_id = parent


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


# Rename


def test_rename_changes_the_title_everywhere(client: Any, auth: dict[str, str]) -> None:
    sid = new_session(client, auth, "old")
    response = client.patch(
        f"/api/sessions/{sid}", json={"title": "Groceries in May"}, headers=auth
    )
    assert response.status_code == 200
    assert response.get_json()["title"] == "Groceries in May"
    assert (
        client.get(f"/api/sessions/{sid}", headers=auth).get_json()["title"] == "Groceries in May"
    )
    listed = client.get("/api/sessions", headers=auth).get_json()["sessions"]
    assert [s["title"] for s in listed] == ["Groceries in May"]
    long = "é" * 200  # 200 characters is the limit, whatever their bytes
    assert (
        client.patch(f"/api/sessions/{sid}", json={"title": long}, headers=auth).status_code == 200
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 201},
        {"title": 5},
        {"title": None},
        {"title": "a\u0000b"},
        {"title": "ok", "extra": 1},
    ],
)
def test_a_bad_rename_is_422_and_changes_nothing(
    client: Any, auth: dict[str, str], body: dict[str, Any]
) -> None:
    sid = new_session(client, auth, "kept")
    response = client.patch(f"/api/sessions/{sid}", json=body, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "validation_error"
    assert client.get(f"/api/sessions/{sid}", headers=auth).get_json()["title"] == "kept"


def test_only_the_owner_renames(client: Any, auth: dict[str, str], db: Database) -> None:
    sid = new_session(client, auth, "mine")
    _, other = make_user(db, "mallory")
    response = client.patch(f"/api/sessions/{sid}", json={"title": "theirs"}, headers=bearer(other))
    assert response.status_code == 404
    assert (
        client.patch("/api/sessions/ses_nope", json={"title": "x"}, headers=auth).status_code == 404
    )
    assert client.get(f"/api/sessions/{sid}", headers=auth).get_json()["title"] == "mine"


# Search


def seed_search(client: Any, auth: dict[str, str], db: Database) -> dict[str, str]:
    ids = {
        "title": new_session(client, auth, "Grocery budget for MAY"),
        "question": new_session(client, auth, "first"),
        "answer": new_session(client, auth, "second"),
        "tool": new_session(client, auth, "third"),
        "accents": new_session(client, auth, "fourth"),
    }
    add_messages(db, ids["question"], ("user", text("What did I spend at the Café Noir?")))
    add_messages(
        db,
        ids["answer"],
        ("user", text("How are my budgets?")),
        ("assistant", text("You spent **412.10 USD** on groceries, 82% of your budget.")),
    )
    # A word only inside a tool's input or result is not text a person reads in the chat.
    add_messages(
        db,
        ids["tool"],
        ("user", text("Balances?")),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "x", "input": {"q": "groceries"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "groceries"}]),
    )
    add_messages(db, ids["accents"], ("user", text("ÉTÉ À PARIS: dépenses")))
    return ids


def search(client: Any, auth: dict[str, str], q: str, **params: Any) -> dict[str, Any]:
    response = client.get("/api/sessions", query_string={"q": q, **params}, headers=auth)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def check_search(client: Any, auth: dict[str, str], db: Database) -> None:
    ids = seed_search(client, auth, db)
    found = search(client, auth, "GROCER")["sessions"]
    assert [s["id"] for s in found] == [ids["answer"], ids["title"]]  # newest first
    assert found[1]["match"] == {"in": "title", "snippet": "Grocery budget for MAY"}
    assert found[0]["match"]["in"] == "messages"
    assert "groceries" in found[0]["match"]["snippet"]
    for q in ["café noir", "CAFÉ NOIR", "Café"]:
        assert [s["id"] for s in search(client, auth, q)["sessions"]] == [ids["question"]]
    assert [s["id"] for s in search(client, auth, "été à paris")["sessions"]] == [ids["accents"]]
    assert [s["id"] for s in search(client, auth, "82%")["sessions"]] == [ids["answer"]]
    assert search(client, auth, "100%")["sessions"] == []  # % and _ are characters, not patterns
    assert search(client, auth, "_")["sessions"] == []
    assert search(client, auth, '"type"')["sessions"] == []  # the stored JSON is not searched
    _, other = make_user(db, "mallory")
    assert search(client, bearer(other), "grocer")["sessions"] == []


def test_search_finds_titles_and_message_text_case_insensitively(
    client: Any, auth: dict[str, str], db: Database
) -> None:
    check_search(client, auth, db)


@pytest.fixture
def pg_app() -> Iterator[Any]:
    """The app on a fresh PostgreSQL database."""
    with migrated_postgres() as url:
        from app import create_app

        app = create_app({"DATABASE_URL": url, "ANTHROPIC_API_KEY": None, "SECRET_KEY": "s"})
        yield app
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_search_works_the_same_on_postgres(pg_app: Any) -> None:
    db = pg_app.extensions["db"]
    _, token = make_user(db, "pg")
    check_search(pg_app.test_client(), bearer(token), db)


def test_search_pages_like_the_list(client: Any, auth: dict[str, str], db: Database) -> None:
    ids = [new_session(client, auth, f"rent {n}") for n in range(7)]
    for n in range(5):
        new_session(client, auth, f"other {n}")
    seen: list[str] = []
    cursor = None
    while True:
        page = search(client, auth, "RENT", limit=3, **({"cursor": cursor} if cursor else {}))
        seen += [s["id"] for s in page["sessions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(ids))


@pytest.mark.parametrize("q", ["", "   ", "x" * 201, "a\u0000"])
def test_a_bad_search_is_422(client: Any, auth: dict[str, str], q: str) -> None:
    response = client.get("/api/sessions", query_string={"q": q}, headers=auth)
    assert response.status_code == 422
    assert "q" in response.get_json()["error"]["details"]


# Export


def test_export_markdown_is_a_download_of_the_whole_chat(
    client: Any, auth: dict[str, str], db: Database
) -> None:
    sid = new_session(client, auth, "Spending in Café May")
    add_messages(
        db,
        sid,
        ("user", text("What did I spend?")),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "spending", "input": {"m": 5}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": '{"total": "9.50"}'}]),
        ("assistant", text("You spent **9.50 USD**.\n\n```\ncode ``` inside\n```")),
    )
    response = client.get(f"/api/sessions/{sid}/export?format=md", headers=auth)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.headers["Content-Disposition"] == (
        'attachment; filename="chat-Spending-in-Cafe-May.md"'
    )
    body = response.get_data(as_text=True)
    assert body.startswith("# Spending in Café May\n")
    for part in [
        "## You\n\nWhat did I spend?",
        '**Tool call** `spending`\n\n```json\n{\n  "m": 5\n}\n```',
        '**Tool result**\n\n```json\n{\n  "total": "9.50"\n}\n```',
        "You spent **9.50 USD**.\n\n```\ncode ``` inside\n```",
    ]:
        assert part in body
    assert body.index("What did I spend?") < body.index("spending") < body.index("9.50 USD")
    default = client.get(f"/api/sessions/{sid}/export", headers=auth)
    assert default.headers["Content-Disposition"] == response.headers["Content-Disposition"]


def test_export_json_holds_every_message(client: Any, auth: dict[str, str], db: Database) -> None:
    sid = new_session(client, auth, "漢字")
    add_messages(db, sid, ("user", text("Hi")), ("assistant", text("Hello")))
    response = client.get(f"/api/sessions/{sid}/export?format=json", headers=auth)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Content-Disposition"] == f'attachment; filename="chat-{sid}.json"'
    body = json.loads(response.get_data(as_text=True))
    shown = client.get(f"/api/sessions/{sid}", headers=auth).get_json()
    assert body["title"] == "漢字" and body["messages"] == shown["messages"]
    assert body["usage"] == shown["usage"] and "exported_at" in body


def test_bad_or_foreign_exports_are_refused(
    client: Any, auth: dict[str, str], db: Database
) -> None:
    sid = new_session(client, auth, "x")
    response = client.get(f"/api/sessions/{sid}/export?format=pdf", headers=auth)
    assert response.status_code == 422 and "format" in response.get_json()["error"]["details"]
    _, other = make_user(db, "mallory")
    assert client.get(f"/api/sessions/{sid}/export", headers=bearer(other)).status_code == 404
    assert client.get(f"/api/sessions/{sid}/export").status_code == 401
