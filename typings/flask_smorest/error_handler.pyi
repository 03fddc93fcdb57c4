from typing import Any, ClassVar

from flask import Response
from marshmallow import Schema
from werkzeug.exceptions import HTTPException

class ErrorSchema(Schema): ...

class ErrorHandlerMixin:
    ERROR_SCHEMA: ClassVar[type[Schema]]
    def _register_error_handlers(self) -> None: ...
    def handle_http_exception(self, error: HTTPException) -> tuple[Response, int, Any]: ...
