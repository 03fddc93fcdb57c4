from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from webargs.flaskparser import FlaskParser

from ._typing import SchemaArg, View

class ArgumentsMixin:
    ARGUMENTS_PARSER: ClassVar[FlaskParser]
    def arguments(
        self,
        schema: SchemaArg,
        *,
        location: str = "json",
        content_type: str | None = None,
        required: bool = True,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Callable[[View], View]: ...
