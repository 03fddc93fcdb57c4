"""The turn engine under failures: retries, cut streams, database errors, cancels."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2

from streaming.messages.history import validate_history
from tests.engine.streams import answer, tool_use
from tests.engine.toys import CALLS
from tests.helpers import assert_well_formed, text_of, transcript_events
from tests.waits import wait_until_async


def test_error_event_mid_stream_is_discarded_and_retried(run_turn: Any) -> None:
    name = "vercel-ai-inline__error_event_data_only_after_ping_no_message_stop.sse"
    run = run_turn([transcript_events(name), answer("Recovered.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert run.of("message_discarded")[0]["reason"] == "error"
    assert text_of(run.events) == "Recovered."
    history = run.store.history(run.session_id)
    assert history[-1]["content"] == [{"type": "text", "text": "Recovered."}]


def test_stream_cut_without_stop_is_retried(run_turn: Any) -> None:
    run = run_turn([answer("partial")[:3], answer("Whole answer.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert [d["reason"] for d in run.of("message_discarded")] == ["stream_ended"]
    assert text_of(run.events) == "Whole answer."


def test_retries_run_out_and_the_turn_fails_with_an_actionable_error(run_turn: Any) -> None:
    overloaded = transcript_events("vercel-ai-inline__overloaded_error_as_first_event.sse")
    run = run_turn([overloaded] * 3, retries=2)
    assert run.status == "failed"
    assert_well_formed(run.events)
    assert len(run.model.requests) == 3
    error = run.of("turn_error")[-1]
    assert error["code"] == "overloaded_error" and "Gave up after 3 attempts" in error["message"]


def _status_error(code: int, retry_after: str | None = None) -> Exception:
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx2.Response(
        code, headers=headers, request=httpx2.Request("POST", "http://upstream/v1/messages")
    )
    kind = "overloaded_error" if code == 529 else "invalid_request_error"
    return anthropic.APIStatusError(
        kind, response=response, body={"type": "error", "error": {"type": kind, "message": kind}}
    )


def test_status_errors_before_content_are_retried_honouring_retry_after(run_turn: Any) -> None:
    started = time.monotonic()
    run = run_turn([_status_error(529, "0.3"), _status_error(529), answer("Fine now.")])
    assert run.status == "completed"
    assert time.monotonic() - started >= 0.3  # a lower bound: load can only lengthen it
    assert len(run.model.requests) == 3
    assert "message_discarded" not in run.types()


def test_a_rejected_request_is_not_retried(run_turn: Any) -> None:
    run = run_turn([_status_error(400), answer("never")])
    assert run.status == "failed"
    assert len(run.model.requests) == 1
    assert run.of("turn_error")[-1]["code"] == "invalid_request_error"


def test_connection_reset_mid_stream_is_retried(run_turn: Any) -> None:
    reset = [*answer("half")[:3], httpx2.RemoteProtocolError("peer closed connection")]
    run = run_turn([reset, answer("Full.")])
    assert run.status == "completed"
    assert [d["reason"] for d in run.of("message_discarded")] == ["connection_error"]


def test_a_tool_is_not_run_again_when_the_next_call_is_retried(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use("toolu_once", "get_weather", ['{"location": "Bern"}']),
            answer("cut")[:3],
            answer("Bern is cold."),
        ]
    )
    assert run.status == "completed"
    assert CALLS == [("get_weather", {"location": "Bern", "units": "f"})]
    assert run.model.requests[1] == run.model.requests[2]


def test_a_database_failure_mid_stream_still_ends_every_block_and_the_turn(
    run_turn: Any, monkeypatch: Any
) -> None:
    from engine.store.messages import MessageStore

    def broken(self: Any, lease: Any, message_id: str, **fields: Any) -> None:
        raise RuntimeError("database is locked")

    monkeypatch.setattr(MessageStore, "update_message", broken)
    run = run_turn([answer("never stored")] * 5, retries=1)
    assert run.status == "failed"
    assert_well_formed(run.events)


def test_cancel_while_a_tool_runs_ends_the_turn_without_another_model_call(
    run_turn: Any,
) -> None:
    import asyncio

    from engine.turns.tools import CANCELLED

    async def cancel_once_the_tool_runs(turn: Any) -> None:
        await wait_until_async(lambda: CALLS)
        turn.stop("cancel")

    tasks: list[asyncio.Task[None]] = []

    def cancel_when_running(turn: Any) -> None:
        tasks.append(asyncio.get_running_loop().create_task(cancel_once_the_tool_runs(turn)))

    # The slow tool never returns while the turn runs, so the turn ended without waiting for
    # it; its result says cancelled, not timed out (the tool timeout is 1 s here).
    run = run_turn(
        [tool_use("toolu_slow", "slow", ["{}"]), answer("never")], before=cancel_when_running
    )
    assert run.status == "cancelled"
    assert len(run.model.requests) == 1
    (result,) = run.of("tool_result")
    assert result["is_error"] is True
    assert CANCELLED in str(result["content"]), result
    assert validate_history(run.store.conversation(run.session_id), expect_user_last=False) == []


def test_a_session_left_with_an_orphan_tool_call_is_repaired_before_the_next_call(
    run_turn: Any, db: Any, user: Any
) -> None:
    from engine.store.messages import MessageStore
    from engine.store.turns import TurnStore
    from models import new_id
    from services.sessions import create_session

    turns, store = TurnStore(db), MessageStore(db)
    sid = create_session(db, user[0])["id"]
    # What a crash leaves: a question, then a tool call whose result was never stored,
    # a cut-off message with only partial content, and an empty text block.
    _, lease, _ = turns.start_turn(user[0], sid, "What is the weather in Lima?")
    store.add_message(
        lease,
        new_id("msg"),
        "assistant",
        [
            {"type": "text", "text": ""},
            {
                "type": "tool_use",
                "id": "toolu_orphan",
                "name": "get_weather",
                "input": {"location": "Lima"},
            },
        ],
        "incomplete",
    )
    store.add_message(
        lease,
        new_id("msg"),
        "assistant",
        [],
        "incomplete",
        partial_content=[{"index": 0, "type": "text", "text": "half"}],
    )
    turns.finish_turn(lease, "interrupted", 1)
    run = run_turn([answer("Mild.")], question="And now?", session_id=sid)
    assert run.status == "completed"
    sent = run.model.requests[0]
    assert validate_history(sent) == []
    result = sent[2]["content"][0]
    assert result["tool_use_id"] == "toolu_orphan" and result["is_error"] is True
    assert "half" not in str(sent)
    assert CALLS == []
