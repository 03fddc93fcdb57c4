"""What an AI SDK chat request asks of the engine: a message, an edit, a regenerate, or decisions.

UIMessage ids map to stored rows: a user UIMessage is the stored question whose `client_id`
(or own id) it is; an assistant UIMessage is the chain of turns whose first turn's id it is.
These only read; the route hands the result to TurnService.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from domain.errors import Unprocessable
from engine.store import tree
from engine.store.starts import Ask
from models import Message, ToolRun, Turn
from models.chat import MESSAGE_FINISHED, TOOL_AWAITING
from models.db import Database
from streaming.wire.events import BusyPolicy

NOT_AN_ANSWER = "messageId must name an assistant message of this chat."


@dataclass(frozen=True)
class Decide:
    """One decision of the approval follow-up: the paused turn, its call, and the user's say."""

    turn_id: str
    tool_use_id: str
    approved: bool
    reason: str | None


@dataclass(frozen=True)
class FollowUp:
    """The approval follow-up of the assistant UIMessage `message_id`."""

    message_id: str
    decisions: list[Decide]


def plan(db: Database, session_id: str | None, body: dict[str, Any]) -> Ask | FollowUp:
    """Map a validated request body onto the chat's session (None: a chat not made yet)."""
    if_busy = body.get("if_busy")
    with db.read() as s:
        if body["kind"] == "approvals":
            return _follow_up(s, session_id, body)
        if body["kind"] == "regenerate":
            return _regenerate(s, session_id, body["target"], if_busy)
        client_id = body.get("client_id")
        earlier = _question(s, session_id, client_id) if client_id else None
    if earlier is not None:
        return Ask(
            body["message"], edit=True, parent_id=earlier.parent_id, client_id=client_id,
            if_busy=if_busy,
        )  # fmt: skip
    if body.get("message_id") is not None:
        raise Unprocessable(
            "messageId names no message of this chat to edit.",
            code="unknown_message",
            field="messageId",
        )
    return Ask(body["message"], client_id=client_id, if_busy=if_busy)


def head(s: Session, turn_id: str) -> str:
    """The first turn of the chain of continuations `turn_id` belongs to."""
    seen = {turn_id}
    while (earlier := s.scalar(select(Turn.continues).where(Turn.id == turn_id))) is not None:
        if earlier in seen:
            break
        seen.add(earlier)
        turn_id = earlier
    return turn_id


def chain(s: Session, first: str) -> list[str]:
    """The turns of the chain that starts with `first`, in order."""
    out = [first]
    while (later := s.scalar(select(Turn.id).where(Turn.continues == out[-1]))) is not None:
        if later in out:
            break
        out.append(later)
    return out


def _question(s: Session, session_id: str | None, ui_id: str) -> Message | None:
    """The stored question a user UIMessage id names (the active branch's first)."""
    if session_id is None:
        return None
    rows = s.scalars(
        select(Message)
        .where(
            Message.session_id == session_id,
            Message.role == "user",
            or_(Message.client_id == ui_id, Message.id == ui_id),
        )
        .order_by(Message.position.desc())
    ).all()
    rows = [r for r in rows if tree.asks(r.content) and r.status in tree.SHOWN]
    if not rows:
        return None
    shown = set(tree.path_ids(s.connection(), session_id))
    return next((r for r in rows if r.id in shown), rows[0])


def _regenerate(s: Session, session_id: str | None, target: str, if_busy: BusyPolicy | None) -> Ask:
    """Answer the question of `target` (an assistant UIMessage, or a question) again."""
    turn = s.get(Turn, target) if session_id is not None else None
    if turn is not None and turn.session_id == session_id:
        question_id = turn.question_id
        answering = chain(s, head(s, target))
    else:
        question = _question(s, session_id, target)
        if question is None:
            raise Unprocessable(NOT_AN_ANSWER, code="not_an_answer", field="messageId")
        question_id = question.id
        asked = s.scalars(
            select(Turn.id)
            .where(Turn.question_id == question.id, Turn.continues.is_(None))
            .order_by(Turn.created_at.desc())
        ).first()
        answering = [asked] if asked else []
    answer = s.scalar(
        select(Message.id)
        .where(
            Message.turn_id.in_(answering),
            Message.role == "assistant",
            Message.status.in_(MESSAGE_FINISHED),
        )
        .order_by(Message.position)
        .limit(1)
    )
    if answer is not None:
        return Ask(regenerate=answer, if_busy=if_busy)
    # Nothing was answered (the turn failed first): ask the same question again.
    asked_again = s.get(Message, question_id) if question_id else None
    if asked_again is None:
        raise Unprocessable(NOT_AN_ANSWER, code="not_an_answer", field="messageId")
    text = "\n".join(b.get("text", "") for b in asked_again.content if b.get("type") == "text")
    return Ask(
        text, edit=True, parent_id=asked_again.parent_id, client_id=asked_again.client_id,
        if_busy=if_busy,
    )  # fmt: skip


def _follow_up(s: Session, session_id: str | None, body: dict[str, Any]) -> FollowUp:
    """The decisions an assistant UIMessage carries; every call still waiting must have one."""
    decided = {a["id"]: a for a in body["approvals"]}
    runs = (
        s.execute(
            select(ToolRun.tool_use_id, ToolRun.requested_in, ToolRun.preview).where(
                ToolRun.session_id == session_id, ToolRun.tool_use_id.in_(list(decided))
            )
        ).all()
        if session_id is not None
        else []
    )
    found = {r.tool_use_id: r.requested_in for r in runs if r.preview is not None}
    unknown = sorted(set(decided) - set(found))
    if unknown:
        raise Unprocessable(
            f"No action of this chat waits for {unknown[0]}.",
            code="unknown_approval",
            field="messages",
        )
    message_id = body["assistant_id"]
    paused = set(found.values())
    if any(head(s, t) != message_id for t in paused):
        raise Unprocessable(
            "The approvals belong to another message.", code="unknown_approval", field="messages"
        )
    waiting = s.scalars(
        select(ToolRun.tool_use_id).where(
            ToolRun.session_id == session_id,
            ToolRun.requested_in.in_(paused),
            ToolRun.status == TOOL_AWAITING,
        )
    ).all()
    missing = sorted(set(waiting) - set(decided))
    if missing:
        raise Unprocessable(
            f"Approve or decline every action the message asks for ({missing[0]} has no answer).",
            code="approvals_missing",
            field="messages",
        )
    return FollowUp(
        message_id,
        [Decide(found[i], i, bool(a["approved"]), a.get("reason")) for i, a in decided.items()],
    )
