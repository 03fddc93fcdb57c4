"""The app on a real server on a loopback port (tests/live.py), with alice's token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.live import LiveServer


@pytest.fixture
def live(app: Any, user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app on a loopback port, with alice's token."""
    server = LiveServer(app, user[1])
    yield server
    server.close()
