"""The searchable form of what people read: case-folded, whitespace-collapsed text (pure).

`messages.search_text` and `chat_sessions.search_title` hold it, and a search folds its query
the same way, so the database alone decides what matches, with one `LIKE` on either backend.
Migration 0009 inlines a copy of `fold` (migrations must not import code that may change).
"""

from __future__ import annotations

import unicodedata
from typing import Any

TITLE_CHARS = 200
# Between the text blocks of one message: folded text holds no newline (whitespace becomes
# one space) and neither does a folded query, so a match never spans two blocks.
BLOCK_SEPARATOR = "\n"


def fold(text: str) -> str:
    """`text` in NFKC, case-folded, each run of whitespace one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_of(content: Any) -> list[str]:
    """The text a person reads in stored message content: its text blocks."""
    if isinstance(content, str):
        return [content]
    return [
        b["text"]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
    ]


def search_text(content: Any) -> str | None:
    """What `messages.search_text` holds for `content` (None: no text to find)."""
    folded = [f for f in (fold(t) for t in text_of(content)) if f]
    return BLOCK_SEPARATOR.join(folded) or None


def search_title(title: str | None) -> str | None:
    """What `chat_sessions.search_title` holds for `title` (cut to the column's width)."""
    return fold(title)[:TITLE_CHARS] or None if title else None
