from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from webargs.flaskparser import FlaskParser

from ._typing import View

_T = TypeVar("_T")

class PaginationParameters:
    page: int
    page_size: int
    item_count: int | None
    def __init__(self, page: int, page_size: int) -> None: ...
    @property
    def first_item(self) -> int: ...
    @property
    def last_item(self) -> int: ...

class Page(Generic[_T]):
    collection: Sequence[_T]
    page_params: PaginationParameters
    def __init__(self, collection: Sequence[_T], page_params: PaginationParameters) -> None: ...
    @property
    def items(self) -> list[_T]: ...
    @property
    def item_count(self) -> int: ...

class PaginationMixin:
    PAGINATION_ARGUMENTS_PARSER: ClassVar[FlaskParser]
    PAGINATION_HEADER_NAME: ClassVar[str | None]
    DEFAULT_PAGINATION_PARAMETERS: ClassVar[dict[str, int]]
    def paginate(
        self,
        pager: type[Page[Any]] | None = None,
        *,
        page: int | None = None,
        page_size: int | None = None,
        max_page_size: int | None = None,
    ) -> Callable[[View], View]: ...
