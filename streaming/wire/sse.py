"""Incremental Server-Sent Events decoder over raw bytes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from jiter import from_json

__all__ = ["SSEDecoder", "SSEEvent", "event_payload", "iter_json_events"]


class SSEEvent(NamedTuple):
    """One dispatched SSE event: `event:` name (None if absent), joined data, last event id."""

    event: str | None
    data: str | bytes  # bytes from a decoder made with decode=False
    id: str | None


class SSEDecoder:
    """Incremental SSE decoder: feed raw byte chunks, get complete events."""

    __slots__ = (
        "_data",
        "_decode",
        "_event",
        "_first_line",
        "_last_id",
        "_partial",
        "_skip_lf",
        "retry",
    )

    def __init__(self, decode: bool = True) -> None:
        """Create a decoder; with `decode=False` event data stays UTF-8 bytes."""
        self._decode = decode
        # Bytes of an unterminated line; kept as a list so a long line split over
        # many chunks is joined once rather than re-concatenated per chunk.
        self._partial: list[bytes] = []
        # A chunk ended in "\r": a "\n" opening the next chunk completes that CRLF.
        self._skip_lf = False
        self._event: str | None = None
        self._data: list[bytes] = []
        self._last_id: str | None = None
        self._first_line = True
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume a chunk of bytes and return the events it completed."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._partial.append(chunk)
            return []
        if self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
            self._partial = []
        # bytes.splitlines() splits only on \r\n, \n and \r, never on U+2028 or
        # other Unicode separators; lines are decoded only once they are complete,
        # so multi-byte characters split across chunks survive.
        lines = chunk.splitlines()
        tail = chunk[-1:]
        if tail == b"\r":
            self._skip_lf = True
        elif tail != b"\n":
            self._partial.append(lines.pop())
        events: list[SSEEvent] = []
        data = self._data
        for raw in lines:
            # Inline fast paths for the lines every event has (a call per line costs more
            # than the line's own work); the first line may carry a BOM, so it takes _line.
            if raw[:5] == b"data:" and not self._first_line:
                data.append(raw[6:] if raw[5:6] == b" " else raw[5:])
                continue
            event = self._dispatch() if not raw and not self._first_line else self._line(raw)
            if event is not None:
                events.append(event)
                data = self._data
        return events

    def flush(self) -> list[SSEEvent]:
        """End the stream; always [] since an event lacking its blank line is discarded."""
        if self._partial:
            raw = b"".join(self._partial)
            self._partial = []
            self._line(raw)  # a non-empty line never dispatches; it only fills pending()
        self._skip_lf = False
        return []

    def pending(self) -> SSEEvent | None:
        """Return the undispatched event being built (for diagnostics), or None."""
        if not self._data and self._event is None:
            return None
        return SSEEvent(
            self._event, b"\n".join(self._data).decode("utf-8", "replace"), self._last_id
        )

    def _line(self, raw: bytes) -> SSEEvent | None:
        # Hot path: data lines stay bytes and are decoded once per event, at dispatch.
        if raw[:5] == b"data:" and not self._first_line:
            self._data.append(raw[6:] if raw[5:6] == b" " else raw[5:])
            return None
        line = raw.decode("utf-8", "replace")
        if self._first_line:
            self._first_line = False
            if line.startswith("\ufeff"):
                line = line[1:]
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value.encode())
        elif name == "event":
            self._event = value or None
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data = self._data
        if not data:
            self._event = None
            return None
        raw = data[0] if len(data) == 1 else b"\n".join(data)
        event = SSEEvent(
            self._event, raw.decode("utf-8", "replace") if self._decode else raw, self._last_id
        )
        self._data = []
        self._event = None
        return event


def event_payload(event: SSEEvent) -> dict[str, Any] | None:
    """Parse the event's JSON object, taking `type` from `event:` if absent; else None."""
    data = event.data
    try:
        # jiter (the SDK's own JSON parser) reads the bytes about 4x faster than json.loads.
        payload = from_json(data if isinstance(data, bytes) else data.encode())
    except ValueError:
        try:
            # jiter rejects invalid UTF-8 that json.loads takes after a lossy decode.
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            payload = json.loads(text)
        except (ValueError, RecursionError):
            return None
    if not isinstance(payload, dict):
        return None
    if "type" not in payload and event.event is not None:
        payload["type"] = event.event
    return payload


class JSONEvents:
    """Push-style decoding: feed byte chunks as they arrive, get each event's JSON object."""

    def __init__(self) -> None:
        self._decoder = SSEDecoder(decode=False)

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Return the payloads of the events this chunk completes (non-objects skipped)."""
        out = []
        for event in self._decoder.feed(chunk):
            payload = event_payload(event)
            if payload is not None:
                out.append(payload)
        return out

    def flush(self) -> None:
        """End of stream: a partial event without its blank line is dropped."""
        self._decoder.flush()


def iter_json_events(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Decode SSE byte chunks and yield each event's JSON object payload, skipping non-objects."""
    events = JSONEvents()
    for chunk in chunks:
        yield from events.feed(chunk)
    events.flush()
