"""Write tools an app calls over /mcp: each call is a pending action the user approves or
declines (in the page, or through the app's elicitation); nothing changes before, and it runs
once after.

It reuses the chat's approval machinery where a turn is not needed: the registry's preview and
handler, `ToolContext.applied` (the change and the record that it ran commit together, so two
approvals at once still run it once), and the chat's words and values for a decline
(engine/store/paused.py). What it adds is the row: an app's call has no turn to pause.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from config import Timings
from domain.errors import Conflict, NotFound
from engine.store.paused import EXPIRED, USER_DECLINED, declined
from models import ApiToken, new_id
from models.base import iso, utcnow
from models.chat import APPROVED, TOOL_APPROVED, TOOL_AWAITING, TOOL_DONE
from models.connector import ConnectorAction
from models.db import Database
from telemetry import audit
from tools.registry import ClaimLost, ToolContext, ToolRegistry

# The newest actions the page lists.
LISTED = 50


@dataclass(frozen=True)
class Asker:
    """Who called the write tool: the user, and the connected app or API token used."""

    user_id: int
    client_name: str
    connection_id: int | None = None
    api_token_id: int | None = None


def call_digest(name: str, arguments: dict[str, Any]) -> str:
    """What identifies one call: the tool and its arguments, canonically encoded."""
    text = json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def action_dict(row: Any) -> dict[str, Any]:
    """The API form of an action: the fields of an approval (routes/chat/responses.py)."""
    return {
        "id": row.id,
        "client": row.client_name,
        "name": row.name,
        "input": row.input,
        "preview": row.preview,
        "status": row.status,
        "approval": row.approval,
        "decided_by": row.decided_by,
        "decided_at": iso(row.decided_at),
        "reason": row.reason,
        "result": row.result if row.status == TOOL_DONE else None,
        "is_error": row.is_error,
        "requested_at": iso(row.created_at),
        "finished_at": iso(row.finished_at),
    }


class ActionStore:
    """Pending actions: asked for over /mcp, decided by the user, run once."""

    def __init__(self, db: Database, registry: ToolRegistry, timings: Timings) -> None:
        self.db, self.registry, self.timings = db, registry, timings

    def ask(
        self, asker: Asker, name: str, arguments: dict[str, Any], preview: dict[str, Any]
    ) -> dict[str, Any]:
        """The action for this call: the same call from the same app not yet answered, or a
        new one waiting for the user."""
        self.expire(asker.user_id)
        digest = call_digest(name, arguments)
        with self.db.transaction() as s:
            same = s.scalar(
                select(ConnectorAction)
                .where(
                    ConnectorAction.user_id == asker.user_id,
                    ConnectorAction.input_digest == digest,
                    ConnectorAction.connection_id == asker.connection_id,
                    ConnectorAction.api_token_id == asker.api_token_id,
                    ConnectorAction.reported_at.is_(None),
                )
                .order_by(ConnectorAction.created_at.desc())
                .limit(1)
            )
            if same is not None:
                return action_dict(same)
            client = asker.client_name
            if asker.api_token_id is not None:
                token = s.scalar(select(ApiToken.name).where(ApiToken.id == asker.api_token_id))
                client = f"API token {token}" if token else "an API token"
            row = ConnectorAction(
                id=new_id("act"),
                user_id=asker.user_id,
                connection_id=asker.connection_id,
                api_token_id=asker.api_token_id,
                client_name=client[:200],
                name=name,
                input=arguments,
                input_digest=digest,
                preview=preview,
                status=TOOL_AWAITING,
            )
            s.add(row)
            s.flush()
            made = action_dict(row)
        audit.record("connector_action_asked", user_id=asker.user_id, action=made["id"], tool=name)
        return made

    def decide(
        self, user_id: int, action_id: str, approved: bool, reason: str | None
    ) -> dict[str, Any]:
        """Approve (and run, once) or decline one of the user's actions; the same decision
        again changes nothing, the other one is a 409."""
        self.expire(user_id)
        wanted = APPROVED if approved else "declined"
        with self.db.transaction() as s:
            row = s.scalar(
                select(ConnectorAction)
                .where(ConnectorAction.id == action_id, ConnectorAction.user_id == user_id)
                .with_for_update()
            )
            if row is None:
                raise NotFound("action", action_id)
            if row.approval is not None and row.approval != wanted:
                raise Conflict(f"This action was already {row.approval}.", code="already_decided")
            if row.approval is None:
                if approved:
                    values: dict[str, Any] = {"status": TOOL_APPROVED, "approval": APPROVED}
                    values.update(decided_at=utcnow(), reason=reason)
                else:
                    values = declined(USER_DECLINED, reason, said=reason)
                values["decided_by"] = user_id
                s.execute(
                    update(ConnectorAction).where(ConnectorAction.id == action_id).values(**values)
                )
                audit.record(
                    "connector_action_decided", user_id=user_id, action=action_id, approval=wanted
                )
            # Run it unless it ran: an approval again (or two at once) runs nothing more.
            ready = row.approval is None or row.status == TOOL_APPROVED
            run = (row.name, row.input) if approved and ready else None
        if run is not None:
            self._run(user_id, action_id, *run)
        return self.get(user_id, action_id)

    def _run(self, user_id: int, action_id: str, name: str, arguments: dict[str, Any]) -> None:
        """Run an approved action unless it ran: its handler records its result with its
        change (`applied`), so of two runs at once only one commits."""
        receipt = partial(self._applied, action_id)
        ctx = ToolContext(user_id, self.db, action_id, receipt=receipt)
        try:
            outcome = self.registry.execute(name, arguments, ctx)
        except ClaimLost:
            return  # another run finished it first; this one's change was rolled back
        # A handler that recorded nothing changed nothing (bad input now, or it failed).
        with self.db.transaction() as s:
            s.execute(
                update(ConnectorAction)
                .where(ConnectorAction.id == action_id, ConnectorAction.status == TOOL_APPROVED)
                .values(
                    status=TOOL_DONE,
                    result=outcome.blocks(),
                    is_error=outcome.is_error,
                    finished_at=utcnow(),
                )
            )

    @staticmethod
    def _applied(action_id: str, s: Session, blocks: list[dict[str, Any]]) -> bool:
        done = s.execute(
            update(ConnectorAction)
            .where(ConnectorAction.id == action_id, ConnectorAction.status == TOOL_APPROVED)
            .values(status=TOOL_DONE, result=blocks, is_error=False, finished_at=utcnow())
        )
        return bool(done.rowcount == 1)  # type: ignore[attr-defined]

    def get(self, user_id: int, action_id: str) -> dict[str, Any]:
        """One of the user's actions (an approved one that has not run yet is run now)."""
        with self.db.read() as s:
            row = s.scalar(
                select(ConnectorAction).where(
                    ConnectorAction.id == action_id, ConnectorAction.user_id == user_id
                )
            )
            if row is None:
                raise NotFound("action", action_id)
            found = action_dict(row)
        if found["status"] == TOOL_APPROVED:  # its run was cut short (an outage, a crash)
            self._run(user_id, action_id, found["name"], found["input"])
            return self.get(user_id, action_id)
        return found

    def of_user(self, user_id: int) -> list[dict[str, Any]]:
        """The user's newest actions, those waiting first."""
        self.expire(user_id)
        with self.db.read() as s:
            rows = s.scalars(
                select(ConnectorAction)
                .where(ConnectorAction.user_id == user_id)
                .order_by(ConnectorAction.created_at.desc(), ConnectorAction.id)
                .limit(LISTED)
            ).all()
            found = [action_dict(r) for r in rows]
        return sorted(found, key=lambda a: a["status"] != TOOL_AWAITING)

    def reported(self, action_id: str) -> None:
        """The app was told the outcome: the same call again is a new action."""
        with self.db.transaction() as s:
            s.execute(
                update(ConnectorAction)
                .where(ConnectorAction.id == action_id, ConnectorAction.status == TOOL_DONE)
                .values(reported_at=utcnow())
            )

    def expire(self, user_id: int) -> None:
        """Decline the user's actions older than APPROVAL_TTL, as the chat's expire."""
        cutoff = utcnow() - timedelta(seconds=self.timings.approval_ttl)
        with self.db.transaction() as s:
            s.execute(
                update(ConnectorAction)
                .where(
                    ConnectorAction.user_id == user_id,
                    ConnectorAction.status == TOOL_AWAITING,
                    ConnectorAction.created_at < cutoff,
                )
                .values(**declined(EXPIRED, "expired"))
            )

    def decline_connection(self, connection_id: int) -> None:
        """An app disconnected: what it asked for and the user did not decide is not taken."""
        with self.db.transaction() as s:
            s.execute(
                update(ConnectorAction)
                .where(
                    ConnectorAction.connection_id == connection_id,
                    ConnectorAction.status == TOOL_AWAITING,
                )
                .values(**declined(USER_DECLINED, "app disconnected"))
            )
