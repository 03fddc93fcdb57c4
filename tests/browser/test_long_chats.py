"""A long chat opens at its newest messages and loads earlier ones at the top; a search the
server answers in partial pages, or refuses for a moment (429), is followed to its end."""

from __future__ import annotations

import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, select

from models import ChatSession, Message, User, new_id
from models.db import Database
from models.searchable import search_text, search_title
from tests.browser.page import ChatPage


def sign_in(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


def questions(page: ChatPage) -> list[str]:
    return page.js(
        "return [...document.querySelectorAll('#turns .msg.user .bubble')]"
        ".map((b) => b.textContent)"
    )


def test_a_long_chat_loads_its_earlier_messages_at_the_top(
    serve: Any, page: ChatPage, db: Database
) -> None:
    server = serve()
    sid = server.post("/api/sessions", json={"title": "Long"}).json()["id"]
    rows, parent = [], None
    for n in range(250):
        mid = new_id("msg")
        role = "user" if n % 2 == 0 else "assistant"
        words = f"question {n // 2}" if role == "user" else f"answer {n // 2}\n\n" + "line\n\n" * 3
        content = [{"type": "text", "text": words}]
        rows.append(
            {
                "id": mid,
                "session_id": sid,
                "position": n,
                "role": role,
                "content": content,
                "parent_id": parent,
                "search_text": search_text(content),
            }
        )
        parent = mid
    with db.begin() as conn:
        conn.execute(insert(Message.__table__), rows)
        conn.execute(
            ChatSession.__table__.update()
            .where(ChatSession.__table__.c.id == sid)
            .values(active_leaf_id=parent)
        )
    sign_in(page, server)
    page.wait(lambda: page.visible("#sessions .session .open"), what="the chat list")
    page.click("#sessions .session .open")
    page.wait(lambda: questions(page)[-1:] == ["question 124"], what="the newest messages")
    assert questions(page)[0] == "question 75"  # the newest 100 messages: questions 75 to 124

    def scrolled_up_to_more(n: int) -> bool:
        """More shown, or scroll to the top (again, as a reader does: a scroll that came while
        the page was still putting the reader back after the last page is not acted on)."""
        if len(questions(page)) > n:
            return True
        page.js("document.getElementById('conversation').scrollTop = 0")
        return False

    for _ in range(2):
        shown = len(questions(page))
        page.wait(lambda n=shown: scrolled_up_to_more(n), what="earlier messages")
    assert questions(page) == [f"question {n}" for n in range(125)]
    # The reader stays where they were: not thrown to the end or the top.
    top = page.js("return document.getElementById('conversation').scrollTop")
    assert top > 0
    assert page.console_errors() == []


def test_a_search_cut_by_its_budget_is_followed_to_the_end(
    serve: Any, page: ChatPage, db: Database
) -> None:
    server = serve(SEARCH_MAX_SESSIONS=3)  # every page stops after three sessions
    with db.read() as s:
        user_id = s.scalar(select(User.id).where(User.name == "browser"))
    base = datetime(2025, 1, 1, tzinfo=UTC)
    titles = [f"Chat {n}" if n % 7 else f"Budget talk {n}" for n in range(20)]
    with db.begin() as conn:
        conn.execute(
            insert(ChatSession.__table__),
            [
                {
                    "id": new_id("ses"),
                    "user_id": user_id,
                    "title": t,
                    "search_title": search_title(t),
                    "created_at": base + timedelta(minutes=n),
                }
                for n, t in enumerate(titles)
            ],
        )
    sign_in(page, server)
    page.wait(lambda: page.visible("#sessions .session .open"), what="the chat list")
    gate = server.app.extensions["search_gate"]
    with ExitStack() as held:
        for _ in range(gate.per_user):  # the user's searches are all taken: 429 at first
            held.enter_context(gate.enter(user_id))
        page.driver.find_element("id", "search").send_keys("budget")
        # The places stay taken this long (the scenario): the page is refused (429, retry
        # after 1 s) and asks again meanwhile.
        time.sleep(2)
    assert page.js("return document.getElementById('notice').hidden")  # waited out, not shown
    page.wait(
        lambda: (
            page.js(
                "return [...document.querySelectorAll('#sessions .session .title')]"
                ".map((t) => t.textContent)"
            )
            == ["Budget talk 14", "Budget talk 7", "Budget talk 0"]
        ),
        what="every match, across partial pages",
    )
    assert page.js("return document.querySelector('#sessions .none')") is None
    # The browser logs each refused request; nothing else went wrong.
    assert [e for e in page.console_errors() if "status of 429" not in e] == []
