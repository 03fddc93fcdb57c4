"""A loopback TCP proxy whose live connections can be cut, like a network that drops."""

from __future__ import annotations

import re
import socket
import threading

from tests.outage import abort, pipe

_HEAD = re.compile(r"([A-Z]+ \S+) HTTP/1\.1\r\n(.*?)\r\n\r\n", re.S)


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to a target port; `cut()` breaks every open connection."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.sent = bytearray()  # everything browsers sent through the proxy, in order
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> int:
        """Abort every open connection (both sides) and return how many there were."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                abort(sock)
        return len(pairs)

    def requests(self) -> list[tuple[str, dict[str, str]]]:
        """The requests browsers sent, in order: (method and path, lower-cased headers)."""
        with self._lock:
            data = bytes(self.sent).decode("latin-1")
        return [
            (line, dict(_header(h) for h in headers.split("\r\n") if ":" in h))
            for line, headers in _HEAD.findall(data)
        ]

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(
                target=pipe, args=(client, upstream, self._record), daemon=True
            ).start()
            threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()

    def _record(self, chunk: bytes) -> None:
        with self._lock:
            self.sent += chunk


def _header(line: str) -> tuple[str, str]:
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()
