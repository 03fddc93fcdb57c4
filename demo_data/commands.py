"""`flask --app app seed-demo USER`: load the finance demo data for a user."""

from __future__ import annotations

from typing import Any

import click
from flask import current_app
from flask.cli import with_appcontext
from sqlalchemy import select

from demo_data.generator import DEFAULT_MONTHS, seed_finance
from models import User
from models.db import Database


@click.command("seed-demo")
@click.argument("user")
@click.option("--months", default=DEFAULT_MONTHS, show_default=True, type=click.IntRange(1, 120))
@click.option("--seed", default=42, show_default=True, type=int)
@click.option(
    "--if-empty",
    is_flag=True,
    help="Seed only a user with no finance data yet; anyone else's data is left as it is.",
)
@with_appcontext
def seed_demo(user: str, months: int, seed: int, if_empty: bool) -> None:
    """Replace USER's finance data with generated demo data (creates USER if missing)."""
    user_id, summary = seed_user(current_app.extensions["db"], user, months, seed, if_empty)
    click.echo(seeded_words(user, user_id, summary))


def seed_user(
    db: Database, user: str, months: int = 12, seed: int = 42, if_empty: bool = False
) -> tuple[int, dict[str, Any] | None]:
    """Seed USER (created if missing) as `seed-demo` does; return their id and the summary
    (None: they had finance data and `if_empty` kept it)."""
    with db.transaction() as s:
        row = s.scalar(select(User).where(User.name == user))
        if row is None:
            row = User(name=user)
            s.add(row)
            s.flush()
        user_id = row.id
    return user_id, seed_finance(db, user_id, months=months, seed=seed, if_empty=if_empty)


def seeded_words(user: str, user_id: int, summary: dict[str, Any] | None) -> str:
    """What `seed-demo` says it did."""
    if summary is None:
        return f"{user} (id {user_id}) already has finance data: left as it is"
    return (
        f"seeded {user} (id {user_id}): {summary['transactions']} transactions "
        f"({summary['pending']} pending, {summary['refunds']} refunds) from "
        f"{summary['start_date']} to {summary['end_date']} in {', '.join(summary['currencies'])}; "
        f"{summary['accounts']} accounts, {summary['categories']} categories, "
        f"{summary['budgets']} budgets; trip abroad in {summary['travel_month']}"
    )
