"""How a setting's value is read: parsers for environment strings and typed overrides, and the
metadata every Settings field carries (config/settings.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import field
from typing import Any


class SettingError(ValueError):
    """A setting's value cannot be used; the message names its variable."""


# Parsers: each takes an environment string or an override's typed value.
Parse = Callable[[object], Any]


def unset(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def text(raw: object) -> str:
    if not isinstance(raw, str):
        raise SettingError(f"must be text, got {raw!r}")
    return raw.strip()


def whole(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    try:
        return int(text(raw))
    except ValueError as err:
        raise SettingError(f"must be a whole number, got {raw!r}") from err


def number(raw: object) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    try:
        return float(text(raw))
    except ValueError as err:
        raise SettingError(f"must be a number, got {raw!r}") from err


def choice(*choices: str) -> Parse:
    def parse(raw: object) -> str:
        value = text(raw).lower()
        if value not in choices:
            raise SettingError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return parse


def switch(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    return choice("on", "off", "true", "false", "1", "0")(raw) in ("on", "true", "1")


def flag(raw: object) -> bool:
    if not isinstance(raw, bool):
        raise SettingError(f"must be True or False, got {raw!r}")
    return raw


def json_object(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(text(raw))
    except ValueError as err:
        raise SettingError(f"must be a JSON object: {err}") from err
    if not isinstance(parsed, dict):
        raise SettingError(f"must be a JSON object, got {type(parsed).__name__}")
    return parsed


def names(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list | tuple) else text(raw).split(",")
    return tuple(text(item) for item in items if text(item))


def meta(
    env: str | None, parse: Parse, doc: str, *, key: str | None = None, shown: str | None = None
) -> dict[str, Any]:
    """A Settings field's metadata: read from `env` (None: only set by code, under `key`).

    `shown` is how docs/configuration.md writes a default that is not a plain value.
    """
    return {"env": env, "key": key or env, "parse": parse, "doc": doc, "shown": shown}


def setting(
    env: str | None,
    default: Any,
    parse: Parse,
    doc: str,
    *,
    key: str | None = None,
    shown: str | None = None,
) -> Any:
    """A Settings field with an immutable default (see `meta`)."""
    return field(default=default, metadata=meta(env, parse, doc, key=key, shown=shown))


def parsed(key: str, parse: Parse, raw: object) -> Any:
    """`raw` parsed, its error naming the variable `key`."""
    try:
        return parse(raw)
    except SettingError as err:
        raise SettingError(f"{key} {err}") from None
