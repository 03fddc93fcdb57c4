"""Titles and token names are one line of plain text; message text keeps its lines and tabs."""

from __future__ import annotations

from typing import Any

import pytest

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

# C0 and C1 controls, DEL, line and paragraph separators, bidi embeddings, overrides, isolates.
REFUSED = [
    "\x01",
    "\t",
    "\n",
    "\r",
    "\x1b[31m",
    "\x7f",
    "\x85",
    "\x9b",
    "\u2028",
    "\u2029",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
]


@pytest.fixture
def auth(user: tuple[int, str]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user[1]}"}


@pytest.mark.parametrize("char", REFUSED, ids=[f"U+{ord(c[0]):04X}" for c in REFUSED])
def test_a_title_with_a_control_or_bidi_character_is_422_and_changes_nothing(
    client: Any, auth: dict[str, str], char: str
) -> None:
    title = f"Invoice {char}fdp.exe"
    created = client.post("/api/sessions", json={"title": title}, headers=auth)
    assert created.status_code == 422, created.get_json()
    error = created.get_json()["error"]
    assert error["code"] == "validation_error" and "title" in error["details"]
    assert f"U+{ord(char[0]):04X}" in error["details"]["title"][0]
    assert client.get("/api/sessions", headers=auth).get_json()["sessions"] == []

    session = client.post("/api/sessions", json={"title": "Plain"}, headers=auth).get_json()
    renamed = client.patch(f"/api/sessions/{session['id']}", json={"title": title}, headers=auth)
    assert renamed.status_code == 422 and "title" in renamed.get_json()["error"]["details"]
    shown = client.get(f"/api/sessions/{session['id']}", headers=auth).get_json()
    assert shown["title"] == "Plain"

    named = client.post("/api/tokens", json={"name": title}, headers=auth)
    assert named.status_code == 422 and "name" in named.get_json()["error"]["details"]


def test_titles_in_any_script_are_kept(client: Any, auth: dict[str, str]) -> None:
    for title in ["Groceries in März", "بودجه ماهانه", "家計簿 ✓", "Zero\u200bwidth"]:
        created = client.post("/api/sessions", json={"title": title}, headers=auth)
        assert created.status_code == 201 and created.get_json()["title"] == title


def test_message_text_keeps_newlines_and_tabs(client: Any, auth: dict[str, str]) -> None:
    session = client.post("/api/sessions", headers=auth).get_json()["id"]
    text = "Line one\n\tindented\r\nline three"
    started = client.post(f"/api/sessions/{session}/turns", json={"message": text}, headers=auth)
    assert started.status_code == 202, started.get_json()
    assert client.application.extensions["turns"].wait(started.get_json()["turn_id"])
    shown = client.get(f"/api/sessions/{session}", headers=auth).get_json()
    assert shown["messages"][0]["content"][0]["text"] == text
