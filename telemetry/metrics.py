"""Prometheus metrics, defined once; served at /metrics for this process or all workers.

Under gunicorn, gunicorn.conf.py sets PROMETHEUS_MULTIPROC_DIR before any worker starts:
every worker then writes its values to files there and /metrics sums them all (gauges of
live workers only). Per-event metrics have no labels (`.labels()` is a dict lookup under a
lock: fine per turn, tool run or request, never per streamed event).
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

# Seconds: from a fast JSON answer to a long multi-round turn or an hour-long stream.
SHORT = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
LONG = (0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)

TURNS_ACTIVE = Gauge("chat_turns_active", "Turns running now.", multiprocess_mode="livesum")
TURNS_STARTED = Counter("chat_turns_started_total", "Turns started or taken over.")
TURNS_FINISHED = Counter(
    "chat_turns_finished_total",
    "Turns that ended here, by final status (handover and fenced: left to another worker).",
    ["status"],
)
TURN_SECONDS = Histogram(
    "chat_turn_duration_seconds", "Time a worker spent running a turn.", buckets=LONG
)
STREAMS_ACTIVE = Gauge(
    "chat_streams_active", "SSE responses open now.", multiprocess_mode="livesum"
)
STREAM_SECONDS = Histogram(
    "chat_stream_duration_seconds", "How long SSE responses stayed open.", buckets=LONG
)
EVENTS = Counter("chat_events_published_total", "Client events appended to turn logs.")
UPSTREAM_RETRIES = Counter(
    "chat_upstream_retries_total", "Model calls retried, by kind of failure.", ["kind"]
)
TOKEN_COUNTS = Counter(
    "chat_token_counts_total",
    "count_tokens calls near the window, by outcome (fits, refit, failed).",
    ["outcome"],
)
THINKING_DROPPED = Counter(
    "chat_thinking_blocks_dropped_total",
    "Thinking blocks the API dropped from requests (drop_block, or another model's).",
)
TOOL_RUNS = Counter("chat_tool_runs_total", "Tool calls answered, by tool.", ["tool"])
TOOL_ERRORS = Counter("chat_tool_errors_total", "Tool calls answered is_error, by tool.", ["tool"])
TOOL_SECONDS = Histogram(
    "chat_tool_duration_seconds", "Time tools took to run, by tool.", ["tool"], buckets=SHORT
)
REQUEST_SECONDS = Histogram(
    "http_request_duration_seconds",
    "Time to answer a request (to its headers, for event streams), by route template.",
    ["method", "route", "status"],
    buckets=SHORT,
)
RATE_LIMITED = Counter("chat_rate_limited_total", "Requests refused by RATE_LIMIT.")
LIMIT_REFUSALS = Counter(
    "chat_limit_refusals_total",
    "Turn starts refused with 429, by limit (rate_limited, too_many_turns, daily_token_limit).",
    ["limit"],
)


def render() -> tuple[bytes, str]:
    """Return the exposition text and its content type: every worker's, in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
