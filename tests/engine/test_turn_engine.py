"""The turn engine end to end over scripted streams: tool rounds, stops, failures."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx2

from streaming.history import validate_history
from tests.engine.toys import CALLS
from tests.helpers import TRANSCRIPTS, assert_well_formed, text_of, transcript_events

TURN1 = "anthropic-sdk-python-cassette__tool_loop_turn1_tool_use.sse"
TURN2 = "anthropic-sdk-python-cassette__tool_loop_turn2_after_tool_result.sse"


def test_recorded_tool_loop_runs_the_tool_once_and_resumes(run_turn: Any) -> None:
    run = run_turn([transcript_events(TURN1), transcript_events(TURN2)])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert CALLS == [("get_weather", {"location": "San Francisco, CA", "units": "f"})]
    recorded = json.loads(
        (TRANSCRIPTS / "anthropic-sdk-python-cassette__tool_loop_requests.json").read_text()
    )
    sent = run.model.requests[1]
    # The assistant turn is echoed back exactly as the recorded SDK run did.
    assert sent[1]["content"] == recorded[1]["messages"][1]["content"]
    assert (
        sent[2]["content"][0]["tool_use_id"]
        == recorded[1]["messages"][2]["content"][0]["tool_use_id"]
    )
    end = run.of("block_end")[0]
    assert end["input"] == {"location": "San Francisco, CA", "units": "f"}
    assert run.of("tool_result")[0]["is_error"] is False
    assert validate_history(run.store.history(run.session_id), expect_user_last=False) == []


def test_stored_history_has_every_message_of_the_turn(run_turn: Any) -> None:
    run = run_turn([transcript_events(TURN1), transcript_events(TURN2)])
    history = run.store.history(run.session_id)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert "68°F" in history[3]["content"][0]["text"]


def tool_use(
    tool_id: str,
    name: str,
    fragments: list[str],
    stop: str = "tool_use",
    close: bool = True,
    text: str | None = None,
) -> list[dict[str, Any]]:
    """Build a raw stream with an optional text block then one tool_use block."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{tool_id}",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        }
    ]
    index = 0
    if text is not None:
        events += [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    events.append(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
        }
    )
    events += [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": f},
        }
        for f in fragments
    ]
    if close:
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return events


def answer(text: str, stop: str = "end_turn") -> list[dict[str, Any]]:
    """Build a raw stream with one text block."""
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_a",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]


def test_nested_tool_rounds_resume_until_the_model_stops(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use("toolu_1", "get_weather", ['{"location": "Par', 'is"}']),
            tool_use(
                "toolu_2", "get_weather", ['{"location": "Rome", ', '"units": "c"}'], text="And"
            ),
            tool_use("toolu_3", "get_weather", ['{"location": "Oslo"}']),
            answer("Paris, Rome and Oslo are mild."),
        ]
    )
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert [c[1]["location"] for c in CALLS] == ["Paris", "Rome", "Oslo"]
    assert len(run.model.requests) == 4
    assert [m["role"] for m in run.model.requests[3]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    for request in run.model.requests:
        assert validate_history(request) == []


def test_tool_input_is_the_streamed_json_never_an_empty_object(run_turn: Any) -> None:
    run = run_turn([tool_use("toolu_x", "get_weather", ['{"loc', 'ation": "Lima"}']), answer("ok")])
    assert CALLS == [("get_weather", {"location": "Lima", "units": "f"})]
    assert run.of("block_end")[0]["input"] == {"location": "Lima"}


def test_truncated_tool_call_at_max_tokens_is_never_run(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use(
                "toolu_cut",
                "get_weather",
                ['{"location": "Ber'],
                stop="max_tokens",
                close=False,
                text="Let me check",
            )
        ]
    )
    assert run.status == "failed"
    assert CALLS == []
    assert_well_formed(run.events)
    assert run.of("error")[-1]["code"] == "max_tokens"
    assert any(e.get("incomplete") for e in run.of("block_end"))
    history = run.store.history(run.session_id)
    assert validate_history(history, expect_user_last=False) == []
    assert all(b["type"] != "tool_use" for m in history for b in m["content"])


def test_closed_tool_call_before_max_tokens_gets_an_error_result_not_a_run(run_turn: Any) -> None:
    run = run_turn(
        [tool_use("toolu_mt", "get_weather", ['{"location": "Rome"}'], stop="max_tokens")]
    )
    assert CALLS == []
    assert run.of("tool_result")[0]["is_error"] is True
    assert validate_history(run.store.history(run.session_id), expect_user_last=False) == []


def test_invalid_tool_json_becomes_an_error_result_the_model_reads(run_turn: Any) -> None:
    run = run_turn([tool_use("toolu_bad", "get_weather", ['{"location": ']), answer("sorry")])
    assert run.status == "completed"
    assert CALLS == []
    result = run.of("tool_result")[0]
    assert result["is_error"] is True and "valid JSON" in result["content"][0]["text"]
    assert "is_error" in json.dumps(run.model.requests[1][-1])


def test_unknown_tool_bad_input_and_raising_tool_are_error_results(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use("toolu_a", "no_such_tool", ["{}"]),
            tool_use("toolu_b", "get_weather", ['{"units": "k"}']),
            tool_use("toolu_c", "boom", ["{}"]),
            answer("done"),
        ]
    )
    texts = [r["content"][0]["text"] for r in run.of("tool_result")]
    assert all(r["is_error"] for r in run.of("tool_result"))
    assert "Unknown tool 'no_such_tool'" in texts[0]
    assert "'location'" in texts[1] and "'units'" in texts[1]
    assert "boom" in texts[2] and "fire" not in texts[2]
    assert run.status == "completed"


def test_slow_tool_times_out_as_an_error_result(run_turn: Any) -> None:
    run = run_turn([tool_use("toolu_s", "slow", ["{}"]), answer("ok")], tool_timeout=0.2)
    result = run.of("tool_result")[0]
    assert result["is_error"] and "timed out" in result["content"][0]["text"]


def test_duplicate_tool_ids_run_once(run_turn: Any) -> None:
    stream = tool_use("toolu_dup", "get_weather", ['{"location": "Nice"}'])
    # Repeat the tool_use block at index 1 with the same id.
    extra = [dict(e, index=1) for e in stream[1:4]]
    stream = stream[:4] + extra + stream[4:]
    run = run_turn([stream, answer("ok")])
    assert CALLS == [("get_weather", {"location": "Nice", "units": "f"})]
    assert validate_history(run.model.requests[1]) == []


def test_max_rounds_ends_with_a_valid_history(run_turn: Any) -> None:
    run = run_turn(
        [tool_use(f"toolu_{i}", "get_weather", ['{"location": "X"}']) for i in range(3)],
        max_rounds=3,
    )
    assert run.status == "max_rounds"
    assert_well_formed(run.events)
    assert run.events[-1][2]["status"] == "max_rounds"
    assert validate_history(run.store.history(run.session_id), expect_user_last=False) == []


def test_pause_turn_resumes_with_the_content_as_is(run_turn: Any) -> None:
    run = run_turn([answer("Searching", stop="pause_turn"), answer("Found it.")])
    assert run.status == "completed"
    assert run.model.requests[1][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Searching"}],
    }


def test_refusal_ends_the_turn_and_says_so(run_turn: Any) -> None:
    run = run_turn([transcript_events("anthropic-sdk-python__refusal_stop_details.sse")])
    assert run.status == "completed"
    assert run.of("error")[0]["code"] == "refusal"
    assert_well_formed(run.events)


def test_error_event_mid_stream_is_discarded_and_retried(run_turn: Any) -> None:
    name = "vercel-ai-inline__error_event_data_only_after_ping_no_message_stop.sse"
    run = run_turn([transcript_events(name), answer("Recovered.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert run.of("message_discarded")[0]["reason"] == "error"
    assert text_of(run.events) == "Recovered."
    history = run.store.history(run.session_id)
    assert history[-1]["content"] == [{"type": "text", "text": "Recovered."}]


def test_stream_cut_without_stop_is_retried(run_turn: Any) -> None:
    run = run_turn([answer("partial")[:3], answer("Whole answer.")])
    assert run.status == "completed"
    assert_well_formed(run.events)
    assert [d["reason"] for d in run.of("message_discarded")] == ["stream_ended"]
    assert text_of(run.events) == "Whole answer."


def test_retries_run_out_and_the_turn_fails_with_an_actionable_error(run_turn: Any) -> None:
    overloaded = transcript_events("vercel-ai-inline__overloaded_error_as_first_event.sse")
    run = run_turn([overloaded] * 3, retries=2)
    assert run.status == "failed"
    assert_well_formed(run.events)
    assert len(run.model.requests) == 3
    error = run.of("error")[-1]
    assert error["code"] == "overloaded_error" and "Gave up after 3 attempts" in error["message"]


def _status_error(code: int, retry_after: str | None = None) -> Exception:
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx2.Response(
        code, headers=headers, request=httpx2.Request("POST", "http://upstream/v1/messages")
    )
    kind = "overloaded_error" if code == 529 else "invalid_request_error"
    return anthropic.APIStatusError(
        kind, response=response, body={"type": "error", "error": {"type": kind, "message": kind}}
    )


def test_status_errors_before_content_are_retried_honouring_retry_after(run_turn: Any) -> None:
    started = time.monotonic()
    run = run_turn([_status_error(529, "0.3"), _status_error(529), answer("Fine now.")])
    assert run.status == "completed"
    assert time.monotonic() - started >= 0.3
    assert len(run.model.requests) == 3
    assert "message_discarded" not in run.types()


def test_a_rejected_request_is_not_retried(run_turn: Any) -> None:
    run = run_turn([_status_error(400), answer("never")])
    assert run.status == "failed"
    assert len(run.model.requests) == 1
    assert run.of("error")[-1]["code"] == "invalid_request_error"


def test_connection_reset_mid_stream_is_retried(run_turn: Any) -> None:
    reset = [*answer("half")[:3], httpx2.RemoteProtocolError("peer closed connection")]
    run = run_turn([reset, answer("Full.")])
    assert run.status == "completed"
    assert [d["reason"] for d in run.of("message_discarded")] == ["connection_error"]


def test_a_tool_is_not_run_again_when_the_next_call_is_retried(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use("toolu_once", "get_weather", ['{"location": "Bern"}']),
            answer("cut")[:3],
            answer("Bern is cold."),
        ]
    )
    assert run.status == "completed"
    assert CALLS == [("get_weather", {"location": "Bern", "units": "f"})]
    assert run.model.requests[1] == run.model.requests[2]


def test_duplicate_message_start_discards_the_first_attempt(run_turn: Any) -> None:
    run = run_turn([transcript_events("vercel-ai__SYNTHETIC_duplicate_message_start.sse")])
    assert_well_formed(run.events)
    assert run.status == "completed"


def test_cancel_keeps_completed_blocks(run_turn: Any) -> None:
    stream = answer("kept")[:4] + answer("lost")[1:3]

    def cancel_after_first_block(runner: Any) -> None:
        original = runner.emit

        def emit(kind: str, data: dict[str, Any]) -> int:
            if kind == "block_end":
                runner.cancel()
            return original(kind, data)

        runner.emit = emit

    run = run_turn([stream], before=cancel_after_first_block)
    assert run.status == "cancelled"
    assert_well_formed(run.events)
    history = run.store.history(run.session_id)
    assert history[-1]["content"] == [{"type": "text", "text": "kept"}]


def test_whitespace_text_before_a_tool_call_is_not_sent_back(run_turn: Any) -> None:
    run = run_turn(
        [
            tool_use("toolu_ws", "get_weather", ['{"location": "Oslo"}'], text="\n\n"),
            answer("Cold."),
        ]
    )
    assert run.status == "completed"
    assert run.model.requests[1][1]["content"][0]["type"] == "tool_use"
    assert validate_history(run.model.requests[1]) == []


def test_two_pause_turns_in_a_row_resume_as_one_assistant_message(run_turn: Any) -> None:
    run = run_turn(
        [answer("One", stop="pause_turn"), answer("Two", stop="pause_turn"), answer("Three.")]
    )
    assert run.status == "completed"
    assert [m["role"] for m in run.model.requests[2]] == ["user", "assistant"]
    assert validate_history(run.model.requests[2], expect_user_last=False) == []


def test_a_database_failure_mid_stream_still_ends_every_block_and_the_turn(
    run_turn: Any, monkeypatch: Any
) -> None:
    from engine.store import TurnStore

    def broken(self: Any, message_id: str, **fields: Any) -> None:
        raise RuntimeError("database is locked")

    monkeypatch.setattr(TurnStore, "update_message", broken)
    run = run_turn([answer("never stored")] * 5, retries=1)
    assert run.status == "failed"
    assert_well_formed(run.events)


def test_cancel_while_a_tool_runs_ends_the_turn_without_another_model_call(
    run_turn: Any,
) -> None:
    import threading

    def cancel_soon(runner: Any) -> None:
        threading.Timer(0.3, runner.cancel).start()

    started = time.monotonic()
    run = run_turn([tool_use("toolu_slow", "slow", ["{}"]), answer("never")], before=cancel_soon)
    assert run.status == "cancelled"
    assert time.monotonic() - started < 1.5
    assert len(run.model.requests) == 1
    assert run.of("tool_result")[0]["is_error"] is True
    assert validate_history(run.store.conversation(run.session_id), expect_user_last=False) == []
