"""JSON Schema from marshmallow schemas through apispec, the machinery of /openapi.json too.

apispec converts fields and validators (Enum, Dict, UUID, Url, Tuple, OneOf, Range, Length,
Regexp...); the attribute functions here add what JSON Schema needs beyond it: ECMA-262
patterns (no `\\A`, `\\Z` or `(?P<name>`), `uri` for URLs, tuples as `prefixItems`, decimal
strings, and a field class's own `json_schema` refinements.
"""

from __future__ import annotations

import re
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import Schema, fields

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


def _ecma_pattern(self: Any, field: fields.Field, ret: dict[str, Any], **_: Any) -> dict:
    return {"pattern": ecma_regex(ret["pattern"])} if "pattern" in ret else {}


def _uri(self: Any, field: fields.Field, ret: dict[str, Any], **_: Any) -> dict:
    return {"format": "uri"} if isinstance(field, fields.Url) else {}


def _decimal(self: Any, field: fields.Field, ret: dict[str, Any], **_: Any) -> dict:
    if not isinstance(field, fields.Decimal):
        return {}
    return {"type": "string", "pattern": ret.get("pattern", DECIMAL_PATTERN)}


def _tuple(self: Any, field: fields.Field, ret: dict[str, Any], **_: Any) -> dict:
    if not isinstance(field, fields.Tuple):
        return {}
    items = [self.field2property(f) for f in field.tuple_fields]
    n = len(items)
    return {"type": "array", "prefixItems": items, "items": False, "minItems": n, "maxItems": n}


def _own(self: Any, field: fields.Field, ret: dict[str, Any], **_: Any) -> dict:
    """A field class may refine what is derived (e.g. a stricter pattern)."""
    return dict(getattr(field, "json_schema", {}))


# In this order: the field's own refinements first, the ECMA rewrite last.
ATTRIBUTE_FUNCTIONS = (_decimal, _uri, _tuple, _own, _ecma_pattern)


def extend(converter: OpenAPIConverter) -> None:
    """Teach an apispec converter (the OpenAPI document's, or ours) the functions above."""
    for func in ATTRIBUTE_FUNCTIONS:
        converter.add_attribute_function(func)


def _converter() -> OpenAPIConverter:
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


def field_to_json(field: fields.Field) -> dict[str, Any]:
    """Return the JSON Schema of one marshmallow field."""
    return _CONVERTER.field2property(field)
