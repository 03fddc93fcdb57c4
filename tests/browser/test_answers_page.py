"""Answers people would rather look at: tool use folded, amounts as the answers write them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.page import SIZES, ChatPage, result_json, shown_amount, stored_of

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


CHART = "Show my spending by month this year as a chart"

DRAWN = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
if (!turn) return [];
const charts = [...turn.querySelectorAll('figure.chart')];
return charts.map((c) => ({
  title: c.querySelector('.chart-title').textContent,
  bars: c.querySelectorAll('.chart-bar').length,
  buttons: c.querySelectorAll('.chart-point[role="button"]').length,
  width: c.getBoundingClientRect().width,
  rows: [...c.querySelectorAll('.chart-table tbody tr')].map(
    (r) => [r.cells[0].textContent, r.cells[1].textContent]),
}));
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_chart_from_the_records_opens_its_rows_and_survives_reload(
    serve: Any, page: ChatPage, size: str, scheme: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme(scheme)
    sign_in(page, server)
    page.ask(CHART)
    shown = page.wait_for_turn_end()
    stored = stored_of(server, shown["turnId"])
    results = [result_json(r) for r in stored["results"].values()]
    specs = next(r["charts"] for r in results if isinstance(r, dict) and "charts" in r)
    drawn = page.js(DRAWN)
    assert [d["title"] for d in drawn] == [s["title"] for s in specs]
    for chart, spec in zip(drawn, specs, strict=True):
        values = spec["data"]["values"]
        assert chart["bars"] == len(values)
        # The table view states every bar's figure as the tool computed it.
        assert chart["rows"] == [
            [v["x"], shown_amount(v["amount"], spec["currency"])] for v in values
        ]
        assert chart["buttons"] == sum(1 for v in values if v["count"])
    assert page.js("return document.documentElement.scrollWidth - innerWidth") <= 0
    assert (
        page.js(
            "const c = document.getElementById('conversation');return c.scrollWidth - c.clientWidth"
        )
        <= 0
    )
    page.js(
        "const fig = document.querySelector('#turns figure.chart');"
        "fig.scrollIntoView({block: 'start'});"
    )
    page.screenshot(f"answers-chart-{size}-{scheme}")
    # A bar opens the rows it sums, and they add up to it.
    bar = next(v for v in specs[0]["data"]["values"] if v["count"])
    page.js(
        "[...document.querySelectorAll('#turns figure.chart .chart-point[role=\"button\"]')]"
        ".find((g) => g.getAttribute('aria-label').startsWith(arguments[0]))"
        ".dispatchEvent(new MouseEvent('click', {bubbles: true}))",
        f"{bar['x']}:",
    )
    total = page.wait(
        lambda: page.js(
            "const t = document.querySelector('#sources-body .sources-total[data-currency=\"' "
            "+ arguments[0] + '\"] td');"
            "return !document.getElementById('sources').hidden && t && t.textContent",
            specs[0]["currency"],
        ),
        what="the bar's records",
    )
    assert total == shown_amount(f"-{bar['amount']}", specs[0]["currency"])
    page.screenshot(f"answers-chart-records-{size}-{scheme}")
    page.driver.refresh()  # a stored chat draws its chart again
    page.wait(lambda: len(page.js(DRAWN)) == len(specs), what="the chart")
    assert [d["rows"] for d in page.js(DRAWN)] == [d["rows"] for d in drawn]


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
    # A link to no chat of the user's says so, and opens a new chat in its place.
    page.driver.get(f"{server.url}/c/no-such-chat")
    notice = page.wait(
        lambda: page.js(
            "const n = document.getElementById('notice'); return !n.hidden && n.textContent"
        ),
        what="the notice",
    )
    assert notice.startswith("Chat not found")
    assert page.js("return document.getElementById('chat-title').textContent") == "New chat"
    assert page.js("return location.pathname") == "/"


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


LINES = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
const c = turn && turn.querySelector('figure.chart');
return c ? {
  lines: c.querySelectorAll('polyline.chart-line').length,
  dots: c.querySelectorAll('.chart-dot').length,
  bars: c.querySelectorAll('.chart-bar').length,
  buttons: c.querySelectorAll('.chart-point[role="button"]').length,
} : null;
"""


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_balance_over_time_is_drawn_as_a_line_of_cited_points(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve()
    page.size(size)
    sign_in(page, server)
    page.ask("My checking balance over time")
    shown = page.wait_for_turn_end()
    stored = stored_of(server, shown["turnId"])
    results = [result_json(r) for r in stored["results"].values()]
    (spec,) = next(r["charts"] for r in results if isinstance(r, dict) and "charts" in r)
    values = spec["data"]["values"]
    drawn = page.js(LINES)
    assert drawn == {
        "lines": 1,
        "dots": len(values),
        "bars": 0,
        "buttons": sum(1 for v in values if v["count"]),
    }
    assert page.js("return document.documentElement.scrollWidth - innerWidth") <= 0
    page.screenshot(f"answers-balance-line-{size}")
