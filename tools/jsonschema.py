"""Derive an Anthropic `input_schema` (JSON Schema) from a marshmallow schema."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, fields, validate

_FORMATS: list[tuple[type[fields.Field], dict[str, Any]]] = [
    (fields.Boolean, {"type": "boolean"}),
    (fields.Integer, {"type": "integer"}),
    (fields.Decimal, {"type": "string", "pattern": r"^-?\d+(\.\d+)?$"}),
    (fields.Float, {"type": "number"}),
    (fields.DateTime, {"type": "string", "format": "date-time"}),
    (fields.Date, {"type": "string", "format": "date"}),
    (fields.Email, {"type": "string", "format": "email"}),
    (fields.String, {"type": "string"}),
]


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """Return the JSON Schema object that accepts what `schema.load` accepts."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, field in schema.load_fields.items():
        key = field.data_key or name
        props[key] = field_to_json(field)
        if field.required:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    if schema.unknown == RAISE:
        out["additionalProperties"] = False
    return out


def field_to_json(field: fields.Field) -> dict[str, Any]:
    """Return the JSON Schema of one marshmallow field."""
    if isinstance(field, fields.Nested):
        nested = field.schema
        out = schema_to_json(nested)
        if field.many:
            out = {"type": "array", "items": out}
    elif isinstance(field, fields.List):
        out = {"type": "array", "items": field_to_json(field.inner)}
    else:
        out = next((dict(s) for cls, s in _FORMATS if isinstance(field, cls)), {})
    # A custom field class may refine the derived schema (e.g. a stricter pattern).
    out.update(getattr(field, "json_schema", {}))
    for validator in _validators(field):
        out.update(_validator_to_json(validator, out))
    if field.allow_none and "type" in out:
        out["type"] = [out["type"], "null"]
    description = field.metadata.get("description")
    if description:
        out["description"] = description
    if field.load_default is not None and not callable(field.load_default):
        default = field.load_default
        if isinstance(default, str | int | float | bool):
            out["default"] = default
    return out


def _validators(field: fields.Field) -> list[Any]:
    return list(getattr(field, "validators", []) or [])


def _validator_to_json(v: Any, current: dict[str, Any]) -> dict[str, Any]:
    if isinstance(v, validate.OneOf):
        return {"enum": list(v.choices)}
    if isinstance(v, validate.Range):
        out: dict[str, Any] = {}
        if v.min is not None:
            out["exclusiveMinimum" if not v.min_inclusive else "minimum"] = v.min
        if v.max is not None:
            out["exclusiveMaximum" if not v.max_inclusive else "maximum"] = v.max
        return out
    if isinstance(v, validate.Length):
        lo, hi = (
            ("minItems", "maxItems")
            if current.get("type") == "array"
            else (
                "minLength",
                "maxLength",
            )
        )
        out = {}
        if v.equal is not None:
            return {lo: v.equal, hi: v.equal}
        if v.min is not None:
            out[lo] = v.min
        if v.max is not None:
            out[hi] = v.max
        return out
    if isinstance(v, validate.Regexp):
        return {"pattern": v.regex.pattern}
    return {}
