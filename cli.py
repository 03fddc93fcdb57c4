"""Command-line verbs: `flask --app app <command>`."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import click
from flask import Flask, current_app
from sqlalchemy import select

from demo_data.commands import seed_demo
from models import ApiToken, User
from models.base import utcnow
from models.db import Database
from models.migrate import upgrade
from routes.extensions import get_settings
from server.ports import port_in_use
from services.imports.command import import_statement
from telemetry import audit


def register_cli(app: Flask) -> None:
    """Attach the project's commands to the Flask CLI."""
    app.cli.add_command(db_upgrade)
    app.cli.add_command(create_user)
    app.cli.add_command(demo_token)
    app.cli.add_command(seed_demo)
    app.cli.add_command(audit_command)
    app.cli.add_command(check_port)
    app.cli.add_command(import_statement)


@click.command("db-upgrade")
def db_upgrade() -> None:
    """Apply every Alembic migration to the configured database."""
    upgrade(get_settings().database_url)
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
        s.flush()
        made = {"user_id": user.id, "token_id": row.id, "name": "cli", "by": "cli"}
    audit.record("token_created", **made)
    click.echo(token)


@click.command("demo-token")
@click.argument("name")
def demo_token(name: str) -> None:
    """Print user NAME's demo token, reusing the one kept in the instance folder if it works.

    Only hashes are stored, so the clear token is kept in `instance/demo_token.<NAME>`
    (mode 0600, never committed); a missing, revoked or expired one is replaced.
    """
    click.echo(kept_demo_token(current_app.extensions["db"], current_app.instance_path, name))


def kept_demo_token(db: Database, instance_path: str, name: str) -> str:
    """User NAME's demo token (creating the user): the one kept in the instance folder while
    it works, else a new one, kept there."""
    path = Path(instance_path, f"demo_token.{name}")
    kept = path.read_text().strip() if path.exists() else ""
    with db.transaction() as s:
        user = s.scalar(select(User).where(User.name == name))
        if user is None:
            user = User(name=name)
            s.add(user)
        elif kept:
            row = s.scalar(select(ApiToken).where(ApiToken.token_hash == ApiToken.hash(kept)))
            if row is not None and row.user_id == user.id and row.usable(utcnow()):
                return kept
        row, token = ApiToken.issue(user, "make run")
        s.add(row)
        s.flush()
        made = {"user_id": user.id, "token_id": row.id, "name": "make run", "by": "cli"}
    audit.record("token_created", **made)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return token


@click.command("check-port")
@click.argument("port", type=click.IntRange(1, 65535))
@click.option("--host", default="127.0.0.1", show_default=True)
def check_port(port: int, host: str) -> None:
    """Fail unless PORT on HOST is free to serve on (`make run` checks it before anything)."""
    try:
        busy = port_in_use(host, port)
    except OSError as err:
        raise click.ClickException(f"cannot serve on {host}:{port}: {err.strerror}") from None
    if busy:
        raise click.ClickException(
            f"port {port} is in use: is `make run` already running? "
            f"Stop it, or set PORT=... to serve on another port."
        )


@click.command("audit")
@click.option("--file", "path", help="An audit log file (default: AUDIT_LOG).")
@click.option("--event", help="Only this event, e.g. limit_refused or token_revoked.")
@click.option("--user", "user_id", type=int, help="Only this user's records.")
@click.option("--since", type=click.DateTime(), help="Only records at or after (UTC).")
def audit_command(
    path: str | None, event: str | None, user_id: int | None, since: datetime | None
) -> None:
    """Print the audit records (JSON lines) that match every filter given."""
    path = path or get_settings().audit_log
    if path.strip().lower() in ("stderr", "off", "none", ""):
        raise click.ClickException("AUDIT_LOG is not a file: pass --file PATH")
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    with open(path, encoding="utf-8") as lines:
        for item in audit.query(lines, event, user_id, since):
            click.echo(json.dumps(item, separators=(",", ":")))
