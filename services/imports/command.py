"""`flask --app app import-statement FILE --user NAME`: the API's import, from a shell."""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import current_app
from sqlalchemy import select

from domain.errors import APIError
from models import User
from services.imports import commits
from services.imports.drafts import Upload, create_draft
from services.imports.review import show


@click.command("import-statement")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--user", "name", required=True, help="The user whose statement it is.")
@click.option("--account-id", type=int, help="The account its rows belong to (QIF, CSV).")
@click.option("--account-name", help="Name of the account it creates when none holds it.")
@click.option("--currency", help="ISO 4217 code, for files that do not say (QIF, CSV).")
@click.option("--locale", help="How the file writes amounts and dates, e.g. de_DE.")
@click.option("--format", "kind", help="ofx, qif, camt053, mt940 or csv (default: detected).")
@click.option("--mapping", help="CSV: a JSON object of role to column name.")
@click.option("--commit/--draft", default=False, help="Commit it, or leave a draft to review.")
def import_statement(
    path: Path,
    name: str,
    account_id: int | None,
    account_name: str | None,
    currency: str | None,
    locale: str | None,
    kind: str | None,
    mapping: str | None,
    commit: bool,
) -> None:
    """Import the statement at PATH for user NAME as a draft (or committed, with --commit)."""
    db = current_app.extensions["db"]
    with db.read() as s:
        user_id = s.scalar(select(User.id).where(User.name == name))
    if user_id is None:
        raise click.ClickException(f"no user {name!r}")
    upload = Upload(
        path.resolve(),  # read there by the reader process, never loaded here
        path.name,
        account_id=account_id,
        account_name=account_name,
        format=kind,
        currency=currency.upper() if currency else None,
        locale=locale,
        mapping=json.loads(mapping) if mapping else None,
    )
    try:
        with click.progressbar(length=1, label="rows stored") as bar:

            def moved(done: int, total: int) -> None:
                bar.length = max(total, 1)
                bar.update(done - bar.pos)

            draft = create_draft(db, user_id, upload, moved)
        added = commits.commit(db, user_id, draft) if commit else 0
    except APIError as err:
        details = f" {json.dumps(err.details, ensure_ascii=False)}" if err.details else ""
        raise click.ClickException(f"{err.code}: {err.message}{details}") from err
    summary = show(db, user_id, draft)
    click.echo(json.dumps({**summary, "added": added}, indent=2, ensure_ascii=False))
