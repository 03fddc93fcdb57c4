"""Typed stubs for the parts of flask-smorest 0.47 the project uses (the package ships none)."""

from typing import Any

from flask import Flask
from webargs.flaskparser import abort as abort
from werkzeug.local import LocalProxy

from .blueprint import Blueprint as Blueprint
from .error_handler import ErrorHandlerMixin
from .pagination import Page as Page
from .spec import APISpecMixin

current_api: LocalProxy[Api]

class Api(APISpecMixin, ErrorHandlerMixin):
    def __init__(
        self,
        app: Flask | None = None,
        *,
        spec_kwargs: dict[str, Any] | None = None,
        config_prefix: str = "",
    ) -> None: ...
    def init_app(self, app: Flask, *, spec_kwargs: dict[str, Any] | None = None) -> None: ...
    def register_blueprint(
        self,
        blp: Blueprint,
        *,
        parameters: list[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None: ...
