from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow.fields import Field
from werkzeug.routing import BaseConverter

from .plugins import FlaskPlugin

class DocBlueprintMixin: ...

class APISpecMixin(DocBlueprintMixin):
    DEFAULT_ERROR_RESPONSE_NAME: ClassVar[str]
    DEFAULT_REQUEST_BODY_CONTENT_TYPE: ClassVar[str]
    DEFAULT_RESPONSE_CONTENT_TYPE: ClassVar[str]
    # Set by init_app, which Api(app) calls.
    config: Mapping[str, Any]
    spec: APISpec
    flask_plugin: FlaskPlugin
    ma_plugin: MarshmallowPlugin
    def register_converter(
        self,
        converter: type[BaseConverter],
        func: Callable[[BaseConverter], dict[str, Any]],
    ) -> None: ...
    def register_field(self, field: type[Field[Any]], *args: Any) -> None: ...
