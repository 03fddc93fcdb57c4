"""Message rows and tool runs of a turn: fenced writes, and the history the model sees.

Every write may be run twice (engine/store/durable.py retries one whose connection failed,
and its commit may have happened): a second insert finds its row, a second claim finds
its own lease, updates set the same values again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Insert, bindparam, func, insert, not_, select, update
from sqlalchemy.orm import Session

from engine.store import tree
from engine.store.core import rowcount, table
from engine.store.fence import HELD, Lease, held_params, hold
from models import Message, ToolGrant, ToolRun, utcnow
from models.chat import (
    DECLINED,
    MESSAGE_FINISHED,
    TOOL_APPROVED,
    TOOL_AWAITING,
    TOOL_DONE,
    TOOL_RUNNING,
)
from models.db import Database
from models.searchable import search_text
from streaming.messages.history import repair_history

_MESSAGES = table(Message)
_TOOL_RUNS = table(ToolRun)
M, R = _MESSAGES.c, _TOOL_RUNS.c
# Statements are built once (with bind parameters): building one costs more CPU than
# running it on SQLite. The SET clause of an update comes from the values passed. Every
# write carries the lease test (HELD, binding _turn and _lease) in its own WHERE clause.
NEXT_POSITION = (
    select(func.coalesce(func.max(M.position) + 1, 0))
    .where(M.session_id == bindparam("_session"))
    .scalar_subquery()
)
_UPDATE = update(_MESSAGES).where(M.id == bindparam("_id"), M.turn_id == bindparam("_turn"), HELD)
_DISCARD = (
    update(_MESSAGES)
    .where(M.turn_id == bindparam("_turn"), M.status == "streaming", HELD)
    .values(status="discarded")
    .returning(M.id, M.parent_id)
)
_DISCARD_ONE = (
    update(_MESSAGES)
    .where(M.id == bindparam("_id"), M.turn_id == bindparam("_turn"), HELD)
    .values(status="discarded")
    .returning(M.parent_id)
)
_RUN_KEY = (R.session_id == bindparam("_session"), R.tool_use_id == bindparam("_tool_use"))
RUN_COLUMNS = (
    R.tool_use_id,
    R.name,
    R.status,
    R.result,
    R.is_error,
    R.preview,
    R.approval,
    R.reason,
)
_RUN = select(*RUN_COLUMNS, R.turn_id, R.lease).where(*_RUN_KEY)
# Only a run still `running`: a side-effect tool that stored its result with its change
# (`applied`) keeps it, even if its caller gave up on it (timed out, cancelled) meanwhile.
_FINISH = (
    update(_TOOL_RUNS).where(*_RUN_KEY, R.status == TOOL_RUNNING, HELD).returning(*RUN_COLUMNS)
)
# An approved run is claimed by the turn that continues its paused one.
_CLAIM_APPROVED = (
    update(_TOOL_RUNS)
    .where(*_RUN_KEY, R.status == TOOL_APPROVED, HELD)
    .values(status=TOOL_RUNNING, turn_id=bindparam("_turn"), lease=bindparam("_lease"))
)
# A side-effect tool's run found `running` after a takeover never made its change: the change
# and the run's result commit together (`applied`), so the new holder claims it and runs it.
_RECLAIM = (
    update(_TOOL_RUNS)
    .where(*_RUN_KEY, R.status == TOOL_RUNNING, HELD)
    .values(turn_id=bindparam("_turn"), lease=bindparam("_lease"))
)
# Stored in the tool's own write transaction, by the holder of the run's claim only.
_APPLIED = (
    update(_TOOL_RUNS)
    .where(
        *_RUN_KEY,
        R.status == TOOL_RUNNING,
        R.turn_id == bindparam("_turn"),
        R.lease == bindparam("_lease"),
        HELD,
    )
    .values(status=TOOL_DONE, is_error=False)
)
_CLAIM_COLUMNS = (
    "session_id",
    "tool_use_id",
    "turn_id",
    "requested_in",
    "lease",
    "name",
    "input",
    "result",
    "status",
    "preview",
)
_CLAIM = (
    insert(_TOOL_RUNS)
    .from_select(
        _CLAIM_COLUMNS,
        select(*(bindparam(c, type_=R[c].type) for c in _CLAIM_COLUMNS)).where(
            HELD, not_(select(R.tool_use_id).where(*_RUN_KEY).exists())
        ),
    )
    .returning(R.id)
)
_G = table(ToolGrant).c
# The user's "always for this session" for a tool (engine/store/approvals.py `grant`).
_GRANTED = select(_G.id).where(
    _G.session_id == bindparam("_session"), _G.name == bindparam("_name")
)
_ADDS: dict[tuple[str, ...], Insert] = {}


def _add(columns: tuple[str, ...]) -> Insert:
    """The fenced insert of a message with these columns (built once per set of columns)."""
    statement = _ADDS.get(columns)
    if statement is None:
        values = [bindparam(c, type_=M[c].type) for c in columns]
        absent = not_(select(M.id).where(M.id == bindparam("id")).exists())
        statement = (
            insert(_MESSAGES)
            .from_select((*columns, "position"), select(*values, NEXT_POSITION).where(HELD, absent))
            .returning(M.id)
        )
        _ADDS[columns] = statement
    return statement


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A tool run as stored: claimed (`running`), awaiting approval, or done with its result."""

    tool_use_id: str
    name: str
    status: str
    result: list[dict[str, Any]]
    is_error: bool
    preview: dict[str, Any] | None = None
    approval: str | None = None
    reason: str | None = None

    def block(self) -> dict[str, Any]:
        """The tool_result block that answers this run.

        A declined call's block also keeps `declined` (`{"reason"}`, what people read instead
        of the model's instruction); it is never sent back to the model
        (streaming/messages/sent.py).
        """
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.result,
        }
        if self.is_error:
            block["is_error"] = True
        if self.approval == DECLINED and self.status == TOOL_DONE:
            block["declined"] = {"reason": self.reason}
        return block


class MessageStore:
    """Every message and tool-run write of a turn, fenced by its lease, one transaction each."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_message(
        self,
        lease: Lease,
        message_id: str,
        role: str,
        content: list[dict[str, Any]],
        status: str,
        **fields: Any,
    ) -> None:
        """Add a message at the end of the active branch (once, however often called)."""
        row: dict[str, object] = {
            "id": message_id,
            "session_id": lease.session_id,
            "turn_id": lease.turn_id,
        }
        row.update(role=role, content=content, status=status, **fields)
        if status in MESSAGE_FINISHED:
            row["search_text"] = search_text(content)
        with self.db.begin() as conn:
            # Locked before the position (max + 1) is read, as a start locks it: a message
            # queued on the session meanwhile must not get the same position.
            row["parent_id"] = tree.lock_leaf(conn, lease.session_id)
            added = conn.execute(
                _add(tuple(row)),
                {**row, "_session": lease.session_id, **held_params(lease)},
            ).first()
            if added is None:
                hold(conn, lease)
            else:
                tree.set_leaf(conn, lease.session_id, message_id)

    def update_message(self, lease: Lease, message_id: str, **fields: Any) -> None:
        """Overwrite some columns of one of the turn's messages.

        A message's text becomes searchable as it ends (a finished `status` with its
        `content`), not at each block: the work stays once per message.
        """
        if fields.get("status") in MESSAGE_FINISHED and "content" in fields:
            fields["search_text"] = search_text(fields["content"])
        with self.db.begin() as conn:
            params = {"_id": message_id, **held_params(lease), **fields}
            if not conn.execute(_UPDATE, params).rowcount:
                hold(conn, lease)

    def discard(self, lease: Lease, message_id: str, usage: dict[str, Any] | None) -> None:
        """Drop a failed attempt: the branch ends at its parent again."""
        with self.db.begin() as conn:
            params = {"_id": message_id, **held_params(lease), "usage": usage}
            parent = conn.execute(_DISCARD_ONE, params).first()
            if parent is None:
                hold(conn, lease)
            else:
                tree.move_leaf(conn, lease.session_id, message_id, parent.parent_id)

    def discard_streaming(self, lease: Lease) -> list[str]:
        """Mark the turn's rows still `streaming` as discarded; return their ids."""
        with self.db.begin() as conn:
            rows = conn.execute(_DISCARD, held_params(lease)).all()
            if not rows:
                hold(conn, lease)
            for row in rows:
                tree.move_leaf(conn, lease.session_id, row.id, row.parent_id)
        return [row.id for row in rows]

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        """Return the active branch's finished messages, in order (see tree.conversation)."""
        with self.db.begin_read() as conn:
            return tree.conversation(conn, session_id)

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Return the conversation repaired so the API accepts it (e.g. after a crash)."""
        return repair_history(self.conversation(session_id))

    def turn_messages(self, turn_id: str) -> list[Message]:
        """Return every row of a turn, in order (resume compares them with what was sent)."""
        with self.db.read() as s:
            return list(
                s.scalars(
                    select(Message).where(Message.turn_id == turn_id).order_by(Message.position)
                )
            )

    def stored_run(self, session_id: str, tool_use_id: str) -> StoredRun | None:
        """The stored run of a tool_use id, if any."""
        with self.db.begin_read() as conn:
            row = conn.execute(_RUN, {"_session": session_id, "_tool_use": tool_use_id}).first()
        return None if row is None else StoredRun(*row[:8])

    def granted(self, session_id: str, name: str) -> bool:
        """Whether the user let `name` run without approval in this session ("always")."""
        with self.db.begin_read() as conn:
            return (
                conn.execute(_GRANTED, {"_session": session_id, "_name": name}).first() is not None
            )

    def claim_tool(
        self,
        lease: Lease,
        tool_use_id: str,
        name: str,
        tool_input: dict[str, Any],
        preview: dict[str, Any] | None = None,
        transactional: bool = False,
    ) -> StoredRun | None:
        """Claim a tool_use id before running it; return its existing run if one was claimed.

        None means "claimed now: run it". With a `preview` the call needs the user's approval
        first: it is stored `awaiting_approval` and returned. An `approved` run is claimed.
        A run found `running` was started by a worker that died or was fenced out. A
        `transactional` tool's change commits with its result (`applied`), so it never made
        it and is claimed again; any other tool may or may not have run, so it is returned
        and never run again. One found `running` under this very lease is this call's own
        claim, retried.
        """
        key = {"_session": lease.session_id, "_tool_use": tool_use_id}
        status = TOOL_RUNNING if preview is None else TOOL_AWAITING
        with self.db.begin() as conn:
            claimed = conn.execute(
                _CLAIM,
                {
                    **key,
                    **held_params(lease),
                    "session_id": lease.session_id,
                    "tool_use_id": tool_use_id,
                    "turn_id": lease.turn_id,
                    "requested_in": lease.turn_id,
                    "lease": lease.number,
                    "name": name,
                    "input": tool_input,
                    "result": [],
                    "status": status,
                    "preview": preview,
                },
            ).first()
            if claimed is not None:
                return None if preview is None else StoredRun(*_fresh(tool_use_id, name, preview))
            hold(conn, lease)
            if conn.execute(_CLAIM_APPROVED, {**key, **held_params(lease)}).rowcount:
                return None
            *run, turn_id, claimed_by = conn.execute(_RUN, key).one()
            if run[2] == TOOL_RUNNING and (turn_id, claimed_by) == (lease.turn_id, lease.number):
                return None
            params = {**key, **held_params(lease)}
            if run[2] == TOOL_RUNNING and transactional and conn.execute(_RECLAIM, params).rowcount:
                return None
            return StoredRun(*run)

    def applied(
        self,
        lease: Lease,
        tool_use_id: str,
        s: Session,
        result: list[dict[str, Any]],
        started: float | None = None,
    ) -> bool:
        """In a tool's write transaction `s`: store its result with its change.

        `started` is the run's `time.monotonic()` start, for its duration. False if the claim
        is no longer this lease's: the caller must roll the change back.
        """
        params = {"_session": lease.session_id, "_tool_use": tool_use_id, **held_params(lease)}
        took = 0 if started is None else int((time.monotonic() - started) * 1000)
        done = s.execute(
            _APPLIED,
            {**params, "result": result, "finished_at": utcnow(), "duration_ms": took},
        )
        return bool(rowcount(done))

    def finish_tool(
        self,
        lease: Lease,
        tool_use_id: str,
        result: list[dict[str, Any]],
        is_error: bool,
        duration_ms: int,
    ) -> StoredRun:
        """Store a claimed tool's result before it is sent anywhere; return the run."""
        key = {"_session": lease.session_id, "_tool_use": tool_use_id}
        with self.db.begin() as conn:
            done = conn.execute(
                _FINISH,
                {
                    **key,
                    **held_params(lease),
                    "result": result,
                    "is_error": is_error,
                    "duration_ms": duration_ms,
                    "status": TOOL_DONE,
                    "finished_at": utcnow(),
                },
            ).first()
            if done is None:
                hold(conn, lease)
                gone = conn.execute(_RUN, key).one()  # a claim that is gone: NoResultFound
                return StoredRun(*gone[:8])
            return StoredRun(*done)


def _fresh(tool_use_id: str, name: str, preview: dict[str, Any]) -> tuple[Any, ...]:
    return (tool_use_id, name, TOOL_AWAITING, [], False, preview)
