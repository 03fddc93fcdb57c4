"""Answers people would rather look at: tool use folded, amounts as the answers write them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.page import SIZES, ChatPage

EARNED = "How much did I earn last month?"

# Where the answer's first line of text sits once its question is scrolled to the top.
ANSWER_TOP = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
const conversation = document.getElementById('conversation');
turn.querySelector('.msg.user').scrollIntoView({block: 'start'});
const texts = [...turn.querySelectorAll('.block.text .markdown')]
  .filter((t) => t.textContent.trim());
const answer = texts.at(-1).getBoundingClientRect();
return {
  answerTop: answer.top, bottom: conversation.getBoundingClientRect().bottom,
  folds: turn.querySelectorAll('.tool-fold').length,
  open: turn.querySelector('.tool-fold').open,
  line: turn.querySelector('.tool-fold summary').textContent,
  calls: turn.querySelectorAll('.tool-fold .block.tool').length,
  overflowX: document.documentElement.scrollWidth - innerWidth,
};
"""


def sign_in(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_tool_calls_fold_into_one_line_and_the_answer_starts_on_the_first_screen(
    serve: Any, page: ChatPage, size: str, scheme: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme(scheme)
    sign_in(page, server)
    page.ask(EARNED)
    shown = page.wait_for_turn_end()
    assert len(shown["tools"]) >= 2  # several calls, all in one fold
    at = page.js(ANSWER_TOP)
    assert at["folds"] == 1 and at["calls"] == len(shown["tools"]) and at["open"] is False
    assert at["line"].startswith("Looked up ") and "get_" not in at["line"]
    assert at["answerTop"] < at["bottom"]  # the answer starts within the first screen
    assert at["overflowX"] <= 0
    page.screenshot(f"answers-folded-{size}-{scheme}")
    page.click("#turns .tool-fold summary")  # opens on demand, to the calls in words
    titles = page.js(
        "return [...document.querySelectorAll('#turns .tool-fold .tool-title')]"
        ".map((t) => t.textContent)"
    )
    assert titles and all("_" not in t for t in titles)
    assert not page.visible("#turns .tool-fold .tool-input")  # the raw JSON waits behind a click
    page.screenshot(f"answers-unfolded-{size}-{scheme}")
    assert (page.js("return innerWidth"), page.js("return innerHeight")) == SIZES[size]


def test_each_chat_has_an_address_and_back_returns_to_the_previous_chat(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    sign_in(page, server)
    ids = []
    for question in ("What are my account balances?", "Which recurring payments do I have?"):
        page.click("#new-chat")
        page.ask(question)
        shown = page.wait_for_turn_end()
        ids.append(server.get(f"/api/turns/{shown['turnId']}").json()["session_id"])
        assert page.js("return location.pathname") == f"/c/{ids[-1]}"
    first, second = ids
    page.driver.back()  # the new chat the second one began as, then the first chat
    page.wait(lambda: page.js("return location.pathname") == "/", what="the new chat")
    page.driver.back()
    page.wait(
        lambda: (
            page.js("return document.querySelector('#turns .msg.user .bubble')?.textContent")
            == "What are my account balances?"
        ),
        what="the first chat after Back",
    )
    assert page.js("return location.pathname") == f"/c/{first}"
    page.driver.forward()
    page.driver.forward()
    page.wait(lambda: page.js("return location.pathname") == f"/c/{second}", what="Forward")
    # A link to a chat opens that chat, in a fresh page.
    page.driver.get(f"{server.url}/c/{first}")
    page.wait(
        lambda: (
            page.js("return document.querySelector('#turns .msg.user .bubble')?.textContent")
            == "What are my account balances?"
        ),
        what="the linked chat",
    )
    assert page.js("return document.getElementById('chat-title').textContent") != "New chat"


def test_the_composer_shows_the_room_left_and_a_message_too_long_leaves_no_empty_chat(
    serve: Any, page: ChatPage
) -> None:
    server = serve(MAX_MESSAGE_CHARS=100)
    sign_in(page, server)
    box = page.driver.find_element("id", "message")
    box.send_keys("x" * 50)
    assert page.js("return document.getElementById('room').hidden") is True  # room to spare
    box.send_keys("x" * 45)
    assert page.js("return document.getElementById('room').textContent") == "5 characters left"
    box.send_keys("x" * 25)
    room = page.js("return document.getElementById('room').textContent")
    assert room.startswith("20 characters over the 100-character limit")
    page.click("#send")
    notice = page.wait(
        lambda: page.js(
            "const n = document.getElementById('notice'); return !n.hidden && n.textContent"
        ),
        what="the notice",
    )
    assert "over the 100-character limit" in notice
    assert server.get("/api/sessions").json()["sessions"] == []  # no empty chat left behind
    assert page.js("return location.pathname") == "/"
    assert page.js("return document.getElementById('message').value") == "x" * 120


def test_a_chat_continued_moves_to_the_top_of_the_list(serve: Any, page: ChatPage) -> None:
    server = serve()
    sign_in(page, server)
    for question in ("What are my account balances?", "Which recurring payments do I have?"):
        page.click("#new-chat")
        page.ask(question)
        page.wait_for_turn_end()
    titles = (
        "return [...document.querySelectorAll('#sessions .session .title')]"
        ".map((t) => t.textContent)"
    )
    assert page.js(titles)[:2] == [
        "Which recurring payments do I have?",
        "What are my account balances?",
    ]
    page.click("#sessions .session:nth-child(2) .open, #sessions li li:nth-child(2) .open")
    page.wait(
        lambda: (
            page.js("return document.querySelector('#turns .msg.user .bubble')?.textContent")
            == "What are my account balances?"
        ),
        what="the older chat",
    )
    page.ask("How much did I earn last month?")
    page.wait_for_turn_end()
    page.wait(lambda: page.js(titles)[0] == "What are my account balances?", what="the move up")
    page.driver.refresh()  # the server lists it first too
    page.wait(lambda: page.js(titles)[:1] == ["What are my account balances?"], what="the list")
