"""Request pieces every resource shares: the text rules (no NUL, one line, storable) that
routes/api.py applies to every body and query string."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from marshmallow import ValidationError, validate
from werkzeug.datastructures import Headers

from domain.text import NOT_PLAIN, SPACES

# Whitespace as JSON Schema's (ECMA-262) \s means it, spelled out: Python's \s differs.
WS = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

# Some character that is not whitespace, and no NUL anywhere.
NON_BLANK = rf"\A[{WS}]*[^{WS}\x00][^\x00]*\Z"

NO_NUL = r"\A[^\x00]*\Z"


def storable(value: str) -> None:
    """Reject text no database can store: NUL characters and lone UTF-16 surrogates."""
    if "\x00" in value:
        raise ValidationError("Must not contain NUL characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValidationError("Must be valid Unicode (no lone surrogates).") from err


def unstorable_fields(
    data: Mapping[str, Any] | Headers, names: Iterable[str]
) -> dict[str, list[str]]:
    """The fields of `data` among `names` holding text no database can store anywhere inside
    them (strings, list items, object keys and values), each with the reason and where."""
    problems = {}
    for name in names:
        if name in data and (problem := _first_unstorable(name, data[name])):
            problems[name] = [problem]
    return problems


def _first_unstorable(name: str, value: Any) -> str | None:
    """Why some text in the field `name` cannot be stored, and where; None if all of it can."""
    # A stack, not recursion: a body may nest as deep as the JSON parser allows.
    stack: list[tuple[str, Any]] = [(name, value)]
    while stack:
        where, value = stack.pop()
        texts: list[Any] = [value]
        children: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            # Keys are checked before their values: a path in the answer holds no bad text.
            texts = list(value)
            children = [(f"{where}.{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            children = [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        for text in texts:
            try:
                if isinstance(text, str):
                    storable(text)
            except ValidationError as err:
                return f"{err.messages[0]}" + ("" if where == name else f" (in {where})")
        stack += children
    return None


class OneLine(validate.Regexp):
    """A title or a name: one line of plain text, not blank unless `blank`. A Regexp, so the
    OpenAPI document carries its pattern; its error names the character refused."""

    def __init__(self, *, blank: bool, error: str = "Must not be blank.") -> None:
        some = rf"[{SPACES}]*[^{WS}{NOT_PLAIN}]" if not blank else ""
        super().__init__(rf"\A{some}[^{NOT_PLAIN}]*\Z", error=error)

    def __call__(self, value: str) -> str:  # type: ignore[override]  # String fields pass str only
        if found := re.search(f"[{NOT_PLAIN}]", value):
            raise ValidationError(
                f"Must be one line of plain text: U+{ord(found.group()):04X} is a control, "
                "line-separator or bidi formatting character."
            )
        return super().__call__(value)
