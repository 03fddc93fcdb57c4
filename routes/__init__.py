"""HTTP blueprints: thin views that parse, call the engine or store, and return."""

from __future__ import annotations

from flask import Flask


def register_blueprints(app: Flask) -> None:
    """Attach every blueprint to `app` through the Api, which documents them in /openapi.json."""
    from routes import (
        api_tokens,
        chat_stream,
        connected_apps,
        health,
        imports,
        ledger,
        mcp_server,
        metrics,
        oauth,
        oauth_doc,
        records,
        sessions,
        tool_sources,
        turns,
        ui_chat,
        web,
    )
    from routes.api import init_api, refuse_impossible_ids, refuse_unknown_query

    api = init_api(app)
    api.register_blueprint(health.bp)
    api.register_blueprint(web.bp)
    api.register_blueprint(metrics.bp)
    api.register_blueprint(mcp_server.bp)
    oauth.init_connector(app)
    api.document_plain(oauth_doc.TAG, oauth_doc.DESCRIPTION, oauth_doc.PATHS)
    under_api = (
        sessions.bp,
        turns.bp,
        chat_stream.bp,
        ui_chat.bp,
        api_tokens.bp,
        records.bp,
        imports.bp,
        ledger.bp,
        tool_sources.bp,
        connected_apps.bp,
    )
    for bp in under_api:
        api.register_blueprint(bp, url_prefix="/api")
    app.extensions["api"] = api
    refuse_unknown_query(app)
    refuse_impossible_ids(app, {bp.name for bp in under_api})
