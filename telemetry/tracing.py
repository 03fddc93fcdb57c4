"""OpenTelemetry traces: off by default, on with the standard OTEL_* environment variables.

`OTEL_TRACES_EXPORTER=otlp` (or an `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`) exports over OTLP/HTTP,
`console` prints spans to stdout; `OTEL_SDK_DISABLED=true` keeps them off. Each request gets a
span (Flask instrumentation), each database statement inside it or inside a turn (SQLAlchemy
instrumentation), each turn an `invoke_agent` span, each model call a `chat <model>` span and
each tool run an `execute_tool <name>` span, with the GenAI semantic conventions' attributes.

A turn's trace context (`traceparent`) is stored on its row, so the worker that takes a turn
over continues the same trace. Message text and tool input or output go into spans only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

log = logging.getLogger(__name__)
TRACER = trace.get_tracer("chat")
PROPAGATOR = TraceContextTextMapPropagator()
PROVIDER = "anthropic"
AGENT = "chat"
# Requests an operator polls every few seconds: no trace of their own unless asked for.
QUIET_URLS = "healthz,metrics"
USAGE = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_creation_input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}


def capture_content() -> bool:
    """True when message text and tool data may go into spans."""
    flag = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    return flag.strip().lower() == "true"


def install_provider() -> None:
    """Set the process's tracer provider and exporters from OTEL_*, unless one is set already."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return  # a test's, or an earlier app's in this process
    env = os.environ
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "chat-backend"})
    provider = TracerProvider(resource=resource)  # OTEL_TRACES_SAMPLER applies
    names = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",")}
    names = (names - {"", "none"}) or {"otlp"}
    for name in sorted(names):
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:
            log.warning("OTEL_TRACES_EXPORTER=%s is not supported (otlp, console)", name)
    trace.set_tracer_provider(provider)


def instrument(app: Any, engine: Any) -> None:
    """Trace the app's requests and the database statements of `engine`."""
    from opentelemetry import metrics
    from opentelemetry.instrumentation.flask import FlaskInstrumentor
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.instrumentation.sqlalchemy.version import __version__

    excluded = os.environ.get("OTEL_PYTHON_FLASK_EXCLUDED_URLS", QUIET_URLS)
    FlaskInstrumentor().instrument_app(app, excluded_urls=excluded)
    # The instrumentation's tracer for this one engine. Its instrumentor would also patch
    # create_engine and SQLAlchemy's asyncio module process-wide, which we do not use.
    scope = "opentelemetry.instrumentation.sqlalchemy"
    usage = metrics.get_meter(scope, __version__).create_up_down_counter(
        "db.client.connections.usage", unit="connections"
    )
    EngineTracer(InsideTraces(trace.get_tracer(scope, __version__)), engine, usage)


def setup(app: Any, engine: Any, on: bool) -> None:
    """Turn tracing on for `app` (its provider, its requests, its statements) if `on`
    (the settings' `tracing`: whether the OTEL_* variables ask for traces)."""
    if not on:
        return
    install_provider()
    instrument(app, engine)


class InsideTraces:
    """A tracer for database statements that records them only inside a trace.

    Heartbeats and the reaper run statements every second with no request or turn around
    them: as traces of their own they would bury the ones an operator looks for.
    """

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    def start_span(self, name: str, context: Context | None = None, **kwargs: Any) -> Span:
        """A span under the current one, or a non-recording span outside any trace."""
        if not trace.get_current_span(context).get_span_context().is_valid:
            return trace.INVALID_SPAN
        return self.tracer.start_span(name, context, **kwargs)


# Turns, model calls and tools.


def traceparent() -> str | None:
    """The current span's context as a W3C traceparent, to store with a turn."""
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


@contextmanager
def turn_span(turn_id: str, session_id: str, parent: str | None, takeovers: int) -> Iterator[Span]:
    """The span of one turn (or of its run after a takeover), in the trace it started in."""
    context = PROPAGATOR.extract({"traceparent": parent}) if parent else None
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT,
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.conversation.id": session_id,
        "chat.turn.id": turn_id,
        "chat.turn.takeovers": takeovers,
    }
    with TRACER.start_as_current_span(
        f"invoke_agent {AGENT}", context, SpanKind.INTERNAL, attributes
    ) as span:
        yield span


def turn_ended(span: Span, status: str) -> None:
    """Record how the turn ended here (a quiet stop leaves it to the next worker)."""
    span.set_attribute("chat.turn.status", status)
    if status in ("failed", "crashed", "interrupted"):
        span.set_status(Status(StatusCode.ERROR, status))


def model_span(model: str, messages: list[dict[str, Any]]) -> Any:
    """A `chat <model>` span for one model call (one attempt)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.request.model": model,
    }
    if capture_content():
        attributes["gen_ai.input.messages"] = _json(messages)
    return TRACER.start_as_current_span(
        f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes
    )


def model_answered(
    span: Span,
    model: str | None,
    response_id: str | None,
    stop_reason: str | None,
    usage: dict[str, Any] | None,
    content: list[dict[str, Any]],
) -> None:
    """Add what the model answered: its model, id, finish reason and token usage."""
    if model:
        span.set_attribute("gen_ai.response.model", model)
    if response_id:
        span.set_attribute("gen_ai.response.id", response_id)
    if stop_reason:
        span.set_attribute("gen_ai.response.finish_reasons", [stop_reason])
    for key, name in USAGE.items():
        value = (usage or {}).get(key)
        if isinstance(value, int):
            span.set_attribute(name, value)
    # Thinking blocks the API dropped from the request (their binding failed).
    changed = (usage or {}).get("input_transformations")
    if isinstance(changed, list) and changed:
        dropped = [
            t for t in changed if isinstance(t, dict) and t.get("type") == "thinking_dropped"
        ]
        span.set_attribute("anthropic.thinking.dropped_blocks", len(dropped))
        reasons = sorted({str(t.get("reason")) for t in dropped})
        span.set_attribute("anthropic.thinking.dropped_reasons", reasons)
    if capture_content():
        span.set_attribute(
            "gen_ai.output.messages", _json([{"role": "assistant", "content": content}])
        )


def failed(span: Span, kind: str) -> None:
    """Mark a span failed with an `error.type` (a failure code, never a message's text)."""
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, kind))


def tool_span(name: str, call_id: str, arguments: dict[str, Any]) -> Any:
    """An `execute_tool <name>` span for one tool run."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }
    if capture_content():
        attributes["gen_ai.tool.call.arguments"] = _json(arguments)
    return TRACER.start_as_current_span(
        f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
    )


def tool_answered(span: Span, content: str, is_error: bool) -> None:
    """Add the tool's outcome (its result only when content capture is on)."""
    if is_error:
        failed(span, "tool_error")
    if capture_content():
        span.set_attribute("gen_ai.tool.call.result", content)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)
