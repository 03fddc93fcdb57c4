"""Recorded-style replies of a compacting and a context-editing API, through the real engine.

The compaction reply is the shared transcript (../shared/transcripts); the context-editing
one is hand-made in tests/context/transcripts, shaped as the API's message_delta with
`context_management.applied_edits`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.upstream.strategy import OPENER
from services.sessions import create_session, get_session
from streaming.wire.protocol import decode_stream
from tests.conftest import make_user
from tests.faults.kinds import Transcript
from tests.faults.upstream import FaultyUpstream

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"
COMPACTION = SHARED / "anthropic-sdk-python__compaction_block.sse"
EDITS = Path(__file__).parent / "transcripts" / "context_management_applied_edits.sse"
TEXT = SHARED / "anthropic-sdk-python__basic_text_with_ping.sse"


def converse(
    db_url: str, tmp_path: Path, replies: list[Path], questions: list[str], **config: Any
) -> tuple[list[dict[str, Any]], list[list[tuple[int, str, dict[str, Any]]]], dict[str, Any]]:
    """Ask `questions` in one session; the upstream serves `replies` in order."""
    from app import create_app

    with FaultyUpstream() as upstream:
        upstream.script(*(Transcript(path) for path in replies))
        app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": db_url,
                "ANTHROPIC_API_KEY": "sk-transcript",
                "ANTHROPIC_BASE_URL": upstream.url,
                "SECRET_KEY": "transcripts",
                "EVENT_SPOOL_DIR": str(tmp_path / "spool"),
                **config,
            }
        )
        service, db = app.extensions["turns"], app.extensions["db"]
        events = []
        try:
            user_id, _ = make_user(db, "transcripts")
            session_id = create_session(db, user_id)["id"]
            for question in questions:
                started = service.start(user_id, session_id, question)
                assert service.wait(started.turn_id, timeout=30)
                events.append(decode_stream(service.peek(started.turn_id, 0).frames))
            shown = get_session(db, user_id, session_id, app.extensions["prices"])
        finally:
            app.extensions["engine"].close()
            db.dispose()
        return list(upstream.requests), events, shown


@pytest.mark.skipif(not COMPACTION.exists(), reason="shared transcripts are not here")
def test_a_compaction_block_is_stored_verbatim_and_starts_the_next_request(
    db_url: str, tmp_path: Path
) -> None:
    bodies, events, shown = converse(
        db_url,
        tmp_path,
        [COMPACTION, TEXT],
        ["Hello?", "And now?"],
        CONTEXT_STRATEGY="compact",
        MODEL_CONTEXT_TOKENS=200_000,
        MAX_TOKENS=4000,
    )
    block = {
        "type": "compaction",
        "content": "Earlier conversation summarized.",
        "encrypted_content": "EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload",
    }
    replies = [m for m in shown["messages"] if m["role"] == "assistant"]
    assert replies[0]["content"] == [block, {"type": "text", "text": "Hello there!"}]
    # Clients see the compaction as its own block, not as answer text.
    started = [d for _, kind, d in events[0] if kind == "block_start"]
    assert [d["type"] for d in started] == ["compaction", "text"]
    first, second = bodies
    assert first["context_management"] == {
        "edits": [
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 117_600}}
        ]
    }
    # The next request starts at the compaction block (the question before it is not sent,
    # a constant opener keeps it user-first), round-tripped verbatim with a breakpoint on it.
    # The date told before it went with what it sums up: it is told again at the end.
    sent = second["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "system"]
    assert sent[3]["content"][0]["text"].startswith("Today is ")
    assert sent[0]["content"] == [{"type": "text", "text": OPENER["content"]}]
    assert sent[1]["content"][0] == {**block, "cache_control": {"type": "ephemeral"}}
    assert sent[1]["content"][1]["text"] == "Hello there!"
    assert sent[2]["content"][-1]["text"] == "And now?"
    assert first["messages"][-1]["role"] == "system", "the first request tells the date"
    # Everything stays stored and shown.
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"] * 2


def test_applied_edits_reach_clients_and_are_recorded(db_url: str, tmp_path: Path) -> None:
    bodies, events, shown = converse(
        db_url,
        tmp_path,
        [EDITS],
        ["What did groceries cost?"],
        CONTEXT_STRATEGY="edit",
        MODEL_CONTEXT_TOKENS=200_000,
        MAX_TOKENS=4096,
    )
    applied = {
        "applied_edits": [
            {
                "type": "clear_tool_uses_20250919",
                "cleared_tool_uses": 6,
                "cleared_input_tokens": 18250,
            }
        ]
    }
    edits = bodies[0]["context_management"]["edits"]
    assert edits == [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 97_952},
            "keep": {"type": "tool_uses", "value": 4},
            "clear_at_least": {"type": "input_tokens", "value": 29_385},
        }
    ]
    ends = [d for _, kind, d in events[0] if kind == "message_end"]
    assert ends[-1]["context_management"] == applied
    reply = next(m for m in shown["messages"] if m["role"] == "assistant")
    assert reply["usage"]["context_management"] == applied
    assert reply["usage"]["input_tokens"] == 21840
