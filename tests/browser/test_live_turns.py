"""A turn followed live: a cut connection resumes exactly, a reload re-attaches, Stop cancels."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.page import QUESTION, ChatPage, assert_renders, stored_of, visible
from tests.browser.proxy import CuttableProxy

# Slow enough to act mid-answer (about 5 s a turn), fast enough to keep the suite quick.
DELAY = 0.04


@pytest.fixture
def slow(serve: Any) -> Any:
    """The app with a demo model that takes a few seconds per turn."""
    return serve(DEMO_EVENT_DELAY=DELAY)


def status_text(page: ChatPage) -> str:
    return page.js("return document.getElementById('status').textContent")


def test_network_cut_mid_answer_resumes_without_duplicates(serve: Any, page: ChatPage) -> None:
    server = serve(DEMO_EVENT_DELAY=0.06)  # a longer turn: the first resume must find it live
    proxy = CuttableProxy(server.port)
    try:
        page.open(f"{proxy.url}/#token={server.headers['Authorization'][7:]}")
        page.ask(QUESTION)
        # First cut while a tool call streams: the stream resumes into the running turn.
        turn_id = page.wait(lambda: (s := page.shown()) and s["tools"] and s["turnId"])
        assert proxy.cut() >= 1
        page.wait(lambda: "reconnecting" in status_text(page), what="the reconnecting state")
        page.wait(lambda: "answering" in status_text(page), what="the stream to resume")
        assert server.get(f"/api/turns/{turn_id}").json()["status"] == "running"
        # Second cut in the middle of the answer's text.
        before = page.wait_for_text(30)
        assert proxy.cut() >= 1
        page.wait(lambda: "reconnecting" in status_text(page), what="the reconnecting state")
        shown = page.wait_for_turn_end()
    finally:
        proxy.close()

    assert shown["status"] == "completed"
    assert_renders(shown, stored_of(server, turn_id))
    cut_at, final = visible("".join(before["texts"])), visible("".join(shown["texts"]))
    assert final.startswith(cut_at) and len(final) > len(cut_at)
    follows = [headers for line, headers in proxy.requests() if "/events" in line]
    resumed_from = [int(h["last-event-id"]) for h in follows if "last-event-id" in h]
    assert len(follows) == 3 and len(resumed_from) == 2  # EventSource reopened it twice,
    assert 0 < resumed_from[0] < resumed_from[1]  # each time from the last event it had
    assert page.js("return document.querySelectorAll('#turns .turn').length") == 1


def test_reload_mid_turn_reattaches(slow: Any, page: ChatPage) -> None:
    page.open(f"{slow.url}/#token={slow.headers['Authorization'][7:]}")
    page.ask(QUESTION)
    turn_id = page.wait(lambda: (s := page.shown()) and s["tools"] and s["turnId"])
    page.driver.refresh()
    page.wait(
        lambda: (s := page.shown()) and s["state"] == "running" and s["turnId"] == turn_id,
        what="the page to re-attach to the running turn",
    )
    assert slow.get(f"/api/turns/{turn_id}").json()["status"] == "running"
    shown = page.wait_for_turn_end()

    assert shown["status"] == "completed" and shown["user"] == QUESTION
    assert_renders(shown, stored_of(slow, turn_id))
    assert page.js("return document.querySelectorAll('#turns .turn').length") == 1


def test_stop_cancels_and_keeps_what_was_written(slow: Any, page: ChatPage) -> None:
    page.open(f"{slow.url}/#token={slow.headers['Authorization'][7:]}")
    page.ask(QUESTION)
    page.wait_for_text(20)
    assert page.js("return document.getElementById('stop').hidden") is False
    assert status_text(page) == "The offline demo model is answering…"
    page.screenshot("streaming")
    page.driver.find_element("id", "stop").click()
    shown = page.wait_for_turn_end(timeout=10)

    assert shown["status"] == "cancelled" and "Stopped" in shown["footer"]
    assert slow.get(f"/api/turns/{shown['turnId']}").json()["status"] == "cancelled"
    stored = stored_of(slow, shown["turnId"])
    assert visible("".join(shown["texts"])) == visible("".join(stored["texts"]))
    assert page.js("return document.getElementById('stop').hidden") is True
    assert page.js("return document.getElementById('send').disabled") is False
