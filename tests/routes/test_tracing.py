"""Traces: request, turn, model and tool spans with GenAI attributes; one across a takeover."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from config import Settings
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from services.sessions import create_session
from telemetry import audit, tracing
from tests.waits import wait_until

QUESTION = "What did I spend on groceries last month?"


class Gate(SpanProcessor):
    """Passes ended spans to the exporter only while a test of this module records them."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner, self.open = inner, False

    def on_end(self, span: ReadableSpan) -> None:
        if self.open:
            self.inner.on_end(span)


EXPORTER = InMemorySpanExporter()
GATE = Gate(SimpleSpanProcessor(EXPORTER))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The process's tracer provider (set once) recording into EXPORTER for this test."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(GATE)
        trace.set_tracer_provider(provider)
    EXPORTER.clear()
    GATE.open = True
    yield EXPORTER
    GATE.open = False
    EXPORTER.clear()
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer

    EngineTracer.remove_all_event_listeners()


@pytest.fixture
def app_config(app_config: dict[str, Any], spans: InMemorySpanExporter) -> dict[str, Any]:
    return {**app_config, "TRACING": True, "TIME_SCALE": 0.05}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def settle(exporter: InMemorySpanExporter, want: str, patience: float = 10.0) -> None:
    """Wait until a span named `want` has ended (the turn's task ends after its stream)."""
    wait_until(lambda: named(list(exporter.get_finished_spans()), want), patience, f"no {want}")


def all_values(span: ReadableSpan) -> str:
    return " ".join(str(v) for v in (span.attributes or {}).values())


def test_a_turn_with_a_tool_round_is_one_trace_of_request_turn_model_and_tool_spans(
    client: Any, app: Any, user: tuple[int, str], spans: InMemorySpanExporter
) -> None:
    response = client.post("/api/chat/stream", json={"message": QUESTION}, headers=bearer(user[1]))
    assert response.status_code == 200
    response.get_data()  # the whole turn
    settle(spans, "invoke_agent")
    finished = list(spans.get_finished_spans())
    [request] = [s for s in finished if s.kind == SpanKind.SERVER]
    assert request.attributes and request.attributes.get("http.route") == "/api/chat/stream"
    [turn] = named(finished, "invoke_agent chat")
    calls, tools = named(finished, "chat "), named(finished, "execute_tool ")
    assert len(calls) >= 2 and tools, [s.name for s in finished]
    trace_id = request.context.trace_id
    for span in [turn, *calls, *tools]:
        assert span.context.trace_id == trace_id
    assert turn.parent is not None and turn.parent.span_id == request.context.span_id
    assert turn.attributes is not None
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["chat.turn.id"] == response.headers["X-Turn-Id"]
    assert turn.attributes["gen_ai.conversation.id"] == response.headers["X-Session-Id"]
    assert turn.attributes["chat.turn.status"] == "completed"
    model = app.extensions["engine"].deps.model.model
    for call in calls:
        a = call.attributes or {}
        assert call.name == f"chat {model}" and call.kind == SpanKind.CLIENT
        assert call.parent is not None and call.parent.span_id == turn.context.span_id
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == "anthropic"
        assert a["gen_ai.request.model"] == model and a["gen_ai.response.model"]
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert "gen_ai.usage.cache_read.input_tokens" in a
        assert "gen_ai.usage.cache_creation.input_tokens" in a
    reasons = [tuple((c.attributes or {})["gen_ai.response.finish_reasons"]) for c in calls]
    assert reasons[0] == ("tool_use",) and reasons[-1] == ("end_turn",)
    for tool in tools:
        a = tool.attributes or {}
        assert tool.name == f"execute_tool {a['gen_ai.tool.name']}"
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert str(a["gen_ai.tool.call.id"]).startswith("toolu_")
        assert tool.parent is not None and tool.parent.span_id == turn.context.span_id
    # Database statements of the request and of the turn are in the trace; no text is.
    statements = [s for s in finished if "db.system" in (s.attributes or {})]
    assert statements and all(s.context.trace_id == trace_id for s in statements)
    assert all(s.parent is not None for s in statements)
    assert all(QUESTION not in all_values(s) for s in finished)
    assert not any("gen_ai.input.messages" in (s.attributes or {}) for s in finished)


def test_message_content_goes_into_spans_only_when_asked(
    client: Any, user: tuple[int, str], spans: InMemorySpanExporter, monkeypatch: Any
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    response = client.post("/api/chat/stream", json={"message": QUESTION}, headers=bearer(user[1]))
    response.get_data()
    settle(spans, "invoke_agent")
    finished = list(spans.get_finished_spans())
    first = named(finished, "chat ")[0].attributes or {}
    assert QUESTION in str(first["gen_ai.input.messages"])
    assert "gen_ai.output.messages" in first
    tool = named(finished, "execute_tool ")[0].attributes or {}
    assert "gen_ai.tool.call.arguments" in tool and "gen_ai.tool.call.result" in tool


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_turn_taken_over_after_its_worker_died_stays_in_its_trace(
    app: Any, db: Any, user: tuple[int, str], spans: InMemorySpanExporter
) -> None:
    # The first worker: a request starts the turn, then the worker dies (kill -9) with the
    # turn running, its own turn span never ended.
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    with tracing.TRACER.start_as_current_span("POST /api/sessions/<id>/turns") as request:
        new, _, _ = TurnStore(db).start_turn(
            user[0], sid, QUESTION, dead.worker_id, traceparent=tracing.traceparent()
        )
    dead.retire()
    trail = Lines()
    audit.AUDIT.addHandler(trail)
    audit.AUDIT.setLevel(logging.INFO)
    try:
        # This app's worker: its reaper takes the orphan over and finishes it.
        app.extensions["engine"].ensure_started()
        settle(spans, "invoke_agent", patience=20)
    finally:
        audit.AUDIT.removeHandler(trail)
    finished = list(spans.get_finished_spans())
    [turn] = named(finished, "invoke_agent chat")
    assert turn.context.trace_id == request.get_span_context().trace_id
    assert turn.parent is not None and turn.parent.span_id == request.get_span_context().span_id
    assert turn.attributes is not None and turn.attributes["chat.turn.takeovers"] == 1
    assert turn.attributes["chat.turn.status"] == "completed"
    later = named(finished, "chat ") + named(finished, "execute_tool ")
    assert later and all(s.context.trace_id == turn.context.trace_id for s in later)
    [taken] = list(audit.query(trail.lines, event="turn_taken_over"))
    assert taken["turn_id"] == new.turn_id and taken["takeovers"] == 1
    assert format(turn.context.trace_id, "032x") in taken["traceparent"]


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_SERVICE_NAME": "chat"}, False),
    ],
)
def test_traces_are_off_unless_the_otel_variables_ask(env: dict[str, str], on: bool) -> None:
    assert Settings.from_env(env).tracing is on


class Recorded:
    """A span that keeps the attributes set on it."""

    def __init__(self) -> None:
        self.attributes: dict[str, Any] = {}

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value


def test_a_model_span_says_which_thinking_blocks_the_api_dropped() -> None:
    dropped = {"type": "thinking_dropped", "path": "messages.1.content.0"}
    usage = {
        "input_tokens": 10,
        "input_transformations": [
            {**dropped, "reason": "prefix_binding_mismatch"},
            {**dropped, "reason": "model_binding_mismatch", "path": "messages.3.content.0"},
            {"type": "thinking_mismatch_allowed", "path": "messages.5.content.0", "reason": "x"},
        ],
    }
    span = Recorded()
    tracing.model_answered(span, "m", "msg_1", "end_turn", usage, [])  # type: ignore[arg-type]
    assert span.attributes["anthropic.thinking.dropped_blocks"] == 2
    assert span.attributes["anthropic.thinking.dropped_reasons"] == [
        "model_binding_mismatch",
        "prefix_binding_mismatch",
    ]
    plain = Recorded()
    tracing.model_answered(plain, "m", "msg_2", "end_turn", {"input_tokens": 1}, [])  # type: ignore[arg-type]
    assert not any(k.startswith("anthropic.") for k in plain.attributes)
