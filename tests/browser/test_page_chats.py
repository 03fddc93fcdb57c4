"""Managing chats on the page (rename, search, export, delete, dates), signing in and out,
Esc, copy buttons, links, and the keyboard and screen-reader parts."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys
from sqlalchemy import update

from demo_model.wire import encode_reply
from models import ChatSession
from models.db import Database
from tests.browser.page import QUESTION, ChatPage
from tests.faults.upstream import FaultyUpstream, Transcript

LONG_TITLE = "How much did I spend on restaurants and takeaway food in the last three months?"
CLIPBOARD = """
window.copied = [];
navigator.clipboard.writeText = async (text) => { window.copied.push(text); };
"""


def sign_in(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


def titles(page: ChatPage) -> list[str]:
    return page.js(
        "return [...document.querySelectorAll('#sessions .session .title')]"
        ".map((t) => t.textContent)"
    )


def finished_turn(server: Any, question: str) -> str:
    """Run a demo turn to its end through the API; return its session id."""
    session_id = server.post("/api/sessions", json={"title": question}).json()["id"]
    started = server.start_turn(question, session_id)
    server.read_events(started["events_url"])
    return session_id


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_rename_search_and_export(serve: Any, page: ChatPage, size: str, tmp_path: Path) -> None:
    server = serve()
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    balances = finished_turn(server, "What are my account balances?")
    finished_turn(server, "Which recurring payments do I have?")
    page.size(size)
    page.driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    sign_in(page, server)
    if size == "phone":
        page.click("#menu")
    page.wait(lambda: page.visible("#sessions .session .open"), what="the chat list")
    page.driver.find_elements("css selector", "#sessions .session .open")[1].click()
    page.wait(lambda: (s := page.shown()) and s["state"] == "ended", what="the chat")

    if size == "phone":
        page.click("#more")
    page.click("#rename")
    box = page.driver.find_element("id", "rename-input")
    assert box.get_attribute("value") == "What are my account balances?"
    box.clear()
    box.send_keys("My balances", Keys.ENTER)
    page.wait(
        lambda: page.js("return document.getElementById('chat-title').textContent") == "My balances"
    )
    assert server.get(f"/api/sessions/{balances}").json()["title"] == "My balances"
    assert titles(page) == ["Which recurring payments do I have?", "My balances"]

    if size == "phone":
        page.click("#more")
    page.click("#export-md")
    if size == "phone":
        page.click("#more")  # the actions fold away after each one
    page.click("#export-json")
    # Chromium writes a download as `<name>.crdownload` and renames it once it is whole.
    expected = ["chat-My-balances.json", "chat-My-balances.md"]
    page.wait(
        lambda: sorted(p.name for p in downloads.iterdir()) == expected,
        what="the two downloads, whole",
    )
    markdown = (downloads / "chat-My-balances.md").read_text()
    assert (
        markdown.startswith("# My balances\n")
        and "## You\n\nWhat are my account balances?" in markdown
    )
    exported = json.loads((downloads / "chat-My-balances.json").read_text())
    assert exported["messages"] == server.get(f"/api/sessions/{balances}").json()["messages"]

    if size == "phone":
        page.click("#menu")
    search = page.driver.find_element("id", "search")
    search.send_keys("SPOTIFY")  # a word only the recurring-payments answer has
    page.wait(lambda: titles(page) == ["Which recurring payments do I have?"], what="the search")
    snippet = page.js("return document.querySelector('#sessions .snippet').textContent")
    assert "spotify" in snippet.lower()
    assert (
        page.js("return document.querySelector('#sessions .snippet mark').textContent") == "Spotify"
    )
    page.screenshot(f"search-{size}")
    search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    search.send_keys("zzz nothing")
    page.wait(lambda: page.js("return document.querySelector('#sessions .none')?.textContent"))
    search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    page.wait(lambda: len(titles(page)) == 2, what="the whole list again")
    assert page.console_errors() == []


def test_delete_asks_first_and_says_when_it_stops_an_answer(serve: Any, page: ChatPage) -> None:
    server = serve(DEMO_EVENT_DELAY=0.05)
    sign_in(page, server)
    page.ask(QUESTION)
    page.wait_for_text(10)
    page.click("#delete")  # mid-answer
    assert "An answer is being written in it right now: deleting stops it." in page.confirm_text()
    assert page.js("return document.getElementById('confirm-ok').textContent") == "Stop and delete"
    page.screenshot("delete-confirm")
    page.click("#confirm-cancel")
    assert page.shown()["state"] == "running"  # cancelled: nothing happened
    assert len(server.get("/api/sessions").json()["sessions"]) == 1
    page.driver.find_element("css selector", "#sessions .session .delete").click()
    assert "deleting stops it" in page.confirm_text()
    page.click("#confirm-ok")
    page.wait(lambda: page.js("return document.querySelectorAll('#sessions .session').length") == 0)
    assert server.get("/api/sessions").json()["sessions"] == []
    assert page.js("return document.getElementById('chat-title').textContent") == "New chat"
    assert "Deleted" in page.js("return document.getElementById('toast').textContent")


def test_chats_are_grouped_by_date_and_titles_are_whole(
    serve: Any, page: ChatPage, db: Database
) -> None:
    server = serve()
    now = datetime.now(UTC)
    ages = {"old": 40, "week": 4, "yesterday": 1, "today": 0}
    ids = {}
    for name, days in ages.items():
        ids[name] = server.post("/api/sessions", json={"title": f"{name} {LONG_TITLE}"}).json()[
            "id"
        ]
        with db.transaction() as s:
            moment = now - timedelta(days=days, minutes=1 if days else 0)
            if days == 1:  # yesterday at noon, whatever the time now
                local = datetime.now().astimezone()
                noon = local.replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
                moment = noon.astimezone(UTC)
            s.execute(
                update(ChatSession)
                .where(ChatSession.id == ids[name])
                .values(created_at=moment, updated_at=moment)  # made and last active then
            )
    sign_in(page, server)
    groups = page.js(
        "return [...document.querySelectorAll('#sessions .group')].map((g) => ["
        "g.querySelector('.group-title').textContent,"
        "[...g.querySelectorAll('.session .title')].map((t) => t.textContent.split(' ')[0])])"
    )
    assert groups == [
        ["Today", ["today"]],
        ["Yesterday", ["yesterday"]],
        ["Previous 7 days", ["week"]],
        ["Older", ["old"]],
    ]
    first = page.js(
        "const t = document.querySelector('#sessions .session .title');"
        "return {text: t.textContent, cut: t.scrollWidth > t.clientWidth,"
        " ellipsis: getComputedStyle(t).textOverflow,"
        " hover: t.closest('.open').title}"
    )
    assert first["text"] == f"today {LONG_TITLE}"  # the whole title, cut only by CSS
    assert first["cut"] and first["ellipsis"] == "ellipsis"
    assert first["hover"].startswith(f"today {LONG_TITLE}\n")  # and in full on hover
    page.screenshot("grouped-list")


def test_the_token_field_shows_only_when_signed_out_and_a_link_signs_in_an_open_tab(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    token = server.headers["Authorization"][7:]
    sign_in(page, server)
    assert not page.visible("#token") and page.visible("#sign-out")
    page.click("#sign-out")
    page.wait(lambda: page.visible("#token"), what="the token field")
    assert not page.visible("#sign-out")
    assert page.js("return localStorage.getItem('chat.token')") is None
    assert page.js("return document.getElementById('sessions').textContent") == (
        "Sign in to see your chats."
    )
    page.screenshot("signed-out")

    page.js("location.hash = arguments[0]", f"token={token}")  # the same tab, no reload
    page.wait(lambda: page.visible("#examples .example"), what="the signed-in page")
    assert not page.visible("#token") and page.visible("#sign-out")
    assert page.driver.current_url == f"{server.url}/"  # the token left the address bar
    page.ask("What are my account balances?")
    assert page.wait_for_turn_end()["status"] == "completed"


def test_esc_stops_the_answer_with_one_notice(serve: Any, page: ChatPage) -> None:
    server = serve(DEMO_EVENT_DELAY=0.05)
    sign_in(page, server)
    page.ask(QUESTION)
    page.wait_for_text(20)
    page.driver.find_element("id", "message").send_keys(Keys.ESCAPE)
    shown = page.wait_for_turn_end()
    assert shown["status"] == "cancelled"
    assert page.notices() == ["Stopped. What was written before the stop is kept."]
    page.driver.refresh()  # drawn again from storage: still one notice
    page.wait(lambda: (s := page.shown()) and s["status"] == "cancelled", what="the stored turn")
    assert page.notices() == ["Stopped. What was written before the stop is kept."]


RICH = (
    "| Month | Spent |\n|:--|--:|\n| May | 1,067.00 EUR |\n\n"
    "```python\nprint('hi')\n```\n\n"
    "See [your statement](https://evil.example/steal?data=balance-13024) or "
    "<https://bank.example/help>; ![chart](https://evil.example/pixel.png)"
)


@pytest.fixture
def rich(serve: Any) -> Iterator[Any]:
    """The app against a scripted model whose answer has a table, code, links and an image."""
    upstream = FaultyUpstream()
    events = encode_reply(
        "msg_rich",
        "claude-test",
        [{"type": "text", "text": RICH}],
        "end_turn",
        10,
        random.Random(3),
    )
    upstream.set_chooser(lambda index, body: Transcript(b"".join(events)))
    yield serve(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url)
    upstream.close()


def test_copy_buttons_and_links_that_show_where_they_go(rich: Any, page: ChatPage) -> None:
    sign_in(page, rich)
    page.js(CLIPBOARD)
    page.ask("Show me everything")
    page.wait_for_turn_end()
    cells = page.js(
        "return [...document.querySelectorAll('#turns .block.text td')]"
        ".map((c) => [c.textContent, c.className])"
    )
    assert cells == [["May", "align-left"], ["1,067.00 EUR", "align-right"]]
    page.click("#turns .copy-code")
    page.click("#turns .copy-answer")
    assert page.js("return window.copied") == ["print('hi')\n", RICH]
    assert page.js("return document.querySelector('#turns .copy-answer').textContent") == "Copied"

    links = page.js(
        "return [...document.querySelectorAll('#turns .block.text a')].map((a) =>"
        " [a.textContent, a.dataset.host || null, getComputedStyle(a, '::after').content])"
    )
    assert [link[:2] for link in links] == [
        ["your statement", "evil.example"],  # words that hide the address: the host beside
        ["https://bank.example/help", None],  # the address is the words already
        ["https://evil.example/pixel.png", None],  # an image: its address, as a link
    ]
    assert "evil.example" in links[0][2] and links[1][2] == "none"
    assert page.js("return document.querySelectorAll('img').length") == 0  # never loaded
    handles = len(page.driver.window_handles)
    page.click("#turns .block.text a")
    page.wait(lambda: page.js("return document.getElementById('link-dialog').open"))
    assert page.js("return document.getElementById('link-url').textContent") == (
        "https://evil.example/steal?data=balance-13024"
    )
    assert page.js("return document.getElementById('link-host').textContent") == "evil.example"
    page.screenshot("link-dialog")
    page.click("#link-cancel")
    time.sleep(0.2)  # nothing may happen: a window would have opened by now
    assert len(page.driver.window_handles) == handles  # nothing opened
    assert page.console_errors() == []


def test_keyboard_and_screen_reader(serve: Any, page: ChatPage) -> None:
    server = serve()
    sign_in(page, server)
    unnamed = page.js(
        "return [...document.querySelectorAll('button, input, textarea, a[href], [role=search]')]"
        ".filter((e) => e.checkVisibility() && !(e.labels?.length || e.getAttribute('aria-label')"
        " || e.textContent.trim() || e.getAttribute('aria-labelledby')))"
        ".map((e) => e.outerHTML)"
    )
    assert unnamed == []
    box = page.driver.find_element("id", "message")
    assert page.js("return document.activeElement.id") == "message"
    box.send_keys("What are my account balances?", Keys.ENTER)
    shown = page.wait_for_turn_end()
    live = page.wait(lambda: page.js("return document.getElementById('live').textContent"))
    assert "Everyday Checking" in live and shown["status"] == "completed"
    assert page.js("return document.getElementById('live').getAttribute('aria-live')") == "polite"
    assert page.js("return document.activeElement.id") == "message"
    order = []
    page.js("document.getElementById('new-chat').focus()")
    for _ in range(4):
        order.append(
            page.js("return document.activeElement.id || document.activeElement.className")
        )
        page.driver.switch_to.active_element.send_keys(Keys.TAB)
    assert order[:2] == ["new-chat", "search"]
    page.screenshot("keyboard")
