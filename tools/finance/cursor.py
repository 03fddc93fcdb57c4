"""Opaque keyset cursors bound to the user and the exact query that minted them."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from datetime import date
from typing import Any

from tools.registry import ToolInputError

RESTART = "Call get_transactions again without cursor to start from the first page."


def fingerprint(user_id: int, sort: str, filters: dict[str, Any]) -> str:
    """Return a short hash of who asked and what, so a cursor only continues its own query."""
    canonical = json.dumps(
        {"u": user_id, "s": sort, "f": {k: str(v) for k, v in filters.items()}}, sort_keys=True
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode(fp: str, sort_value: date | int, row_id: int) -> str:
    """Return the cursor that resumes after the row with (`sort_value`, `row_id`)."""
    value = sort_value.isoformat() if isinstance(sort_value, date) else sort_value
    raw = json.dumps({"f": fp, "k": [value, row_id]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str, fp: str, by_date: bool) -> tuple[date | int, int]:
    """Return the (sort_value, row_id) of a cursor minted by the same user and query."""
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        mark, (value, row_id) = payload["f"], payload["k"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise _not_a_cursor() from None
    if mark != fp:
        raise ToolInputError(
            "cursor",
            "this cursor belongs to a different query: pass exactly the same filters and sort "
            f"as the call that returned it. {RESTART}",
        )
    try:
        key = date.fromisoformat(value) if by_date else value
    except (TypeError, ValueError):
        key = None
    if key is None or type(row_id) is not int or (not by_date and type(key) is not int):
        raise _not_a_cursor()
    return key, row_id


def _not_a_cursor() -> ToolInputError:
    return ToolInputError("cursor", f"not a cursor returned by get_transactions. {RESTART}")
