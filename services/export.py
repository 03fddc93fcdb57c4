"""A chat written out for download: Markdown for people, JSON for programs, streamed.

The active branch is read `BATCH` messages at a time, each batch rendered and handed on
before the next is read, so an export holds one batch whatever the chat's size. Each part
is read and rendered in the engine's `store` pool; the host writes it from its loop.

In Markdown, what the model wrote stays Markdown; every other stored text (titles, the
user's words, tool names, inputs and results) is escaped so it cannot become structure it
was not, and no control or bidirectional-override character reaches the file as itself.
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

from models.db import Database
from models.searchable import text_of
from services.chart_export import Images, chart_specs
from services.chart_export import markdown as chart_markdown
from services.sessions import branch_messages

FORMATS = {"md": "text/markdown; charset=utf-8", "json": "application/json"}
BATCH = 200

Part = Callable[[], bytes]
# Characters shown as `\uXXXX` instead of themselves: controls (but tab and newline), line
# and paragraph separators, and the marks and overrides that reorder text on screen.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufff9-\ufffb" + _BIDI + "]")
# Escaped anywhere in text shown as plain text: what starts emphasis, code, links, images,
# HTML, entities, tables, strike-through and (in a heading) its closing sequence.
_INLINE = re.compile(r"([\\`*_\[\]<>|~&#])")
# Escaped at the start of a line: what would make it a list, rule or setext heading (the
# rest is escaped anywhere); indentation is dropped, as it would make code of the line.
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)
_LINE_START = re.compile(r"^(?:([-+=])|(\d+)(?=[.)]))", re.MULTILINE)


def parts(db: Database, head: dict[str, Any], ids: list[str], fmt: str) -> Iterator[Part]:
    """The export of a session (`session_head`) whose shown branch is `ids`, as parts."""
    batches = [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]
    if fmt == "json":
        yield partial(_json_head, head)
        for n, batch in enumerate(batches):
            yield partial(_json_batch, db, head["id"], batch, n == 0)
        yield lambda: b"\n  ]\n}\n"
        return
    yield partial(_markdown_head, head)
    images = Images()  # the charts this export may still draw
    for batch in batches:
        yield partial(_markdown_batch, db, head["id"], batch, images)


def body(
    pieces: Iterator[Part], call: Callable[[Part], Awaitable[bytes]]
) -> Callable[[], AsyncIterator[bytes]]:
    """A stream of the parts, each made by `call` (the store pool) when the last was sent."""

    async def stream() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield await call(piece)

    return stream


def filename(session: dict[str, Any], fmt: str) -> str:
    """`chat-<title words>.<fmt>`: ASCII letters, digits and dashes, safe in a quoted header."""
    title = unicodedata.normalize("NFKD", session.get("title") or "")
    words = re.sub(r"[^A-Za-z0-9]+", "-", title.encode("ascii", "ignore").decode()).strip("-")
    return f"chat-{words[:60].rstrip('-') or session['id']}.{fmt}"


# JSON


def _json_head(head: dict[str, Any]) -> bytes:
    """The session as `GET /api/sessions/<id>` shows it, `exported_at`, and `messages` opened."""
    fields = {k: v for k, v in head.items() if k != "running_turn_id"}
    fields["exported_at"] = datetime.now(UTC).isoformat()
    text = json.dumps(fields, ensure_ascii=False, indent=2)
    return (text[: text.rindex("}")].rstrip() + ',\n  "messages": [').encode()


def _json_batch(db: Database, session_id: str, ids: list[str], first: bool) -> bytes:
    messages = branch_messages(db, session_id, ids)
    # One message a line: json's C encoder, which an indent would turn off.
    text = ",".join("\n    " + json.dumps(m, ensure_ascii=False) for m in messages)
    return (text if first else "," + text).encode()


# Markdown


def _markdown_head(head: dict[str, Any]) -> bytes:
    title = _plain(_one_line(head.get("title") or "")) or "Untitled chat"
    started = _plain(head.get("created_at") or "at an unknown time")
    exported = f"Exported {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from the chat started {started}."
    return _visible(f"# {title}\n\n{exported}\n\n").encode()


def _markdown_batch(db: Database, session_id: str, ids: list[str], images: Images) -> bytes:
    lines: list[str] = []
    for message in branch_messages(db, session_id, ids):
        if message["status"] != "discarded":
            lines += _message(message, images)
    return _visible("".join(line + "\n" for line in lines)).encode()


def _message(message: dict[str, Any], images: Images) -> list[str]:
    blocks = [*(message["content"] or []), *(message["partial_content"] or [])]
    blocks = [b for b in blocks if isinstance(b, dict)]
    if message["role"] == "user":
        question = "\n\n".join(_plain(t) for t in text_of(message["content"]))
        out = ["## You", "", question, ""] if question else []
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            declined = block.get("declined")
            if isinstance(declined, dict):  # the user's decision, not the model's instruction
                reason = (
                    f": {_plain(_one_line(str(declined['reason'])))}"
                    if declined.get("reason")
                    else ""
                )
                out += [f"**Declined**{reason}", ""]
                continue
            label = "Tool error" if block.get("is_error") else "Tool result"
            text = _result_text(block.get("content"))
            out += [f"**{label}**", "", _fenced(text), ""]
            if not block.get("is_error"):
                for spec in chart_specs(_parsed(text)):
                    out += chart_markdown(spec, images)
        return out
    model = f" ({_plain(_one_line(str(message['model'])))})" if message.get("model") else ""
    out = [f"## Assistant{model}", ""]
    run: list[str] = []
    for block in blocks:
        if block.get("type") == "text":
            # One run of text blocks is one text: citations split it where they start and stop.
            run.append(str(block.get("text") or ""))
            continue
        out += _run(run)
        run = []
        if block.get("type") == "tool_use":
            name = _code_span(_one_line(str(block.get("name"))))
            out += [f"**Tool call** {name}", "", _fenced(block.get("input")), ""]
    out += _run(run)
    if message["status"] == "incomplete" or message["partial_content"]:
        out += ["_(This answer was cut off.)_", ""]
    return out


def _run(texts: list[str]) -> list[str]:
    text = "".join(texts).strip("\n")
    return [text, ""] if text else []


def _parsed(text: Any) -> Any:
    """`text` parsed as JSON, or None."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _result_text(content: Any) -> Any:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return content


def _fenced(value: Any) -> str:
    """A fenced code block of `value` (JSON, parsed first when it is a JSON string)."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    language = "" if isinstance(value, str) else "json"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _code_span(text: str) -> str:
    """`text` as inline code, whatever backticks it holds."""
    ticks = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _plain(text: str) -> str:
    """Stored text shown as itself in Markdown: nothing in it becomes structure."""
    text = _INLINE.sub(r"\\\1", _INDENT.sub("", text))
    return _LINE_START.sub(_escape_start, text)


def _escape_start(found: re.Match[str]) -> str:
    mark, number = found.groups()
    return "\\" + mark if mark else number + "\\"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _visible(text: str) -> str:
    """`text` with each control and bidirectional-override character written as `\\uXXXX`."""
    text = text.replace("\r\n", "\n")
    return _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
