"""A write tool's change commits with its result: an outage or a lost commit never makes it
twice, and never leaves the model a "may or may not have run"; a takeover never asks the
user twice."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from marshmallow import Schema, fields
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from config import Timings
from engine.events.replay import message_events
from engine.store.durable import Store
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from engine.turns.tools import ToolCall, ToolRunner
from engine.turns.turn import Turn
from models import Message, ToolRun
from models.db import Database
from services.sessions import create_session
from streaming.wire import protocol as P
from tests.engine.conftest import make_deps, run_to_end
from tests.helpers import ScriptedModel, assert_well_formed
from tools.registry import Tool, ToolContext, ToolRegistry

SCALE = 0.02
WRITING = 0.03  # seconds a note takes to write: its run's duration is at least that


class NoteInput(Schema):
    text = fields.String(required=True)


class Notebook:
    """A write tool that commits `text` with its result; the first tries can fail."""

    def __init__(self, failures: list[str]) -> None:
        self.failures = failures  # per try: "before" the commit, "after" it (reply lost), ""
        self.tries = 0
        self.committed: list[str] = []

    def write(self, ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
        failure = self.failures[self.tries] if self.tries < len(self.failures) else ""
        self.tries += 1
        if failure == "before":
            raise OperationalError("UPDATE", {}, Exception("server closed the connection"))
        out = {"noted": data["text"], "try": self.tries}
        time.sleep(WRITING)  # the note takes this long to write: the scenario
        with ctx.db.transaction() as s:
            ctx.applied(s, out)
        self.committed.append(data["text"])
        if failure == "after":
            raise OperationalError("COMMIT", {}, Exception("connection lost after commit"))
        return out


def approved_call(db: Database, user: tuple[int, str]) -> Any:
    """A turn whose `note` call the user approved, and its lease."""
    turns, messages = TurnStore(db), MessageStore(db)
    sid = create_session(db, user[0])["id"]
    _, lease, _ = turns.start_turn(user[0], sid, "note it")
    preview = {"summary": "Write a note", "changes": [], "target": {}}
    messages.claim_tool(lease, "toolu_n", "note", {"text": "hi"}, preview)
    with db.transaction() as s:
        s.execute(update(ToolRun).values(status="approved", approval="approved"))
    return lease


@pytest.mark.parametrize(
    ("failures", "tries"),
    [([], 1), (["before"], 2), (["after"], 1), (["before", "after"], 2)],
    ids=["clean", "failed-before-commit", "reply-lost-after-commit", "both"],
)
def test_a_write_tool_is_made_once_through_an_outage_and_answered_with_its_result(
    db: Database, user: tuple[int, str], failures: list[str], tries: int
) -> None:
    book = Notebook(failures)
    tool = Tool("note", "Write a note.", NoteInput, book.write, True, lambda ctx, data: {})
    timings = Timings().scaled(SCALE)
    pool = ThreadPoolExecutor(2)
    messages = MessageStore(db)
    runner = ToolRunner(ToolRegistry([tool]), messages, db, pool, Store(pool, timings), timings)
    lease = approved_call(db, user)
    call = ToolCall("toolu_n", "note", {"text": "hi"})
    [run] = asyncio.run(runner.run_all(lease, user[0], [call], lambda: False))
    pool.shutdown()
    assert book.committed == ["hi"] and book.tries == tries
    result = [{"type": "text", "text": f'{{"noted":"hi","try":{tries}}}'}]
    assert (run.status, run.is_error, run.result) == ("done", False, result)
    with db.read() as s:
        took = s.scalar(select(ToolRun.duration_ms).where(ToolRun.tool_use_id == "toolu_n"))
    assert took >= WRITING * 1000, "stored with its change, timed from the run's start"


def test_a_turn_taken_over_after_it_asked_for_approval_asks_once(
    db: Database, user: tuple[int, str]
) -> None:
    """The dead worker sent approval_requested and died before the turn paused: the new
    holder pauses it without asking again (a client deciding twice could decide both ways)."""
    turns, messages = TurnStore(db), MessageStore(db)
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    new, lease, _ = turns.start_turn(user[0], sid, "note it", dead.worker_id)
    call = {"type": "tool_use", "id": "toolu_n", "name": "note", "input": {"text": "hi"}}
    messages.add_message(lease, "msg_call", "assistant", [call], "complete", stop_reason="tool_use")
    preview = {"summary": "Write a note", "changes": [], "target": {}}
    messages.claim_tool(lease, "toolu_n", "note", {"text": "hi"}, preview)
    book = Notebook([])
    tool = Tool("note", "Write a note.", NoteInput, book.write, True, lambda ctx, data: {})
    registry = ToolRegistry([tool])
    pool = ThreadPoolExecutor(2)
    deps = make_deps(db, pool, ScriptedModel([]))
    runner = ToolRunner(registry, messages, db, pool, deps.store, deps.timings)
    deps = replace(deps, tools=runner, tool_definitions=registry.definitions())
    deps.events.open(new.turn_id)
    start = {"turn_id": new.turn_id, "session_id": sid, "user_message_id": new.user_message_id}
    deps.events.append(new.turn_id, P.TURN_START, start)
    with db.read() as s:
        for kind, data in message_events(s.get(Message, "msg_call")):
            deps.events.append(new.turn_id, kind, data)
    asked = {"turn_id": new.turn_id, "tool_use_id": "toolu_n", "name": "note", "input": {}}
    deps.events.append(new.turn_id, P.APPROVAL_REQUESTED, {**asked, "preview": preview})
    dead.retire()
    alive = WorkerRegistry(db)
    alive.register()
    [orphan] = turns.take_orphans(alive.worker_id, stale_after=30, limit=5)
    turn = Turn(deps, orphan.turn, user[0], orphan.lease, orphan.takeovers)
    status, events = asyncio.run(run_to_end(turn, deps, new))
    pool.shutdown()
    assert status == "awaiting_approval" and book.tries == 0
    assert [d["tool_use_id"] for _, t, d in events if t == P.APPROVAL_REQUESTED] == ["toolu_n"]
    assert_well_formed(events)
