"""What one line of plain text never holds, and text made into one: titles, names, filenames,
a statement's payees and purposes, credentials."""

from __future__ import annotations

import re

# What one line of plain text never holds: a C0 or C1 control character (nor DEL), a line or
# paragraph separator, a bidi embedding, override or isolate (they reorder the text after them).
NOT_PLAIN = r"\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
# The whitespace of WS that one line of plain text may hold.
SPACES = r" \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff"
# The characters of NOT_PLAIN that break a line or space words: read as a space.
_BREAKS = re.compile(r"[\t\n\v\f\r\x1c-\x1f\x85\u2028\u2029]+")
_NOT_PLAIN = re.compile(f"[{NOT_PLAIN}]")


def one_line(text: str) -> str:
    """`text` as one line of plain text: line breaks and tabs become a space, every other
    control and bidi formatting character is dropped."""
    if not _NOT_PLAIN.search(text):
        return text
    return _NOT_PLAIN.sub("", _BREAKS.sub(" ", text))
