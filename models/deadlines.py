"""Deadlines on PostgreSQL: no statement, lock, connection or answer is waited for without end.

The server cancels a statement after `store_statement` and a lock wait after `store_lock`;
TCP keepalives and `tcp_user_timeout` find a peer that vanished. A server that accepts and
never answers (frozen, or a proxy in front of it that is) defeats all of these: the client
then gives up on any answer after `store_answer` and closes the connection, so the statement
fails as a disconnection (an outage: 503 for a request, retried by the engine).
"""

from __future__ import annotations

import math
from typing import Any

import psycopg
from psycopg.errors import _WaitTimeout  # what Connection.wait raises at its timeout

from config import Timings

# Keepalive probes before a silent peer is given up; they go `store_keepalive / 5` apart.
KEEPALIVE_PROBES = 3


def connect_args(timings: Timings) -> dict[str, Any]:
    """libpq parameters of every connection (whole seconds and milliseconds, at least 1)."""
    server = {"statement_timeout": timings.store_statement, "lock_timeout": timings.store_lock}
    options = " ".join(f"-c {name}={_ms(seconds)}" for name, seconds in server.items())
    return {
        # A server that drops packets instead of refusing would hold a connect for minutes.
        "connect_timeout": _s(timings.store_connect),
        "options": options,
        "keepalives": 1,
        "keepalives_idle": _s(timings.store_keepalive),
        "keepalives_interval": _s(timings.store_keepalive / 5),
        "keepalives_count": KEEPALIVE_PROBES,
        # Data sent and not acknowledged for this long: the peer is gone.
        "tcp_user_timeout": _ms(timings.store_answer),
    }


def answering_connection(timings: Timings) -> type[psycopg.Connection[Any]]:
    """The psycopg connection class whose every wait for the server ends after `store_answer`."""
    return type("AnsweringConnection", (AnsweringConnection,), {"patience": timings.store_answer})


class AnsweringConnection(psycopg.Connection[Any]):
    """A connection that closes itself when the server has not answered within `patience`."""

    patience: float = 6.0

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        """Consume `gen` (a statement, a fetch, a commit) within `patience` seconds."""
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.patience
        try:
            return super().wait(gen, *args, **kwargs)
        except _WaitTimeout as err:
            # Halfway through the protocol the connection is unusable: close it, so the pool
            # sees a disconnection and drops it.
            self.pgconn.finish()
            raise psycopg.OperationalError(
                f"the database did not answer within {self.patience:g} s"
            ) from err


def _s(seconds: float) -> int:
    return max(1, math.ceil(seconds))


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))
