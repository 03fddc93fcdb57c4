"""The page at a laptop's and a phone's size, light and dark: layout, examples, tool results."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.page import QUESTION, SIZES, ChatPage, result_json, shown_amount, stored_of

# How far from the bottom the conversation may be and still count as following the answer.
FOLLOW_PX = 80

FOLLOWING = """
const c = document.getElementById('conversation');
const composer = document.getElementById('composer').getBoundingClientRect();
return {
  gap: c.scrollHeight - c.scrollTop - c.clientHeight,
  composerBottom: composer.bottom, composerTop: composer.top,
  pageScroll: document.scrollingElement.scrollTop, height: innerHeight, width: innerWidth,
  overflowX: document.documentElement.scrollWidth - innerWidth,
};
"""


def sign_in(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_composer_stays_in_view_and_the_view_follows_the_answer(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve(DEMO_EVENT_DELAY=0.01)
    page.size(size)
    sign_in(page, server)
    for question in [QUESTION, "Which recurring payments do I have?"]:
        page.ask(question)
        page.wait_for_text(40)
        mid = page.js(FOLLOWING)
        assert mid["gap"] < FOLLOW_PX  # the view follows the answer while it streams
        page.wait_for_turn_end()
    at = page.js(FOLLOWING)
    assert (at["width"], at["height"]) == SIZES[size]
    assert at["gap"] < FOLLOW_PX and at["pageScroll"] == 0 and at["overflowX"] <= 0
    assert at["composerTop"] > 0 and at["composerBottom"] <= at["height"]  # on screen
    assert page.visible("#message") and page.visible("#send")
    assert page.js("return document.activeElement.id") == "message"  # ready for the next one
    page.screenshot(f"answer-{size}")

    sidebar_shown = page.visible("#sidebar .new-chat")
    assert sidebar_shown == (size == "laptop")  # on a phone the chat list waits behind a menu
    assert page.visible("#menu") == (size == "phone")
    if size == "phone":
        page.click("#menu")
        page.wait(lambda: page.visible("#sidebar .new-chat"), what="the chat list")
        assert (
            page.js("return document.getElementById('menu').getAttribute('aria-expanded')")
            == "true"
        )
        page.screenshot("sidebar-phone")
        page.click("#new-chat")
        page.wait(lambda: not page.visible("#sidebar .new-chat"), what="the list to close")
        assert page.visible("#examples .example")
        page.click("#menu")
        page.wait(lambda: page.visible("#sessions .session .open"), what="the chat list")
        page.click("#sessions .session .open")
        page.wait(lambda: not page.visible("#sidebar .new-chat"), what="the list to close")
        page.wait(
            lambda: (s := page.shown()) and s["user"] == "Which recurring payments do I have?",
            what="the chat",
        )
        assert page.visible("#message")
    assert page.console_errors() == []


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_dark_mode_follows_the_system_until_the_toggle_picks(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme("dark")
    sign_in(page, server)
    background = "return getComputedStyle(document.querySelector('.main')).backgroundColor"
    assert page.js("return document.documentElement.dataset.theme") == "dark"
    dark = page.js(background)
    page.ask("What are my account balances?")
    page.wait_for_turn_end()
    page.js("document.querySelector('#turns .tool-fold').open = true")
    page.js("document.querySelector('#turns .tool-result').open = true")
    page.screenshot(f"dark-{size}")

    if size == "phone":
        page.click("#menu")
    page.wait(lambda: page.visible("#theme"), what="the theme toggle")
    page.click("#theme")  # the system says dark; the person says light, and it is remembered
    assert page.js("return document.documentElement.dataset.theme") == "light"
    assert page.js(background) != dark
    page.driver.refresh()
    page.wait(lambda: page.js("return document.querySelector('#turns .turn') !== null"))
    assert page.js("return document.documentElement.dataset.theme") == "light"
    assert (
        page.js("return document.getElementById('theme').getAttribute('aria-pressed')") == "false"
    )
    page.color_scheme("light")
    page.js("localStorage.removeItem('chat.theme')")
    page.driver.refresh()
    page.wait(lambda: page.js("return document.querySelector('#turns .turn') !== null"))
    assert page.js("return document.documentElement.dataset.theme") == "light"
    page.color_scheme("dark")  # with no choice made, a change of the system's applies at once
    page.wait(lambda: page.js("return document.documentElement.dataset.theme") == "dark")
    assert page.console_errors() == []


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_empty_page_offers_questions_that_send_when_clicked(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve()
    page.size(size)
    sign_in(page, server)
    examples = page.js(
        "return [...document.querySelectorAll('#examples .example')].map((b) => b.textContent)"
    )
    assert len(examples) == 4 and all(
        page.visible(f"#examples li:nth-child({n}) .example") for n in range(1, 5)
    )
    page.screenshot(f"empty-{size}")
    page.driver.find_elements("css selector", "#examples .example")[2].click()
    shown = page.wait_for_turn_end()
    assert shown["user"] == examples[2] and shown["status"] == "completed"
    assert page.js("return document.getElementById('message').value") == ""
    assert [s["title"] for s in server.get("/api/sessions").json()["sessions"]] == [examples[2]]


def test_tool_results_read_as_tables_and_figures_with_the_json_a_click_away(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    sign_in(page, server)
    page.ask("What are my account balances?")
    shown = page.wait_for_turn_end()
    stored = stored_of(server, shown["turnId"])
    data = result_json(next(iter(stored["results"].values())))
    page.js("document.querySelector('#turns .tool-fold').open = true")
    page.js("document.querySelector('#turns .tool-result').open = true")
    table = page.js(
        "const t = document.querySelector('#turns .tool-result .data-table');"
        "return {head: [...t.querySelectorAll('th')].map((h) => h.textContent),"
        " rows: [...t.querySelectorAll('tbody tr')].map((r) =>"
        "   [...r.cells].map((c) => c.textContent))}"
    )
    accounts = data["accounts"]
    # Amounts as the answers write them: separators, minus sign, the currency after.
    assert table["head"] == ["Name", "Kind", "Balance"]
    assert table["rows"] == [
        [a["name"], a["kind"], shown_amount(a["balance"], a["currency"])] for a in accounts
    ]
    figures = page.js(
        "return [...document.querySelectorAll('#turns .tool-result .figure')].map("
        "(f) => [f.querySelector('dt').textContent, f.querySelector('dd').textContent])"
    )
    assert ["Note", data["note"]] in figures
    assert page.js("return document.querySelector('#turns .tool-result pre.raw').hidden") is True
    page.click("#turns .tool-result .raw-toggle")  # one click to the raw JSON
    assert page.visible("#turns .tool-result pre.raw")
    raw = page.js("return document.querySelector('#turns .tool-result pre.raw').textContent")
    assert json.loads(raw) == data
    page.screenshot("tool-result-raw")


def test_docs_work_without_internet(serve: Any, page: ChatPage) -> None:
    server = serve()
    html = server.get("/docs").text
    assert "/web/vendor/swagger-ui/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    page.driver.get(f"{server.url}/docs")  # the browser has no route to any CDN
    title = page.wait(
        lambda: page.js("return document.querySelector('.swagger-ui .info .title')?.textContent"),
        what="Swagger UI to render",
    )
    assert title.startswith("Chat backend")
    page.wait(lambda: page.js("return document.querySelectorAll('.opblock').length > 10"))
    paths = page.js(
        "return [...document.querySelectorAll('.opblock-summary-path')].map((p) => p.textContent)"
    )
    assert "/api/sessions/{session_id}/export" in [p.replace("\u200b", "") for p in paths]
    page.screenshot("docs")
