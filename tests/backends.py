"""PostgreSQL and Redis for tests: fresh databases, or a skip (a failure where required)."""

from __future__ import annotations

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
def fresh_postgres() -> Iterator[str]:
    """A new, empty PostgreSQL database, dropped afterwards (skip if PostgreSQL is down)."""
    if not _pg_reachable():
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_ADMIN_URL}")
        pytest.skip("PostgreSQL not reachable")
    name = f"chat_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()
