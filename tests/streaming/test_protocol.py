"""Tests for our client-facing SSE encoding (streaming.wire.protocol)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming.wire import protocol
from streaming.wire.protocol import KEEPALIVE, decode_stream, encode_event
from streaming.wire.sse import SSEDecoder

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def test_exact_wire_format() -> None:
    raw = encode_event(3, protocol.BLOCK_DELTA, {"index": 0, "text": "hé"})
    assert raw == 'id: 3\nevent: block_delta\ndata: {"index":0,"text":"hé"}\n\n'.encode()


def test_round_trip_with_keepalives_and_ids() -> None:
    payloads = [
        (1, protocol.TURN_START, {"turn": "t1"}),
        (2, protocol.MESSAGE_START, {"message": {"id": "m"}}),
        (3, protocol.BLOCK_DELTA, {"delta": {"type": "text_delta", "text": "a\nb\r\nc"}}),
        (4, protocol.TURN_END, {}),
    ]
    raw = KEEPALIVE.join(encode_event(*p) for p in payloads) + KEEPALIVE
    assert decode_stream(raw) == payloads


@pytest.mark.parametrize(
    "text",
    ["line\nbreak", "cr\rlf\r\n", "sep\u2028para\u2029", "nel\x85", "emoji \U0001f600", "\x00nul"],
)
def test_awkward_text_stays_on_one_data_line(text: str) -> None:
    raw = encode_event(9, protocol.BLOCK_DELTA, {"text": text})
    lines = raw.split(b"\n")
    assert lines[2].startswith(b"data: ") and lines[3:] == [b"", b""]
    assert b"\r" not in raw
    # Readers that split with str.splitlines() (U+2028, U+2029, U+0085 too) see the same lines.
    assert raw.decode().splitlines() == [line.decode() for line in lines[:4]]
    assert decode_stream(raw) == [(9, "block_delta", {"text": text})]


@given(st.text())
def test_any_text_splits_into_the_same_lines_for_every_reader(text: str) -> None:
    raw = encode_event(1, protocol.BLOCK_DELTA, {"delta": {"type": "text_delta", "text": text}})
    lines = raw.decode("utf-8", "surrogatepass").splitlines()
    assert len(lines) == 4 and lines[2].startswith("data: ") and lines[3] == ""
    assert decode_stream(raw)[0][2]["delta"]["text"] == text


def test_event_type_with_newline_rejected() -> None:
    with pytest.raises(ValueError):
        encode_event(1, "bad\nevent", {})


def test_event_names() -> None:
    names = [
        protocol.TURN_START,
        protocol.MESSAGE_START,
        protocol.BLOCK_START,
        protocol.BLOCK_DELTA,
        protocol.BLOCK_END,
        protocol.MESSAGE_END,
        protocol.TOOL_RESULT,
        protocol.ERROR,
        protocol.TURN_END,
        protocol.MESSAGE_DISCARDED,
    ]
    assert len(set(names)) == len(names)
    assert protocol.TURN_START == "turn_start"
    assert protocol.MESSAGE_DISCARDED == "message_discarded"


def test_keepalive_is_a_comment() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(KEEPALIVE * 3) == []
    assert decoder.pending() is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(
        st.tuples(
            st.integers(0, 10**12),
            st.sampled_from([protocol.BLOCK_DELTA, protocol.TOOL_RESULT, protocol.ERROR]),
            st.dictionaries(st.text(), json_values, max_size=4),
        ),
        max_size=5,
    ),
    cut=st.integers(0, 10**6),
)
def test_round_trip_property(events, cut) -> None:
    raw = b"".join(encode_event(*event) for event in events)
    assert decode_stream(raw) == events
    # Split anywhere, including inside multi-byte characters.
    cut %= len(raw) + 1
    decoder = SSEDecoder()
    decoded = decoder.feed(raw[:cut]) + decoder.feed(raw[cut:])
    assert [(int(e.id), e.event, json.loads(e.data)) for e in decoded] == events


def test_lone_surrogate_is_escaped_not_raised() -> None:
    text = json.loads('"half \\ud83d emoji"')
    raw = encode_event(1, protocol.BLOCK_DELTA, {"text": text})
    raw.decode("utf-8")  # valid UTF-8 on the wire
    assert decode_stream(raw) == [(1, "block_delta", {"text": text})]


def test_the_page_reads_the_servers_own_list_of_event_types(client: Any) -> None:
    from pathlib import Path

    served = client.get("/web/js/protocol.js")
    assert served.status_code == 200 and served.mimetype == "text/javascript"
    listed = json.loads(exported(served.get_data(as_text=True))["EVENT_TYPES"])
    assert listed == list(protocol.EVENT_TYPES)
    constants = {
        value for name, value in vars(protocol).items() if name.isupper() and isinstance(value, str)
    }
    assert constants == set(protocol.EVENT_TYPES)  # every event type a turn sends is listed
    follow = (Path(__file__).parents[2] / "web" / "js" / "follow.js").read_text()
    assert "from './protocol.js'" in follow and "'turn_start'" not in follow  # no list of its own


def test_the_page_polls_at_the_apps_scaled_timing(app: Any, client: Any) -> None:
    from dataclasses import replace

    from config import Timings

    scaled = Timings().scaled(0.25)  # as TIME_SCALE=0.25 would
    app.config["SETTINGS"] = replace(app.config["SETTINGS"], timings=scaled)
    source = client.get("/web/js/protocol.js").get_data(as_text=True)
    assert exported(source)["PAGE_POLL_MS"] == str(round(Timings().page_poll * 250))


def test_the_page_knows_the_servers_message_limit(app: Any, client: Any) -> None:
    from dataclasses import replace

    app.config["SETTINGS"] = replace(app.config["SETTINGS"], max_message_chars=1234)
    source = client.get("/web/js/protocol.js").get_data(as_text=True)
    assert exported(source)["MAX_MESSAGE_CHARS"] == "1234"


def exported(source: str) -> dict[str, str]:
    """The module's `export const NAME = value;` lines as {NAME: value source}."""
    found = {}
    for line in source.splitlines():
        name, value = line.removeprefix("export const ").split(" = ", 1)
        value = value.removesuffix(";")
        found[name] = value.removeprefix("Object.freeze(").removesuffix(")")
    return found
