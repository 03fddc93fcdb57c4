"""What a worker taking over a turn sends: only what clients missed, numbered after it."""

from __future__ import annotations

from typing import Any

from engine.events.replay import message_events
from engine.turns.resume import catch_up, standing
from models import Message
from streaming.wire import protocol as P
from streaming.wire.view import TurnView
from tests.helpers import assert_well_formed

START = {"turn_id": "turn_1", "session_id": "ses_1", "user_message_id": "msg_q"}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": 1}}


def row(
    ident: str,
    role: str,
    content: list[dict[str, Any]],
    status: str = "complete",
    stop: str | None = None,
) -> Message:
    return Message(
        id=ident, role=role, content=content, status=status, stop_reason=stop, model="m", usage={}
    )


def shown(
    *events: tuple[str, dict[str, Any]],
) -> tuple[TurnView, list[tuple[int, str, dict[str, Any]]]]:
    """The view a client has after these events (turn_start first), and the numbered events."""
    numbered = [(i, t, d) for i, (t, d) in enumerate([(P.TURN_START, START), *events], 1)]
    view = TurnView()
    for seq, kind, data in numbered:
        view.apply(seq, kind, data)
    return view, numbered


def finish(
    view: TurnView, numbered: list[Any], extra: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    """The client's whole stream: what it saw, the catch-up, and a turn_end."""
    tail = [*extra, (P.TURN_END, {"turn_id": "turn_1", "status": "completed"})]
    return numbered + [(view.last_seq + i, t, d) for i, (t, d) in enumerate(tail, 1)]


QUESTION = row("msg_q", "user", [{"type": "text", "text": "hi"}])
FIRST = row("msg_a", "assistant", [{"type": "text", "text": "Let me look."}, TOOL], stop="tool_use")
RESULTS = row("msg_r", "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}])


def test_a_message_streaming_when_the_worker_died_is_discarded_after_its_open_blocks_end() -> None:
    cut = row("msg_b", "assistant", [], status="streaming")
    view, numbered = shown(
        (P.MESSAGE_START, {"message_id": "msg_b", "role": "assistant", "model": "m"}),
        (
            P.BLOCK_START,
            {"message_id": "msg_b", "block_id": "msg_b.0", "index": 0, "type": "text", "block": {}},
        ),
        (
            P.BLOCK_DELTA,
            {
                "message_id": "msg_b",
                "block_id": "msg_b.0",
                "delta": {"type": "text_delta", "text": "The ans"},
            },
        ),
    )
    extra = catch_up(view, [QUESTION, cut], START)
    assert [t for t, _ in extra] == [P.BLOCK_END, P.MESSAGE_DISCARDED]
    assert extra[0][1]["incomplete"] and extra[1][1]["reason"] == "worker_lost"
    assert_well_formed(finish(view, numbered, extra))


def test_stored_rows_the_client_never_saw_are_sent_in_full_and_nothing_twice() -> None:
    view, numbered = shown(*message_events(FIRST)[:3])  # message_start, block_start, a delta
    extra = catch_up(view, [QUESTION, FIRST, RESULTS], START)
    kinds = [t for t, _ in extra]
    # The half-shown message is dropped and sent again whole, under the same id.
    assert kinds[:3] == [P.BLOCK_END, P.MESSAGE_DISCARDED, P.MESSAGE_START]
    assert extra[2][1]["message_id"] == "msg_a"
    assert kinds[-1] == P.TOOL_RESULT and extra[-1][1]["name"] == "lookup"
    whole = finish(view, numbered, extra)
    assert_well_formed(whole)
    again = TurnView()
    for seq, kind, data in whole:
        again.apply(seq, kind, data)
    assert again.shown_text() == "Let me look."


def test_a_client_that_saw_everything_gets_nothing_more() -> None:
    events = [
        *message_events(FIRST),
        (
            P.TOOL_RESULT,
            {
                "message_id": "msg_r",
                "tool_use_id": "toolu_1",
                "name": "lookup",
                "is_error": False,
                "content": "42",
            },
        ),
    ]
    view, _ = shown(*events)
    assert catch_up(view, [QUESTION, FIRST, RESULTS], START) == []


def test_a_log_lost_entirely_starts_with_turn_start() -> None:
    extra = catch_up(TurnView(), [QUESTION, FIRST], START)
    assert extra[0] == (P.TURN_START, START)
    assert [t for t, _ in extra].count(P.MESSAGE_START) == 1


def test_standing_counts_finished_rounds_and_reads_the_last_stop() -> None:
    assert standing([QUESTION, FIRST]) == standing(
        [QUESTION, FIRST, row("x", "assistant", [], "streaming")]
    )
    assert standing([QUESTION, FIRST]).stop_reason == "tool_use"
    assert standing([QUESTION, FIRST, RESULTS]).stop_reason is None
    assert standing([QUESTION, FIRST, RESULTS]).rounds == 1
