"""`md_text`: a value from the user's records, written into Markdown, renders as its own text.

Checked with markdown-it-py, the Python port of the markdown-it the page renders with, with raw
HTML on (so HTML would show as a node), tables and strikethrough on (as on the page).
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from demo_model.mdtext import md_text

MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
# Where answers put data: alone on a line, as a list item (or its start), inside bold, mid-text.
PLACES = (
    "{}",
    "- {}: 12.00 USD",
    "  - {}",
    "- 2025-03-01: {}, 5.00 USD",
    "**{}** in March",
    "At {}.",
)
MARKUP = (
    "[Verify your card now](https://evil.example/login)",
    "Corner Shop\n# Your account is locked",
    "![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)> <https://evil.example>",
    "*bold* _em_ **x** `code` ~~gone~~ a | b &amp; &#91; \\[",
    "- item",
    "1. first",
    "> quoted",
    "---",
    "===",
    "    indented code",
    "```",
    "[ref]: https://evil.example",
    "Tab\there\r\nand\x00nul\u2028line\u202eflipped",
)
SPECIALS = "\\`*_[]()<>!|~&#;:+=-.)0123456789 \n\t\r\x00\u2028\u00a0\u202eaZ/"
VALUES = st.text(st.one_of(st.sampled_from(SPECIALS), st.characters()), max_size=40)


def shown(value: str) -> str:
    """The text a value should read as: control characters as spaces, whitespace collapsed."""
    spaced = "".join(
        " "
        if ch in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        or ord(ch) < 32
        or 0x7F <= ord(ch) <= 0x9F
        else ch
        for ch in value
    )
    return " ".join(spaced.split())


def structure(tokens: list[Token]) -> list[Any]:
    """Every token's type and nesting, inline ones included (text content left out)."""
    out: list[Any] = []
    for token in tokens:
        out.append((token.type, token.tag, token.level))
        if token.children:
            out.append(structure([c for c in token.children if c.type != "text"]))
    return out


def visible(tokens: list[Token]) -> str:
    """The text a reader sees (no markup in these documents hides or adds any)."""
    return "".join(
        child.content
        for token in tokens
        for child in token.children or []
        if child.type in ("text", "code_inline")
    )


@settings(max_examples=400, deadline=None)
@given(VALUES)
@example(MARKUP[0])
@example(MARKUP[1])
def test_escaped_text_renders_as_itself_anywhere_an_answer_puts_it(value: str) -> None:
    text = shown(value)
    if not text:
        return  # nothing to show: the place reads differently with nothing in it
    for place in PLACES:
        written = MD.parse(place.format(md_text(value)))
        # The same document with a plain word where the value goes: the value adds no node.
        plain = MD.parse(place.format("WORD"))
        assert structure(written) == structure(plain), (value, place)
        assert visible(written) == visible(plain).replace("WORD", text, 1), (value, place)


def test_every_kind_of_markup_reads_as_text() -> None:
    for value in MARKUP:
        tokens = MD.parse(md_text(value))
        kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
        assert kinds <= {"paragraph_open", "inline", "paragraph_close", "text"}, value
        assert visible(tokens) == shown(value)
        assert "\n" not in md_text(value)


def test_plain_names_stay_readable() -> None:
    for name in ("City Power & Light", "Trader Joe's", "T-Mobile", "iCloud+", "2025-03-01"):
        assert md_text(name) == name
    assert md_text("1,162.00 EUR") == "1,162.00 EUR"
    assert md_text("-22.2") == "-22.2"
    assert md_text("  Pho\n88 ") == "Pho 88"
