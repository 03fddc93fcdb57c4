"""Application factory: `flask --app app run` serves the chat backend."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flask import Flask

from cli import register_cli
from config import load_settings
from engine.service import build_turn_service
from models.db import Database
from routes import register_blueprints
from routes.errors import register_error_handlers


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the app; `config` overrides environment settings."""
    instance = os.environ.get("INSTANCE_PATH") or str(Path(__file__).parent / "instance")
    app = Flask(__name__, instance_path=instance)
    app.config.from_mapping(load_settings(app.instance_path))
    app.config.update(config or {})
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    db = Database(app.config["DATABASE_URL"])
    app.extensions["db"] = db
    app.extensions["turns"] = build_turn_service(app.config, db)

    register_error_handlers(app)
    register_blueprints(app)
    register_cli(app)
    return app
