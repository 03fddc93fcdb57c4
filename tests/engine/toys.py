"""Toy tools for engine tests: one that works, one that never ends by itself, one that raises."""

from __future__ import annotations

import threading
from typing import Any

from marshmallow import Schema, fields, validate

from tools.registry import Tool, ToolRegistry


class WeatherInput(Schema):
    location = fields.String(required=True)
    units = fields.String(load_default="f", validate=validate.OneOf(["c", "f"]))


class Empty(Schema):
    pass


CALLS: list[tuple[str, dict[str, Any]]] = []
# The slow tool runs until this is set (run_turn sets it when the test ends): longer than
# any tool timeout, so a turn that ends meanwhile did not wait for it.
RELEASE_SLOW = threading.Event()


def _weather(ctx: Any, data: dict[str, Any]) -> dict[str, Any]:
    CALLS.append(("get_weather", data))
    return {"location": data["location"], "temperature": "68", "units": data["units"]}


def _slow(ctx: Any, data: dict[str, Any]) -> str:
    CALLS.append(("slow", data))
    RELEASE_SLOW.wait()
    return "late"


def _boom(ctx: Any, data: dict[str, Any]) -> str:
    CALLS.append(("boom", data))
    raise RuntimeError("database on fire")


TOY_TOOLS = ToolRegistry(
    [
        Tool("get_weather", "Weather for a city.", WeatherInput, _weather),
        Tool("slow", "Runs until the test ends.", Empty, _slow),
        Tool("boom", "Always raises.", Empty, _boom),
    ]
)
