"""JSON Schema from marshmallow schemas through apispec, the machinery of /openapi.json too.

apispec converts fields and validators (Enum, Dict, UUID, Url, Tuple, OneOf, Range, Length,
Regexp...); the attribute functions here add what JSON Schema needs beyond it: ECMA-262
patterns (no `\\A`, `\\Z` or `(?P<name>`), `uri` for URLs, tuples as `prefixItems`, decimal
strings, and a field class's own `json_schema` refinements.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.field_converter import FieldConverterMixin
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import Schema, fields

Field = fields.Field[Any]

OPENAPI_VERSION = "3.1.0"
DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
_ESCAPES = {"A": "^", "Z": "$"}


def ecma_regex(pattern: str) -> str:
    """Rewrite a Python regex in ECMA-262 syntax; ValueError for what ECMA cannot say."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(_ESCAPES.get(nxt, ch + nxt))
            i += 2
            continue
        if pattern.startswith("(?P<", i):
            out.append("(?<")
            i += 4
            continue
        if pattern.startswith("(?P=", i):
            end = pattern.index(")", i)
            out.append(f"\\k<{pattern[i + 4 : end]}>")
            i = end + 1
            continue
        if re.match(r"\(\?[aiLmsux-]+[:)]", pattern[i:]):
            raise ValueError(f"inline flags have no ECMA-262 equivalent: {pattern!r}")
        out.append(ch)
        i += 1
    return "".join(out)


class AttributeFunction(Protocol):
    """What apispec calls, bound to its converter, on each field: JSON Schema keys to add."""

    def __call__(
        self, converter: FieldConverterMixin, field: Field, /, *, ret: dict[str, Any]
    ) -> dict[str, Any]:
        """Return the keys to add to (or replace in) the field's schema `ret`."""
        ...


class Converter(Protocol):
    """What is used here of apispec's OpenAPIConverter (which has no types)."""

    def add_attribute_function(self, func: AttributeFunction) -> None:
        """Call `func` on every field converted from now on."""
        ...

    def schema2jsonschema(self, schema: Schema) -> dict[str, Any]:
        """The JSON Schema object of `schema`."""
        ...

    def field2property(self, field: Field) -> dict[str, Any]:
        """The JSON Schema of one field."""
        ...


def _ecma_pattern(
    self: FieldConverterMixin, field: Field, ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    return {"pattern": ecma_regex(ret["pattern"])} if "pattern" in ret else {}


def _uri(self: FieldConverterMixin, field: Field, ret: dict[str, Any], **_: Any) -> dict[str, Any]:
    return {"format": "uri"} if isinstance(field, fields.Url) else {}


def _decimal(
    self: FieldConverterMixin, field: Field, ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    if not isinstance(field, fields.Decimal):
        return {}
    return {"type": "string", "pattern": ret.get("pattern", DECIMAL_PATTERN)}


def _tuple(
    self: FieldConverterMixin, field: Field, ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    if not isinstance(field, fields.Tuple):
        return {}
    items = [self.field2property(f) for f in field.tuple_fields]
    n = len(items)
    return {"type": "array", "prefixItems": items, "items": False, "minItems": n, "maxItems": n}


def _own(self: FieldConverterMixin, field: Field, ret: dict[str, Any], **_: Any) -> dict[str, Any]:
    """A field class may refine what is derived (e.g. a stricter pattern)."""
    return dict(getattr(field, "json_schema", {}))


# In this order: the field's own refinements first, the ECMA rewrite last.
ATTRIBUTE_FUNCTIONS: tuple[AttributeFunction, ...] = (_decimal, _uri, _tuple, _own, _ecma_pattern)


def extend(converter: Converter) -> None:
    """Teach an apispec converter (the OpenAPI document's, or ours) the functions above."""
    for func in ATTRIBUTE_FUNCTIONS:
        converter.add_attribute_function(func)


def _converter() -> Converter:
    spec = APISpec("tools", "1", OPENAPI_VERSION, plugins=[MarshmallowPlugin()])
    converter = OpenAPIConverter(OPENAPI_VERSION, lambda schema: None, spec)
    extend(converter)
    return converter


_CONVERTER = _converter()


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """Return the JSON Schema object that accepts what `schema.load` accepts."""
    out = _CONVERTER.schema2jsonschema(schema)
    out.pop("title", None)
    required = set(out.pop("required", []))
    if required:  # in the schema's field order, as written
        out["required"] = [key for key in out["properties"] if key in required]
    return {"type": "object", **out}


def field_to_json(field: Field) -> dict[str, Any]:
    """Return the JSON Schema of one marshmallow field."""
    return _CONVERTER.field2property(field)
