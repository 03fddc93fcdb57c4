"""Builds each Messages API request and opens its raw event stream with the official SDK.

Calls stream in the engine's loop through the SDK's async client; the bytes are handed
over untouched and decoded once, by our own decoder, instead of building the SDK's models
per event.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

import anthropic
import httpx2

from config import Settings
from engine.upstream.caching import EXTENDED_TTL_BETA, CacheMode, place
from engine.upstream.conversation import SYSTEM_PROMPT
from engine.upstream.shape import Shape, shape_for
from engine.upstream.strategy import Strategy, strategy_for

log = logging.getLogger(__name__)


class ModelClient:
    """A thin wrapper over the official SDK's async client; the turn engine owns retries."""

    def __init__(
        self,
        make_client: Callable[[], anthropic.AsyncAnthropic],
        model: str,
        max_tokens: int,
        system: str | None = None,
        cache: CacheMode = "5m",
        today: Callable[[], date] = date.today,
        demo_pace: Pace | None = None,
        strategy: Strategy | None = None,
        shape: Shape | None = None,
    ) -> None:
        self.model, self.max_tokens = model, max_tokens
        self.strategy = strategy or Strategy()
        # What the model's row accepts of thinking, effort and display (and their betas).
        self.shape = shape or shape_for(model, "adaptive", "", "updates")
        # The offline demo model's pace (None for the real API): demos and tests slow it.
        self.demo_pace = demo_pace
        self.system, self.cache, self.today = system, cache, today
        # Made in the engine's loop at the first call: its connection pool belongs there.
        self._make_client = make_client
        self._client: anthropic.AsyncAnthropic | None = None

    def request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        system: list[dict[str, Any]] | None = None,
        drop_blocks: bool = False,
        betas: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Return the SDK's create() arguments for one call, with prompt-cache breakpoints.

        `system` is the conversation's own copy (engine/upstream/conversation.py; by default
        a new conversation's); `drop_blocks` sends the binding control the conversation keeps
        since the documented 400; `betas` are the ones its messages need.
        """
        if system is None:
            system = [{"type": "text", "text": self.system}] if self.system else []
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
        # One call path for every strategy and model: the fields the model's row decides and
        # the beta ones go as extra body and headers, exactly as written.
        extra, wanted = self.shape.fields(drop_blocks)
        if self.cache == "1h":
            wanted.insert(0, EXTENDED_TTL_BETA)
        management = self.strategy.context_management()
        if management is not None:
            extra["context_management"] = management
            wanted.append(self.strategy.beta or "")
        wanted.extend(betas)
        if extra:
            params["extra_body"] = extra
        if wanted:
            params["extra_headers"] = {"anthropic-beta": ",".join(dict.fromkeys(wanted))}
        return params

    async def count(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
    ) -> int:
        """Ask the API how many input tokens the request for `messages` holds.

        With a context strategy the count is of the request before the server edits it
        (`original_input_tokens`): what the window must hold. `shape`: as for `request`.
        """
        if self._client is None:
            self._client = self._make_client()
        params = self.request(messages, tools, **shape)
        for key in ("max_tokens", "stream"):
            params.pop(key, None)
        response = await self._client.messages.with_raw_response.count_tokens(**params)
        body = response.http_response.json()
        management = body.get("context_management") or {}
        original = management.get("original_input_tokens")
        tokens = body.get("input_tokens")
        return max(t for t in (original, tokens, 0) if isinstance(t, int))

    @asynccontextmanager
    async def open(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open one streamed call; yield its raw byte chunks (`shape`: as for `request`)."""
        if self._client is None:
            self._client = self._make_client()
        params = self.request(messages, tools, **shape)
        # with_streaming_response keeps the SDK's auth and headers but hands us the bytes.
        async with self._client.messages.with_streaming_response.create(**params) as response:
            http = response.http_response
            if http.headers.get("content-encoding", "identity") == "identity":
                yield http.stream
            else:
                yield http.aiter_bytes()

    async def close(self) -> None:
        """Close the client and its connection pool."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()


class Pace(Protocol):
    """Seconds between a demo model's streamed events (demos and tests change it live)."""

    delay: float


@dataclass(frozen=True)
class Upstream:
    """The model a client talks to: its HTTP client, credentials, model name and pace.

    The app picks it (the real API, or the offline demo model); the engine only uses it.
    """

    http: Callable[[httpx2.Timeout], httpx2.AsyncClient]
    api_key: str
    base_url: str | None
    model: str
    pace: Pace | None = None  # a demo model's, for demos and tests to slow it

    @classmethod
    def api(cls, api_key: str, base_url: str | None, model: str) -> Upstream:
        """The real API through the SDK's aiohttp transport: its C parser reads a stream for
        a fraction of the CPU of the default one, and it honours proxies and system CAs."""
        return cls(_aiohttp, api_key, base_url, model)


def _aiohttp(timeout: httpx2.Timeout) -> httpx2.AsyncClient:
    return anthropic.DefaultAioHttpClient(timeout=timeout)


def build_model_client(settings: Settings, upstream: Upstream) -> ModelClient:
    """Return the client of `upstream` with the settings' cache, strategy and limits."""
    timings = settings.timings
    # The stall watch enforces silence limits precisely; this read timeout is a backstop.
    read = max(timings.stall_timeout, timings.first_token_timeout) + timings.model_connect
    timeout = httpx2.Timeout(
        connect=timings.model_connect, read=read, write=timings.model_write, pool=read
    )
    strategy = strategy_for(
        settings.context_strategy, settings.model_context_tokens, settings.max_tokens
    )

    def make_client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            http_client=upstream.http(timeout),
            api_key=upstream.api_key,
            base_url=upstream.base_url,
            max_retries=0,  # the turn engine owns retries
            timeout=timeout,
        )

    shape = shape_for(upstream.model, settings.thinking, settings.effort, settings.thinking_display)
    for warning in shape.warnings:
        log.warning("%s", warning)
    return ModelClient(
        make_client,
        upstream.model,
        settings.max_tokens,
        SYSTEM_PROMPT,
        settings.prompt_cache,
        demo_pace=upstream.pace,
        strategy=strategy,
        shape=shape,
    )
