"""OFX's markup read as one flat stream of tags: SGML 1.x (leaves without end tags) and XML 2.x
alike, in one pass whose work is linear in the text (no tree, no backtracking, CDATA and
comments found with one `find` each). A DOCTYPE is refused before anything is read."""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Callable
from functools import partial

from statements.parsed import unparsable

# A tag, the text after it, and (XML) its end tag right after that text: one match per leaf.
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_.:-]*)[^<>]*>([^<]*)(?:(</\2>)[^<]*)?")
_DOCTYPE = re.compile(rb"<!\s*DOCTYPE", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_HEADER_FIELD = re.compile(rb"^\s*([A-Z]+)\s*:\s*([^\r\n]*)", re.MULTILINE)
# What a tag is to a reader of the stream: the start of an element, or its end.
START, END = 0, 1
SPECIALS = (
    ("<![CDATA[", "]]>", "CDATA section"),
    ("<!--", "-->", "comment"),
    ("<?", "?>", "processing instruction"),
)


def ofx_text(data: bytes) -> str:
    """The OFX file's text, in the encoding its header or XML declaration says (UTF-8 when it
    says none, Windows-1252 when that fails); 422 for any DOCTYPE."""
    if _DOCTYPE.search(data) is not None:
        raise unparsable(
            "an OFX file with a DOCTYPE is refused (nothing in it was read).", element="DOCTYPE"
        )
    body_at = data.find(b"<")
    head = data[: body_at if body_at >= 0 else 4096][:4096]
    declared = _XML_ENCODING.search(data[:4096])
    encoding = declared.group(1).decode("ascii") if declared else None
    if encoding is None:
        fields = {
            k.decode(): v.strip().decode("ascii", "replace") for k, v in _HEADER_FIELD.findall(head)
        }
        if fields.get("ENCODING", "").upper().replace("-", "") in ("UTF8", "UNICODE"):
            encoding = "utf-8"
        elif fields.get("CHARSET", "NONE").upper() not in ("NONE", ""):
            encoding = "cp1252"
    if data.startswith(b"\xef\xbb\xbf"):
        data, encoding = data[3:], "utf-8"
    try:
        codec = codecs.lookup(encoding or "utf-8").name
    except LookupError:
        codec = "utf-8"
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def tags(text: str, start: int) -> tuple[Callable[[int], re.Match[str] | None], int, bool]:
    """What finds every tag of `text` from offset `start` on: `next_tag(pos)` is the first tag
    at or after `pos` as a match of _TAG (groups: `/` or "", the name, the text after the tag,
    and an XML end tag right after that text), or None when none is left, comments,
    processing instructions and CDATA skipped; the offset to ask it from first; and whether
    the text holds CDATA (what `leaf` needs). Text that is no tag (a stray `<`) is skipped.
    A reader may ask from any offset a tag ends at, or one it read past on its own."""
    pos = text.find("<", start)
    while pos >= 0 and text.startswith(("<?", "<!--"), pos):  # the XML and OFX declarations
        pos = _special(text, pos)
    if pos < 0 or pos >= len(text):
        return _none, len(text), False
    if text.find("<!", pos) >= 0 or text.find("<?", pos) >= 0:
        next_tag: Callable[[int], re.Match[str] | None] = partial(_one_by_one, text)
    else:
        next_tag = partial(_TAG.search, text)
    return next_tag, pos, text.find("<![CDATA[", pos) >= 0


def leaf(text: str, found: re.Match[str], after: str, cdata: bool) -> str:
    """The value of the tag `found`: the text `after` it stripped, entities unescaped, or the
    CDATA section right after it (`cdata`: the text holds one)."""
    value = after.strip()
    if not value:
        if cdata and text.startswith("<![CDATA[", found.end()):
            value = _cdata(text, found.end())
    elif "&" in value:
        value = html.unescape(value)
    return value


def _none(pos: int) -> None:
    """No tag: the text holds none."""
    return None


def _one_by_one(text: str, pos: int) -> re.Match[str] | None:
    """The tag at or after `pos`, skipping comments, processing instructions and CDATA."""
    match, size = _TAG.match, len(text)
    while pos < size:
        found = match(text, pos)
        if found is not None:
            return found
        pos = _special(text, pos)
    return None


class Lines:
    """Line numbers of offsets of one text, counted incrementally (offsets mostly grow)."""

    __slots__ = ("_line", "_pos", "_text")

    def __init__(self, text: str) -> None:
        self._text, self._pos, self._line = text, 0, 1

    def at(self, pos: int) -> int:
        """The line `pos` is on."""
        if pos < self._pos:
            self._pos, self._line = 0, 1
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line


def _cdata(text: str, at: int) -> str:
    """The text of the CDATA section at `at` and what follows it up to the next tag."""
    close = text.find("]]>", at)
    if close < 0:
        raise unparsable(f"line {Lines(text).at(at)}: a CDATA section is not closed.")
    following = text.find("<", close + 3)
    following = len(text) if following < 0 else following
    return (text[at + 9 : close] + text[close + 3 : following]).strip()


def _special(text: str, pos: int) -> int:
    """Skip a comment, a processing instruction or stray CDATA at `pos`: the next tag's offset
    (the text's end when none follows); 422 for a declaration or a tag that is not closed."""
    for opening, closing, what in SPECIALS:
        if text.startswith(opening, pos):
            close = text.find(closing, pos)
            if close < 0:
                line = Lines(text).at(pos)
                raise unparsable(f"line {line}: a {what} is not closed.", line=line)
            following = text.find("<", close + len(closing))
            return len(text) if following < 0 else following
    line = Lines(text).at(pos)
    if text.startswith("<!", pos):
        raise unparsable(f"line {line}: markup declarations are refused.", line=line)
    raise unparsable(f"line {line}: a tag is not closed or has no name.", line=line)
