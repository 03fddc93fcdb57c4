"""Approvals of side-effect tools: decide, expire, decline, and continue the paused turn.

A turn that calls a side-effect tool stores the call `awaiting_approval` and ends as
`awaiting_approval`, holding nothing. Once every call it waits for is decided, one
transaction marks it `continued` and creates the turn that runs the approved calls (and
reads the declines); that turn starts as the user's limits allow (engine/store/starts.py
`promote`): at once, or `queued` for a place. A decision that would start model work while
the user is over the day's tokens or the rate is refused, writing nothing. A new message
declines what is still pending (engine/store/paused.py): its turn starts with the results,
declines included.
These run inside a caller's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, select, update

from domain.errors import Conflict, NotFound
from engine.limits import RUNNING, Admission
from engine.store import starts
from engine.store.core import table
from engine.store.paused import EXPIRED, USER_DECLINED, declined
from engine.store.turn_rows import Runnable, insert_turn
from models import ChatSession, Message, ToolGrant, ToolRun, Turn, new_id, utcnow
from models.base import iso
from models.chat import (
    APPROVED,
    DECLINED,
    TOOL_APPROVED,
    TOOL_AWAITING,
    TOOL_DONE,
    TURN_AWAITING,
    TURN_CONTINUED,
    TURN_QUEUED,
)
from models.db import Database

_MESSAGES = table(Message)
_TOOL_RUNS = table(ToolRun)
_TURNS = table(Turn)
_SESSIONS = table(ChatSession)
M, R, T = _MESSAGES.c, _TOOL_RUNS.c, _TURNS.c
S = _SESSIONS.c
_GRANTS = table(ToolGrant)
G = _GRANTS.c


@dataclass(frozen=True)
class Decision:
    """A decided approval, the turn that goes on with it, and what started now."""

    run: dict[str, Any]
    continuation: str | None
    started: list[Runnable] = field(default_factory=list)
    changed: bool = False  # False: the same decision was made before


def decide(
    conn: Connection,
    user_id: int,
    turn_id: str,
    tool_use_id: str,
    approved: bool,
    reason: str | None,
    worker_id: str | None,
    admission: Admission,
    count_start: Callable[[], None] | None = None,
    always: bool = False,
) -> Decision:
    """Approve or decline one call of a paused turn; the same decision again changes nothing.

    Approved `always`, the tool's later calls in the session need no approval (a grant).

    The decision that leaves the turn waiting for nothing more starts model work: it is
    refused (LimitExceeded, the transaction rolled back) over the day's tokens, or over the
    rate, which `count_start` counts then.
    """
    owner = select(T.session_id, T.user_id).where(T.id == turn_id)
    turn = conn.execute(owner).first()
    if turn is None or turn.user_id != user_id:
        raise NotFound("turn", turn_id)
    # The user, the session, then the turn: the order a start and a turn's end lock them in.
    admission.lock(conn, user_id)
    conn.execute(select(S.id).where(S.id == turn.session_id).with_for_update())
    conn.execute(owner.with_for_update())
    key = (R.session_id == turn.session_id, R.tool_use_id == tool_use_id)
    run = conn.execute(select(_TOOL_RUNS).where(*key, R.requested_in == turn_id)).first()
    if run is None or run.preview is None:
        raise NotFound("approval request", tool_use_id)
    wanted = APPROVED if approved else DECLINED
    if approved and always:
        grant(conn, turn.session_id, run.name, user_id)
    if run.approval is not None:
        if run.approval != wanted:
            raise Conflict(f"This action was already {run.approval}.", code="already_decided")
        return Decision(run_dict(run), continuation(conn, turn_id))
    if approved:
        values = {"status": TOOL_APPROVED, "approval": wanted, "decided_at": utcnow()}
        values["reason"] = reason
    else:
        values = declined(USER_DECLINED, reason, said=reason)
    values["decided_by"] = user_id
    conn.execute(update(_TOOL_RUNS).where(*key).values(**values))
    if not _pending(conn, turn_id):
        # Model work follows (now, or when the paused turn has ended): the limits say.
        refusal = admission.check(conn, user_id)
        if refusal is not None and refusal.code != RUNNING:
            raise refusal
        if count_start is not None:
            count_start()
    started = maybe_continue(conn, turn_id, worker_id, admission)
    decided = conn.execute(select(_TOOL_RUNS).where(*key)).one()
    return Decision(run_dict(decided), continuation(conn, turn_id), started, changed=True)


def grant(conn: Connection, session_id: str, name: str, user_id: int) -> None:
    """Let `name` run without approval in the session from now on (once, however often)."""
    exists = select(G.id).where(G.session_id == session_id, G.name == name)
    if conn.execute(exists).first() is None:
        conn.execute(
            insert(_GRANTS).values(
                session_id=session_id, name=name, granted_by=user_id, created_at=utcnow()
            )
        )


def expire(
    conn: Connection, turn_id: str, cutoff: datetime, worker_id: str | None, admission: Admission
) -> list[Runnable] | None:
    """Decline the paused turn's requests older than `cutoff`; return the turns that start
    (None: nothing was left to decline)."""
    user_id = conn.scalar(select(T.user_id).where(T.id == turn_id))
    if user_id is None:
        return None
    admission.lock(conn, user_id)
    expired = conn.execute(
        update(_TOOL_RUNS)
        .where(R.requested_in == turn_id, R.status == TOOL_AWAITING, R.created_at < cutoff)
        .values(**declined(EXPIRED, "expired"))
    ).rowcount
    return maybe_continue(conn, turn_id, worker_id, admission) if expired else None


def expired_turns(conn: Connection, cutoff: datetime) -> list[str]:
    """The paused turns with a request older than `cutoff`."""
    rows = conn.scalars(
        select(R.requested_in).where(R.status == TOOL_AWAITING, R.created_at < cutoff).distinct()
    )
    return [turn_id for turn_id in rows if turn_id is not None]


def maybe_continue(
    conn: Connection, turn_id: str, worker_id: str | None, admission: Admission
) -> list[Runnable]:
    """Once a paused turn waits for nothing more, create the turn that goes on with it.

    It is queued ahead of the session's waiting messages and started as the user's limits
    allow (`starts.promote`); return what started.
    """
    paused = conn.execute(
        select(T.session_id, T.user_id, T.question_id, T.status).where(T.id == turn_id)
    ).first()
    if paused is None or paused.status != TURN_AWAITING or _pending(conn, turn_id):
        return []
    following = new_id("turn")
    insert_turn(
        conn,
        following,
        paused.session_id,
        paused.user_id,
        TURN_QUEUED,
        None,
        paused.question_id,
        continues=turn_id,
    )
    starts.go_first(conn, paused.session_id, following)
    conn.execute(update(_TURNS).where(T.id == turn_id).values(status=TURN_CONTINUED))
    return starts.promote(conn, paused.user_id, worker_id, admission)


def pending(conn: Connection, session_id: str) -> list[dict[str, Any]]:
    """The session's calls waiting for a decision, oldest first."""
    rows = conn.execute(
        select(_TOOL_RUNS)
        .where(R.session_id == session_id, R.status == TOOL_AWAITING)
        .order_by(R.created_at, R.id)
    ).all()
    return [run_dict(r) for r in rows]


def continuation(conn: Connection, turn_id: str) -> str | None:
    """The turn that went on from a paused one, if any."""
    return conn.scalar(select(T.id).where(T.continues == turn_id))


def run_dict(run: Any) -> dict[str, Any]:
    """The API form of a tool run that needs (or needed) approval."""
    return {
        "turn_id": run.requested_in,
        "tool_use_id": run.tool_use_id,
        "name": run.name,
        "input": run.input,
        "preview": run.preview,
        "status": run.status,
        "approval": run.approval,
        "decided_by": run.decided_by,
        "decided_at": iso(run.decided_at),
        "reason": run.reason,
        "result": run.result if run.status == TOOL_DONE else None,
        "is_error": run.is_error,
        "requested_at": iso(run.created_at),
        "finished_at": iso(run.finished_at),
    }


def _pending(conn: Connection, turn_id: str) -> bool:
    waiting = select(R.id).where(R.requested_in == turn_id, R.status == TOOL_AWAITING)
    return conn.execute(waiting.limit(1)).first() is not None


class ApprovalStore:
    """Decisions and expiries, each in its own transaction."""

    def __init__(self, db: Database, admission: Admission | None = None) -> None:
        self.db = db
        self.admission = admission or Admission()

    def decide(
        self,
        user_id: int,
        turn_id: str,
        tool_use_id: str,
        approved: bool,
        reason: str | None,
        worker_id: str | None,
        count_start: Callable[[], None] | None = None,
        always: bool = False,
    ) -> Decision:
        """Record a decision (see `decide`)."""
        with self.db.begin() as conn:
            return decide(
                conn,
                user_id,
                turn_id,
                tool_use_id,
                approved,
                reason,
                worker_id,
                self.admission,
                count_start,
                always,
            )

    def expire(self, older_than: float, worker_id: str | None) -> dict[str, list[Runnable]]:
        """Decline requests older than `older_than` seconds, one paused turn per transaction;
        return each paused turn whose requests expired, with the turns that start."""
        cutoff = utcnow() - timedelta(seconds=older_than)
        with self.db.begin_read() as conn:
            paused = expired_turns(conn, cutoff)
        out: dict[str, list[Runnable]] = {}
        for turn_id in paused:
            with self.db.begin() as conn:
                started = expire(conn, turn_id, cutoff, worker_id, self.admission)
            if started is not None:
                out[turn_id] = started
        return out

    def of_turn(self, user_id: int, turn_id: str) -> list[dict[str, Any]]:
        """The approvals a turn asked for, in the order it asked."""
        with self.db.begin_read() as conn:
            owner = conn.scalar(select(T.user_id).where(T.id == turn_id))
            if owner != user_id:
                raise NotFound("turn", turn_id)
            rows = conn.execute(
                select(_TOOL_RUNS).where(R.requested_in == turn_id).order_by(R.id)
            ).all()
        # Only calls of side-effect tools carry a preview (JSON null is not SQL NULL).
        return [run_dict(r) for r in rows if r.preview is not None]

    def actions(self, user_id: int, limit: int) -> list[dict[str, Any]]:
        """The user's approved actions that ran, newest first."""
        with self.db.begin_read() as conn:
            rows = conn.execute(
                select(_TOOL_RUNS)
                .join(_TURNS, T.id == R.turn_id)
                .where(T.user_id == user_id, R.approval == APPROVED, R.status == TOOL_DONE)
                .order_by(R.finished_at.desc(), R.id.desc())
                .limit(limit)
            ).all()
        return [run_dict(r) for r in rows]
