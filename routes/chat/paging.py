"""Keyset pagination cursors: the last item's sort key, written so any well-formed one is valid.

A sessions cursor is `<microseconds since the epoch>.<session id>`, of the session's
updated_at in the list and its created_at in a search; a messages cursor a number of messages
of the active branch (the page starts after that many, or with `before` ends before them); a
page starts right after that key whether or not the item still exists, so a client never gets
an error for a cursor it was given.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import Schema, fields, validate

from routes.chat.requests import events_field, search_field

MAX_PAGE = 100

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

SESSION_CURSOR = r"\A[0-9]{1,17}\.[A-Za-z0-9_-]{1,64}\Z"

MESSAGE_CURSOR = r"\A[0-9]{1,15}\Z"


def _page_query(
    name: str, pattern: str, doc: str, extra: dict[str, fields.Field[Any]] | None = None
) -> type[Schema]:
    """A query schema of `limit` and a `cursor` matching `pattern` (and `extra` fields)."""
    return Schema.from_dict(
        {
            **(extra or {}),
            "limit": fields.Integer(
                load_default=50,
                validate=validate.Range(min=1, max=MAX_PAGE),
                metadata={"description": f"Items per page, 1 to {MAX_PAGE}."},
            ),
            "cursor": fields.String(
                validate=validate.Regexp(pattern),
                metadata={"description": f"`next_cursor` of the previous page ({doc})."},
            ),
        },
        name=name,
    )


SessionPageQuery = _page_query(
    "SessionPageQuery",
    SESSION_CURSOR,
    "the last session's time and id",
    {"q": search_field()},
)

MessagePageQuery = _page_query(
    "MessagePageQuery",
    MESSAGE_CURSOR,
    "the last message's position",
    {
        "before": fields.String(
            validate=validate.Regexp(MESSAGE_CURSOR),
            metadata={
                "description": "`earlier_cursor` of a page or of the session: the page ends "
                "just before it (and, with `cursor` too, starts no earlier than that)."
            },
        ),
        "events": events_field(),
    },
)


def session_cursor(key: tuple[datetime, str]) -> str:
    """The cursor after a session whose key is (created_at or updated_at, id)."""
    moment, session_id = key
    if moment.tzinfo is None:  # SQLite hands times back without a zone; they are UTC
        moment = moment.replace(tzinfo=UTC)
    return f"{(moment - EPOCH) // timedelta(microseconds=1)}.{session_id}"


def session_key(cursor: str) -> tuple[datetime, str]:
    """The (created_at or updated_at, id) a sessions cursor names."""
    micros, _, session_id = cursor.partition(".")
    return EPOCH + timedelta(microseconds=int(micros)), session_id
