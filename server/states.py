"""A connection's states (which may follow which, and the deadline each arms) and where the
parser is in the bytes: the state machine server/http.py's HttpConnection runs."""

from __future__ import annotations

import enum


class State(enum.Enum):
    """What a connection is doing."""

    NEW = "new"  # its transport is not made yet
    IDLE = "idle"  # waiting for a request: nothing came since the last response
    READING_HEAD = "reading head"  # some of a request's head came (or an empty line)
    READING_BODY = "reading body"  # a head came whole, none is served: its body is due
    SERVING = "serving"  # the app answers a request; pipelined ones wait, unread
    STREAMING = "streaming"  # a stream body is written part by part
    DRAINING = "draining"  # the response being written is the last: nothing more is read
    CLOSED = "closed"


_ANSWERED = frozenset(
    {
        State.IDLE,
        State.READING_HEAD,
        State.READING_BODY,
        State.SERVING,
        State.DRAINING,
        State.CLOSED,
    }
)
TRANSITIONS: dict[State, frozenset[State]] = {
    State.NEW: frozenset({State.IDLE, State.CLOSED}),
    State.IDLE: frozenset({State.READING_HEAD, State.CLOSED}),
    State.READING_HEAD: frozenset({State.READING_BODY, State.DRAINING, State.CLOSED}),
    State.READING_BODY: frozenset({State.SERVING, State.DRAINING, State.CLOSED}),
    # After a response: the next request waiting, one partly read, none, or the end.
    State.SERVING: _ANSWERED | {State.STREAMING},
    State.STREAMING: _ANSWERED,
    State.DRAINING: frozenset({State.CLOSED}),
    State.CLOSED: frozenset(),
}
# The Timings field each state's deadline comes from: a request's head must come within
# `header_timeout` of the connection or of the previous response, its body within
# `body_timeout` of its head. The other states are bounded by the app, the slow-reader
# timer and the server's shutdown.
DEADLINES = {
    State.IDLE: "header_timeout",
    State.READING_HEAD: "header_timeout",
    State.READING_BODY: "body_timeout",
}


BUSY = (State.SERVING, State.STREAMING)  # a response is due that may keep the connection


class Part(enum.Enum):
    """Where the parser is in the bytes: between requests, in a head, or in a body."""

    BETWEEN = "between"
    HEAD = "head"
    BODY = "body"
