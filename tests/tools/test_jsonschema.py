"""The JSON Schema converter handles every field kind the tools may use, checked by jsonschema."""

from __future__ import annotations

import enum
import uuid
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from marshmallow import Schema, ValidationError, fields, validate

from tools.jsonschema import ecma_regex, schema_to_json


class Color(enum.Enum):
    """A test enum."""

    RED = "red"
    BLUE = "blue"


class Everything(Schema):
    """One field of each kind the old hand-written converter missed."""

    color = fields.Enum(Color, by_value=True)
    tags = fields.Dict(keys=fields.String(), values=fields.Integer())
    pair = fields.Tuple((fields.String(), fields.Integer()))
    ident = fields.UUID()
    link = fields.Url()
    code = fields.String(validate=validate.Regexp(r"\A[a-z]{2}[0-9]\Z"))
    size = fields.Integer(validate=validate.Range(min=1, max=9), required=True)


SCHEMA = schema_to_json(Everything())
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)

CASES: list[tuple[dict[str, Any], bool]] = [
    ({"size": 3}, True),
    ({}, False),
    ({"size": 10}, False),
    ({"size": 3, "color": "red"}, True),
    ({"size": 3, "color": "green"}, False),
    ({"size": 3, "tags": {"a": 1}}, True),
    ({"size": 3, "tags": {"a": "x"}}, False),
    ({"size": 3, "pair": ["a", 1]}, True),
    ({"size": 3, "pair": ["a", 1, 2]}, False),
    ({"size": 3, "pair": [1, "a"]}, False),
    ({"size": 3, "ident": str(uuid.uuid4())}, True),
    ({"size": 3, "ident": "not-a-uuid"}, False),
    ({"size": 3, "link": "https://example.com/x"}, True),
    ({"size": 3, "code": "ab1"}, True),
    ({"size": 3, "code": "abc"}, False),
    ({"size": 3, "other": 1}, False),
]


def test_the_schema_is_valid_draft_2020_12_with_ecma_patterns() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["code"]["pattern"] == "^[a-z]{2}[0-9]$"
    assert SCHEMA["properties"]["link"]["format"] == "uri"
    assert SCHEMA["properties"]["color"]["enum"] == ["red", "blue"]
    assert SCHEMA["required"] == ["size"] and SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize(("value", "valid"), CASES)
def test_jsonschema_and_marshmallow_agree(value: dict[str, Any], valid: bool) -> None:
    try:
        Everything().load(value)
        loaded = True
    except ValidationError:
        loaded = False
    assert loaded == valid
    assert VALIDATOR.is_valid(value) == valid


def test_python_only_regex_syntax_is_refused() -> None:
    assert ecma_regex(r"(?P<a>x)(?P=a)\\A") == r"(?<a>x)\k<a>\\A"
    with pytest.raises(ValueError):
        ecma_regex(r"(?i)abc")
