"""The app on a real server on a loopback port (tests/live.py), with alice's token; the
schemathesis modules' own server, one per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live import LiveServer
from tests.routes.fuzzing import Fuzzed, load, serving


@pytest.fixture
def live(app: Any, user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app on a loopback port, with alice's token."""
    server = LiveServer(app, user[1])
    yield server
    server.close()


@pytest.fixture(scope="module")
def fuzzed(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    """A schemathesis module's live server (its own app, database, user with finance records
    and token) and the document it serves, shared by the module's tests (`fuzzing.py`)."""
    with serving(migrated_template, tmp_path_factory.mktemp("fuzz")) as server:
        yield Fuzzed(server, load(server))
