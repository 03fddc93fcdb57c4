"""Regressions from trying the engine from outside: failed status writes, reused tool ids,
fenced runners."""

from __future__ import annotations

from typing import Any

import httpx2
from sqlalchemy import select, update

from engine.store.messages import MessageStore
from models import Message, Turn
from streaming.history import validate_history
from streaming.protocol import decode_stream
from tests.engine.streams import answer, message_start, text_block, tool_use
from tests.engine.toys import CALLS
from tests.helpers import assert_well_formed, text_of


def test_a_failed_discard_write_never_leaks_the_attempt_into_history(
    run_turn: Any, monkeypatch: Any
) -> None:
    real, failed = MessageStore.update_message, []

    def flaky(self: Any, lease: Any, message_id: str, **fields: Any) -> None:
        if fields.get("status") == "discarded" and not failed:
            failed.append(message_id)
            raise RuntimeError("database is locked")
        real(self, lease, message_id, **fields)

    monkeypatch.setattr(MessageStore, "update_message", flaky)
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
    assert statuses[failed[0]] == "discarded", "the turn's end settles what it left streaming"
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

    def taken_over(runner: Any) -> None:
        # Another worker takes the turn over as soon as the first block is stored.
        real, events = runner.deps.messages.update_message, runner.deps.events

        def then_fenced(lease: Any, message_id: str, **fields: Any) -> None:
            real(lease, message_id, **fields)
            with db.transaction() as s:
                s.execute(
                    update(Turn).where(Turn.id == lease.turn_id).values(lease=lease.number + 1)
                )

        def release(turn_id: str, lease: int) -> None:
            left.append(events.read(turn_id, 0, 0).frames)  # what it wrote before leaving
            type(events).release(events, turn_id, lease)

        runner.deps.messages.update_message = then_fenced
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
    from concurrent.futures import ThreadPoolExecutor

    from engine.events.memory import MemoryEventLog
    from engine.events.replay import message_events
    from engine.store.turns import TurnStore
    from engine.store.workers import WorkerRegistry
    from engine.turns.runner import TurnDeps, TurnRunner
    from engine.turns.tool_exec import ToolExecutor
    from engine.upstream.retry import RetryPolicy
    from services.sessions import create_session
    from tests.engine.toys import TOY_TOOLS
    from tests.helpers import ScriptedModel

    turns, messages, log = TurnStore(db), MessageStore(db), MemoryEventLog()
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    new, lease = turns.start_turn(user[0], sid, "Weather in Lima?", dead.worker_id)
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
    deps = TurnDeps(
        turns=turns,
        messages=messages,
        events=log,
        model=model,  # type: ignore[arg-type]
        tools=ToolExecutor(TOY_TOOLS, messages, db, ThreadPoolExecutor(2), 5.0),
        tool_definitions=TOY_TOOLS.definitions(),
        max_rounds=5,
        retry=RetryPolicy(base=0.001),
    )
    CALLS.clear()
    status = TurnRunner(deps, orphan.turn, user[0], orphan.lease, orphan.takeovers).run()
    assert status == "completed"
    assert CALLS == [("get_weather", {"location": "Lima", "units": "f"})]
    assert validate_history(messages.conversation(sid), expect_user_last=False) == []
    events = decode_stream(log.read(new.turn_id, 0, 0).frames)
    assert_well_formed(events)
    with db.read() as s:
        stored = s.get(Message, "msg_call")
    assert events[1 : 1 + len(message_events(stored))] == [
        (i + 2, t, d) for i, (t, d) in enumerate(message_events(stored))
    ]
