"""Application factory: `flask --app app run` serves the chat backend; `app:hosted()` is
what our server (gunicorn with server.worker.Worker) serves: the app and its engine."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from flask_cors import CORS

from cli import register_cli
from config import Timings, load_settings, load_timings
from engine.build import build_engine
from models.db import Database
from routes import register_blueprints
from routes.errors import register_error_handlers, render_host_error
from services.pricing import price_table
from services.search import SearchBudget, SearchGate
from services.token_watch import TokenWatcher
from services.ui_chats import RESUME_MESSAGE_HEADER, RESUME_STEPS_HEADER
from streaming.hosting import Hosted
from telemetry import access, audit, tracing


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the app; `config` overrides environment settings."""
    instance = os.environ.get("INSTANCE_PATH") or str(Path(__file__).parent / "instance")
    app = Flask(__name__, instance_path=instance)
    app.config.from_mapping(load_settings(app.instance_path))
    app.config.update(config or {})
    # Every timing constant at once, scaled together by TIME_SCALE (see config.Timings).
    timings: Timings = app.config.setdefault("TIMINGS", load_timings(config))
    app.config.setdefault("EVENT_SPOOL_DIR", str(Path(app.instance_path, "spool")))
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    db = Database(app.config["DATABASE_URL"], timings)
    app.extensions["db"] = db
    app.extensions["prices"] = price_table(app.config.get("MODEL_PRICES"))
    engine = app.extensions["engine"] = build_engine(app.config, db)
    app.extensions["turns"] = engine.service
    app.extensions["session_limits"] = engine.deps.turns.sessions
    app.extensions["search_gate"] = SearchGate(
        app.config["SEARCH_USER_CONCURRENCY"],
        app.config["SEARCH_CONCURRENCY"],
        timings.search_retry_after,
        SearchBudget(timings.search_budget, app.config["SEARCH_MAX_SESSIONS"]),
    )
    # Ends open streams whose token is revoked or expires; it polls through the engine's loop.
    app.extensions["token_watcher"] = TokenWatcher(db, timings.token_poll, engine.deps.store.call)
    # A host starts the engine before it serves, so orphaned turns resume with no request;
    # without one, the first request starts it in a loop of its own. CLI commands never do.
    app.before_request(engine.ensure_started)

    tracing.setup(app, db.engine, bool(app.config.get("TRACING")))
    access.setup_logger()
    audit.setup_logger(app.config["AUDIT_LOG"])
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
    # Every method an API route answers, so a new one is allowed cross-origin with its route.
    methods = {m for r in app.url_map.iter_rules() if r.rule.startswith("/api/") for m in r.methods}
    CORS(
        app,
        resources={r"/api/*": {"origins": origins}},
        # The AI SDK resumes a chat at the client's step with the X-Resume-* headers.
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Last-Event-ID",
            RESUME_MESSAGE_HEADER,
            RESUME_STEPS_HEADER,
        ],
        expose_headers=["X-Session-Id", "X-Turn-Id"],
        methods=sorted(methods - {"HEAD"}),
        max_age=600,
        supports_credentials=False,
        always_send=False,  # CORS headers only for a request that names its Origin
    )

    @app.after_request
    def _vary_by_origin(response: Response) -> Response:
        # An API answer depends on the Origin asked from (allowed, refused, or none): a cache
        # must not hand one origin's answer to another.
        if request.path.startswith("/api/"):
            response.vary.add("Origin")
        return response


def hosted(config: dict[str, Any] | None = None) -> Hosted:
    """What a host serves: the app, and its engine as the background work on the host's loop."""
    return host(create_app(config))


def host(app: Flask) -> Hosted:
    """`app` as a host serves it: its engine on the host's loop, its express paths, and the
    wording and access lines of the answers the host makes itself."""
    return Hosted(
        app,
        app.extensions["engine"],
        # Health checks and metrics never wait behind a burst of turn starts in the app's pool.
        express=frozenset({"/healthz", "/metrics"}),
        render_error=render_host_error,
        access_log=access.host_answered,
    )
