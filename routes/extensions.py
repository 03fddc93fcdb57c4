"""Accessors for the app-wide services that routes call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app, request

if TYPE_CHECKING:
    from config import Settings
    from engine.lifecycle import Engine
    from engine.session_limits import SessionLimits
    from engine.turns.service import TurnService
    from models.db import Database
    from services.connector_actions import ActionStore
    from services.imports.reader import StatementReader
    from services.mcp_tools import McpTools
    from services.oauth.server import Server
    from services.pricing import Prices
    from services.search import SearchGate
    from services.token_watch import TokenGuard


def get_settings() -> Settings:
    """Return the app's settings."""
    settings: Settings = current_app.config["SETTINGS"]
    return settings


def get_db() -> Database:
    """Return the app's database."""
    found: Database = current_app.extensions["db"]
    return found


def get_engine() -> Engine:
    """Return the app's turn engine."""
    found: Engine = current_app.extensions["engine"]
    return found


def get_turns() -> TurnService:
    """Return the app's turn service."""
    found: TurnService = current_app.extensions["turns"]
    return found


def get_token_guard(token_id: int | None) -> TokenGuard | None:
    """What ends a stream once the token that opened it stops working (None: no token)."""
    if token_id is None:
        return None
    guard: TokenGuard = current_app.extensions["token_watcher"].guard(token_id)
    return guard


def get_prices() -> Prices:
    """Return the price table: defaults with the app's MODEL_PRICES over them."""
    found: Prices = current_app.extensions["prices"]
    return found


def get_session_limits() -> SessionLimits | None:
    """Return the limits on a user's new sessions (None: unlimited)."""
    found: SessionLimits | None = current_app.extensions["session_limits"]
    return found


def get_search_gate() -> SearchGate:
    """Return what bounds the searches running at once, per user and in this process."""
    found: SearchGate = current_app.extensions["search_gate"]
    return found


def get_statement_reader() -> StatementReader:
    """Return what reads uploaded statement files, bounded per user and per process."""
    found: StatementReader = current_app.extensions["statement_reader"]
    return found


def public_base() -> str:
    """The origin apps reach this server at: PUBLIC_URL, or this request's own."""
    return get_settings().public_url.rstrip("/") or request.host_url.rstrip("/")


def get_oauth() -> Server:
    """Return the connector's authorization server."""
    found: Server = current_app.extensions["oauth"]
    return found


def get_mcp_tools() -> McpTools:
    """Return our tools as /mcp serves them."""
    found: McpTools = current_app.extensions["mcp_tools"]
    return found


def get_actions() -> ActionStore:
    """Return the write actions apps asked for over /mcp."""
    found: ActionStore = current_app.extensions["connector_actions"]
    return found
