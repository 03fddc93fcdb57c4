"""Eager tool input: invalid JSON and input cut by max_tokens are answered, never run."""

from __future__ import annotations

import json
from typing import Any

from engine.turns.tools import EXCERPT, tool_calls
from streaming.messages.history import validate_history
from tests.engine.streams import answer, tool_use
from tests.engine.toys import CALLS
from tests.helpers import OWN_TRANSCRIPTS, assert_well_formed, own_transcript_events

INVALID = "eager_invalid_json.sse"
CUT = "eager_cut_by_max_tokens.sse"
NEVER_STOPPED = "eager_cut_never_stopped.sse"


def streamed_input(run: Any, tool_use_id: str) -> str:
    """The input JSON text the clients were sent for one call, joined."""
    block_id = next(
        d["block_id"] for d in run.of("block_start") if d.get("tool_use_id") == tool_use_id
    )
    return "".join(
        d["delta"]["partial_json"]
        for d in run.of("block_delta")
        if d["block_id"] == block_id and d["delta"]["type"] == "input_json_delta"
    )


def sent_call_and_result(request: list[dict[str, Any]], tool_use_id: str) -> tuple[Any, Any]:
    """The tool_use block and its tool_result in a request's history."""
    uses = [
        b
        for m in request
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use" and b["id"] == tool_use_id
    ]
    results = [
        b
        for m in request
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result" and b["tool_use_id"] == tool_use_id
    ]
    assert len(uses) == 1 and len(results) == 1, (uses, results)
    return uses[0], results[0]


def result_text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(c["text"] for c in content)


def test_invalid_json_is_not_run_and_the_error_quotes_the_problem(run_turn: Any) -> None:
    events = own_transcript_events(INVALID)
    tool_id = "toolu_01EagerInvalidJson0001"
    run = run_turn([events, answer("I sent a bad value; asking again.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert CALLS == []
    raw = streamed_input(run, tool_id)
    assert raw == '{"location": "Zürich \\"Altstadt\\", CH", "units": c}'
    end = next(d for d in run.of("block_end") if d["type"] == "tool_use")
    assert end["input"] == {} and "not valid JSON" in end["error"]
    assert not end.get("incomplete")
    result = run.of("tool_result")[0]
    text = result["content"][0]["text"]
    assert result["is_error"] is True and result["tool_use_id"] == tool_id
    assert end["error"] in text  # the parser's own message
    assert "Call it again with a valid JSON object" in text
    wrapped = json.loads(text[text.index("{") :])
    assert wrapped == {"input_text": raw}
    sent = run.model.requests[1]
    assert validate_history(sent) == []
    use, sent_result = sent_call_and_result(sent, tool_id)
    assert use["input"] == {} and "input_error" not in use
    assert sent_result["is_error"] is True and result_text(sent_result) == text
    # The stored call keeps why, so a worker taking the turn over refuses it the same way.
    stored = next(
        b
        for m in run.store.history(run.session_id)
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("id") == tool_id
    )
    assert stored["input"] == {} and stored["input_error"]["cut"] is False
    (again,) = tool_calls([stored], {})
    assert again.refusal == text


def test_a_long_invalid_input_is_quoted_by_its_two_ends_only(run_turn: Any) -> None:
    body = "x" * 1500  # the in-process log keeps an 8 KiB tail in memory: stay under it
    fragments = ['{"location": "', body, '" "units": "c"}']
    run = run_turn([tool_use("toolu_long", "get_weather", fragments), answer("ok")])
    assert CALLS == []
    text = run.of("tool_result")[0]["content"][0]["text"]
    wrapped = json.loads(text[text.index("{") :])
    raw = "".join(fragments)
    assert wrapped == {
        "input_start": raw[:EXCERPT],
        "input_end": raw[-EXCERPT:],
        "input_chars": len(raw),
    }
    assert len(text) < 4 * EXCERPT + 600
    # Rebuilt from the stored call (a takeover), the result is the same, still bounded.
    stored = [b for m in run.store.history(run.session_id) for b in m["content"]]
    (again,) = tool_calls([b for b in stored if b.get("id") == "toolu_long"], {})
    assert again.refusal == text


def test_input_cut_by_max_tokens_is_answered_and_the_turn_goes_on_once(run_turn: Any) -> None:
    tool_id = "toolu_01EagerCutMaxTokens001"
    run = run_turn([own_transcript_events(CUT), answer("Here is a shorter plan.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert CALLS == []
    assert not run.of("turn_error")
    assert [d["stop_reason"] for d in run.of("message_end")] == ["max_tokens", "end_turn"]
    end = next(d for d in run.of("block_end") if d["type"] == "tool_use")
    assert end["input"] == {} and "not valid JSON" in end["error"]
    text = run.of("tool_result")[0]["content"][0]["text"]
    assert "cut off at the output token limit" in text and "less input" in text
    assert end["error"] in text
    assert json.loads(text[text.index("{") :]) == {"input_text": streamed_input(run, tool_id)}
    sent = run.model.requests[1]
    assert validate_history(sent) == []
    use, result = sent_call_and_result(sent, tool_id)
    assert use["input"] == {} and result["is_error"] is True
    history = run.store.history(run.session_id)
    assert validate_history(history, expect_user_last=False) == []
    stored = next(
        b
        for m in history
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("id") == tool_id
    )
    assert stored["input_error"]["cut"] is True
    assert tool_calls([stored], {})[0].refusal == text


def test_a_tool_call_never_stopped_at_max_tokens_is_ended_cut_and_answered(
    run_turn: Any,
) -> None:
    tool_id = "toolu_01EagerCutNeverStop01"
    run = run_turn([own_transcript_events(NEVER_STOPPED), answer("Oslo is cold.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert CALLS == []
    end = next(d for d in run.of("block_end") if d["type"] == "tool_use")
    assert end["incomplete"] is True and end["input"] == {} and "not valid JSON" in end["error"]
    text = run.of("tool_result")[0]["content"][0]["text"]
    assert "cut off at the output token limit" in text
    assert '{"input_text": "{\\"location\\": \\"Oslo, Norw"}' in text
    sent = run.model.requests[1]
    assert validate_history(sent) == []
    use, _ = sent_call_and_result(sent, tool_id)
    assert use["input"] == {}


def test_a_second_cut_in_the_same_turn_ends_it_with_max_tokens(run_turn: Any) -> None:
    second = tool_use("toolu_cut2", "get_weather", ['{"location": "Li'], stop="max_tokens")
    run = run_turn([own_transcript_events(CUT), second])
    assert run.status == "failed"
    assert_well_formed(run.events)
    assert CALLS == []
    assert len(run.model.requests) == 2
    assert run.of("turn_error")[-1]["code"] == "max_tokens"
    results = run.of("tool_result")
    assert [r["is_error"] for r in results] == [True, True]
    assert [r["tool_use_id"] for r in results] == ["toolu_01EagerCutMaxTokens001", "toolu_cut2"]
    history = run.store.history(run.session_id)
    assert validate_history(history, expect_user_last=False) == []
    answered = {
        b["tool_use_id"]
        for m in history
        if m["role"] == "user"
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    assert answered == {"toolu_01EagerCutMaxTokens001", "toolu_cut2"}


def test_a_complete_call_cut_short_with_another_is_refused_not_run(run_turn: Any) -> None:
    stream = tool_use("toolu_ok", "get_weather", ['{"location": "Rome"}'], stop="max_tokens")
    cut = tool_use("toolu_cut", "get_weather", ['{"loca'], stop="max_tokens", close=False)
    extra = [dict(e, index=1) for e in cut[1:3]]
    stream = stream[:4] + extra + stream[4:]
    run = run_turn([stream, answer("ok")])
    assert run.status == "completed"
    assert CALLS == []
    texts = {r["tool_use_id"]: r["content"][0]["text"] for r in run.of("tool_result")}
    assert "reply stopped (max_tokens)" in texts["toolu_ok"]
    assert "cut off at the output token limit" in texts["toolu_cut"]
    assert validate_history(run.model.requests[1]) == []


def test_the_outcome_is_the_same_however_the_stream_bytes_are_cut(run_turn: Any) -> None:
    raw = (OWN_TRANSCRIPTS / CUT).read_bytes()
    expected = None
    for cut in [0, 1, *range(7, len(raw), max(1, len(raw) // 12)), len(raw) - 1]:
        CALLS.clear()
        run = run_turn([[raw[:cut], raw[cut:]], answer("ok")])
        assert run.status == "completed" and CALLS == []
        outcome = (
            [(t, d.get("error"), d.get("input"), d.get("content")) for t, d in _events(run)],
            "".join(
                d["delta"].get("partial_json", "") for t, d in _events(run) if t == "block_delta"
            ),
            [m["content"] for m in run.model.requests[1][1:]],
        )
        expected = expected or outcome
        assert outcome == expected, cut


def _events(run: Any) -> list[tuple[str, dict[str, Any]]]:
    """Events without the ids that differ from run to run."""
    return [(t, d) for _, t, d in run.events if t in ("block_delta", "block_end", "tool_result")]
