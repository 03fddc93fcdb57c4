"""Shared fixtures: a migrated database per test, the app, a client and a user token."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from models import Base
from models.db import Database
from models.migrate import upgrade
from tests.routing import compile_builders_once

# The suite runs many turns at once for one test user (soaks, clusters in subprocesses that
# inherit this environment); the limit's own tests set it explicitly.
os.environ.setdefault("USER_MAX_CONCURRENT_TURNS", "1000")
os.environ.setdefault("RATE_LIMIT", "off")
os.environ.setdefault("SESSION_RATE_LIMIT", "off")
# The suite builds thousands of apps from the same rules: werkzeug compiles each rule's URL
# builders once (tests/routing.py).
compile_builders_once()

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


# pytest-timeout fails a test that runs longer than this (setup and teardown included), with
# every thread's stack (pyproject.toml: `timeout`, 60 s, for the rest). A test may carry its
# own `pytest.mark.timeout(...)`.
TIMEOUT_OF_KIND = {"slow": 600, "cluster": 300, "browser": 180, "node": 180}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of the one-kind folders and files; give each kind its timeout."""
    for item in items:
        where = item.path.relative_to(TESTS)
        kind = KIND_OF_FOLDER.get(where.parts[0]) or KIND_OF_FILE.get(where.as_posix())
        if kind:
            item.add_marker(kind)
        if item.get_closest_marker("timeout") is None:
            kinds = [k for k in TIMEOUT_OF_KIND if item.get_closest_marker(k)]
            if kinds:
                item.add_marker(pytest.mark.timeout(max(TIMEOUT_OF_KIND[k] for k in kinds)))


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the schema once with `alembic upgrade head`; tests copy the file."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def db_url(
    request: pytest.FixtureRequest, migrated_template: Path, tmp_path: Path
) -> Iterator[str]:
    """A fresh migrated SQLite database for one test (in a `shared_app` module: the module's
    database, emptied after the test)."""
    if request.node.get_closest_marker("shared_app"):
        shared: SharedApp = request.getfixturevalue("shared_app")
        yield shared.url
        shared.reset()
        return
    path = tmp_path / "test.db"
    shutil.copy(migrated_template, path)
    yield f"sqlite:///{path}"


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """The test's database, disposed afterwards."""
    database = Database(db_url)
    yield database
    database.dispose()


def app_settings(db_url: str, folder: Path) -> dict[str, Any]:
    """Settings for a test app: offline demo model, the given database."""
    return {
        "TESTING": True,
        "DATABASE_URL": db_url,
        "ANTHROPIC_API_KEY": None,
        "SECRET_KEY": "test-secret",
        "DEMO_EVENT_DELAY": 0.0,
        "EVENT_SPOOL_DIR": str(folder / "spool"),
    }


@pytest.fixture
def app_config(db_url: str, tmp_path: Path) -> dict[str, Any]:
    """Settings for a test app: offline demo model, fresh database."""
    return app_settings(db_url, tmp_path)


@pytest.fixture
def app(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The app under test: its own, built from `app_config`; in a module marked `shared_app`,
    the module's (its database emptied after each test)."""
    if request.node.get_closest_marker("shared_app"):
        shared: SharedApp = request.getfixturevalue("shared_app")
        # The teardown of `db_url` (`SharedApp.reset`) follows every test of the app, one that
        # asks for no `db` too: it may have left rows, replaced settings or a turn running.
        request.getfixturevalue("db_url")
        yield shared.app()
        return
    from app import create_app

    application = create_app(request.getfixturevalue("app_config"))
    yield application
    close_app(application)


def close_app(application: Any) -> None:
    """Stop an app's engine and close its database."""
    application.extensions["engine"].close()
    application.extensions["db"].dispose()


class SharedApp:
    """One app for the tests of a module marked `shared_app`, which all take the same settings
    (`app_config` is not read; the module's `shared_config` is added to the test settings):
    building an app per test cost about a tenth of a second.

    Each test starts on a database as a fresh one is: every table is emptied after a test
    (but the row of the running engine's worker). An app a test left unfit to share (a turn
    still running, its engine stopped, as a live server stops it, or its settings replaced)
    is closed, and the next test gets a new one.
    """

    def __init__(self, template: Path, folder: Path, overrides: dict[str, Any]) -> None:
        path = folder / "shared.db"
        shutil.copy(template, path)
        self.path, self.url = path, f"sqlite:///{path}"
        self.config = {**app_settings(self.url, folder), **overrides}
        self._app: Any = None
        self._settings: Any = None

    def app(self) -> Any:
        if self._app is None:
            from app import create_app

            self._app = create_app(self.config)
            self._settings = self._app.config["SETTINGS"]
        return self._app

    def reset(self) -> None:
        """Empty the database; drop an app that cannot serve the next test as a new one."""
        if self._app is not None:
            engine = self._app.extensions["engine"]
            changed = self._app.config["SETTINGS"] is not self._settings
            if changed or engine.stopped or engine.service.turns:
                self.close()
        keep = {"workers"} if self._app is not None else set()
        with sqlite3.connect(self.path, timeout=30) as conn:
            conn.execute("PRAGMA foreign_keys = OFF")
            for table in reversed(Base.metadata.sorted_tables):
                if table.name not in keep:
                    conn.execute(f'DELETE FROM "{table.name}"')

    def close(self) -> None:
        if self._app is not None:
            close_app(self._app)
            self._app = None


@pytest.fixture(scope="module")
def shared_config() -> dict[str, Any]:
    """Settings a `shared_app` module's app takes on top of the test settings; a module whose
    tests all need the same ones overrides this (an `app_config` of its own would be ignored)."""
    return {}


@pytest.fixture(scope="module")
def shared_app(
    request: pytest.FixtureRequest,
    migrated_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    shared_config: dict[str, Any],
) -> Iterator[SharedApp]:
    """The app shared by the tests of a module marked `shared_app`."""
    if "app_config" in vars(request.module):
        pytest.fail(
            f"{request.module.__name__} is marked shared_app, which reads no app_config: "
            "give its settings as a module-scoped `shared_config` fixture",
            pytrace=False,
        )
    shared = SharedApp(migrated_template, tmp_path_factory.mktemp("shared"), shared_config)
    yield shared
    shared.close()


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
