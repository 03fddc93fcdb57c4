"""The audit trail: one JSON line per security-relevant event on the `chat.audit` logger.

Token creation and revocation, limit refusals and turn takeovers are recorded here (other
features call `record` for theirs, e.g. approvals). Lines go to AUDIT_LOG: `stderr` (the
default), `off`, or a file path (appended; rotate it with logrotate's copytruncate).
`flask --app app audit` filters them. A line never holds message text or a token.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from flask import g, has_request_context, request
from opentelemetry import trace

AUDIT = logging.getLogger("chat.audit")


def setup_logger(destination: str) -> None:
    """Send audit lines (bare JSON) to `destination`, once per process: stderr, off or a path."""
    if AUDIT.handlers:
        return
    AUDIT.propagate = False
    if destination.strip().lower() in ("off", "none", ""):
        AUDIT.setLevel(logging.CRITICAL + 1)
        return
    if destination.strip().lower() == "stderr":
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
    else:
        handler = logging.FileHandler(destination, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))
    AUDIT.addHandler(handler)
    AUDIT.setLevel(logging.INFO)


def record(event: str, **fields: Any) -> None:
    """Write one audit line: when, what, the fields given, and who asked (inside a request)."""
    if not AUDIT.isEnabledFor(logging.INFO):
        return
    line: dict[str, Any] = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds")}
    line["event"] = event
    line.update(fields)
    if has_request_context():
        line.setdefault("user_id", g.get("user_id"))
        line.setdefault("by_token_id", g.get("token_id"))
        line.setdefault("ip", request.remote_addr)
        line.setdefault("route", request.url_rule.rule if request.url_rule else request.path)
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        line.setdefault("trace_id", format(context.trace_id, "032x"))
    AUDIT.info(json.dumps(line, separators=(",", ":"), default=str))


def query(
    lines: Iterable[str],
    event: str | None = None,
    user_id: int | None = None,
    since: datetime | None = None,
) -> Iterator[dict[str, Any]]:
    """The audit records among `lines` matching every filter given (other lines are skipped)."""
    for raw in lines:
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(item, dict) or "event" not in item:
            continue
        if event is not None and item["event"] != event:
            continue
        if user_id is not None and item.get("user_id") != user_id:
            continue
        if since is not None and _moment(item.get("ts")) < since:
            continue
        yield item


def _moment(text: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
