"""A session's messages as a tree: its active branch, and where the branch goes next.

Every message has a parent (None: a first message); the session's active leaf ends the
branch that is shown and sent to the model. These run inside a caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, bindparam, literal, or_, select, update

from engine.store.core import table
from models import ChatSession, Message
from models.chat import MESSAGE_FINISHED

_MESSAGES = table(Message)
_SESSIONS = table(ChatSession)
M, S = _MESSAGES.c, _SESSIONS.c
# Rows of a branch shown to people: finished ones and the one streaming now.
SHOWN = (*MESSAGE_FINISHED, "streaming")
_LEAF_OF = select(S.active_leaf_id).where(S.id == bindparam("_session")).scalar_subquery()
_LOCK_LEAF = select(S.active_leaf_id).where(S.id == bindparam("_session")).with_for_update()
_SET_LEAF = update(_SESSIONS).where(S.id == bindparam("_session"))
_MOVE_LEAF = update(_SESSIONS).where(
    S.id == bindparam("_session"), S.active_leaf_id == bindparam("_from")
)
_CHILDREN = (
    select(M.id)
    .where(M.parent_id == bindparam("_parent"), M.status.in_(MESSAGE_FINISHED))
    .order_by(M.position.desc())
)
_ROW = select(M.id, M.session_id, M.parent_id, M.role, M.content, M.status, M.stop_reason)


def _path_statement(*columns: Any) -> Any:
    """Rows from the root to the session's active leaf (bound as `_session`), in order."""
    start = select(M.id, M.parent_id, literal(0).label("depth")).where(M.id == _LEAF_OF)
    branch = start.cte("branch", recursive=True)
    up = branch.alias("up")
    branch = branch.union_all(
        select(M.id, M.parent_id, up.c.depth + 1).where(M.id == up.c.parent_id)
    )
    return select(*columns).join(branch, M.id == branch.c.id).order_by(branch.c.depth.desc())


# Built once: the model's view is read at every turn's start.
_CONVERSATION = _path_statement(M.id, M.role, M.content, M.status, M.stop_reason, M.preamble)
_PATH_IDS = _path_statement(M.id)
_PATH_SHOWN = _path_statement(M.id, M.status)


def conversation(conn: Connection, session_id: str) -> list[dict[str, Any]]:
    """The active branch's finished messages, as the model sees them (with `id`, `stop_reason`
    and, on a reply sent after notes, their `preamble`).

    Requests take only role, content and the notes; rows left empty are skipped.
    """
    rows = conn.execute(_CONVERSATION, {"_session": session_id}).all()
    out = []
    for r in rows:
        if r.status not in MESSAGE_FINISHED or not r.content:
            continue
        message = {"role": r.role, "content": r.content, "id": r.id, "stop_reason": r.stop_reason}
        if r.preamble:
            message["preamble"] = r.preamble
        out.append(message)
    return out


def path_ids(conn: Connection, session_id: str) -> list[str]:
    """The ids of the active branch, first message first."""
    return list(conn.scalars(_PATH_IDS, {"_session": session_id}))


def leaf(conn: Connection, session_id: str) -> str | None:
    """The session's active leaf."""
    return conn.scalar(select(_LEAF_OF), {"_session": session_id})


def lock_leaf(conn: Connection, session_id: str) -> str | None:
    """The session's active leaf, its row locked until the caller's transaction ends."""
    return conn.scalar(_LOCK_LEAF, {"_session": session_id})


def set_leaf(conn: Connection, session_id: str, message_id: str | None) -> None:
    """Make `message_id` the end of the active branch."""
    conn.execute(_SET_LEAF, {"_session": session_id, "active_leaf_id": message_id})


def move_leaf(conn: Connection, session_id: str, from_id: str, to_id: str | None) -> None:
    """Move the leaf from `from_id` to `to_id`, if it is still there."""
    conn.execute(_MOVE_LEAF, {"_session": session_id, "_from": from_id, "active_leaf_id": to_id})


def message(conn: Connection, session_id: str, message_id: str) -> Row[*tuple[Any, ...]] | None:
    """One message of the session (None if it is not one of its)."""
    row = conn.execute(_ROW.where(M.id == message_id)).first()
    return row if row is not None and row.session_id == session_id else None


def descend(conn: Connection, message_id: str) -> str:
    """The end of the newest branch below `message_id` (itself if it has no children)."""
    current = message_id
    while True:
        child = conn.scalar(_CHILDREN.limit(1), {"_parent": current})
        if child is None:
            return current
        current = child


def question_of(conn: Connection, message_id: str) -> str | None:
    """The user question a message answers: the nearest user message above it with words."""
    current: str | None = message_id
    while current is not None:
        row = conn.execute(_ROW.where(M.id == current)).first()
        if row is None:
            return None
        if row.role == "user" and asks(row.content):
            question: str = row.id
            return question
        current = row.parent_id
    return None


def asks(content: Sequence[dict[str, Any]] | None) -> bool:
    """True if a user message holds more than tool results (a question)."""
    return any(block.get("type") != "tool_result" for block in content or ())


def shown_ids(conn: Connection, session_id: str) -> list[str]:
    """The ids of the active branch's rows shown to people, first message first."""
    return [r.id for r in conn.execute(_PATH_SHOWN, {"_session": session_id}) if r.status in SHOWN]


def siblings(conn: Connection, session_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
    """For each message of `ids`, the shown messages sharing its parent and role, oldest first.

    Only the rows under the parents of `ids` are read, so a page costs the same in any session.
    """
    if not ids:
        return {}
    parents = set(conn.scalars(select(M.parent_id).where(M.id.in_(ids))))
    near = [M.parent_id.in_([p for p in parents if p is not None])]
    if None in parents:
        near.append(M.parent_id.is_(None))
    rows = conn.execute(
        select(M.id, M.parent_id, M.role)
        .where(M.session_id == session_id, M.status.in_(SHOWN), or_(*near))
        .order_by(M.position)
    ).all()
    groups: dict[tuple[str | None, str], list[str]] = {}
    place: dict[str, tuple[str | None, str]] = {}
    for r in rows:
        key = (r.parent_id, r.role)
        groups.setdefault(key, []).append(r.id)
        place[r.id] = key
    return {i: groups[place[i]] if i in place else [i] for i in ids}
