"""A chat written out for download: Markdown for people, JSON for programs."""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from services.search import text_of

FORMATS = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


def export_json(session: dict[str, Any]) -> str:
    """The session as `GET /api/sessions/<id>` shows it, with the moment it was exported."""
    body = {**session, "exported_at": datetime.now(UTC).isoformat()}
    body.pop("running_turn_id", None)
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


def export_markdown(session: dict[str, Any]) -> str:
    """The session as a Markdown document: questions, answers, tool calls and their results."""
    lines = [f"# {session.get('title') or 'Untitled chat'}", ""]
    lines += [
        f"Exported {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from the chat started "
        f"{session.get('created_at') or 'at an unknown time'}.",
        "",
    ]
    for message in session["messages"]:
        if message["status"] == "discarded":
            continue
        lines += _message(message)
    return "\n".join(lines).rstrip() + "\n"


def _message(message: dict[str, Any]) -> list[str]:
    blocks = [*(message["content"] or []), *(message["partial_content"] or [])]
    if message["role"] == "user":
        question = "\n\n".join(text_of(message["content"]))
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        out = ["## You", "", question, ""] if question else []
        for block in results:
            declined = block.get("declined")
            if isinstance(declined, dict):  # the user's decision, not the model's instruction
                reason = f": {declined['reason']}" if declined.get("reason") else ""
                out += [f"**Declined**{reason}", ""]
                continue
            label = "Tool error" if block.get("is_error") else "Tool result"
            out += [f"**{label}**", "", _fenced(_result_text(block.get("content"))), ""]
        return out
    model = f" ({message['model']})" if message.get("model") else ""
    out = [f"## Assistant{model}", ""]
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out += [block.get("text", ""), ""]
        elif kind == "tool_use":
            out += [f"**Tool call** `{block.get('name')}`", "", _fenced(block.get("input")), ""]
    if message["status"] == "incomplete" or message["partial_content"]:
        out += ["_(This answer was cut off.)_", ""]
    return out


def _result_text(content: Any) -> Any:
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
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


def filename(session: dict[str, Any], fmt: str) -> str:
    """`chat-<title words>.<fmt>`: ASCII letters, digits and dashes, safe in a quoted header."""
    title = unicodedata.normalize("NFKD", session.get("title") or "")
    words = re.sub(r"[^A-Za-z0-9]+", "-", title.encode("ascii", "ignore").decode()).strip("-")
    return f"chat-{words[:60].rstrip('-') or session['id']}.{fmt}"
