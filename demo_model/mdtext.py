"""Data written into the demo model's Markdown answers reads as text, never as markup.

Merchant, category, account and budget names, dates, currency codes and error messages come
from the user's records or a tool result; `md_text` is the one place they pass on their way
into an answer. It turns line breaks and other control characters into spaces (so a value
stays on its line and cannot start a block), and backslash-escapes every character that can
begin inline markup anywhere (links, images, emphasis, code, raw HTML, autolinks, entities,
strikethrough, table cells) and those that begin a block at the start of a line (headings,
quotes, list items, thematic breaks). CommonMark renders `\\x` as `x` for ASCII punctuation,
so the text shown is the value itself.
"""

from __future__ import annotations

import re
import unicodedata

# Escaped wherever they stand: each can open or close inline markup.
_INLINE = re.compile(r"[\\`*_\[\]<|~]")
# `&` only where it would start an entity or a numeric character reference.
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
# At the start of a value, which may be the start of a line or of a list item's content: a
# heading, quote, list item, thematic break or setext underline ("-22.2%" stays as it is).
_LEAD = re.compile(r"\A(?:(>|([#+=-])(?=\s|\Z|\2))|(\d{1,9})([.)])(?=\s|\Z))")
# Bidirectional embeddings, overrides and isolates: invisible, and they reorder what is shown.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def md_text(value: object) -> str:
    """Return `value` as Markdown that renders as its own text, on one line."""
    text = "".join(" " if _is_control(ch) else ch for ch in str(value))
    text = " ".join(text.split())
    text = _ENTITY.sub(r"\\&", _INLINE.sub(r"\\\g<0>", text))
    return _LEAD.sub(_escape_lead, text, count=1)


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI


def _escape_lead(found: re.Match[str]) -> str:
    if found.group(1):
        return "\\" + found.group(1)
    return f"{found.group(3)}\\{found.group(4)}"
