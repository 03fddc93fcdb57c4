"""Chat sessions, turns, messages, tool runs, archived turn events and the workers running turns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from models.base import Base, new_id, utcnow

TURN_RUNNING, TURN_QUEUED = "running", "queued"
# A turn paused for the user's approval ends its events like a finished one; once decided,
# it is `continued` by the turn that runs the approved tools (Turn.continues).
TURN_AWAITING, TURN_CONTINUED = "awaiting_approval", "continued"
TURN_FINAL_STATUSES = (
    "completed",
    "failed",
    "cancelled",
    "max_rounds",
    "interrupted",
    TURN_AWAITING,
    TURN_CONTINUED,
)
# Rows the model sees: `streaming` is in flight, `discarded` was a failed attempt, `queued`
# waits for the running turn to end (it is not in the tree until its own turn starts).
MESSAGE_FINISHED = ("complete", "incomplete")
MESSAGE_QUEUED = "queued"
TOOL_RUNNING, TOOL_DONE = "running", "done"
# A side-effect tool waits for the user: `awaiting_approval`, then `approved` (run by the
# turn that continues) or done with a denial as its result.
TOOL_AWAITING, TOOL_APPROVED = "awaiting_approval", "approved"
APPROVED, DECLINED = "approved", "declined"


class ChatSession(Base):
    """A conversation owned by one user."""

    __tablename__ = "chat_sessions"
    # A user's sessions newest first, by keyset: search walks the first, the list the second
    # (most recently active first: a turn moves the leaf, which updates updated_at).
    __table_args__ = (
        Index("ix_chat_sessions_user_created", "user_id", "created_at", "id"),
        Index("ix_chat_sessions_user_updated", "user_id", "updated_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=lambda: new_id("ses"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    title: Mapped[str | None] = mapped_column(String(200))
    # The title case-folded, matched by search on the database side (services/search.py).
    search_title: Mapped[str | None] = mapped_column(String(200))
    # The end of the branch shown and sent to the model: the messages form a tree.
    active_leaf_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # The conversation's own `system` and `tools` as first sent, canonical JSON, sent
    # byte-for-byte on every later request (engine/upstream/conversation.py); NULL until its
    # first turn.
    sent_prompt: Mapped[str | None] = mapped_column(Text)
    # Since the API's "bound to a different conversation" 400: every request of it sends
    # thinking.block_binding.prefix_mismatch_behavior "drop_block".
    drop_blocks: Mapped[bool] = mapped_column(default=False, server_default=false())

    messages: Mapped[list[Message]] = relationship(
        order_by="Message.position", cascade="all, delete-orphan", passive_deletes=True
    )
    turns: Mapped[list[Turn]] = relationship(cascade="all, delete-orphan", passive_deletes=True)


class Turn(Base):
    """One user question and every model round that answered it."""

    __tablename__ = "turns"
    __table_args__ = (
        # At most one running turn per session, enforced by the database for every worker.
        Index(
            "uq_turns_one_running",
            "session_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
        # Queued turns run in order, per session.
        Index(
            "ix_turns_queued",
            "session_id",
            "created_at",
            sqlite_where=text("status = 'queued'"),
            postgresql_where=text("status = 'queued'"),
        ),
        # The reaper looks for running turns by worker.
        Index(
            "ix_turns_running_worker",
            "worker_id",
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=lambda: new_id("turn"))
    session_id: Mapped[str] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(24), default=TURN_RUNNING)
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    # Set by whichever worker receives the cancel; the worker running the turn polls it.
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    # The worker that owns the running turn (NULL: handed over, any worker may take it) and
    # the lease: a takeover increments it, and every write of the turn is fenced by it.
    worker_id: Mapped[str | None] = mapped_column(String(40))
    lease: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    takeovers: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Finished messages at the last takeover, and takeovers in a row that found no more:
    # a turn that keeps killing its workers without progress is stopped.
    progress: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    stalls: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The user message this turn answers (its own, or an earlier one it regenerates).
    question_id: Mapped[str | None] = mapped_column(String(32))
    # The paused turn whose tool calls this one answers (after their approval).
    continues: Mapped[str | None] = mapped_column(String(32))
    # A queued turn's message joins the branch's end when it runs (False: an edit, whose
    # parent was chosen when it was sent).
    to_leaf: Mapped[bool] = mapped_column(default=True, server_default=true())
    # The W3C traceparent the turn started in: a takeover continues that trace.
    traceparent: Mapped[str | None] = mapped_column(String(64))
    # The generation of the turn's live event log: a holder that finds the log lost starts
    # the next, whose event ids begin above any a client could hold (engine/events/epochs.py).
    log_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Thinking blocks the API dropped from this turn's requests (its input_transformations).
    dropped_blocks: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Message(Base):
    """One API message; `content` holds only complete Anthropic-format blocks."""

    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("session_id", "position"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=lambda: new_id("msg"))
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    turn_id: Mapped[str | None] = mapped_column(
        ForeignKey("turns.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    # The message this one follows in its branch (None: a first message).
    parent_id: Mapped[str | None] = mapped_column(String(32), index=True)
    # The id a client gave the message (the AI SDK's useChat makes its own).
    client_id: Mapped[str | None] = mapped_column(String(100))
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[list[dict[str, Any]]] = mapped_column(default=list)
    # Blocks cut off before content_block_stop: shown to people, never sent to the API.
    partial_content: Mapped[list[dict[str, Any]] | None]
    # An assistant message's notes: the `role: "system"` messages sent right before it (a
    # new date, tool changes), sent again before it, exactly, on every later request.
    preamble: Mapped[list[dict[str, Any]] | None]
    status: Mapped[str] = mapped_column(String(16), default="complete")
    stop_reason: Mapped[str | None] = mapped_column(String(40))
    usage: Mapped[dict[str, Any] | None]
    model: Mapped[str | None] = mapped_column(String(100))
    upstream_id: Mapped[str | None] = mapped_column(String(100))
    # The case-folded text people read in `content` (its text blocks), matched by search.
    search_text: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ToolRun(Base):
    """The stored result of one tool_use id in a session, so a tool never runs twice for it."""

    __tablename__ = "tool_runs"
    # Ids come from upstream, so they are only trusted within the session that received them.
    __table_args__ = (
        UniqueConstraint("session_id", "tool_use_id"),
        # Requests for approval expire (APPROVAL_TTL).
        Index(
            "ix_tool_runs_awaiting",
            "created_at",
            sqlite_where=text("status = 'awaiting_approval'"),
            postgresql_where=text("status = 'awaiting_approval'"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    tool_use_id: Mapped[str] = mapped_column(String(100))
    # The turn that claimed (and ran) it; an approved run is claimed by the turn that
    # continues the one it was requested in.
    turn_id: Mapped[str] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    requested_in: Mapped[str | None] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(100))
    input: Mapped[dict[str, Any]]
    result: Mapped[list[dict[str, Any]]]
    is_error: Mapped[bool] = mapped_column(default=False)
    # `running` is claimed before the tool starts, so a tool never runs twice for one id.
    status: Mapped[str] = mapped_column(String(24), default=TOOL_DONE, server_default=TOOL_DONE)
    # The lease of the turn that claimed it: a retried claim recognises its own.
    lease: Mapped[int | None] = mapped_column(Integer)
    # Side-effect tools: what would change, and who decided when (APPROVED or DECLINED).
    preview: Mapped[dict[str, Any] | None]
    approval: Mapped[str | None] = mapped_column(String(16))
    decided_by: Mapped[int | None] = mapped_column(Integer)
    decided_at: Mapped[datetime | None]
    reason: Mapped[str | None] = mapped_column(Text)
    finished_at: Mapped[datetime | None]
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TurnEvents(Base):
    """A finished turn's encoded client events, for replay after the live log is gone."""

    __tablename__ = "turn_events"

    turn_id: Mapped[str] = mapped_column(
        ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True
    )
    last_seq: Mapped[int] = mapped_column(Integer)
    frames: Mapped[bytes] = mapped_column(LargeBinary)


class Worker(Base):
    """A server process that runs turns; its heartbeat says it is alive."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow)
