"""Command-line verbs: `flask --app app <command>`."""

from __future__ import annotations

import os
from pathlib import Path

import click
from flask import Flask, current_app
from sqlalchemy import select

from demo_data.cli import seed_demo
from models import ApiToken, User
from models.base import utcnow
from models.migrate import upgrade


def register_cli(app: Flask) -> None:
    """Attach the project's commands to the Flask CLI."""
    app.cli.add_command(db_upgrade)
    app.cli.add_command(create_user)
    app.cli.add_command(demo_token)
    app.cli.add_command(seed_demo)


@click.command("db-upgrade")
def db_upgrade() -> None:
    """Apply every Alembic migration to the configured database."""
    upgrade(current_app.config["DATABASE_URL"])
    click.echo("database is at head")


@click.command("create-user")
@click.argument("name")
@click.option("--if-missing", is_flag=True, help="Reuse the user if it exists (new token).")
def create_user(name: str, if_missing: bool) -> None:
    """Create user NAME and print a new API token (shown once, stored hashed)."""
    db = current_app.extensions["db"]
    with db.transaction() as s:
        user = s.scalar(select(User).where(User.name == name))
        if user is not None and not if_missing:
            raise click.ClickException(f"user {name!r} exists; pass --if-missing for a new token")
        if user is None:
            user = User(name=name)
            s.add(user)
        row, token = ApiToken.issue(user, "cli")
        s.add(row)
    click.echo(token)


@click.command("demo-token")
@click.argument("name")
def demo_token(name: str) -> None:
    """Print user NAME's demo token, reusing the one kept in the instance folder if it works.

    Only hashes are stored, so the clear token is kept in `instance/demo_token.<NAME>`
    (mode 0600, never committed); a missing, revoked or expired one is replaced.
    """
    db = current_app.extensions["db"]
    path = Path(current_app.instance_path, f"demo_token.{name}")
    kept = path.read_text().strip() if path.exists() else ""
    with db.transaction() as s:
        user = s.scalar(select(User).where(User.name == name))
        if user is None:
            user = User(name=name)
            s.add(user)
        elif kept:
            row = s.scalar(select(ApiToken).where(ApiToken.token_hash == ApiToken.hash(kept)))
            if row is not None and row.user_id == user.id and row.usable(utcnow()):
                click.echo(kept)
                return
        row, token = ApiToken.issue(user, "make run")
        s.add(row)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    click.echo(token)
