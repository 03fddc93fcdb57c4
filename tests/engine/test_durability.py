"""Regressions from trying the engine from outside: failed status writes, reused tool ids,
fenced runners."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx2
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from engine.store.messages import MessageStore
from models import Message, Turn
from streaming.messages.history import validate_history
from streaming.wire.protocol import decode_stream
from tests.engine.streams import answer, message_start, text_block, tool_use
from tests.engine.toys import CALLS
from tests.helpers import assert_well_formed, text_of


def test_a_failed_discard_write_never_leaks_the_attempt_into_history(
    run_turn: Any, monkeypatch: Any
) -> None:
    real, failed = MessageStore.discard, []

    def flaky(self: Any, lease: Any, message_id: str, usage: Any) -> None:
        if not failed:
            failed.append(message_id)
            raise OperationalError("UPDATE", {}, sqlite3.OperationalError("database is locked"))
        real(self, lease, message_id, usage)

    monkeypatch.setattr(MessageStore, "discard", flaky)
    # The first attempt stores a whole text block, then the stream breaks.
    broken = [
        message_start("msg_x"),
        *text_block(0, "Stale words."),
        httpx2.RemoteProtocolError("peer reset"),
    ]
    run = run_turn([broken, answer("Fresh answer.")])
    assert run.status == "completed" and failed
    sent = str(run.model.requests[1])
    assert "Stale words." not in sent, "a row left streaming reached the model"
    assert_well_formed(run.events)
    assert text_of(run.events) == "Fresh answer."
    with run.store.db.read() as s:
        statuses = dict(s.execute(select(Message.id, Message.status)).all())
    assert statuses[failed[0]] == "discarded", "the failed write is retried"
    assert "streaming" not in statuses.values()


def test_an_upstream_that_numbers_tool_ids_per_message_gets_a_new_call_each_time(
    run_turn: Any,
) -> None:
    first = run_turn(
        [tool_use("toolu_0", "get_weather", ['{"location": "Nice"}']), answer("Nice: 68.")]
    )
    second = run_turn(
        [tool_use("toolu_0", "get_weather", ['{"location": "Oslo"}']), answer("Oslo: 68.")],
        session_id=first.session_id,
        question="And Oslo?",
    )
    assert second.status == "completed"
    assert [c[1]["location"] for c in CALLS] == ["Nice", "Oslo"]
    sent = second.model.requests[-1]
    assert validate_history(sent) == []
    ids = [b["id"] for m in sent if m["role"] == "assistant" for b in m["content"] if "id" in b]
    assert ids == ["toolu_0", "toolu_0_2"]
    result = second.of("tool_result")[0]
    assert result["tool_use_id"] == "toolu_0_2" and "Oslo" in str(result["content"])


def test_a_runner_fenced_out_mid_stream_stops_without_another_word(run_turn: Any, db: Any) -> None:
    left: list[bytes] = []

    def taken_over(turn: Any) -> None:
        # Another worker takes the turn over as soon as the first block is stored.
        real, events = turn.deps.messages.update_message, turn.deps.events

        def then_fenced(lease: Any, message_id: str, **fields: Any) -> None:
            real(lease, message_id, **fields)
            with db.transaction() as s:
                s.execute(
                    update(Turn).where(Turn.id == lease.turn_id).values(lease=lease.number + 1)
                )

        async def release(turn_id: str, lease: int) -> None:
            left.append((await events.read(turn_id, 0, 0)).frames)  # what it wrote, leaving
            await type(events).release(events, turn_id, lease)

        turn.deps.messages.update_message = then_fenced
        events.release = release

    stream = [message_start("m"), *text_block(0, "one"), *text_block(1, "two"), *answer("x")[-2:]]
    run = run_turn([stream], before=taken_over)
    assert run.status == "fenced"
    [frames] = left
    kinds = [t for _, t, _ in decode_stream(frames)]
    # Its next write (the second block's end) found the lease gone: nothing after that.
    first, second = ["block_start", "block_delta", "block_end"], ["block_start", "block_delta"]
    assert kinds == ["turn_start", "message_start", *first, *second]
    with db.read() as s:
        turn = s.scalars(select(Turn)).one()
        assert turn.status == "running"  # the new holder ends it, not this runner


def test_a_turn_taken_over_after_its_tool_call_was_stored_runs_the_tool_and_stays_valid(
    db: Any, user: tuple[int, str]
) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from engine.events.replay import message_events
    from engine.store.turns import TurnStore
    from engine.store.workers import WorkerRegistry
    from engine.turns.turn import Turn
    from services.sessions import create_session
    from tests.engine.conftest import make_deps, run_to_end
    from tests.helpers import ScriptedModel

    turns, messages = TurnStore(db), MessageStore(db)
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    new, lease, _ = turns.start_turn(user[0], sid, "Weather in Lima?", dead.worker_id)
    # The dead worker stored its tool call and died before any tool ran or any event left.
    call = {
        "type": "tool_use",
        "id": "toolu_lima",
        "name": "get_weather",
        "input": {"location": "Lima"},
    }
    messages.add_message(lease, "msg_call", "assistant", [call], "complete", stop_reason="tool_use")
    dead.retire()
    alive = WorkerRegistry(db)
    alive.register()
    [orphan] = turns.take_orphans(alive.worker_id, stale_after=30, limit=5)
    model = ScriptedModel([answer("Lima is mild.")])
    deps = make_deps(db, ThreadPoolExecutor(2), model, max_rounds=5)
    CALLS.clear()
    turn = Turn(deps, orphan.turn, user[0], orphan.lease, orphan.takeovers)
    status, events = asyncio.run(run_to_end(turn, deps, new))
    assert status == "completed"
    assert CALLS == [("get_weather", {"location": "Lima", "units": "f"})]
    assert validate_history(messages.conversation(sid), expect_user_last=False) == []
    assert_well_formed(events)
    with db.read() as s:
        stored = s.get(Message, "msg_call")
    # Nothing of the turn reached a log, so it starts the next epoch, reset, from its rows.
    assert events[0][1:] == ("turn_start", {**events[0][2], "reset": True})
    assert events[1 : 1 + len(message_events(stored))] == [
        (events[0][0] + i + 1, t, d) for i, (t, d) in enumerate(message_events(stored))
    ]
