"""Alembic environment: migrates DATABASE_URL, or the URL the caller configured."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

import models
from config import Settings

config = context.config
target_metadata = models.Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    return Settings.from_env().database_url


def run_migrations_offline() -> None:
    """Emit SQL without a connection."""
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate over a live connection."""
    engine = create_engine(_url())
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
