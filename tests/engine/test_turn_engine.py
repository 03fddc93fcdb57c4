"""The turn engine end to end over scripted streams: tool rounds, stops, failures."""

from __future__ import annotations

import json
from typing import Any

from streaming.messages.history import validate_history
from streaming.wire.events import Event
from tests.engine.streams import answer, tool_use
from tests.engine.toys import CALLS
from tests.helpers import TRANSCRIPTS, assert_well_formed, transcript_events

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
    cuts = [
        tool_use(
            f"toolu_cut{i}",
            "get_weather",
            ['{"location": "Ber'],
            stop="max_tokens",
            close=False,
            text="Let me check",
        )
        for i in range(2)
    ]
    run = run_turn(cuts)  # the first cut is answered and the turn goes on; the second ends it
    assert run.status == "failed"
    assert CALLS == []
    assert_well_formed(run.events)
    assert run.of("turn_error")[-1]["code"] == "max_tokens"
    assert [e.get("incomplete") for e in run.of("block_end") if e["type"] == "tool_use"] == [
        True,
        True,
    ]
    history = run.store.history(run.session_id)
    assert validate_history(history, expect_user_last=False) == []
    calls = [b["input"] for m in history for b in m["content"] if b["type"] == "tool_use"]
    assert calls == [{}, {}]


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
    # Every timing at 1/100: the tool may take 0.2 s, the slow one runs until the test ends.
    run = run_turn([tool_use("toolu_s", "slow", ["{}"]), answer("ok")], scale=0.01)
    result = run.of("tool_result")[0]
    assert result["is_error"] and "timed out" in result["content"][0]["text"]


def test_a_tool_id_repeated_in_one_message_is_a_second_call_with_its_own_id(
    run_turn: Any,
) -> None:
    stream = tool_use("toolu_dup", "get_weather", ['{"location": "Nice"}'])
    # Repeat the tool_use block at index 1 with the same id and another input.
    second = tool_use("toolu_dup", "get_weather", ['{"location": "Oslo"}'])
    extra = [dict(e, index=1) for e in second[1:4]]
    stream = stream[:4] + extra + stream[4:]
    run = run_turn([stream, answer("ok")])
    assert CALLS == [
        ("get_weather", {"location": "Nice", "units": "f"}),
        ("get_weather", {"location": "Oslo", "units": "f"}),
    ]
    sent = run.model.requests[1]
    assert validate_history(sent) == []
    ids = [b["id"] for b in sent[-2]["content"] if b["type"] == "tool_use"]
    assert ids == ["toolu_dup", "toolu_dup_2"]
    assert [b["tool_use_id"] for b in sent[-1]["content"]] == ids
    shown = [d["tool_use_id"] for d in run.of("block_start") if "tool_use_id" in d]
    assert shown == ids  # clients see the ids the history keeps


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
    assert run.of("turn_error")[0]["code"] == "refusal"
    assert_well_formed(run.events)


def test_duplicate_message_start_discards_the_first_attempt(run_turn: Any) -> None:
    run = run_turn([transcript_events("vercel-ai__SYNTHETIC_duplicate_message_start.sse")])
    assert_well_formed(run.events)
    assert run.status == "completed"


def test_cancel_keeps_completed_blocks(run_turn: Any) -> None:
    stream = answer("kept")[:4] + answer("lost")[1:3]

    def cancel_after_first_block(turn: Any) -> None:
        original = turn.outbox.emit

        def emit(event: Event) -> None:
            if event[0] == "block_end":
                turn.stop("cancel")
            original(event)

        turn.outbox.emit = emit

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
