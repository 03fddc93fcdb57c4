"""FaultyUpstream driven by the real anthropic SDK over loopback TCP, one fault at a time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tests.conftest import TRANSCRIPTS
from tests.faults.kinds import event_data, split_events
from tests.faults.upstream import (
    CutToolAtMaxTokens,
    ErrorAfter,
    FaultyUpstream,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
    Transcript,
    expected_reply,
)
from tests.waits import PATIENCE, wait_until

TOOLS = [
    {"name": "get_spending_summary", "description": "Spend.", "input_schema": {"type": "object"}}
]
TOOL_REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "How much did I spend on groceries last month?"}],
    "tools": TOOLS,
}
TEXT_REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "hello"}],
}
OVERLOADED = TRANSCRIPTS / "anthropic-sdk-python-inline__error_event_overloaded_only.sse"


@pytest.fixture
def up() -> Iterator[FaultyUpstream]:
    """A running upstream, closed after the test."""
    with FaultyUpstream() as upstream:
        yield upstream


def sdk(up: FaultyUpstream, max_retries: int = 0, timeout: float = 5.0) -> anthropic.Anthropic:
    """The official client pointed at the upstream."""
    return anthropic.Anthropic(
        api_key="x", base_url=up.url, max_retries=max_retries, timeout=timeout
    )


def stream_raw(
    client: anthropic.Anthropic, request: dict[str, Any]
) -> tuple[list[bytes], BaseException | None]:
    """Stream one request's body bytes; return the chunks and any error raised mid-body."""
    chunks: list[bytes] = []
    try:
        with client.messages.with_streaming_response.create(**request, stream=True) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["request-id"].startswith("req_fault_")
            for chunk in response.iter_bytes():
                chunks.append(chunk)
    except (httpx2.TransportError, anthropic.APIConnectionError) as exc:
        return chunks, exc
    return chunks, None


def root_cause(error: BaseException) -> BaseException:
    """The innermost `__cause__` of an exception."""
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def types(events: list[bytes]) -> list[str]:
    """The `data.type` of each SSE event."""
    return [event_data(e).get("type", "") for e in events]


def test_normal_stream_is_the_expected_reply(
    up: FaultyUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", up.url)
    client = anthropic.Anthropic(api_key="anything", max_retries=0)
    chunks, error = stream_raw(client, TOOL_REQUEST)
    assert error is None
    assert up.requests == [{**TOOL_REQUEST, "stream": True}]
    assert up.served == ["Normal"]
    expected = up.expected_reply(up.requests[0])
    assert b"".join(chunks) == b"".join(expected)
    assert types(expected)[-2:] == ["message_delta", "message_stop"]
    assert "tool_use" in {event_data(e).get("content_block", {}).get("type") for e in expected}


def test_expected_reply_is_deterministic_per_body() -> None:
    body = {**TOOL_REQUEST, "stream": True}
    assert expected_reply(body) == expected_reply(json.loads(json.dumps(body)))
    other = expected_reply({**TEXT_REQUEST, "stream": True})
    first = event_data(expected_reply(body)[0])["message"]["id"]
    assert first.startswith("msg_fault_")
    assert first != event_data(other[0])["message"]["id"]


@pytest.mark.slow  # 7 s with 2 workers on a quiet machine, over 10 s alone
def test_trickle_delivers_events_as_they_are_sent(up: FaultyUpstream) -> None:
    up.script(Normal(delay=0.05))
    arrivals: list[float] = []
    start = time.monotonic()
    with sdk(up).messages.with_streaming_response.create(**TEXT_REQUEST, stream=True) as response:
        for _ in response.iter_bytes():
            arrivals.append(time.monotonic() - start)
    events = expected_reply(up.requests[0])
    assert len(arrivals) > len(events) // 2  # events are not buffered up server-side
    # Spread as sent: a lower bound, which a loaded machine can only lengthen.
    assert arrivals[-1] - arrivals[0] >= 0.05 * (len(events) - 1) * 0.8


@pytest.mark.parametrize("code", [429, 529])
def test_retryable_status_is_retried_then_succeeds(up: FaultyUpstream, code: int) -> None:
    up.script(Status(code, retry_after=0.1), Status(code, retry_after=0.1))
    start = time.monotonic()
    events = list(sdk(up, max_retries=2).messages.create(**TOOL_REQUEST, stream=True))
    # Retry-after was honoured: a lower bound, which a loaded machine can only lengthen.
    assert time.monotonic() - start >= 0.2
    assert up.served == ["Status", "Status", "Normal"]
    assert len(up.requests) == 3 and all(r == up.requests[0] for r in up.requests)
    expected = [t for t in types(expected_reply(up.requests[-1])) if t != "ping"]
    assert [e.type for e in events] == expected


def test_retries_exhausted_raise_the_status_error(up: FaultyUpstream) -> None:
    up.script(Status(429, retry_after=0.01), Status(429, retry_after=0.01))
    with pytest.raises(anthropic.RateLimitError) as info:
        sdk(up, max_retries=1).messages.create(**TOOL_REQUEST, stream=True)
    assert info.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert len(up.requests) == 2


@pytest.mark.parametrize(
    ("fault", "kind", "should_retry"),
    [
        (Status(429, retry_after=1.5), "rate_limit_error", "true"),
        (Status(529), "overloaded_error", "true"),
        (Status(500, error_type="api_error"), "api_error", "true"),
        (Status(400), "invalid_request_error", None),
    ],
)
def test_status_wire_shape(
    up: FaultyUpstream, fault: Status, kind: str, should_retry: str | None
) -> None:
    up.script(fault)
    response = httpx2.post(f"{up.url}/v1/messages", json={**TOOL_REQUEST, "stream": True})
    assert response.status_code == fault.code
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == kind
    assert body["error"]["message"] and body["request_id"] == response.headers["request-id"]
    assert response.headers.get("x-should-retry") == should_retry
    expected_after = None if fault.retry_after is None else f"{fault.retry_after:g}"
    assert response.headers.get("retry-after") == expected_after


def test_error_after_sends_n_events_then_error_event(up: FaultyUpstream) -> None:
    up.script(ErrorAfter(4))
    chunks, error = stream_raw(sdk(up), TOOL_REQUEST)
    assert error is None  # the body ends normally after the error event
    events = split_events(b"".join(chunks))
    assert events[:4] == expected_reply(up.requests[0])[:4] and len(events) == 5
    assert events[4].startswith(b"event: error\n")
    assert event_data(events[4]) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_error_event_surfaces_as_api_status_error_in_sdk_stream(up: FaultyUpstream) -> None:
    up.script(ErrorAfter(3))
    seen: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info:
        for event in sdk(up, max_retries=2).messages.create(**TOOL_REQUEST, stream=True):
            seen.append(event.type)
    assert seen == ["message_start", "content_block_start"]  # the SDK drops the ping
    assert info.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert len(up.requests) == 1  # errors inside a 200 stream are not retried


def test_reset_raises_transport_error_after_n_events(up: FaultyUpstream) -> None:
    up.script(ResetAfter(5))
    chunks, error = stream_raw(sdk(up, max_retries=2), TOOL_REQUEST)
    assert isinstance(error, httpx2.ReadError)
    assert isinstance(root_cause(error), ConnectionResetError)
    assert b"".join(chunks) == b"".join(expected_reply(up.requests[0])[:5])
    assert len(up.requests) == 1


def test_stall_past_read_timeout_raises_timeout(up: FaultyUpstream) -> None:
    up.script(StallAfter(3, seconds=30))
    chunks, error = stream_raw(sdk(up, timeout=0.3), TOOL_REQUEST)
    assert isinstance(error, httpx2.ReadTimeout)
    assert b"".join(chunks) == b"".join(expected_reply(up.requests[0])[:3])
    up.close(wait=PATIENCE)  # interrupts the 30 s stall: no connection is left after it
    assert up.active_connections() == 0


def test_stall_with_pings_keeps_the_stream_alive_then_ends_early(up: FaultyUpstream) -> None:
    up.script(StallAfter(3, seconds=1.0, pings=True))
    chunks, error = stream_raw(sdk(up, timeout=0.5), TOOL_REQUEST)
    assert isinstance(error, httpx2.RemoteProtocolError)  # incomplete chunked body
    events = split_events(b"".join(chunks))
    assert events[:3] == expected_reply(up.requests[0])[:3]
    assert len(events) >= 6 and set(types(events[3:])) == {"ping"}


@pytest.mark.parametrize(
    ("request_", "block"), [(TOOL_REQUEST, "tool_use"), (TEXT_REQUEST, "text")]
)
def test_cut_at_max_tokens_leaves_block_open(
    up: FaultyUpstream, request_: dict[str, Any], block: str
) -> None:
    up.script(CutToolAtMaxTokens())
    chunks, error = stream_raw(sdk(up), request_)
    assert error is None
    events = [event_data(e) for e in split_events(b"".join(chunks))]
    starts = [e for e in events if e["type"] == "content_block_start"]
    assert starts[-1]["content_block"]["type"] == block
    index = starts[-1]["index"]
    assert not [e for e in events if e["type"] == "content_block_stop" and e["index"] == index]
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"
    assert events[-1] == {"type": "message_stop"}
    key = "partial_json" if block == "tool_use" else "text"
    sent = "".join(e["delta"][key] for e in events if e.get("index") == index and "delta" in e)
    full = [event_data(e) for e in expected_reply(up.requests[0])]
    whole = "".join(e["delta"][key] for e in full if e.get("index") == index and "delta" in e)
    assert whole.startswith(sent) and len(sent) < len(whole)


def test_transcript_is_served_verbatim(up: FaultyUpstream) -> None:
    if not OVERLOADED.exists():
        pytest.skip("shared transcripts not available")
    up.script(Transcript(OVERLOADED), Transcript(b"event: ping\ndata: {}\n\n"))
    assert b"".join(stream_raw(sdk(up), TEXT_REQUEST)[0]) == OVERLOADED.read_bytes()
    assert b"".join(stream_raw(sdk(up), TEXT_REQUEST)[0]) == b"event: ping\ndata: {}\n\n"


def test_bad_requests_get_400_json(up: FaultyUpstream) -> None:
    with pytest.raises(anthropic.BadRequestError):
        sdk(up).messages.create(**TEXT_REQUEST)  # not streaming
    garbage = httpx2.post(f"{up.url}/v1/messages", content=b"{not json")
    assert garbage.status_code == 400
    assert garbage.json()["error"]["type"] == "invalid_request_error"
    assert httpx2.post(f"{up.url}/v1/other", json={}).status_code == 404
    assert up.served == ["Rejected"] and up.requests == [TEXT_REQUEST]


def test_chooser_overrides_queue_and_default_applies(up: FaultyUpstream) -> None:
    up.default = ErrorAfter(2)
    stream_raw(sdk(up), TEXT_REQUEST)
    up.set_chooser(lambda i, body: Status(529, retry_after=0.01) if i % 2 else Normal())
    up.script(ResetAfter(1))  # ignored while a chooser is set
    _, error = stream_raw(sdk(up, max_retries=1), TEXT_REQUEST)
    assert error is None
    assert up.served == ["ErrorAfter", "Status", "Normal"]


def test_concurrent_streams_are_recorded_and_close_leaves_no_threads(
    up: FaultyUpstream,
) -> None:
    up.default = Normal(delay=0.01)
    client = sdk(up)
    results: dict[int, bytes] = {}

    def run(k: int) -> None:
        request = {**TEXT_REQUEST, "messages": [{"role": "user", "content": f"hello {k}"}]}
        results[k] = b"".join(stream_raw(client, request)[0])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(up.requests) == 8 and up.served == ["Normal"] * 8
    for body in up.requests:
        k = int(body["messages"][0]["content"].split()[1])
        assert results[k] == b"".join(expected_reply(body))
    up.script(StallAfter(1, seconds=30))
    stalled = threading.Thread(target=stream_raw, args=(client, TEXT_REQUEST))
    stalled.start()
    assert up.stalling.wait(PATIENCE)
    # Pooled keep-alive connections and the 30 s stall are both cut: none is left after it.
    up.close(wait=PATIENCE)
    assert up.active_connections() == 0
    stalled.join(PATIENCE)
    assert not stalled.is_alive()
    wait_until(
        lambda: not [t for t in threading.enumerate() if "process_request" in t.name],
        message="a handler thread outlived close()",
    )
