"""Calls the Messages API with a raw event stream and yields decoded event dicts."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import date
from typing import Any

import anthropic
import httpx2

from engine.transport import StreamingTransport, proxy_configured
from streaming.sse import iter_json_events

log = logging.getLogger(__name__)

DEMO_LABEL = "offline demo model"
SYSTEM_PROMPT = (
    "You are a personal finance assistant. Answer questions about the user's own accounts, "
    "transactions and budgets using the tools; quote exact amounts with their currency and "
    "the dates they cover. Today is {today}."
)
POLL = 0.05


class CallAborted(Exception):
    """The call was aborted (cancel or stall) before the response arrived."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UpstreamCall:
    """One model call: its events, and an abort that works from any thread at any time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: httpx2.Response | None = None
        self._chunks: Iterator[bytes] | None = None
        self._done = False
        self.abort_reason: str | None = None

    def events(self) -> Iterator[dict[str, Any]]:
        """Yield the stream's decoded events."""
        assert self._chunks is not None
        return iter_json_events(self._chunks)

    def abort(self, reason: str) -> None:
        """Break the connection so a read blocked on it returns at once; first reason wins."""
        # All under the lock: once _finish() has run the connection may be pooled and
        # reused by another turn, so a late shutdown must never reach it.
        with self._lock:
            if self._done or self.abort_reason is not None:
                return
            self.abort_reason = reason
            if self._response is not None:
                _break(self._response)

    def _attach(self, response: httpx2.Response, chunks: Iterator[bytes]) -> bool:
        with self._lock:
            if self.abort_reason is not None:
                return False
            self._response, self._chunks = response, chunks
            return True

    def _finish(self) -> None:
        # After this, abort() never touches the socket: it may go back to the pool.
        with self._lock:
            self._done = True


class ModelClient:
    """A thin wrapper over the official SDK; the turn engine owns retries."""

    def __init__(
        self,
        client: anthropic.Anthropic,
        model: str,
        max_tokens: int,
        system: str | None = None,
    ) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens
        self.system = system

    @contextmanager
    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], call: UpstreamCall
    ) -> Iterator[UpstreamCall]:
        """Open one streamed call; raise CallAborted if `call` is aborted while it opens."""
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
        opened = _open_in_background(
            self.client.messages.with_streaming_response.create(**params), call
        )
        try:
            yield call
        finally:
            call._finish()
            opened.__exit__(None, None, None)


def _open_in_background(
    manager: AbstractContextManager[Any], call: UpstreamCall
) -> AbstractContextManager[Any]:
    """Wait for the response headers in a helper thread so an abort need not wait for them."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    def opener() -> None:
        try:
            response = manager.__enter__()
        except BaseException as err:
            box["error"] = err
            ready.set()
            return
        if call._attach(response.http_response, _body(response.http_response)):
            box["ok"] = True
        else:
            manager.__exit__(None, None, None)  # nobody waits for it any more
        ready.set()

    threading.Thread(target=opener, name="model-open", daemon=True).start()
    while not ready.wait(POLL):
        if call.abort_reason is not None:
            break
    if call.abort_reason is not None:
        if call._response is not None:
            # Attached before the abort: the opener is about to return; close its response.
            # (Unattached, the opener sees the abort in _attach and closes it itself.)
            ready.wait()
            manager.__exit__(None, None, None)
        raise CallAborted(call.abort_reason)
    if "error" in box:
        raise box["error"]
    if "ok" not in box:
        raise CallAborted(call.abort_reason or "aborted")
    return manager


def _break(response: httpx2.Response) -> None:
    """Shut the response's connection down; shutdown(), unlike close(), wakes a recv()."""
    stream = response.extensions.get("network_stream")
    if stream is None:
        return
    if hasattr(stream, "abort"):  # the lean transport also keeps it out of its pool
        stream.abort()
        return
    sock = stream.get_extra_info("socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            log.debug("upstream socket already closed")


def _body(response: httpx2.Response) -> Iterator[bytes]:
    """The body's bytes; straight from the transport unless they need decompressing."""
    if response.headers.get("content-encoding", "identity") == "identity":
        return iter(response.stream)  # type: ignore[arg-type]
    return response.iter_bytes()


def build_model_client(config: dict[str, Any]) -> ModelClient:
    """Return the real client when an API key is set, else the offline demo model."""
    # The watchdog enforces stall limits precisely; this read timeout is only a backstop.
    read = max(config["STALL_TIMEOUT"], config["FIRST_TOKEN_TIMEOUT"]) + 5
    timeout = httpx2.Timeout(connect=10.0, read=read, write=30.0, pool=30.0)
    system = config.get("SYSTEM_PROMPT") or SYSTEM_PROMPT
    if config.get("ANTHROPIC_API_KEY"):
        # The lean transport reads the stream without httpx2's per-chunk layers; the
        # default one is kept for proxies, which it does not speak.
        transport = None if proxy_configured() else StreamingTransport()
        client = anthropic.Anthropic(
            api_key=config["ANTHROPIC_API_KEY"],
            base_url=config.get("ANTHROPIC_BASE_URL"),
            max_retries=0,
            timeout=timeout,
            http_client=httpx2.Client(transport=transport, timeout=timeout),
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
    return ModelClient(client, DEMO_LABEL, config["MAX_TOKENS"], system)
