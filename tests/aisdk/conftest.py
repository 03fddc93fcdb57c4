"""Live servers for the AI SDK endpoints: the demo model, or the fault-injecting upstream."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from demo_data.generator import seed_finance
from models.db import Database
from tests.conftest import make_user
from tests.faults.upstream import FaultyUpstream
from tests.live import LiveServer

Serve = Callable[..., LiveServer]


@pytest.fixture
def serve(app_config: dict[str, Any], db: Database) -> Iterator[Serve]:
    """Return a function that starts the app (with config overrides) on a loopback port."""
    started: list[tuple[Any, LiveServer]] = []
    user_id, token = make_user(db, "alice")
    seed_finance(db, user_id, months=3, seed=5)

    def start(**overrides: Any) -> LiveServer:
        from app import create_app

        app = create_app({**app_config, **overrides})
        server = LiveServer(app, token)
        server.user_id = user_id  # type: ignore[attr-defined]
        started.append((app, server))
        return server

    yield start
    for app, server in started:
        server.close()
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


@pytest.fixture
def upstream() -> Iterator[FaultyUpstream]:
    """A loopback Anthropic API that injects scripted faults."""
    with FaultyUpstream() as server:
        yield server


def faulty_config(upstream: FaultyUpstream) -> dict[str, Any]:
    """Settings that point the app at `upstream`, with fast retries."""
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": upstream.url,
        "UPSTREAM_BACKOFF_BASE": 0.01,
        "UPSTREAM_MAX_RETRIES": 2,
        "STALL_TIMEOUT": 2.0,
        "FIRST_TOKEN_TIMEOUT": 5.0,
    }


def read_ui(
    live: LiveServer,
    method: str,
    path: str,
    max_chunks: int | None = None,
    token: str | None = None,
    **kw: Any,
) -> tuple[int, list[dict[str, Any]], bool]:
    """Read a UI message stream: (status, chunks, whether it ended with [DONE])."""
    headers = {**(kw.pop("headers", None) or {})}
    headers["Authorization"] = f"Bearer {token}" if token else live.headers["Authorization"]
    raw, chunks = b"", []
    with (
        httpx2.Client(base_url=live.url, timeout=30) as client,
        client.stream(method, path, headers=headers, **kw) as response,
    ):
        if response.status_code != 200:
            return response.status_code, [], False
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers["content-type"].startswith("text/event-stream")
        for piece in response.iter_raw():
            raw += piece
            *frames, raw = raw.split(b"\n\n")
            for frame in frames:
                if not frame.startswith(b"data: "):
                    continue
                if frame == b"data: [DONE]":
                    return 200, chunks, True
                chunks.append(json.loads(frame[6:]))
                if max_chunks is not None and len(chunks) >= max_chunks:
                    return 200, chunks, False
    return 200, chunks, False
