"""The seam between the app and the server that hosts it, in the way of `wsgi.file_wrapper`.

A host that can stream a body from its event loop puts a `StreamHook` in the WSGI environ
under STREAM_HOOK. A view that answers with a long-lived body (an event stream) passes the
hook a factory of async byte iterators and returns what the hook made, untouched, as its
response body; the host recognises its own type and runs the iterator in its loop, so a
stream holds a task, never a thread. Without the hook (any other WSGI server, Flask's test
client) the view iterates the same factory through the engine's own loop: a plain
generator. The app never learns who hosts it beyond this.

An iterator that raises ends the response unfinished: the host breaks the connection
instead of ending the body (the client then knows to reconnect).

A host may answer the paths in `Hosted.express` (health checks, metrics) in threads of their
own, so they never queue behind the app's other requests (a burst of turn starts).

A host may also put under CLIENT_GONE a callable that tells, from any thread, whether the
client of the request has gone (its connection closed): a view doing long work for it (a
statement file read in another process) stops it then.

A host also runs the app's background work on its loop: `Hosted.background` is started
before the host serves, drained when it is asked to stop gracefully (SIGTERM), and stopped
once its connections are done.

A host answers some requests itself (one it cannot parse, too large, too slow, a worker out
of descriptors, an app that failed): `Hosted.render_error` words those answers as the app
words its own errors, and `Hosted.access_log` logs them as the app logs its requests. A host
imports nothing of the app but this module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

STREAM_HOOK = "chat.stream_hook"
CLIENT_GONE = "chat.client_gone"

BodyFactory = Callable[[], AsyncIterator[bytes]]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class StreamHook(Protocol):
    """Offered by a host in the environ: wraps a body for the host to stream from its loop."""

    def __call__(self, body: BodyFactory) -> Iterable[bytes]:
        """Return the response body to hand back to the host as it is."""
        ...


class RenderError(Protocol):
    """How an app words an error its host answers: the content type and the body."""

    def __call__(self, status: int, code: str, message: str) -> tuple[bytes, bytes]:
        """Return (content type, body) for a response of `status`."""
        ...


class AccessLog(Protocol):
    """How an app logs a request its host answered itself (`path` without the query)."""

    def __call__(self, method: str, path: str, status: int, seconds: float) -> None:
        """Log one answered request."""
        ...


def plain_error(status: int, code: str, message: str) -> tuple[bytes, bytes]:
    """An error as plain text, for an app that gives no renderer."""
    return b"text/plain; charset=utf-8", f"{code}: {message}\n".encode()


def no_access_log(method: str, path: str, status: int, seconds: float) -> None:
    """Log nothing, for an app that gives no access log."""


class Background(Protocol):
    """Work an app runs beside its requests, on the host's event loop."""

    async def start(self) -> None:
        """Begin, in the host's loop, before any request is served."""
        ...

    async def drain(self) -> None:
        """Stop taking new work and let running work finish or move elsewhere."""
        ...

    async def stop(self) -> None:
        """Release everything; the host's connections are closed."""
        ...


@dataclass(frozen=True)
class Hosted:
    """What a host serves: a WSGI application, its background work if any, and how the host
    words and logs the answers it makes itself.

    Callable as the WSGI app itself, so a server that knows nothing of `background` (or a
    loader that insists on a callable, as gunicorn's does) can still serve it.
    """

    wsgi: WSGIApp
    background: Background | None = None
    # Exact paths (no query) a host should never queue behind other requests.
    express: frozenset[str] = frozenset()
    render_error: RenderError = plain_error
    access_log: AccessLog = no_access_log

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """Serve one request with the WSGI app."""
        return self.wsgi(environ, start_response)


class StreamBroken(Exception):
    """Raised by a body iterator to end its response unfinished (the client reconnects)."""
