"""How a turn starts: its question's place in the message tree, now or after the running turn.

A message sent while a turn runs (or while others wait) is stored at once, `queued`, outside
the tree. A turn also waits `queued` for a place under USER_MAX_CONCURRENT_TURNS. Whenever a
turn of a user ends, the transaction that records its end starts the user's oldest waiting
turns whose session runs nothing, as far as the limits let it (`promote`, which asks the
one admission check, engine/limits.py), and the upkeep does the same for any a crash left
behind (`stranded`). These run inside a caller's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, insert, not_, select, update

from domain.errors import Conflict, LimitExceeded, TurnConflict, Unprocessable
from engine.limits import RUNNING, Admission
from engine.store import paused, tree
from engine.store.core import table
from engine.store.messages import NEXT_POSITION
from engine.store.turn_rows import Runnable, insert_turn
from models import Message, Turn, TurnEvents, new_id, utcnow
from models.chat import MESSAGE_FINISHED, MESSAGE_QUEUED, TURN_QUEUED, TURN_RUNNING
from models.searchable import search_text
from streaming.wire import events as E
from streaming.wire.events import BUSY_POLICIES, BusyPolicy
from streaming.wire.protocol import encode_event

_MESSAGES = table(Message)
_TURNS = table(Turn)
_TURN_EVENTS = table(TurnEvents)
M, T = _MESSAGES.c, _TURNS.c
_QUESTION = insert(_MESSAGES).values(position=NEXT_POSITION)
_OTHER = _TURNS.alias("other")
# The session of the turn in the outer query runs nothing.
_IDLE = not_(
    select(_OTHER.c.id)
    .where(and_(_OTHER.c.session_id == T.session_id, _OTHER.c.status == TURN_RUNNING))
    .exists()
)


@dataclass(frozen=True)
class Ask:
    """What a new turn asks: a message (an edit when `edit`: under `parent_id`) or a regenerate."""

    text: str | None = None
    edit: bool = False
    parent_id: str | None = None
    regenerate: str | None = None
    client_id: str | None = None
    if_busy: BusyPolicy | None = None  # None: the server's BUSY_POLICY
    # The message's `client_id` names one send: a repeat (its reply lost) returns its turn.
    once: bool = False


@dataclass(frozen=True)
class Placed:
    """Where a new turn went: running now, or queued (after asking the running one to stop)."""

    queued: bool
    interrupted: str | None = None
    replay_of: str | None = None  # the turn an earlier send of this message started


def start(
    conn: Connection,
    user_id: int,
    session_id: str,
    turn_id: str,
    ask: Ask,
    worker_id: str | None,
    max_queued: int,
    traceparent: str | None = None,
) -> tuple[Placed, str]:
    """Create the turn of `ask` on a session; return where it went and its question's id."""
    if ask.once and ask.client_id is not None:
        sent = _sent(conn, session_id, ask)
        if sent is not None:
            return sent
    question = _check(conn, session_id, ask)
    running = conn.scalar(select(T.id).where(T.session_id == session_id, T.status == TURN_RUNNING))
    waiting = conn.execute(
        select(func.count()).where(T.session_id == session_id, T.status == TURN_QUEUED)
    ).scalar_one()
    # Turns waiting for a place keep the session's order: a new message goes behind them.
    queued = running is not None or waiting > 0
    if queued:
        if ask.if_busy == "reject":
            raise TurnConflict(session_id)
        if waiting >= max_queued:
            raise Conflict(
                f"{waiting} messages already wait for the running turn; wait or cancel one.",
                code="queue_full",
            )
    status = TURN_QUEUED if queued else TURN_RUNNING
    message_id = None
    if ask.text is not None:
        message_id = question = new_id("msg")
    insert_turn(
        conn,
        turn_id,
        session_id,
        user_id,
        status,
        None if queued else worker_id,
        question,
        to_leaf=not ask.edit,
        traceparent=traceparent,
    )
    if message_id is not None:
        conn.execute(
            _QUESTION,
            {
                "id": message_id,
                "session_id": session_id,
                "turn_id": turn_id,
                "parent_id": ask.parent_id,
                "client_id": ask.client_id,
                "role": "user",
                "status": MESSAGE_QUEUED,
                "content": [{"type": "text", "text": ask.text}],
                "search_text": search_text(ask.text),
                "_session": session_id,
            },
        )
    if not queued:
        _place(conn, session_id, turn_id, question, not ask.edit)
        return Placed(False), question or ""
    interrupted = None
    if ask.if_busy == "interrupt" and running is not None:
        conn.execute(update(_TURNS).where(T.id == running).values(cancel_requested=True))
        go_first(conn, session_id, turn_id)  # it runs as soon as the running one stopped
        interrupted = running
    return Placed(True, interrupted), question or ""


def promote(
    conn: Connection, user_id: int, worker_id: str | None, admission: Admission
) -> list[Runnable]:
    """Start the user's waiting turns, oldest first, while the limits leave a place; return them.

    The oldest queued turn whose session runs nothing goes next (a session's own queue in
    order). One the admission finds over the day's tokens ends `failed` without a model
    call; every running place taken leaves the rest waiting.
    """
    admission.lock(conn, user_id)
    started: list[Runnable] = []
    while (row := _next_waiting(conn, user_id)) is not None:
        refusal = admission.check(conn, user_id)
        if refusal is not None and refusal.code == RUNNING:
            break
        status = TURN_RUNNING if refusal is None else "failed"
        moved = conn.execute(
            update(_TURNS)
            .where(T.id == row.id, T.status == TURN_QUEUED)
            .values(status=status, worker_id=worker_id if refusal is None else None)
        ).rowcount
        if not moved:
            continue  # cancelled meanwhile
        if row.continues is not None:
            paused.resume_branch(conn, row.session_id, row.continues)
        else:
            _place(conn, row.session_id, row.id, row.question_id, row.to_leaf)
        if refusal is not None:
            _fail(conn, row, refusal)
            continue
        started.append(
            Runnable.fresh(row.id, row.session_id, user_id, row.question_id, row.continues)
        )
    return started


def stranded_users(conn: Connection, limit: int) -> list[int]:
    """Users with queued turns whose session runs nothing (a crash lost their promotion, or
    they wait for a place)."""
    query = select(T.user_id).where(T.status == TURN_QUEUED, _IDLE).distinct().limit(limit)
    return list(conn.scalars(query).all())


def go_first(conn: Connection, session_id: str, turn_id: str) -> None:
    """Put a queued turn ahead of the turns already waiting in its session.

    The queue is ordered by `created_at`: the turn takes a moment just before the oldest.
    """
    first = conn.scalar(
        select(func.min(T.created_at)).where(
            T.session_id == session_id, T.status == TURN_QUEUED, T.id != turn_id
        )
    )
    if first is not None:
        ahead = first - timedelta(microseconds=1)
        conn.execute(update(_TURNS).where(T.id == turn_id).values(created_at=ahead))


def _next_waiting(conn: Connection, user_id: int) -> Any:
    """The user's oldest queued turn whose session runs nothing, if any."""
    return conn.execute(
        select(T.id, T.session_id, T.question_id, T.continues, T.to_leaf)
        .where(T.user_id == user_id, T.status == TURN_QUEUED, _IDLE)
        .order_by(T.created_at, T.id)
        .limit(1)
    ).first()


def _fail(conn: Connection, row: Any, refusal: LimitExceeded) -> None:
    """End a turn that never ran `failed` with the refusal; archive its events for readers."""
    conn.execute(
        update(_TURNS)
        .where(T.id == row.id)
        .values(finished_at=utcnow(), error_code=refusal.code, error_message=refusal.message)
    )
    start = E.turn_start(row.id, row.session_id, row.question_id, continues=row.continues)
    frames = (
        encode_event(1, *start)
        + encode_event(2, *E.turn_error(refusal.code, refusal.message))
        + encode_event(3, *E.turn_end(row.id, "failed"))
    )
    conn.execute(insert(_TURN_EVENTS).values(turn_id=row.id, last_seq=3, frames=frames))


def cancel_queued(conn: Connection, turn_id: str) -> bool:
    """Remove a queued turn's message and end it `cancelled`; False if it is not queued.

    Its events (a start and an end) are archived, so its readers end too.
    """
    row = conn.execute(
        update(_TURNS)
        .where(T.id == turn_id, T.status == TURN_QUEUED)
        .values(status="cancelled", finished_at=utcnow())
        .returning(T.session_id, T.question_id)
    ).first()
    if row is None:
        return False
    conn.execute(_MESSAGES.delete().where(M.turn_id == turn_id, M.status == MESSAGE_QUEUED))
    start = E.turn_start(turn_id, row.session_id, row.question_id)
    frames = encode_event(1, *start) + encode_event(2, *E.turn_end(turn_id, "cancelled"))
    conn.execute(insert(_TURN_EVENTS).values(turn_id=turn_id, last_seq=2, frames=frames))
    return True


def _place(
    conn: Connection, session_id: str, turn_id: str, question: str | None, to_leaf: bool
) -> None:
    """Put a starting turn's question into the tree and make it the active leaf.

    What the session's paused turns still wait for is declined first: the user moved on.
    """
    paused.decline_pending(conn, session_id, turn_id)
    own = conn.execute(
        select(M.id, M.parent_id).where(M.turn_id == turn_id, M.status == MESSAGE_QUEUED)
    ).first()
    if own is not None:
        parent = tree.leaf(conn, session_id) if to_leaf else own.parent_id
        conn.execute(
            update(_MESSAGES).where(M.id == own.id).values(status="complete", parent_id=parent)
        )
    if question is not None:
        tree.set_leaf(conn, session_id, question)


def _sent(conn: Connection, session_id: str, ask: Ask) -> tuple[Placed, str] | None:
    """The turn an earlier send of this message started, if any (one `client_id`, one send)."""
    row = conn.execute(
        select(M.id, M.turn_id, M.content, T.status)
        .join(_TURNS, T.id == M.turn_id)
        .where(M.session_id == session_id, M.client_id == ask.client_id, M.role == "user")
        .order_by(M.created_at.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    if row.content != [{"type": "text", "text": ask.text}]:
        raise Conflict(
            "This client_id names another message of this session: send a new one.",
            code="client_id_reused",
            field="client_id",
        )
    return Placed(row.status == TURN_QUEUED, replay_of=row.turn_id), row.id


def _check(conn: Connection, session_id: str, ask: Ask) -> str | None:
    """Refuse an ask the tree cannot take; return the question a regenerate answers again."""
    if ask.if_busy not in BUSY_POLICIES:
        raise Unprocessable(
            f"if_busy must be one of {', '.join(BUSY_POLICIES)}.", code="invalid_if_busy"
        )
    if ask.regenerate is not None:
        row = tree.message(conn, session_id, ask.regenerate)
        question = tree.question_of(conn, ask.regenerate) if row is not None else None
        if row is None or row.role != "assistant" or question is None:
            raise Unprocessable(
                "regenerate must name an answer (an assistant message) of this session.",
                code="not_an_answer",
                field="regenerate",
            )
        return question
    if ask.edit and ask.parent_id is not None:
        row = tree.message(conn, session_id, ask.parent_id)
        # A question follows an answer, or the results of calls a new message declined.
        follows = row is not None and (row.role == "assistant" or not tree.asks(row.content))
        if row is None or not follows or row.status not in MESSAGE_FINISHED:
            raise Unprocessable(
                "parent_id must name an answer of this session (null: a first message).",
                code="invalid_parent",
                field="parent_id",
            )
    return None
