"""A user's upload places are rows of the database, so they hold across worker processes: here
two StatementReaders on one database stand for two workers. A third upload of a user is
refused wherever it lands, another user's is not; a place whose worker died lapses and is
taken over; a place given back is free again; a database down while admitting is a 503."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, exc, func, select

from domain.errors import LimitExceeded
from models import ImportSlot, StatementImport, utcnow
from models.db import Database
from models.migrate import upgrade
from services.imports.reader import StatementReader, read_untrusted
from services.imports.slots import UploadSlots
from statements.isolated import ReadLimits
from statements.read import ReadOptions
from tests.backends import fresh_postgres
from tests.conftest import make_user
from tests.imports.conftest import SAMPLES, Importer

LEASE = 60.0


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.at = utcnow()

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def worker(db: Database, clock: Clock, total: int = 4) -> StatementReader:
    """A worker process's reader: 2 places per user, `total` uploads in the process."""
    return StatementReader(ReadLimits(), total, 2.0, UploadSlots(db, 2, LEASE, clock))


def holders(db: Database, user_id: int) -> list[str]:
    with db.read() as s:
        return list(s.scalars(select(ImportSlot.holder).where(ImportSlot.user_id == user_id)))


def refused(admitting: Any, limit: int) -> None:
    """Entering `admitting` is 429 import_busy at `limit`."""
    with pytest.raises(LimitExceeded) as refusal, admitting:
        pass
    assert refusal.value.code == "import_busy"
    assert refusal.value.details == {"limit": limit}


def test_a_third_upload_is_refused_in_either_process_and_another_user_gets_in(
    db: Database,
) -> None:
    clock = Clock()
    one, two = worker(db, clock), worker(db, clock)
    alice, bob = make_user(db, "alice")[0], make_user(db, "bob")[0]
    with ExitStack() as held:
        held.enter_context(one.admit(alice))
        held.enter_context(two.admit(alice))
        refused(one.admit(alice), 2)
        refused(two.admit(alice), 2)
        held.enter_context(two.admit(bob))
        assert len(holders(db, alice)) == 2 and len(holders(db, bob)) == 1
        assert (one.running(), two.running()) == (1, 2)
    assert holders(db, alice) == [] and holders(db, bob) == []
    assert (one.running(), two.running()) == (0, 0)


def test_a_place_given_back_is_free_again_even_when_the_upload_failed(db: Database) -> None:
    clock = Clock()
    one, two = worker(db, clock), worker(db, clock)
    alice = make_user(db, "alice")[0]
    with one.admit(alice):
        with pytest.raises(ValueError, match="bad file"), two.admit(alice):
            raise ValueError("bad file")
        assert len(holders(db, alice)) == 1
        with two.admit(alice):
            refused(one.admit(alice), 2)
    assert holders(db, alice) == []


def test_the_places_of_a_killed_worker_lapse_and_are_taken_over(db: Database) -> None:
    clock = Clock()
    dead, alive = worker(db, clock), worker(db, clock)
    alice = make_user(db, "alice")[0]
    assert dead.slots is not None and alive.slots is not None
    # The dead worker took both places and never gave them back.
    lost = [dead.slots.take(alice), dead.slots.take(alice)]
    assert all(lost)
    refused(alive.admit(alice), 2)
    clock.advance(LEASE - 1)
    refused(alive.admit(alice), 2)
    clock.advance(2)
    with alive.admit(alice):
        [holder] = holders(db, alice)
        assert holder not in {held.holder for held in lost if held}
        # The dead worker's late give-back frees only its own place, not the new holder's.
        for held in lost:
            assert held is not None
            dead.slots.give_back(held)
        assert holders(db, alice) == [holder]
    assert holders(db, alice) == []


def test_a_renewed_place_outlives_its_first_lease(db: Database) -> None:
    clock = Clock()
    slots = UploadSlots(db, 1, LEASE, clock)
    alice = make_user(db, "alice")[0]
    held = slots.take(alice)
    assert held is not None
    clock.advance(LEASE * 0.75)
    slots.renew(held)
    clock.advance(LEASE * 0.5)  # past the first lease, within the renewed one
    assert slots.held(alice) == 1
    assert slots.take(alice) is None
    clock.advance(LEASE * 0.5)
    assert slots.held(alice) == 0


def test_a_place_is_renewed_once_its_file_is_read(db: Database) -> None:
    clock = Clock()
    one = worker(db, clock)
    alice = make_user(db, "alice")[0]
    with one.admit(alice):
        clock.advance(LEASE * 0.75)
        parsed = read_untrusted(SAMPLES / "german.csv", "german.csv", ReadOptions(currency="EUR"))
        assert parsed.statements
        clock.advance(LEASE * 0.5)  # past the first lease: held still, renewed by the read
        assert one.slots is not None and one.slots.held(alice) == 1


def test_a_full_process_refuses_before_it_asks_the_database(db: Database) -> None:
    clock = Clock()
    one = worker(db, clock, total=1)
    alice, bob = make_user(db, "alice")[0], make_user(db, "bob")[0]
    with one.admit(alice):
        refused(one.admit(bob), 1)
    assert holders(db, bob) == []


@pytest.fixture(params=["sqlite", "postgresql"])
def any_url(request: pytest.FixtureRequest, db_url: str) -> Iterator[str]:
    """The test's SQLite database, or a fresh PostgreSQL one (skipped when it is down)."""
    if request.param == "sqlite":
        yield db_url
        return
    with fresh_postgres() as url:
        upgrade(url)
        yield url


def test_uploads_racing_for_a_users_places_from_four_processes_get_exactly_two(
    any_url: str,
) -> None:
    workers = [Database(any_url) for _ in range(4)]
    alice = make_user(workers[0], "alice")[0]
    racers = 8
    start = threading.Barrier(racers)
    taken: list[object] = []

    def race(db: Database) -> None:
        slots = UploadSlots(db, 2, LEASE)
        start.wait()
        taken.append(slots.take(alice))

    threads = [threading.Thread(target=race, args=(workers[i % 4],)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(taken) == racers
        assert sum(held is not None for held in taken) == 2
        assert len(holders(workers[0], alice)) == 2
    finally:
        for db in workers:
            db.dispose()


@contextmanager
def slots_down(db: Database) -> Iterator[None]:
    """Every statement on `import_slots` fails as a database that is down does; the others
    (the token's check) go through."""

    def fail(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if "import_slots" in statement:
            raise exc.OperationalError(statement, params, sqlite3.OperationalError("down"))

    event.listen(db.engine, "before_cursor_execute", fail)
    try:
        yield
    finally:
        event.remove(db.engine, "before_cursor_execute", fail)


def test_a_database_down_while_admitting_is_503_and_writes_nothing(
    app: Any, importer: Importer, db: Database
) -> None:
    reader: StatementReader = app.extensions["statement_reader"]
    with slots_down(app.extensions["db"]):
        reply = importer.upload("german.csv", account_name="Giro")
    assert reply.status_code == 503, reply.json
    assert reply.json["error"]["code"] == "storage_unavailable"
    assert int(reply.headers["Retry-After"]) >= 1
    assert reader.running() == 0
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(StatementImport)) == 0
        assert s.scalar(select(func.count()).select_from(ImportSlot)) == 0
    # Back up: the next upload is admitted, and gives its place back.
    assert importer.upload("german.csv", account_name="Giro").status_code == 201
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(ImportSlot)) == 0
