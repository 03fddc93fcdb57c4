"""Toy tools for engine tests: one that works, one that is slow, one that raises."""

from __future__ import annotations

import time
from typing import Any

from marshmallow import Schema, fields, validate

from tools.registry import Tool, ToolRegistry


class WeatherInput(Schema):
    location = fields.String(required=True)
    units = fields.String(load_default="f", validate=validate.OneOf(["c", "f"]))


class Empty(Schema):
    pass


CALLS: list[tuple[str, dict[str, Any]]] = []


def _weather(ctx: Any, data: dict[str, Any]) -> dict[str, Any]:
    CALLS.append(("get_weather", data))
    return {"location": data["location"], "temperature": "68", "units": data["units"]}


def _slow(ctx: Any, data: dict[str, Any]) -> str:
    CALLS.append(("slow", data))
    time.sleep(2)
    return "late"


def _boom(ctx: Any, data: dict[str, Any]) -> str:
    CALLS.append(("boom", data))
    raise RuntimeError("database on fire")


TOY_TOOLS = ToolRegistry(
    [
        Tool("get_weather", "Weather for a city.", WeatherInput, _weather),
        Tool("slow", "Takes two seconds.", Empty, _slow),
        Tool("boom", "Always raises.", Empty, _boom),
    ]
)
