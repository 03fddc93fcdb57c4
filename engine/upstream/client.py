"""Builds each Messages API request and opens its raw event stream with the official SDK.

A thread reads it through `stream()` (engine/upstream/thread_call.py); the event loop of
the ASGI server through `aopen()`. Both hand over the bytes untouched: they are decoded
once, by our own decoder, instead of building the SDK's models per event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import date
from typing import Any

import anthropic
import httpx2

from engine.upstream.caching import EXTENDED_TTL_BETA, CacheMode, place
from engine.upstream.thread_call import UpstreamCall, open_in_background

log = logging.getLogger(__name__)

DEMO_LABEL = "offline demo model"
SYSTEM_PROMPT = (
    "You are a personal finance assistant. Answer questions about the user's own accounts, "
    "transactions and budgets using the tools; quote exact amounts with their currency and "
    "the dates they cover."
)
# The date is its own system block after the cached static one, so a new day changes only
# what follows it (a live session's history is written again once) and never tools or system.
DATE_NOTE = "Today is {today}."


class ModelClient:
    """A thin wrapper over the official SDK; the turn engine owns retries."""

    def __init__(
        self,
        client: anthropic.Anthropic,
        model: str,
        max_tokens: int,
        system: str | None = None,
        cache: CacheMode = "5m",
        today: Callable[[], date] = date.today,
        make_async: Callable[[], anthropic.AsyncAnthropic] | None = None,
    ) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens
        self.system, self.cache, self.today = system, cache, today
        self._make_async = make_async
        # An async client belongs to the loop it was made in (its connection pool does).
        self._async: dict[asyncio.AbstractEventLoop, anthropic.AsyncAnthropic] = {}

    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Return the SDK's create() arguments for one call, with prompt-cache breakpoints."""
        today = self.today().isoformat()
        system = []
        if self.system:
            system = [
                {"type": "text", "text": self.system},
                {"type": "text", "text": DATE_NOTE.format(today=today)},
            ]
        tools, system, messages = place(tools, system, messages, self.cache)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "stream": True,
        }
        if tools:
            params["tools"] = tools
        if system:
            params["system"] = system
        if self.cache == "1h":
            params["extra_headers"] = {"anthropic-beta": EXTENDED_TTL_BETA}
        return params

    @contextmanager
    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], call: UpstreamCall
    ) -> Iterator[UpstreamCall]:
        """Open one streamed call; raise CallAborted if `call` is aborted while it opens."""
        params = self.request(messages, tools)
        # with_streaming_response keeps the SDK's auth and headers but hands us the bytes:
        # we decode them once instead of building pydantic models per event.
        opened = open_in_background(
            self.client.messages.with_streaming_response.create(**params), call
        )
        try:
            yield call
        finally:
            call._finish()
            opened.__exit__(None, None, None)

    @property
    def streams_in_loop(self) -> bool:
        """Whether `aopen` can run this client's calls in an event loop."""
        return self._make_async is not None

    async def aclose(self) -> None:
        """Close the running loop's client and its connection pool (at server shutdown)."""
        client = self._async.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    @asynccontextmanager
    async def aopen(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open one streamed call in the running loop; yield its raw byte chunks."""
        assert self._make_async is not None
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._async[loop] = self._make_async()
        params = self.request(messages, tools)
        async with client.messages.with_streaming_response.create(**params) as response:
            http = response.http_response
            if http.headers.get("content-encoding", "identity") == "identity":
                yield http.stream  # type: ignore[misc]
            else:
                yield http.aiter_bytes()


def build_model_client(config: dict[str, Any]) -> ModelClient:
    """Return the real client when an API key is set, else the offline demo model."""
    # The watchdog enforces stall limits precisely; this read timeout is only a backstop.
    timings = config["TIMINGS"]
    read = max(timings.stall_timeout, timings.first_token_timeout) + 5
    timeout = httpx2.Timeout(connect=10.0, read=read, write=30.0, pool=30.0)
    system = config.get("SYSTEM_PROMPT") or SYSTEM_PROMPT
    cache = config.get("PROMPT_CACHE", "5m")
    options: dict[str, Any] = {"max_retries": 0, "timeout": timeout}
    if config.get("ANTHROPIC_API_KEY"):
        options.update(
            api_key=config["ANTHROPIC_API_KEY"], base_url=config.get("ANTHROPIC_BASE_URL")
        )

        def make_async() -> anthropic.AsyncAnthropic:
            # The SDK's aiohttp transport: its C parser reads a stream for a fraction of the
            # CPU of the default one, and it honours proxies and the system's CA settings.
            http = anthropic.DefaultAioHttpClient(timeout=timeout)
            return anthropic.AsyncAnthropic(http_client=http, **options)

        client = anthropic.Anthropic(**options)
        model = config["ANTHROPIC_MODEL"]
    else:
        from demo_model.transport import AsyncDemoTransport, DemoTransport, Pace

        pace = Pace(config.get("DEMO_EVENT_DELAY", 0.0))
        options.update(api_key="offline-demo", base_url="http://offline-demo.invalid")

        def make_async() -> anthropic.AsyncAnthropic:
            http = httpx2.AsyncClient(transport=AsyncDemoTransport(pace), timeout=timeout)
            return anthropic.AsyncAnthropic(http_client=http, **options)

        http_client = httpx2.Client(transport=DemoTransport(pace), timeout=timeout)
        client = anthropic.Anthropic(http_client=http_client, **options)
        model = DEMO_LABEL
    return ModelClient(client, model, config["MAX_TOKENS"], system, cache, make_async=make_async)
