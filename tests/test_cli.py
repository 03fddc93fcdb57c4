"""`make run`'s demo token survives restarts while it works, and is replaced when it does not."""

from __future__ import annotations

import stat
from pathlib import Path

from flask import Flask
from sqlalchemy import update

from cli import demo_token
from models import ApiToken
from models.base import utcnow
from models.db import Database
from services.tokens import authenticate


def cli_app(db: Database, instance: Path) -> Flask:
    app = Flask("cli-test", instance_path=str(instance))
    app.extensions["db"] = db
    app.cli.add_command(demo_token)
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
