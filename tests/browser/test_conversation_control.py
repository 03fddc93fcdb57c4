"""Edit, regenerate and versions; a message sent while a turn runs; approval cards."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from selenium.webdriver.common.keys import Keys
from sqlalchemy import select

from models import Budget, Category
from tests.browser.page import QUESTION, ChatPage

RAISE = "Raise my groceries budget to 400"
BUDGETS = "How am I doing against my budgets this month?"

_TURNS = """
return [...document.querySelectorAll('#turns .turn')].map((t) => {
  const text = (css) => t.querySelector(css)?.textContent ?? null;
  return {
    turnId: t.dataset.turnId || null, state: t.dataset.state, status: t.dataset.status || null,
    queued: t.dataset.queued === 'true', user: text('.msg.user .bubble'),
    answerIds: [...t.querySelectorAll('.msg.assistant')].map((m) => m.dataset.messageId),
    texts: [...t.querySelectorAll('.block.text .markdown')].map((b) => b.textContent).join(' '),
    questionVersion: text('.user-actions .version'), answerVersion: text('.turn-actions .version'),
    cards: [...t.querySelectorAll('.approval-card')].map((c) => ({
      state: c.dataset.state, summary: c.querySelector('.approval-summary').textContent,
      status: c.querySelector('.approval-state').textContent,
      rows: [...c.querySelectorAll('tbody tr')].map(
        (r) => [...r.children].map((x) => x.textContent)),
      buttons: [...c.querySelectorAll('button')].map((b) => b.textContent)})),
  };
});
"""


def turns(page: ChatPage) -> list[dict[str, Any]]:
    """Every turn the page shows, in order."""
    return page.js(_TURNS)


def settled(page: ChatPage, count: int, timeout: float = 30) -> list[dict[str, Any]]:
    """Wait until `count` turns are shown and none runs; return them."""
    return page.wait(
        lambda: (
            (t := turns(page)) and len(t) == count and all(x["state"] == "ended" for x in t) and t
        ),
        timeout,
        f"{count} finished turns",
    )


def groceries(server: Any) -> Decimal:
    """The recurring Groceries budget, in major units."""
    with server.app.extensions["db"].read() as s:
        minor = s.scalar(
            select(Budget.limit_minor)
            .join(Category, Category.id == Budget.category_id)
            .where(Category.name == "Groceries", Budget.month.is_(None))
        )
    return Decimal(minor) / 100


def focused_class(page: ChatPage) -> str:
    return page.js("return document.activeElement.className")


def press(page: ChatPage, css: str) -> None:
    """Wait for an enabled control (drawn once the page has the turn's versions) and click it."""
    page.wait(
        lambda: page.js(
            "const b = document.querySelector(arguments[0]); return b && !b.disabled", css
        ),
        what=css,
    )
    page.click(css)


def start(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


def test_regenerate_shows_2_of_2_and_switching_back_shows_the_first(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    start(page, server)
    page.ask(QUESTION)
    [first] = settled(page, 1)
    assert first["answerVersion"] is None  # one answer: no versions shown
    press(page, "#turns .turn-actions .regenerate")
    page.wait(lambda: (t := turns(page)) and t[0]["answerVersion"] == "2 / 2" and t, what="2 / 2")
    [again] = settled(page, 1)
    assert again["user"] == QUESTION and again["answerIds"][0] != first["answerIds"][0]
    assert again["turnId"] != first["turnId"]
    page.screenshot("regenerated-2-of-2")

    press(page, "#turns .turn-actions .previous")
    page.wait(lambda: turns(page)[0]["answerVersion"] == "1 / 2", what="1 / 2")
    [back] = settled(page, 1)
    assert back["answerIds"] == first["answerIds"] and back["texts"] == first["texts"]
    assert "previous" in focused_class(page) or "next" in focused_class(page)  # focus stays
    page.driver.refresh()
    page.wait(lambda: (t := turns(page)) and t[0]["answerVersion"] == "1 / 2", what="the reload")
    assert turns(page)[0]["answerIds"] == first["answerIds"]
    assert page.console_errors() == []


def test_edit_makes_a_sibling_with_its_own_answer(serve: Any, page: ChatPage) -> None:
    server = serve()
    start(page, server)
    page.ask(QUESTION)
    settled(page, 1)
    page.ask(BUDGETS)
    first, second = settled(page, 2)
    press(page, "#turns .turn:nth-child(2) .user-actions .edit")
    assert "edit-box" in focused_class(page)
    page.screenshot("editing")
    box = page.driver.find_element("css selector", ".edit-box")
    box.send_keys(Keys.ESCAPE)  # Esc cancels: the question is shown again, unchanged
    assert "edit" in focused_class(page) and turns(page)[1]["user"] == BUDGETS
    press(page, "#turns .turn:nth-child(2) .user-actions .edit")
    box = page.driver.find_element("css selector", ".edit-box")
    box.clear()
    box.send_keys("Which recurring payments do I have?", Keys.ENTER)
    page.wait(lambda: (t := turns(page)) and t[-1]["questionVersion"] == "2 / 2", what="2 / 2")
    kept, edited = settled(page, 2)
    assert kept["answerIds"] == first["answerIds"]
    assert edited["user"] == "Which recurring payments do I have?"
    assert edited["answerIds"] != second["answerIds"] and "recurring" in edited["texts"].lower()
    assert page.js(
        "return document.querySelector('.turn:nth-child(2) .user-actions .next').disabled"
    )
    for size in ("laptop", "phone"):
        page.size(size)
        page.screenshot(f"edited-2-of-2-{size}")
    page.reset()

    press(page, "#turns .turn:nth-child(2) .user-actions .previous")
    page.wait(lambda: turns(page)[-1]["questionVersion"] == "1 / 2", what="the first version")
    assert turns(page)[-1]["user"] == BUDGETS
    assert turns(page)[-1]["answerIds"] == second["answerIds"]


def test_a_message_sent_while_a_turn_runs_is_queued_then_answered(
    serve: Any, page: ChatPage
) -> None:
    server = serve(DEMO_EVENT_DELAY=0.04)
    start(page, server)
    page.ask(QUESTION)
    page.wait_for_text(10)
    assert page.js("return document.getElementById('send').disabled") is False
    page.ask(BUDGETS)
    page.wait(
        lambda: len(t := turns(page)) == 2 and t[1]["queued"] and t[1]["turnId"], what="queued"
    )
    page.ask("Which recurring payments do I have?")
    page.wait(
        lambda: len(t := turns(page)) == 3 and t[2]["queued"] and t[2]["turnId"], what="queued"
    )
    shown = turns(page)
    assert shown[0]["state"] == "running" and shown[1]["user"] == BUDGETS
    assert (
        page.js("return document.querySelector('.turn:nth-child(2) .queued-tag').textContent")
        == "Queued"
    )
    assert (
        page.js("return document.querySelector('#turns .turn .regenerate:not([disabled])')") is None
    )
    page.screenshot("queued")
    cancelled = shown[2]["turnId"]
    page.click("#turns .turn:nth-child(3) .cancel-queued")
    page.wait(lambda: len(turns(page)) == 2, what="the cancelled message to go")

    first, queued = settled(page, 2, timeout=60)
    assert first["status"] == queued["status"] == "completed"
    assert (
        not queued["queued"] and queued["user"] == BUDGETS and "budget" in queued["texts"].lower()
    )
    assert server.get(f"/api/turns/{queued['turnId']}").json()["status"] == "completed"
    assert server.get(f"/api/turns/{cancelled}").json()["status"] != "completed"
    session = server.get(f"/api/turns/{queued['turnId']}").json()["session_id"]
    assert server.get(f"/api/sessions/{session}").json()["queued"] == []


def pending_card(page: ChatPage) -> dict[str, Any]:
    """Wait for the approval card of the last paused turn and return it."""
    return page.wait(
        lambda: (
            (c := [c for t in turns(page) for c in t["cards"]])
            and c[-1]["state"] == "pending"
            and c[-1]
        ),
        what="a pending approval card",
    )


def test_approve_runs_the_action_and_the_card_survives_reload(serve: Any, page: ChatPage) -> None:
    server = serve()
    start(page, server)
    page.ask(RAISE)
    card = pending_card(page)
    assert card["rows"] == [["limit", "600.00 USD", "→ 400.00 USD"]]
    assert "Groceries" in card["summary"] and card["buttons"] == ["Approve", "Decline…"]
    # The card is drawn at the approval's event; the turn's status comes after it, at turn_end.
    page.wait(lambda: turns(page)[0]["status"] == "awaiting_approval", what="the turn to pause")
    assert (
        page.js("return [...document.querySelectorAll('.tool-state')].at(-1).textContent")
        == "awaiting your approval"
    )
    for size in ("laptop", "phone"):
        page.size(size)
        page.screenshot(f"approval-card-{size}")
    page.reset()
    page.driver.refresh()
    assert pending_card(page) == card  # the same card after a reload
    assert groceries(server) == Decimal("600.00")
    # Titled in words, in view outside the folded tool calls, and nothing to regenerate yet.
    assert page.js("return document.querySelector('.approval-title').textContent") == (
        "Change a budget"
    )
    assert page.visible(".approval-card .approve")
    line = page.js("return document.querySelector('.tool-fold .fold-line').textContent")
    assert line.endswith("; asked to change a budget")  # a change is not looked up
    assert page.js("return document.querySelectorAll('.turn .regenerate').length") == 0

    press(page, ".approval-card .approve")
    paused, answer = settled(page, 2)
    assert paused["cards"][0]["state"] == "approved" and paused["cards"][0]["buttons"] == []
    assert paused["cards"][0]["status"].startswith("Approved")
    assert "approval-state" in focused_class(page)
    assert page.js("return document.querySelector('.turn .turn-status')") is None  # no "waiting"
    # The question's turn went on in the next one: Regenerate is offered on the final answer.
    page.wait(
        lambda: page.js("return document.querySelectorAll('.turn .regenerate').length") == 1,
        what="Regenerate on the final answer",
    )
    assert page.js("return document.querySelector('.turn:nth-child(2) .regenerate')") is not None
    assert "400.00" in answer["texts"] and answer["status"] == "completed"
    assert groceries(server) == Decimal("400.00")
    page.screenshot("approval-approved")
    page.driver.refresh()
    page.wait(
        lambda: (
            (t := turns(page))
            and len(t) == 2
            and t[0]["cards"]
            and t[0]["cards"][0]["state"] == "approved"
        ),
        what="the decided card after a reload",
    )
    assert "400.00" in turns(page)[1]["texts"]
    assert page.console_errors() == []


def test_decline_with_a_reason(serve: Any, page: ChatPage) -> None:
    server = serve()
    start(page, server)
    page.ask(RAISE)
    pending_card(page)
    press(page, ".approval-card .decline")
    assert "decline-reason" in focused_class(page)
    page.driver.find_element("css selector", ".decline-reason").send_keys("too much", Keys.ENTER)
    paused, answer = settled(page, 2)
    assert paused["cards"][0]["state"] == "declined"
    assert paused["cards"][0]["status"].startswith("Declined: too much")
    assert answer["status"] == "completed" and answer["texts"]
    assert groceries(server) == Decimal("600.00")
    assert declined_results(page) == [{"text": "Declined: too much", "error": False}]
    page.screenshot("approval-declined")
    page.driver.refresh()
    page.wait(lambda: len(turns(page)) == 2 and declined_results(page), what="a reload")
    assert declined_results(page) == [{"text": "Declined: too much", "error": False}]


def declined_results(page: ChatPage) -> list[dict[str, Any]]:
    """The results shown for set_budget: what the user decided, never the model's words."""
    return page.js(
        """
        return [...document.querySelectorAll('.block.tool')]
          .filter((t) => t.dataset.tool === 'set_budget')
          .map((t) => t.querySelector('.tool-result'))
          .filter(Boolean)
          .map((r) => ({ text: r.textContent, error: r.classList.contains('error') }));
        """
    )


def test_two_tabs_show_the_same_card_and_learn_the_decision(serve: Any, page: ChatPage) -> None:
    server = serve()
    driver = page.driver
    start(page, server)
    page.ask(RAISE)
    card = pending_card(page)
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    try:
        page.open(server.url)  # signed in already: the same origin's storage
        assert pending_card(page) == card
        second = driver.current_window_handle
        driver.switch_to.window(first)
        press(page, ".approval-card .approve")
        settled(page, 2)
        driver.switch_to.window(second)
        # This tab did not decide: it learns the decision (polling, or its Decline 409s and
        # it redraws the chat); either way it shows what was decided, once.
        state = page.wait(
            lambda: (t := turns(page)) and t[0]["cards"] and t[0]["cards"][0]["state"],
            what="the card in the second tab",
        )
        if state == "pending":  # one script: the poll may redraw the card at any moment
            page.js(
                "document.querySelector('.approval-card[data-state=pending] .decline')?.click();"
                "document.querySelector('.approval-card .decline-form')?.requestSubmit();"
            )
        page.wait(
            lambda: (
                (t := turns(page))
                and len(t) == 2
                and t[0]["cards"]
                and t[0]["cards"][0]["state"] == "approved"
            ),
            what="the other tab's decision",
        )
        page.screenshot("approval-second-tab")
        driver.refresh()
        page.wait(
            lambda: (
                (t := turns(page)) and t[0]["cards"] and t[0]["cards"][0]["state"] == "approved"
            ),
            what="the decision after a reload",
        )
    finally:
        driver.close()
        driver.switch_to.window(first)
    assert groceries(server) == Decimal("400.00")
    runs = server.get("/api/actions").json()["actions"]
    assert [a["approval"] for a in runs] == ["approved"]
