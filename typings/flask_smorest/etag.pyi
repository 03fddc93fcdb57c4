from collections.abc import Callable
from typing import Any, ClassVar, overload

from ._typing import SchemaArg, View

class EtagMixin:
    METHODS_CHECKING_NOT_MODIFIED: ClassVar[list[str]]
    METHODS_NEEDING_CHECK_ETAG: ClassVar[list[str]]
    METHODS_ALLOWING_SET_ETAG: ClassVar[list[str]]
    ETAG_INCLUDE_HEADERS: ClassVar[list[str]]
    # `@bp.etag(Schema)` or bare `@bp.etag`.
    @overload
    def etag(self, obj: SchemaArg | None) -> Callable[[View], View]: ...
    @overload
    def etag(self, obj: View) -> View: ...
    def check_etag(self, etag_data: Any, etag_schema: SchemaArg | None = None) -> None: ...
    def set_etag(self, etag_data: Any, etag_schema: SchemaArg | None = None) -> None: ...
