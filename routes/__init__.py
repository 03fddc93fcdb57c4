"""HTTP blueprints: thin views that parse, call the engine or store, and return."""

from __future__ import annotations

from flask import Flask


def register_blueprints(app: Flask) -> None:
    """Attach every blueprint to `app` through the Api, which documents them in /openapi.json."""
    from routes.api import init_api, refuse_impossible_ids, refuse_unknown_query
    from routes.chat import sessions, stream, turns, ui_chat
    from routes.connector import apps, mcp, oauth, oauth_doc
    from routes.imports import views as imports
    from routes.ledger import views as ledger
    from routes.records import views as records
    from routes.site import health, metrics, web
    from routes.tokens import views as tokens
    from routes.tool_sources import views as tool_sources

    api = init_api(app)
    api.register_blueprint(health.bp)
    api.register_blueprint(web.bp)
    api.register_blueprint(metrics.bp)
    api.register_blueprint(mcp.bp)
    oauth.init_connector(app)
    api.document_plain(oauth_doc.TAG, oauth_doc.DESCRIPTION, oauth_doc.PATHS)
    under_api = (
        sessions.bp,
        turns.bp,
        stream.bp,
        ui_chat.bp,
        tokens.bp,
        records.bp,
        imports.bp,
        ledger.bp,
        tool_sources.bp,
        apps.bp,
    )
    for bp in under_api:
        api.register_blueprint(bp, url_prefix="/api")
    app.extensions["api"] = api
    refuse_unknown_query(app)
    refuse_impossible_ids(app, {bp.name for bp in under_api})
