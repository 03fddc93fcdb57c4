"""HTTP blueprints: thin views that parse, call the engine or store, and return."""

from __future__ import annotations

from flask import Flask


def register_blueprints(app: Flask) -> None:
    """Attach every blueprint to `app`."""
    from routes import chat, health, metrics, sessions, tokens, turns, ui_chat, web

    app.register_blueprint(health.bp)
    app.register_blueprint(metrics.bp)
    app.register_blueprint(web.bp)
    app.register_blueprint(sessions.bp, url_prefix="/api")
    app.register_blueprint(turns.bp, url_prefix="/api")
    app.register_blueprint(chat.bp, url_prefix="/api")
    app.register_blueprint(ui_chat.bp, url_prefix="/api")
    app.register_blueprint(tokens.bp, url_prefix="/api")
