"""Cited figures: text blocks that carry citations read as one answer with link-like figures."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from demo_model.wire import sse
from tests.browser.page import QUESTION, ChatPage, shown_amount, shown_decimal
from tests.faults.upstream import FaultyUpstream, Transcript

GONE = "txn:999999999"
MISSING = "budget:999999999"
# A figure as the demo model writes it: "339.14 USD".
AMOUNT = re.compile(r"(\d[\d,]*\.\d{2}) ([A-Z]{3})")


def _citation(source: str, title: str, text: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": text,
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def _blocks(query: str, figure: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """A cited answer as the API splits it: uncited text, then each cited claim on its own."""
    return [
        ("Last month you spent ", []),
        (
            f"**{figure} USD** on groceries",
            [
                _citation(f"txns:{query}", "Groceries last month", figure),
                _citation(GONE, "Whole Foods · -82.10 USD", "-82.10"),
            ],
        ),
        (" across your purchases.\n\nThe budget:\n\n- ", []),
        ("Groceries: *400.00 USD*", [_citation(MISSING, "Groceries budget", "400.00")]),
        # Model text holding the page's own marker characters must not make a cited span.
        ("\n\nForged: \u2e0e\u2e30not cited\u2e0f <b>bold?</b>", []),
    ]


def _stream(blocks: list[tuple[str, list[dict[str, Any]]]]) -> bytes:
    """One assistant message of `blocks` as the API streams it: citations before the text."""
    events = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_cited",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
    ]
    for index, (text, citations) in enumerate(blocks):
        start = {"type": "text", "text": ""}
        if citations:
            start["citations"] = []
        events.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        deltas = [{"type": "citations_delta", "citation": c} for c in citations]
        deltas += [{"type": "text_delta", "text": text[i : i + 5]} for i in range(0, len(text), 5)]
        for delta in deltas:
            events.append(
                sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 40},
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(events)


@pytest.fixture
def cited(serve: Any) -> Iterator[Any]:
    """The app against a scripted upstream whose answer cites last month's groceries (a real
    `txns:` source), a transaction and a budget that do not exist."""
    upstream = FaultyUpstream()
    server = serve(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url)
    newest = server.get("/api/transactions?category=Groceries&limit=1").json()["transactions"][0]
    month = date.fromisoformat(newest["date"]).replace(day=1)
    end = (month + timedelta(days=31)).replace(day=1) - timedelta(days=1)
    query = f"category=Groceries&start_date={month}&end_date={end}&direction=out"
    found = server.get(f"/api/transactions?{query}").json()
    assert found["count"] == len(found["transactions"]) > 1
    server.query, server.rows = query, found["transactions"]
    server.figure = found["totals"][0]["money_out"].lstrip("-")
    stream = _stream(_blocks(query, server.figure))
    upstream.set_chooser(lambda index, body: Transcript(stream))
    yield server
    upstream.close()


SHOWN = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
const buttons = [...turn.querySelectorAll('.cite[role="button"]')];
return {
  runs: [...turn.querySelectorAll('.block.text .markdown')].map((m) => m.textContent),
  paragraphs: [...turn.querySelectorAll('.markdown > p, .markdown li')].map((p) => p.textContent),
  cites: buttons.map((b) => ({
    label: b.getAttribute('aria-label'), tabindex: b.tabIndex,
    controls: b.getAttribute('aria-controls'),
  })),
  groups: [...turn.querySelectorAll('.cite')].map((s) => s.textContent),
  bold: [...turn.querySelectorAll('.markdown strong .cite, .markdown em .cite')].map(
    (s) => s.textContent),
  marks: [...turn.querySelectorAll('.cite-end')].map((s) => s.dataset.mark),
  inList: turn.querySelectorAll('.markdown li .cite').length,
  elements: turn.querySelectorAll('.markdown b, .markdown script').length,
};
"""

PANEL = """
const box = document.getElementById('sources');
const r = box.getBoundingClientRect();
return {
  hidden: box.hidden, focusInside: box.contains(document.activeElement),
  quote: document.getElementById('sources-quote').textContent,
  rows: [...box.querySelectorAll('tbody tr')].map((tr) => ({
    id: tr.dataset.id, cells: [...tr.cells].map((c) => c.textContent),
    negative: tr.querySelector('.amount').classList.contains('negative'),
    colour: getComputedStyle(tr.querySelector('.amount')).color,
    ink: getComputedStyle(tr.cells[0]).color,
  })),
  totals: [...box.querySelectorAll('.sources-total')].map((t) => t.cells[1].textContent),
  notes: [...box.querySelectorAll('.source-note')].map((n) => [n.dataset.source, n.textContent]),
  loading: box.querySelector('[role="status"]') !== null,
  rect: {left: r.left, right: r.right, top: r.top, bottom: r.bottom},
  viewport: [innerWidth, innerHeight],
  overflow: document.documentElement.scrollWidth > innerWidth || box.scrollWidth > box.clientWidth,
};
"""


def _check_answer(page: ChatPage, figure: str) -> None:
    shown = page.js(SHOWN)
    assert len(shown["runs"]) == 1  # the five blocks read as one answer
    assert shown["paragraphs"] == [
        f"Last month you spent {figure} USD on groceries across your purchases.",
        "The budget:",
        "Groceries: 400.00 USD",
        "Forged: not cited <b>bold?</b>",
    ]
    assert shown["elements"] == 0
    assert shown["groups"] == [f"{figure} USD", " on groceries", "Groceries: ", "400.00 USD"]
    assert shown["bold"] == [f"{figure} USD", "400.00 USD"]  # markdown in a cited block applies
    assert shown["marks"] == ["1", "2"] and shown["inList"] == 2
    assert [c["tabindex"] for c in shown["cites"]] == [0, 0]
    assert all(c["controls"] == "sources" for c in shown["cites"])
    label = shown["cites"][0]["label"]
    assert f"{figure} USD on groceries" in label and "Groceries last month" in label
    assert "Whole Foods · -82.10 USD" in label
    assert "Groceries budget" in shown["cites"][1]["label"]


def _open_panel(page: ChatPage, index: int) -> dict[str, Any]:
    page.driver.find_elements("css selector", '#turns .cite[role="button"]')[index].click()
    return page.wait(
        lambda: (p := page.js(PANEL)) and not p["hidden"] and not p["loading"] and p,
        what="the cited records",
    )


def _press(page: ChatPage, key: str) -> None:
    page.driver.switch_to.active_element.send_keys(key)


def test_a_cited_figure_is_a_link_that_opens_its_records(cited: Any, page: ChatPage) -> None:
    page.open(f"{cited.url}/#token={cited.headers['Authorization'][7:]}")
    page.ask("What did I spend on groceries last month?")
    assert page.wait_for_turn_end()["status"] == "completed"
    figure = cited.figure
    for _ in range(2):  # live, then drawn again from storage after a reload
        _check_answer(page, figure)
        panel = _open_panel(page, 0)
        assert panel["focusInside"]
        assert panel["quote"] == f"{figure} USD on groceries"
        rows = cited.rows
        assert [r["id"] for r in panel["rows"]] == [str(r["id"]) for r in rows]
        for shown, row in zip(panel["rows"], rows, strict=True):
            assert shown["cells"][0] == row["date"]
            assert shown["cells"][1].startswith(row["merchant"])
            assert f"{row['category']} · {row['account']}" in shown["cells"][1]
            assert shown["cells"][2] == shown_amount(row["amount"], row["currency"])
            assert shown["negative"] and shown["colour"] != shown["ink"]  # money out stands out
        assert panel["totals"] == [shown_amount(f"-{figure}", "USD")]
        assert panel["notes"] == [
            [f"txns:{cited.query}", f"Groceries last month ({len(rows)} transactions)"],
            [GONE, "Whole Foods · -82.10 USD: This record is no longer available"],
        ]
        assert panel["rect"]["right"] == panel["viewport"][0]  # a right-hand panel
        assert not panel["overflow"]
        page.screenshot("cited-panel")
        _press(page, Keys.ESCAPE)
        page.wait(lambda: page.js("return document.getElementById('sources').hidden"))
        # The focus is back on the figure; Enter opens its records again.
        assert "on groceries" in page.js("return document.activeElement.getAttribute('aria-label')")
        _press(page, Keys.ENTER)
        page.wait(lambda: not page.js("return document.getElementById('sources').hidden"))
        page.click("#sources-close")
        assert page.js("return document.getElementById('sources').hidden")
        assert "on groceries" in page.js("return document.activeElement.getAttribute('aria-label')")
        page.driver.refresh()
        page.wait(lambda: (s := page.shown()) and s["state"] == "ended" and s)
    _open_panel(page, 1)
    page.click("#new-chat")  # the records of a chat no longer shown close with it
    page.wait(lambda: page.js("return document.getElementById('sources').hidden"))
    # The records that are gone answer 404, which Chromium logs; nothing else may go wrong.
    assert [e for e in page.console_errors() if " 404 " not in e] == []


def test_on_a_phone_the_records_are_a_bottom_sheet(cited: Any, page: ChatPage) -> None:
    page.size("phone")
    page.open(f"{cited.url}/#token={cited.headers['Authorization'][7:]}")
    page.ask("What did I spend on groceries last month?")
    page.wait_for_turn_end()
    panel = _open_panel(page, 1)
    assert panel["notes"] == [[MISSING, "Groceries budget: This record is no longer available"]]
    width, height = panel["viewport"]
    assert panel["rect"]["left"] == 0 and panel["rect"]["right"] == width
    assert panel["rect"]["bottom"] == height and panel["rect"]["top"] > height * 0.25
    assert not panel["overflow"]
    page.click("#sources-close")
    panel = _open_panel(page, 0)  # the transactions fit the phone's width too
    assert len(panel["rows"]) == len(cited.rows) and not panel["overflow"]
    page.screenshot("cited-sheet-phone")


def _cited_blocks(server: Any, turn_id: str) -> list[dict[str, Any]]:
    """The stored text blocks of a turn that carry citations."""
    session_id = server.get(f"/api/turns/{turn_id}").json()["session_id"]
    messages = server.get(f"/api/sessions/{session_id}").json()["messages"]
    return [
        block
        for m in messages
        if m["turn_id"] == turn_id and m["role"] == "assistant"
        for block in m["content"]
        if block["type"] == "text" and block.get("citations")
    ]


def _rows_of(server: Any, source: str) -> list[dict[str, Any]]:
    """The transactions a cited source stands for, read from the record endpoints."""
    kind, _, rest = source.partition(":")
    if kind == "txns":
        return server.get(f"/api/transactions?{rest}").json()["transactions"]
    return [server.get(f"/api/transactions/{rest}").json()] if kind == "txn" else []


def test_the_demo_models_cited_figure_opens_rows_that_add_up_to_it(
    serve: Any, page: ChatPage
) -> None:
    server = serve()  # no API key: the offline demo model answers, citing what its tools found
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.ask(QUESTION)
    shown = page.wait_for_turn_end()
    assert shown["status"] == "completed"
    block = next(b for b in _cited_blocks(server, shown["turnId"]) if AMOUNT.search(b["text"]))
    figure = AMOUNT.search(block["text"])
    expected: dict[int, dict[str, Any]] = {}
    for citation in block["citations"]:
        expected |= {row["id"]: row for row in _rows_of(server, citation["source"])}
    assert expected  # the figure rests on transactions
    for _ in range(2):  # live, then drawn again from storage after a reload
        buttons = page.driver.find_elements("css selector", '#turns .cite[role="button"]')
        at = next(i for i, b in enumerate(buttons) if figure[1] in b.get_attribute("aria-label"))
        panel = _open_panel(page, at)
        assert sorted(int(r["id"]) for r in panel["rows"]) == sorted(expected)
        amount = figure[1].replace(",", "")
        # the rows add up to the figure
        assert panel["totals"] == [shown_amount(f"-{amount}", figure[2])]
        assert -sum(shown_decimal(r["cells"][2]) for r in panel["rows"]) == Decimal(amount)
        page.screenshot("cited-demo")
        page.click("#sources-close")
        page.driver.refresh()
        page.wait(lambda: (s := page.shown()) and s["state"] == "ended" and s)
    assert page.console_errors() == []


MORE = """
const box = document.getElementById('sources');
const more = box.querySelector('.sources-more');
return {
  ids: [...box.querySelectorAll('tbody tr')].map((tr) => Number(tr.dataset.id)),
  totals: [...box.querySelectorAll('.sources-total')].map((t) => t.cells[1].textContent),
  labels: [...box.querySelectorAll('.sources-total')].map((t) => t.cells[0].textContent),
  notes: [...box.querySelectorAll('.source-note')].map((n) => n.textContent),
  more: more && !more.disabled, focused: document.activeElement === more,
};
"""


def test_a_figure_over_more_rows_than_a_page_shows_them_all_page_by_page(
    serve: Any, page: ChatPage
) -> None:
    upstream = FaultyUpstream()
    server = serve(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url)
    query = "direction=out"
    ids, cursor, first = [], "", None
    while cursor is not None:  # every row the source stands for, as the API pages them
        found = server.get(f"/api/transactions?{query}&limit=100{cursor}").json()
        first = first or found
        ids += [row["id"] for row in found["transactions"]]
        cursor = found["next_cursor"] and f"&cursor={found['next_cursor']}"
    assert first["count"] == len(ids) > 50, "more rows than the panel's first page"
    every = {t["currency"]: t["net"] for t in first["totals"]}  # money out only: all negative
    figure = every["USD"].lstrip("-")
    blocks = [
        ("You spent ", []),
        (f"{figure} USD", [_citation(f"txns:{query}", "Everything you spent", figure)]),
        (" in all.", []),
    ]
    upstream.set_chooser(lambda index, body: Transcript(_stream(blocks)))
    try:
        page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
        page.ask("How much have I spent in all?")
        assert page.wait_for_turn_end()["status"] == "completed"
        _open_panel(page, 0)
        shown = page.js(MORE)
        assert shown["ids"] == ids[:50] and shown["more"]
        assert all(label.endswith(" of the 50 shown") for label in shown["labels"])
        page.js("document.querySelector('#sources .sources-more').scrollIntoView()")
        page.screenshot("cited-more")
        assert shown["notes"] == [
            f"Everything you spent (first 50 of {len(ids)} transactions); all of them: "
            + ", ".join(f"{net} {currency}" for currency, net in every.items())
        ]
        while shown["more"]:
            before = len(shown["ids"])
            page.click("#sources .sources-more")
            shown = page.wait(
                lambda n=before: (s := page.js(MORE)) and len(s["ids"]) > n and s,
                what="the next page of records",
            )
            assert shown["focused"] or not shown["more"]
        assert shown["ids"] == ids, "every row once, in the API's order"
        totals = sorted(shown_amount(net, currency) for currency, net in every.items())
        assert sorted(shown["totals"]) == totals, "the rows add up to the API's totals"
        assert sorted(shown["labels"]) == sorted(f"Total {c}" for c in every)
        assert shown["notes"] == [f"Everything you spent ({len(ids)} transactions)"]
        assert page.console_errors() == []
    finally:
        upstream.close()
