"""Calls the Messages API with a raw event stream and yields decoded event dicts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import httpx2

from streaming.sse import iter_json_events

DEMO_LABEL = "offline demo model"


class ModelClient:
    """A thin wrapper over the official SDK: retries before content, raw SSE after."""

    def __init__(
        self, client: anthropic.Anthropic, model: str, max_tokens: int, system: str | None = None
    ) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.system = system
        self.is_demo = False

    @contextmanager
    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[Iterator[dict[str, Any]]]:
        """Open one streamed call; yield an iterator of raw event dicts, closed on exit."""
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "stream": True,
        }
        if tools:
            params["tools"] = tools
        if self.system:
            params["system"] = self.system
        # with_streaming_response keeps the SDK's auth, headers and pre-content retries,
        # but hands us the bytes: we decode them once instead of building models per event.
        with self.client.messages.with_streaming_response.create(**params) as response:
            yield iter_json_events(response.iter_bytes())


def build_model_client(config: dict[str, Any], tool_names: list[str] | None = None) -> ModelClient:
    """Return the real client when an API key is set, else the offline demo model."""
    retries = config["UPSTREAM_MAX_RETRIES"]
    timeout = httpx2.Timeout(connect=10.0, read=config["STALL_TIMEOUT"], write=30.0, pool=30.0)
    system = config.get("SYSTEM_PROMPT") or SYSTEM_PROMPT
    if config.get("ANTHROPIC_API_KEY"):
        client = anthropic.Anthropic(
            api_key=config["ANTHROPIC_API_KEY"],
            base_url=config.get("ANTHROPIC_BASE_URL"),
            max_retries=retries,
            timeout=timeout,
        )
        return ModelClient(client, config["ANTHROPIC_MODEL"], config["MAX_TOKENS"], system)
    from demo_model.transport import DemoTransport

    transport = DemoTransport(event_delay=config.get("DEMO_EVENT_DELAY", 0.0))
    client = anthropic.Anthropic(
        api_key="offline-demo",
        base_url="http://offline-demo.invalid",
        max_retries=retries,
        timeout=timeout,
        http_client=httpx2.Client(transport=transport, timeout=timeout),
    )
    demo = ModelClient(client, f"{DEMO_LABEL}", config["MAX_TOKENS"], system)
    demo.is_demo = True
    return demo


SYSTEM_PROMPT = (
    "You are a personal finance assistant. Answer questions about the user's own accounts, "
    "transactions and budgets using the tools; quote exact amounts with their currency and "
    "the dates they cover. Today is {today}."
)
