"""Application factory: `flask --app app run` serves the chat backend; `app:hosted()` is
what our server (gunicorn with server.worker.Worker) serves: the app and its engine."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from flask import Flask, Response, request
from flask_cors import CORS

from cli import register_cli
from config import Settings, load_settings, with_instance
from demo_model.brain import LABEL as DEMO_LABEL
from demo_model.transport import DEMO_KEY, DEMO_URL, Pace, demo_http
from engine.build import build_engine
from engine.upstream.client import Upstream
from models.db import Database
from routes import register_blueprints
from routes.error_handler import register_error_handlers, render_host_error
from routes.uploads import UploadRequest
from services.imports.reader import StatementReader
from services.pricing import price_table
from services.search import SearchBudget, SearchGate
from services.token_watch import TokenWatcher
from services.ui_chats import RESUME_MESSAGE_HEADER, RESUME_STEPS_HEADER
from streaming.hosting import Hosted
from telemetry import access, audit, tracing


def create_app(config: Settings | Mapping[str, Any] | None = None) -> Flask:
    """Create and configure the app from `config`: Settings, or overrides of the environment
    by variable name (an unknown name is an error)."""
    settings = with_instance(config) if isinstance(config, Settings) else load_settings(config)
    app = Flask(__name__, instance_path=settings.instance_path)
    # An upload's file part goes to disk as it is parsed, never whole in memory.
    app.request_class = UploadRequest
    # Replies keep their objects' order: a tool call's input reads as the model wrote it.
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # The one setting the code reads from app.config; the others are Flask's own.
    app.config.update(
        SETTINGS=settings, TESTING=settings.testing, MAX_CONTENT_LENGTH=settings.max_request_bytes
    )
    # Every timing constant at once, scaled together by TIME_SCALE (see config.Timings).
    timings = settings.timings
    logging.basicConfig(level=settings.log_level)
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    db = Database(settings.database_url, timings)
    app.extensions["db"] = db
    app.extensions["prices"] = price_table(settings.model_prices)
    engine = app.extensions["engine"] = build_engine(settings, db, upstream(settings))
    app.extensions["turns"] = engine.service
    app.extensions["session_limits"] = engine.deps.turns.sessions
    app.extensions["search_gate"] = SearchGate(
        settings.search_user_concurrency,
        settings.search_concurrency,
        timings.search_retry_after,
        SearchBudget(timings.search_budget, settings.search_max_sessions),
    )
    # Statement files are read in reader processes, bounded per user and per process.
    app.extensions["statement_reader"] = StatementReader.of(settings, db)
    # Ends open streams whose token is revoked or expires; it polls through the engine's loop.
    app.extensions["token_watcher"] = TokenWatcher(db, timings.token_poll, engine.deps.store.call)
    # A host starts the engine before it serves, so orphaned turns resume with no request;
    # without one, the first request starts it in a loop of its own. CLI commands never do.
    app.before_request(engine.ensure_started)

    tracing.setup(app, db.engine, settings.tracing)
    access.setup_logger()
    audit.setup_logger(settings.audit_log)
    access.install(app)
    register_error_handlers(app)
    register_blueprints(app)
    register_cli(app)
    _allow_origins(app, list(settings.cors_origins))
    return app


def upstream(settings: Settings) -> Upstream:
    """The real API when a key is set, else the offline demo model (the engine never picks)."""
    if settings.anthropic_api_key:
        return Upstream.api(
            settings.anthropic_api_key, settings.anthropic_base_url, settings.anthropic_model
        )
    pace = Pace(settings.demo_event_delay)
    return Upstream(partial(demo_http, pace), DEMO_KEY, DEMO_URL, DEMO_LABEL, pace)


def _allow_origins(app: Flask, origins: list[str]) -> None:
    """Let web apps on `origins` call the API and read event streams (none by default)."""
    if not origins:
        return
    # Every method an API route answers, so a new one is allowed cross-origin with its route.
    methods = {
        m for r in app.url_map.iter_rules() if r.rule.startswith("/api/") for m in r.methods or ()
    }
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


def hosted(config: Settings | Mapping[str, Any] | None = None) -> Hosted:
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
