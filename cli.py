"""Command-line verbs: `flask --app app <command>`."""

from __future__ import annotations

import click
from flask import Flask, current_app
from sqlalchemy import select

from demo_data.cli import seed_demo
from models import ApiToken, User
from models.migrate import upgrade


def register_cli(app: Flask) -> None:
    """Attach the project's commands to the Flask CLI."""
    app.cli.add_command(db_upgrade)
    app.cli.add_command(create_user)
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
        row, token = ApiToken.issue(user)
        s.add(row)
    click.echo(token)
