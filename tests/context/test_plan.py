"""Trimming a long history: whole turns, valid, within the room, stable, in big steps."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.upstream.estimate import message_tokens
from engine.upstream.selection import BULKY_BYTES, LOW, Cut, elide, plan, turn_starts
from streaming.messages.history import repair_history, validate_history

Message = dict[str, Any]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_id: str, name: str = "get_transactions") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"limit": 5}}


def result(tool_id: str, size: int, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": "r" * size}
    return {**block, "is_error": True} if is_error else block


THINKING = {"type": "thinking", "thinking": "Let me look.", "signature": "sig=="}


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Valid histories ending where a request is made: a question or tool results.

    Some turns failed: no reply after their question, or after their tool results (repair
    then merges what they left with the next question, as the engine's history does).
    """
    history: list[Message] = []
    turns = draw(st.integers(1, 10))
    n = 0
    for t in range(turns):
        history.append({"role": "user", "content": f"q{t} " + "w" * draw(st.integers(0, 600))})
        history[-1]["id"] = f"msg_q{t}"
        last = t == turns - 1
        rounds = draw(st.integers(0, 3))
        for r in range(rounds):
            ids = [f"toolu_{n + k}" for k in range(draw(st.integers(1, 3)))]
            n += len(ids)
            head = [THINKING] if draw(st.booleans()) else []
            history.append(
                {"role": "assistant", "content": [*head, text("On it."), *map(use, ids)]}
            )
            sizes = [draw(st.integers(0, 4000)) for _ in ids]
            history.append(
                {"role": "user", "content": [result(i, s) for i, s in zip(ids, sizes, strict=True)]}
            )
            if last and r == rounds - 1 and draw(st.booleans()):
                return repair_history(history)
        if not last and draw(st.integers(0, 4)):
            answer = "a" * draw(st.integers(1, 800))
            history.append(
                {"role": "assistant", "content": [*([THINKING] * (t % 2)), text(answer)]}
            )
    return repair_history(history)


def sent(message: Message) -> Message:
    return {"role": message["role"], "content": message["content"]}


def blocks(message: Message) -> list[dict[str, Any]]:
    content = message["content"]
    return [text(content)] if isinstance(content, str) else content


def same_but_noted(original: Message, kept: Message) -> bool:
    """True if `kept` is `original` with at most its bulky tool results made into notes."""
    if kept == sent(original):
        return True
    before, after = original["content"], kept["content"]
    if original["role"] != "user" or len(before) != len(after):
        return False
    for old, new in zip(before, after, strict=True):
        if old == new:
            continue
        bulky = len(json.dumps(old.get("content"), separators=(",", ":"))) > BULKY_BYTES
        noted = isinstance(new.get("content"), str) and new["content"].startswith("[result of")
        if not (bulky and noted and new["tool_use_id"] == old["tool_use_id"]):
            return False
    return True


def current_turn_floor(history: list[Message]) -> int:
    """The least the current turn alone can be: its older bulky results noted."""
    start = turn_starts(history)[-1]
    names = {b["id"]: b["name"] for m in history for b in blocks(m) if b.get("type") == "tool_use"}
    floor = 0
    for i in range(start, len(history)):
        message = history[i] if i == len(history) - 1 else elide(history[i], names)[0]
        floor += message_tokens(message)
    return floor


rooms = st.integers(150, 6000)


@settings(max_examples=150, deadline=None)
@given(histories(), rooms)
def test_what_is_sent_is_a_valid_suffix_from_a_turn_start(
    history: list[Message], room: int
) -> None:
    p = plan(history, room)
    assert validate_history(p.messages) == []
    assert p.first_kept in turn_starts(history)
    assert p.omitted_turns == turn_starts(history).index(p.first_kept)
    kept = history[p.first_kept :]
    assert len(p.messages) == len(kept)
    if p.omitted_turns:
        # The first message sent is the question alone: results of a failed turn before it
        # are left out with that turn.
        question = [b for b in blocks(kept[0]) if b.get("type") != "tool_result"]
        assert question and blocks(p.messages[0]) == question
        kept, sent_messages = kept[1:], p.messages[1:]
    else:
        sent_messages = p.messages
    assert all(same_but_noted(o, k) for o, k in zip(kept, sent_messages, strict=True))
    assert all(set(m) == {"role", "content"} for m in p.messages)
    assert p.tokens == sum(message_tokens(m) for m in p.messages)


@settings(max_examples=150, deadline=None)
@given(histories(), rooms)
def test_it_fits_whenever_the_current_turn_can(history: list[Message], room: int) -> None:
    p = plan(history, room)
    if current_turn_floor(history) <= room:
        assert p.tokens <= room
    if p.omitted_turns == 0 and p.elided_results == 0:
        assert p.messages == [sent(m) for m in history]


def checkpoints(history: list[Message]) -> list[int]:
    """Every request a growing history makes: at each user message."""
    return [i for i, m in enumerate(history) if m["role"] == "user"]


@settings(max_examples=100, deadline=None)
@given(histories(), rooms)
def test_the_trim_point_only_moves_forward_and_in_big_steps(
    history: list[Message], room: int
) -> None:
    low = 0.6
    earlier = None
    for index in checkpoints(history):
        now = plan(history[: index + 1], room, low)
        current = len(turn_starts(history[: index + 1])) - 1
        if earlier is not None:
            assert now.cut.dropped >= earlier.cut.dropped
            assert now.cut.elided >= earlier.cut.elided
            assert now.previous == earlier.cut
            if now.cut == earlier.cut and not now.squeezed and not earlier.squeezed:
                # Unchanged: the earlier request is a prefix of this one, byte for byte.
                assert now.messages[: len(earlier.messages)] == earlier.messages
            elif now.cut != earlier.cut:
                # A step trims down to `low` of the room, unless only the current turn is left.
                assert now.tokens <= low * room or now.cut.dropped == current
        earlier = now


def test_a_turn_starts_at_a_question_never_at_tool_results() -> None:
    history = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [result("t1", 10)]},
        {"role": "assistant", "content": [text("a1")]},
        {"role": "user", "content": [text("q2")]},
        {"role": "assistant", "content": [use("t2")]},
        {"role": "user", "content": [result("t2", 10)]},
        {"role": "assistant", "content": [use("t3")]},
        # A failed turn's results merged with the next question by repair: a new turn.
        {"role": "user", "content": [result("t3", 10), text("q3")]},
    ]
    assert turn_starts(history) == [0, 4, 8]
    p = plan(history, room=60)
    assert p.first_kept == 8 and p.messages == [{"role": "user", "content": [text("q3")]}]


def test_bulky_results_become_a_note_naming_the_tool_and_size() -> None:
    message = {
        "role": "user",
        "content": [result("t1", BULKY_BYTES + 500), result("t2", 20), result("t3", 5000, True)],
    }
    noted, replaced = elide(message, {"t1": "get_transactions", "t3": "compare_spending"})
    assert replaced == 2
    first, small, error = noted["content"]
    size = len(json.dumps("r" * (BULKY_BYTES + 500)))
    assert first["tool_use_id"] == "t1" and "get_transactions" in first["content"]
    assert str(size) in first["content"]
    assert small == message["content"][1]
    assert error["is_error"] is True and "compare_spending" in error["content"]
    assert elide(message, {}) == elide(message, {}), "deterministic"
    assert message["content"][0]["content"] == "r" * (BULKY_BYTES + 500), "input untouched"


def test_notes_come_before_leaving_out_whole_turns() -> None:
    history: list[Message] = []
    for t in range(6):
        history += [
            {"role": "user", "content": f"question {t}", "id": f"q{t}"},
            {"role": "assistant", "content": [text("Checking."), use(f"t{t}")]},
            {"role": "user", "content": [result(f"t{t}", 3000)]},
            {"role": "assistant", "content": [text("answer " * 20)]},
        ]
    history.append({"role": "user", "content": "last question", "id": "q6"})
    whole = sum(message_tokens(m) for m in history)
    noted = plan(history, whole - 1)
    assert noted.omitted_turns == 0 and noted.elided_results > 0
    tight = plan(history, 600)
    assert tight.omitted_turns > 0
    assert history[tight.first_kept]["id"] == f"q{tight.omitted_turns}"
    assert plan(history, whole).cut == Cut()
    # When the API clears old tool results itself (CONTEXT_STRATEGY=edit), trim leaves them
    # whole for it and only leaves out whole turns.
    whole_turns = plan(history, whole - 1, elide=False)
    assert whole_turns.omitted_turns > 0 and whole_turns.elided_results == 0
    assert whole_turns.tokens <= (whole - 1) * LOW
    assert "omitted" not in json.dumps(whole_turns.messages)


def test_an_oversized_current_turn_notes_its_older_results_but_not_the_newest() -> None:
    history = [
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [result("t1", 6000)]},
        {"role": "assistant", "content": [use("t2")]},
        {"role": "user", "content": [result("t2", 6000)]},
    ]
    p = plan(history, 2500)
    assert p.squeezed and p.elided_results == 1 and p.omitted_turns == 0
    assert p.messages[2]["content"][0]["content"].startswith("[result of get_transactions")
    assert p.messages[4] == sent(history[4])
    assert validate_history(p.messages) == []
