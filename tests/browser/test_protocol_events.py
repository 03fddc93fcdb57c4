"""The page follows the protocol's corrections: discarded messages, re-sends, resets."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from demo_model.wire import encode_reply
from streaming.wire.stored import StoredMessage, message_events
from tests.browser.page import ChatPage
from tests.faults.kinds import error_event
from tests.faults.upstream import FaultyUpstream, Transcript

ANSWER = "The first attempt broke off, and this second one is the answer that counts."


@pytest.fixture
def flaky(serve: Any) -> Iterator[Any]:
    """The app against a model whose first reply breaks off mid-text and is then retried."""
    upstream = FaultyUpstream()
    blocks = [{"type": "text", "text": ANSWER}]
    events = list(encode_reply("msg_a", "claude-test", blocks, "end_turn", 9, random.Random(3)))
    broken = b"".join([*events[:12], error_event("overloaded_error")])
    upstream.script(Transcript(broken, delay=0.05), Transcript(b"".join(events), delay=0.01))
    yield serve(
        ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url, UPSTREAM_BACKOFF_BASE=0.5
    )
    upstream.close()


def test_a_discarded_attempt_is_removed_from_the_page(flaky: Any, page: ChatPage) -> None:
    page.open(f"{flaky.url}/#token={flaky.headers['Authorization'][7:]}")
    page.ask("Hello?")
    partial = page.wait_for_text(10)  # the first attempt is on screen...
    assert ANSWER.startswith(partial["texts"][0])
    page.wait(
        lambda: "trying again" in (page.shown()["footer"] + page.js(ACTIVITY)),
        what="the discarded attempt",
    )
    shown = page.wait_for_turn_end()  # ...and gone: only the retry is shown
    assert shown["texts"] == [ANSWER] and shown["messages"] == 1


ACTIVITY = "return document.querySelector('#turns .turn:last-child .activity').textContent"

# Feeds events straight into a TurnView in the page: what the server may send after a worker
# crash (a re-send under the same message id) and on a rebuilt turn (`reset`).
FEED = """
const [events, done] = arguments;
const { TurnView } = await import('/web/js/turn-view.js');
const view = new TurnView({ userText: 'q' });
document.getElementById('turns').append(view.el);
const shots = [];
const lines = [];
for (const [type, data] of events) {
  if (type === 'status') {
    lines.push(view.el.querySelector('.fold-status')?.textContent);
  } else if (type === 'snapshot') {
    view.flush();
    shots.push([...view.el.querySelectorAll('.block.text .markdown')].map((b) => b.textContent));
  } else {
    view.handle(type, data);
  }
}
done({ shots, lines, messages: view.el.querySelectorAll('.msg.assistant').length,
       status: view.el.dataset.status, footer: view.footer.textContent });
"""


def _text(message_id: str, text: str, index: int = 0) -> list[list[Any]]:
    block = f"{message_id}.{index}"
    ids = {"message_id": message_id, "block_id": block}
    return [
        ["block_start", {**ids, "index": index, "type": "text", "block": {"type": "text"}}],
        ["block_delta", {**ids, "delta": {"type": "text_delta", "text": text}}],
    ]


def test_resends_replace_and_resets_redraw(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    events = [
        ["turn_start", {"turn_id": "turn_x"}],
        ["message_start", {"message_id": "msg_1", "model": "claude-test"}],
        *_text("msg_1", "Hello wor"),
        ["snapshot", {}],
        ["message_discarded", {"message_id": "msg_1", "reason": "worker_lost", "attempt": 1}],
        ["snapshot", {}],
        ["message_start", {"message_id": "msg_1", "model": "claude-test"}],  # the same id again
        *_text("msg_1", "Hello world"),
        ["block_end", {"message_id": "msg_1", "block_id": "msg_1.0", "type": "text"}],
        ["future_event", {"dropped": 3}],  # a type this page does not know: ignored
        ["message_end", {"message_id": "msg_1", "stop_reason": "end_turn"}],
        ["snapshot", {}],
        ["turn_start", {"turn_id": "turn_x", "reset": True}],
        ["snapshot", {}],
        ["message_start", {"message_id": "msg_2", "model": "claude-test"}],
        *_text("msg_2", "Rebuilt **answer**"),
        ["message_end", {"message_id": "msg_2", "stop_reason": "end_turn"}],
        ["turn_end", {"turn_id": "turn_x", "status": "completed"}],
        ["snapshot", {}],
    ]
    out = page.driver.execute_async_script(FEED, events)
    assert out["shots"] == [["Hello wor"], [], ["Hello world"], [], ["Rebuilt answer"]]
    assert out["messages"] == 1 and out["status"] == "completed" and out["footer"] == ""


def test_turns_left_out_of_the_models_view_get_a_note(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    note = {"omitted_turns": 3, "omitted_messages": 12, "elided_results": 2}
    events = [
        ["turn_start", {"turn_id": "turn_y"}],
        ["context_trimmed", {**note, "first_kept_message_id": "msg_k"}],
        ["message_start", {"message_id": "msg_1", "model": "claude-test"}],
        *_text("msg_1", "Answer"),
        ["message_end", {"message_id": "msg_1", "stop_reason": "end_turn"}],
        ["turn_end", {"turn_id": "turn_y", "status": "completed"}],
    ]
    page.driver.execute_async_script(FEED, events)
    shown = page.js(
        "return [...document.querySelectorAll('#turns .turn:last-child .assistant > *')]"
        ".map((e) => e.className + ': ' + e.textContent)"
    )
    assert shown[0].startswith("notice context-note: ")
    assert "first 3 turns" in shown[0] and "2 older tool results" in shown[0]
    assert shown[1].startswith("msg assistant")


def test_a_stored_message_sent_again_after_a_takeover_shows_its_text_once(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    thinking = {"type": "thinking", "thinking": "Sum the rows.", "signature": "sig"}
    row: StoredMessage = {
        "id": "msg_1",
        "role": "assistant",
        "content": [thinking, {"type": "text", "text": "You spent 12.50 USD."}],
    }
    # What a takeover's catch-up and a lost log's replay send for a stored message.
    events = [["turn_start", {"turn_id": "turn_z"}], *message_events(row), ["snapshot", {}]]
    out = page.driver.execute_async_script(FEED, events)
    assert out["shots"] == [["You spent 12.50 USD."]]
    thought = "return document.querySelector('#turns .turn:last-child details.thinking')"
    shown = page.js(thought + ".textContent")
    assert shown.count("Sum the rows.") == 1


def test_progress_notes_are_a_status_line_under_the_folded_calls(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_transactions", "input": {}}
    empty = {"type": "thinking", "thinking": "", "signature": "sig"}
    note = {"type": "thinking", "thinking": "Looking up <b>transactions</b>.", "signature": "s"}
    rows: list[StoredMessage] = [
        {"id": "msg_1", "role": "assistant", "content": [empty, note, call]},
        {
            "id": "msg_2",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Read 1 result; done.", "signature": "t"},
                {"type": "text", "text": "You spent 12.50 USD."},
            ],
        },
    ]
    events = [
        ["turn_start", {"turn_id": "turn_p"}],
        *message_events(rows[0]),
        ["snapshot", {}],
        ["status", {}],
        *message_events(rows[1]),
        ["turn_end", {"turn_id": "turn_p", "status": "completed"}],
        ["snapshot", {}],
        ["status", {}],
    ]
    out = page.driver.execute_async_script(FEED, events)
    assert out["lines"] == ["Looking up <b>transactions</b>.", "Read 1 result; done."]
    shown = page.js(
        "const t = document.querySelector('#turns .turn:last-child');"
        "return {thinking: [...t.querySelectorAll('details.thinking')].filter((d) => !d.hidden)"
        ".length, under: t.querySelector('.tool-use > .tool-fold + .fold-status') !== null,"
        " bold: t.querySelectorAll('.fold-status b').length};"
    )
    assert shown == {"thinking": 0, "under": True, "bold": 0}, "text, not a hidden block"
