"""A paused turn's pending calls answered: declined by a new message, or resumed once decided.

The results of a paused answer's calls are stored under it as the next turn's message, so the
turn that goes on (or the new message's turn) starts from them. These run inside a caller's
transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, insert, select, update

from engine.store import tree
from engine.store.core import table
from engine.store.messages import NEXT_POSITION, RUN_COLUMNS, StoredRun
from models import Message, ToolRun, Turn, new_id, utcnow
from models.chat import (
    DECLINED,
    MESSAGE_FINISHED,
    TOOL_APPROVED,
    TOOL_AWAITING,
    TOOL_DONE,
    TURN_AWAITING,
    TURN_CONTINUED,
)

_MESSAGES = table(Message)
_TOOL_RUNS = table(ToolRun)
_TURNS = table(Turn)
M, R, T = _MESSAGES.c, _TOOL_RUNS.c, _TURNS.c
USER_DECLINED = "The user declined this action, so it was not taken."
SUPERSEDED = "The user sent a new message instead of approving this action; it was not taken."
EXPIRED = "Nobody approved this action in time, so it was not taken."
NEW = "new message"  # the reason stored for a call a new message declined


def denial(text: str, reason: str | None) -> list[dict[str, Any]]:
    """The result the model reads for an action not taken."""
    said = f" The user said: {reason}" if reason else ""
    return [{"type": "text", "text": f"{text}{said} Do not take it unless the user asks again."}]


def declined(text: str, reason: str | None, said: str | None = None) -> dict[str, Any]:
    """The values of a call declined (by the user, a new message or expiry): done, not taken."""
    return {
        "status": TOOL_DONE,
        "approval": DECLINED,
        "decided_at": utcnow(),
        "reason": reason,
        "result": denial(text, said),
        "is_error": True,
    }


def resume_branch(conn: Connection, session_id: str, paused_id: str) -> None:
    """Make the paused turn's last answer (whose calls were decided) the active leaf."""
    asked = _asking(conn, paused_id)
    if asked is not None:
        tree.set_leaf(conn, session_id, asked.id)


def decline_pending(conn: Connection, session_id: str, turn_id: str) -> None:
    """Decline what the session's paused turns wait for; store their results in `turn_id`."""
    paused = conn.scalars(
        select(T.id).where(T.session_id == session_id, T.status == TURN_AWAITING)
    ).all()
    for paused_id in paused:
        conn.execute(
            update(_TOOL_RUNS)
            .where(
                R.session_id == session_id,
                R.requested_in == paused_id,
                # An approved call waiting for the others to be decided never ran either.
                R.status.in_((TOOL_AWAITING, TOOL_APPROVED)),
            )
            .values(**declined(SUPERSEDED, NEW))
        )
        _answer(conn, session_id, paused_id, turn_id)
        conn.execute(update(_TURNS).where(T.id == paused_id).values(status=TURN_CONTINUED))


def _asking(conn: Connection, paused_id: str) -> Any:
    """The paused turn's last answer: the one whose tool calls wait for results."""
    return conn.execute(
        select(M.id, M.content)
        .where(M.turn_id == paused_id, M.role == "assistant", M.status.in_(MESSAGE_FINISHED))
        .order_by(M.position.desc())
        .limit(1)
    ).first()


def _answer(conn: Connection, session_id: str, paused_id: str, turn_id: str) -> None:
    """Store the results of a paused answer's calls under it, as `turn_id`'s message."""
    asked = _asking(conn, paused_id)
    if asked is None:
        return
    ids = [b["id"] for b in asked.content if b.get("type") == "tool_use"]
    runs = {
        r.tool_use_id: StoredRun(*r)
        for r in conn.execute(
            select(*RUN_COLUMNS).where(R.session_id == session_id, R.tool_use_id.in_(ids))
        )
    }
    not_run = StoredRun("", "", TOOL_DONE, denial(SUPERSEDED, None), True, None, DECLINED, NEW)
    blocks = [
        (runs[i] if i in runs and runs[i].status == TOOL_DONE else not_run).block()
        | {"tool_use_id": i}
        for i in ids
    ]
    message_id = new_id("msg")
    conn.execute(
        insert(_MESSAGES).values(position=NEXT_POSITION),
        {
            "id": message_id,
            "session_id": session_id,
            "turn_id": turn_id,
            "parent_id": asked.id,
            "role": "user",
            "status": "complete",
            "content": blocks,
            "_session": session_id,
        },
    )
    tree.move_leaf(conn, session_id, asked.id, message_id)
