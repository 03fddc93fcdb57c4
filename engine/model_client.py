"""Calls the Messages API with a raw event stream and yields decoded event dicts."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import anthropic
import httpx2

from streaming.sse import iter_json_events

log = logging.getLogger(__name__)

DEMO_LABEL = "offline demo model"
SYSTEM_PROMPT = (
    "You are a personal finance assistant. Answer questions about the user's own accounts, "
    "transactions and budgets using the tools; quote exact amounts with their currency and "
    "the dates they cover. Today is {today}."
)


class UpstreamCall:
    """One open model stream: its events, and an abort that works from any thread."""

    def __init__(self, chunks: Iterable[bytes], response: httpx2.Response | None = None) -> None:
        self._chunks, self._response = chunks, response
        self.aborted = False

    def events(self) -> Iterator[dict[str, Any]]:
        """Yield the stream's decoded events."""
        return iter_json_events(self._chunks)

    def abort(self) -> None:
        """Break the connection so a read blocked on it returns at once."""
        self.aborted = True
        stream = self._response.extensions.get("network_stream") if self._response else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            # shutdown(), unlike close(), wakes a recv() blocked in another thread.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                log.debug("upstream socket already closed")


class ModelClient:
    """A thin wrapper over the official SDK; the turn engine owns retries."""

    def __init__(
        self,
        client: anthropic.Anthropic,
        model: str,
        max_tokens: int,
        system: str | None = None,
        is_demo: bool = False,
    ) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens
        self.system, self.is_demo = system, is_demo

    @contextmanager
    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[UpstreamCall]:
        """Open one streamed call; the response is closed when the block exits."""
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "stream": True,
        }
        if tools:
            params["tools"] = tools
        if self.system:
            params["system"] = self.system.replace("{today}", date.today().isoformat())
        # with_streaming_response keeps the SDK's auth and headers but hands us the bytes:
        # we decode them once instead of building pydantic models per event.
        with self.client.messages.with_streaming_response.create(**params) as response:
            yield UpstreamCall(response.iter_bytes(), response.http_response)


def build_model_client(config: dict[str, Any]) -> ModelClient:
    """Return the real client when an API key is set, else the offline demo model."""
    # The watchdog enforces stall limits precisely; this read timeout is only a backstop.
    read = max(config["STALL_TIMEOUT"], config["FIRST_TOKEN_TIMEOUT"]) + 5
    timeout = httpx2.Timeout(connect=10.0, read=read, write=30.0, pool=30.0)
    system = config.get("SYSTEM_PROMPT") or SYSTEM_PROMPT
    if config.get("ANTHROPIC_API_KEY"):
        client = anthropic.Anthropic(
            api_key=config["ANTHROPIC_API_KEY"],
            base_url=config.get("ANTHROPIC_BASE_URL"),
            max_retries=0,
            timeout=timeout,
        )
        return ModelClient(client, config["ANTHROPIC_MODEL"], config["MAX_TOKENS"], system)
    from demo_model.transport import DemoTransport

    transport = DemoTransport(event_delay=config.get("DEMO_EVENT_DELAY", 0.0))
    client = anthropic.Anthropic(
        api_key="offline-demo",
        base_url="http://offline-demo.invalid",
        max_retries=0,
        timeout=timeout,
        http_client=httpx2.Client(transport=transport, timeout=timeout),
    )
    return ModelClient(client, DEMO_LABEL, config["MAX_TOKENS"], system, is_demo=True)
