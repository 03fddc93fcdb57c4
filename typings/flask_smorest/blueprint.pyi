from collections.abc import Callable
from typing import Any, ClassVar

from apispec import APISpec
from flask import Blueprint as FlaskBlueprint
from flask import Flask

from ._typing import View
from .arguments import ArgumentsMixin
from .etag import EtagMixin
from .pagination import PaginationMixin
from .response import ResponseMixin

class Blueprint(FlaskBlueprint, ArgumentsMixin, ResponseMixin, PaginationMixin, EtagMixin):
    HTTP_METHODS: ClassVar[list[str]]
    DEFAULT_LOCATION_CONTENT_TYPE_MAPPING: ClassVar[dict[str, str]]
    DOCSTRING_INFO_DELIMITER: ClassVar[str]
    description: str
    def __init__(
        self,
        name: str,
        import_name: str,
        static_folder: str | None = None,
        static_url_path: str | None = None,
        template_folder: str | None = None,
        url_prefix: str | None = None,
        subdomain: str | None = None,
        url_defaults: dict[str, Any] | None = None,
        root_path: str | None = None,
        cli_group: str | None = ...,
        *,
        description: str = "",
    ) -> None: ...
    def add_url_rule(
        self,
        rule: str,
        endpoint: str | None = None,
        view_func: Callable[..., Any] | None = None,
        provide_automatic_options: bool | None = None,
        *,
        parameters: list[dict[str, Any] | str] | None = None,
        tags: list[str] | None = None,
        **options: Any,
    ) -> None: ...
    def route(
        self,
        rule: str,
        *,
        parameters: list[dict[str, Any] | str] | None = None,
        tags: list[str] | None = None,
        **options: Any,
    ) -> Callable[[View], View]: ...
    def register_views_in_doc(
        self,
        api: Any,
        app: Flask,
        spec: APISpec,
        *,
        name: str,
        parameters: list[dict[str, Any]] | None,
    ) -> None: ...
    @staticmethod
    def doc(**kwargs: Any) -> Callable[[View], View]: ...
