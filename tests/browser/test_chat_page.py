"""The chat page renders a whole turn, its history after a reload, and manages chats."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.common.action_chains import ActionChains

from tests.browser.page import QUESTION, ChatPage, assert_renders, stored_of


def test_full_turn_with_tools_renders_the_models_text(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    assert page.driver.current_url == f"{server.url}/"  # the token left the address bar
    page.ask(QUESTION)
    shown = page.wait_for_turn_end()
    stored = stored_of(server, shown["turnId"])

    assert shown["status"] == "completed" and shown["user"] == QUESTION
    assert len(stored["tools"]) >= 2 and stored["thinking"]
    assert_renders(shown, stored)
    answer = "".join(stored["texts"])  # cited figures split the answer into text blocks
    assert "**" in answer and "\n- " in answer  # the demo answer uses markdown...
    strong = page.js("return [...document.querySelectorAll('#turns .block.text strong')].length")
    items = page.js("return [...document.querySelectorAll('#turns .block.text li')].length")
    assert strong == answer.count("**") // 2 and items == answer.count("\n- ")  # ...rendered
    assert page.js("return document.getElementById('demo-banner').hidden") is False
    # The demo is labelled once, by the banner: no badge on the answer, no signature in it.
    assert page.js("return document.querySelector('#turns .model-tag').hidden") is True
    assert "Answered by" not in page.js("return document.getElementById('turns').textContent")
    assert page.console_errors() == []

    page.js("document.querySelector('#turns details.thinking').open = true")
    page.screenshot("full-turn")
    page.js("document.querySelector('#turns .tool-result').open = true")
    page.js("document.querySelector('#turns .turn').scrollIntoView()")
    page.screenshot("tool-result")

    page.driver.refresh()  # a reload shows the same conversation from storage
    page.wait(lambda: (s := page.shown()) and s["state"] == "ended", what="the stored turn")
    again = page.shown()
    assert_renders(again, stored)
    assert again["user"] == QUESTION and again["messages"] == shown["messages"]


def test_sessions_new_switch_delete(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.ask("What are my account balances?")
    first = page.wait_for_turn_end()
    page.driver.find_element("id", "new-chat").click()
    assert page.js("return document.querySelectorAll('#turns .turn').length") == 0
    page.ask("Which recurring payments do I have?")
    second = page.wait_for_turn_end()
    titles = page.js(
        "return [...document.querySelectorAll('#sessions .session .title')]"
        ".map((t) => t.textContent)"
    )
    assert titles == ["Which recurring payments do I have?", "What are my account balances?"]

    page.driver.find_elements("css selector", "#sessions .session .open")[1].click()
    page.wait(
        lambda: (s := page.shown()) and s["turnId"] == first["turnId"] and s["state"] == "ended",
        what="the first chat",
    )
    assert page.shown()["user"] == "What are my account balances?"

    row = page.driver.find_elements("css selector", "#sessions .session")[0]
    ActionChains(page.driver).move_to_element(row).perform()  # its delete button shows on hover
    row.find_element("css selector", ".delete").click()
    assert page.confirm_text().startswith("“Which recurring payments do I have?” and all")
    page.driver.find_element("id", "confirm-ok").click()
    page.wait(
        lambda: page.js("return document.querySelectorAll('#sessions .session').length") == 1,
        what="the chat to be deleted",
    )
    remaining = server.get("/api/sessions").json()["sessions"]
    assert [s["title"] for s in remaining] == ["What are my account balances?"]
    assert server.get(f"/api/turns/{second['turnId']}").status_code == 404
    assert page.shown()["turnId"] == first["turnId"]  # deleting another chat keeps this one


def test_a_session_names_its_running_turn(serve: Any) -> None:
    server = serve(DEMO_EVENT_DELAY=0.02)
    started = server.start_turn(QUESTION)
    session = server.get(f"/api/sessions/{started['session_id']}").json()
    assert session["running_turn_id"] == started["turn_id"]
    server.read_events(started["events_url"])  # to the turn's end
    session = server.get(f"/api/sessions/{started['session_id']}").json()
    assert session["running_turn_id"] is None


def test_the_list_shows_every_session_past_one_page(serve: Any, page: ChatPage) -> None:
    server = serve()
    for n in range(130):  # the API pages sessions 100 at a time at most
        assert server.post("/api/sessions", json={"title": f"chat {n}"}).status_code == 201
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.wait(
        lambda: page.js("return document.querySelectorAll('#sessions .session').length") == 130,
        what="all 130 chats in the list",
    )
    titles = page.js(
        "return [...document.querySelectorAll('#sessions .session .title')]"
        ".map((t) => t.textContent)"
    )
    assert titles == [f"chat {n}" for n in reversed(range(130))]


LOSE_FIRST_REPLY = """
const real = window.fetch;
window.lostTurn = null;
window.fetch = async (url, init) => {
  const response = await real(url, init);
  if (window.lostTurn === null && init?.method === 'POST' && String(url).endsWith('/turns')) {
    window.lostTurn = (await response.clone().json()).turn_id;
    throw new TypeError('Failed to fetch');  // the server started it; the reply is lost
  }
  return response;
};
"""


def test_sending_again_after_a_lost_reply_asks_once(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.js(LOSE_FIRST_REPLY)
    page.ask(QUESTION)
    page.wait(lambda: page.js("return window.lostTurn"), what="the lost reply")
    page.wait(
        lambda: page.js("return document.getElementById('message').value") == QUESTION,
        what="the question back in the box",
    )
    assert page.js("return document.querySelectorAll('#turns .turn').length") == 1
    page.driver.find_element("id", "send").click()  # the user sends it again
    shown = page.wait_for_turn_end()
    assert shown["turnId"] == page.js("return window.lostTurn"), "the turn it started"
    assert shown["status"] == "completed"
    assert page.js("return document.querySelectorAll('#turns .turn').length") == 1, "no failure"
    [session] = server.get("/api/sessions").json()["sessions"]
    messages = server.get(f"/api/sessions/{session['id']}").json()["messages"]
    asked = [
        b["text"]
        for m in messages
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "text"
    ]
    assert asked == [QUESTION], "asked once"
