"""Tests for the incremental SSE decoder (streaming.wire.sse)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streaming.wire.sse import SSEDecoder, SSEEvent, event_payload, iter_json_events

UTF8_SPLIT = "anthropic-sdk-python-inline__utf8_multibyte_split_across_chunks.sse"
U2028 = "anthropic-sdk-python-inline__u2028_line_separator_inside_data.sse"
NO_TRAILING_BLANK = "anthropic-sdk-python__basic_text_with_ping.sse"
DONE_FILE = "vercel-ai-inline__tool_use_input_in_content_block_start_no_deltas.sse"
DATA_ONLY = "vercel-ai-inline__redacted_thinking_then_text.sse"

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"


def decode_all(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    assert decoder.flush() == []
    return events


def test_every_transcript_decodes(transcript: str, load_bytes) -> None:
    raw = load_bytes(transcript)
    events = decode_all([raw])
    assert events, "at least one event"
    # Every dispatched event matches one `data:` group of the file.
    assert len(events) <= raw.count(b"data:")
    assert decode_all([raw[i : i + 1] for i in range(len(raw))]) == events


def test_every_parseable_transcript_yields_typed_json(message_transcript: str, load_bytes) -> None:
    payloads = list(iter_json_events([load_bytes(message_transcript)]))
    assert payloads[0]["type"] in ("message_start", "error")
    assert all(isinstance(p.get("type"), str) for p in payloads)


def test_elided_docs_transcript_skips_unparseable_events(load_bytes) -> None:
    raw = load_bytes("anthropic-docs-2025-08__web_search_server_tool_ELIDED.sse")
    events = decode_all([raw])
    payloads = list(iter_json_events([raw]))
    # The web_search_tool_result start (with a literal `...` inside) is not JSON: skipped.
    assert len(payloads) == len(events) - 1
    assert "web_search_tool_result" not in [
        p.get("content_block", {}).get("type") for p in payloads
    ]


def test_u2028_stays_inside_data(load_bytes) -> None:
    events = decode_all([load_bytes(U2028)])
    assert [json.loads(e.data)["content"] for e in events] == [" culpa", " \u2028", "foo"]


def test_utf8_split_across_chunks_as_in_sources_md(load_bytes) -> None:
    chunks = [
        b'data: {"content":"',
        b"\xd0",
        b"\xb8\xd0\xb7\xd0",
        b"\xb2\xd0\xb5\xd1\x81\xd1\x82\xd0\xbd\xd0\xb8",
        b'"}\n',
        b"\n",
    ]
    assert b"".join(chunks) == load_bytes(UTF8_SPLIT)
    events = decode_all(chunks)
    assert len(events) == 1
    assert json.loads(events[0].data) == {
        "content": "\u0438\u0437\u0432\u0435\u0441\u0442\u043d\u0438"
    }


def test_data_only_events_get_type_from_json(load_bytes) -> None:
    raw = load_bytes(DATA_ONLY)
    assert all(e.event is None for e in decode_all([raw]))
    types = [p["type"] for p in iter_json_events([raw])]
    assert types[:3] == ["message_start", "content_block_start", "content_block_stop"]
    assert types[-1] == "message_stop"


def test_event_field_fills_missing_type() -> None:
    payload = event_payload(SSEEvent("ping", "{}", None))
    assert payload == {"type": "ping"}
    # The JSON's own type wins over the `event:` line.
    assert event_payload(SSEEvent("error", '{"type":"x"}', None)) == {"type": "x"}
    assert event_payload(SSEEvent(None, "{}", None)) == {}


def test_done_and_non_objects_are_skipped(load_bytes) -> None:
    raw = load_bytes(DONE_FILE)
    assert decode_all([raw])[-1].data == "[DONE]"
    payloads = list(iter_json_events([raw]))
    assert [p["type"] for p in payloads][-1] == "message_delta"
    assert list(iter_json_events([b"data: [1,2]\n\ndata: 3\n\ndata: nope\n\n"])) == []


def test_missing_trailing_blank_line_does_not_dispatch_last_event(load_bytes) -> None:
    raw = load_bytes(NO_TRAILING_BLANK)
    assert not raw.endswith(b"\n")
    decoder = SSEDecoder()
    events = decoder.feed(raw)
    assert events[-1].event == "message_delta"
    assert decoder.flush() == []
    assert decoder.pending() == SSEEvent("message_stop", '{"type":"message_stop"}', None)
    assert [p["type"] for p in iter_json_events([raw])][-1] == "message_delta"


def test_single_newline_at_end_is_not_enough() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'event: a\ndata: {"x":1}\n') == []
    assert decoder.flush() == []
    assert decoder.pending() == SSEEvent("a", '{"x":1}', None)


@pytest.mark.parametrize("newline", [b"\r\n", b"\r", b"\n"])
def test_line_endings(newline: bytes, load_bytes) -> None:
    raw = load_bytes("vercel-ai__basic_text.sse")
    converted = raw.replace(b"\n", newline)
    expected = decode_all([raw])
    assert decode_all([converted]) == expected
    # Splitting inside a CRLF pair must not produce an extra blank line.
    assert decode_all([converted[i : i + 1] for i in range(len(converted))]) == expected


def test_crlf_split_between_cr_and_lf() -> None:
    assert decode_all([b"data: a\r", b"\n", b"\r", b"\ndata: b\r\n\r\n"]) == [
        SSEEvent(None, "a", None),
        SSEEvent(None, "b", None),
    ]


def test_cr_cr_ends_event() -> None:
    assert decode_all([b"data: a\r\rdata: b\n\n"]) == [
        SSEEvent(None, "a", None),
        SSEEvent(None, "b", None),
    ]


def test_multi_line_data_joined_with_newline() -> None:
    events = decode_all([b"event: e\ndata: one\ndata:two\ndata:  three\ndata\n\n"])
    assert events == [SSEEvent("e", "one\ntwo\n three\n", None)]


def test_comments_ignored_and_id_persists() -> None:
    events = decode_all(
        [b": keep-alive\n\nid: 7\n: note\nevent: x\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n"]
    )
    assert events == [
        SSEEvent("x", "1", "7"),
        SSEEvent(None, "2", "7"),
        SSEEvent(None, "3", ""),
    ]


def test_retry_and_unknown_fields() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 1500\nfoo: bar\nretry: soon\ndata: x\n\n") == [
        SSEEvent(None, "x", None)
    ]
    assert decoder.retry == 1500


def test_event_without_data_is_not_dispatched() -> None:
    assert decode_all([b"event: ping\n\nid: 3\n\n"]) == []


def test_bom_stripped_once() -> None:
    events = decode_all([b"\xef\xbb", b"\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"])
    assert events == [SSEEvent(None, "a", None)]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert decode_all([b"data: \xff\n\n"]) == [SSEEvent(None, "\ufffd", None)]


def test_long_line_over_many_chunks() -> None:
    body = b"x" * 100_000
    raw = b"data: " + body + b"\n\n"
    events = decode_all([raw[i : i + 7] for i in range(0, len(raw), 7)])
    assert events == [SSEEvent(None, body.decode(), None)]
