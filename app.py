"""Application factory: `flask --app app run` serves the chat backend."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flask import Flask
from flask_cors import CORS

from cli import register_cli
from config import load_settings, load_timings
from engine.build import build_turn_service
from models.db import Database
from routes import register_blueprints
from routes.errors import register_error_handlers
from routes.ratelimit import RateLimiter, storage_url
from services.pricing import price_table
from services.token_watch import TokenWatcher
from telemetry import access


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the app; `config` overrides environment settings."""
    instance = os.environ.get("INSTANCE_PATH") or str(Path(__file__).parent / "instance")
    app = Flask(__name__, instance_path=instance)
    app.config.from_mapping(load_settings(app.instance_path))
    app.config.update(config or {})
    # Every timing constant at once, scaled together by TIME_SCALE (see config.Timings).
    app.config.setdefault("TIMINGS", load_timings(config))
    app.config.setdefault("EVENT_SPOOL_DIR", str(Path(app.instance_path, "spool")))
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    db = Database(app.config["DATABASE_URL"])
    app.extensions["db"] = db
    app.extensions["prices"] = price_table(app.config.get("MODEL_PRICES"))
    turns = app.extensions["turns"] = build_turn_service(app.config, db)
    app.extensions["token_watcher"] = TokenWatcher(db, lambda: turns.timings.token_poll)
    app.extensions["rate_limiter"] = RateLimiter(app.config["RATE_LIMIT"], storage_url(app.config))
    # Servers start the engine at boot (gunicorn.conf.py) so orphaned turns resume with no
    # request; any request also starts it, once. CLI commands never do.
    app.before_request(turns.start_background)

    access.setup_logger()
    access.install(app)
    register_error_handlers(app)
    register_blueprints(app)
    register_cli(app)
    _allow_origins(app, app.config["CORS_ORIGINS"])
    return app


def _allow_origins(app: Flask, origins: list[str]) -> None:
    """Let web apps on `origins` call the API and read event streams (none by default)."""
    if not origins:
        return
    CORS(
        app,
        resources={r"/api/*": {"origins": origins}},
        allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        expose_headers=["X-Session-Id", "X-Turn-Id"],
        methods=["GET", "POST", "DELETE", "OPTIONS"],
        max_age=600,
        supports_credentials=False,
    )


def create_asgi(config: dict[str, Any] | None = None) -> Any:
    """The ASGI application servers run: Flask's routes, the event loop's streams."""
    from server.asgi import Front

    return Front(create_app(config))
