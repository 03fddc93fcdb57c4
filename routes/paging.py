"""Opaque pagination cursors: base64url JSON of the last item's sort key, tagged by list."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from routes.errors import APIError


def _session_key(key: list[Any]) -> bool:
    """(created_at ISO 8601, id)."""
    if len(key) != 2 or not all(isinstance(k, str) for k in key):
        return False
    try:
        datetime.fromisoformat(key[0])
    except ValueError:
        return False
    return True


def _message_key(key: list[Any]) -> bool:
    """(position,)."""
    return len(key) == 1 and type(key[0]) is int and 0 <= key[0] < 2**53


KEYS = {"s": _session_key, "m": _message_key}


def encode_cursor(kind: str, key: list[Any]) -> str:
    """Return the cursor after the item whose sort key is `key` in list `kind`."""
    raw = json.dumps([kind, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str) -> list[Any]:
    """Return the sort key a cursor of list `kind` carries; 422 if it is not one."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        value = None
    if not isinstance(value, list) or not value or value[0] != kind or not KEYS[kind](value[1:]):
        details = {"cursor": ["Not a cursor of this list; pass next_cursor back."]}
        raise APIError(422, "validation_error", "The request is invalid.", details)
    return value[1:]
