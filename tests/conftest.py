"""Shared fixtures: a migrated database per test, the app, a client and a user token."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from models.db import Database
from models.migrate import upgrade

# The suite runs many turns at once for one test user (soaks, clusters in subprocesses that
# inherit this environment); the limit's own tests set it explicitly.
os.environ.setdefault("USER_MAX_CONCURRENT_TURNS", "1000")
os.environ.setdefault("RATE_LIMIT", "off")
os.environ.setdefault("SESSION_RATE_LIMIT", "off")

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRANSCRIPTS = SHARED / "transcripts"
TESTS = Path(__file__).resolve().parent
# Folders (and files) that are all one kind get its marker here; elsewhere a test (or a
# module's `pytestmark`) carries its own. The markers are declared in pyproject.toml.
KIND_OF_FOLDER = {"cluster": "cluster", "browser": "browser"}
KIND_OF_FILE = {"aisdk/test_aisdk_node.py": "node", "aisdk/test_aisdk_v6.py": "node"}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to run without the shared transcripts instead of silently skipping tests."""
    if not TRANSCRIPTS.is_dir():
        raise pytest.UsageError(
            f"{TRANSCRIPTS} is missing: run the tests from a clone that "
            "has the project's shared/ folder beside it"
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of the one-kind folders and files."""
    for item in items:
        where = item.path.relative_to(TESTS)
        kind = KIND_OF_FOLDER.get(where.parts[0]) or KIND_OF_FILE.get(where.as_posix())
        if kind:
            item.add_marker(kind)


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the schema once with `alembic upgrade head`; tests copy the file."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def db_url(migrated_template: Path, tmp_path: Path) -> str:
    """A fresh migrated SQLite database for one test."""
    path = tmp_path / "test.db"
    shutil.copy(migrated_template, path)
    return f"sqlite:///{path}"


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """The test's database, disposed afterwards."""
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def app_config(db_url: str, tmp_path: Path) -> dict[str, Any]:
    """Settings for a test app: offline demo model, fresh database."""
    return {
        "TESTING": True,
        "DATABASE_URL": db_url,
        "ANTHROPIC_API_KEY": None,
        "SECRET_KEY": "test-secret",
        "DEMO_EVENT_DELAY": 0.0,
        "EVENT_SPOOL_DIR": str(tmp_path / "spool"),
    }


@pytest.fixture
def app(app_config: dict[str, Any]) -> Iterator[Any]:
    """The app under test."""
    from app import create_app

    application = create_app(app_config)
    yield application
    application.extensions["engine"].close()
    application.extensions["db"].dispose()


@pytest.fixture
def client(app: Any) -> Any:
    """Flask's test client."""
    return app.test_client()


def make_user(db: Database, name: str) -> tuple[int, str]:
    """Create a user with a token; return (user_id, token)."""
    from models import ApiToken, User

    with db.transaction() as s:
        user = User(name=name)
        row, token = ApiToken.issue(user)
        s.add_all([user, row])
        s.flush()
        return user.id, token


@pytest.fixture
def user(db: Database) -> tuple[int, str]:
    """A user (id, token) in the test database."""
    return make_user(db, "alice")
