"""PostgreSQL and Redis for tests: fresh databases, or a skip (a failure where required)."""

from __future__ import annotations

import atexit
import contextlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis
from sqlalchemy import create_engine, text

PG_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_or_skip() -> str:
    """Return the Redis URL, or skip (fail under REQUIRE_REDIS=1) when Redis is not up."""
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.RedisError:
        if os.environ.get("REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis is required but not reachable at {REDIS_URL}")
        pytest.skip("Redis not reachable")
    return REDIS_URL


def _pg_reachable() -> bool:
    try:
        engine = create_engine(PG_ADMIN_URL)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return True
    except Exception:
        return False


@contextmanager
def fresh_postgres(template: str | None = None) -> Iterator[str]:
    """A new PostgreSQL database, empty or a copy of `template`, dropped afterwards (skip if
    PostgreSQL is down)."""
    if not _pg_reachable():
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_ADMIN_URL}")
        pytest.skip("PostgreSQL not reachable")
    name = f"chat_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    copy = f' TEMPLATE "{template}"' if template else ""
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    try:
        yield _url_of(name)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def migrated_postgres() -> Iterator[str]:
    """A new PostgreSQL database at the head revision, dropped afterwards: a copy of one
    migrated once per test process (a copy takes about a third of a migration's time)."""
    with fresh_postgres(_migrated_template()) as url:
        yield url


_TEMPLATE: list[str] = []
_TEMPLATE_PREFIX = "chat_template_"


def _url_of(name: str) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def _migrated_template() -> str:
    """This process's migrated template database (made on first use, dropped at exit, with
    any a killed test process of this machine left behind)."""
    if _TEMPLATE:
        return _TEMPLATE[0]
    from models.migrate import upgrade

    name = f"{_TEMPLATE_PREFIX}{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for (left,) in conn.execute(
            text("SELECT datname FROM pg_database WHERE datname LIKE :p"),
            {"p": f"{_TEMPLATE_PREFIX}%"},
        ):
            pid = int(left[len(_TEMPLATE_PREFIX) :].split("_")[0])
            if not _alive(pid):
                conn.execute(text(f'DROP DATABASE IF EXISTS "{left}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    upgrade(_url_of(name))
    _TEMPLATE.append(name)
    atexit.register(_drop, name)
    return name


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop(name: str) -> None:
    with contextlib.suppress(Exception):
        admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
