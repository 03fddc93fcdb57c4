"""Whether a port is free to serve on: `make run` asks before it loads anything."""

from __future__ import annotations

import errno
import socket


def port_in_use(host: str, port: int) -> bool:
    """Return whether something listens on (host, port)."""
    # Bound as gunicorn binds, with SO_REUSEADDR: a port a stopped server left in TIME_WAIT
    # is free.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return True
            raise
    return False
