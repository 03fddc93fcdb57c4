"""`make run`'s commands: a restart changes no data, and a busy port stops it before anything.

The demo token survives restarts while it works, and is replaced when it does not; the demo
user is seeded only while they have no finance data.
"""

from __future__ import annotations

import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select, update

from cli import check_port, demo_token
from demo_data.commands import seed_demo
from models import ApiToken, Budget, Category, Transaction, User
from models.base import utcnow
from models.db import Database
from services.api_tokens import authenticate


def cli_app(db: Database, instance: Path) -> Flask:
    app = Flask("cli-test", instance_path=str(instance))
    app.extensions["db"] = db
    app.cli.add_command(demo_token)
    app.cli.add_command(seed_demo)
    app.cli.add_command(check_port)
    return app


def test_demo_token_is_reused_until_revoked(db: Database, tmp_path: Path) -> None:
    app = cli_app(db, tmp_path)
    with app.app_context():
        runner = app.test_cli_runner()
        first = runner.invoke(args=["demo-token", "demo"])
        assert first.exit_code == 0, first.output
        token = first.output.strip()
        kept = tmp_path / "demo_token.demo"
        assert kept.read_text().strip() == token
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert runner.invoke(args=["demo-token", "demo"]).output.strip() == token
        caller = authenticate(db, token)
        with db.transaction() as s:
            s.execute(
                update(ApiToken).where(ApiToken.id == caller.token_id).values(revoked_at=utcnow())
            )
        renewed = runner.invoke(args=["demo-token", "demo"]).output.strip()
        assert renewed != token and kept.read_text().strip() == renewed
        assert authenticate(db, renewed).user_id == caller.user_id


def test_a_kept_token_of_another_database_is_replaced(db: Database, tmp_path: Path) -> None:
    (tmp_path / "demo_token.demo").write_text("cbt_from_an_old_database\n")
    app = cli_app(db, tmp_path)
    with app.app_context():
        output = app.test_cli_runner().invoke(args=["demo-token", "demo"]).output
    assert output.strip() != "cbt_from_an_old_database"
    authenticate(db, output.strip())


@pytest.fixture(params=["sqlite", "postgres"])
def any_db(request: pytest.FixtureRequest, db: Database) -> Iterator[Database]:
    """The test's SQLite database, or a fresh migrated PostgreSQL one."""
    if request.param == "sqlite":
        yield db
        return
    from tests.backends import migrated_postgres

    with migrated_postgres() as url:
        database = Database(url)
        yield database
        database.dispose()


def _groceries_limit(db: Database) -> int:
    with db.read() as s:
        return s.scalar(
            select(Budget.limit_minor)
            .join(Category)
            .where(Category.name == "Groceries", Budget.month.is_(None))
        )


def test_seeding_if_empty_never_undoes_a_change(any_db: Database, tmp_path: Path) -> None:
    app = cli_app(any_db, tmp_path)
    with app.app_context():
        runner = app.test_cli_runner()
        first = runner.invoke(args=["seed-demo", "--if-empty", "demo"])
        assert first.exit_code == 0 and first.output.startswith("seeded demo"), first.output
        seeded = _groceries_limit(any_db)
        # An approved budget change and a recategorised transaction, then a restart.
        with any_db.transaction() as s:
            s.execute(update(Budget).where(Budget.limit_minor == seeded).values(limit_minor=40_000))
            first_id = s.scalar(select(Transaction.id).order_by(Transaction.id).limit(1))
            s.execute(update(Transaction).where(Transaction.id == first_id).values(merchant="Mine"))
        again = runner.invoke(args=["seed-demo", "--if-empty", "demo"])
        assert again.exit_code == 0, again.output
        assert "already has finance data: left as it is" in again.output
        assert _groceries_limit(any_db) == 40_000
        with any_db.read() as s:
            mine = s.scalar(select(Transaction.merchant).where(Transaction.id == first_id))
        assert mine == "Mine"
        # Seeding without the flag still replaces the data on purpose.
        assert runner.invoke(args=["seed-demo", "demo"]).exit_code == 0
        assert _groceries_limit(any_db) == seeded
    with any_db.read() as s:
        assert s.scalar(select(User.id).where(User.name == "demo")) is not None


def test_check_port_refuses_a_port_in_use_and_passes_a_free_one(
    db: Database, tmp_path: Path
) -> None:
    app = cli_app(db, tmp_path)
    runner = app.test_cli_runner()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        busy = runner.invoke(args=["check-port", str(port)])
        assert busy.exit_code != 0
        assert f"port {port} is in use: is `make run` already running?" in busy.output
        assert "PORT=" in busy.output
    free = runner.invoke(args=["check-port", str(port)])
    assert free.exit_code == 0, free.output
