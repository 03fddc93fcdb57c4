"""Upstream faults against the real SDK over loopback: each is a tested non-event."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.history import validate_history
from streaming.wire.sse import iter_json_events
from tests.faults.conftest import Rig
from tests.faults.upstream import (
    CutToolAtMaxTokens,
    ErrorAfter,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
    expected_reply,
)
from tests.helpers import assert_well_formed
from tests.waits import PATIENCE

QUESTION = "What did I spend on groceries last month?"


def stored(rig: Rig, sid: str) -> list[dict[str, Any]]:
    """The session's stored conversation as the API sees it, before any repair."""
    return rig.turns.deps.messages.conversation(sid)


def upstream_answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The content the upstream sends, fault-free, for this request body."""
    acc = MessageAccumulator()
    for event in iter_json_events(expected_reply(body)):
        acc.feed(event)
    return acc.message()["content"]


def check_clean(rig: Rig, sid: str, events: list[Any], status: str = "completed") -> None:
    """The turn ended as expected, its events are well formed, its history is valid."""
    assert_well_formed(events)
    assert events[-1][2]["status"] == status, [e for e in events if e[1] == "turn_error"]
    assert validate_history(stored(rig, sid), expect_user_last=False) == []


def test_429_and_529_before_content_are_retried_honouring_retry_after(rig: Rig) -> None:
    rig.upstream.script(Status(429, retry_after=0.4), Status(529), Status(500))
    started = time.monotonic()
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert time.monotonic() - started >= 0.4  # a lower bound: load can only lengthen it
    assert rig.upstream.served[:4] == ["Status", "Status", "Status", "Normal"]
    assert "message_discarded" not in [t for _, t, _ in events]


def test_error_event_mid_stream_is_discarded_and_the_stored_answer_is_the_retry(rig: Rig) -> None:
    rig.upstream.script(Normal(), ErrorAfter(12))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    discarded = [d for _, t, d in events if t == "message_discarded"]
    assert discarded == [
        {"message_id": discarded[0]["message_id"], "reason": "overloaded_error", "attempt": 0}
    ]
    final_body = rig.upstream.requests[-1]
    assert stored(rig, sid)[-1]["content"] == upstream_answer(final_body)


def test_connection_reset_mid_stream_is_retried(rig: Rig) -> None:
    rig.upstream.script(ResetAfter(9))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["connection_error"]


def test_silent_stall_is_aborted_by_the_watchdog_and_retried(rig: Rig) -> None:
    # The stall (20 s) ends in a cut connection: "stalled" says the watchdog (3 s) came first.
    rig.upstream.script(StallAfter(6, seconds=20))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["stalled"]


def test_at_the_default_ratios_a_stall_is_retried_though_it_lasts_the_whole_budget(
    rig: Rig,
) -> None:
    # STALL_TIMEOUT equals UPSTREAM_RETRY_BUDGET by default: the stall alone uses up the
    # budget's length, and the retry must still happen (the budget counts waiting only).
    t = rig.timings
    assert t.stall_timeout >= t.retry_budget
    rig.upstream.script(StallAfter(6, seconds=t.stall_timeout * 3))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["stalled"]


def test_a_stream_longer_than_the_budget_that_breaks_late_is_retried(rig: Rig) -> None:
    t = rig.timings
    # 8 events spread over more than the whole retry budget, then a reset.
    rig.upstream.script(ResetAfter(8, delay=t.retry_budget * 1.2 / 8))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["connection_error"]


def test_a_slow_heartbeat_never_delays_stall_detection(rig: Rig, monkeypatch: Any) -> None:
    # Heartbeats wait for the database in the store pool: a database that takes ages to take
    # the heartbeat must not freeze stall detection (a timer of the loop) of the same worker.
    # The heartbeat never returns while the turn runs: were it waited for in the loop, the
    # turn could not end at all.
    workers = rig.app.extensions["engine"].workers
    real, taken = workers.beat, threading.Event()
    monkeypatch.setattr(workers, "beat", lambda: (taken.wait(), real()))
    rig.upstream.script(StallAfter(6, seconds=30))
    try:
        sid, events = rig.run(QUESTION)
    finally:
        taken.set()
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["stalled"]


def test_a_stall_with_only_pings_is_still_a_stall(rig: Rig) -> None:
    # The stall (20 s) ends in a cut connection: "stalled" says the watchdog (3 s) came first.
    rig.upstream.script(StallAfter(6, seconds=20, pings=True))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["stalled"]


def test_retries_run_out_the_turn_fails_and_completed_rounds_stay(rig: Rig) -> None:
    rig.upstream.script(Normal(), *[ErrorAfter(3)] * 5)
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events, status="failed")
    error = [d for _, t, d in events if t == "turn_error"][-1]
    assert error["code"] == "overloaded_error" and "Gave up after 5 attempts" in error["message"]
    history = stored(rig, sid)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[2]["content"][0]["type"] == "tool_result"


def cut_calls(events: list[Any]) -> list[str]:
    """The tool_use ids whose block the output limit cut."""
    ids = {d["block_id"]: d.get("tool_use_id") for _, t, d in events if t == "block_start"}
    return [ids[d["block_id"]] for _, t, d in events if t == "block_end" and d.get("incomplete")]


def test_a_tool_cut_at_max_tokens_is_answered_not_run_and_the_turn_goes_on(rig: Rig) -> None:
    rig.upstream.script(CutToolAtMaxTokens())
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    (cut,) = cut_calls(events)
    assert cut is not None and rig.executed[cut] == 0
    (result,) = [d for _, t, d in events if t == "tool_result" and d["tool_use_id"] == cut]
    assert result["is_error"] and "cut off at the output token limit" in str(result["content"])
    assert not [d for _, t, d in events if t == "turn_error"]


def test_a_second_cut_ends_the_turn_and_the_next_turn_works(rig: Rig) -> None:
    rig.upstream.script(CutToolAtMaxTokens(), CutToolAtMaxTokens())
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events, status="failed")
    assert rig.executions == 0
    assert [d["code"] for _, t, d in events if t == "turn_error"] == ["max_tokens"]
    assert len(cut_calls(events)) == 2
    sid, events = rig.run("Am I over budget anywhere?", session_id=sid)
    assert_well_formed(events)
    assert events[-1][2]["status"] == "completed"
    # The failed turn's last results and the next question go to the model as one message.
    assert validate_history(rig.upstream.requests[-1]["messages"]) == []


def test_a_tool_runs_once_per_id_even_when_later_calls_fail(rig: Rig) -> None:
    rig.upstream.script(Normal(), ErrorAfter(20), ResetAfter(4), Normal(), ErrorAfter(5))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    tool_ids = {d["tool_use_id"] for _, t, d in events if t == "tool_result"}
    assert rig.executions == len(tool_ids) == 2


@pytest.mark.slow  # a time bound: docs/api.md promises a cancel stops a turn within a second
def test_cancel_during_a_silent_stall_closes_the_upstream_within_a_second(rig: Rig) -> None:
    from services.sessions import create_session

    # The cancel comes long before the watchdog would see the stall.
    assert rig.timings.stall_timeout > 2
    rig.upstream.script(StallAfter(8, seconds=25))
    sid = create_session(rig.db, rig.user_id)["id"]
    turn = rig.turns.start(rig.user_id, sid, QUESTION)
    assert rig.upstream.stalling.wait(PATIENCE)
    started = time.monotonic()
    rig.turns.cancel(turn.turn_id)
    assert rig.turns.wait(turn.turn_id, timeout=5)
    assert time.monotonic() - started < 1.0
    events = rig.turns.peek(turn.turn_id, 0)
    from streaming.wire.protocol import decode_stream

    decoded = decode_stream(events.frames)
    check_clean(rig, sid, decoded, status="cancelled")
    assert not any(t == "message_discarded" for _, t, _ in decoded)


def test_an_invalid_request_is_not_retried(rig: Rig) -> None:
    rig.upstream.script(Status(400, error_type="invalid_request_error"))
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events, status="failed")
    assert len(rig.upstream.requests) == 1


@pytest.mark.slow  # a time bound (the first-token timeout, 6 s here, not the stall's 3 s)
def test_a_slow_start_is_cut_by_the_first_token_timeout(rig: Rig) -> None:
    rig.upstream.script(StallAfter(1, seconds=20))  # message_start, then nothing
    started = time.monotonic()
    sid, events = rig.run(QUESTION)
    elapsed = time.monotonic() - started
    check_clean(rig, sid, events)
    first_token = rig.timings.first_token_timeout
    assert first_token <= elapsed < first_token + 5, elapsed
    assert [d["reason"] for _, t, d in events if t == "message_discarded"] == ["stalled"]


@pytest.mark.slow  # a time bound: docs/api.md promises a cancel stops a turn within a second
def test_cancel_while_waiting_for_response_headers_is_immediate(
    rig: Rig, app_config: dict[str, Any]
) -> None:
    import socket

    from app import create_app
    from services.sessions import create_session

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    silent.settimeout(PATIENCE)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    app = create_app(replace(rig.app.config["SETTINGS"], anthropic_base_url=url))
    turns = app.extensions["turns"]
    try:
        sid = create_session(rig.db, rig.user_id)["id"]
        turn = turns.start(rig.user_id, sid, QUESTION)
        asked, _ = silent.accept()  # the model call is connected and waits for headers
        started = time.monotonic()
        turns.cancel(turn.turn_id)
        assert turns.wait(turn.turn_id, timeout=5)
        assert time.monotonic() - started < 1.0
        asked.close()
    finally:
        app.extensions["engine"].close()
        silent.close()


def test_model_calls_stream_in_the_engines_loop(rig: Rig, monkeypatch: Any) -> None:
    import threading

    from engine.turns.model_calls import ModelCalls

    threads: list[str] = []
    real = ModelCalls._attempt

    async def watched(self: Any, *args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return await real(self, *args)

    monkeypatch.setattr(ModelCalls, "_attempt", watched)
    sid, events = rig.run(QUESTION)
    check_clean(rig, sid, events)
    assert threads and set(threads) == {"engine-loop"}
