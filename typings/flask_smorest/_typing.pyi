"""Names shared by the stubs (no such module exists at run time)."""

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

from marshmallow import Schema

# Each decorator returns a view of the type it wraps, so the view keeps its signature.
View = TypeVar("View", bound=Callable[..., Any])
# A schema may be given as a class, an instance, a component name, or an OpenAPI dict.
SchemaArg: TypeAlias = type[Schema] | Schema | str | dict[str, Any]
