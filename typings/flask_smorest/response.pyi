from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

from ._typing import SchemaArg, View

class ResponseMixin:
    def response(
        self,
        status_code: int | str | HTTPStatus,
        schema: SchemaArg | None = None,
        *,
        content_type: str | None = None,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
    ) -> Callable[[View], View]: ...
    def alt_response(
        self,
        status_code: int | str | HTTPStatus,
        response: str | None = None,
        *,
        schema: SchemaArg | None = None,
        content_type: str | None = None,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        success: bool = False,
    ) -> Callable[[View], View]: ...
