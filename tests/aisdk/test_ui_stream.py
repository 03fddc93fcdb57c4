"""The pure translation of our events into UI message stream chunks, and stored UIMessages."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.events.replay import turn_events
from streaming.aisdk.ui_chunks import CUT_OFF, finish_reason, tool_output
from streaming.aisdk.ui_messages import stored_ui_messages
from streaming.aisdk.ui_stream import UIStreamTranslator, encode_chunks
from tests.aisdk.turns import TURN, Turn, turns
from tests.aisdk.uifold import check_well_formed, fold

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def translate(events: list[tuple[str, dict[str, Any]]], steps: int | None = None) -> list[Any]:
    """Feed every event; return all chunks (with close() if no turn_end came)."""
    translator = UIStreamTranslator(steps)
    out: list[Any] = []
    for kind, data in events:
        out += translator.feed(kind, data)
    return out + translator.close()


def stored(turn: Turn) -> dict[str, Any]:
    """Return the stored assistant UIMessage of a generated turn."""
    messages = stored_ui_messages([turn.turn_info()], turn.rows)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    return messages[1]


def steps_of(message: dict[str, Any]) -> int:
    return sum(1 for p in message["parts"] if p["type"] == "step-start")


@FAST
@given(turns())
def test_any_turn_gives_a_well_formed_stream_that_folds_to_the_stored_message(turn: Turn) -> None:
    chunks = translate(turn.events)
    check_well_formed(chunks)
    assert fold(chunks).message == stored(turn)
    # What the wire carries decodes to the same chunks.
    frames = encode_chunks(chunks).split(b"\n\n")[:-1]
    assert [json.loads(f.removeprefix(b"data: ")) for f in frames] == chunks


@FAST
@given(turns(), st.data())
def test_a_client_resuming_anywhere_ends_equal_to_the_stored_message(
    turn: Turn, data: st.DataObject
) -> None:
    chunks = translate(turn.events)
    cut = data.draw(st.integers(1, len(chunks)))
    held = fold(chunks[:cut]).message
    rest = translate(turn.events, steps_of(held))
    check_well_formed(rest, steps_of(held))
    assert fold(rest, held).message == stored(turn)


@FAST
@given(turns(), st.data())
def test_a_resume_from_a_stored_snapshot_ends_equal(turn: Turn, data: st.DataObject) -> None:
    # A GET of a running turn shows its first steps whole and the current one in part.
    final = stored(turn)
    starts = [i for i, p in enumerate(final["parts"]) if p["type"] == "step-start"]
    if not starts:
        return
    k = data.draw(st.integers(1, len(starts)))
    end = starts[k] if k < len(starts) else len(final["parts"])
    keep = data.draw(st.integers(starts[k - 1] + 1, end))
    held = {**final, "metadata": {"status": "running"}, "parts": final["parts"][:keep]}
    rest = translate(turn.events, k)
    assert fold(rest, held).message == final


def _rebuilt(turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    """Rebuild the turn's events from its rows, as the engine does when its log is lost."""
    info = turn.turn_info()
    record = SimpleNamespace(**{**info, "session_id": "ses"})
    extra = {"stop_reason": "x", "usage": None, "model": None}
    rows = [SimpleNamespace(**r, **extra) for r in turn.rows]
    return turn_events(record, rows, reset=True)  # type: ignore[arg-type,return-value]


@FAST
@given(turns(), st.data())
def test_a_rebuilt_log_mid_stream_ends_equal_to_the_stored_message(
    turn: Turn, data: st.DataObject
) -> None:
    final = stored(turn)
    if final["parts"][-1:] == [{"type": "step-start"}]:
        # A rebuilt log skips discarded rows, so an attempt nobody retried leaves no step.
        return
    upto = data.draw(st.integers(1, len(turn.events) - 1))
    chunks = translate([*turn.events[:upto], *_rebuilt(turn)])
    state = fold(chunks)
    assert state.message == final
    assert not any(c["type"] == "error" and "resume" in c["errorText"] for c in chunks)


def _events(*items: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [("turn_start", {"turn_id": TURN}), *items]


def _text_block(mid: str, text: str, index: int = 0) -> list[tuple[str, dict[str, Any]]]:
    head = {"message_id": mid, "block_id": f"{mid}.{index}", "index": index}
    return [
        ("block_start", {**head, "type": "text", "block": {"type": "text", "text": ""}}),
        ("block_delta", {**head, "delta": {"type": "text_delta", "text": text}}),
        ("block_end", {**head, "type": "text"}),
    ]


def test_a_plain_answer_maps_to_the_sdk_chunks() -> None:
    events = _events(
        ("message_start", {"message_id": "m1"}),
        *_text_block("m1", "Hi"),
        ("message_end", {"message_id": "m1"}),
        ("turn_end", {"status": "completed"}),
    )
    assert translate(events) == [
        {"type": "start", "messageId": TURN, "messageMetadata": {"status": "running"}},
        {"type": "start-step"},
        {"type": "text-start", "id": "m1.0"},
        {"type": "text-delta", "id": "m1.0", "delta": "Hi"},
        {"type": "text-end", "id": "m1.0"},
        {"type": "finish-step"},
        {"type": "message-metadata", "messageMetadata": {"status": "completed"}},
        {"type": "finish", "finishReason": "stop"},
    ]


def _cited(mid: str, text: str, index: int, *sources: str) -> list[tuple[str, dict[str, Any]]]:
    *events, (_, end) = _text_block(mid, text, index)
    cites = [{"type": "search_result_location", "source": s, "title": f"t {s}"} for s in sources]
    return [*events, ("block_end", {**end, "citations": cites})]


def test_cited_sources_close_the_message_once_each() -> None:
    tool = {"message_id": "m1", "block_id": "m1.2", "index": 2, "type": "tool_use"}
    events = _events(
        ("message_start", {"message_id": "m1"}),
        *_cited("m1", "339.14 USD", 0, "txns:category=Groceries", "txn:7"),
        *_cited("m1", "82.10 USD", 1, "txn:7", "txn:7"),
        ("block_start", {**tool, "tool_use_id": "toolu_1", "name": "get_transactions"}),
        ("block_end", {**tool, "input": {}}),
        ("message_end", {"message_id": "m1"}),
        ("message_start", {"message_id": "m2"}),
        *_cited("m2", "cut", 0, "txn:9"),
        ("message_discarded", {"message_id": "m2", "reason": "x"}),
        ("message_start", {"message_id": "m2"}),
        *_text_block("m2", "Done", 0),
        ("message_end", {"message_id": "m2"}),
        ("turn_end", {"status": "completed"}),
    )
    chunks = translate(events)
    check_well_formed(chunks)
    sources = [c for c in chunks if c["type"] == "source-document"]
    assert sources == [
        {"type": "source-document", "sourceId": s, "mediaType": "application/json", "title": t}
        for s, t in [("txns:category=Groceries", "t txns:category=Groceries"), ("txn:7", "t txn:7")]
    ], "after the message's parts, one per source; none from the discarded attempt"
    kinds = [c["type"] for c in chunks]
    assert kinds.index("source-document") > kinds.index("tool-input-available")
    assert kinds.index("source-document") < kinds.index("finish-step")


def test_a_discard_resets_the_step_and_a_crash_resend_with_the_same_id_fills_it() -> None:
    events = _events(
        ("message_start", {"message_id": "m1"}),
        *_text_block("m1", "lost"),
        ("message_discarded", {"message_id": "m1", "reason": "x"}),
        ("message_start", {"message_id": "m1"}),
        *_text_block("m1", "kept"),
        ("message_end", {"message_id": "m1"}),
        ("turn_end", {"status": "completed"}),
    )
    chunks = translate(events)
    kinds = [c["type"] for c in chunks]
    assert kinds.count("start-step") == 1 and "reset-step" in kinds
    parts = fold(chunks).message["parts"]
    assert parts == [{"type": "step-start"}, {"type": "text", "text": "kept", "state": "done"}]


def test_errors_cancel_and_statuses_map_to_sdk_endings() -> None:
    failed = translate(
        _events(
            ("turn_error", {"code": "overloaded_error", "message": "Overloaded."}),
            ("turn_end", {"status": "failed"}),
        )
    )
    assert failed[-3:] == [
        {
            "type": "message-metadata",
            "messageMetadata": {
                "status": "failed",
                "error": {"code": "overloaded_error", "message": "Overloaded."},
            },
        },
        {"type": "error", "errorText": "Overloaded."},
        {"type": "finish", "finishReason": "error"},
    ]
    cancelled = translate(_events(("turn_end", {"status": "cancelled"})))
    assert cancelled[-1] == {"type": "abort", "reason": "cancelled"}
    assert finish_reason("max_rounds", None) == "tool-calls"
    assert finish_reason("failed", "max_tokens") == "length"
    assert finish_reason("completed", "refusal") == "content-filter"
    assert finish_reason("interrupted", "interrupted") == "interrupted"


def test_a_stream_whose_log_ends_early_still_ends_for_the_client() -> None:
    chunks = translate(_events(("message_start", {"message_id": "m1"}), *_text_block("m1", "x")))
    check_well_formed(chunks)
    assert chunks[-2:] == [
        {"type": "error", "errorText": chunks[-2]["errorText"]},
        {"type": "finish", "finishReason": "error"},
    ]


def test_a_resume_ahead_of_the_record_says_so() -> None:
    events = _events(("turn_end", {"status": "completed"}))
    chunks = translate(events, steps=3)
    assert [c["type"] for c in chunks] == ["message-metadata", "error", "finish"]


def test_tool_output_is_json_when_the_text_is_an_object_or_array() -> None:
    assert tool_output([{"type": "text", "text": '{"a": 1}'}]) == {"a": 1}
    assert tool_output([{"type": "text", "text": "[1]"}]) == [1]
    assert tool_output([{"type": "text", "text": "{oops"}]) == "{oops"
    assert tool_output("7") == "7"
    image = [{"type": "image", "source": {}}]
    assert tool_output(image) == image


def test_a_cut_off_tool_call_becomes_an_input_error() -> None:
    head = {"message_id": "m1", "block_id": "m1.0", "index": 0}
    events = _events(
        ("message_start", {"message_id": "m1"}),
        ("block_start", {**head, "type": "tool_use", "tool_use_id": "t1", "name": "calc"}),
        ("block_delta", {**head, "delta": {"type": "input_json_delta", "partial_json": '{"a'}}),
        ("block_end", {**head, "type": "tool_use", "incomplete": True}),
        ("message_end", {"message_id": "m1"}),
        ("turn_end", {"status": "cancelled"}),
    )
    part = fold(translate(events)).message["parts"][1]
    assert part == {
        "type": "tool-calc",
        "toolCallId": "t1",
        "state": "output-error",
        "input": None,
        "errorText": CUT_OFF,
    }


def test_a_call_the_output_limit_cut_is_stored_as_it_was_streamed() -> None:
    cut = {"problem": "input was not valid JSON", "quoted": '{"input_text": "{\\"a"}', "cut": True}
    use = {"type": "tool_use", "id": "t1", "name": "calc", "input": {}, "input_error": cut}
    result = {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "cut"}
    rows = [
        _row("q1", [{"type": "text", "text": "Sum it"}], "user"),
        _row("m1", [use], "assistant"),
        _row("r1", [result], "user"),
    ]
    turn = {"id": TURN, "status": "completed", "error_code": None, "error_message": None}
    turn |= {"continues": None, "question_id": "q1"}
    (_, answer) = stored_ui_messages([turn], rows)
    part = next(p for p in answer["parts"] if p.get("toolCallId") == "t1")
    # As the live stream showed it (the test above), its later is_error result left out.
    assert part == {
        "type": "tool-calc",
        "toolCallId": "t1",
        "state": "output-error",
        "input": None,
        "errorText": CUT_OFF,
    }


def _row(ident: str, content: list[dict[str, Any]], role: str) -> dict[str, Any]:
    return {
        "id": ident,
        "turn_id": TURN,
        "role": role,
        "content": content,
        "partial_content": None,
        "status": "complete",
        "client_id": None,
    }


def test_awkward_text_is_one_data_line() -> None:
    raw = encode_chunks([{"type": "text-delta", "id": "x", "delta": "a\u2028b\u2029c\x85\n\ud83d"}])
    assert raw.count(b"\n") == 2 and raw.startswith(b"data: ")
    assert json.loads(raw[6:])["delta"] == "a\u2028b\u2029c\x85\n\ud83d"


@FAST
@given(turns())
def test_trimmed_context_is_transient_data_that_never_changes_the_message(turn: Turn) -> None:
    note = {"omitted_turns": 2, "omitted_messages": 9, "elided_results": 0}
    events: list[tuple[str, dict[str, Any]]] = []
    for kind, data in turn.events:
        if kind == "message_start":
            events.append(("context_trimmed", {**note, "first_kept_message_id": "msg_k"}))
        events.append((kind, data))
    chunks = translate(events)
    check_well_formed(chunks)
    data = [c for c in chunks if c["type"] == "data-context-trimmed"]
    assert len(data) == sum(1 for kind, _ in turn.events if kind == "message_start")
    assert all(c["transient"] and c["data"]["omitted_turns"] == 2 for c in data)
    assert fold(chunks).message == fold(translate(turn.events)).message


def test_a_chart_result_also_travels_as_a_data_part_the_message_keeps() -> None:
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Spending by month (USD)",
        "data": {"values": [{"x": "2025-01", "y": 1.5, "amount": "1.50", "sources": []}]},
    }
    head = {"message_id": "m1", "block_id": "m1.0", "index": 0}
    call = {"type": "tool_use", "id": "toolu_1", "name": "chart", "input": {}}
    result = json.dumps({"kind": "spending_by_month", "charts": [spec]})
    events = _events(
        ("message_start", {"message_id": "m1"}),
        ("block_start", {**head, "type": "tool_use", "block": call}),
        ("block_end", {**head, "type": "tool_use", "input": {"kind": "spending_by_month"}}),
        ("message_end", {"message_id": "m1", "stop_reason": "tool_use"}),
        ("tool_result", {"tool_use_id": "toolu_1", "message_id": "r1", "content": result}),
        ("turn_end", {"status": "completed"}),
    )
    chunks = translate(events)
    check_well_formed(chunks)
    kinds = [c["type"] for c in chunks]
    assert kinds.index("data-chart") == kinds.index("tool-output-available") + 1
    charts = [p for p in fold(chunks).message["parts"] if p["type"] == "data-chart"]
    assert charts == [{"type": "data-chart", "id": "toolu_1-chart-0", "data": spec}]
