"""The acceptor: every waiting connection is served, a bounded burst per wake-up."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Callable, Iterator

import pytest
import uvloop

from config import Timings
from routes.error_handler import render_host_error
from server.accept import BURST, Acceptor, DescriptorGuard


class Echo(asyncio.Protocol):
    """Answers each read with the same bytes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)  # type: ignore[attr-defined]


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = uvloop.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    yield sock
    sock.close()


@pytest.fixture
def connect(listener: socket.socket) -> Iterator[Callable[[int], list[socket.socket]]]:
    """Make clients whose connections wait in the listener's accept queue; close them after."""
    made: list[socket.socket] = []

    def clients(count: int) -> list[socket.socket]:
        new = [socket.create_connection(listener.getsockname()) for _ in range(count)]
        for i, client in enumerate(new):
            client.sendall(b"%d\n" % i)
        made.extend(new)
        return new

    yield clients
    for client in made:
        client.close()


def echoes(loop: asyncio.AbstractEventLoop, clients: list[socket.socket]) -> list[bytes]:
    """What each client reads back (each sent its own index)."""

    async def one(client: socket.socket) -> bytes:
        client.setblocking(False)
        return await loop.sock_recv(client, 64)

    async def every() -> list[bytes]:
        return await asyncio.wait_for(asyncio.gather(*map(one, clients)), 10)

    return loop.run_until_complete(every())


def turns(loop: asyncio.AbstractEventLoop, count: int = 5) -> None:
    """Run the loop a few times round, polling its sockets each time."""
    for _ in range(count):
        loop.run_until_complete(asyncio.sleep(0))


def test_every_waiting_connection_is_served(loop, listener, connect) -> None:
    clients = connect(3 * BURST + 5)
    acceptor = Acceptor(loop, listener, Echo, Timings())
    assert echoes(loop, clients) == [b"%d\n" % i for i in range(len(clients))]
    acceptor.close()


def test_one_wake_up_accepts_a_bounded_burst(loop, listener, connect) -> None:
    # With several workers on one socket, one of them must not take every waiting client.
    clients = connect(BURST + BURST // 2)
    acceptor = Acceptor(loop, listener, Echo, Timings())
    acceptor._accept()
    assert len(acceptor.connecting) == BURST
    acceptor._accept()
    assert len(acceptor.connecting) == len(clients)
    acceptor._accept()  # nothing waits: returns at once
    assert len(acceptor.connecting) == len(clients)
    loop.run_until_complete(asyncio.gather(*acceptor.connecting))
    acceptor.close()


def test_a_closed_acceptor_takes_no_more_connections(loop, listener, connect) -> None:
    acceptor = Acceptor(loop, listener, Echo, Timings())
    acceptor.close()
    connect(2)
    turns(loop)
    assert not acceptor.connecting
    listener.setblocking(False)
    accepted, _ = listener.accept()  # still waiting in the kernel's queue
    accepted.close()


class Failing:
    """A listening socket whose next accept() fails as when the process is out of files."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.failures = sock, 1

    def accept(self) -> tuple[socket.socket, object]:
        if self.failures:
            self.failures -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        return self.sock.accept()

    def __getattr__(self, name: str) -> object:
        return getattr(self.sock, name)


def test_a_failing_accept_pauses_instead_of_spinning_then_serves(loop, listener, connect) -> None:
    failing = Failing(listener)
    acceptor = Acceptor(loop, failing, Echo, Timings())  # type: ignore[arg-type]
    clients = connect(2)
    acceptor._accept()
    assert acceptor._resume is not None and not acceptor.connecting  # paused, nothing taken
    assert not loop.remove_reader(listener.fileno())  # the socket is not watched meanwhile
    assert echoes(loop, clients) == [b"0\n", b"1\n"]  # served after the pause
    acceptor.close()


def test_newcomers_past_the_descriptor_limit_get_503_at_once(loop, listener, connect) -> None:
    # A limit of 10 less a reserve of 6 leaves 4 places, 3 of them taken.
    guard = DescriptorGuard(
        lambda: 3, reserve=6, timings=Timings(), limit=10, render=render_host_error
    )
    acceptor = Acceptor(loop, listener, Echo, Timings(), guard)
    first, second = connect(2)
    acceptor._accept()
    assert len(acceptor.connecting) == 1  # the last place: one being set up counts as open
    second.settimeout(10)
    reply = second.recv(4096)
    assert reply.startswith(b"HTTP/1.1 503 ") and b'"code":"server_busy"' in reply
    assert b"\r\nretry-after: 5\r\n" in reply and b"\r\nconnection: close\r\n" in reply
    assert second.recv(4096) == b""
    assert echoes(loop, [first]) == [b"0\n"]
    acceptor.close()
