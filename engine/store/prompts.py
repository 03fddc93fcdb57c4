"""A conversation's own copy of `system` and `tools`, and its binding flag, stored with it.

The copy is made once, at the session's first turn (or, for a session from before it was
kept, at its next turn), and read at every turn's start; engine/upstream/conversation.py
sends it byte-for-byte. Writes may run twice (engine/store/durable.py): freezing sets the
copy only where none is stored, and setting the flag sets it again.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, update

from engine.store.core import table
from engine.store.fence import HELD, Lease, held_params, hold
from engine.upstream.conversation import Prompt
from models import ChatSession, Turn
from models.db import Database

_SESSIONS = table(ChatSession)
_TURNS = table(Turn)
S, T = _SESSIONS.c, _TURNS.c
_READ = select(S.sent_prompt, S.drop_blocks).where(S.id == bindparam("_session"))
_FREEZE = (
    update(_SESSIONS)
    .where(S.id == bindparam("_session"), S.sent_prompt.is_(None))
    .values(sent_prompt=bindparam("_prompt"), drop_blocks=bindparam("_drop"))
)
_DROP = update(_SESSIONS).where(S.id == bindparam("_session")).values(drop_blocks=True)
_DROPPED = (
    update(_TURNS)
    .where(T.id == bindparam("_turn"), HELD)
    .values(dropped_blocks=T.dropped_blocks + bindparam("_count"))
)


class PromptStore:
    """Reads, makes and marks a conversation's copy, one short transaction each."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def open(self, session_id: str, fresh: Prompt, legacy: bool) -> tuple[Prompt, bool]:
        """The session's copy and binding flag, storing `fresh` if it has none yet.

        `legacy`: the session holds thinking blocks written before it kept a copy, bound to
        a prefix it can no longer send: it drops them (`drop_blocks`) from the start.
        """
        with self.db.begin() as conn:
            row = conn.execute(_READ, {"_session": session_id}).first()
            if row is not None and row.sent_prompt is None:
                params = {"_session": session_id, "_prompt": fresh.dumps(), "_drop": legacy}
                conn.execute(_FREEZE, params)
                row = conn.execute(_READ, {"_session": session_id}).first()
        if row is None or row.sent_prompt is None:
            return fresh, legacy
        return Prompt.loads(row.sent_prompt), bool(row.drop_blocks)

    def drop_blocks(self, session_id: str) -> None:
        """From now on every request of the session sends `drop_block`."""
        with self.db.begin() as conn:
            conn.execute(_DROP, {"_session": session_id})

    def dropped(self, lease: Lease, count: int) -> None:
        """Add `count` thinking blocks the API dropped to the turn's record."""
        with self.db.begin() as conn:
            params = {"_turn": lease.turn_id, "_count": count, **held_params(lease)}
            if not conn.execute(_DROPPED, params).rowcount:
                hold(conn, lease)
