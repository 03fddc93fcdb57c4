"""Turn rows: start, finish, cancel flags, leases, and the takeover of orphaned turns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from domain.errors import LeaseLost, NotFound, TurnConflict
from engine.events.log import last_seq
from engine.limits import RUNNING, Admission
from engine.session_limits import SessionLimits
from engine.store import approvals, starts
from engine.store.core import rowcount, table
from engine.store.fence import Lease, db_now
from engine.store.starts import Ask, Placed
from engine.store.turn_rows import NewTurn, Runnable
from models import ChatSession, Message, Turn, TurnEvents, Worker, new_id, utcnow
from models.chat import MESSAGE_FINISHED, TURN_AWAITING, TURN_RUNNING
from models.db import Database
from models.searchable import search_title

__all__ = ["Ask", "NewTurn", "Placed", "Runnable", "TurnState", "TurnStore"]

_TURNS = table(Turn)
_SESSIONS = table(ChatSession)
_TURN_EVENTS = table(TurnEvents)
T, S = _TURNS.c, _SESSIONS.c
# Built once, as in engine/store/messages.py: a turn's start and end are on every turn's path.
_NEW_SESSION = insert(_SESSIONS)
_SESSION = select(S.user_id, S.title).where(S.id == bindparam("_session")).with_for_update()
_TITLE = update(_SESSIONS).where(S.id == bindparam("_session"))
_FINISH = update(_TURNS).where(
    T.id == bindparam("_turn"), T.lease == bindparam("_lease"), T.status == TURN_RUNNING
)
_ARCHIVE = insert(_TURN_EVENTS)
_ENDED = select(T.lease, T.status).where(T.id == bindparam("_turn"))
_HOLDS = select(T.id).where(
    T.id == bindparam("_turn"), T.lease == bindparam("_lease"), T.status == TURN_RUNNING
)
_OWNER = select(T.user_id).where(T.id == bindparam("_turn"))
_MINE = select(T.id, T.lease, T.cancel_requested).where(
    T.status == TURN_RUNNING, T.worker_id == bindparam("_worker")
)


@dataclass(frozen=True)
class TurnState:
    """What the worker running a turn polls: its lease now, and whether a cancel is asked."""

    lease: int
    cancel_requested: bool


class TurnStore:
    """Every write of a turn row, each in its own short transaction."""

    def __init__(
        self,
        db: Database,
        admission: Admission | None = None,
        sessions: SessionLimits | None = None,
    ) -> None:
        self.db, self.sessions = db, sessions
        # The per-user limits every start, promotion and continuation asks (engine/limits.py).
        self.admission = admission or Admission()

    def start_turn(
        self,
        user_id: int,
        session_id: str | None,
        ask: Ask | str,
        worker_id: str | None = None,
        max_queued: int = 5,
        last_check: Callable[[], None] | None = None,
        traceparent: str | None = None,
    ) -> tuple[NewTurn, Lease, Placed]:
        """Create a turn for `ask` (and the session if None is given): running, or queued.

        Raises TurnConflict while another turn runs on the session and `ask.if_busy` is
        `reject`, NotFound for a session that is missing or someone else's, Unprocessable
        (Conflict) for a question the tree cannot take, LimitExceeded when the admission
        refuses the user (over the day's tokens; every running place taken, unless the turn
        queues anyway). One transaction: all or nothing. `last_check` runs once the rows are
        written, before the commit: what it raises refuses the turn, writing nothing.
        A message sent before (`ask.once`, same `client_id`) returns the turn it started,
        `placed.replay_of`, with a lease that is not the caller's to run it by.
        """
        if isinstance(ask, str):
            ask = Ask(ask, if_busy="reject")
        turn_id = new_id("turn")
        try:
            with self.db.begin() as conn:
                # The user first: concurrent starts cannot both take the last place.
                refusal = self.admission.check(conn, user_id)
                created = session_id is None
                if session_id is None:
                    if self.sessions is not None:
                        self.sessions.check(conn, user_id)
                    session_id = new_id("ses")
                    title = (ask.text or "")[:80] or None
                    conn.execute(
                        _NEW_SESSION,
                        {
                            "id": session_id,
                            "user_id": user_id,
                            "title": title,
                            "search_title": search_title(title),
                        },
                    )
                else:
                    # Locked: a start, a queued turn's promotion and a decision serialize.
                    row = conn.execute(_SESSION, {"_session": session_id}).first()
                    if row is None or row.user_id != user_id:
                        raise NotFound("session", session_id)
                    if row.title is None and ask.text:
                        title = ask.text[:80]
                        conn.execute(
                            _TITLE,
                            {
                                "_session": session_id,
                                "title": title,
                                "search_title": search_title(title),
                            },
                        )
                placed, question = starts.start(
                    conn, user_id, session_id, turn_id, ask, worker_id, max_queued, traceparent
                )
                if placed.replay_of is not None:  # sent before: nothing new, no limit spent
                    turn = NewTurn(placed.replay_of, session_id, question)
                    return turn, Lease(placed.replay_of, session_id, 1), placed
                if refusal is not None and not (placed.queued and refusal.code == RUNNING):
                    raise refusal
                if last_check is not None:
                    last_check()  # after every other refusal, so none of them uses it up
                if created and self.sessions is not None:
                    self.sessions.count(user_id)
        except IntegrityError as err:
            raise TurnConflict(session_id or "") from err
        new = NewTurn(turn_id, session_id, question, traceparent=traceparent)
        return new, Lease(turn_id, session_id, 1), placed

    def cancel_queued(self, turn_id: str) -> bool:
        """End a queued turn `cancelled` and remove its message; False if it is not queued."""
        with self.db.begin() as conn:
            return starts.cancel_queued(conn, turn_id)

    def stranded(self, worker_id: str, limit: int) -> list[Runnable]:
        """Start what the limits let start of the queued turns whose session runs nothing
        (a crash lost their promotion), one user per transaction (see starts.promote)."""
        with self.db.begin_read() as conn:
            users = starts.stranded_users(conn, limit)
        started: list[Runnable] = []
        for user_id in users:
            with self.db.begin() as conn:
                started += starts.promote(conn, user_id, worker_id, self.admission)
        return started

    def finish_turn(
        self,
        lease: Lease,
        status: str,
        rounds: int,
        error: tuple[str, str] | None = None,
        frames: bytes | None = None,
        worker_id: str | None = None,
    ) -> list[Runnable]:
        """Record the turn's outcome and its events in one transaction; return what runs next.

        Readers that find a finished turn therefore always find its archive too. The same
        transaction starts (for `worker_id`) what waited for this turn: its continuation, if
        its calls were decided already, and the user's oldest waiting turns, in any session
        that runs nothing, as far as the limits let it (starts.promote). Raises LeaseLost if
        the turn is no longer ours; finishing it again as it ended is a no-op.
        """
        code, message = error or (None, None)
        with self.db.begin() as conn:
            user_id = conn.scalar(_OWNER, {"_turn": lease.turn_id})
            if user_id is not None:
                self.admission.lock(conn, user_id)  # the user, then the session, as a start
            # Locked first, as a start locks it: a message queued now is seen below.
            conn.execute(_SESSION, {"_session": lease.session_id})
            done = conn.execute(
                _FINISH,
                {
                    "_turn": lease.turn_id,
                    "_lease": lease.number,
                    "status": status,
                    "rounds": rounds,
                    "finished_at": utcnow(),
                    "error_code": code,
                    "error_message": message,
                    "worker_id": None,
                },
            ).rowcount
            if not done:
                row = conn.execute(_ENDED, {"_turn": lease.turn_id}).first()
                if row is None or (row.lease, row.status) != (lease.number, status):
                    raise LeaseLost(lease.turn_id)
                return []  # an earlier try committed before its connection failed
            if frames is not None:
                # Each frame holds exactly one blank line: their count is the last sequence.
                last = last_seq(frames)
                conn.execute(
                    _ARCHIVE, {"turn_id": lease.turn_id, "last_seq": last, "frames": frames}
                )
            following: list[Runnable] = []
            if status == TURN_AWAITING:
                following += approvals.maybe_continue(
                    conn, lease.turn_id, worker_id, self.admission
                )
            if user_id is not None:
                following += starts.promote(conn, user_id, worker_id, self.admission)
        return following

    def stored_turn(self, turn_id: str) -> tuple[str | None, bytes | None]:
        """Return a turn's status and its archived frames (once it finished)."""
        with self.db.read() as s:
            status = s.scalar(select(Turn.status).where(Turn.id == turn_id))
            archived = s.get(TurnEvents, turn_id)
        return status, archived.frames if archived is not None else None

    def poll_mine(self, worker_id: str) -> dict[str, TurnState]:
        """Return the lease and cancel flag of every running turn this worker holds."""
        with self.db.begin_read() as conn:
            rows = conn.execute(_MINE, {"_worker": worker_id}).all()
        return {r.id: TurnState(r.lease, r.cancel_requested) for r in rows}

    def request_cancel(self, turn_id: str) -> None:
        """Flag a running turn for cancellation by whichever worker runs it."""
        with self.db.transaction() as s:
            s.execute(
                update(Turn)
                .where(Turn.id == turn_id, Turn.status == TURN_RUNNING)
                .values(cancel_requested=True)
            )

    def release(self, lease: Lease) -> bool:
        """Hand a running turn over: any worker's reaper may take it at once."""
        with self.db.transaction() as s:
            done = s.execute(
                update(Turn)
                .where(
                    Turn.id == lease.turn_id,
                    Turn.lease == lease.number,
                    Turn.status == TURN_RUNNING,
                )
                .values(worker_id=None)
            )
            return bool(rowcount(done))

    def take_orphans(self, worker_id: str, stale_after: float, limit: int) -> list[Runnable]:
        """Take over running turns whose worker stopped beating or handed them over.

        Each taken turn gets this worker and a new lease, which fences its old writer out.
        Rows another worker is taking right now are skipped (SKIP LOCKED), so two reapers
        never take one turn.
        """
        with self.db.transaction() as s:
            cutoff = db_now(s) - timedelta(seconds=stale_after)
            alive = select(Worker.id).where(Worker.heartbeat_at >= cutoff)
            rows = s.execute(
                select(
                    Turn.id,
                    Turn.session_id,
                    Turn.user_id,
                    Turn.lease,
                    Turn.takeovers,
                    Turn.progress,
                    Turn.stalls,
                    Turn.worker_id,
                    Turn.question_id,
                    Turn.continues,
                    Turn.traceparent,
                    Turn.log_epoch,
                )
                .where(
                    Turn.status == TURN_RUNNING,
                    # Never from itself: a worker whose own reaper runs is alive, however
                    # late its heartbeat (the others judge that).
                    or_(
                        Turn.worker_id.is_(None),
                        and_(Turn.worker_id != worker_id, Turn.worker_id.not_in(alive)),
                    ),
                )
                .order_by(Turn.created_at)
                .limit(limit)
                .with_for_update(skip_locked=True, of=Turn)
            ).all()
            out = []
            for row in rows:
                finished = s.scalar(
                    select(func.count())
                    .select_from(Message)
                    .where(Message.turn_id == row.id, Message.status.in_(MESSAGE_FINISHED))
                )
                # Stalls count the deaths since the turn last got further: a turn handed
                # over by a draining worker (no worker) did not take its worker down.
                died = row.worker_id is not None
                stalls = (row.stalls if finished <= row.progress else 0) + int(died)
                s.execute(
                    update(Turn)
                    .where(Turn.id == row.id)
                    .values(
                        worker_id=worker_id,
                        lease=row.lease + 1,
                        takeovers=row.takeovers + 1,
                        progress=finished,
                        stalls=stalls,
                    )
                )
                turn = NewTurn(
                    row.id, row.session_id, row.question_id or "", row.continues, row.traceparent
                )
                lease = Lease(row.id, row.session_id, row.lease + 1)
                out.append(
                    Runnable(turn, row.user_id, lease, row.takeovers + 1, stalls, row.log_epoch)
                )
        return out

    def holds(self, turn_id: str, lease: int) -> bool:
        """True if `lease` still holds the running turn."""
        with self.db.begin_read() as conn:
            return conn.execute(_HOLDS, {"_turn": turn_id, "_lease": lease}).first() is not None

    def next_epoch(self, lease: Lease) -> int:
        """Start the next generation of the turn's event log; raise LeaseLost if not ours."""
        with self.db.begin() as conn:
            epoch = conn.scalar(
                update(_TURNS)
                .where(T.id == lease.turn_id, T.lease == lease.number, T.status == TURN_RUNNING)
                .values(log_epoch=T.log_epoch + 1)
                .returning(T.log_epoch)
            )
        if epoch is None:
            raise LeaseLost(lease.turn_id)
        return int(epoch)
