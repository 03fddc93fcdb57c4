"""The WSGI bridge: a fixed pool of threads runs the app, one hop each way.

The loop reads the whole request first (bounded in size and time, server/http.py), so a
thread runs the whole app call and hands back the status, the headers and the whole body
in one result. A view that streams returns the body the environ's STREAM_HOOK made
(`StreamBody`); the thread hands that back untouched and the loop streams it, so a
long-lived stream holds a task, never a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import unquote_to_bytes

from streaming.hosting import CLIENT_GONE, STREAM_HOOK, BodyFactory, WSGIApp

Headers = list[tuple[str, str]]


class StreamBody:
    """A response body the host streams from its event loop (what STREAM_HOOK returns)."""

    __slots__ = ("factory",)

    def __init__(self, factory: BodyFactory) -> None:
        self.factory = factory

    def __iter__(self) -> Iterator[bytes]:
        """Refuse: the body belongs to the host's loop, not to a thread."""
        raise TypeError("a StreamBody is streamed by the host; return it untouched")


@dataclass(slots=True)
class Request:
    """One whole request as the connection read it."""

    method: str
    target: bytes
    version: str
    headers: list[tuple[bytes, bytes]]
    # The body read whole: in memory, or an upload's in a temporary file (closed once served).
    body: bytes | BinaryIO
    client: tuple[str, int] | None
    server: tuple[str, int] | None
    # Whether the client has gone (its connection closed), asked from the app's thread.
    gone: Callable[[], bool] | None = None


@dataclass(slots=True)
class Response:
    """The app's answer, encoded: its status, its headers, and its body or a body to stream."""

    status: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes | StreamBody


def build_environ(request: Request, multiprocess: bool = False) -> dict[str, Any]:
    """The PEP 3333 environ of one request."""
    target = request.target.split(b"#", 1)[0]
    authority = None
    if not target.startswith(b"/") and b"://" in target:  # absolute-form
        # The target's authority is the request's host, whatever Host says (RFC 9112 3.2.2).
        authority, _, rest = target.split(b"://", 1)[1].partition(b"/")
        target = b"/" + rest
    path, _, query = target.partition(b"?")
    server_name, server_port = request.server or ("localhost", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "SERVER_NAME": server_name,
        "SERVER_PORT": str(server_port),
        "SERVER_PROTOCOL": f"HTTP/{request.version}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(request.body) if isinstance(request.body, bytes) else request.body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": multiprocess,
        "wsgi.run_once": False,
        "wsgi.input_terminated": True,
        STREAM_HOOK: StreamBody,
    }
    if request.gone is not None:
        environ[CLIENT_GONE] = request.gone
    if request.client is not None:
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = request.client[0], str(request.client[1])
    for raw_name, raw_value in request.headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name == "content-type":
            environ["CONTENT_TYPE"] = value
        elif name == "content-length":
            environ["CONTENT_LENGTH"] = value
        elif "_" not in name:
            # A name with "_" would land on the same key as its "-" twin (X_User vs X-User):
            # such headers are dropped, as nginx and gunicorn do, so none can pose as another.
            key = "HTTP_" + name.upper().replace("-", "_")
            if key in environ:
                value = environ[key] + ("; " if key == "HTTP_COOKIE" else ", ") + value
            environ[key] = value
    if authority is not None:
        environ["HTTP_HOST"] = authority.decode("latin-1")
    if "CONTENT_LENGTH" not in environ:  # a chunked body, read whole
        size = _size(request.body)
        if size:
            environ["CONTENT_LENGTH"] = str(size)
    return environ


def _size(body: bytes | BinaryIO) -> int:
    if isinstance(body, bytes):
        return len(body)
    return os.fstat(body.fileno()).st_size


def call_app(app: WSGIApp, environ: dict[str, Any]) -> Response:
    """Run the app on one request and collect its whole response (or its StreamBody)."""
    started: list[Any] = []
    written: list[bytes] = []

    def start_response(
        status: str, headers: Headers, exc_info: Any = None
    ) -> Callable[[bytes], None]:
        # Nothing is sent before the app returns, so a later call (an error page replacing
        # a response) may always replace an earlier one: PEP 3333 allows it.
        started[:] = [status, headers]
        return written.append

    iterable = app(environ, start_response)
    if type(iterable) is StreamBody:
        if written:
            raise RuntimeError("the app called write() and returned a stream body")
    else:
        try:
            written.extend(iterable)
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
    if not started:
        raise RuntimeError("the app returned without calling start_response")
    status, headers = started
    if not (status[:3].isdigit() and status[3:4] in ("", " ")):
        raise ValueError(f"invalid status {status!r}")
    if len(status) == 3:
        status += " "  # the status line needs the space even without a reason phrase
    body = iterable if type(iterable) is StreamBody else b"".join(written)
    return Response(_encode(status), [(_encode(k), _encode(v)) for k, v in headers], body)


def _encode(text: str) -> bytes:
    # A CR or LF would let the app's values split the response: refuse them (answered 500).
    if "\r" in text or "\n" in text:
        raise ValueError(f"a response status or header holds a line break: {text!r}")
    return text.encode("latin-1")


Job = tuple[Request, "asyncio.Future[Response]", asyncio.AbstractEventLoop]


class WSGIPool:
    """A fixed set of threads running a WSGI app, started whole so their count never grows."""

    def __init__(
        self, app: WSGIApp, threads: int = 16, multiprocess: bool = False, name: str = "http"
    ) -> None:
        self.app, self.multiprocess = app, multiprocess
        self.jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self._work, name=f"{name}-{n}", daemon=True)
            for n in range(1, threads + 1)
        ]

    def start(self) -> None:
        """Start every thread now."""
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        """Let each thread end once it has finished its current call."""
        for _ in self.threads:
            self.jobs.put(None)

    def submit(self, request: Request) -> asyncio.Future[Response]:
        """Run the app on `request` in a thread; the future has its whole response."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Response] = loop.create_future()
        self.jobs.put((request, future, loop))
        return future

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            request, future, loop = job
            result: Response | None = None
            error: Exception | None = None
            try:
                result = call_app(self.app, build_environ(request, self.multiprocess))
            except Exception as exc:
                error = exc
            with contextlib.suppress(RuntimeError):  # a closed loop waits for nothing
                loop.call_soon_threadsafe(_settle, future, result, error)


def _settle(
    future: asyncio.Future[Response], result: Response | None, error: Exception | None
) -> None:
    if future.done():  # the client left meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]
