"""Flask in a thread pool, one hop each way: the body is read already, the response is whole.

a2wsgi's bridge streams both ways: every read of the body and every part of the response
(its start, each chunk, its end) is a round trip between the request's thread and the
event loop. Under load each round trip waits for a loop iteration and then for the GIL, so
a request paid five or six of them before its first byte. Behind the front no route streams
through WSGI (an SSE route answers with a relay marker, server/asgi.py), so the thread runs
the whole app and hands back status, headers and body in one result.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import build_environ

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Response = tuple[int, list[tuple[bytes, bytes]], bytes]


class ThreadedWSGI:
    """Runs a WSGI app in a bounded thread pool and sends its buffered response."""

    def __init__(self, app: WSGIApp, workers: int) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wsgi")

    async def __call__(self, scope: dict[str, Any], body: bytes, send: Send) -> None:
        """Run the app on `body` in a thread; send its response from the loop."""
        run = contextvars.copy_context().run
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(
            self.executor, run, self.respond, scope, body
        )
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def respond(self, scope: dict[str, Any], body: bytes) -> Response:
        """In a worker thread: the app's whole response to one request."""
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            # Nothing is sent before the app returns, so a later call (an error page
            # replacing a response) may always replace the first: PEP 3333 allows it.
            started[:] = [status, headers]
            return chunks.append

        iterable = self.app(build_environ(scope, io.BytesIO(body)), start_response)  # type: ignore[arg-type]
        try:
            chunks.extend(iterable)
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
        status, headers = started
        encoded = [(k.strip().lower().encode("latin1"), v.encode("latin1")) for k, v in headers]
        return int(status.split(" ", 1)[0]), encoded, b"".join(chunks)
