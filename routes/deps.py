"""Accessors for the app-wide services that routes call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app

if TYPE_CHECKING:
    from engine.lifecycle import Engine
    from engine.session_limits import SessionLimits
    from engine.turns.service import TurnService
    from models.db import Database
    from services.pricing import Prices
    from services.search import SearchGate
    from services.token_watch import TokenGuard


def get_db() -> Database:
    """Return the app's database."""
    return current_app.extensions["db"]


def get_engine() -> Engine:
    """Return the app's turn engine."""
    return current_app.extensions["engine"]


def get_turns() -> TurnService:
    """Return the app's turn service."""
    return current_app.extensions["turns"]


def get_token_guard(token_id: int | None) -> TokenGuard | None:
    """What ends a stream once the token that opened it stops working (None: no token)."""
    return None if token_id is None else current_app.extensions["token_watcher"].guard(token_id)


def get_prices() -> Prices:
    """Return the price table: defaults with the app's MODEL_PRICES over them."""
    return current_app.extensions["prices"]


def get_session_limits() -> SessionLimits | None:
    """Return the limits on a user's new sessions (None: unlimited)."""
    return current_app.extensions["session_limits"]


def get_search_gate() -> SearchGate:
    """Return what bounds the searches running at once, per user and in this process."""
    return current_app.extensions["search_gate"]
