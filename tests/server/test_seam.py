"""The seam between the app and its host: the host imports no app module, and words and logs
the answers it makes itself as the app tells it (streaming/hosting.py's `Hosted`)."""

from __future__ import annotations

import ast
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from server.serve import ServerSettings, serve_in_thread
from streaming.hosting import Hosted
from tests.live import FAST, Live, serving, text_app
from tests.rawhttp import Client
from tests.waits import PATIENCE, wait_until

ROOT = Path(__file__).resolve().parents[2]
# The app's packages and modules; the host may import the seam, and config for its Timings.
APP = {"app", "cli", "config", "demo_model", "engine", "models", "routes", "services"}
APP |= {"streaming", "telemetry", "tools", "web"}
SEAM = {"streaming.hosting", "config"}


def imported(path: Path) -> Iterator[str]:
    """Every module `path` imports, anywhere in it (`from a import b` as a.b and as a)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def app_imports(folder: Path) -> dict[str, list[str]]:
    """The app modules each file of `folder` imports, other than the seam."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        names = {n for n in imported(path) if n.split(".")[0] in APP}
        # `from streaming.hosting import X` names streaming.hosting.X: it is the seam too.
        names = {n for n in names if not any(n == s or n.startswith(s + ".") for s in SEAM)}
        names -= {s.split(".")[0] for s in SEAM}  # the package of `from streaming.hosting`
        if names:
            found[path.name] = sorted(names)
    return found


def test_the_host_imports_no_app_module_but_the_seam() -> None:
    assert app_imports(ROOT / "server") == {}


def test_the_import_check_sees_an_app_import(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from streaming.hosting import Hosted\nimport config\n")
    (tmp_path / "b.py").write_text("def f():\n    from telemetry import access\n")
    (tmp_path / "c.py").write_text("from streaming.wire.protocol import error_json\n")
    assert app_imports(tmp_path) == {
        "b.py": ["telemetry", "telemetry.access"],
        "c.py": ["streaming.wire.protocol", "streaming.wire.protocol.error_json"],
    }


class Words:
    """An app's renderer and access log that record what the host asked of them."""

    def __init__(self) -> None:
        self.rendered: list[tuple[int, str]] = []
        self.logged: list[tuple[str, str, int]] = []

    def render(self, status: int, code: str, message: str) -> tuple[bytes, bytes]:
        self.rendered.append((status, code))
        return b"text/x-app", f"<{code}>".encode()

    def log(self, method: str, path: str, status: int, seconds: float) -> None:
        assert seconds >= 0
        self.logged.append((method, path, status))


def failing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """Fail on /boom, else echo as text_app does."""
    if environ["PATH_INFO"] == "/boom":
        raise RuntimeError("boom")
    return text_app(environ, start_response)


def test_the_host_words_and_logs_its_refusals_as_the_app_says() -> None:
    words = Words()
    hosted = Hosted(failing, render_error=words.render, access_log=words.log)
    with serving(hosted, ServerSettings(timings=FAST, threads=2, max_body=8)) as live:
        reply = _send(live, b"POST /big?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n")
        assert (reply.status, reply.headers["content-type"]) == (413, "text/x-app")
        assert reply.body == b"<request_too_large>"
        wait_until(lambda: words.logged == [("POST", "/big", 413)])
        reply = _send(live, b"GET /boom HTTP/1.1\r\nHost: a\r\n\r\n")
        assert (reply.status, reply.body) == (500, b"<internal_error>")
    # The busy refusal is worded once, at start: it must cost nothing when the worker is full.
    busy = (503, "server_busy")
    assert words.rendered == [busy, (413, "request_too_large"), (500, "internal_error")]


def test_without_words_from_the_app_the_host_answers_plain_text() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    running = serve_in_thread(text_app, sock, ServerSettings(timings=FAST, threads=2))
    try:
        assert running.started.wait(PATIENCE) and running.error is None
        reply = _send(Live(sock.getsockname()[1], running), b"GET  / HTTP/1.1\r\n\r\n")
    finally:
        running.close(graceful=False)
        sock.close()
    assert (reply.status, reply.headers["content-type"]) == (400, "text/plain; charset=utf-8")
    assert reply.body.startswith(b"bad_request: ")


def _send(live: Live, data: bytes) -> Any:
    client: Client = live.connect()
    try:
        client.send(data)
        return client.reply()
    finally:
        client.close()
