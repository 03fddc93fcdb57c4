"""A connection's states (server/http.py): the transitions it takes and the deadlines each
state owns, driven through the protocol with a transport that records what is written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from config import Timings
from server.http import HttpConnection, Site
from server.states import DEADLINES, TRANSITIONS, State
from server.wsgi import Request, Response


class Transport(asyncio.Transport):
    """Collects writes; closing it ends the connection as a socket would."""

    def __init__(self) -> None:
        super().__init__()
        self.written, self.closed, self.protocol = b"", False, None

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name in ("peername", "sockname") else default

    def write(self, data: Any) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)  # type: ignore[attr-defined]

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class Pool:
    """Answers every request at once with 200 "ok"."""

    def submit(self, request: Request) -> asyncio.Future[Response]:
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        future.set_result(Response(b"200 OK", [], b"ok"))
        return future


class Recording(HttpConnection):
    """A connection that records the states it enters."""

    def __init__(self, site: Site) -> None:
        self.states: list[State] = []
        super().__init__(site)

    def _enter(self, state: State) -> None:
        super()._enter(state)
        self.states.append(state)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


async def connect() -> tuple[Recording, Transport]:
    site = Site(Pool(), Timings(), max_body=1024)  # type: ignore[arg-type]
    connection, transport = Recording(site), Transport()
    transport.protocol = connection  # type: ignore[assignment]
    connection.connection_made(transport)
    return connection, transport


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_request_in_parts_then_keep_alive(loop: asyncio.AbstractEventLoop) -> None:
    async def run() -> None:
        connection, transport = await connect()
        header_deadline = connection._deadline
        connection.data_received(b"POST / HTTP/1.1\r\nHo")
        # The head's deadline runs from the connection, not from its first byte.
        assert connection._deadline is header_deadline and header_deadline is not None
        connection.data_received(b"st: a\r\nContent-Length: 2\r\n\r\n")
        assert connection.state is State.READING_BODY and connection._deadline is not None
        connection.data_received(b"hi")
        await settle()
        assert transport.written.startswith(b"HTTP/1.1 200 OK\r\n")
        assert connection.states == [
            State.IDLE,
            State.READING_HEAD,
            State.READING_BODY,
            State.SERVING,
            State.IDLE,
        ]
        assert connection._deadline is not header_deadline  # a new one, from the response
        connection.connection_lost(None)
        assert connection.states[-1] is State.CLOSED and connection._deadline is None

    loop.run_until_complete(run())


def test_a_refusal_behind_a_response_drains_then_closes(loop: asyncio.AbstractEventLoop) -> None:
    async def run() -> None:
        connection, transport = await connect()
        connection.data_received(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET  /b HTTP/1.1\r\n")
        assert connection.state is State.DRAINING
        await settle()
        assert transport.written.count(b"HTTP/1.1 ") == 1 and transport.closed
        assert connection.states[-3:] == [State.SERVING, State.DRAINING, State.CLOSED]

    loop.run_until_complete(run())


def test_only_the_states_waiting_for_a_request_have_a_deadline() -> None:
    assert set(DEADLINES) == {State.IDLE, State.READING_HEAD, State.READING_BODY}


def test_every_state_leads_to_closed_and_closed_to_nothing() -> None:
    assert set(TRANSITIONS) == set(State) and TRANSITIONS[State.CLOSED] == frozenset()
    for state in State:
        seen, todo = {state}, [state]
        while todo:
            for after in TRANSITIONS[todo.pop()] - seen:
                seen.add(after)
                todo.append(after)
        assert State.CLOSED in seen or state is State.CLOSED, state


def test_a_transition_outside_the_table_is_refused(loop: asyncio.AbstractEventLoop) -> None:
    async def run() -> None:
        connection, _ = await connect()
        with pytest.raises(RuntimeError, match="cannot go from"):
            connection._enter(State.STREAMING)

    loop.run_until_complete(run())
